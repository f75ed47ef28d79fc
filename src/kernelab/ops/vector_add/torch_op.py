"""kernelab::vector_add, the best variant as a PyTorch operator (works under torch.compile)."""

from __future__ import annotations

import torch

from kernelab.ops.base import Case
from kernelab.ops.build import run_variant

from .op import OP


@torch.library.custom_op("kernelab::vector_add", mutates_args=())
def vector_add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.shape != b.shape or a.dtype != b.dtype:
        raise ValueError(f"kernelab::vector_add: a and b must match (got {tuple(a.shape)} {a.dtype} and "
                         f"{tuple(b.shape)} {b.dtype}); broadcast or cast them first")
    dtype = str(a.dtype).replace("torch.", "")
    if dtype not in OP.dtypes:
        raise TypeError(f"kernelab::vector_add supports {', '.join(OP.dtypes)}, got {a.dtype}")
    a, b = a.contiguous(), b.contiguous()
    c = torch.empty_like(a)
    case = Case((a.numel(),), dtype)
    run_variant(OP, OP.variant(OP.best_variant), case, {"a": a.view(-1), "b": b.view(-1)}, {"c": c.view(-1)})
    return c


@vector_add.register_fake
def _(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(a)
