"""What the compiled machine code does: SASS instruction mix, and what a fatbin contains.

`cuobjdump -sass` prints, per architecture and per kernel:

        code for sm_90a
        .target sm_90a
                Function : vector_add_f32
        .headerflags    @"EF_CUDA_SM90 ..."
            /*0000*/                   LDC R1, c[0x0][0x28] ;        /* 0x00000a00ff017b82 */
            /*0050*/               @P1 BRA 0x100 ;                   /* 0x0000000000281947 */

An instruction is `[@[!]pred] OPCODE.MODIFIERS operands ;`. The mix counts the classes
that explain performance: global loads and stores by width (LDG.E.128 moves 16 bytes per
thread, LDG.E 4), shared memory (LDS/STS, LDSM = ldmatrix, STSM = stmatrix, LDGSTS =
cp.async), tensor cores (HMMA = mma.sync fp16/bf16/tf32, IMMA = int8, HGMMA/QGMMA/IGMMA =
Hopper wgmma bf16-fp16-tf32 / fp8 / int8, UTC*MMA = Blackwell tcgen05), local memory
(LDL/STL: register spills or stack arrays), barriers (BAR) and warp shuffles (SHFL).
Counts are static (instructions in the code), not dynamic (instructions executed): an LDG
inside a loop counts once.

Fatbin listings come from cuobjdump's default dump ("Fatbin elf code: arch = sm_80",
"Fatbin ptx code: arch = sm_90"), which keeps the `a`/`f` suffixes that `-lelf` drops for
family targets (sm_100f is listed as "...sm_100.cubin"). A lone cubin has no fatbin
header; its arch comes from `cuobjdump -lelf` ("ELF file 1: x.sm_90a.cubin").

Tool versions: cuobjdump 12.8 (triton 3.6's) reads CUDA 13 cubins and prints the same
instructions as 13.1, but names an sm_90a cubin "sm_90" and an sm_100f fatbin entry
"sm_100" (fixtures: cuobjdump12.8_*). The instruction mix does not depend on it; a
verdict about an arch-specific or family target read through an old cuobjdump can.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .errors import AnalysisError

WIDTHS = (8, 16, 32, 64, 128, 256)  # bits per thread of one global access

_INSTR = re.compile(r"^\s*/\*(?P<addr>[0-9a-fA-F]{4,})\*/\s+(?P<body>[^;]*?)\s*;")
_PRED = re.compile(r"^@!?U?P(?:T|\d+)\s+")
_FUNCTION = re.compile(r"^\s*Function\s*:\s*(?P<name>\S+)")
_CODE_FOR = re.compile(r"^\s*code for (?P<arch>sm_\w+)")
_TARGET = re.compile(r"^\s*\.target\s+(?P<arch>sm_\w+)")


def access_bits(parts: list[str]) -> int:
    """Access width in bits from the modifiers of LDG/STG: .U8/.S8, .U16/.S16, .64, .128, .256, else 32."""
    for p in parts:
        if p in ("U8", "S8"):
            return 8
        if p in ("U16", "S16"):
            return 16
        if p.isdigit() and int(p) in (64, 128, 256):
            return int(p)
    return 32


@dataclass
class InstructionMix:
    """Static instruction counts of one kernel (see the module docstring)."""

    total: int = 0  # instructions, without the NOPs that pad the end of a function
    ldg8: int = 0
    ldg16: int = 0
    ldg32: int = 0
    ldg64: int = 0
    ldg128: int = 0
    ldg256: int = 0
    stg8: int = 0
    stg16: int = 0
    stg32: int = 0
    stg64: int = 0
    stg128: int = 0
    stg256: int = 0
    atomics: int = 0  # global ATOMG / RED / REDG / ATOM
    lds: int = 0
    sts: int = 0
    ldsm: int = 0  # ldmatrix
    stsm: int = 0  # stmatrix
    ldgsts: int = 0  # cp.async global -> shared
    tma: int = 0  # UTMALDG / UTMASTG / UBLKCP (Hopper+ bulk copies)
    hmma: int = 0
    imma: int = 0
    dmma: int = 0
    hgmma: int = 0
    qgmma: int = 0
    igmma: int = 0
    tcgen05_mma: int = 0  # UTCHMMA / UTCQMMA / UTCIMMA / UTCOMMA ... (Blackwell)
    ldl: int = 0
    stl: int = 0
    bar: int = 0
    shfl: int = 0
    opcodes: dict[str, int] = field(default_factory=dict)  # every full mnemonic (LDG.E.128.CONSTANT) -> count

    @property
    def ldg(self) -> int:
        return sum(getattr(self, f"ldg{w}") for w in WIDTHS)

    @property
    def stg(self) -> int:
        return sum(getattr(self, f"stg{w}") for w in WIDTHS)

    @property
    def ldgsts128(self) -> int:
        """16-byte cp.async copies (LDGSTS.E.BYPASS.128 ...): 16-byte global loads that land in shared memory."""
        return sum(c for op, c in self.opcodes.items()
                   if op.split(".")[0] == "LDGSTS" and access_bits(op.split(".")[1:]) == 128)

    @property
    def local_memory(self) -> int:
        return self.ldl + self.stl

    @property
    def tensor_core(self) -> int:
        return self.hmma + self.imma + self.dmma + self.hgmma + self.qgmma + self.igmma + self.tcgen05_mma

    @property
    def widest_load_bits(self) -> int:
        return max((w for w in WIDTHS if getattr(self, f"ldg{w}")), default=0)

    @property
    def widest_store_bits(self) -> int:
        return max((w for w in WIDTHS if getattr(self, f"stg{w}")), default=0)

    def add(self, mnemonic: str) -> None:
        self.opcodes[mnemonic] = self.opcodes.get(mnemonic, 0) + 1
        parts = mnemonic.split(".")
        op, mods = parts[0], parts[1:]
        if op == "NOP":
            return
        self.total += 1
        if op == "LDG":
            name = f"ldg{access_bits(mods)}"
            setattr(self, name, getattr(self, name) + 1)
        elif op == "STG":
            name = f"stg{access_bits(mods)}"
            setattr(self, name, getattr(self, name) + 1)
        elif op in ("ATOMG", "RED", "REDG", "ATOM"):
            self.atomics += 1
        elif op in ("UTMALDG", "UTMASTG", "UTMAREDG", "UBLKCP", "UBLKRED"):
            self.tma += 1
        elif op.startswith("UTC") and op.endswith("MMA"):
            self.tcgen05_mma += 1
        else:
            attr = _SIMPLE.get(op)
            if attr:
                setattr(self, attr, getattr(self, attr) + 1)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(ldg=self.ldg, stg=self.stg, local_memory=self.local_memory, tensor_core=self.tensor_core,
                 widest_load_bits=self.widest_load_bits, widest_store_bits=self.widest_store_bits)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "InstructionMix":
        names = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in names})


_SIMPLE = {
    "LDS": "lds", "STS": "sts", "LDSM": "ldsm", "STSM": "stsm", "LDGSTS": "ldgsts",
    "HMMA": "hmma", "IMMA": "imma", "DMMA": "dmma", "HGMMA": "hgmma", "QGMMA": "qgmma", "IGMMA": "igmma",
    "LDL": "ldl", "STL": "stl", "BAR": "bar", "SHFL": "shfl",
}


@dataclass
class SassFunction:
    arch: str  # "sm_90a"
    name: str  # as in the cubin (extern "C" names are plain; C++ ones mangled)
    mix: InstructionMix
    lines: int = 0  # instruction lines seen, NOPs included


def parse_sass(text: str) -> list[SassFunction]:
    """Every function in a `cuobjdump -sass` listing, in order, with its instruction mix."""
    out: list[SassFunction] = []
    arch = ""
    current: SassFunction | None = None
    for line in text.splitlines():
        if m := _INSTR.match(line):
            if current is None:
                raise AnalysisError("cuobjdump output has an instruction before any 'Function :' header; "
                                    "is this `cuobjdump -sass` output?")
            body = _PRED.sub("", m["body"].strip())
            mnemonic = body.split(None, 1)[0] if body else ""
            if mnemonic:
                current.mix.add(mnemonic)
                current.lines += 1
            continue
        if m := _FUNCTION.match(line):
            current = SassFunction(arch=arch, name=m["name"], mix=InstructionMix())
            out.append(current)
        elif m := _CODE_FOR.match(line):
            arch = m["arch"]
            current = None
        elif m := _TARGET.match(line):
            arch = m["arch"]  # `.target sm_90a` keeps the suffix that `code for` also shows; take the later one
    return out


# ---- running cuobjdump ------------------------------------------------------------------

def _cuobjdump() -> str:
    from ..gpu.toolchain import cuobjdump_path

    path = cuobjdump_path()
    if not path:
        raise AnalysisError("cuobjdump not found. Fix: pip install nvidia-cuda-cuobjdump (or 'kernelab[tools]'), "
                            "install triton (it ships one), or set KERNELAB_CUOBJDUMP to its path.")
    return path


def _env() -> dict:
    """cuobjdump -sass runs nvdisasm, found next to cuobjdump or on PATH: put the one kernelab found first."""
    from ..gpu.toolchain import nvdisasm_path

    env = dict(os.environ)
    nvdisasm = nvdisasm_path()
    if nvdisasm:
        env["PATH"] = str(Path(nvdisasm).parent) + os.pathsep + env.get("PATH", "")
    return env


def run_cuobjdump(target: str | Path | bytes, *args: str, timeout: float = 120.0) -> str:
    """stdout of `cuobjdump *args FILE`; bytes are written to a temporary file first."""
    tool = _cuobjdump()
    tmp = None
    try:
        if isinstance(target, (bytes, bytearray, memoryview)):
            fd, tmp = tempfile.mkstemp(prefix="kernelab-", suffix=".cubin")
            with os.fdopen(fd, "wb") as f:
                f.write(bytes(target))
            path = tmp
        else:
            path = str(target)
            if not Path(path).is_file():
                raise AnalysisError(f"no such file: {path}. Give a cubin, fatbin, object file, library or executable.")
        try:
            proc = subprocess.run([tool, *args, path], capture_output=True, text=True, timeout=timeout, env=_env())
        except subprocess.TimeoutExpired:
            raise AnalysisError(f"cuobjdump {' '.join(args)} did not finish in {timeout:.0f} s on {path}") from None
        if proc.returncode != 0:
            msg = (proc.stderr or proc.stdout).strip()
            if "No PTX file found" in msg or "No ELF file found" in msg:
                return proc.stdout  # an empty listing, not an error
            if "nvdisasm" in msg:
                raise AnalysisError(f"cuobjdump -sass needs nvdisasm and found none ({msg}). Fix: pip install "
                                    "nvidia-cuda-nvdisasm, or set KERNELAB_NVDISASM to its path.")
            raise AnalysisError(f"cuobjdump {' '.join(args)} failed on {path}: {msg}. Is it a CUDA binary "
                                "(cubin, fatbin, .o, .so or executable with device code)?")
        return proc.stdout
    finally:
        if tmp:
            os.unlink(tmp)


def disassemble(target: str | Path | bytes) -> str:
    """The `cuobjdump -sass` listing of a cubin (bytes or path), fatbin or executable."""
    return run_cuobjdump(target, "-sass")


def sass_functions(target: str | Path | bytes) -> list[SassFunction]:
    return parse_sass(disassemble(target))


def sass_mix(cubin: bytes | str | Path, arch: str | None = None) -> dict[str, InstructionMix]:
    """{kernel name: InstructionMix} of a cubin (or of one arch of a fatbin: pass `arch`)."""
    funcs = sass_functions(cubin)
    arches = sorted({f.arch for f in funcs})
    if arch is not None:
        funcs = [f for f in funcs if f.arch == arch]
        if not funcs:
            raise AnalysisError(f"no SASS for {arch} in this binary (it has: {', '.join(arches) or 'none'})")
    elif len(arches) > 1:
        raise AnalysisError(f"this binary holds SASS for several arches ({', '.join(arches)}); pass arch=...")
    return {f.name: f.mix for f in funcs}


# ---- fatbin listings --------------------------------------------------------------------

@dataclass(frozen=True)
class FatbinEntry:
    kind: str  # "sass" (an ELF cubin) or "ptx"
    arch: str  # "sm_80", "sm_90a", "sm_100f" for SASS; "compute_90", "compute_90a" for PTX
    code_version: str = ""
    compressed: bool = False
    name: str = ""  # cuobjdump's file name for it (-lelf / -lptx), when known

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class FatbinListing:
    """Which SASS and which PTX a CUDA binary carries."""

    entries: list[FatbinEntry]
    source: str = ""  # the file, when listed from one

    @property
    def sass(self) -> tuple[str, ...]:
        return tuple(sorted({e.arch for e in self.entries if e.kind == "sass"}, key=_arch_key))

    @property
    def ptx(self) -> tuple[str, ...]:
        return tuple(sorted({e.arch for e in self.entries if e.kind == "ptx"}, key=_arch_key))

    @property
    def targets(self) -> tuple[str, ...]:
        return self.sass + self.ptx

    def will_it_run(self, target):
        from .compat import will_it_run

        return will_it_run(self, target)

    def to_dict(self) -> dict:
        return {"source": self.source, "sass": list(self.sass), "ptx": list(self.ptx),
                "entries": [e.to_dict() for e in self.entries]}


def _arch_key(a: str) -> tuple:
    m = re.match(r"(?:sm|compute)_(\d+)([af]?)$", a)
    return (int(m[1]), m[2]) if m else (10**6, a)


def _ptx_name(arch: str) -> str:
    return "compute_" + arch.split("_", 1)[1] if arch.startswith("sm_") else arch


_BLOCK = re.compile(r"^Fatbin (?P<kind>elf|ptx) code:\s*$")
_KV = re.compile(r"^(?P<k>[a-z_ ]+?)\s*=\s*(?P<v>.*)$")


def parse_fatbin_dump(text: str) -> list[FatbinEntry]:
    """Entries of cuobjdump's default dump (no options): one block per embedded cubin or PTX."""
    entries: list[FatbinEntry] = []
    block: dict | None = None

    def close():
        if block and block.get("arch"):
            kind = "sass" if block["kind"] == "elf" else "ptx"
            arch = block["arch"] if kind == "sass" else _ptx_name(block["arch"])
            entries.append(FatbinEntry(kind, arch, block.get("code version", ""), block.get("compressed", False)))

    for raw in text.splitlines():
        line = raw.strip()
        if m := _BLOCK.match(line):
            close()
            block = {"kind": m["kind"]}
        elif block is not None:
            if line == "compressed":
                block["compressed"] = True
            elif m := _KV.match(line):
                block[m["k"].strip()] = m["v"].strip()
    close()
    return entries


_LIST = re.compile(r"^(?P<kind>ELF|PTX) file\s+\d+:\s*(?P<name>\S+)$")
_LIST_ARCH = re.compile(r"\.(?P<arch>sm_\d+[af]?)\.(?:cubin|ptx)$")


def parse_file_list(text: str) -> list[FatbinEntry]:
    """Entries of `cuobjdump -lelf` / `-lptx` ("ELF file 1: x.1.sm_80.cubin"). The names lose
    the `f` suffix of family targets; prefer parse_fatbin_dump where there is a fatbin."""
    out = []
    for raw in text.splitlines():
        m = _LIST.match(raw.strip())
        if not m:
            continue
        a = _LIST_ARCH.search(m["name"])
        if not a:
            continue
        kind = "sass" if m["kind"] == "ELF" else "ptx"
        arch = a["arch"] if kind == "sass" else _ptx_name(a["arch"])
        out.append(FatbinEntry(kind, arch, name=m["name"]))
    return out


def list_fatbin(target: str | Path | bytes, all_fatbins: bool = False) -> FatbinListing:
    """Which SASS arches and which PTX a cubin, fatbin, object, library or executable holds.

    all_fatbins: also list relocatable device code (-rdc objects inside a library)."""
    opts = ["-all"] if all_fatbins else []
    entries = parse_fatbin_dump(run_cuobjdump(target, *opts))
    if not entries:  # a bare cubin (no fatbin header)
        entries = parse_file_list(run_cuobjdump(target, *opts, "-lelf"))
        entries += parse_file_list(run_cuobjdump(target, *opts, "-lptx"))
    source = "<bytes>" if isinstance(target, (bytes, bytearray, memoryview)) else str(target)
    if not entries:
        raise AnalysisError(f"{source} holds no CUDA device code that cuobjdump can list")
    return FatbinListing(entries, source)
