"""Seeded input generation: every check draws fresh tensors from a named distribution.

Never zeros: zeros hide unwritten outputs and wrong indexing, and can run faster than real
data (a bf16 GEMM ran 13% faster on zeros on an H200). Misaligned views are made by
allocating `offset` extra elements and slicing them off, exactly like `x[1:]`.
"""

from __future__ import annotations

import math

DISTRIBUTIONS = ("normal", "uniform", "large", "special")

DTYPES = {"float32": "f32", "bfloat16": "bf16", "float16": "f16", "float64": "f64"}

# Integer dtypes random_tensor also draws (uniform integers; `dist` only scales the range).
INT_DTYPES = ("int8", "uint8", "int16", "int32", "int64", "bool")


def torch_dtype(name: str):
    import torch

    try:
        return getattr(torch, name)
    except AttributeError:
        raise ValueError(f"unknown dtype {name!r}; use one of {', '.join(DTYPES)}") from None


def dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def generator(seed: int, device):
    import torch

    g = torch.Generator(device=device)
    g.manual_seed(int(seed))
    return g


def random_tensor(shape, dtype: str, *, seed: int, device="cuda", dist: str = "normal", offset: int = 0,
                  scale: float = 1.0):
    """A tensor of `shape` drawn from `dist`, as a view `offset` elements into its allocation.

    normal: N(0, scale^2); uniform: U(-scale, scale); large: N(0, 1) * 1e4 (bf16/fp16 safe)
    or * 1e30 for fp32; special: normal values with NaN, +-Inf, -0.0 and denormals sprinkled in.
    """
    import torch

    if dist not in DISTRIBUTIONS:
        raise ValueError(f"unknown distribution {dist!r}; choose one of {', '.join(DISTRIBUTIONS)}")
    if offset < 0:
        raise ValueError(f"offset must be >= 0 (elements sliced off the front of the allocation), got {offset}")
    td = torch_dtype(dtype)
    numel = math.prod(shape)
    g = generator(seed, device)
    if not td.is_floating_point:
        return _random_integers(shape, td, numel, g, device, dist, offset, scale)
    flat = torch.empty(numel + offset, dtype=torch.float32, device=device)
    if dist == "uniform":
        flat.uniform_(-scale, scale, generator=g)
    else:
        flat.normal_(0.0, scale, generator=g)
    if dist == "large":
        flat *= 1e4 if td in (torch.bfloat16, torch.float16) else 1e30
    out = flat.to(td)
    if dist == "special" and numel:
        body = out[offset:]
        tiny = torch.finfo(td).tiny
        specials = torch.tensor([float("nan"), float("inf"), float("-inf"), -0.0, tiny / 4, -tiny / 2],
                                dtype=torch.float32).to(td).to(device)
        idx = torch.randint(0, numel, (max(1, numel // 97),), generator=g, device=device)
        pick = torch.randint(0, len(specials), idx.shape, generator=g, device=device)
        body.view(-1)[idx] = specials[pick]
    return out[offset:].view(*shape) if shape else out[offset:].view(())


def _random_integers(shape, td, numel, g, device, dist, offset, scale):
    """Uniform integers: bool {0, 1}; uint8 [0, 255]; signed types +-100*scale (+-1e4*scale for 'large',
    clipped to the type). 'special' adds the type's extremes, where an overflow or sign bug shows."""
    import torch

    if td == torch.bool:
        flat = torch.randint(0, 2, (numel + offset,), generator=g, device=device).to(torch.bool)
    else:
        info = torch.iinfo(td)
        span = 1e4 if dist == "large" else 100.0
        lo = max(info.min, -int(span * scale)) if info.min < 0 else 0
        hi = min(info.max, int(span * scale) if info.min < 0 else info.max)
        flat = torch.randint(lo, hi + 1, (numel + offset,), generator=g, device=device, dtype=torch.int64).to(td)
        if dist == "special" and numel:
            idx = torch.randint(offset, numel + offset, (max(1, numel // 97),), generator=g, device=device)
            extremes = torch.tensor([info.min, info.max, 0, -1 if info.min < 0 else 1], dtype=td, device=device)
            flat[idx] = extremes[torch.randint(0, 4, idx.shape, generator=g, device=device)]
    return flat[offset:].view(*shape) if shape else flat[offset:].view(())


def misalignment(t) -> int:
    """data_ptr % 16: 0 for a fresh allocation, 2/4/8... for views like x[1:] (what vector loads care about)."""
    return t.data_ptr() % 16


def strided_view(shape, dtype: str, *, seed: int, device="cuda", dist: str = "normal", step: int = 2,
                 scale: float = 1.0):
    """A non-contiguous tensor of `shape`: every `step`-th element of the last dimension of a bigger one.

    For ops whose kernels accept strided inputs (or must refuse them clearly): a kernel that
    assumes contiguity reads the wrong elements and fails the check instead of passing by luck.
    """
    if step < 2:
        raise ValueError(f"step must be >= 2 for a non-contiguous view, got {step}")
    if not shape:
        raise ValueError("a strided view needs at least one dimension")
    big = random_tensor(tuple(shape[:-1]) + (shape[-1] * step,), dtype, seed=seed, device=device, dist=dist,
                        scale=scale)
    return big[..., ::step]
