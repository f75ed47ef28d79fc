"""kernelab::transpose, the best variant as a PyTorch operator (works under torch.compile).

    torch.ops.kernelab.transpose(m) -> m.t() as a new contiguous tensor, m 2-D float32 or
    bfloat16 on a CUDA device. Column slices (m[:, k:], row stride > columns) run without a
    copy; inputs whose rows are not unit-stride (e.g. a.t()) or overlap (expanded) are made
    contiguous first.
"""

from __future__ import annotations

import torch

from kernelab.ops.base import Case
from kernelab.ops.build import run_variant

from .op import OP


@torch.library.custom_op("kernelab::transpose", mutates_args=())
def kernelab_transpose(m: torch.Tensor) -> torch.Tensor:
    if m.dim() != 2:
        raise ValueError(f"kernelab::transpose takes a 2-D tensor, got shape {tuple(m.shape)}; "
                         f"for batches, use m.transpose(-2, -1).contiguous()")
    dtype = str(m.dtype).replace("torch.", "")
    if dtype not in OP.dtypes:
        raise TypeError(f"kernelab::transpose supports {', '.join(OP.dtypes)}, got {m.dtype}")
    if m.device.type != "cuda":
        raise ValueError(f"kernelab::transpose runs on a CUDA device; m is on {m.device}. Fix: m.cuda()")
    rows, cols = m.shape
    if (cols > 1 and m.stride(1) != 1) or (rows > 1 and m.stride(0) < cols):  # column-major, expanded
        m = m.contiguous()
    out = torch.empty((cols, rows), dtype=m.dtype, device=m.device)
    run_variant(OP, OP.variant(OP.best_variant), Case((rows, cols), dtype), {"m": m}, {"out": out})
    return out


@kernelab_transpose.register_fake
def _(m: torch.Tensor) -> torch.Tensor:
    return m.new_empty((m.shape[1], m.shape[0]))
