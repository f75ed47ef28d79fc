"""Time fn() with a pair of CUDA events per sample, on torch's current stream.

One sample, in stream order:

    [reset persisting L2]  pacer  [L2 flush]  start-event  fn()  stop-event      (host: sync on stop)

- The pacer is torch.cuda._sleep, a spin kernel of about 2 x the host's enqueue time + 30 us.
  While it runs, the host enqueues the flush, the start event and fn's kernels, so the GPU
  never waits for the host inside the event pair: the time is the GPU's, without the launch
  gap. (The seeds' scaffold records start on an idle GPU, so a short kernel's sample there
  includes the ~5 us the host takes to launch it; the flush hides it only when it is longer.)
  The host's enqueue time is measured separately (perf_counter around fn()), which is how
  launch-bound calls are detected.
- The flush (cold mode) is a memset of >= 2 x L2 on the same stream, outside the events.
- The sync on the stop event after every sample keeps samples independent and lets the loop
  read clocks and test the stopping rule between samples.
"""

from __future__ import annotations

import statistics
import time
from collections import deque

from .flush import L2Flusher

PACER_MIN_S = 30e-6
PACER_MAX_S = 2e-3


class Pacer:
    """Keeps the GPU busy while the host enqueues a sample (see the module docstring)."""

    def __init__(self, sm_clock_mhz: float):
        self.cycles_per_s = max(sm_clock_mhz, 100.0) * 1e6
        self.recent = deque(maxlen=16)
        self.seconds = 100e-6  # until host times are known (first-call host time includes JIT)

    def update(self, host_s: float) -> None:
        self.recent.append(host_s)
        med = statistics.median(self.recent)
        self.seconds = min(PACER_MAX_S, max(PACER_MIN_S, 2.0 * med + PACER_MIN_S))

    def enqueue(self) -> None:
        import torch

        torch.cuda._sleep(int(self.seconds * self.cycles_per_s))


class IdlePacer:
    """A pacer that enqueues nothing: fn() then runs with the GPU idle, which is what a
    host-side cost (cudaMalloc, a module load) must be measured against."""

    seconds = 0.0

    def enqueue(self) -> None:
        pass

    def update(self, host_s: float) -> None:
        pass


def sync_event(event) -> None:
    """event.synchronize(), with a device fault turned into kernelab's KernelFault."""
    try:
        event.synchronize()
    except Exception:
        from ..gpu import synchronize

        synchronize()  # raises KernelFault (naming the kernel) for a sticky fault
        raise


class EventTimer:
    """Cold (flush before each sample) or hot event timing of fn(); see loop.py for the interface."""

    launches_per_sample = 1
    eager_host_s = None

    def __init__(self, fn, *, cold: bool, flush_method: str = "memset", device_index: int | None = None,
                 probe=None):
        import torch

        from ..gpu import device_info
        from .clocks import NvmlProbe

        self.fn, self.cold = fn, cold
        self.device_index = torch.cuda.current_device() if device_index is None else device_index
        info = device_info(self.device_index)
        self.flusher = L2Flusher.for_device(self.device_index, flush_method) if cold else None
        self.pacer = Pacer(info.sm_clock_max_mhz)
        self.probe = probe or NvmlProbe(self.device_index)
        self._start = torch.cuda.Event(enable_timing=True)
        self._stop = torch.cuda.Event(enable_timing=True)
        self._reset_persisting = cold
        self._reset_ok = None
        self._reset_host_s = None

    def now(self) -> float:
        return time.perf_counter()

    def read_clock(self):
        return self.probe.read()

    def first_call(self) -> float:
        from ..gpu import synchronize

        t = time.perf_counter()
        self.fn()
        synchronize()
        return time.perf_counter() - t

    def _before_start(self) -> None:
        if self._reset_persisting:
            from ..gpu.l2 import reset_persisting_l2

            t = time.perf_counter()
            ok = reset_persisting_l2(self.device_index)
            if self._reset_ok is None:
                self._reset_host_s = time.perf_counter() - t  # recorded: its cost was not measured before
            self._reset_ok = ok
            self._reset_persisting = ok  # not supported here: stop asking
        self.pacer.enqueue()
        if self.flusher is not None:
            self.flusher.flush()

    def sample(self, read_clock: bool):
        self._before_start()
        self._start.record()
        t0 = time.perf_counter()
        self.fn()
        t1 = time.perf_counter()
        self._stop.record()
        reading = self.probe.read() if read_clock else None  # the GPU is busy with this sample now
        sync_event(self._stop)
        host = t1 - t0
        self.pacer.update(host)
        return self._start.elapsed_time(self._stop) * 1e-3, host, reading

    def info(self) -> dict:
        from .flush import cache_state_info

        return {"timer": "events", "pacer_s": self.pacer.seconds, "persisting_l2_reset_host_s": self._reset_host_s,
                **cache_state_info(self._reset_ok, self.flusher)}

    def close(self) -> None:
        pass
