"""Warm-up and the noise-based stopping rule, driven through the real sampling loop by a
SyntheticTimer on a fake clock (no GPU)."""

import math

import numpy as np
import pytest

from kernelab.bench import FakeClock, StopRule, SyntheticTimer, WarmupRule, measure
from kernelab.bench.rules import CONVERGED, MAX_SAMPLES, WALL_CAP


def noisy(median_s, rel, seed=0):
    rng = np.random.default_rng(seed)
    return lambda i, t: median_s * (1 + rel * rng.standard_normal())


def run(gpu, *, stop=None, warmup=None, **kw):
    timer = SyntheticTimer(gpu, **kw)
    m = measure(timer, mode="cold", stop=stop or StopRule(), warmup=warmup or WarmupRule())
    return m, timer


def test_stable_kernel_converges_fast_and_keeps_every_sample():
    m, timer = run(noisy(200e-6, 0.003))
    assert m.stop_reason == CONVERGED and m.spread_rel <= 0.005
    assert 10 <= m.n < 100
    assert m.stats.total_gpu_s >= 1e-3  # min_gpu_s honoured
    assert len(m.samples_s) + m.warmup["n"] == timer.calls  # nothing dropped
    assert m.median_s == pytest.approx(200e-6, rel=0.005)
    assert timer.closed


def test_min_gpu_time_keeps_short_kernels_sampling():
    m, _ = run(noisy(2e-6, 0.001), stop=StopRule(min_gpu_s=1e-3))
    assert m.stop_reason == CONVERGED and m.n >= 500  # 500 x 2 us = 1 ms


def test_min_samples_even_when_the_first_few_agree():
    m, _ = run(1e-3, stop=StopRule(min_samples=25, min_gpu_s=0))  # constant: spread 0 from the start
    assert m.n == 25 and m.spread_rel == 0.0


def test_noisy_kernel_stops_at_the_wall_cap_and_says_so():
    m, _ = run(noisy(100e-6, 0.10), stop=StopRule(max_wall_s=0.05))
    assert m.stop_reason == WALL_CAP and m.spread_rel > 0.005
    assert 0.05 <= m.wall_s < 0.051  # one sample past the cap at most
    assert m.n == len(m.samples_s) > 100


def test_max_samples_cap():
    m, _ = run(noisy(10e-6, 0.2), stop=StopRule(max_samples=300, max_wall_s=100))
    assert m.stop_reason == MAX_SAMPLES and m.n == 300


def test_required_samples_grow_with_noise():
    """The CI half-width shrinks like 1/sqrt(n): 4x the noise needs ~16x the samples."""
    ns = [run(noisy(100e-6, rel, seed=5), stop=StopRule(min_gpu_s=0, max_wall_s=100))[0].n for rel in (0.01, 0.04)]
    assert 8 < ns[1] / ns[0] < 32


def test_outliers_do_not_stop_the_ci_rule_but_do_stop_stdrel():
    rng = np.random.default_rng(7)

    def with_outliers(i, t):
        x = 100e-6 * (1 + 0.002 * rng.standard_normal())
        return x * 8 if i % 25 == 0 else x  # 4% preempted samples

    m_ci, _ = run(with_outliers, stop=StopRule(spread="ci", max_wall_s=0.5))
    assert m_ci.stop_reason == CONVERGED and m_ci.median_s == pytest.approx(100e-6, rel=0.005)
    assert m_ci.stats.max > 5 * m_ci.median_s  # the outliers are kept, not hidden
    m_sd, _ = run(with_outliers, stop=StopRule(spread="stdrel", max_wall_s=0.5))
    assert m_sd.stop_reason == WALL_CAP


def test_bimodal_50_50_never_converges_and_shows_both_modes():
    rng = np.random.default_rng(8)
    bimodal = lambda i, t: (100e-6 if rng.random() < 0.5 else 112e-6) * (1 + 0.001 * rng.standard_normal())
    m, _ = run(bimodal, stop=StopRule(max_wall_s=0.3))
    assert m.stop_reason == WALL_CAP and m.spread_rel > 0.005
    assert m.stats.p10 == pytest.approx(100e-6, rel=0.01) and m.stats.p90 == pytest.approx(112e-6, rel=0.01)


def test_bimodal_90_10_converges_on_the_main_mode():
    rng = np.random.default_rng(9)
    bimodal = lambda i, t: (100e-6 if rng.random() < 0.9 else 130e-6) * (1 + 0.001 * rng.standard_normal())
    m, _ = run(bimodal, stop=StopRule(max_wall_s=1.0))
    assert m.stop_reason == CONVERGED and m.median_s == pytest.approx(100e-6, rel=0.005)


def test_drift_is_visible_in_the_samples_not_hidden():
    m, _ = run(lambda i, t: 100e-6 * (1 + 2.0 * t), stop=StopRule(max_wall_s=0.2))
    x = np.array(m.samples_s)
    assert x[-1] > x[0]  # every sample kept, in order
    assert m.stop_reason in (CONVERGED, WALL_CAP)


def test_warmup_absorbs_a_slow_start_and_clock_ramp():
    # First call 2 s (JIT), then samples 3x slow decaying over ~40 ms of wall (clocks ramping).
    ramp = lambda i, t: 100e-6 * (1 + 2.0 * math.exp(-(t - 2.0) / 0.01)) * (1 + 0.001 * ((i * 7919) % 11 - 5) / 5)
    m, _ = run(ramp, first_call_s=2.0)
    assert m.warmup["first_call_s"] == 2.0 and m.warmup["reason"] == "stable" and m.warmup["stable"]
    assert m.warmup["wall_s"] >= 0.025
    assert max(m.warmup["samples_s"]) > 2 * m.median_s  # the slow ones stayed in warm-up
    assert m.median_s == pytest.approx(100e-6, rel=0.01)


def test_warmup_time_cap_when_never_stable():
    drifting = lambda i, t: 100e-6 * (1 + 5.0 * t)  # 5%/10 ms: never settles
    m, _ = run(drifting, warmup=WarmupRule(max_s=0.05), stop=StopRule(max_wall_s=0.01))
    assert m.warmup["reason"] == "time_cap" and not m.warmup["stable"]
    assert 0.05 <= m.warmup["wall_s"] < 0.051


def test_fixed_rules_are_the_seeds_loop():
    clock = FakeClock()
    t = SyntheticTimer(noisy(50e-6, 0.3), clock=clock)
    m = measure(t, mode="hot", stop=StopRule.fixed(100), warmup=WarmupRule.fixed(9))
    assert m.warmup["n"] == 9 and m.n == 100 and m.stop_reason == "fixed_count" and t.calls == 109


@pytest.mark.parametrize("kw, match", [
    (dict(target_rel=0), "target_rel"), (dict(min_samples=0), "min_samples"),
    (dict(max_samples=5, min_samples=10), "min_samples"), (dict(spread="mad"), "unknown spread"),
    (dict(max_wall_s=0), "max_wall_s"), (dict(confidence=1.0), "confidence"),
])
def test_stop_rule_refuses_bad_settings(kw, match):
    with pytest.raises(ValueError, match=match):
        StopRule(**kw)


def test_warmup_rule_refuses_bad_settings():
    with pytest.raises(ValueError, match="at least 6"):
        WarmupRule(min_count=4)
    with pytest.raises(ValueError, match="min_s"):
        WarmupRule(min_s=2.0, max_s=1.0)


def test_synthetic_sequence_exhaustion_is_explicit():
    with pytest.raises(IndexError, match="longer sequence"):
        run([1e-4] * 5)
