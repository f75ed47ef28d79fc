"""PTX: compile CUDA C++ for a virtual architecture (compute_XY) and load it through the driver's JIT.

    cp = compile_ptx(source, arch="compute_80")     # NVRTC (or nvcc) -> PTX text
    mod = load_ptx(cp)                               # the driver JIT-compiles it for this GPU
    mod.kernel("scale")(x, y, n, grid=g, block=256)  # launched like any kernelab kernel

This is the path of the seeds' compatibility rule (seeds/000 §7.3): PTX for compute_80 runs
on any GPU of compute capability 8.0 or later, the driver compiling it to SASS at load time
(and caching the result in ~/.nv/ComputeCache, or $CUDA_CACHE_PATH). kernelab's normal path
(compiler.py) builds cubins, which need no driver; NVRTC asks the driver for its version when
it emits PTX, so compile_ptx works only where there is one (a GPU machine).

A PTX file carries the PTX ISA version of the compiler that wrote it (`.version 9.0`); a
driver older than that compiler refuses it (CUDA_ERROR_UNSUPPORTED_PTX_VERSION). nvcc from
the same toolkit as the driver avoids that: pass compiler="nvcc".
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

from . import toolchain
from .arch import Arch
from .compiler import STD, CompiledModule
from .device import cc_device, has_gpu
from .errors import CompileError, KernelabError, NoGPUError
from .module import Module
from .params import parse_signatures

_VERSION = re.compile(r"^\s*\.version\s+(\d+\.\d+)", re.MULTILINE)
_TARGET = re.compile(r"^\s*\.target\s+([A-Za-z0-9_]+)", re.MULTILINE)


@dataclass
class CompiledPTX:
    """PTX text and how it was made."""

    name: str
    arch: str  # the virtual architecture, "compute_80"
    compiler: str  # "nvrtc" or "nvcc"
    ptx: bytes
    log: str = ""
    compile_seconds: float = 0.0
    options: tuple[str, ...] = ()
    source: str = field(default="", repr=False)
    include_dirs: tuple[str, ...] = ()  # where the compiler looked for `#include "..."`, in order

    @property
    def ptx_version(self) -> str | None:
        """The PTX ISA version the file declares (`.version 8.5`)."""
        return ptx_header(self.ptx)[0]

    @property
    def target(self) -> str | None:
        """The `.target` line (`sm_80`): the oldest GPU it may be JIT-compiled for."""
        return ptx_header(self.ptx)[1]


def ptx_header(ptx: bytes | str) -> tuple[str | None, str | None]:
    """(`.version`, `.target`) of a PTX text, None where absent."""
    text = ptx.decode(errors="replace") if isinstance(ptx, bytes) else ptx
    v, t = _VERSION.search(text), _TARGET.search(text)
    return (v.group(1) if v else None, t.group(1) if t else None)


def virtual_arch(arch: str | Arch) -> Arch:
    """The Arch of a virtual target; a real one (sm_80) is refused with the fix."""
    text = str(arch).strip().lower()
    if text.startswith("sm_"):
        raise KernelabError(f"PTX is compiled for a virtual architecture: write compute_{text[3:]} instead of {text} "
                            "(sm_XY names SASS, which kernelab.gpu.compile_source makes)")
    target = Arch.parse(text)
    if target.suffix:
        raise KernelabError(f"{target.compute} PTX only JIT-compiles for exactly {target.major}.{target.minor}; "
                            "the lab's compatibility experiment wants portable PTX (no 'a'/'f' suffix)")
    return target


def compile_ptx(source: str, *, arch: str | Arch = "compute_80", name: str = "<string>",
                defines: dict | None = None, include_dirs=(), compiler: str = "nvrtc") -> CompiledPTX:
    """Compile `source` to PTX for the virtual architecture `arch`. Needs a driver (a GPU machine)."""
    target = virtual_arch(arch)
    if compiler not in ("nvrtc", "nvcc"):
        raise KernelabError(f"unknown compiler {compiler!r}; choose nvrtc or nvcc")
    defines = dict(defines or {})
    incs = [str(Path(d)) for d in include_dirs]
    t0 = time.perf_counter()
    if compiler == "nvrtc":
        ptx, log, opts = _nvrtc_ptx(source, name, target, defines, incs)
    else:
        ptx, log, opts = _nvcc_ptx(source, name, target, defines, incs)
    return CompiledPTX(name=name, arch=target.compute, compiler=compiler, ptx=ptx, log=log,
                       compile_seconds=time.perf_counter() - t0, options=opts, source=source,
                       include_dirs=tuple(incs))


def _nvrtc_ptx(source, name, target: Arch, defines, incs):
    from cuda.core import Program, ProgramOptions

    macro = [k if v is None else (k, str(v)) for k, v in sorted(defines.items())]
    opts = dict(name=name if name != "<string>" else "kernel.cu", arch=target.compute, lineinfo=True, std=STD,
                include_path=incs + list(toolchain.cuda_include_dirs()), define_macro=macro or None)
    log = io.StringIO()
    try:
        obj = Program(source, "c++", ProgramOptions(**opts)).compile("ptx", logs=log)
    except Exception as e:
        text = str(e)
        if "driver" in text.lower():  # no libcuda here (seen: '"cuda" is an NVIDIA driver library ...')
            raise KernelabError(f"NVRTC could not emit PTX: {text.strip()}. Emitting PTX asks the CUDA driver for its "
                                "version, so it needs a machine with an NVIDIA driver (cubins do not).") from None
        raise CompileError(name, "nvrtc", target.compute, text.split("compilation log:", 1)[-1]) from None
    code = obj.code
    ptx = code.encode() if isinstance(code, str) else bytes(code)
    return ptx.rstrip(b"\x00"), log.getvalue().replace("\x00", ""), (f"-arch={target.compute}", f"-std={STD}")


def _nvcc_ptx(source, name, target: Arch, defines, incs):
    nvcc = toolchain.nvcc_path()
    if not nvcc:
        raise KernelabError("nvcc not found. Fix: pip install 'kernelab[tools]', install a CUDA toolkit, "
                            "or use compiler='nvrtc'.")
    flags = [f"-arch={target.compute}", f"-std={STD}", "-O3", "-lineinfo",
             *(f"-D{k}" if v is None else f"-D{k}={v}" for k, v in sorted(defines.items())),
             *(f"-I{d}" for d in incs)]
    with tempfile.TemporaryDirectory(prefix="kernelab-ptx-") as tmp:
        src = Path(tmp) / (Path(name).name if name != "<string>" else "kernel.cu")
        src.write_text(source)
        out = Path(tmp) / "out.ptx"
        proc = subprocess.run([nvcc, "-ptx", *flags, "-o", str(out), str(src)], capture_output=True, text=True, cwd=tmp)
        log = (proc.stdout + proc.stderr).replace(str(src), name)
        if proc.returncode != 0 or not out.is_file():
            raise CompileError(name, "nvcc", target.compute, log)
        return out.read_bytes(), log, tuple(flags)


class PtxModule(Module):
    """A Module whose code is PTX: the driver JIT-compiles it when the module is loaded."""

    def __init__(self, compiled: CompiledPTX, defines: dict | None = None):
        if not has_gpu():
            raise NoGPUError(f"loading PTX {compiled.name}")
        import torch
        from cuda.core import ObjectCode

        self.ptx = compiled
        # Module's kernels read their ptxas resources from here: a PTX module has none until the driver JITs it.
        self.compiled = CompiledModule(
            name=compiled.name, arch=compiled.arch, compiler=compiled.compiler, compiler_version="",
            options=compiled.options, cubin=b"", log=compiled.log, resources={},
            source_sha256=hashlib.sha256(compiled.source.encode()).hexdigest(), source=compiled.source,
            include_dirs=compiled.include_dirs)
        self.device_index = torch.cuda.current_device()
        cc_device(self.device_index)
        try:
            self._obj = ObjectCode.from_ptx(compiled.ptx, name=Path(compiled.name).name)
        except Exception as e:
            raise KernelabError(f"the driver refused PTX {compiled.name} ({compiled.arch}, .version "
                                f"{compiled.ptx_version}): {e}") from None
        self.signatures = parse_signatures(compiled.source, defines, compiled.include_dirs)
        self._kernels = {}


def load_ptx(compiled: CompiledPTX, defines: dict | None = None) -> PtxModule:
    """Load PTX on the current GPU; its kernels JIT-compile on first use (`mod.kernel(name)`)."""
    return PtxModule(compiled, defines)
