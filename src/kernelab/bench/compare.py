"""A/B comparison: is A faster than B, slower, the same, or can the samples not tell?

    cmp = compare(fn_a, fn_b)                 # interleaved on the GPU, paired samples
    cmp = compare_samples(a_s, b_s)           # pure statistics on two arrays of seconds
    cmp = compare_measurements(ma, mb)        # two stored Measurements (`kernelab compare A.json B.json`)

ratio = median(A) / median(B) (time: below 1 means A is faster), with a percentile-bootstrap
confidence interval. Samples taken by compare() are paired (A and B alternate in random
order within each round), and pairs are resampled together, so drift that moves both cancels.

Verdict, with `tol` the smallest relative difference that matters (default 1%):
  faster   the CI lies below 1 and the ratio is below 1 - tol
  slower   the CI lies above 1 and the ratio is above 1 + tol
  same     the CI lies inside [1 - tol, 1 + tol]
  unclear  otherwise (too noisy, or too few samples, to say): take more samples or fix the noise
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import numpy as np

from .errors import BenchError
from .measurement import Measurement, from_series
from .rules import StopRule, WarmupRule
from .stats import as_samples, bootstrap_ratio_ci, format_time

VERDICTS = ("faster", "slower", "same", "unclear")
SCHEMA = "kernelab.comparison/1"
MIN_SAMPLES = 5


@dataclass
class Comparison:
    verdict: str  # faster | slower | same | unclear (A relative to B)
    ratio: float  # median(A) / median(B)
    ci: tuple[float, float]  # confidence interval of the ratio
    confidence: float = 0.95
    tol: float = 0.01
    paired: bool = False
    n_a: int = 0
    n_b: int = 0
    median_a_s: float = 0.0
    median_b_s: float = 0.0
    names: tuple[str, str] = ("A", "B")
    note: str = ""
    a: Measurement | None = None
    b: Measurement | None = None
    meta: dict = field(default_factory=dict)

    @property
    def speedup(self) -> float:
        """How many times faster A is than B (median(B) / median(A))."""
        return 1.0 / self.ratio

    def __str__(self) -> str:
        na, nb = self.names
        return (f"{na} vs {nb}: {self.verdict} (time ratio {self.ratio:.4f}, {100 * self.confidence:.0f}% CI "
                f"[{self.ci[0]:.4f}, {self.ci[1]:.4f}]; medians {format_time(self.median_a_s)} vs "
                f"{format_time(self.median_b_s)}; {'paired' if self.paired else 'unpaired'}, n={self.n_a}/{self.n_b})"
                + (f"; {self.note}" if self.note else ""))

    def to_dict(self) -> dict:
        return {
            "schema": SCHEMA, "verdict": self.verdict, "ratio": self.ratio, "speedup": self.speedup,
            "ci": [_json_bound(x) for x in self.ci], "confidence": self.confidence, "tol": self.tol, "paired": self.paired,
            "n_a": self.n_a, "n_b": self.n_b, "median_a_s": self.median_a_s, "median_b_s": self.median_b_s,
            "names": list(self.names), "note": self.note,
            "a": self.a.to_dict() if self.a else None, "b": self.b.to_dict() if self.b else None,
            "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Comparison":
        if d.get("schema") != SCHEMA:
            raise ValueError(f"not a kernelab comparison (schema {d.get('schema')!r}, expected {SCHEMA!r})")
        return cls(
            verdict=d["verdict"], ratio=d["ratio"],
            ci=(_unbound(d["ci"][0], float("-inf")), _unbound(d["ci"][1], float("inf"))), confidence=d["confidence"], tol=d["tol"],
            paired=d["paired"], n_a=d["n_a"], n_b=d["n_b"], median_a_s=d["median_a_s"],
            median_b_s=d["median_b_s"], names=tuple(d["names"]), note=d.get("note", ""),
            a=Measurement.from_dict(d["a"]) if d.get("a") else None,
            b=Measurement.from_dict(d["b"]) if d.get("b") else None, meta=d.get("meta", {}),
        )


def _json_bound(x: float) -> float | None:
    return x if np.isfinite(x) else None  # JSON has no infinity; None means unbounded


def _unbound(x, default: float) -> float:
    return default if x is None else float(x)


def verdict_of(ratio: float, ci: tuple[float, float], tol: float) -> str:
    lo, hi = ci
    if hi < 1.0 and ratio < 1.0 - tol:
        return "faster"
    if lo > 1.0 and ratio > 1.0 + tol:
        return "slower"
    if lo >= 1.0 - tol and hi <= 1.0 + tol:
        return "same"
    return "unclear"


def compare_samples(a, b, *, paired: bool = False, tol: float = 0.01, confidence: float = 0.95,
                    n_boot: int = 2000, seed: int = 0, names: tuple[str, str] = ("A", "B")) -> Comparison:
    """Compare two arrays of sample times (seconds). paired=True when a[i] and b[i] were taken together."""
    if not 0 <= tol < 1:
        raise BenchError(f"tol must be in [0, 1) (a relative difference, e.g. 0.01), got {tol}")
    if not 0 < confidence < 1:
        raise BenchError(f"confidence must be in (0, 1), got {confidence}")
    xa, xb = as_samples(a, names[0]), as_samples(b, names[1])
    if paired and xa.size != xb.size:
        raise BenchError(f"paired comparison needs equal sample counts ({names[0]}: {xa.size}, {names[1]}: {xb.size})")
    ma, mb = float(np.median(xa)), float(np.median(xb))
    ratio = ma / mb
    note = ""
    if min(xa.size, xb.size) < MIN_SAMPLES:
        ci = (float("-inf"), float("inf"))
        verdict = "unclear"
        note = f"too few samples (need >= {MIN_SAMPLES} of each)"
    else:
        ci = bootstrap_ratio_ci(xa, xb, paired=paired, confidence=confidence, n_boot=n_boot, seed=seed)
        verdict = verdict_of(ratio, ci, tol)
        if not paired:
            note = "unpaired: drift between the two runs is not cancelled"
    return Comparison(verdict=verdict, ratio=ratio, ci=ci, confidence=confidence, tol=tol, paired=paired,
                      n_a=int(xa.size), n_b=int(xb.size), median_a_s=ma, median_b_s=mb, names=tuple(names), note=note)


def compare_measurements(ma: Measurement, mb: Measurement, **kw) -> Comparison:
    """Compare two Measurements (e.g. loaded from JSON). They are paired only when compare() took
    them together (same meta['compare_run'] and sample count)."""
    run_a, run_b = ma.meta.get("compare_run"), mb.meta.get("compare_run")
    paired = run_a is not None and run_a == run_b and ma.n == mb.n
    kw.setdefault("names", (ma.name or "A", mb.name or "B"))
    c = compare_samples(ma.samples_s, mb.samples_s, paired=paired, **kw)
    notes = [c.note] if c.note else []
    if ma.mode != mb.mode or ma.l2 != mb.l2:
        notes.append(f"different modes ({ma.mode}/{ma.l2} vs {mb.mode}/{mb.l2})")
    if ma.device != mb.device:
        notes.append(f"different devices ({ma.device} vs {mb.device})")
    if ma.throttled or mb.throttled:
        notes.append(f"throttled samples: {len(ma.throttled)} in A, {len(mb.throttled)} in B")
    c.note = "; ".join(notes)
    c.a, c.b = ma, mb
    return c


def compare_timers(timer_a, timer_b, *, mode: str, l2: str, names=("A", "B"), stop: StopRule | None = None,
                   warmup: WarmupRule | None = None, tol: float = 0.01, confidence: float = 0.95, seed: int = 0,
                   clock_interval_s: float = 0.005, device: str | None = None, meta: dict | None = None) -> Comparison:
    """compare() on any two timers (loop.py's interface): the CPU tests drive it with synthetic timers."""
    from .loop import collect_pair

    stop = stop or StopRule(max_wall_s=10.0)
    warmup = warmup or WarmupRule()
    try:
        sa, sb, order = collect_pair(timer_a, timer_b, warmup, stop, clock_interval_s, seed)
    finally:
        timer_a.close()
        timer_b.close()
    run = uuid.uuid4().hex[:12]
    ms = [from_series(s, name=nm, mode=mode, l2=l2, stop=stop, device=device,
                      meta={**(meta or {}), "compare_run": run, "compare_role": role, "round_order": "".join(
                          o[0] for o in order)})
          for s, nm, role in ((sa, names[0], "A"), (sb, names[1], "B"))]
    c = compare_measurements(ms[0], ms[1], tol=tol, confidence=confidence, seed=seed, names=tuple(names))
    c.meta = {"rounds": len(order), "stop_reason": sa.stop_reason}
    return c


def compare(fn_a, fn_b, *, mode: str = "cold", names: tuple[str, str] = ("A", "B"), tol: float = 0.01,
            confidence: float = 0.95, target_rel: float = 0.005, min_samples: int = 10, min_gpu_s: float = 1e-3,
            max_wall_s: float = 10.0, max_samples: int = 100_000, warmup: WarmupRule | None = None,
            arg_sets_a=None, arg_sets_b=None, flush: str = "memset_read", seed: int = 0) -> Comparison:
    """Time fn_a and fn_b interleaved on the GPU (same mode and rules as bench()) and compare them."""
    from .api import _environment, make_timer

    stop = StopRule(target_rel=target_rel, min_samples=min_samples, min_gpu_s=min_gpu_s, max_wall_s=max_wall_s,
                    max_samples=max_samples)
    if mode == "graph" and (arg_sets_a is None) != (arg_sets_b is None):
        raise BenchError("compare(mode='graph'): give arg_sets for both functions or for neither, so both see the same L2 state")
    ta = make_timer(fn_a, mode=mode, arg_sets=arg_sets_a, flush=flush)
    tb = make_timer(fn_b, mode=mode, arg_sets=arg_sets_b, flush=flush)
    l2 = "hot" if mode == "hot" or (mode == "graph" and arg_sets_a is None) else "cold"
    env = _environment()
    return compare_timers(ta, tb, mode=mode, l2=l2, names=names, stop=stop, warmup=warmup, tol=tol,
                          confidence=confidence, seed=seed, device=env["device"], meta=env["meta"])
