"""The GPU this process runs on: what cuda.core and NVML say about it.

`has_gpu()` is safe everywhere (it asks torch, which handles a missing driver). The rest
needs a GPU and raises NoGPUError without one.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass

from .errors import NoGPUError


@dataclass(frozen=True)
class DeviceInfo:
    index: int
    name: str
    cc: tuple[int, int]
    sm_count: int
    l2_bytes: int
    smem_per_sm: int  # bytes of shared memory an SM has for blocks
    smem_per_block: int  # default per-block limit (48 KiB)
    smem_per_block_optin: int  # the most a block may ask for, after cudaFuncSetAttribute
    regs_per_sm: int
    regs_per_block: int
    max_threads_per_sm: int
    max_threads_per_block: int
    max_blocks_per_sm: int
    warp_size: int
    sm_clock_max_mhz: float
    mem_clock_mhz: float
    bus_width_bits: int
    total_memory_bytes: int
    driver_version: str
    uuid: str = ""

    @property
    def arch(self) -> str:
        return f"sm_{self.cc[0]}{self.cc[1]}"

    @property
    def nominal_bandwidth(self) -> float:
        """Bytes/s from the memory clock and bus width (DDR: two transfers per clock)."""
        return 2.0 * self.mem_clock_mhz * 1e6 * self.bus_width_bits / 8.0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["arch"] = self.arch
        d["nominal_bandwidth"] = self.nominal_bandwidth
        return d


def has_gpu() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:
        return False


def current_arch():
    """The current GPU's Arch, or None without a GPU."""
    if not has_gpu():
        return None
    import torch

    from .arch import Arch

    major, minor = torch.cuda.get_device_capability()
    return Arch(major, minor)


@functools.lru_cache(maxsize=None)
def _cc_device(index: int):
    """cuda.core's Device, made current on torch's primary context."""
    import torch
    from cuda.core import Device

    torch.cuda.init()  # the primary context torch uses is the one cuda.core binds to
    dev = Device(index)
    dev.set_current()
    return dev


def cc_device(index: int | None = None):
    if not has_gpu():
        raise NoGPUError("talking to the GPU")
    import torch

    idx = torch.cuda.current_device() if index is None else index
    dev = _cc_device(idx)
    dev.set_current()
    return dev


@functools.lru_cache(maxsize=None)
def device_info(index: int | None = None) -> DeviceInfo:
    """Properties of GPU `index` (default: torch's current device)."""
    import torch

    if not has_gpu():
        raise NoGPUError("reading device properties")
    idx = torch.cuda.current_device() if index is None else index
    dev = cc_device(idx)
    p = dev.properties
    from . import nvml

    return DeviceInfo(
        index=idx,
        name=dev.name,
        cc=(p.compute_capability_major, p.compute_capability_minor),
        sm_count=p.multiprocessor_count,
        l2_bytes=p.l2_cache_size,
        smem_per_sm=p.max_shared_memory_per_multiprocessor,
        smem_per_block=p.max_shared_memory_per_block,
        smem_per_block_optin=p.max_shared_memory_per_block_optin,
        regs_per_sm=p.max_registers_per_multiprocessor,
        regs_per_block=p.max_registers_per_block,
        max_threads_per_sm=p.max_threads_per_multiprocessor,
        max_threads_per_block=p.max_threads_per_block,
        max_blocks_per_sm=p.max_blocks_per_multiprocessor,
        warp_size=p.warp_size,
        sm_clock_max_mhz=nvml.max_sm_clock_mhz(idx) or p.clock_rate / 1000.0,
        mem_clock_mhz=nvml.max_mem_clock_mhz(idx) or p.memory_clock_rate / 1000.0,
        bus_width_bits=p.global_memory_bus_width,
        total_memory_bytes=int(torch.cuda.get_device_properties(idx).total_memory),
        driver_version=nvml.driver_version() or str(_driver_cuda_version()),
        uuid=str(getattr(dev, "uuid", "")),
    )


def _driver_cuda_version() -> str:
    from cuda.bindings import driver

    err, v = driver.cuDriverGetVersion()
    return f"{v // 1000}.{(v % 1000) // 10}" if int(err) == 0 else "unknown"


def driver_cuda_version() -> str | None:
    """The CUDA version the installed driver supports (e.g. '13.0'), or None without a driver."""
    try:
        return _driver_cuda_version()
    except Exception:
        return None
