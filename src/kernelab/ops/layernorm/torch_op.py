"""kernelab::layernorm, the best variant for the dtype (OP.best_variant_for: v5_l2_two_pass for fp32,
v4_pinned_onebar for bf16 since session 24) as a PyTorch operator:
y = (x - mean) / sqrt(var + eps) * weight + bias over the last dimension (biased variance),
like F.layer_norm(x, (N,), weight, bias, eps). fp32 or bf16, any leading shape; eagerly and
under torch.compile."""

from __future__ import annotations

import torch

from kernelab.ops.base import Case
from kernelab.ops.build import run_variant
from kernelab.ops.rmsnorm.torch_op import check_row_norm_args

from .op import OP

_best: dict = {}  # dtype -> the Variant, scanned once


def _variant(dtype: str):
    if dtype not in _best:
        _best[dtype] = OP.variant(OP.best_variant_for(dtype))
    return _best[dtype]


@torch.library.custom_op("kernelab::layernorm", mutates_args=())
def layernorm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    dtype = check_row_norm_args("kernelab::layernorm", OP.dtypes, x, weight=weight, bias=bias)
    n = x.shape[-1]
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if x.numel() == 0:
        return y
    x2 = x.contiguous().view(-1, n)
    case = Case((x2.shape[0], n), dtype, params=(("eps", float(eps)),))
    run_variant(OP, _variant(dtype), case, {"x": x2, "weight": weight.contiguous(), "bias": bias.contiguous()},
                {"y": y.view(-1, n)})
    return y


@layernorm.register_fake
def _(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)
