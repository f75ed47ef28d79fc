"""When to stop warming up and when to stop sampling. Pure logic, driven by the loop in loop.py.

Warm-up: the first call of fn is never timed (it absorbs module load, JIT, torch.compile);
after it, timed warm-up samples run until the median of the samples of the last `window_s`
seconds is within `tol` of the median of as many samples before them (so clocks have ramped
and caches have settled),
after at least `min_count` samples and `min_s` seconds of wall time; `max_s` caps it.

Stopping: after at least `min_samples` samples and `min_gpu_s` seconds of timed GPU time, stop
as soon as the relative spread (stats.relative_spread) is at or below `target_rel`; stop in
any case after `max_wall_s` seconds of sampling or `max_samples` samples. Every sample is kept.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import asdict, dataclass

import numpy as np

from .stats import SPREADS, relative_spread

# Reasons a phase ended, as recorded in a Measurement.
WARMUP_STABLE, WARMUP_TIME_CAP, WARMUP_COUNT = "stable", "time_cap", "count"
CONVERGED, WALL_CAP, MAX_SAMPLES, FIXED_COUNT = "converged", "wall_cap", "max_samples", "fixed_count"


@dataclass(frozen=True)
class WarmupRule:
    min_count: int = 10  # timed warm-up samples at least (after the untimed first call)
    min_s: float = 0.025  # wall seconds at least: ~25 ms lets a GPU leave idle clocks (triton's default too)
    max_s: float = 1.0  # give up on stability after this long, and say so (Measurement.warmup["stable"])
    window_s: float = 0.010  # compare the medians of the last two windows of this much wall time
    tol: float = 0.01  # ...and call it stable when they differ by at most this fraction
    # Windows are in time, not counts: a clock ramp with a 10 ms time constant moves a 5-sample window of a
    # 100 us kernel by ~1%, so count windows pass it half-way up; two 10 ms windows within 1% leave < 0.5%.
    # A window holds at least 3 samples (long kernels).

    def __post_init__(self):
        if self.min_count < 0 or self.window_s < 0:
            raise ValueError(f"WarmupRule: min_count ({self.min_count}) and window_s ({self.window_s}) must be >= 0")
        if self.window_s and self.min_count < 6:
            raise ValueError(f"WarmupRule: min_count ({self.min_count}) must be at least 6 so two windows of 3 "
                             "samples can be compared (or window_s=0 for a fixed count)")
        if not (0 <= self.min_s <= self.max_s):
            raise ValueError(f"WarmupRule: need 0 <= min_s ({self.min_s}) <= max_s ({self.max_s})")
        if self.tol <= 0:
            raise ValueError(f"WarmupRule: tol must be > 0, got {self.tol}")

    @classmethod
    def fixed(cls, count: int) -> "WarmupRule":
        """Exactly `count` timed warm-up samples, no stability test (the seeds' fixed warm-up)."""
        return cls(min_count=count, min_s=0.0, max_s=math.inf, window_s=0.0)

    def done(self, samples, times, elapsed_s: float) -> str | None:
        """None to keep warming up, else why warm-up ends (WARMUP_STABLE, WARMUP_TIME_CAP, WARMUP_COUNT).
        `times`: the wall clock when each sample ended."""
        n = len(samples)
        if n >= self.min_count and elapsed_s >= self.min_s:
            if self.window_s == 0:
                return WARMUP_COUNT
            w = max(3, n - bisect.bisect_right(times, times[-1] - self.window_s))
            if n >= 2 * w:
                last, prev = np.median(samples[-w:]), np.median(samples[-2 * w:-w])
                if abs(last / prev - 1.0) <= self.tol:
                    return WARMUP_STABLE
        if elapsed_s >= self.max_s and n >= 1:
            return WARMUP_TIME_CAP
        return None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class StopRule:
    target_rel: float = 0.005  # stop when the spread is at or below 0.5%
    min_samples: int = 10
    min_gpu_s: float = 1e-3  # timed GPU time at least (sum over samples), so short kernels span >= 1 ms
    max_wall_s: float = 5.0  # wall seconds of sampling, whatever the spread
    max_samples: int = 100_000
    spread: str = "ci"  # "ci" (median's CI half-width / median) or "stdrel" (std / mean)
    confidence: float = 0.95  # of the median's CI

    def __post_init__(self):
        if not self.target_rel > 0:
            raise ValueError(f"StopRule: target_rel must be > 0 (e.g. 0.005 for 0.5%), got {self.target_rel}")
        if self.min_samples < 1 or self.max_samples < self.min_samples:
            raise ValueError(f"StopRule: need 1 <= min_samples ({self.min_samples}) <= max_samples ({self.max_samples})")
        if self.min_gpu_s < 0 or not self.max_wall_s > 0:
            raise ValueError(f"StopRule: need min_gpu_s >= 0 and max_wall_s > 0 (got {self.min_gpu_s}, {self.max_wall_s})")
        if self.spread not in SPREADS:
            raise ValueError(f"StopRule: unknown spread {self.spread!r}; choose one of {', '.join(SPREADS)}")
        if not 0 < self.confidence < 1:
            raise ValueError(f"StopRule: confidence must be in (0, 1), got {self.confidence}")

    @classmethod
    def fixed(cls, count: int) -> "StopRule":
        """Exactly `count` samples (the seeds' `iters`), no noise target and no time cap."""
        return cls(target_rel=math.inf, min_samples=count, min_gpu_s=0.0, max_wall_s=math.inf, max_samples=count)

    @property
    def is_fixed(self) -> bool:
        return self.min_samples == self.max_samples and math.isinf(self.target_rel)

    def spread_of(self, samples) -> float:
        return relative_spread(samples, self.spread, self.confidence)

    def hard_stop(self, n: int, elapsed_s: float) -> str | None:
        """Caps that end sampling whatever the spread (checked after every sample)."""
        if n >= self.max_samples:
            return FIXED_COUNT if self.is_fixed else MAX_SAMPLES
        if elapsed_s >= self.max_wall_s:
            return WALL_CAP
        return None

    def ready(self, n: int, gpu_s: float) -> bool:
        """Enough samples and GPU time for the spread to be allowed to end sampling."""
        return n >= self.min_samples and gpu_s >= self.min_gpu_s and not self.is_fixed

    def converged(self, samples, gpu_s: float) -> tuple[bool, float]:
        """(spread <= target with the minimums met, the spread)."""
        s = self.spread_of(samples)
        return self.ready(len(samples), gpu_s) and s <= self.target_rel, s

    def to_dict(self) -> dict:
        return asdict(self)


def next_check(n: int) -> int:
    """The sample count at which to test the spread next: ~every 5% more samples, so checking
    costs O(n log n) overall instead of sorting after every sample."""
    return n + max(1, n // 20)
