"""NVML readings: clocks, throttle reasons, temperature, power, persistence, ECC.

Every function returns None (or an empty value) when NVML or the GPU is missing, because
these readings annotate results; they never decide whether a run may go on.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, field


@functools.lru_cache(maxsize=None)
def _nvml():
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml
    except Exception:
        return None


def available() -> bool:
    return _nvml() is not None


@functools.lru_cache(maxsize=None)
def _handle(index: int):
    """NVML handle of torch's device `index`. NVML numbers devices ignoring CUDA_VISIBLE_DEVICES,
    so the device is found by its UUID (torch reports it), falling back to the index."""
    nv = _nvml()
    if nv is None:
        return None
    try:
        import torch

        if torch.cuda.is_available():
            uuid = str(torch.cuda.get_device_properties(index).uuid)
            return nv.nvmlDeviceGetHandleByUUID(uuid if uuid.startswith("GPU-") else f"GPU-{uuid}")
    except Exception:
        pass
    try:
        return nv.nvmlDeviceGetHandleByIndex(index)
    except Exception:
        return None


def _call(fn_name: str, index: int, *args):
    nv, h = _nvml(), _handle(index)
    if nv is None or h is None:
        return None
    try:
        return getattr(nv, fn_name)(h, *args)
    except Exception:
        return None


def driver_version() -> str | None:
    nv = _nvml()
    if nv is None:
        return None
    try:
        v = nv.nvmlSystemGetDriverVersion()
        return v.decode() if isinstance(v, bytes) else str(v)
    except Exception:
        return None


def max_sm_clock_mhz(index: int = 0) -> float | None:
    nv = _nvml()
    v = _call("nvmlDeviceGetMaxClockInfo", index, nv.NVML_CLOCK_SM) if nv else None
    return float(v) if v else None


def max_mem_clock_mhz(index: int = 0) -> float | None:
    nv = _nvml()
    v = _call("nvmlDeviceGetMaxClockInfo", index, nv.NVML_CLOCK_MEM) if nv else None
    return float(v) if v else None


# Throttle ("clocks event") reasons that mean the SM clock was held down. Idle and
# application-clock settings are not throttling in the sense that invalidates a sample.
_THROTTLE_NAMES = {
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
THROTTLING_MASK = 0x4 | 0x8 | 0x20 | 0x40 | 0x80


def throttle_names(mask: int) -> list[str]:
    return [name for bit, name in _THROTTLE_NAMES.items() if mask & bit]


@dataclass
class ClockSample:
    sm_mhz: float | None = None
    mem_mhz: float | None = None
    throttle_mask: int = 0
    temperature_c: float | None = None
    power_w: float | None = None

    @property
    def throttled(self) -> bool:
        return bool(self.throttle_mask & THROTTLING_MASK)

    @property
    def reasons(self) -> list[str]:
        return throttle_names(self.throttle_mask)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["throttled"] = self.throttled
        d["reasons"] = self.reasons
        return d


def sample(index: int = 0) -> ClockSample:
    nv = _nvml()
    if nv is None:
        return ClockSample()
    sm = _call("nvmlDeviceGetClockInfo", index, nv.NVML_CLOCK_SM)
    mem = _call("nvmlDeviceGetClockInfo", index, nv.NVML_CLOCK_MEM)
    fn = "nvmlDeviceGetCurrentClocksEventReasons" if hasattr(nv, "nvmlDeviceGetCurrentClocksEventReasons") \
        else "nvmlDeviceGetCurrentClocksThrottleReasons"
    mask = _call(fn, index) or 0
    temp = _call("nvmlDeviceGetTemperature", index, 0)  # NVML_TEMPERATURE_GPU
    power = _call("nvmlDeviceGetPowerUsage", index)
    return ClockSample(
        sm_mhz=float(sm) if sm is not None else None,
        mem_mhz=float(mem) if mem is not None else None,
        throttle_mask=int(mask),
        temperature_c=float(temp) if temp is not None else None,
        power_w=power / 1000.0 if power is not None else None,
    )


@dataclass
class DeviceState:
    persistence_mode: bool | None = None
    ecc_enabled: bool | None = None
    compute_mode: int | None = None
    clocks: ClockSample = field(default_factory=ClockSample)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["clocks"] = self.clocks.to_dict()
        return d


def device_state(index: int = 0) -> DeviceState:
    pm = _call("nvmlDeviceGetPersistenceMode", index)
    ecc = _call("nvmlDeviceGetEccMode", index)
    cm = _call("nvmlDeviceGetComputeMode", index)
    return DeviceState(
        persistence_mode=bool(pm) if pm is not None else None,
        ecc_enabled=bool(ecc[0]) if ecc else None,
        compute_mode=int(cm) if cm is not None else None,
        clocks=sample(index),
    )
