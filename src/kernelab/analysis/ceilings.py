"""Measured ceilings: the best this GPU really does, the backend of `kernelab ceilings`.

A datasheet number is a brochure; a roofline is honest only against what the hardware
reaches. We measure, through kernelab.bench (the one audited timing protocol, cold L2):

    copy      torch copy_ of 2 GiB fp32 -> 2 GiB    bytes = read + write
    read      torch.sum of 2 GiB fp32               bytes = read (the scalar result is free)
    write     fill_ of 2 GiB fp32                   bytes = write
    gemm_*    cuBLAS through torch.matmul, 8192^3,  FLOPs = 2 * M * N * K
              bf16, fp16, fp32 with TF32 off (CUDA cores), fp32 with TF32 on (tf32 tensor
              cores), fp8 e4m3 through torch._scaled_mm where the GPU has fp8 (8.9+)

Inputs are random (a GEMM on zeros ran 13% faster on the H200: check/inputs.py). Each
measurement passes the nominal floor to bench, so a time faster than physics is rejected.
Results are cached per device name and driver version in
$KERNELAB_CEILINGS_DIR, else $XDG_CACHE_HOME/kernelab/ceilings, else ~/.cache/kernelab/ceilings.
`roofline_ceilings()` turns them into the numbers roofline.py uses: copy bandwidth (most
kernels both read and write) and the GEMM rate per unit.

On the lent H200 (ANCHORS.md, 2026-11-30): copy 4.28 TB/s of 4.8 nominal (89%), sum
4.15 TB/s, bf16 GEMM 8192^3 728 TFLOP/s (best sample 803), fp32 without TF32 51 TFLOP/s.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .devices import DeviceSpec, spec_for, unit_name
from .errors import AnalysisError
from .roofline import Ceilings

GiB = 1 << 30
STREAM_BYTES = 2 * GiB
GEMM_N = 8192
GEMM_UNITS = ("bf16", "fp16", "fp32", "tf32", "fp8")
ALL = ("copy", "read", "write") + tuple(f"gemm_{u}" for u in GEMM_UNITS)


@dataclass
class CeilingEntry:
    name: str  # "copy", "read", "write", "gemm_bf16", ...
    kind: str  # "bandwidth" (bytes/s) or "flops" (FLOP/s)
    what: str  # what ran, in words
    unit: str | None = None  # the FLOP unit of a GEMM
    value: float | None = None  # from the median time
    best: float | None = None  # from the fastest sample
    seconds: float | None = None  # median
    bytes: int = 0
    flops: int = 0
    nominal: float | None = None  # the datasheet value it compares to
    skipped: str | None = None  # why it was not measured (no fp8 on this GPU, out of memory, ...)
    measurement: dict | None = None  # kernelab.bench Measurement.to_dict()

    @property
    def percent_of_nominal(self) -> float | None:
        if self.value is None or not self.nominal:
            return None
        return 100.0 * self.value / self.nominal

    def to_dict(self) -> dict:
        d = asdict(self)
        d["percent_of_nominal"] = self.percent_of_nominal
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "CeilingEntry":
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in names})


@dataclass
class MeasuredCeilings:
    device: str
    cc: tuple[int, int]
    driver: str
    sm_count: int
    measured_at: str  # ISO time, UTC
    quick: bool
    versions: dict[str, str] = field(default_factory=dict)  # torch, kernelab, cuda
    nominal: dict | None = None  # the DeviceSpec (to_dict) the entries compare to
    entries: dict[str, CeilingEntry] = field(default_factory=dict)

    def value(self, name: str) -> float | None:
        e = self.entries.get(name)
        return e.value if e is not None else None

    @property
    def bandwidth(self) -> float | None:
        """The copy bandwidth (bytes/s): the roof for kernels that read and write."""
        return self.value("copy")

    def flops(self, unit: str) -> float | None:
        return self.value(f"gemm_{unit_name(unit)}")

    def rows(self) -> list[dict]:
        """One row per ceiling, for a table: name, what, value with its unit, % of nominal, skipped."""
        out = []
        for e in self.entries.values():
            scale, unit = (1e12, "TB/s") if e.kind == "bandwidth" else (1e12, "TFLOP/s")
            out.append({"name": e.name, "what": e.what,
                        "value": None if e.value is None else e.value / scale,
                        "best": None if e.best is None else e.best / scale, "unit": unit,
                        "nominal": None if e.nominal is None else e.nominal / scale,
                        "percent_of_nominal": e.percent_of_nominal, "median_us": None if e.seconds is None
                        else e.seconds * 1e6, "skipped": e.skipped})
        return out

    def to_dict(self) -> dict:
        d = asdict(self)
        d["cc"] = list(self.cc)
        d["entries"] = {k: e.to_dict() for k, e in self.entries.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "MeasuredCeilings":
        d = dict(d)
        d["cc"] = tuple(d["cc"])
        d["entries"] = {k: CeilingEntry.from_dict(v) for k, v in d.get("entries", {}).items()}
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in names})


# ---- the pure part: cached ceilings -> roofline numbers ----------------------------------

def roofline_ceilings(measured: MeasuredCeilings | dict, fallback: DeviceSpec | None = None) -> Ceilings:
    """The measured roofs: copy bandwidth and the GEMM FLOP/s per unit.

    fp32 is the cuBLAS rate with TF32 off (CUDA cores); tf32 the rate with TF32 on. A unit
    not measured is absent, or taken from `fallback`'s nominal value (marked as such)."""
    m = MeasuredCeilings.from_dict(measured) if isinstance(measured, dict) else measured
    sources: dict[str, str] = {}
    bw = m.bandwidth
    if bw:
        sources["bandwidth"] = f"measured: {m.entries['copy'].what}"
    elif m.value("read") and m.value("write"):
        r, w = m.value("read"), m.value("write")
        bw = 2.0 / (1.0 / r + 1.0 / w)  # equal bytes read and written: the harmonic mean
        sources["bandwidth"] = "measured: harmonic mean of the read and write streams"
    elif fallback is not None:
        bw = fallback.memory_bandwidth
        sources["bandwidth"] = "nominal (not measured)"
    else:
        raise AnalysisError(f"the ceilings of {m.device} hold no bandwidth measurement; run `kernelab ceilings --refresh`")
    flops: dict[str, float] = {}
    for u in GEMM_UNITS:
        v = m.flops(u)
        if v:
            flops[u] = v
            sources[u] = f"measured: {m.entries[f'gemm_{u}'].what}"
        elif fallback is not None and fallback.has(u):
            flops[u] = fallback.peak(u)
            sources[u] = "nominal (not measured)"
    return Ceilings(m.device, bw, flops, "measured", sources)


# ---- cache ------------------------------------------------------------------------------

def cache_dir() -> Path:
    if os.environ.get("KERNELAB_CEILINGS_DIR"):
        return Path(os.environ["KERNELAB_CEILINGS_DIR"])
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "kernelab" / "ceilings"


def cache_path(device: str, driver: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{device}__driver-{driver}").strip("_")
    return cache_dir() / f"{slug}.json"


def save(m: MeasuredCeilings) -> Path:
    path = cache_path(m.device, m.driver)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(m.to_dict(), indent=1))
    os.replace(tmp, path)
    return path


def load_cached(device: str | None = None, driver: str | None = None) -> MeasuredCeilings | None:
    """The cached ceilings of `device` under `driver` (default: the current GPU's), or None."""
    if device is None or driver is None:
        from ..gpu import device_info

        info = device_info()
        device, driver = device or info.name, driver or info.driver_version
    path = cache_path(device, driver)
    try:
        return MeasuredCeilings.from_dict(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None


# ---- measuring --------------------------------------------------------------------------

def _bench_options(quick: bool) -> dict:
    # quick: enough samples for a sanity check in a test; full: the protocol's defaults, longer cap.
    return dict(target_rel=0.02, min_samples=5, max_wall_s=3.0) if quick else dict(max_wall_s=20.0)


def _run(entry: CeilingEntry, fn, floor_s: float | None, quick: bool) -> CeilingEntry:
    from ..bench import ImpossibleResult, bench

    reason = None
    if floor_s is not None:
        reason = (f"{entry.bytes} B at the nominal {entry.nominal / 1e12:.3f} TB/s" if entry.kind == "bandwidth"
                  else f"{entry.flops} FLOP at the nominal {entry.nominal / 1e12:.1f} TFLOP/s")
    try:
        m = bench(fn, mode="cold", floor_s=floor_s, floor_reason=reason, name=f"ceiling {entry.name}",
                  **_bench_options(quick))
    except ImpossibleResult as e:
        entry.skipped = f"impossible result, rejected by the protocol: {e}"
        return entry
    work = entry.bytes if entry.kind == "bandwidth" else entry.flops
    entry.seconds = m.median_s
    entry.value = work / m.median_s
    fastest = m.stats.get("min") if isinstance(m.stats, dict) else getattr(m.stats, "min", None)
    entry.best = work / fastest if fastest else None
    entry.measurement = m.to_dict()
    return entry


def _streams(spec: DeviceSpec, nbytes: int, which, quick: bool) -> list[CeilingEntry]:
    import torch

    out = []
    n = nbytes // 4
    gib = nbytes / GiB
    src = torch.empty(n, dtype=torch.float32, device="cuda")
    src.uniform_()
    dst = torch.empty_like(src)
    bw = spec.memory_bandwidth
    try:
        if "copy" in which:
            e = CeilingEntry("copy", "bandwidth", f"torch copy_ of {gib:g} GiB fp32 (bytes = read + write)",
                             bytes=2 * nbytes, nominal=bw)
            out.append(_run(e, lambda: dst.copy_(src), e.bytes / bw, quick))
        if "read" in which:
            e = CeilingEntry("read", "bandwidth", f"torch.sum of {gib:g} GiB fp32 (bytes = read)",
                             bytes=nbytes, nominal=bw)
            out.append(_run(e, lambda: src.sum(), e.bytes / bw, quick))
        if "write" in which:
            e = CeilingEntry("write", "bandwidth", f"fill_ of {gib:g} GiB fp32 (bytes = write)",
                             bytes=nbytes, nominal=bw)
            out.append(_run(e, lambda: dst.fill_(1.0), e.bytes / bw, quick))
    finally:
        del src, dst
        torch.cuda.empty_cache()
    return out


def _gemm(spec: DeviceSpec, unit: str, n: int, quick: bool) -> CeilingEntry:
    import torch

    flops = 2 * n * n * n
    nominal = spec.peak_flops.get(unit)
    trusted_floor = (flops / nominal) if (nominal and spec.source != "derived") else None
    what = {"bf16": "cuBLAS bf16 GEMM", "fp16": "cuBLAS fp16 GEMM", "fp32": "cuBLAS fp32 GEMM, TF32 off",
            "tf32": "cuBLAS fp32 GEMM, TF32 on", "fp8": "cuBLAS fp8 e4m3 GEMM (torch._scaled_mm, bf16 out)"}[unit]
    e = CeilingEntry(f"gemm_{unit}", "flops", f"{what}, {n}^3 (FLOPs = 2 n^3)", unit=unit, flops=flops, nominal=nominal)
    gen = torch.Generator(device="cuda").manual_seed(0)
    if unit == "fp8":
        if spec.cc < (8, 9) or not hasattr(torch, "_scaled_mm"):
            e.skipped = (f"no fp8 tensor cores on {spec.cc[0]}.{spec.cc[1]} (need 8.9+)" if spec.cc < (8, 9)
                         else "this torch has no torch._scaled_mm")
            return e
        a = torch.randn(n, n, device="cuda", generator=gen).to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device="cuda", generator=gen).to(torch.float8_e4m3fn).t()  # column-major, as cuBLASLt wants
        one = torch.ones((), device="cuda", dtype=torch.float32)
        try:
            torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            torch.cuda.synchronize()
        except Exception as ex:  # an older torch or cuBLAS without this layout
            e.skipped = f"torch._scaled_mm failed: {str(ex).splitlines()[0]}"
            return e
        return _run(e, lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
                    trusted_floor, quick)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "tf32": torch.float32}[unit]
    a = torch.randn(n, n, device="cuda", dtype=dtype, generator=gen)
    b = torch.randn(n, n, device="cuda", dtype=dtype, generator=gen)
    c = torch.empty(n, n, device="cuda", dtype=dtype)
    before = torch.get_float32_matmul_precision()
    # "highest" = IEEE fp32 (no TF32), "high" = TF32 allowed. The public setter, because mixing
    # torch's legacy allow_tf32 flag with the newer fp32_precision API is an error since torch 2.9.
    torch.set_float32_matmul_precision("high" if unit == "tf32" else "highest")
    try:
        return _run(e, lambda: torch.matmul(a, b, out=c), trusted_floor, quick)
    finally:
        torch.set_float32_matmul_precision(before)


def measure_ceilings(*, quick: bool = False, which=ALL, stream_bytes: int = STREAM_BYTES, gemm_n: int = GEMM_N,
                     device=None) -> MeasuredCeilings:
    """Measure the ceilings of the current GPU (needs one). `which` picks entries from ALL."""
    import torch

    from .. import __version__
    from ..gpu import device_info, has_gpu

    if not has_gpu():
        from ..gpu import NoGPUError

        raise NoGPUError("measuring ceilings")
    unknown = set(which) - set(ALL)
    if unknown:
        raise AnalysisError(f"unknown ceilings {sorted(unknown)}; choose from {', '.join(ALL)}")
    info = device_info(device)
    spec = spec_for(info)
    free, _ = torch.cuda.mem_get_info()
    if free < 2.2 * stream_bytes:
        stream_bytes = max(GiB // 4, int(free / 2.5) // GiB * GiB or GiB // 4)  # a small GPU: the largest that fits
    result = MeasuredCeilings(
        device=info.name, cc=tuple(info.cc), driver=info.driver_version, sm_count=info.sm_count,
        measured_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), quick=quick,
        versions={"torch": torch.__version__, "kernelab": __version__, "cuda": str(torch.version.cuda)},
        nominal=spec.to_dict(),
    )
    streams = [w for w in which if w in ("copy", "read", "write")]
    if streams:
        for e in _streams(spec, stream_bytes, streams, quick):
            result.entries[e.name] = e
    for w in which:
        if w.startswith("gemm_"):
            e = _gemm(spec, w.split("_", 1)[1], gemm_n, quick)
            result.entries[e.name] = e
    return result


def get_ceilings(*, refresh: bool = False, quick: bool = False, store: bool = True) -> MeasuredCeilings:
    """The `kernelab ceilings` backend: the cached ceilings of this GPU and driver, measured
    when missing (or when `refresh`). A quick measurement never stands in for a full one."""
    if not refresh:
        cached = load_cached()
        if cached is not None and (quick or not cached.quick):
            return cached
    m = measure_ceilings(quick=quick)
    if store:
        save(m)
    return m
