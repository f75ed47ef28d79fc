"""Where the CUDA toolchain lives: headers, nvcc, cuobjdump, NVRTC's version.

Nothing here needs a GPU or a driver. The search order prefers what the user points at
(environment variables), then the wheels that pip installed next to torch and cuda-core,
then a system toolkit. Each finder returns None when it finds nothing; callers turn that
into an error that says what to install.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path


def _site_dirs() -> list[Path]:
    return [Path(p) for p in sys.path if p and Path(p).is_dir()]


def _nvidia_wheel_dirs() -> list[Path]:
    """The `nvidia/cu13` (and older `nvidia/cuda_*`) folders that pip wheels install."""
    found: list[Path] = []
    for site in _site_dirs():
        root = site / "nvidia"
        if not root.is_dir():
            continue
        for sub in ("cu13", "cu12", "cuda_runtime", "cuda_nvcc", "cuda_cuobjdump", "cuda_nvrtc"):
            if (root / sub).is_dir():
                found.append(root / sub)
    return found


def _toolkit_roots() -> list[Path]:
    roots = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            roots.append(Path(os.environ[var]))
    roots.append(Path("/usr/local/cuda"))
    roots.extend(sorted(Path("/usr/local").glob("cuda-*"), reverse=True))
    return [r for r in roots if r.is_dir()]


@functools.lru_cache(maxsize=None)
def cuda_include_dirs() -> tuple[str, ...]:
    """Folders holding cuda_bf16.h and friends, which NVRTC does not find by itself."""
    candidates: list[Path] = []
    if os.environ.get("KERNELAB_CUDA_INCLUDE"):
        candidates.append(Path(os.environ["KERNELAB_CUDA_INCLUDE"]))
    candidates += [d / "include" for d in _nvidia_wheel_dirs()]
    candidates += [r / "include" for r in _toolkit_roots()]
    candidates += [r / "targets" / "x86_64-linux" / "include" for r in _toolkit_roots()]
    for site in _site_dirs():
        candidates.append(site / "triton" / "backends" / "nvidia" / "include")
    for c in candidates:
        if (c / "cuda_bf16.h").is_file():
            return (str(c),)
    return ()


def _find_tool(name: str) -> str | None:
    env = os.environ.get(f"KERNELAB_{name.upper()}")
    if env and Path(env).is_file():
        return env
    for d in _nvidia_wheel_dirs():
        p = d / "bin" / name
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    for r in _toolkit_roots():
        p = r / "bin" / name
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    on_path = shutil.which(name)
    if on_path:
        return on_path
    for site in _site_dirs():  # triton ships cuobjdump and nvdisasm
        p = site / "triton" / "backends" / "nvidia" / "bin" / name
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


@functools.lru_cache(maxsize=None)
def nvcc_path() -> str | None:
    return _find_tool("nvcc")


@functools.lru_cache(maxsize=None)
def cuobjdump_path() -> str | None:
    return _find_tool("cuobjdump")


@functools.lru_cache(maxsize=None)
def nvdisasm_path() -> str | None:
    return _find_tool("nvdisasm")


@functools.lru_cache(maxsize=None)
def nvrtc_version() -> tuple[int, int] | None:
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        return None
    err, major, minor = nvrtc.nvrtcVersion()
    if int(err) != 0:
        return None
    return (int(major), int(minor))


@functools.lru_cache(maxsize=None)
def nvrtc_supported_archs() -> tuple[int, ...]:
    """Compute capabilities NVRTC can target, as integers (90 for sm_90)."""
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        return ()
    err, n = nvrtc.nvrtcGetNumSupportedArchs()
    if int(err) != 0:
        return ()
    err, archs = nvrtc.nvrtcGetSupportedArchs()
    return tuple(int(a) for a in archs) if int(err) == 0 else ()


@functools.lru_cache(maxsize=None)
def nvcc_version() -> str | None:
    path = nvcc_path()
    if not path:
        return None
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in out.splitlines():
        if "release" in line:
            return line.split("release", 1)[1].split(",")[0].strip()
    return None


@functools.lru_cache(maxsize=None)
def compiler_version(compiler: str) -> str:
    """A string that changes whenever the compiler's output may change (cache key)."""
    if compiler == "nvrtc":
        v = nvrtc_version()
        return f"nvrtc-{v[0]}.{v[1]}" if v else "nvrtc-missing"
    path = nvcc_path()
    if not path:
        return "nvcc-missing"
    out = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
    return "nvcc-" + out.strip().splitlines()[-1] if out.strip() else "nvcc-unknown"
