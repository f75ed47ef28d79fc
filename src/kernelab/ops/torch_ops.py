"""Register every op's best variant as a torch operator: `import kernelab.ops.torch_ops`,
then call `torch.ops.kernelab.<op>(...)`, eagerly or under torch.compile."""

from __future__ import annotations

import importlib
from pathlib import Path

_here = Path(__file__).parent
REGISTERED: list[str] = []

for _folder in sorted(_here.iterdir()):
    if (_folder / "torch_op.py").is_file():
        importlib.import_module(f"kernelab.ops.{_folder.name}.torch_op")
        REGISTERED.append(_folder.name)
