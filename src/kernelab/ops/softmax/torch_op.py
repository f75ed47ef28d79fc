"""kernelab::softmax, the best variant (v4_dispatch) as a PyTorch operator: softmax over the
last dimension, fp32 or bf16, any leading shape. Works eagerly and under torch.compile (the
fake implementation gives the output's shape and dtype without running anything)."""

from __future__ import annotations

import torch

from kernelab.ops.base import Case
from kernelab.ops.build import run_variant

from .op import OP

_best = []  # the Variant, scanned once (a scan reads every variant file's header)


def _variant():
    if not _best:
        _best.append(OP.variant(OP.best_variant))
    return _best[0]


@torch.library.custom_op("kernelab::softmax", mutates_args=())
def softmax(x: torch.Tensor) -> torch.Tensor:
    dtype = str(x.dtype).replace("torch.", "")
    if dtype not in OP.dtypes:
        raise TypeError(f"kernelab::softmax supports {', '.join(OP.dtypes)}, got {x.dtype}; cast with x.float() or x.bfloat16()")
    if not x.is_cuda:
        raise ValueError(f"kernelab::softmax runs on CUDA tensors; x is on {x.device}. Fix: x.cuda()")
    if x.dim() == 0:
        raise ValueError("kernelab::softmax needs at least one dimension (it normalises the last one)")
    n = x.shape[-1]
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if x.numel() == 0:
        return y
    x2 = x.contiguous().view(-1, n)
    case = Case((x2.shape[0], n), dtype)
    run_variant(OP, _variant(), case, {"x": x2}, {"y": y.view(-1, n)})
    return y


@softmax.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)
