"""Statistics of timing samples: summaries, the confidence interval of the median, spread.

Pure numpy, no GPU. Every number a Measurement reports about its samples comes from here.

The median's confidence interval is distribution-free (order statistics): for n samples
the interval [x_(k), x_(n-k+1)] covers the true median with probability
1 - 2 P(Binomial(n, 1/2) <= k - 1), whatever the distribution, so outliers and bimodal
timings cannot make it look narrower than it is. The relative half-width of that interval
is what the stopping rule compares with its target (spread="ci").
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import lru_cache
from statistics import NormalDist

import numpy as np

SPREADS = ("ci", "stdrel")


@dataclass(frozen=True)
class Stats:
    """Summary of one series of samples (seconds per launch)."""

    n: int
    min: float
    p10: float
    median: float
    p90: float
    max: float
    mean: float
    stdrel: float | None  # sample std-dev (ddof=1) / mean; None for n < 2
    total_gpu_s: float  # GPU time inside the event pairs, summed over every sample and launch
    ci_low: float  # confidence interval of the median (order statistics)
    ci_high: float
    ci_rel: float  # (ci_high - ci_low) / 2 / median
    confidence: float = 0.95

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Stats":
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in d.items() if k in names})


def as_samples(samples, what: str = "samples") -> np.ndarray:
    """A 1-D float64 array of finite, positive times; a clear error otherwise."""
    x = np.asarray(samples, dtype=np.float64).reshape(-1)
    if x.size == 0:
        raise ValueError(f"{what}: no samples; a timing needs at least one")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what}: {int(np.sum(~np.isfinite(x)))} samples are NaN or infinite")
    if np.any(x <= 0):
        raise ValueError(f"{what}: {int(np.sum(x <= 0))} samples are zero or negative; times must be positive")
    return x


@lru_cache(maxsize=4096)
def median_ci_ranks(n: int, confidence: float = 0.95) -> tuple[int, int]:
    """0-based ranks (lo, hi) of the sorted samples bounding the median's confidence interval.

    Exact binomial tail for n <= 2000 (computed in log space), normal approximation above.
    With too few samples for the confidence asked (n < 6 at 95%) it returns (0, n - 1), the
    whole range, whose coverage is then below `confidence`.
    """
    if n < 1:
        raise ValueError("median_ci_ranks needs n >= 1")
    alpha_half = (1.0 - confidence) / 2.0
    # k: the largest 1-based rank with P(Binomial(n, 1/2) <= k - 1) <= alpha/2.
    if n <= 2000:
        log_half_n = -n * math.log(2.0)
        cdf, k = 0.0, 0
        for j in range(n // 2 + 1):
            p = math.exp(math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) + log_half_n)
            if cdf + p > alpha_half:
                break
            cdf += p
            k = j + 1
    else:
        z = NormalDist().inv_cdf(1.0 - alpha_half)
        k = int(math.floor(n / 2.0 - z * math.sqrt(n) / 2.0))
    lo = min(max(k - 1, 0), (n - 1) // 2)
    return lo, n - 1 - lo


def median_ci(samples, confidence: float = 0.95) -> tuple[float, float]:
    """Distribution-free confidence interval of the median (see the module docstring)."""
    x = np.sort(as_samples(samples))
    lo, hi = median_ci_ranks(len(x), confidence)
    return float(x[lo]), float(x[hi])


def stdrel(samples) -> float | None:
    x = as_samples(samples)
    if x.size < 2:
        return None
    return float(np.std(x, ddof=1) / np.mean(x))


def relative_spread(samples, method: str = "ci", confidence: float = 0.95) -> float:
    """The noise figure the stopping rule compares with its target.

    "ci": half-width of the median's confidence interval / median, robust to outliers. Guarded
      against a gap at the median (bimodal samples, e.g. 50/50 between two clock states): there
      the order-statistic interval falls inside one mode whenever the split drifts ~2 sigma from
      even, and a rule that peeks after every few samples would stop on such a chance. So the
      figure is the larger of the CI half-width and half the half-width over twice the rank
      distance; the two agree where the quantile function is smooth around the median.
    "stdrel": std-dev / mean (the figure nvbench uses; one outlier inflates it).
    Infinite where it is undefined (one sample).
    """
    if method not in SPREADS:
        raise ValueError(f"unknown spread {method!r}; choose one of {', '.join(SPREADS)}")
    x = as_samples(samples)
    if x.size < 2:
        return math.inf
    if method == "stdrel":
        return float(np.std(x, ddof=1) / np.mean(x))
    x = np.sort(x)
    n = x.size
    lo, hi = median_ci_ranks(n, confidence)
    center = (n - 1) / 2.0
    d = center - lo
    lo2, hi2 = max(0, int(math.floor(center - 2 * d))), min(n - 1, int(math.ceil(center + 2 * d)))
    med = float(np.median(x))
    return max((x[hi] - x[lo]) / 2.0, (x[hi2] - x[lo2]) / 4.0) / med


def summarize(samples, launches_per_sample: int = 1, confidence: float = 0.95) -> Stats:
    """Stats of `samples` (seconds per launch); `launches_per_sample` > 1 for graph replays."""
    x = as_samples(samples)
    p10, med, p90 = (float(v) for v in np.percentile(x, [10, 50, 90]))
    lo, hi = median_ci(x, confidence)
    return Stats(
        n=int(x.size), min=float(x.min()), p10=p10, median=med, p90=p90, max=float(x.max()),
        mean=float(x.mean()), stdrel=stdrel(x), total_gpu_s=float(x.sum() * launches_per_sample),
        ci_low=lo, ci_high=hi, ci_rel=(hi - lo) / 2.0 / med, confidence=confidence,
    )


def bootstrap_ratio_ci(a, b, *, paired: bool, confidence: float = 0.95, n_boot: int = 2000,
                       seed: int = 0) -> tuple[float, float]:
    """Percentile-bootstrap interval of median(a) / median(b).

    paired: a[i] and b[i] were taken back to back (compare() interleaves them), so pairs are
    resampled together; drift that moves both cancels in the ratio. Unpaired: a and b are
    resampled independently (e.g. two Measurements from separate runs).
    """
    a, b = as_samples(a, "A"), as_samples(b, "B")
    if paired and a.size != b.size:
        raise ValueError(f"paired samples must have equal lengths (A has {a.size}, B has {b.size})")
    rng = np.random.default_rng(seed)
    ratios = np.empty(n_boot)
    # Resample in chunks so n_boot x n indices stay under ~4M entries (32 MB) at any n.
    chunk = max(1, 4_000_000 // max(a.size, b.size))
    done = 0
    while done < n_boot:
        m = min(chunk, n_boot - done)
        ia = rng.integers(0, a.size, size=(m, a.size))
        ib = ia if paired else rng.integers(0, b.size, size=(m, b.size))
        ratios[done:done + m] = np.median(a[ia], axis=1) / np.median(b[ib], axis=1)
        done += m
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(ratios, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def format_time(seconds: float | None) -> str:
    """1.23 us / 45.6 ms / 1.20 s, three significant digits."""
    if seconds is None or not math.isfinite(seconds):
        return "n/a"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if abs(seconds) >= scale or unit == "ns":
            v = seconds / scale
            return f"{v:.3g} {unit}" if v < 100 else f"{v:.0f} {unit}"
    return f"{seconds} s"
