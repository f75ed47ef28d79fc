"""A/B comparison verdicts on synthetic samples: the pure statistics, and the interleaved loop
driven by two SyntheticTimers sharing one fake clock (so drift hits both)."""

import json

import numpy as np
import pytest

from kernelab.bench import (
    BenchError, Comparison, FakeClock, StopRule, SyntheticTimer, compare_measurements, compare_samples,
    compare_timers, measure,
)


def draws(median, rel, n, seed):
    return median * (1 + rel * np.random.default_rng(seed).standard_normal(n))


@pytest.mark.parametrize("b_median, verdict", [(110e-6, "faster"), (90e-6, "slower"), (100e-6, "same")])
def test_clear_verdicts(b_median, verdict):
    c = compare_samples(draws(100e-6, 0.005, 200, 1), draws(b_median, 0.005, 200, 2))
    assert c.verdict == verdict
    assert c.ci[0] <= c.ratio <= c.ci[1] and c.ratio == pytest.approx(100e-6 / b_median, rel=0.005)
    assert c.speedup == pytest.approx(1 / c.ratio)


def test_noise_too_large_for_the_difference_is_unclear():
    c = compare_samples(draws(100e-6, 0.2, 20, 3), draws(103e-6, 0.2, 20, 4))
    assert c.verdict == "unclear" and c.ci[0] < 1 < c.ci[1]


def test_a_real_but_tiny_difference_is_same_within_tol():
    c = compare_samples(draws(100e-6, 0.001, 400, 5), draws(100.4e-6, 0.001, 400, 6), tol=0.01)
    assert c.ci[1] < 1  # significant...
    assert c.verdict == "same"  # ...but under the 1% that matters
    c = compare_samples(draws(100e-6, 0.001, 400, 5), draws(100.4e-6, 0.001, 400, 6), tol=0.002)
    assert c.verdict == "faster"


def test_too_few_samples_is_unclear():
    c = compare_samples([1e-4, 1e-4, 1e-4], [2e-4, 2e-4, 2e-4])
    assert c.verdict == "unclear" and "too few" in c.note
    assert json.loads(json.dumps(c.to_dict(), allow_nan=False))["ci"] == [None, None]


def test_outliers_do_not_flip_the_verdict():
    a, b = draws(100e-6, 0.003, 300, 7), draws(104e-6, 0.003, 300, 8)
    a[::15] *= 20  # 7% wild outliers in A only
    assert compare_samples(a, b).verdict == "faster"


def test_bad_input_is_refused():
    with pytest.raises(BenchError, match="equal sample counts"):
        compare_samples([1e-4] * 10, [1e-4] * 9, paired=True)
    with pytest.raises(BenchError, match="tol"):
        compare_samples([1e-4] * 10, [1e-4] * 10, tol=1.5)
    with pytest.raises(ValueError, match="zero or negative"):
        compare_samples([1e-4] * 10, [0.0] * 10)


def pair(a_gpu, b_gpu, **stop):
    clock = FakeClock()
    ta, tb = SyntheticTimer(a_gpu, clock=clock), SyntheticTimer(b_gpu, clock=clock)
    return compare_timers(ta, tb, mode="cold", l2="cold", names=("new", "old"), stop=StopRule(**stop))


def test_interleaved_pairs_cancel_drift():
    """Both slow down 40% over the run (heating, a neighbour): the paired CI stays tight."""
    rng = np.random.default_rng(9)
    drift = lambda t: 1 + 4.0 * t
    c = pair(lambda i, t: 100e-6 * drift(t) * (1 + 0.002 * rng.standard_normal()),
             lambda i, t: 103e-6 * drift(t) * (1 + 0.002 * rng.standard_normal()), max_wall_s=0.1, target_rel=1e-9)
    assert c.paired and c.n_a == c.n_b > 100
    assert c.verdict == "faster" and c.ci[0] <= 100 / 103 <= c.ci[1] and c.ci[1] - c.ci[0] < 0.01
    a, b = c.a, c.b
    assert a.name == "new" and b.name == "old" and a.meta["compare_run"] == b.meta["compare_run"]
    order = a.meta["round_order"]
    assert set(order) == {"A", "B"} and 0.35 < order.count("A") / len(order) < 0.65  # random order per round
    # The same samples compared as separate runs lose the pairing: the drift becomes noise.
    unpaired = compare_samples(a.samples_s, b.samples_s, paired=False)
    assert unpaired.ci[1] - unpaired.ci[0] > 3 * (c.ci[1] - c.ci[0])


def test_identical_functions_under_drift_are_the_same():
    rng = np.random.default_rng(10)
    f = lambda i, t: 50e-6 * (1 + 3.0 * t) * (1 + 0.002 * rng.standard_normal())
    c = pair(f, f, max_wall_s=0.1, target_rel=1e-9)
    assert c.verdict == "same" and abs(c.ratio - 1) < 0.005


def test_a_throttled_stretch_hitting_both_is_noted_and_cancels():
    rng = np.random.default_rng(11)
    slow = lambda t: 1.3 if 0.06 <= t < 0.08 else 1.0  # sampling starts after ~25 ms of warm-up
    clocks = lambda t: {"sm_mhz": 1400.0 if slow(t) > 1 else 1980.0, "throttle_mask": 0x40 if slow(t) > 1 else 0}
    clock = FakeClock()
    ta = SyntheticTimer(lambda i, t: 100e-6 * slow(t) * (1 + 0.002 * rng.standard_normal()), clock=clock, clocks=clocks,
                        first_call_s=0.0)
    tb = SyntheticTimer(lambda i, t: 120e-6 * slow(t) * (1 + 0.002 * rng.standard_normal()), clock=clock, clocks=clocks,
                        first_call_s=0.0)
    c = compare_timers(ta, tb, mode="cold", l2="cold", stop=StopRule(max_wall_s=0.1, target_rel=1e-9),
                       clock_interval_s=0.001)
    assert c.verdict == "faster" and c.ratio == pytest.approx(100 / 120, rel=0.01)
    assert c.a.throttled and c.b.throttled and "throttled samples" in c.note
    assert "hw_thermal_slowdown" in c.a.throttle_reasons


def test_both_must_converge_before_stopping():
    rng = np.random.default_rng(12)
    c = pair(lambda i, t: 100e-6 * (1 + 0.001 * rng.standard_normal()),
             lambda i, t: 100e-6 * (1 + 0.03 * rng.standard_normal()), max_wall_s=5)
    assert c.a.stop_reason == c.b.stop_reason == "converged"
    assert c.n_a == c.n_b > 100  # the quiet one kept sampling, paired with the noisy one
    assert c.b.spread_rel <= 0.005


def test_comparison_json_round_trip_and_stored_measurements():
    rng = np.random.default_rng(13)
    c = pair(lambda i, t: 100e-6 * (1 + 0.002 * rng.standard_normal()),
             lambda i, t: 90e-6 * (1 + 0.002 * rng.standard_normal()))
    assert c.verdict == "slower"
    back = Comparison.from_dict(json.loads(json.dumps(c.to_dict(), allow_nan=False)))
    assert back == c
    # `kernelab compare A.json B.json`: Measurements from one compare() run stay paired...
    again = compare_measurements(back.a, back.b)
    assert again.paired and again.verdict == "slower" and again.ratio == c.ratio
    # ...separate runs are compared unpaired, with a note.
    ma = measure(SyntheticTimer(lambda i, t: 100e-6 * (1 + 0.002 * rng.standard_normal())), mode="cold", name="x")
    mb = measure(SyntheticTimer(lambda i, t: 100e-6 * (1 + 0.002 * rng.standard_normal())), mode="hot", name="y")
    sep = compare_measurements(ma, mb)
    assert not sep.paired and "unpaired" in sep.note and "different modes" in sep.note and sep.names == ("x", "y")
