"""The measurement protocol's self-tests on a real GPU (issue 3 §2). About 10-20 s of GPU time.

- the L2 flush makes an L2-resident vector add measurably slower; at n = 2^28 cold and hot agree;
- a clock64 spin of known cycles is timed within 2% of cycles / SM clock (NVML's, during the run);
- graph replay times a tiny kernel under 2 us per launch, while single-launch event timing
  shows the launch gap (and flags the call launch-bound);
- the stopping rule stops a stable kernel in fewer than 100 samples;
- cold-L2 graphs rotate inputs; compare() and the physical floor work end to end.
"""


import pytest
import torch

from kernelab.bench import (
    BenchError, ImpossibleResult, bench, compare, physical_floor, seeds_bench,
)
from kernelab.gpu import device_info, load, nvml
from kernelab.ops import Case, discover, run_variant

pytestmark = pytest.mark.gpu

OP = discover()["vector_add"]


def vector_add(variant: str, n: int, seed: int = 0):
    """fn() launching `variant` on fresh fp32 inputs of n elements (and the tensors, kept alive by the closure)."""
    case = Case((n,), "float32")
    inputs = OP.make_inputs(case, seed, "cuda")
    outputs = OP.make_outputs(case, inputs)
    v = OP.variant(variant)

    def fn():
        run_variant(OP, v, case, inputs, outputs)
    fn.__name__ = f"vector_add/{v.name}/n={n}"
    return fn


def test_flush_slows_an_l2_resident_vector_add():
    info = device_info()
    # 24 MiB, inside the L2 (60 MiB on an H200, 50 on an H100). Not bigger: at 48 MiB on the H200
    # hot replays ran slower than cold ones (17.3 vs 15.8 us, session 4: the L2 is two partitions,
    # and c's dirty lines from the last replay are written back under the next).
    n = 1 << 21
    assert 3 * n * 4 < info.l2_bytes
    fn = vector_add("v0", n)
    cold = bench(fn, mode="cold", max_wall_s=2)
    hot = bench(fn, mode="hot", max_wall_s=2)
    detail = f"\ncold: {cold}\nhot:  {hot}"
    # Cold reads 24 MiB from HBM; hot hits L2 (several times HBM's bandwidth). Both are near the
    # ~8 us host enqueue floor of a Python launch, which compresses the ratio (H200, session 4:
    # 9.5 vs 8.4 us, 1.14x; earlier sessions > 1.15x): the separation of the two distributions
    # is the claim (without a flush the two agree within ~1%), the ratio only a sanity bound. At
    # 1.08x and p10 > p90 it still failed 1 run in 3 on the shared H200 (session 4).
    assert cold.median_s > 1.05 * hot.median_s, detail
    assert cold.stats.p10 > hot.stats.p10 and cold.stats.p90 > hot.stats.p90, detail
    assert cold.meta["flush_bytes"] >= 2 * info.l2_bytes and cold.l2 == "cold" and hot.l2 == "hot"
    if info.cc >= (8, 0):  # persisting L2 exists from Ampere on, and the reset must have run
        assert cold.meta["persisting_l2_reset"] is True, cold.meta.get("persisting_l2_reset_error")


def test_cold_and_hot_agree_when_the_working_set_dwarfs_l2():
    n = 1 << 28  # 3 GiB: whatever L2 holds from the previous sample is < 2% of the traffic
    fn = vector_add("v2", n)
    cold = bench(fn, mode="cold", max_wall_s=3)
    hot = bench(fn, mode="hot", max_wall_s=3)
    detail = f"\ncold: {cold}\nhot:  {hot}"
    assert abs(cold.median_s / hot.median_s - 1) < 0.03, detail
    assert cold.stop_reason == hot.stop_reason == "converged", detail
    assert not cold.launch_bound and not hot.launch_bound


SPIN = r"""
// Spins until `cycles` SM clock cycles have passed; writes the cycles spun and the
// nanoseconds the global timer saw, so the test can also derive the clock the kernel ran at.
extern "C" __global__ void spin(unsigned long long cycles, unsigned long long* out) {
  unsigned long long g0, g1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  long long t0 = clock64(), t;
  do { t = clock64(); } while (t - t0 < (long long)cycles);
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
  out[0] = (unsigned long long)(t - t0);
  out[1] = g1 - g0;
}
"""


def _spin(cycles: int):
    k = load(SPIN).kernel("spin")
    out = torch.zeros(2, dtype=torch.int64, device="cuda")

    def fn():
        k(cycles, out, grid=1, block=1)
    return fn, out


def test_clock64_spin_is_timed_within_2_percent_of_cycles_over_sm_clock():
    cycles = 2_000_000  # ~1 ms at 2 GHz: the ~2 us launch latency inside the events is 0.2%
    fn, out = _spin(cycles)
    m = bench(fn, mode="hot", max_wall_s=3)
    torch.cuda.synchronize()
    spun, ns = (int(v) for v in out.tolist())
    kernel_mhz = spun / ns * 1e3  # cycles per ns -> MHz, from the kernel's own clocks
    if nvml.available():
        assert m.mean_sm_clock_mhz is not None, "NVML is available but no clock was read during the run"
        mhz, source = m.mean_sm_clock_mhz, "NVML"
    else:
        mhz, source = kernel_mhz, "clock64/globaltimer (no NVML here)"
    expected_s = cycles / (mhz * 1e6)
    detail = (f"\n{m}\nexpected {expected_s * 1e6:.1f} us at {mhz:.0f} MHz ({source}); the kernel saw "
              f"{ns / 1e3:.1f} us, {kernel_mhz:.0f} MHz; throttled samples {len(m.throttled)} {m.throttle_reasons}")
    assert abs(m.median_s / expected_s - 1) < 0.02, detail


def test_stopping_rule_stops_a_stable_kernel_in_fewer_than_100_samples():
    fn, _ = _spin(200_000)  # ~100 us
    m = bench(fn, mode="hot", max_wall_s=3)
    assert m.stop_reason == "converged" and m.n < 100, str(m)
    assert m.spread_rel <= 0.005 and len(m.samples_s) == m.n


def test_graph_mode_removes_the_launch_gap_of_a_tiny_kernel():
    fn = vector_add("v0", 1024)  # 4 blocks: the kernel is all launch
    graph = bench(fn, mode="graph", max_wall_s=2)
    event = bench(fn, mode="hot", max_wall_s=2)
    detail = f"\ngraph: {graph}\nevent: {event}"
    assert graph.median_s < 2e-6 and graph.launches_per_sample >= 100, detail
    # One launch between two events also holds the GPU-side launch latency...
    assert event.median_s > graph.median_s, detail
    # ...and the host needs longer to enqueue one call than the GPU to run it: launch-bound.
    assert event.launch_bound and "mode='graph'" in event.recommendation, detail
    assert event.host_enqueue_s > 2 * graph.median_s, detail


def test_cold_graph_rotates_inputs_beyond_l2():
    info = device_info()
    n = 1 << 20  # 12 MiB per set: fits in L2, so only the rotation makes it cold
    case = Case((n,), "float32")
    v = OP.variant("v0")

    def make(i):
        inputs = OP.make_inputs(case, i, "cuda")
        return inputs, OP.make_outputs(case, inputs)

    def fn(inputs, outputs):
        run_variant(OP, v, case, inputs, outputs)

    cold = bench(fn, mode="graph", arg_sets=make, max_wall_s=2)
    assert cold.l2 == "cold" and cold.meta["arg_set_bytes"] >= 2 * info.l2_bytes
    assert cold.launches_per_sample % cold.meta["arg_sets"] == 0
    one = make(0)
    hot = bench(lambda: fn(*one), mode="graph", max_wall_s=2)
    assert cold.median_s > 1.1 * hot.median_s, f"\ncold graph: {cold}\nhot graph:  {hot}"
    with pytest.raises(BenchError, match="2 x this GPU's L2"):
        bench(fn, mode="graph", arg_sets=[make(0), make(1)])


def test_compare_tells_faster_and_same():
    n = 1 << 24
    naive, persistent = vector_add("v0", n), vector_add("v2", n, seed=1)
    c = compare(persistent, naive, names=("v2", "v0"), max_wall_s=3)
    assert c.verdict == "faster" and c.paired, str(c)
    # The twin does the same work on the same buffers. With the default 1% band this verdict was
    # "unclear" in 1 of 3 H200 runs (session 2: ratio 1.0067, CI [1.0007, 1.0126]): interleaved
    # callables of a 48 us kernel can differ by ~1% systematically, so "same" is asked within 2%.
    def twin():
        persistent()
    same = compare(persistent, twin, max_wall_s=3, tol=0.02)
    assert same.verdict == "same", str(same)


def test_physical_floor_rejects_an_impossible_time_and_seeds_bench_agrees():
    n = 1 << 24
    fn = vector_add("v1", n)
    real = 3 * n * 4
    floor, why = physical_floor(bytes=real, bandwidth=device_info().nominal_bandwidth)
    m = bench(fn, floor_s=floor, floor_reason=why)  # the real work model: possible
    with pytest.raises(ImpossibleResult, match="bytes/bandwidth"):
        inflated, why2 = physical_floor(bytes=10 * real, bandwidth=device_info().nominal_bandwidth)
        bench(fn, floor_s=inflated, floor_reason=why2)  # claims 10x the bytes: below the floor
    ms = seeds_bench(fn, warmup=5, iters=30)
    assert abs(ms * 1e-3 / m.median_s - 1) < 0.05, (ms, str(m))
