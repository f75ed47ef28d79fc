"""A timer that replays a synthetic stream of GPU times on a fake clock (no GPU needed).

It implements the timer interface of loop.py, so the real warm-up, stopping, clock-flagging,
launch-bound and comparison logic runs unchanged on CPU: this is how tests/cpu/test_bench_*.py
exercise drift, outliers, bimodal samples and throttled stretches, and how the protocol can be
demonstrated without a GPU.

    clock = FakeClock()
    t = SyntheticTimer(lambda i, t: 100e-6 * (1 + 0.01 * rng.standard_normal()), clock=clock)
    m = measure(t, mode="cold")            # api.measure: loop + Measurement, no GPU

Each sample advances the fake clock by max(GPU time x launches, host time) + overhead_s.
"""

from __future__ import annotations

from typing import Callable, Sequence


class FakeClock:
    """A wall clock that only moves when told to; share one between timers to interleave them."""

    def __init__(self, t: float = 0.0):
        self.t = float(t)

    def __call__(self) -> float:
        return self.t

    def advance(self, dt: float) -> None:
        self.t += dt


def _as_fn(v, what: str) -> Callable[[int, float], float]:
    if callable(v):
        return v
    if isinstance(v, (int, float)):
        return lambda i, t: float(v)
    seq = list(v)

    def by_index(i, t):
        if i >= len(seq):
            raise IndexError(f"SyntheticTimer: the {what} sequence has {len(seq)} values and call {i} asked for "
                             "another; give a longer sequence or a function (i, t) -> seconds")
        return seq[i]
    return by_index


class SyntheticTimer:
    """gpu_s / host_s: a number, a sequence (indexed by timed call, warm-up included) or a function
    (i, t) -> seconds of the call number i and the fake time t. clocks: None (no NVML) or a function
    t -> dict of ClockReading fields (sm_mhz, throttle_mask, ...)."""

    def __init__(self, gpu_s: float | Sequence[float] | Callable[[int, float], float], *,
                 host_s: float | Sequence[float] | Callable[[int, float], float] = 5e-6,
                 clocks: Callable[[float], dict | None] | None = None, first_call_s: float = 0.05,
                 overhead_s: float = 20e-6, clock: FakeClock | None = None, launches_per_sample: int = 1,
                 eager_host_s: float | None = None):
        self._gpu, self._host = _as_fn(gpu_s, "gpu_s"), _as_fn(host_s, "host_s")
        self._clocks = clocks
        self.first_call_s, self.overhead_s = first_call_s, overhead_s
        self.clock = clock or FakeClock()
        self.launches_per_sample = launches_per_sample
        self.eager_host_s = eager_host_s
        self.calls = 0  # timed samples taken (warm-up included)
        self.closed = False

    def now(self) -> float:
        return self.clock()

    def first_call(self) -> float:
        self.clock.advance(self.first_call_s)
        return self.first_call_s

    def read_clock(self) -> dict | None:
        return self._clocks(self.clock()) if self._clocks else None

    def sample(self, read_clock: bool):
        i, t = self.calls, self.clock()
        g, h = float(self._gpu(i, t)), float(self._host(i, t))
        reading = self.read_clock() if read_clock else None
        self.clock.advance(max(g * self.launches_per_sample, h) + self.overhead_s)
        self.calls += 1
        return g, h, reading

    def info(self) -> dict:
        return {"timer": "synthetic"}

    def close(self) -> None:
        self.closed = True
