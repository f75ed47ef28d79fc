"""The seeds' scaffold signature, kept so code written against seeds/000 §9 runs unchanged:

    from kernelab.bench import seeds_bench as bench
    ms = bench(fn, warmup=10, iters=100, flush_l2=True)      # median milliseconds

It runs the same protocol as kernelab.bench.bench with a fixed warm-up count and a fixed
sample count. What it does differently from the seeds' Python bench():
- the flush buffer is 2 x the device's L2 (seeds: a fixed 128 MiB, sized for the A100's 40 MiB),
  and persisting L2 lines are reset before each sample;
- a GPU-side pacer before each sample hides the host's launch time, so a short kernel's time
  does not include the ~5 us launch gap that an event recorded on an idle GPU adds;
- the first call is untimed and synchronised even with warmup=0 (module load and JIT must
  not land in a sample); warm-up calls are flushed like samples (the seeds do not flush them);
- SM clock and throttle reasons are read (call kernelab.bench.bench for them and everything
  else: stats, every sample, launch-bound detection, the physical floor).
The median is the seeds' one: sorted(times)[iters // 2] (the upper median for even iters).
"""

from __future__ import annotations

from .api import make_timer, measure
from .errors import BenchError
from .rules import StopRule, WarmupRule


def seeds_bench(fn, warmup: int = 10, iters: int = 100, flush_l2: bool = True) -> float:
    """Median time of fn() in milliseconds over `iters` samples after `warmup` calls (seeds/000 §9)."""
    if not (isinstance(warmup, int) and warmup >= 0):
        raise BenchError(f"warmup must be an int >= 0, got {warmup!r}")
    if not (isinstance(iters, int) and iters >= 1):
        raise BenchError(f"iters must be an int >= 1, got {iters!r}")
    mode = "cold" if flush_l2 else "hot"
    timer = make_timer(fn, mode=mode)
    # The untimed first call counts as one of the seeds' warm-up calls.
    m = measure(timer, mode=mode, name=getattr(fn, "__name__", "fn"), stop=StopRule.fixed(iters),
                warmup=WarmupRule.fixed(max(0, warmup - 1)))
    return sorted(m.samples_s)[iters // 2] * 1e3


# `from kernelab.bench.seeds import bench` reads exactly like the seeds' code.
bench = seeds_bench
