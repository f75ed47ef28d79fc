"""Statistics of timing samples (kernelab.bench.stats): summaries, the median's CI, spread."""

import math

import numpy as np
import pytest

from kernelab.bench.stats import (
    bootstrap_ratio_ci, format_time, median_ci, median_ci_ranks, relative_spread, summarize,
)


def test_summary_of_known_samples():
    x = np.arange(1, 101) * 1e-6  # 1..100 us
    s = summarize(x, launches_per_sample=4)
    assert s.n == 100 and s.min == x[0] and s.max == x[-1]
    assert s.median == pytest.approx(50.5e-6) and s.mean == pytest.approx(50.5e-6)
    assert s.p10 == pytest.approx(np.percentile(x, 10)) and s.p90 == pytest.approx(np.percentile(x, 90))
    assert s.stdrel == pytest.approx(np.std(x, ddof=1) / np.mean(x))
    assert s.total_gpu_s == pytest.approx(x.sum() * 4)  # graph replays: every launch counted
    assert s.ci_low <= s.median <= s.ci_high
    assert s.ci_rel == pytest.approx((s.ci_high - s.ci_low) / 2 / s.median)


def test_single_sample_has_no_stdrel_and_infinite_spread():
    s = summarize([3e-6])
    assert s.n == 1 and s.stdrel is None and s.ci_low == s.ci_high == 3e-6
    assert math.isinf(relative_spread([3e-6]))


@pytest.mark.parametrize("bad, match", [([], "no samples"), ([1e-6, float("nan")], "NaN"), ([1e-6, 0.0], "zero or negative")])
def test_bad_samples_are_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        summarize(bad)


def test_median_ci_ranks_match_the_binomial_tables():
    # 95% distribution-free CIs of the median, 1-based ranks from standard tables.
    for n, (lo, hi) in {10: (2, 9), 20: (6, 15), 50: (18, 33), 100: (40, 61)}.items():
        assert median_ci_ranks(n, 0.95) == (lo - 1, hi - 1)
    assert median_ci_ranks(5, 0.95) == (0, 4)  # too few for 95%: the whole range
    lo, hi = median_ci_ranks(10_000, 0.95)  # normal approximation above 2000
    assert abs(lo - (5000 - 98)) <= 2 and lo + hi == 9999


def test_median_ci_covers_the_true_median_at_least_as_often_as_promised():
    rng = np.random.default_rng(1)
    trials, hits = 2000, 0
    for _ in range(trials):
        x = rng.lognormal(0.0, 0.3, size=25)  # skewed; true median exp(0) = 1
        lo, hi = median_ci(x)
        hits += lo <= 1.0 <= hi
    assert hits / trials >= 0.94  # exact coverage for n = 25 is 0.957


def test_ci_spread_ignores_outliers_that_blow_up_stdrel():
    rng = np.random.default_rng(2)
    x = 100e-6 * (1 + 0.002 * rng.standard_normal(200))
    x[::20] *= 10  # 5% of samples 10x slower (a preempted sample, a clock dip)
    assert relative_spread(x, "ci") < 0.005
    assert relative_spread(x, "stdrel") > 0.5
    with pytest.raises(ValueError, match="unknown spread"):
        relative_spread(x, "iqr")


def test_bootstrap_ratio_ci_paired_cancels_common_drift():
    rng = np.random.default_rng(3)
    drift = np.linspace(1.0, 1.3, 100)  # everything slows 30% over the run
    a = 100e-6 * drift * (1 + 0.003 * rng.standard_normal(100))
    b = 110e-6 * drift * (1 + 0.003 * rng.standard_normal(100))
    lo, hi = bootstrap_ratio_ci(a, b, paired=True)
    assert lo <= 100 / 110 <= hi and hi - lo < 0.01
    ulo, uhi = bootstrap_ratio_ci(a, b, paired=False)
    assert uhi - ulo > 3 * (hi - lo)  # without pairing the drift is noise
    with pytest.raises(ValueError, match="equal lengths"):
        bootstrap_ratio_ci(a, b[:50], paired=True)


def test_format_time():
    assert format_time(1.234e-6) == "1.23 us"
    assert format_time(0.741e-3) == "741 us"
    assert format_time(2.5) == "2.5 s"
    assert format_time(None) == "n/a"
