"""Graph mode: capture K launches of fn in one CUDA graph, replay it, report time per launch.

For launch-bound work (a kernel shorter than the ~5 us the host takes to launch it), event
timing of single calls measures the GPU's kernel time but not what a stream of calls costs;
a graph replays K kernels with ~1 us between them, as a model captured in a graph would.

Hot graph (no arg_sets): the same fn() K times; inputs that fit in L2 stay there.
Cold graph (arg_sets): launch i uses argument set i mod S; the S sets must hold at least
2 x L2 bytes of distinct device memory between them (checked), so by the time a set comes
round again its lines have been evicted by the others. The L2 is also flushed before each
replay, outside the events, so the first launch is cold too.

    bench(lambda a, b, c: k(a, b, c, n, grid=g, block=256), mode="graph",
          arg_sets=lambda i: make_inputs(seed=i))        # a factory: as many sets as needed
"""

from __future__ import annotations

import math
import statistics
import time

from .errors import BenchError
from .events import Pacer, sync_event
from .flush import L2Flusher

MAX_SETS = 4096
TARGET_REPLAY_S = 200e-6  # one replay long enough that event resolution (~0.5 us) is < 0.3% of it
MAX_LAUNCHES = 1000


def call_with(fn, args):
    """fn() for None, fn(*args) for a tuple or list, fn(**args) for a dict, else fn(args)."""
    if args is None:
        return fn()
    if isinstance(args, (tuple, list)):
        return fn(*args)
    if isinstance(args, dict):
        return fn(**args)
    return fn(args)


def _tensors(obj):
    import torch

    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (tuple, list)):
        for x in obj:
            yield from _tensors(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _tensors(x)


def span_union_bytes(spans) -> int:
    """Total length of the union of [start, end) byte ranges."""
    total, end = 0, -1
    for a, b in sorted(spans):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def distinct_device_bytes(arg_sets, device_only: bool = True) -> int:
    """Bytes of memory the tensors of `arg_sets` span, overlaps counted once (CUDA tensors only,
    unless device_only=False: the CPU tests count CPU tensors the same way)."""
    spans = []
    for t in _tensors(list(arg_sets)):
        if (device_only and not t.is_cuda) or t.numel() == 0:
            continue
        extent = sum((s - 1) * st for s, st in zip(t.shape, t.stride()) if s > 0) + 1
        start = t.data_ptr()
        spans.append((start, start + extent * t.element_size()))
    return span_union_bytes(spans)


def materialize_arg_sets(arg_sets, need_bytes: int, device_only: bool = True) -> list:
    """A list of argument sets spanning >= need_bytes; a factory is called until they do."""
    mib = 1 << 20
    if callable(arg_sets):
        sets, have = [], 0
        for i in range(MAX_SETS):
            sets.append(arg_sets(i))
            now = distinct_device_bytes(sets, device_only)
            if now <= have:
                raise BenchError(f"arg_sets factory: call {i} returned no new device memory (its tensors overlap "
                                 "earlier sets'); each call must allocate fresh tensors for the rotation to evict L2")
            have = now
            if have >= need_bytes:
                return sets
        raise BenchError(f"arg_sets factory: {MAX_SETS} sets span only {have / mib:.1f} MiB, under the "
                         f"{need_bytes / mib:.1f} MiB (2 x L2) a cold-L2 graph needs")
    sets = list(arg_sets)
    if not sets:
        raise BenchError("arg_sets is empty; give a list of argument sets or a factory i -> argument set")
    have = distinct_device_bytes(sets, device_only)
    if have < need_bytes:
        raise BenchError(
            f"the {len(sets)} argument sets span {have / mib:.1f} MiB of distinct device memory; a cold-L2 graph "
            f"needs at least {need_bytes / mib:.1f} MiB (2 x this GPU's L2) so that rotating through them evicts "
            "each set before it comes round again. Fix: pass more sets, or a factory (arg_sets=lambda i: ...) "
            "that kernelab calls until they are large enough; or use mode='cold' (flush before each call).")
    return sets


class GraphTimer:
    """Replays a captured graph of K launches; see loop.py for the timer interface."""

    def __init__(self, fn, *, arg_sets=None, launches: int | None = None, flush_method: str = "memset",
                 device_index: int | None = None, probe=None):
        import torch

        from ..gpu import device_info
        from .clocks import NvmlProbe

        if launches is not None and not (isinstance(launches, int) and launches >= 1):
            raise BenchError(f"graph_launches must be a positive int, got {launches!r}")
        self.fn = fn
        self.device_index = torch.cuda.current_device() if device_index is None else device_index
        info = device_info(self.device_index)
        self.cold = arg_sets is not None
        self.sets = materialize_arg_sets(arg_sets, 2 * info.l2_bytes) if self.cold else [None]
        self.set_bytes = distinct_device_bytes(self.sets) if self.cold else None
        self.flusher = L2Flusher.for_device(self.device_index, flush_method) if self.cold else None
        self._sm_clock_mhz = info.sm_clock_max_mhz
        self.pacer = Pacer(self._sm_clock_mhz)
        self.probe = probe or NvmlProbe(self.device_index)
        self._requested = launches
        self.launches_per_sample = 0
        self.eager_host_s = None
        self.graph = None
        self._reset_ok = None
        self._start = torch.cuda.Event(enable_timing=True)
        self._stop = torch.cuda.Event(enable_timing=True)

    def now(self) -> float:
        return time.perf_counter()

    def read_clock(self):
        return self.probe.read()

    def _capture(self, k: int):
        import torch

        from ..gpu import synchronize

        g = torch.cuda.CUDAGraph()
        synchronize()
        try:
            with torch.cuda.graph(g):
                for i in range(k):
                    call_with(self.fn, self.sets[i % len(self.sets)])
        except Exception as e:
            raise BenchError(f"capturing fn in a CUDA graph failed: {e}. Graph mode needs fn to be capturable: no "
                             "synchronisation, no .item()/.cpu()/print of device values, no new stream or event "
                             "waits outside the capture. Use mode='cold' or 'hot' for this fn.") from e
        synchronize()
        return g

    def _replay_s(self, g) -> float:
        self.pacer.enqueue()
        self._start.record()
        g.replay()
        self._stop.record()
        sync_event(self._stop)
        return self._start.elapsed_time(self._stop) * 1e-3

    def first_call(self) -> float:
        """Eager calls first (module load, JIT, lazy allocations must not happen inside the capture),
        then the host time of an eager call, then K and the capture."""
        from ..gpu import synchronize

        t = time.perf_counter()
        for s in self.sets:
            call_with(self.fn, s)
        synchronize()
        first = time.perf_counter() - t
        hosts = []
        for i in range(max(8, min(len(self.sets), 32))):
            t0 = time.perf_counter()
            call_with(self.fn, self.sets[i % len(self.sets)])
            hosts.append(time.perf_counter() - t0)
        synchronize()
        self.eager_host_s = statistics.median(hosts)
        self.pacer.update(self.eager_host_s)
        k = self._requested
        if k is None:
            k0 = len(self.sets) if self.cold else 8
            g0 = self._capture(k0)
            self._replay_s(g0)  # the first replay uploads the graph
            per_launch = min(self._replay_s(g0) for _ in range(3)) / k0
            k = max(1, min(MAX_LAUNCHES, math.ceil(TARGET_REPLAY_S / max(per_launch, 1e-7) - 1e-6)))
            g0.reset()  # frees the trial graph's memory pool now
        if self.cold:  # whole rotations, each set at least once
            s = len(self.sets)
            k = max(k, s)
            k = -(-k // s) * s
        self.graph = self._capture(k)
        self.launches_per_sample = k
        self.pacer = Pacer(self._sm_clock_mhz)  # from now on the host enqueues replays, not calls
        self.graph.replay()  # upload
        synchronize()
        return first

    def sample(self, read_clock: bool):
        if self.cold and self._reset_ok is not False:
            from ..gpu.l2 import reset_persisting_l2

            self._reset_ok = reset_persisting_l2(self.device_index)
        self.pacer.enqueue()
        if self.flusher is not None:
            self.flusher.flush()
        self._start.record()
        t0 = time.perf_counter()
        self.graph.replay()
        t1 = time.perf_counter()
        self._stop.record()
        reading = self.probe.read() if read_clock else None
        sync_event(self._stop)
        self.pacer.update(t1 - t0)
        k = self.launches_per_sample
        return self._start.elapsed_time(self._stop) * 1e-3 / k, (t1 - t0) / k, reading

    def info(self) -> dict:
        from .flush import cache_state_info

        return {"timer": "graph", "launches_per_sample": self.launches_per_sample,
                "arg_sets": len(self.sets) if self.cold else 0, "arg_set_bytes": self.set_bytes,
                "eager_host_s": self.eager_host_s, "pacer_s": self.pacer.seconds,
                **cache_state_info(self._reset_ok, self.flusher)}

    def close(self) -> None:
        if self.graph is not None:
            self.graph.reset()
            self.graph = None
