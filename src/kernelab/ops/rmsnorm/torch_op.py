"""kernelab::rmsnorm, the best variant (v4_l2_two_pass) as a PyTorch operator:
y = x / sqrt(mean(x^2, last dim) + eps) * weight, like F.rms_norm(x, (N,), weight, eps).
fp32 or bf16, any leading shape; eagerly and under torch.compile."""

from __future__ import annotations

import torch

from kernelab.ops.base import Case
from kernelab.ops.build import run_variant

from .op import OP

_best = []  # the Variant, scanned once


def _variant():
    if not _best:
        _best.append(OP.variant(OP.best_variant))
    return _best[0]


def check_row_norm_args(op_name: str, dtypes, x: torch.Tensor, **params: torch.Tensor) -> str:
    """Validate x and its per-column parameters (weight, bias); return the dtype name."""
    dtype = str(x.dtype).replace("torch.", "")
    if dtype not in dtypes:
        raise TypeError(f"{op_name} supports {', '.join(dtypes)}, got {x.dtype}")
    if x.dim() == 0:
        raise ValueError(f"{op_name} needs at least one dimension (it normalises the last one)")
    n = x.shape[-1]
    for name, p in params.items():
        if tuple(p.shape) != (n,) or p.dtype != x.dtype or p.device != x.device:
            raise ValueError(f"{op_name}: {name} must be a {x.dtype} tensor of shape ({n},) on {x.device} (the last "
                             f"dimension of x); got {p.dtype} {tuple(p.shape)} on {p.device}")
    if not x.is_cuda:
        raise ValueError(f"{op_name} runs on CUDA tensors; x is on {x.device}. Fix: x.cuda()")
    return dtype


@torch.library.custom_op("kernelab::rmsnorm", mutates_args=())
def rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    dtype = check_row_norm_args("kernelab::rmsnorm", OP.dtypes, x, weight=weight)
    n = x.shape[-1]
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if x.numel() == 0:
        return y
    x2 = x.contiguous().view(-1, n)
    case = Case((x2.shape[0], n), dtype, params=(("eps", float(eps)),))
    run_variant(OP, _variant(), case, {"x": x2, "weight": weight.contiguous()}, {"y": y.view(-1, n)})
    return y


@rmsnorm.register_fake
def _(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)
