"""kernelab::sum, the best variant as a PyTorch operator (works under torch.compile).

    torch.ops.kernelab.sum(x) -> 0-d float32 tensor: the sum of all of x's elements,
    accumulated in fp32 (x float32 or bfloat16, any shape, on a CUDA device).
"""

from __future__ import annotations

import torch

from kernelab.ops.base import Case
from kernelab.ops.build import run_variant

from .op import OP


@torch.library.custom_op("kernelab::sum", mutates_args=())
def kernelab_sum(x: torch.Tensor) -> torch.Tensor:
    dtype = str(x.dtype).replace("torch.", "")
    if dtype not in OP.dtypes:
        raise TypeError(f"kernelab::sum supports {', '.join(OP.dtypes)}, got {x.dtype}; cast with x.float()")
    if x.device.type != "cuda":
        raise ValueError(f"kernelab::sum runs on a CUDA device; x is on {x.device}. Fix: x.cuda()")
    flat = x.reshape(-1) if x.is_contiguous() else x.contiguous().view(-1)
    out = torch.empty((), dtype=torch.float32, device=x.device)
    run_variant(OP, OP.variant(OP.best_variant), Case((flat.numel(),), dtype), {"x": flat}, {"out": out})
    return out


@kernelab_sum.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return x.new_empty((), dtype=torch.float32)
