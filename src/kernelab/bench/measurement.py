"""Measurement: the result of one bench() run, every sample kept, serialisable to JSON.

    m.median_s, m.stats.p10, m.samples_s, m.launch_bound, m.mean_sm_clock_mhz, m.throttled
    json.dump(m.to_dict(), f);  Measurement.from_dict(json.load(f)) == m
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .clocks import ClockReading, mean_sm_clock, reasons_seen, throttled_samples
from .stats import Stats, format_time, summarize

SCHEMA = "kernelab.measurement/1"
MODES = ("cold", "hot", "graph")


@dataclass
class Measurement:
    name: str
    mode: str  # "cold" (L2 flushed before each sample), "hot" (no flush), "graph" (CUDA-graph replay)
    l2: str  # "cold" or "hot": the L2 state each timed launch saw
    samples_s: list[float]  # every timed sample in order, seconds per launch
    stats: Stats
    launches_per_sample: int = 1  # graph mode: launches captured in the replayed graph (K)
    host_enqueue_s: float | None = None  # median host time of one eager call of fn
    launch_bound: bool = False  # an eager stream of fn is limited by the host: host_enqueue_s >= median_s
    recommendation: str | None = None
    stop_reason: str = ""  # converged | wall_cap | max_samples | fixed_count
    spread_rel: float | None = None  # the spread of all samples, as the stopping rule measures it
    spread_method: str = "ci"
    target_rel: float | None = None
    warmup: dict = field(default_factory=dict)  # first_call_s, n, wall_s, reason, stable, samples_s
    wall_s: float = 0.0  # sampling phase
    clocks: list[ClockReading] = field(default_factory=list)
    mean_sm_clock_mhz: float | None = None
    throttled: list[int] = field(default_factory=list)  # indices into samples_s
    throttle_reasons: list[str] = field(default_factory=list)
    floor_s: float | None = None
    floor_reason: str | None = None
    device: str | None = None
    meta: dict = field(default_factory=dict)  # timer details: flush bytes, pacer, arg sets, versions

    @property
    def median_s(self) -> float:
        return self.stats.median

    @property
    def n(self) -> int:
        return self.stats.n

    @property
    def unthrottled_samples_s(self) -> list[float]:
        bad = set(self.throttled)
        return [x for i, x in enumerate(self.samples_s) if i not in bad]

    def __str__(self) -> str:
        s = self.stats
        extra = f", {self.launches_per_sample} launches/replay" if self.mode == "graph" else ""
        clk = f", SM {self.mean_sm_clock_mhz:.0f} MHz" if self.mean_sm_clock_mhz else ""
        thr = f", {len(self.throttled)} throttled" if self.throttled else ""
        lb = " [launch-bound]" if self.launch_bound else ""
        return (f"{self.name or 'fn'} ({self.mode}{extra}): median {format_time(s.median)} "
                f"[p10 {format_time(s.p10)}, p90 {format_time(s.p90)}] n={s.n} spread {100 * (self.spread_rel or 0):.2f}% "
                f"({self.stop_reason}){clk}{thr}{lb}")

    # ---- JSON --------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "schema": SCHEMA,
            "name": self.name, "mode": self.mode, "l2": self.l2,
            "median_s": self.median_s,
            "stats": self.stats.to_dict(),
            "samples_s": list(self.samples_s),
            "launches_per_sample": self.launches_per_sample,
            "host_enqueue_s": self.host_enqueue_s,
            "launch_bound": self.launch_bound, "recommendation": self.recommendation,
            "stop_reason": self.stop_reason, "spread_rel": _finite(self.spread_rel),
            "spread_method": self.spread_method, "target_rel": _finite(self.target_rel),
            "warmup": dict(self.warmup), "wall_s": self.wall_s,
            "clocks": [r.to_dict() for r in self.clocks],
            "mean_sm_clock_mhz": self.mean_sm_clock_mhz,
            "throttled": list(self.throttled), "throttle_reasons": list(self.throttle_reasons),
            "floor_s": self.floor_s, "floor_reason": self.floor_reason,
            "device": self.device, "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Measurement":
        if d.get("schema") != SCHEMA:
            raise ValueError(f"not a kernelab measurement (schema {d.get('schema')!r}, expected {SCHEMA!r})")
        names = set(cls.__dataclass_fields__) - {"stats", "clocks"}
        kw = {k: v for k, v in d.items() if k in names}
        kw["stats"] = Stats.from_dict(d["stats"])
        kw["clocks"] = [ClockReading.from_dict(r) for r in d.get("clocks", [])]
        return cls(**kw)


def _finite(x: float | None) -> float | None:
    return x if x is None or math.isfinite(x) else None


def from_series(series, *, name: str, mode: str, l2: str, stop, floor_s=None, floor_reason=None,
                device: str | None = None, meta: dict | None = None) -> Measurement:
    """Assemble a Measurement from what the loop collected (loop.Series)."""
    timer = series.timer
    k = int(timer.launches_per_sample)
    stats = summarize(series.samples, launches_per_sample=k, confidence=stop.confidence)
    eager = getattr(timer, "eager_host_s", None)
    host = float(eager) if eager is not None else (float(np.median(series.host)) if series.host else None)
    launch_bound = host is not None and host >= stats.median
    rec = None
    if launch_bound and mode != "graph":
        rec = (f"launch-bound: enqueueing one call takes {format_time(host)} on the host, at least the "
               f"{format_time(stats.median)} it runs on the GPU, so a stream of these calls runs at host speed. "
               "Time it with mode='graph' (CUDA-graph replay), and run it under a CUDA graph (or fuse it) in production.")
    readings = series.readings
    info = dict(timer.info()) if hasattr(timer, "info") else {}
    info.update(meta or {})
    return Measurement(
        name=name, mode=mode, l2=l2, samples_s=list(series.samples), stats=stats,
        launches_per_sample=k, host_enqueue_s=host, launch_bound=bool(launch_bound), recommendation=rec,
        stop_reason=series.stop_reason, spread_rel=_finite(series.spread), spread_method=stop.spread,
        target_rel=_finite(stop.target_rel),
        warmup={"first_call_s": series.first_call_s, "n": len(series.warmup_samples),
                "wall_s": series.warmup_wall_s, "reason": series.warmup_reason,
                "stable": series.warmup_reason in ("stable", "count"),
                "samples_s": list(series.warmup_samples)},
        wall_s=series.wall_s, clocks=list(readings), mean_sm_clock_mhz=mean_sm_clock(readings),
        throttled=throttled_samples(len(series.samples), readings), throttle_reasons=reasons_seen(readings),
        floor_s=floor_s, floor_reason=floor_reason, device=device, meta=info,
    )
