"""kernelab::gemm, the best variant as a PyTorch operator (works under torch.compile).

    c = torch.ops.kernelab.gemm(a, b)     # a [M, K], b [N, K]  ->  c = a @ b.T, [M, N]

b is laid out like nn.Linear's weight, so gemm(x, linear.weight) == F.linear(x, linear.weight).
bf16 runs the best bf16 variant this GPU and shape allow (v7 on Hopper, else v6); fp32
runs v5 (fp32 FFMA math, no TF32). Inputs that are not contiguous or not 16-byte aligned are
copied first (TMA and cp.async need 16-byte-aligned rows).
"""

from __future__ import annotations

import torch

from kernelab.ops.base import Case
from kernelab.ops.build import run_variant

from .op import OP

_choice: dict[tuple, str] = {}


def _pick(dtype: str, m: int, n: int, k: int) -> str:
    """The first of OP.fallback_variants[dtype] that supports this shape on this GPU."""
    key = (dtype, k % 8 == 0, torch.cuda.current_device())
    if key in _choice:
        return _choice[key]
    reasons = []
    for name in OP.fallback_variants[dtype]:
        v = OP.variant(name)
        why = OP.supports(v, Case((m, n, k), dtype))
        if why is None:
            _choice[key] = v.name
            return v.name
        reasons.append(f"{v.name}: {why}")
    raise RuntimeError("kernelab::gemm has no variant for this call: " + "; ".join(reasons))


def _aligned(t: torch.Tensor) -> torch.Tensor:
    t = t.contiguous()
    return t if t.data_ptr() % 16 == 0 else t.clone()


@torch.library.custom_op("kernelab::gemm", mutates_args=())
def gemm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"kernelab::gemm computes a @ b.T with a [M, K] and b [N, K]; got a {tuple(a.shape)} and "
                         f"b {tuple(b.shape)}. For a @ w with w [K, N], pass w.T.contiguous()")
    if a.dtype != b.dtype:
        raise TypeError(f"kernelab::gemm: a and b must share a dtype (got {a.dtype} and {b.dtype}); cast one first")
    dtype = str(a.dtype).replace("torch.", "")
    if dtype not in OP.dtypes:
        raise TypeError(f"kernelab::gemm supports {', '.join(OP.dtypes)}, got {a.dtype}")
    if not a.is_cuda or a.device != b.device:
        raise ValueError(f"kernelab::gemm needs both inputs on one CUDA device (got {a.device} and {b.device})")
    m, k = a.shape
    n = b.shape[0]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    if m == 0 or n == 0:
        return c
    if k == 0:
        return c.zero_()
    variant = OP.variant(_pick(dtype, m, n, k))
    run_variant(OP, variant, Case((m, n, k), dtype), {"a": _aligned(a), "b": _aligned(b)}, {"c": c})
    return c


@gemm.register_fake
def _(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a.new_empty((a.shape[0], b.shape[0]))
