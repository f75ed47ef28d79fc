"""The only package that talks to CUDA: compile, cache, load, launch, device properties.

Nothing outside kernelab.gpu imports cuda.core or cuda.bindings.
"""

from .arch import CI_ARCHS, DEFAULT_ARCH, Arch, default_arch
from .compiler import CompiledModule, compile_file, compile_source
from .device import DeviceInfo, device_info, driver_cuda_version, has_gpu
from .errors import (
    ArgumentError,
    CompileError,
    KernelabError,
    KernelFault,
    LaunchError,
    NoGPUError,
)
from .module import Kernel, Module, last_launched_kernel, load, synchronize
from .params import DevicePointer, Param, parse_signatures
from .ptxas import KernelResources, parse_ptxas_log

__all__ = [
    "Arch", "CI_ARCHS", "DEFAULT_ARCH", "default_arch",
    "CompiledModule", "compile_file", "compile_source",
    "DeviceInfo", "device_info", "driver_cuda_version", "has_gpu",
    "ArgumentError", "CompileError", "KernelabError", "KernelFault", "LaunchError", "NoGPUError",
    "Kernel", "Module", "last_launched_kernel", "load", "synchronize",
    "DevicePointer", "Param", "parse_signatures",
    "KernelResources", "parse_ptxas_log",
]
