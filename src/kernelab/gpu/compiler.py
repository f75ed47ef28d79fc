"""Compile CUDA C++ to a cubin, through NVRTC (default) or nvcc, with an on-disk cache.

NVRTC runs in-process, needs no driver and takes ~20-70 ms per small file; nvcc takes
~0.5 s but is what most builds use, so both are offered. Every compile uses -O3 and
-lineinfo and asks ptxas for its resource report (-v), which becomes `CompiledModule.resources`.

Cubins only: compiling to PTX through NVRTC asks the driver for its version, so it fails on
a machine without one, while a cubin does not.
"""

from __future__ import annotations

import hashlib
import io
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import cache, toolchain
from .arch import Arch, default_arch
from .errors import CompileError, KernelabError
from .preprocess import local_include
from .ptxas import KernelResources, parse_ptxas_log

COMPILERS = ("nvrtc", "nvcc")
STD = "c++17"


@dataclass
class CompiledModule:
    """A cubin and everything known about how it was made."""

    name: str  # the source's file name, or "<string>"
    arch: str
    compiler: str
    compiler_version: str
    options: tuple[str, ...]  # the flags that reached the compiler, for reports
    cubin: bytes
    log: str
    resources: dict[str, KernelResources]
    source_sha256: str
    cache_hit: bool = False
    compile_seconds: float = 0.0  # wall time of this call: the compiler's, or the cache lookup's on a hit
    source: str = field(default="", repr=False)
    # Where the compiler looked for `#include "..."`, in order (a file's own folder first): the
    # signature reader (params.parse_signatures) follows the same includes.
    include_dirs: tuple[str, ...] = ()

    @property
    def cubin_sha256(self) -> str:
        return hashlib.sha256(self.cubin).hexdigest()

    def kernel_names(self) -> list[str]:
        return sorted(self.resources)


_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def _local_includes(source: str, search: list[Path], seen: set[Path] | None = None) -> list[tuple[str, str]]:
    """(path, text) of every quoted include reachable from `source`, for the cache key (all of them,
    #if or not: a key that changes too often costs a compile, one that changes too rarely a wrong cubin)."""
    seen = set() if seen is None else seen
    out = []
    for inc in _LOCAL_INCLUDE.findall(source):
        p = local_include(inc, search)
        if p is not None and p not in seen:
            seen.add(p)
            text = p.read_text()
            out.append((str(p), text))
            out.extend(_local_includes(text, [p.parent, *search], seen))
    return out


def compile_source(
    source: str,
    *,
    name: str = "<string>",
    arch: str | Arch | None = None,
    compiler: str = "nvrtc",
    defines: dict[str, str | int | None] | None = None,
    include_dirs: list[str | Path] | tuple = (),
    extra_options: list[str] | tuple = (),
    max_registers: int | None = None,
    use_cache: bool = True,
) -> CompiledModule:
    """Compile `source` to a cubin for `arch` (default: the current GPU, else sm_90)."""
    if compiler not in COMPILERS:
        raise KernelabError(f"unknown compiler {compiler!r}; choose one of {', '.join(COMPILERS)}")
    target = Arch.parse(arch) if arch is not None else default_arch()
    defines = dict(defines or {})
    incs = [Path(d) for d in include_dirs]
    if name != "<string>":
        incs.insert(0, Path(name).resolve().parent)
    define_flags = tuple(f"-D{k}" if v is None else f"-D{k}={v}" for k, v in sorted(defines.items()))
    flags = ("-O3", "-lineinfo", f"-std={STD}", *define_flags, *tuple(extra_options))
    if max_registers:
        flags += (f"-maxrregcount={max_registers}",)
    version = toolchain.compiler_version(compiler)

    key_parts = [
        "kernelab-cubin-v1", compiler, version, target.sm, repr(flags), source,
        *(f"{p}\n{t}" for p, t in _local_includes(source, incs)),
    ]
    t_start = time.perf_counter()
    key = hashlib.sha256("\x1f".join(key_parts).encode()).hexdigest()
    source_sha = hashlib.sha256(source.encode()).hexdigest()
    if use_cache:
        hit = cache.load(key)
        if hit is not None:
            cubin, meta = hit
            return CompiledModule(
                name=name, arch=target.sm, compiler=compiler, compiler_version=version, options=flags,
                cubin=cubin, log=meta["log"],
                resources={k: KernelResources.from_dict(v) for k, v in meta["resources"].items()},
                source_sha256=source_sha, cache_hit=True, compile_seconds=time.perf_counter() - t_start, source=source,
                include_dirs=tuple(str(d) for d in incs),
            )

    t0 = time.perf_counter()
    if compiler == "nvrtc":
        cubin, log = _nvrtc(source, name, target, defines, incs, extra_options, max_registers)
    else:
        cubin, log = _nvcc(source, name, target, flags, incs)
    seconds = time.perf_counter() - t0
    resources = parse_ptxas_log(log)
    if use_cache:
        cache.store(key, cubin, {"log": log, "resources": {k: v.to_dict() for k, v in resources.items()},
                                 "name": name, "arch": target.sm, "compiler": version})
    return CompiledModule(
        name=name, arch=target.sm, compiler=compiler, compiler_version=version, options=flags, cubin=cubin,
        log=log, resources=resources, source_sha256=source_sha, cache_hit=False, compile_seconds=seconds,
        source=source, include_dirs=tuple(str(d) for d in incs),
    )


def compile_file(path: str | Path, **kwargs) -> CompiledModule:
    """Compile a .cu file; quoted includes resolve next to it. See compile_source for options."""
    p = Path(path)
    if not p.is_file():
        raise KernelabError(f"no such CUDA source file: {p}. Give the path of a .cu file.")
    return compile_source(p.read_text(), name=str(p), **kwargs)


def _nvrtc(source, name, target: Arch, defines, incs, extra_options, max_registers) -> tuple[bytes, str]:
    try:
        from cuda.core import Program, ProgramOptions
    except ImportError as e:  # pragma: no cover - dependency is declared
        raise KernelabError("cuda-core is not installed: pip install 'cuda-core[cu13]'") from e
    sys_incs = list(toolchain.cuda_include_dirs())
    if not sys_incs:
        raise KernelabError(
            "NVRTC needs the CUDA headers (cuda_bf16.h, ...) and kernelab found none. Fix: pip install "
            "nvidia-cuda-runtime (or torch, which brings them), or set KERNELAB_CUDA_INCLUDE to a toolkit's include folder."
        )
    macro = [k if v is None else (k, str(v)) for k, v in sorted(defines.items())]
    opts = dict(
        name=name if name != "<string>" else "kernel.cu",
        arch=target.sm, lineinfo=True, std=STD, ptxas_options=["-v", "-O3"],
        include_path=[str(d) for d in incs] + sys_incs, define_macro=macro or None,
        max_register_count=max_registers, no_cache=True,  # NVRTC's own cache drops the ptxas report
    )
    if extra_options:
        raise KernelabError("extra_options are passed to nvcc only; for NVRTC use defines/include_dirs/max_registers")
    log = io.StringIO()
    try:
        program = Program(source, "c++", ProgramOptions(**opts))
        obj = program.compile("cubin", logs=log)
    except Exception as e:  # NVRTCError carries the compiler log in its message
        text = str(e)
        if "no_cache" in text or "--no-cache" in text:  # an NVRTC older than the option
            opts.pop("no_cache")
            return _nvrtc_retry(source, name, target, opts)
        raise CompileError(name, "nvrtc", target.sm, text.split("compilation log:", 1)[-1]) from None
    return bytes(obj.code), log.getvalue().replace("\x00", "")


def _nvrtc_retry(source, name, target, opts) -> tuple[bytes, str]:
    from cuda.core import Program, ProgramOptions

    log = io.StringIO()
    try:
        obj = Program(source, "c++", ProgramOptions(**opts)).compile("cubin", logs=log)
    except Exception as e:
        raise CompileError(name, "nvrtc", target.sm, str(e).split("compilation log:", 1)[-1]) from None
    return bytes(obj.code), log.getvalue().replace("\x00", "")


def _nvcc(source, name, target: Arch, flags, incs) -> tuple[bytes, str]:
    nvcc = toolchain.nvcc_path()
    if not nvcc:
        raise KernelabError("nvcc not found. Fix: pip install 'kernelab[tools]' (the nvidia-cuda-nvcc wheel), "
                            "install a CUDA toolkit, or use compiler='nvrtc'.")
    with tempfile.TemporaryDirectory(prefix="kernelab-nvcc-") as tmp:
        src = Path(tmp) / (Path(name).name if name != "<string>" else "kernel.cu")
        src.write_text(source)
        out = Path(tmp) / "out.cubin"
        cmd = [nvcc, "-cubin", target.nvcc_gencode(), *flags, "-Xptxas", "-v",
               *[f"-I{d}" for d in incs], "-o", str(out), str(src)]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
        log = (proc.stdout + proc.stderr).replace(str(src), name)
        if proc.returncode != 0 or not out.is_file():
            raise CompileError(name, "nvcc", target.sm, log)
        return out.read_bytes(), log
