"""The sampling loop: first call, warm-up, timed samples, clock readings. No GPU code here.

The loop drives a *timer*, an object with this interface (events.EventTimer and
graph.GraphTimer time a function on the GPU; synthetic.SyntheticTimer replays a synthetic
stream on a fake clock, which is how the CPU tests drive this loop):

    timer.launches_per_sample -> int          launches timed by one sample (graph replays: K)
    timer.eager_host_s -> float | None        host time of one eager call, if the timer knows it
                                              better than its samples do (graph mode)
    timer.now() -> float                      wall clock, seconds
    timer.first_call() -> float               run fn once untimed (module load, JIT); its wall seconds
    timer.sample(read_clock: bool) -> (gpu_s, host_s, clock fields | None)
        one timed sample: GPU seconds per launch, host seconds to enqueue one call of fn, and,
        when read_clock, a clock reading taken while the sample ran
    timer.read_clock() -> clock fields | None
    timer.info() -> dict                      what to record about the timer (flush bytes, ...)
    timer.close()                             release buffers and graphs

Python's garbage collector is paused during a run (as timeit does) so a collection cannot
land inside a sample's enqueue.
"""

from __future__ import annotations

import gc
import random
from contextlib import contextmanager
from dataclasses import dataclass, field

from .clocks import AFTER, BEFORE, DURING, ClockReading
from .rules import CONVERGED, StopRule, WarmupRule, next_check


@dataclass
class Series:
    """Everything one timer produced in one run."""

    timer: object
    samples: list[float] = field(default_factory=list)  # GPU seconds per launch
    host: list[float] = field(default_factory=list)  # host seconds per call of fn
    warmup_samples: list[float] = field(default_factory=list)
    warmup_host: list[float] = field(default_factory=list)
    warmup_times: list[float] = field(default_factory=list)  # wall clock at the end of each warm-up sample
    warmup_reason: str = ""
    warmup_wall_s: float = 0.0
    first_call_s: float = 0.0
    readings: list[ClockReading] = field(default_factory=list)
    stop_reason: str = ""
    spread: float = float("inf")
    wall_s: float = 0.0  # sampling phase only
    gpu_s: float = 0.0  # timed GPU seconds so far
    _t0: float = 0.0
    _last_clock: float = -1e30
    _next_check: int = 1

    def _reading(self, phase: str, index: int, fields: dict | None) -> None:
        if fields is not None:
            self.readings.append(ClockReading(phase=phase, index=index, t_s=self.timer.now() - self._t0, **fields))

    def begin(self, t0: float) -> None:
        self._t0 = t0
        self._reading(BEFORE, -1, self.timer.read_clock())
        self.first_call_s = float(self.timer.first_call())

    def warm_step(self) -> None:
        g, h, _ = self.timer.sample(False)
        self.warmup_samples.append(float(g))
        self.warmup_host.append(float(h))
        self.warmup_times.append(self.timer.now())

    def step(self, clock_interval_s: float) -> None:
        now = self.timer.now()
        read = now - self._last_clock >= clock_interval_s
        g, h, fields = self.timer.sample(read)
        if read:
            self._last_clock = now
            self._reading(DURING, len(self.samples), fields)
        self.samples.append(float(g))
        self.host.append(float(h))
        self.gpu_s += float(g) * self.timer.launches_per_sample

    def check(self, stop: StopRule, elapsed_s: float) -> str | None:
        """Why sampling should end now (or None); tests the spread only every ~5% more samples."""
        n = len(self.samples)
        if n >= self._next_check or stop.hard_stop(n, elapsed_s):
            self._next_check = next_check(n)
            if n >= 2:
                ok, self.spread = stop.converged(self.samples, self.gpu_s)
                if ok:
                    return CONVERGED
        return stop.hard_stop(n, elapsed_s)

    def end(self, reason: str, wall_s: float) -> None:
        self.stop_reason, self.wall_s = reason, wall_s
        self._reading(AFTER, len(self.samples), self.timer.read_clock())


@contextmanager
def _gc_paused():
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def collect(timer, warmup: WarmupRule, stop: StopRule, clock_interval_s: float = 0.005) -> Series:
    """Run one timer through first call, warm-up and sampling; return every sample taken."""
    s = Series(timer)
    s.begin(timer.now())  # the first call (JIT, torch.compile) runs with the collector on
    gc.collect()
    with _gc_paused():
        tw = timer.now()
        while True:
            reason = warmup.done(s.warmup_samples, s.warmup_times, timer.now() - tw)
            if reason:
                break
            s.warm_step()
        s.warmup_reason, s.warmup_wall_s = reason, timer.now() - tw
        ts = timer.now()
        while True:
            s.step(clock_interval_s)
            reason = s.check(stop, timer.now() - ts)
            if reason:
                break
        _final_spread(s, stop)
        s.end(reason, timer.now() - ts)
    return s


def collect_pair(timer_a, timer_b, warmup: WarmupRule, stop: StopRule, clock_interval_s: float = 0.005,
                 seed: int = 0) -> tuple[Series, Series, list[str]]:
    """Interleave two timers: warm-up alternates A, B; then each round takes one sample of each
    in a random order (seeded), so slow drift (clocks, temperature, neighbours) hits both alike
    and sample i of A pairs with sample i of B. Sampling ends when both series have converged,
    or at the shared caps (max_wall_s for the pair, max_samples per series).
    Returns (series A, series B, the order of each round, "AB" or "BA")."""
    a, b = Series(timer_a), Series(timer_b)
    rng = random.Random(seed)
    order: list[str] = []
    t0 = timer_a.now()
    a.begin(t0)
    b.begin(t0)
    gc.collect()
    with _gc_paused():
        tw = timer_a.now()
        ra = rb = None
        while True:
            el = timer_a.now() - tw
            ra = ra or warmup.done(a.warmup_samples, a.warmup_times, el)
            rb = rb or warmup.done(b.warmup_samples, b.warmup_times, el)
            if ra and rb:
                break
            if not ra:
                a.warm_step()
            if not rb:
                b.warm_step()
        a.warmup_reason, b.warmup_reason = ra, rb
        a.warmup_wall_s = b.warmup_wall_s = timer_a.now() - tw
        ts = timer_a.now()
        while True:
            first, second = (a, b) if rng.random() < 0.5 else (b, a)
            order.append("AB" if first is a else "BA")
            first.step(clock_interval_s)
            second.step(clock_interval_s)
            el = timer_a.now() - ts
            ca, cb = a.check(stop, el), b.check(stop, el)
            hard = stop.hard_stop(len(a.samples), el)
            if (ca == CONVERGED and cb == CONVERGED) or hard:
                reason = CONVERGED if not hard else hard
                break
        for s in (a, b):
            _final_spread(s, stop)
            s.end(reason, timer_a.now() - ts)
    return a, b, order


def _final_spread(s: Series, stop: StopRule) -> None:
    """The spread of all samples kept (the last check may have been a few samples earlier)."""
    if len(s.samples) >= 2:
        s.spread = stop.spread_of(s.samples)
