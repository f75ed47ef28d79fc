"""The roofline: the least time a piece of work can take, and how close a measurement came.

For work that moves B bytes through device memory and does F FLOPs on a unit with peak P,
on a GPU with bandwidth W:

    floor = max(B / W, F / P)                 seconds; nothing can be faster
    arithmetic intensity I = F / B            FLOP per byte
    ridge point = P / W                       the intensity where both terms are equal:
                                              below it the work is memory-bound
    % of ceiling = floor / measured time      100% = on the roof

Two sets of ceilings: nominal (datasheet, devices.py) and measured (the best that a copy
and cuBLAS reach on this GPU, ceilings.py). % of measured says how much is left to gain
in practice; % of nominal how far the hardware is from its brochure.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .devices import DeviceSpec, unit_name
from .errors import AnalysisError


@dataclass(frozen=True)
class Ceilings:
    """The roofs a result is placed under: one bandwidth and a peak per FLOP unit."""

    name: str  # the device
    bandwidth: float  # bytes/s
    flops: dict[str, float]  # unit -> FLOP/s
    kind: str = "nominal"  # "nominal" or "measured"
    sources: dict[str, str] = field(default_factory=dict)  # "bandwidth"/unit -> where the number comes from

    def peak(self, unit: str) -> float:
        u = unit_name(unit)
        if u not in self.flops:
            raise AnalysisError(f"no {self.kind} {u} ceiling for {self.name} (have: {', '.join(self.flops) or 'none'}). "
                                f"{'Run `kernelab ceilings` to measure it, or use nominal ceilings.' if self.kind == 'measured' else 'This GPU has no such unit.'}")
        return self.flops[u]

    def has(self, unit: str) -> bool:
        return unit_name(unit) in self.flops

    def ridge_point(self, unit: str) -> float:
        return self.peak(unit) / self.bandwidth

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Ceilings":
        return cls(**d)


def nominal_ceilings(spec: DeviceSpec) -> Ceilings:
    return Ceilings(spec.name, spec.memory_bandwidth, dict(spec.peak_flops), "nominal",
                    {"bandwidth": spec.source, **{u: spec.source for u in spec.peak_flops}})


def as_ceilings(x) -> Ceilings:
    """Ceilings from a Ceilings, a DeviceSpec (nominal), MeasuredCeilings or a device name."""
    if isinstance(x, Ceilings):
        return x
    if isinstance(x, DeviceSpec):
        return nominal_ceilings(x)
    if hasattr(x, "entries") and hasattr(x, "device"):  # ceilings.MeasuredCeilings
        from .ceilings import roofline_ceilings

        return roofline_ceilings(x)
    if isinstance(x, str) or x is None:
        from .devices import spec_for

        return nominal_ceilings(spec_for(x))
    raise AnalysisError(f"cannot use a {type(x).__name__} as roofline ceilings; give a DeviceSpec, Ceilings or "
                        "MeasuredCeilings")


def _work(work) -> tuple[int, int, str]:
    """(bytes, flops, unit) from kernelab.ops.Work or a dict with the same keys."""
    if isinstance(work, dict):
        b, f, u = work.get("bytes"), work.get("flops", 0), work.get("flop_unit", "fp32")
    else:
        b, f, u = getattr(work, "bytes", None), getattr(work, "flops", 0), getattr(work, "flop_unit", "fp32")
    if b is None or b < 0 or (f or 0) < 0:
        raise AnalysisError(f"work needs bytes >= 0 and flops >= 0, got {work!r}")
    if f:
        return int(b), int(f), unit_name(u)
    try:  # no FLOPs: the unit does not matter, keep it readable
        return int(b), 0, unit_name(u or "fp32")
    except AnalysisError:
        return int(b), 0, str(u)


def arithmetic_intensity(work) -> float:
    """FLOP per byte of device-memory traffic (inf when the work moves no bytes)."""
    b, f, _ = _work(work)
    if b == 0:
        return float("inf") if f else 0.0
    return f / b


def ridge_point(ceilings, unit: str) -> float:
    return as_ceilings(ceilings).ridge_point(unit)


def floor_terms(work, ceilings) -> tuple[float, float]:
    """(memory seconds, compute seconds) of `work` under `ceilings`."""
    c = as_ceilings(ceilings)
    b, f, u = _work(work)
    t_mem = b / c.bandwidth
    t_compute = f / c.peak(u) if f else 0.0
    return t_mem, t_compute


def floor_seconds(work, spec_or_ceilings) -> float:
    """The least time `work` can take: max(bytes / bandwidth, flops / peak of its unit)."""
    return max(floor_terms(work, spec_or_ceilings))


def percent_of_ceiling(work, seconds: float, spec_or_ceilings) -> float:
    """How close `seconds` came to the roof, in percent (100 = at the floor)."""
    if not seconds or seconds <= 0:
        raise AnalysisError(f"a measured time must be positive, got {seconds!r}")
    return 100.0 * floor_seconds(work, spec_or_ceilings) / seconds


@dataclass(frozen=True)
class Bound:
    """One roofline's verdict on a measurement."""

    kind: str  # "nominal" or "measured"
    floor_s: float
    memory_s: float
    compute_s: float
    bound: str  # "memory" or "compute": which term sets the floor
    ridge_point: float | None  # FLOP/byte for the work's unit (None without FLOPs)
    percent: float  # floor / measured time * 100


@dataclass(frozen=True)
class Placement:
    """A measured result on the roofline."""

    seconds: float
    bytes: int
    flops: int
    flop_unit: str
    intensity: float
    achieved_bandwidth: float  # bytes/s
    achieved_flops: float  # FLOP/s
    nominal: Bound
    measured: Bound | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def _bound(kind: str, work, seconds: float, c: Ceilings) -> Bound:
    t_mem, t_compute = floor_terms(work, c)
    _, f, u = _work(work)
    floor = max(t_mem, t_compute)
    return Bound(kind, floor, t_mem, t_compute, "compute" if t_compute > t_mem else "memory",
                 c.ridge_point(u) if f else None, 100.0 * floor / seconds)


def place(work, seconds: float, spec=None, measured=None) -> Placement:
    """Place a measured time on the nominal roofline of `spec` (default: spec_for()) and, when
    given, on the measured ceilings (MeasuredCeilings or Ceilings)."""
    if not seconds or seconds <= 0:
        raise AnalysisError(f"a measured time must be positive, got {seconds!r}")
    b, f, u = _work(work)
    nominal = as_ceilings(spec)
    meas = None
    if measured is not None:
        mc = as_ceilings(measured)
        if f and not mc.has(u):  # e.g. fp8 not measured on this GPU: no measured compute roof
            meas = None
        else:
            meas = _bound("measured", work, seconds, mc)
    return Placement(seconds, b, f, u, arithmetic_intensity(work), b / seconds, f / seconds,
                     _bound("nominal", work, seconds, nominal), meas)


def plot(rows: list[dict], out, spec=None, measured=None, **kw):
    """The roofline plot of result rows (PNG and SVG); see kernelab.analysis.plot.plot_roofline."""
    from .plot import plot_roofline

    return plot_roofline(rows, out, spec, measured, **kw)
