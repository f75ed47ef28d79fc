"""kernelab::attention, the best attention variant as a PyTorch operator (works under torch.compile).

    o, lse = torch.ops.kernelab.attention(q, k, v, causal=False)

q, k, v: bf16 CUDA tensors [B, H, S, D] with D in {64, 128}; o: bf16 [B, H, S, D]; lse: fp32
[B, H, S] (natural log). The scale is 1/sqrt(D). Inputs that are not contiguous or not 16-byte
aligned are copied first. On sm_90 GPUs the operator runs OP.best_variant (v3: wgmma fed by TMA); elsewhere
OP.fallback_variant (v1, mma.sync, sm_80+).
"""

from __future__ import annotations

import torch

from kernelab.ops.base import Case
from kernelab.ops.build import run_variant

from .op import HEAD_DIMS, OP

_chosen: dict[int, object] = {}  # device index -> Variant


def _variant_for(case: Case, device: torch.device):
    idx = device.index if device.index is not None else torch.cuda.current_device()
    if idx not in _chosen:
        best = OP.variant(OP.best_variant)
        why = OP.supports(best, case)
        _chosen[idx] = best if why is None else OP.variant(OP.fallback_variant)
    return _chosen[idx]


def _prepare(t: torch.Tensor) -> torch.Tensor:
    t = t.contiguous()
    return t if t.data_ptr() % 16 == 0 else t.clone()


@torch.library.custom_op("kernelab::attention", mutates_args=())
def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    _check(q, k, v)
    b, h, s, d = q.shape
    q, k, v = _prepare(q), _prepare(k), _prepare(v)
    o = torch.empty_like(q)
    lse = torch.empty((b, h, s), dtype=torch.float32, device=q.device)
    case = Case((b, h, s, d), "bfloat16", params=(("causal", bool(causal)),))
    run_variant(OP, _variant_for(case, q.device), case, {"q": q, "k": k, "v": v}, {"o": o, "lse": lse})
    return o, lse


@attention.register_fake
def _(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    _check(q, k, v)
    b, h, s, d = q.shape
    return q.new_empty((b, h, s, d)), q.new_empty((b, h, s), dtype=torch.float32)


def _check(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    if q.dim() != 4 or q.shape != k.shape or q.shape != v.shape:
        raise ValueError(f"kernelab::attention: q, k, v must all be [B, H, S, D] of one shape, got "
                         f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)} (for [B, S, H, D] pass x.transpose(1, 2))")
    if not (q.dtype == k.dtype == v.dtype == torch.bfloat16):
        raise TypeError(f"kernelab::attention takes bfloat16 q, k, v, got {q.dtype}, {k.dtype}, {v.dtype}. "
                        "Fix: .to(torch.bfloat16)")
    if q.shape[-1] not in HEAD_DIMS:
        raise ValueError(f"kernelab::attention: head dim {q.shape[-1]} is not supported (D in {HEAD_DIMS}). "
                         "Fix: pad the head dim.")
