"""The measurement protocol: the one place in kernelab that times GPU work.

    from kernelab.bench import bench, compare, physical_floor

    m = bench(lambda: kernel(a, b, c, n, grid=g, block=256))      # fn() enqueues on torch's current stream
    m.median_s, m.stats.p10, m.samples_s, m.launch_bound, m.mean_sm_clock_mhz, m.throttled
    json.dumps(m.to_dict());  Measurement.from_dict(d)

    floor, why = physical_floor(bytes=3 * n * 4, bandwidth=device_info().nominal_bandwidth)
    bench(fn, floor_s=floor, floor_reason=why)                      # ImpossibleResult if the median is below

    c = compare(fn_a, fn_b)           # interleaved; c.verdict in faster/slower/same/unclear, c.ratio, c.ci
    c = compare_measurements(Measurement.from_dict(a), Measurement.from_dict(b))   # stored runs (unpaired)

bench(fn, *, mode="cold", floor_s=None, floor_reason=None, target_rel=0.005, min_samples=10,
      min_gpu_s=1e-3, max_wall_s=5.0, max_samples=100_000, spread="ci", warmup=None,
      arg_sets=None, graph_launches=None, flush="memset_read", clock_interval_s=0.005, name="")

The protocol (each part in its own module):
- events.py   one CUDA event pair per sample on torch's current stream, synchronised per sample;
              a GPU-side pacer keeps the host's launch time out of the pair; host enqueue time
              is measured too, and `launch_bound` is set when it reaches the GPU time.
- flush.py    cold mode: memset of >= 2 x L2 before every sample, on the timed stream, outside
              the events; persisting L2 lines reset (kernelab.gpu.l2).
- rules.py    warm-up until stable (time-based, minimum count; the first call is untimed and
              absorbs module load/JIT); stopping when the median's CI half-width (or stdrel)
              is <= target_rel after min_samples and min_gpu_s, capped by max_wall_s.
- graph.py    mode="graph": K launches captured in one CUDA graph, time per launch; with
              arg_sets, inputs rotate over >= 2 x L2 bytes so every launch is cold.
- clocks.py   NVML SM clock and throttle reasons before, during and after; throttled samples
              flagged; mean SM clock. Without NVML: no readings, nothing flagged.
- stats.py    min, p10, median, p90, max, mean, stdrel, n, total GPU time, the median's CI.
- compare.py  A/B in random-order rounds (paired), verdict from a bootstrap CI of the ratio.
- floor.py    the physical floor and ImpossibleResult.
- seeds.py    seeds_bench(fn, warmup, iters, flush_l2) -> median ms, the seeds' signature.
- loop.py, synthetic.py, api.measure: the sampling loop takes any timer, so the CPU tests
              drive it with a SyntheticTimer on a fake clock.
Every sample is kept (Measurement.samples_s), warm-up samples too (Measurement.warmup).
"""

from .api import bench, host_time, measure
from .clocks import ClockReading
from .compare import Comparison, compare, compare_measurements, compare_samples, compare_timers
from .errors import BenchError, ImpossibleResult
from .floor import physical_floor
from .measurement import MODES, Measurement
from .rules import StopRule, WarmupRule
from .seeds import seeds_bench
from .stats import Stats, format_time, summarize
from .synthetic import FakeClock, SyntheticTimer

__all__ = [
    "bench", "host_time", "measure", "compare", "compare_samples", "compare_measurements", "compare_timers",
    "Measurement", "Comparison", "Stats", "ClockReading", "StopRule", "WarmupRule", "MODES",
    "ImpossibleResult", "BenchError", "physical_floor", "seeds_bench", "summarize", "format_time",
    "FakeClock", "SyntheticTimer",
]
