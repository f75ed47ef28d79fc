"""bench(): time fn() on the GPU with the full protocol; measure(): the same on any timer."""

from __future__ import annotations

from .errors import BenchError
from .floor import check_floor
from .loop import collect
from .measurement import MODES, Measurement, from_series
from .rules import StopRule, WarmupRule


def measure(timer, *, mode: str, l2: str | None = None, name: str = "", stop: StopRule | None = None,
            warmup: WarmupRule | None = None, floor_s: float | None = None, floor_reason: str | None = None,
            clock_interval_s: float = 0.005, device: str | None = None, meta: dict | None = None) -> Measurement:
    """Run `timer` (loop.py's interface) through warm-up and sampling; build the Measurement; check the floor.

    This is bench() without the GPU: give it a synthetic.SyntheticTimer to run the protocol on CPU.
    """
    if mode not in MODES:
        raise BenchError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    if floor_s is not None and not floor_s > 0:
        raise BenchError(f"floor_s must be a positive number of seconds, got {floor_s!r}")
    if floor_reason is not None and floor_s is None:
        raise BenchError("floor_reason given without floor_s; pass both (see kernelab.bench.physical_floor)")
    stop = stop or StopRule()
    warmup = warmup or WarmupRule()
    try:
        series = collect(timer, warmup, stop, clock_interval_s)
    finally:
        timer.close()
    m = from_series(series, name=name, mode=mode, l2=l2 or ("hot" if mode == "hot" else "cold"), stop=stop,
                    floor_s=floor_s, floor_reason=floor_reason, device=device, meta=meta)
    check_floor(m, floor_s, floor_reason)
    return m


def _fn_name(fn) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


def make_timer(fn, *, mode: str, arg_sets=None, graph_launches: int | None = None, flush: str = "memset_read"):
    """The GPU timer for `mode` (events.EventTimer or graph.GraphTimer)."""
    from ..gpu import NoGPUError, has_gpu

    if not callable(fn):
        raise BenchError(f"fn must be callable (a function that enqueues the work), got {type(fn).__name__}")
    if mode not in MODES:
        raise BenchError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    if mode != "graph" and (arg_sets is not None or graph_launches is not None):
        raise BenchError(f"arg_sets and graph_launches belong to mode='graph' (got mode={mode!r}); in mode='cold' the "
                         "flush before each sample already makes L2 cold")
    if not has_gpu():
        raise NoGPUError("kernelab.bench.bench (timing on the GPU)")
    import torch

    if torch.cuda.is_current_stream_capturing():
        raise BenchError("bench() was called inside a CUDA-graph capture; call it outside, and use mode='graph'")
    if mode == "graph":
        from .graph import GraphTimer

        return GraphTimer(fn, arg_sets=arg_sets, launches=graph_launches, flush_method=flush)
    from .events import EventTimer

    return EventTimer(fn, cold=(mode == "cold"), flush_method=flush)


def _environment() -> dict:
    import datetime

    import torch

    from .. import __version__
    from ..gpu import device_info

    info = device_info()
    return {"device": info.name, "meta": {
        "kernelab": __version__, "torch": torch.__version__, "cc": f"{info.cc[0]}.{info.cc[1]}",
        "driver": info.driver_version, "sm_clock_max_mhz": info.sm_clock_max_mhz,
        "time_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }}


def bench(fn, *, mode: str = "cold", floor_s: float | None = None, floor_reason: str | None = None,
          target_rel: float = 0.005, min_samples: int = 10, min_gpu_s: float = 1e-3, max_wall_s: float = 5.0,
          max_samples: int = 100_000, spread: str = "ci", warmup: WarmupRule | None = None, arg_sets=None,
          graph_launches: int | None = None, flush: str = "memset_read", clock_interval_s: float = 0.005,
          name: str = "") -> Measurement:
    """Time `fn()` (which enqueues GPU work on torch's current stream) and return a Measurement.

    mode: "cold" (default) flushes L2 before every sample; "hot" does not; "graph" replays K
      captured launches per sample and reports time per launch (cold L2 when `arg_sets` rotates
      inputs spanning >= 2 x L2: a list of argument sets or a factory i -> set, passed to fn).
    Stopping: after >= min_samples samples and >= min_gpu_s of timed GPU time, stop when the
      spread (spread="ci": the median's 95% CI half-width / median; "stdrel": std / mean) is
      <= target_rel; stop anyway after max_wall_s seconds of sampling or max_samples samples.
    floor_s: the physical floor (kernelab.bench.physical_floor gives it with its reason); a
      median below it raises ImpossibleResult, which carries the Measurement.
    flush: "memset_read" (default) or "memset" (see flush.py). memset_read is the default since it
        matched ncu within 0.04% on a 230 us kernel where memset read +2.4% (H200, 2026-11-30, NOTES.md).
    """
    stop = StopRule(target_rel=target_rel, min_samples=min_samples, min_gpu_s=min_gpu_s, max_wall_s=max_wall_s,
                    max_samples=max_samples, spread=spread)
    timer = make_timer(fn, mode=mode, arg_sets=arg_sets, graph_launches=graph_launches, flush=flush)
    l2 = "hot" if mode == "hot" or (mode == "graph" and arg_sets is None) else "cold"
    return measure(timer, mode=mode, l2=l2, name=name or _fn_name(fn), stop=stop, warmup=warmup, floor_s=floor_s,
                   floor_reason=floor_reason, clock_interval_s=clock_interval_s, **_environment())


def host_time(fn, *, warmup: int = 5, samples: int = 30, name: str = "") -> Measurement:
    """Host seconds of one fn() call with the GPU idle before it: cudaMalloc, cudaFree, a module
    load, a launch. Measurement.host_enqueue_s is the median host time; warmup["first_call_s"]
    the first call (fn + synchronize), which is where one-off costs such as a PTX JIT land.
    fn is called exactly 1 + warmup + samples times."""
    from .events import IdlePacer
    from .rules import StopRule, WarmupRule

    timer = make_timer(fn, mode="hot")
    timer.pacer = IdlePacer()
    return measure(timer, mode="hot", l2="hot", name=name, stop=StopRule.fixed(samples),
                   warmup=WarmupRule.fixed(warmup))
