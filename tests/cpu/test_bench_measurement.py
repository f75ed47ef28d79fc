"""Measurement assembly on CPU: clocks and throttled samples, launch-bound detection, the
physical floor, JSON round trips, graph arg-set accounting and the flush size."""

import json

import numpy as np
import pytest
import torch

from kernelab.bench import (
    BenchError, FakeClock, ImpossibleResult, Measurement, StopRule, SyntheticTimer, WarmupRule, measure,
    physical_floor,
)
from kernelab.bench.flush import flush_bytes
from kernelab.bench.graph import call_with, distinct_device_bytes, materialize_arg_sets, span_union_bytes

MIB = 1 << 20


def throttled_run():
    """100 us kernel; from t = 0.10 s to 0.15 s the GPU reports a power cap and runs at 1410 MHz, 30% slower."""
    rng = np.random.default_rng(0)
    stretch = lambda t: 0.10 <= t < 0.15
    gpu = lambda i, t: 100e-6 * (1.3 if stretch(t) else 1.0) * (1 + 0.002 * rng.standard_normal())
    clocks = lambda t: {"sm_mhz": 1410.0 if stretch(t) else 1980.0, "throttle_mask": 0x4 if stretch(t) else 0,
                        "temperature_c": 60.0, "power_w": 700.0 if stretch(t) else 500.0}
    timer = SyntheticTimer(gpu, clocks=clocks, clock=FakeClock())
    # target 0 is impossible, so it samples until the 0.2 s cap, across the stretch
    return measure(timer, mode="cold", stop=StopRule(target_rel=1e-9, max_wall_s=0.2), clock_interval_s=0.002)


def test_throttled_stretch_is_flagged_and_lowers_the_mean_clock():
    m = throttled_run()
    x = np.array(m.samples_s)
    flagged = np.zeros(len(x), bool)
    flagged[m.throttled] = True
    assert flagged.sum() > 50
    assert np.all(x[flagged & (x > 120e-6)])  # slow samples inside the stretch...
    assert (x > 120e-6)[~flagged].sum() == 0  # ...are all flagged, and no slow sample escaped
    assert flagged.sum() - (x > 120e-6).sum() <= 2 * 20  # only readings' neighbours (~20 samples each) extra
    assert m.throttle_reasons == ["sw_power_cap"]
    assert 1410 < m.mean_sm_clock_mhz < 1980
    phases = [r.phase for r in m.clocks]
    assert phases[0] == "before" and phases[-1] == "after" and phases.count("during") > 50
    assert len(m.unthrottled_samples_s) == len(x) - flagged.sum()


def test_without_nvml_nothing_is_flagged_and_the_clock_is_unknown():
    m = measure(SyntheticTimer(50e-6), mode="hot")
    assert m.clocks == [] and m.mean_sm_clock_mhz is None and m.throttled == [] and m.throttle_reasons == []


def test_launch_bound_when_host_enqueue_reaches_gpu_time():
    m = measure(SyntheticTimer(3e-6, host_s=6e-6), mode="hot", name="tiny")
    assert m.launch_bound and m.host_enqueue_s == pytest.approx(6e-6)
    assert "mode='graph'" in m.recommendation and "launch-bound" in m.recommendation
    m = measure(SyntheticTimer(100e-6, host_s=6e-6), mode="hot")
    assert not m.launch_bound and m.recommendation is None


def test_graph_mode_reports_eager_host_time_and_no_recommendation():
    t = SyntheticTimer(1e-6, host_s=0.05e-6, launches_per_sample=200, eager_host_s=5e-6)
    m = measure(t, mode="graph", l2="hot")
    assert m.launches_per_sample == 200 and m.stats.total_gpu_s == pytest.approx(m.n * 200 * 1e-6)
    assert m.host_enqueue_s == 5e-6 and m.launch_bound and m.recommendation is None
    assert m.l2 == "hot" and "200 launches/replay" in str(m)


def test_physical_floor_names_the_bound_that_was_violated():
    floor, why = physical_floor(bytes=3 * (1 << 26) * 4, bandwidth=4.8e12)  # 805 MB at 4.8 TB/s
    assert floor == pytest.approx(3 * (1 << 26) * 4 / 4.8e12) and why.startswith("bytes/bandwidth")
    floor2, why2 = physical_floor(bytes=1000, bandwidth=4.8e12, flops=2 * 4096 ** 3, peak_flops=989e12,
                                  flop_unit="bf16")
    assert why2.startswith("FLOPs/peak") and "bf16" in why2 and floor2 == pytest.approx(2 * 4096 ** 3 / 989e12)
    with pytest.raises(BenchError, match="without bandwidth"):
        physical_floor(bytes=10)
    with pytest.raises(BenchError, match="give bytes"):
        physical_floor()

    with pytest.raises(ImpossibleResult) as e:
        measure(SyntheticTimer(100e-6), mode="cold", name="cheat", floor_s=floor, floor_reason=why)
    msg = str(e.value)
    assert "impossible result" in msg and "cheat" in msg and "bytes/bandwidth" in msg and "168 us" in msg
    assert e.value.measurement.median_s == pytest.approx(100e-6) and e.value.floor_s == floor
    ok = measure(SyntheticTimer(200e-6), mode="cold", floor_s=floor, floor_reason=why)
    assert ok.floor_s == floor and ok.floor_reason == why


def test_floor_arguments_are_checked():
    with pytest.raises(BenchError, match="positive"):
        measure(SyntheticTimer(1e-4), mode="cold", floor_s=0)
    with pytest.raises(BenchError, match="without floor_s"):
        measure(SyntheticTimer(1e-4), mode="cold", floor_reason="bytes")
    with pytest.raises(BenchError, match="unknown mode"):
        measure(SyntheticTimer(1e-4), mode="warm")


def test_json_round_trip_is_exact_and_strict_json():
    m = throttled_run()
    text = json.dumps(m.to_dict(), allow_nan=False)  # strict JSON: no NaN/Infinity
    back = Measurement.from_dict(json.loads(text))
    assert back == m
    assert back.median_s == m.median_s and back.samples_s == m.samples_s and back.throttled == m.throttled
    assert back.clocks[1].throttled == m.clocks[1].throttled
    # a fixed-count run has infinite target and wall cap: still strict JSON
    f = measure(SyntheticTimer(1e-4), mode="hot", stop=StopRule.fixed(12), warmup=WarmupRule.fixed(2))
    assert Measurement.from_dict(json.loads(json.dumps(f.to_dict(), allow_nan=False))) == f
    with pytest.raises(ValueError, match="not a kernelab measurement"):
        Measurement.from_dict({"schema": "something/else"})


def test_flush_is_at_least_twice_l2():
    assert flush_bytes(60 * MIB) == 120 * MIB  # H200
    assert flush_bytes(50 * MIB) == 100 * MIB  # H100
    assert flush_bytes(40 * MIB + 1) == 81 * MIB and flush_bytes(40 * MIB + 1) >= 2 * (40 * MIB + 1)


def test_arg_set_bytes_count_overlaps_once():
    assert span_union_bytes([(0, 10), (5, 15), (20, 30), (22, 25)]) == 25
    big = torch.empty(1000, dtype=torch.float32)
    sets = [(big[:500], big[250:750]), (big[::2],)]  # overlapping views, a strided view
    assert distinct_device_bytes(sets, device_only=False) == 4000 - 4  # big[::2] ends at element 998
    assert distinct_device_bytes(sets) == 0  # CPU tensors are not device memory


def test_cold_graph_arg_sets_must_exceed_twice_l2():
    small = [(torch.empty(1 * MIB, dtype=torch.uint8),) for _ in range(3)]
    with pytest.raises(BenchError, match=r"3 argument sets span 3.0 MiB.*at least 8.0 MiB"):
        materialize_arg_sets(small, 8 * MIB, device_only=False)
    made = materialize_arg_sets(lambda i: {"x": torch.empty(MIB, dtype=torch.uint8)}, 8 * MIB, device_only=False)
    assert len(made) == 8
    shared = torch.empty(MIB, dtype=torch.uint8)
    with pytest.raises(BenchError, match="no new device memory"):
        materialize_arg_sets(lambda i: (shared,), 8 * MIB, device_only=False)
    with pytest.raises(BenchError, match="empty"):
        materialize_arg_sets([], 8 * MIB, device_only=False)


def test_call_with_spreads_argument_sets():
    f = lambda *a, **k: (a, k)
    assert call_with(f, None) == ((), {})
    assert call_with(f, (1, 2)) == ((1, 2), {})
    assert call_with(f, {"x": 1}) == ((), {"x": 1})
    assert call_with(f, 7) == ((7,), {})
