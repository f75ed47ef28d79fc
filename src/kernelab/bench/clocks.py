"""SM clock and throttle reasons around a run (NVML, through kernelab.gpu.nvml).

Readings are taken before the first call, between samples while the GPU is busy with the
sample just enqueued (at most one per `interval_s`), and after the last sample. A sample is
flagged throttled when the reading before or after it reports a throttling reason (power
cap, thermal or hardware slowdown). Without NVML there are no readings: the run goes on,
mean_sm_clock_mhz is None and nothing is flagged.
"""

from __future__ import annotations

import bisect
from dataclasses import asdict, dataclass

from ..gpu import nvml

BEFORE, DURING, AFTER = "before", "during", "after"


@dataclass(frozen=True)
class ClockReading:
    phase: str  # BEFORE (before the first call), DURING (while sample `index` ran), AFTER
    index: int  # sample index: -1 before, i during sample i, n after n samples
    t_s: float  # seconds since the run started
    sm_mhz: float | None = None
    mem_mhz: float | None = None
    throttle_mask: int = 0
    temperature_c: float | None = None
    power_w: float | None = None

    @property
    def throttled(self) -> bool:
        return bool(self.throttle_mask & nvml.THROTTLING_MASK)

    @property
    def reasons(self) -> list[str]:
        return nvml.throttle_names(self.throttle_mask & nvml.THROTTLING_MASK)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ClockReading":
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in d.items() if k in names})


class NvmlProbe:
    """Reads the SM clock and throttle reasons of GPU `index` (torch's device numbering).

    NVML numbers devices physically and ignores CUDA_VISIBLE_DEVICES; kernelab.gpu.nvml is
    queried with torch's index, which is the same GPU when all GPUs are visible.
    """

    def __init__(self, index: int):
        self.index = index
        self.available = nvml.available()

    def read(self) -> dict | None:
        """Fields of a ClockReading, or None without NVML."""
        if not self.available:
            return None
        s = nvml.sample(self.index)
        if s.sm_mhz is None:
            return None
        return dict(sm_mhz=s.sm_mhz, mem_mhz=s.mem_mhz, throttle_mask=int(s.throttle_mask),
                    temperature_c=s.temperature_c, power_w=s.power_w)


def throttled_samples(n: int, readings: list[ClockReading]) -> list[int]:
    """Indices of the samples whose neighbouring readings (the last one at or before the sample,
    the first one at or after it) report throttling."""
    if n == 0 or not readings:
        return []
    rs = sorted(readings, key=lambda r: (r.index, r.t_s))
    keys = [r.index for r in rs]
    flagged = []
    for i in range(n):
        before = bisect.bisect_right(keys, i) - 1  # last reading with index <= i
        after = bisect.bisect_left(keys, i)  # first reading with index >= i
        if (before >= 0 and rs[before].throttled) or (after < len(rs) and rs[after].throttled):
            flagged.append(i)
    return flagged


def mean_sm_clock(readings: list[ClockReading]) -> float | None:
    """Mean SM clock over the readings taken during sampling and after it (not the idle 'before')."""
    vals = [r.sm_mhz for r in readings if r.phase != BEFORE and r.sm_mhz is not None]
    return sum(vals) / len(vals) if vals else None


def reasons_seen(readings: list[ClockReading]) -> list[str]:
    seen: list[str] = []
    for r in readings:
        for name in r.reasons:
            if name not in seen:
                seen.append(name)
    return seen
