"""The op contract: what an op folder declares, and how its variants are found and launched.

An op folder holds `op.py` (which defines `OP = SomeOp()`, a subclass of `OpSpec`), numbered
variants `vN_name.cu`, and `wrong/` with known-bad kernels. A variant opens with a comment
saying what changed, why, and the predicted and measured gain; `@key value` lines in that
comment are its launch metadata, read by the op's `launch` (e.g. `@block 256`). A variant
that needs host-side launch code ships `vN_name.py` next to it with
`launch(op, kernel, variant, case, inputs, outputs)`; that is also where the host-side
cheats of `wrong/` live. Adding a variant is adding one file.

ops/ declares; it does not time or compare. suite.py, bench/ and check/ do that.
"""

from __future__ import annotations

import importlib.util
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..check.inputs import DTYPES, random_tensor

_VARIANT_FILE = re.compile(r"^v(?P<num>\d+)_(?P<name>[A-Za-z0-9_]+)\.cu$")
_WRONG_FILE = re.compile(r"^w(?P<num>\d+)_(?P<name>[A-Za-z0-9_]+)\.cu$")
_META = re.compile(r"^\s*(?://+|\*+)?\s*@(?P<key>[A-Za-z_][\w-]*)\s*(?P<value>.*?)\s*$")


class PeerUnavailable(RuntimeError):
    """A peer cannot run this case on this machine (backend not built, wrong GPU, unsupported shape).
    The suite records the peer as skipped with this message, not as failed."""


@dataclass(frozen=True)
class Case:
    """One problem instance: a shape, a dtype, and how the inputs are laid out."""

    shape: tuple[int, ...]
    dtype: str
    offset: int = 0  # inputs are views `offset` elements into their allocation (misalignment)
    layout: str = "contiguous"  # op-defined alternatives, e.g. "transposed"
    params: tuple[tuple[str, object], ...] = ()  # op-specific knobs, e.g. (("causal", True),)

    def param(self, key: str, default=None):
        return dict(self.params).get(key, default)

    @property
    def label(self) -> str:
        s = "x".join(str(d) for d in self.shape) or "scalar"
        extra = []
        if self.offset:
            extra.append(f"offset={self.offset}")
        if self.layout != "contiguous":
            extra.append(self.layout)
        extra += [f"{k}={v}" for k, v in self.params]
        return f"{s} {self.dtype}" + (f" ({', '.join(extra)})" if extra else "")

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def to_dict(self) -> dict:
        return {"shape": list(self.shape), "dtype": self.dtype, "offset": self.offset,
                "layout": self.layout, "params": dict(self.params), "label": self.label}


@dataclass(frozen=True)
class Work:
    """What a case must do at minimum: bytes through device memory, and FLOPs on a unit."""

    bytes: int
    flops: int = 0
    flop_unit: str = "fp32"  # which peak bounds the FLOPs: fp32, tf32, bf16, fp16, fp8 (tensor cores)

    def to_dict(self) -> dict:
        return {"bytes": self.bytes, "flops": self.flops, "flop_unit": self.flop_unit}


@dataclass
class Variant:
    op: str
    name: str  # file stem, e.g. "v1_vec16"
    number: int
    path: Path
    header: str  # the opening comment, prose
    meta: dict[str, str] = field(default_factory=dict)
    wrong: bool = False
    launcher: Callable | None = None  # from vN_name.py, if present

    @property
    def id(self) -> str:
        return f"{self.op}/{self.name}"

    @property
    def summary(self) -> str:
        for line in self.header.splitlines():
            if line.strip():
                return line.strip()
        return self.name

    def meta_int(self, key: str, default: int | None = None) -> int:
        if key not in self.meta:
            if default is None:
                raise KeyError(f"{self.path.name}: missing `@{key}` in its header comment")
            return default
        return int(self.meta[key].split()[0])

    def meta_int_for(self, key: str, dtype: str, default: int | None = None) -> int:
        """A per-dtype header value: `@<key>_bf16` / `@<key>_f32` where the header has one for
        `dtype`, else `@<key>` (rmsnorm v4's `@block_bf16`, transpose v4's `@tile_rows_bf16`)."""
        own = f"{key}_{DTYPES[dtype]}"
        return self.meta_int(own) if own in self.meta else self.meta_int(key, default)

    def block_for(self, dtype: str) -> int | None:
        """Threads a block of the `dtype` kernel from the header: `@block` (or `@threads`), per dtype where the
        header has `@block_bf16` / `@block_f32`; None where it names neither (the op plans its own)."""
        for key in ("block", "threads"):
            if key in self.meta:
                return self.meta_int_for(key, dtype)
        return None

    def dtype_defines(self, *keys: str) -> dict[str, int]:
        """The per-dtype header values the header sets, as macros (`@block_bf16 256` -> BLOCK_BF16=256);
        absent ones are left out, so variants without them keep their defines (and cache keys)."""
        return {own.upper(): self.meta_int(own) for key in keys for sfx in ("bf16", "f32")
                if (own := f"{key}_{sfx}") in self.meta}

    def dtypes(self, op: "OpSpec") -> tuple[str, ...]:
        """`@dtypes float32 bfloat16`: the dtypes this variant has kernels for (default: all of the op's)."""
        if "dtypes" in self.meta:
            return tuple(self.meta["dtypes"].replace(",", " ").split())
        return tuple(op.dtypes)

    @property
    def min_arch(self) -> str | None:
        """`@arch sm_90a`: the variant only builds for this arch (and compatible ones)."""
        return self.meta.get("arch")


def read_header(path: Path) -> tuple[str, dict[str, str]]:
    """The leading comment block of a .cu file: (prose, {meta key: value})."""
    prose, meta = [], {}
    in_block = False
    for line in path.read_text().splitlines():
        s = line.strip()
        if not in_block and not s.startswith(("//", "/*")) and s:
            break
        if s.startswith("/*"):
            in_block = True
        m = _META.match(s)
        if m:
            meta[m["key"]] = m["value"]
        else:
            prose.append(re.sub(r"^(//+|/\*+|\*+/?|\*)\s?", "", s).rstrip("*/ ").rstrip())
        if in_block and s.endswith("*/"):
            in_block = False
    return "\n".join(prose).strip(), meta


def _load_launcher(py: Path) -> Callable | None:
    if not py.is_file():
        return None
    mod_name = f"kernelab_variant_{abs(hash(str(py)))}"
    spec = importlib.util.spec_from_file_location(mod_name, py)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn = getattr(mod, "launch", None)
    if fn is None:
        raise ValueError(f"{py} must define launch(op, kernel, variant, case, inputs, outputs)")
    return fn


class OpSpec:
    """Base class for an op. Subclasses set the class attributes and override the methods."""

    name: str = ""
    dtypes: tuple[str, ...] = ("float32",)
    kernel_entry: str = ""  # kernels are named f"{kernel_entry}_{suffix}", suffix f32/bf16/f16
    best_variant: str = ""  # the variant exposed as a torch operator
    # dtype -> variant, where another variant than best_variant is the fastest for that dtype (the
    # torch operator runs best_variant_for(dtype)).
    best_variant_by_dtype: dict[str, str] = {}
    reference_dtype: str = "float64"
    # Per-dtype (rtol, atol). Ops override entries; check/ has the defaults.
    tolerances: dict[str, tuple[float, float]] = {}
    # Which input distributions the op defines results for (special: NaN/Inf propagate elementwise).
    distributions: tuple[str, ...] = ("normal", "uniform", "large")
    # Peers that are reference points, not competitors (transpose's `copy_(m.t())`): timed and
    # reported with the peers, never the "best peer" a variant is compared with.
    baselines: tuple[str, ...] = ()
    folder: Path = Path()

    # ---- shapes -------------------------------------------------------------------------
    def test_cases(self) -> list[Case]:
        raise NotImplementedError

    def bench_cases(self) -> list[Case]:
        raise NotImplementedError

    def quick_cases(self) -> list[Case]:
        """The few bench cases `kernelab run --quick` uses (default: the largest bench case per dtype)."""
        best: dict[str, Case] = {}
        for c in self.bench_cases():
            if c.dtype not in best or c.numel > best[c.dtype].numel:
                best[c.dtype] = c
        return list(best.values())

    # ---- data ---------------------------------------------------------------------------
    def make_inputs(self, case: Case, seed: int, device="cuda", dist: str = "normal") -> dict:
        raise NotImplementedError

    def make_outputs(self, case: Case, inputs: dict) -> dict:
        raise NotImplementedError

    def reference(self, case: Case, inputs: dict) -> dict:
        """Expected outputs, computed in `reference_dtype` (the check casts to compare)."""
        raise NotImplementedError

    def work(self, case: Case) -> Work:
        raise NotImplementedError

    def peers(self, case: Case) -> dict[str, Callable]:
        """{peer name: fn(inputs) -> outputs dict}; torch eager, torch.compile, cuBLAS..."""
        return {}

    # ---- kernels ------------------------------------------------------------------------
    def kernel_name(self, dtype: str) -> str:
        return f"{self.kernel_entry}_{DTYPES[dtype]}"

    def defines(self, variant: Variant) -> dict:
        return {}

    def static_kernel(self, variant: Variant, case: Case) -> tuple[str, int] | None:
        """(kernel name, threads a block) a launch of `variant` on `case` runs, as the header (and a plan)
        say without a GPU: for occupancy in the static mode. Default: the contract kernel at the header's
        block for the dtype; None where the header names no block (the op plans its own launch)."""
        block = variant.block_for(case.dtype)
        return None if block is None else (self.kernel_name(case.dtype), block)

    def dynamic_smem(self, variant: Variant, case: Case) -> int:
        """Bytes of dynamic shared memory a launch of `variant` on `case` asks for (for occupancy).
        Default: the variant's `@smem` header value, else 0."""
        return variant.meta_int("smem", 0)

    def supports(self, variant: Variant, case: Case) -> str | None:
        """None if `variant` can run `case`; else the reason it cannot (reported as skipped).
        Subclasses that override this should call super().supports first."""
        if case.dtype not in variant.dtypes(self):
            return f"{variant.name} has no {case.dtype} kernel (@dtypes {' '.join(variant.dtypes(self))})"
        if variant.min_arch:
            from ..gpu import Arch, default_arch

            want, have = Arch.parse(variant.min_arch), default_arch()
            if have.cc != want.cc and (want.suffix == "a" or have < want):
                return f"{variant.name} needs {want.sm}; this GPU is {have.sm}"
        return None

    def launch(self, kernel, variant: Variant, case: Case, inputs: dict, outputs: dict) -> None:
        raise NotImplementedError

    # ---- helpers for subclasses ---------------------------------------------------------
    @staticmethod
    def tensor(shape, dtype: str, seed: int, device, dist: str = "normal", offset: int = 0, scale: float = 1.0):
        return random_tensor(tuple(shape), dtype, seed=seed, device=device, dist=dist, offset=offset, scale=scale)

    # ---- discovery ----------------------------------------------------------------------
    def best_variant_for(self, dtype: str) -> str:
        """The variant the torch operator runs for `dtype`: best_variant unless best_variant_by_dtype names another."""
        return self.best_variant_by_dtype.get(dtype, self.best_variant)

    def variants(self, include_wrong: bool = False) -> list[Variant]:
        found = _scan(self, self.folder, _VARIANT_FILE, wrong=False)
        if include_wrong:
            found += self.wrong_variants()
        return found

    def wrong_variants(self) -> list[Variant]:
        return _scan(self, self.folder / "wrong", _WRONG_FILE, wrong=True)

    def variant(self, name: str) -> Variant:
        for v in self.variants(include_wrong=True):
            if v.name == name or v.name.split("_", 1)[0] == name:
                return v
        known = ", ".join(v.name for v in self.variants(include_wrong=True))
        raise KeyError(f"op {self.name!r} has no variant {name!r} (have: {known})")

    def __repr__(self) -> str:
        return f"<op {self.name}: {len(self.variants())} variants>"


def _scan(op: OpSpec, folder: Path, pattern: re.Pattern, wrong: bool) -> list[Variant]:
    if not folder.is_dir():
        return []
    out = []
    for p in sorted(folder.iterdir()):
        m = pattern.match(p.name)
        if not m:
            continue
        header, meta = read_header(p)
        out.append(Variant(op=op.name, name=p.stem, number=int(m["num"]), path=p, header=header, meta=meta,
                           wrong=wrong, launcher=_load_launcher(p.with_suffix(".py"))))
    return sorted(out, key=lambda v: (v.number, v.name))


_resident: dict = {}


def resident_blocks(kernel, block: int) -> int:
    """How many blocks of `kernel` the whole GPU holds at once: SMs x the occupancy API's blocks
    per SM (computed once per kernel and block size). Persistent launches size their grid by it."""
    key = (kernel.name, id(kernel.module), block)
    if key not in _resident:
        from ..gpu import device_info

        _resident[key] = device_info().sm_count * kernel.max_active_blocks_per_sm(block)
    return _resident[key]


_BUILTIN = Path(__file__).parent


def _stream_and_capture(device) -> tuple[int, int]:
    """(the current stream's handle, the id of the CUDA-graph capture it is in, or 0) on `device`;
    (0, 0) off CUDA. Capture ids are unique over the process (cuStreamGetCaptureInfo)."""
    import torch

    if device.type != "cuda":
        return 0, 0
    stream = torch.cuda.current_stream(device).cuda_stream
    # torch's check (cheap) answers for the current device's stream only
    if device.index in (None, torch.cuda.current_device()) and not torch.cuda.is_current_stream_capturing():
        return stream, 0
    from cuda.bindings import driver

    err, status, capture_id, *_ = driver.cuStreamGetCaptureInfo(driver.CUstream(stream))
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuStreamGetCaptureInfo failed on {device}: {err!r}")
    if status == driver.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE:
        return stream, 0
    if status != driver.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE:
        raise RuntimeError(f"the capture on {device}'s current stream was invalidated ({status!r}); "
                           "end it (torch.cuda.graph's exit raises the error that caused it) and capture again")
    return stream, int(capture_id)


class StreamCounters:
    """Zeroed int32 counters that kernels keep for themselves, `width` per (device, stream, graph).

    One array per device of 2 x `slots` x `width` int32, zeroed once when first asked for on an eager
    call; each stream gets its own slot of the first half, so launches in flight on different
    streams never share counters. A launch captured into a CUDA graph gets a slot of the second half
    for its capture (torch captures every graph on one default side stream: keyed by the stream
    alone, two graphs replayed at once on two streams would share counters). Each half's slots are
    reused past `slots` streams or captures, so the 257th capture shares a slot with the first
    capture, never with a stream (a program that replays that many graphs at once needs more). A
    capture that comes first on a device (no array yet) gets its own `width` counters, allocated in
    the capture (the graph zeroes them at each replay), never the device array: a memset of the
    whole array in a graph would clear the slots of launches in flight on other streams. The
    kernels that use them leave them zero when they complete (sum v4's ticket wraps, softmax v12's
    last cluster resets), so no eager launch needs a memset and a graph replays with the same
    pointer."""

    def __init__(self, width: int, slots: int = 256):
        self.width, self.slots = width, slots
        self._arrays: dict = {}  # device -> int32[slots x width]
        self._slot: dict = {}  # (device, stream, capture id or 0) -> slot
        self._own: dict = {}  # (device, stream, capture id) -> int32[width] (captures before any eager call)
        self._taken: dict = {}  # (device, 0 for streams or 1 for captures) -> slots handed out so far

    def __call__(self, device):
        """This stream's (or this capture's) `width` counters on `device`."""
        import torch

        key = str(device)
        stream, capture = _stream_and_capture(device)
        arr = self._arrays.get(key)
        own = self._own.get((key, stream, capture)) if capture else None
        if own is None and arr is None and capture:
            # kept referenced: the graph's pool must not hand this memory out again
            own = self._own[(key, stream, capture)] = torch.zeros(self.width, dtype=torch.int32, device=device)
        if own is not None:
            return own
        if arr is None:
            arr = self._arrays[key] = torch.zeros(2 * self.slots * self.width, dtype=torch.int32, device=device)
        slot = self._slot.get((key, stream, capture))
        if slot is None:
            half = int(capture != 0)
            taken = self._taken.get((key, half), 0)
            slot = self._slot[(key, stream, capture)] = half * self.slots + taken % self.slots
            self._taken[(key, half)] = taken + 1
        return arr[slot * self.width:(slot + 1) * self.width]


def _load_op(folder: Path) -> OpSpec:
    op_py = folder / "op.py"
    if folder.parent == _BUILTIN:
        mod = importlib.import_module(f"kernelab.ops.{folder.name}.op")
    else:
        mod_name = f"kernelab_user_op_{folder.name}"
        spec = importlib.util.spec_from_file_location(mod_name, op_py)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = mod
        spec.loader.exec_module(mod)
    op = getattr(mod, "OP", None)
    if not isinstance(op, OpSpec):
        raise TypeError(f"{op_py} must define OP = <an OpSpec subclass instance>")
    op.folder = folder
    if not op.name:
        op.name = folder.name
    return op


def discover(ops_dir: str | Path | None = None) -> dict[str, OpSpec]:
    """{name: OpSpec} for the library's ops, or for every op folder under `ops_dir`."""
    root = Path(ops_dir) if ops_dir else _BUILTIN
    if not root.is_dir():
        raise FileNotFoundError(f"--ops-dir {root} is not a folder")
    ops = {}
    for folder in sorted(root.iterdir()):
        if (folder / "op.py").is_file():
            op = _load_op(folder)
            ops[op.name] = op
    if ops_dir and not ops:
        raise FileNotFoundError(f"{root} holds no op folders (a folder with an op.py defining OP = ...)")
    return ops
