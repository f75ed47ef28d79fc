"""Read the CUDA environment of this process: versions, loaded libraries, library paths.

Feeds `kernelab doctor` (kernelab/doctor.py holds the rules). Every probe is defensive: a
missing driver or library is an answer ("none"), not an exception.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import nvml, toolchain
from .device import driver_cuda_version, has_gpu


@dataclass
class Environment:
    python: str
    platform: str
    torch: str | None = None
    torch_cuda: str | None = None  # the CUDA version torch was built with
    torch_arch_list: list[str] = field(default_factory=list)
    torch_sees_gpu: bool = False
    gpu_count: int = 0
    gpus: list[dict] = field(default_factory=list)
    driver: str | None = None  # NVML driver version, e.g. 580.159.04
    driver_cuda: str | None = None  # CUDA version the driver supports, e.g. 13.0
    cuda_core: str | None = None
    cuda_bindings: str | None = None
    nvrtc: str | None = None
    nvrtc_archs: list[int] = field(default_factory=list)
    nvcc: str | None = None
    nvcc_path: str | None = None
    nvcc_archs: list[str] = field(default_factory=list)
    cuobjdump: str | None = None
    cuda_headers: str | None = None
    loaded_libraries: dict[str, list[str]] = field(default_factory=dict)
    ld_library_path: list[str] = field(default_factory=list)
    ld_path_libraries: dict[str, list[str]] = field(default_factory=dict)
    nvml_state: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def _version(mod: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(mod)
    except Exception:
        return None


_LIB = re.compile(r"(libcuda\.so[.\d]*|libcudart\.so[.\d]*|libnvrtc\.so[.\d]*|libnvrtc-builtins\.so[.\d]*|libnvidia-ml\.so[.\d]*|libcublas\.so[.\d]*)$")


def loaded_cuda_libraries() -> dict[str, list[str]]:
    """Which CUDA libraries this process mapped, from /proc/self/maps (Linux)."""
    out: dict[str, set[str]] = {}
    try:
        for line in Path("/proc/self/maps").read_text().splitlines():
            path = line.split()[-1] if "/" in line else ""
            m = _LIB.search(path)
            if m:
                base = m[1].split(".so")[0]
                out.setdefault(base, set()).add(path)
    except OSError:
        pass
    return {k: sorted(v) for k, v in out.items()}


def libraries_on_ld_path() -> dict[str, list[str]]:
    """libcuda / libcudart files found in each LD_LIBRARY_PATH entry (conflicts show up here)."""
    found: dict[str, list[str]] = {}
    for d in [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]:
        folder = Path(d)
        if not folder.is_dir():
            continue
        for pattern in ("libcuda.so*", "libcudart.so*"):
            for f in sorted(folder.glob(pattern)):
                found.setdefault(pattern.split(".")[0], []).append(str(f.resolve()) if f.is_symlink() else str(f))
    return found


def _nvcc_archs(path: str | None) -> list[str]:
    if not path:
        return []
    try:
        out = subprocess.run([path, "--list-gpu-arch"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [l.strip() for l in out.splitlines() if l.strip().startswith("compute_")]


def probe() -> Environment:
    env = Environment(python=sys.version.split()[0], platform=f"{platform.system()} {platform.machine()}")
    try:
        import torch

        env.torch = torch.__version__
        env.torch_cuda = torch.version.cuda
        env.torch_arch_list = list(torch.cuda.get_arch_list()) if torch.version.cuda else []
        env.torch_sees_gpu = has_gpu()
        if env.torch_sees_gpu:
            env.gpu_count = torch.cuda.device_count()
            for i in range(env.gpu_count):
                p = torch.cuda.get_device_properties(i)
                env.gpus.append({"index": i, "name": p.name, "cc": f"{p.major}.{p.minor}",
                                 "memory_gib": round(p.total_memory / 2**30, 1)})
            torch.cuda.init()
    except Exception as e:  # a broken torch install is itself a finding
        env.torch = env.torch or f"import failed: {e}"
    env.driver = nvml.driver_version()
    env.driver_cuda = driver_cuda_version()
    env.cuda_core = _version("cuda-core")
    env.cuda_bindings = _version("cuda-bindings")
    v = toolchain.nvrtc_version()
    env.nvrtc = f"{v[0]}.{v[1]}" if v else None
    env.nvrtc_archs = list(toolchain.nvrtc_supported_archs())
    env.nvcc_path = toolchain.nvcc_path()
    env.nvcc = toolchain.nvcc_version()
    env.nvcc_archs = _nvcc_archs(env.nvcc_path)
    env.cuobjdump = toolchain.cuobjdump_path()
    incs = toolchain.cuda_include_dirs()
    env.cuda_headers = incs[0] if incs else None
    env.loaded_libraries = loaded_cuda_libraries()
    env.ld_library_path = [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
    env.ld_path_libraries = libraries_on_ld_path()
    if nvml.available() and env.torch_sees_gpu:
        env.nvml_state = nvml.device_state(0).to_dict()
    return env
