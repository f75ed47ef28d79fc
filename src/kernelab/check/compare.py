"""Compare an output with its float64 reference: counts, the first mismatches, max errors.

Works on CPU and CUDA tensors alike (everything runs on the tensors' device; only the
handful of reported numbers reach the host). The rules, in order:

- an element passes when |got - expected| <= atol + rtol * |expected| (both finite), or when
  got equals the reference rounded once to the output dtype (the correctly rounded answer),
  or when got == expected exactly (this is how +-Inf match);
- a NaN in the reference fails closed: it passes only where got is NaN too AND the caller
  says NaN is a defined result here (`nan_ok`, the op declares the 'special' distribution);
- NaN and Inf mismatches are counted apart from finite ones, so a report tells "produced
  NaN" from "off by 1e-3".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .result import Mismatch, _json_float

_BITS = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}
CHUNK = 1 << 22  # elements compared per step (float64 temporaries of 32 MiB each)


def raw_bits(t):
    """`t` reinterpreted as an integer tensor of the same element size (no copy)."""
    import torch

    if t.dtype.is_complex:
        raise ValueError("complex outputs are not supported by kernelab.check; compare real and imaginary parts")
    return t.view(getattr(torch, _BITS[t.element_size()]))


def _hex_bits(value: int, nbytes: int) -> str:
    return f"0x{value & ((1 << (8 * nbytes)) - 1):0{2 * nbytes}x}"


def unravel(flat_index: int, shape) -> tuple[int, ...]:
    out = []
    for dim in reversed(tuple(shape)):
        out.append(flat_index % dim if dim else 0)
        flat_index = flat_index // dim if dim else 0
    return tuple(reversed(out))


@dataclass
class Comparison:
    output: str
    ok: bool
    numel: int
    mismatches: int = 0
    nan_mismatches: int = 0
    inf_mismatches: int = 0
    max_abs: float | None = None  # over elements where both values are finite
    max_rel: float | None = None
    first: list[Mismatch] = field(default_factory=list)
    rtol: float = 0.0
    atol: float = 0.0
    expected_nans: int = 0
    bad: object = field(default=None, repr=False)  # bool mask of failing elements (a tensor), when kept

    @property
    def finite_mismatches(self) -> int:
        return self.mismatches - self.nan_mismatches - self.inf_mismatches

    def summary(self, max_lines: int = 5) -> str:
        if self.ok:
            return f"{self.output}: all {self.numel} elements within rtol={self.rtol:g}, atol={self.atol:g}"
        s = (f"{self.mismatches} of {self.numel} elements of '{self.output}' differ from the reference beyond "
             f"rtol={self.rtol:g}, atol={self.atol:g} (max abs err {_fmt(self.max_abs)}, max rel err "
             f"{_fmt(self.max_rel)}; NaN mismatches {self.nan_mismatches}, Inf mismatches {self.inf_mismatches})")
        if self.first:
            s += "; first: " + "; ".join(str(m) for m in self.first[:max_lines])
        return s

    def to_dict(self) -> dict:
        return {"output": self.output, "ok": self.ok, "numel": self.numel, "mismatches": self.mismatches,
                "nan_mismatches": self.nan_mismatches, "inf_mismatches": self.inf_mismatches,
                "max_abs": _json_float(self.max_abs), "max_rel": _json_float(self.max_rel),
                "first": [m.to_dict() for m in self.first], "rtol": self.rtol, "atol": self.atol}


def _fmt(x) -> str:
    return "n/a" if x is None else f"{x:.3g}"


def compare_outputs(got, expected, rtol: float, atol: float, *, nan_ok: bool = False, max_report: int = 10,
                    name: str = "out", keep_mask: bool = False) -> Comparison:
    """Compare `got` (any dtype) with `expected` (the reference, float64 or any float dtype).

    Both tensors must have the same shape and live on the same device. `keep_mask` keeps the
    boolean mask of failing elements on the result (`.bad`), for callers that classify them.
    """
    import torch

    if tuple(got.shape) != tuple(expected.shape):
        raise ValueError(f"output '{name}' has shape {tuple(got.shape)} but the reference has "
                         f"{tuple(expected.shape)}: the op's reference and make_outputs disagree")
    if got.dtype.is_complex or expected.dtype.is_complex:
        raise ValueError(f"output '{name}': complex dtypes are not supported; compare real and imaginary parts")
    if got.device != expected.device:
        expected = expected.to(got.device)
    numel = got.numel()
    if numel == 0:
        return Comparison(name, True, 0, rtol=rtol, atol=atol,
                          bad=torch.zeros(got.shape, dtype=torch.bool, device=got.device) if keep_mask else None)

    # Elementwise work runs in chunks: a float64 view of a 2^28-element output is 2 GiB, and the
    # comparison makes about ten such temporaries. Per chunk they cost ~0.3 GiB at CHUNK = 2^22;
    # only the boolean mask of failing elements (1 byte per element) spans the whole output.
    gf, ef = got.reshape(-1), expected.reshape(-1)
    bad = torch.empty(numel, dtype=torch.bool, device=got.device)
    parts = []
    for start in range(0, numel, CHUNK):
        stats, bad[start:start + CHUNK] = _compare_chunk(gf[start:start + CHUNK], ef[start:start + CHUNK],
                                                         rtol, atol, nan_ok)
        parts.append(stats)
    table = torch.stack(parts)
    n_bad, n_nan, n_inf, exp_nans, max_abs, max_rel = torch.cat(  # one device-to-host copy
        [table[:, [0, 1, 2, 5]].sum(0), table[:, [3, 4]].max(0).values]).tolist()
    bad = bad.view(got.shape)
    cmp = Comparison(name, n_bad == 0, numel, int(n_bad), int(n_nan), int(n_inf),
                     max_abs if max_abs >= 0 else None, max_rel if max_rel >= 0 else None,
                     rtol=rtol, atol=atol, expected_nans=int(exp_nans), bad=bad if keep_mask else None)
    if n_bad:
        cmp.first = first_mismatches(got, expected, bad, max_report, name)
    return cmp



def _compare_chunk(got, expected, rtol: float, atol: float, nan_ok: bool):
    """(stats, bad) for flat chunks: stats = [bad, NaN bad, Inf bad, max abs, max rel, reference NaNs]
    as a float64 tensor on the device (-1 for "no finite pair"), bad = mask of failing elements."""
    import torch

    g = got.to(torch.float64)
    e = expected.to(torch.float64)
    rounded = expected.to(got.dtype)
    nan_g, nan_e = torch.isnan(g), torch.isnan(e)
    finite = torch.isfinite(g) & torch.isfinite(e)
    absx = e.abs()
    diff = torch.where(finite, (g - e).abs(), torch.zeros((), dtype=torch.float64, device=g.device))
    within = finite & (diff <= atol + rtol * absx)
    good = within | (got == rounded) | (g == e)
    if nan_ok:
        good |= nan_g & nan_e
    bad = ~good
    either_nan = nan_g | nan_e
    rel = torch.where(absx > 0, diff / torch.where(absx > 0, absx, torch.ones_like(absx)),
                      torch.where(diff > 0, torch.full_like(diff, float("inf")), torch.zeros_like(diff)))
    any_finite = finite.any()
    neg = torch.full((), -1.0, dtype=torch.float64, device=g.device)
    stats = torch.stack([
        bad.sum().to(torch.float64),
        (bad & either_nan).sum().to(torch.float64),
        (bad & ~either_nan & ~finite).sum().to(torch.float64),
        torch.where(any_finite, torch.where(finite, diff, neg).max(), neg),
        torch.where(any_finite, torch.where(finite, rel, neg).max(), neg),
        nan_e.sum().to(torch.float64),
    ])
    return stats, bad


def first_mismatches(got, expected, bad, max_report: int, name: str) -> list[Mismatch]:
    """The first `max_report` failing elements in row-major order of the logical shape."""
    import torch

    idx = bad.reshape(-1).nonzero().flatten()[:max_report]
    if idx.numel() == 0:
        return []
    g = got.reshape(-1)[idx].to(torch.float64).tolist()
    e = expected.reshape(-1)[idx].to(torch.float64).tolist()
    bits = raw_bits(got.reshape(-1)[idx].contiguous()).to(torch.int64).tolist() if got.dtype.is_floating_point else None
    out = []
    for k, flat in enumerate(idx.tolist()):
        gv, ev = g[k], e[k]
        abs_err = abs(gv - ev) if _finite(gv) and _finite(ev) else float("nan")
        rel_err = (abs_err / abs(ev) if ev else (0.0 if abs_err == 0 else float("inf"))) if _finite(abs_err) else float("nan")
        out.append(Mismatch(name, unravel(flat, got.shape), gv, ev, abs_err, rel_err,
                            _hex_bits(bits[k], got.element_size()) if bits is not None else ""))
    return out


def _finite(x: float) -> bool:
    return x == x and x not in (float("inf"), float("-inf"))


def is_constant(t) -> bool:
    """True when every element of `t` is the same value (NaN counts as equal to NaN). Tensors of 0 or 1
    elements count as not constant: there is nothing to vary."""
    import torch

    if t.numel() < 2:
        return False
    flat = t.reshape(-1)
    first = flat[:1]
    same = flat == first
    if t.dtype.is_floating_point:
        same |= torch.isnan(flat) & torch.isnan(first)
    return bool(same.all())
