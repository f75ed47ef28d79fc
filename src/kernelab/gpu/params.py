"""Kernel parameters: read the C signature from the source, convert Python values to it.

cuda.core passes a bare Python int as an 8-byte pointer and a float as a double, so
`kernel(a, b, c, n)` with `n` an `int` parameter silently passes garbage. Here every
argument is converted by the parameter's declared C type: a pointer takes a torch.Tensor
(or an explicit DevicePointer), a scalar takes a Python number that fits its type. Anything
else is an ArgumentError naming the argument and the fix.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._text import split_top_level
from .errors import ArgumentError, KernelabError
from .preprocess import preprocess

# C scalar types -> numpy types (what cuda.core marshals with the right size).
SCALARS: dict[str, type] = {
    "bool": np.bool_,
    "char": np.int8, "signed char": np.int8, "int8_t": np.int8,
    "unsigned char": np.uint8, "uint8_t": np.uint8,
    "short": np.int16, "short int": np.int16, "int16_t": np.int16,
    "unsigned short": np.uint16, "unsigned short int": np.uint16, "uint16_t": np.uint16,
    "int": np.int32, "signed": np.int32, "signed int": np.int32, "int32_t": np.int32,
    "unsigned": np.uint32, "unsigned int": np.uint32, "uint32_t": np.uint32,
    "long": np.int64, "long int": np.int64, "long long": np.int64, "long long int": np.int64,
    "int64_t": np.int64, "ptrdiff_t": np.int64, "ssize_t": np.int64, "intptr_t": np.int64,
    "unsigned long": np.uint64, "unsigned long int": np.uint64, "unsigned long long": np.uint64,
    "unsigned long long int": np.uint64, "uint64_t": np.uint64, "size_t": np.uint64, "uintptr_t": np.uint64,
    "float": np.float32, "double": np.float64,
    "half": np.float16, "__half": np.float16,
}

# Pointee types -> (torch dtype name, alignment in bytes the pointer needs). None: any dtype.
POINTEES: dict[str, tuple[str | None, int]] = {
    "float": ("float32", 4), "float2": ("float32", 8), "float4": ("float32", 16),
    "double": ("float64", 8), "double2": ("float64", 16),
    "__nv_bfloat16": ("bfloat16", 2), "nv_bfloat16": ("bfloat16", 2), "__nv_bfloat162": ("bfloat16", 4),
    "__half": ("float16", 2), "half": ("float16", 2), "__half2": ("float16", 4),
    "int": ("int32", 4), "int32_t": ("int32", 4), "int2": ("int32", 8), "int4": ("int32", 16),
    "unsigned": ("int32", 4), "unsigned int": ("int32", 4), "uint32_t": ("int32", 4),
    "uint2": (None, 8), "uint4": (None, 16),
    "long long": ("int64", 8), "int64_t": ("int64", 8), "unsigned long long": ("int64", 8),
    "uint64_t": ("int64", 8), "size_t": ("int64", 8),
    "char": (None, 1), "unsigned char": (None, 1), "uint8_t": ("uint8", 1), "int8_t": ("int8", 1),
    "signed char": ("int8", 1), "bool": ("bool", 1),
    "short": ("int16", 2), "int16_t": ("int16", 2), "unsigned short": (None, 2), "uint16_t": (None, 2),
    "void": (None, 1),
}

# Opaque by-value structs kernelab knows how to pass.
STRUCTS = {"CUtensorMap"}

_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict", "__grid_constant__", "struct"}


@dataclass(frozen=True)
class Param:
    index: int
    name: str
    ctype: str  # normalised, qualifiers removed, e.g. "float*" or "unsigned long long"
    kind: str  # "pointer" | "scalar" | "struct"
    base: str  # pointee or scalar type
    const: bool = False

    @property
    def torch_dtype(self) -> str | None:
        return POINTEES.get(self.base, (None, 1))[0] if self.kind == "pointer" else None

    @property
    def alignment(self) -> int:
        return POINTEES.get(self.base, (None, 1))[1] if self.kind == "pointer" else 0

    def describe(self) -> str:
        return f"param {self.index} '{self.name}' ({'const ' if self.const else ''}{self.ctype})"


@dataclass(frozen=True)
class DevicePointer:
    """A raw device address, for a pointer parameter when no tensor owns the memory."""

    address: int


def _split_top_level(s: str) -> list[str]:
    """A C parameter list at its top-level commas (template arguments and casts do not split)."""
    return split_top_level(s, "(<[", ")>]")


_GLOBAL = re.compile(r"__global__")
# An attribute's arguments may hold one level of parentheses: __launch_bounds__(128, MIN_BLOCKS_AT(128)).
_ARGS = r"\s*\((?:[^()]|\([^()]*\))*\)"
_ATTRS = re.compile(rf"__launch_bounds__{_ARGS}|__cluster_dims__{_ARGS}|__maxnreg__{_ARGS}")


def parse_signatures(source: str, defines: dict[str, object] | None = None,
                     include_dirs: Sequence[str | Path] = ()) -> dict[str, list[Param]]:
    """{kernel name: [Param, ...]} for every `__global__` function in `source` and the local files
    it includes, as the compiler reads them with `defines` (preprocess.py).

    include_dirs: where `#include "name"` is looked for, in order, as the compiler does: give the
    module's `CompiledModule.include_dirs` (compile_file puts the file's own folder first); with
    none, no include is read. #if blocks that the defines and #define lines decide are honoured;
    those the host cannot decide (`#if __CUDA_ARCH__ >= 900`) keep all their branches, so the
    signatures cover every arch. A quoted include found in none of the folders is not read (the
    toolkit's headers, which the compiler finds on its own path, hold no kernels of ours).
    Object-like macros from `defines` (and `#define NAME token` lines) are substituted in
    parameter types, so `const T* a` with `-DT=float` reads as float.
    Template kernels are skipped: launch them through an `extern "C"` wrapper.
    """
    pre = preprocess(source, defines, include_dirs)
    text = pre.text
    macros = {k: str(v) for k, v in (defines or {}).items() if v is not None}
    for name, body in pre.macros.items():
        if re.fullmatch(r"[\w\s\*]+", body):  # a type or a number, not an expression
            macros.setdefault(name, body)
    out: dict[str, list[Param]] = {}
    for m in _GLOBAL.finditer(text):
        # Skip template kernels: look back for `template <...>` directly before.
        before = text[max(0, m.start() - 200):m.start()]
        if re.search(r"template\s*<[^;{}]*>\s*(extern\s+\"C\"\s*)?(static\s+)?$", before):
            continue
        rest = _ATTRS.sub(" ", text[m.end():m.end() + 4000])
        sig = re.match(r"\s*(?:static\s+)?(?:__[a-z_]+__\s+)*void\s+(?:__[a-z_]+__\s*(?:\([^)]*\))?\s+)*(\w+)\s*\(", rest)
        if not sig:
            continue
        name = sig[1]
        depth, i = 1, sig.end()
        while i < len(rest) and depth:
            depth += {"(": 1, ")": -1}.get(rest[i], 0)
            i += 1
        plist = rest[sig.end():i - 1].strip()
        params = []
        if plist and plist != "void":
            for idx, raw in enumerate(_split_top_level(plist)):
                params.append(_parse_param(idx, raw, macros, name))
        out[name] = params
    return out


def _parse_param(index: int, raw: str, macros: dict[str, str], kernel: str) -> Param:
    raw = raw.split("=")[0]  # default arguments
    for _ in range(4):  # macros may expand to macros
        raw = re.sub(r"\b(\w+)\b", lambda m: macros.get(m[1], m[1]), raw)
    stars = raw.count("*")
    if "[" in raw or "&" in raw:
        raise KernelabError(f"kernel {kernel}: parameter {raw.strip()!r} is an array or reference; "
                            "kernel parameters must be pointers, scalars or CUtensorMap")
    tokens = re.findall(r"[A-Za-z_]\w*", raw)
    const = "const" in tokens
    tokens = [t for t in tokens if t not in _QUALIFIERS]
    if not tokens:
        raise KernelabError(f"kernel {kernel}: cannot read parameter {index}: {raw.strip()!r}")
    name = tokens[-1] if len(tokens) > 1 else f"arg{index}"
    base = " ".join(tokens[:-1] if len(tokens) > 1 else tokens)
    base = base.replace("std ", "")
    if stars:
        return Param(index, name, base + "*" * stars, "pointer", base, const)
    if base in STRUCTS:
        return Param(index, name, base, "struct", base, const)
    if base in SCALARS:
        return Param(index, name, base, "scalar", base, const)
    raise KernelabError(
        f"kernel {kernel}: parameter {index} {raw.strip()!r} has type {base!r}, which kernelab cannot pass safely. "
        f"Use a pointer, one of the scalar types ({', '.join(sorted(set(SCALARS)))}), or a CUtensorMap."
    )


def make_converter(kernel: str, p: Param, device_index: int | None = None):
    """Return fn(value) -> what cuda.core should receive for this parameter."""
    where = f"{kernel}: {p.describe()}"
    if p.kind == "pointer":
        import torch

        want_name = p.torch_dtype
        want = getattr(torch, want_name) if want_name else None
        align = p.alignment
        mask = align - 1
        tensor_type = torch.Tensor

        def fail(v):
            """Explain why `v` was refused (the slow path; duck-typed tensors that pass are accepted)."""
            if isinstance(v, DevicePointer):
                raise ArgumentError(f"{where}: address {v.address:#x} is not {align}-byte aligned")
            if not hasattr(v, "data_ptr"):
                hint = (" A Python int is not a pointer here: wrap a raw address as kernelab.gpu.DevicePointer(addr)."
                        if isinstance(v, int) else "")
                raise ArgumentError(f"{where}: expected a CUDA torch.Tensor, got {type(v).__name__}.{hint}")
            if v.device.type != "cuda":
                raise ArgumentError(f"{where}: tensor is on {v.device}; the kernel reads GPU memory. Fix: pass {p.name}.cuda()")
            if device_index is not None and v.device.index != device_index:
                raise ArgumentError(f"{where}: tensor is on {v.device}, the kernel was loaded on cuda:{device_index}. "
                                    f"Fix: move it with {p.name}.to('cuda:{device_index}') or load the module under torch.cuda.device({v.device.index}).")
            if want is not None and v.dtype != want:
                raise ArgumentError(f"{where}: tensor has dtype {v.dtype}; the kernel expects torch.{want_name}. "
                                    f"Fix: pass {p.name}.to(torch.{want_name}) or call the kernel compiled for {v.dtype}.")
            if v.numel() and not v.is_contiguous():
                raise ArgumentError(f"{where}: tensor is not contiguous (strides {tuple(v.stride())}); the kernel "
                                    f"indexes it as a flat array. Fix: pass {p.name}.contiguous().")
            ptr = v.data_ptr()
            if not ptr & mask:
                return ptr  # a tensor-like object that passes every check
            raise ArgumentError(f"{where}: tensor data_ptr {ptr:#x} is not {align}-byte aligned "
                                f"(ptr % {align} == {ptr % align}), as a {p.base} load needs. Fix: pass "
                                f"{p.name}.clone() (fresh allocations are 256-byte aligned) or use a kernel that checks alignment.")

        # The hot path: a handful of attribute reads (~0.5 us per tensor), since launch overhead is measured.
        def convert_pointer(v):
            if isinstance(v, tensor_type):
                if (v.is_cuda and (want is None or v.dtype is want)
                        and (device_index is None or v.get_device() == device_index)
                        and (v.is_contiguous() or not v.numel())):
                    ptr = v.data_ptr()
                    if not ptr & mask:
                        return ptr
            elif isinstance(v, DevicePointer) and not v.address & mask:
                return v.address
            return fail(v)
        return convert_pointer

    if p.kind == "struct":
        def convert_struct(v):
            if getattr(v, "_kernelab_tensor_map", False):  # encoded by kernelab.gpu.tensormap
                raise ArgumentError(f"{where}: a kernelab TensorMap travels by value only through "
                                    "kernelab.gpu.tensormap.launch(kernel, grid, block, *args, shared_mem=...); "
                                    "Kernel.launch goes through cuda.core, which cannot pass it")
            if type(v).__name__ not in ("TensorMapDescriptor",) and not hasattr(v, "__cuda_tensor_map__"):
                raise ArgumentError(f"{where}: expected a TensorMapDescriptor (kernelab.gpu.tensor_map(...)), got {type(v).__name__}")
            return v
        return convert_struct

    np_type = SCALARS[p.base]
    is_float = np.issubdtype(np_type, np.floating)
    is_bool = np_type is np.bool_
    info = None if (is_float or is_bool) else np.iinfo(np_type)

    def convert_scalar(v):
        if hasattr(v, "data_ptr"):
            raise ArgumentError(f"{where}: got a tensor for a scalar parameter. Fix: pass a Python number (tensor.item()).")
        if isinstance(v, np.generic):
            if v.dtype != np.dtype(np_type):
                raise ArgumentError(f"{where}: got numpy {v.dtype}; the parameter is {p.base} ({np.dtype(np_type)}). "
                                    "Fix: pass a plain Python number, and kernelab converts it.")
            return v
        if is_bool:
            if not isinstance(v, (bool, int)):
                raise ArgumentError(f"{where}: expected a bool, got {type(v).__name__}")
            return np_type(bool(v))
        if is_float:
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                raise ArgumentError(f"{where}: expected a number, got {type(v).__name__}")
            return np_type(v)
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, float) and v.is_integer():
                raise ArgumentError(f"{where}: got float {v!r} for an integer parameter. Fix: pass int({v!r}).")
            raise ArgumentError(f"{where}: expected an int, got {type(v).__name__} {v!r}")
        if not info.min <= v <= info.max:
            raise ArgumentError(f"{where}: {v} does not fit in {p.base} [{info.min}, {info.max}]. "
                                "Fix: use a wider parameter type (e.g. unsigned long long for sizes).")
        return np_type(v)
    return convert_scalar
