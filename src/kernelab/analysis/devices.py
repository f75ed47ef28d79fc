"""Nominal device peaks: memory bandwidth, FLOP/s per unit, L2, SMs.

Numbers come from NVIDIA's datasheets and whitepapers (cited per entry), DENSE tensor-core
rates: datasheets print the 2:4-sparse rate with an asterisk, which is twice the dense one;
we halve it. The GeForce RTX 4090 runs fp16/bf16/fp8 tensor math at half rate when it
accumulates in fp32 (Ada whitepaper, appendix); kernels and cuBLAS accumulate in fp32, so
that is the rate we list. These are the ceilings a roofline is drawn against: a measured
ceiling (kernelab ceilings) is what a kernel can really reach, usually 75-95% of these.

`spec_for()` prefers what the live GPU says: SM count, L2 size, memory size, and bandwidth
from its memory clock x bus width (DeviceInfo.nominal_bandwidth); FLOP/s scale with the SM
count when a part has fewer SMs than its table entry. A GPU missing from the table gets a
spec derived from its architecture's per-SM, per-clock rates x SMs x max SM clock, marked
`source="derived"` (approximate). Without a GPU the default device is the H200, the one
this project measures on.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, replace

from .errors import AnalysisError

UNITS = ("fp32", "tf32", "bf16", "fp16", "fp8")
UNIT_ALIASES = {
    "float32": "fp32", "f32": "fp32", "float": "fp32",
    "tensorfloat32": "tf32",
    "bfloat16": "bf16",
    "float16": "fp16", "f16": "fp16", "half": "fp16",
    "float8": "fp8", "e4m3": "fp8", "e5m2": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8",
    "float8_e4m3fn": "fp8", "float8_e5m2": "fp8",
}
DEFAULT_DEVICE = "H200"

T = 1e12
MiB = 1 << 20


def unit_name(unit: str) -> str:
    u = str(unit).strip().lower()
    u = UNIT_ALIASES.get(u, u)
    if u not in UNITS:
        raise AnalysisError(f"unknown FLOP unit {unit!r}; use one of {', '.join(UNITS)}")
    return u


@dataclass(frozen=True)
class DeviceSpec:
    """One GPU's nominal ceilings. Bandwidth in bytes/s, FLOP/s per unit (dense)."""

    name: str
    cc: tuple[int, int]
    sm_count: int
    l2_bytes: int
    memory_bytes: int
    memory_bandwidth: float  # bytes/s
    peak_flops: dict[str, float]  # unit -> FLOP/s; a unit the GPU lacks is absent
    sm_clock_mhz: float = 0.0  # max boost clock the FLOP/s figures assume (0 = not given)
    source: str = "datasheet"  # "datasheet", "datasheet+live" or "derived"
    reference: str = ""  # where the numbers come from
    aliases: tuple[str, ...] = field(default=(), repr=False)

    def peak(self, unit: str) -> float:
        u = unit_name(unit)
        if u not in self.peak_flops:
            raise AnalysisError(f"{self.name} ({self.cc[0]}.{self.cc[1]}) has no {u} tensor-core or CUDA-core rate "
                                f"(it has: {', '.join(self.peak_flops)}). An fp8 kernel needs 8.9 or later.")
        return self.peak_flops[u]

    def has(self, unit: str) -> bool:
        return unit_name(unit) in self.peak_flops

    def ridge_point(self, unit: str) -> float:
        """FLOP/byte at which the compute roof meets the bandwidth slope."""
        return self.peak(unit) / self.memory_bandwidth

    @property
    def arch(self) -> str:
        return f"sm_{self.cc[0]}{self.cc[1]}"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["cc"] = list(self.cc)
        d.pop("aliases")
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "DeviceSpec":
        d = dict(d)
        d["cc"] = tuple(d["cc"])
        d.pop("arch", None)
        return cls(**d)


DEVICES: dict[str, DeviceSpec] = {s.name: s for s in (
    DeviceSpec(
        "A100 SXM4 80GB", (8, 0), sm_count=108, l2_bytes=40 * MiB, memory_bytes=80 * 10**9,
        memory_bandwidth=2039e9,
        peak_flops={"fp32": 19.5 * T, "tf32": 156 * T, "bf16": 312 * T, "fp16": 312 * T},
        sm_clock_mhz=1410,
        reference="NVIDIA A100 datasheet (80GB SXM: 2,039 GB/s; TF32 156, BF16/FP16 312 TFLOPS dense)",
        aliases=("a100", "a100 sxm", "a100 sxm4", "a100 sxm4 80gb", "a100 80gb", "a100 sxm4 80gb"),
    ),
    DeviceSpec(
        "H100 SXM", (9, 0), sm_count=132, l2_bytes=50 * MiB, memory_bytes=80 * 10**9,
        memory_bandwidth=3.35e12,
        peak_flops={"fp32": 67 * T, "tf32": 494.5 * T, "bf16": 989.5 * T, "fp16": 989.5 * T, "fp8": 1979 * T},
        sm_clock_mhz=1980,
        reference="NVIDIA H100 datasheet, SXM5 (3.35 TB/s; TF32 989*, BF16/FP16 1,979*, FP8 3,958* sparse; halved)",
        aliases=("h100", "h100 sxm", "h100 sxm5", "h100 sxm5 80gb", "h100 80gb hbm3"),
    ),
    DeviceSpec(
        "H100 PCIe", (9, 0), sm_count=114, l2_bytes=50 * MiB, memory_bytes=80 * 10**9,
        memory_bandwidth=2.0e12,
        peak_flops={"fp32": 51 * T, "tf32": 378 * T, "bf16": 756.5 * T, "fp16": 756.5 * T, "fp8": 1513 * T},
        sm_clock_mhz=1755,
        reference="NVIDIA H100 datasheet, PCIe (2 TB/s; TF32 756*, BF16/FP16 1,513*, FP8 3,026* sparse; halved)",
        aliases=("h100 pcie", "h100 pcie 80gb"),
    ),
    DeviceSpec(
        "H200", (9, 0), sm_count=132, l2_bytes=60 * MiB, memory_bytes=141 * 10**9,
        memory_bandwidth=4.8e12,
        peak_flops={"fp32": 67 * T, "tf32": 494.5 * T, "bf16": 989.5 * T, "fp16": 989.5 * T, "fp8": 1979 * T},
        sm_clock_mhz=1980,
        reference="NVIDIA H200 datasheet, SXM (4.8 TB/s HBM3e; same tensor rates as H100 SXM, sparse halved); "
                  "L2 60 MiB as the lent H200 reports it (ANCHORS.md)",
        aliases=("h200", "h200 sxm", "h200 141gb", "h200 sxm 141gb"),
    ),
    DeviceSpec(
        "L40S", (8, 9), sm_count=142, l2_bytes=96 * MiB, memory_bytes=48 * 10**9,
        memory_bandwidth=864e9,
        peak_flops={"fp32": 91.6 * T, "tf32": 183 * T, "bf16": 362.05 * T, "fp16": 362.05 * T, "fp8": 733 * T},
        sm_clock_mhz=2520,
        reference="NVIDIA L40S datasheet (864 GB/s; TF32 183, BF16/FP16 362.05, FP8 733 TFLOPS dense)",
        aliases=("l40s",),
    ),
    DeviceSpec(
        "RTX 4090", (8, 9), sm_count=128, l2_bytes=72 * MiB, memory_bytes=24 * 10**9,
        memory_bandwidth=1008e9,
        peak_flops={"fp32": 82.6 * T, "tf32": 82.6 * T, "bf16": 165.2 * T, "fp16": 165.2 * T, "fp8": 330.3 * T},
        sm_clock_mhz=2520,
        reference="NVIDIA Ada Lovelace whitepaper, appendix A (RTX 4090: 1,008 GB/s; FP32 82.6; dense tensor "
                  "TFLOPS with FP32 accumulate: TF32 82.6, BF16/FP16 165.2, FP8 330.3)",
        aliases=("rtx 4090", "geforce rtx 4090", "4090"),
    ),
    DeviceSpec(
        "B200", (10, 0), sm_count=148, l2_bytes=126 * MiB, memory_bytes=180 * 10**9,
        memory_bandwidth=8.0e12,
        peak_flops={"fp32": 75 * T, "tf32": 1125 * T, "bf16": 2250 * T, "fp16": 2250 * T, "fp8": 4500 * T},
        sm_clock_mhz=1965,
        reference="NVIDIA HGX B200 datasheet / 8 GPUs (8 TB/s; FP32 75; sparse TF32 2.25, BF16 4.5, FP8 9 PFLOPS "
                  "per GPU, halved). L2 is not in the datasheet: 126 MiB is approximate; the live value replaces it",
        aliases=("b200", "b200 sxm", "hgx b200"),
    ),
)}

# Dense FLOP per clock per SM by compute capability, for GPUs missing from the table
# (derived = rate x SMs x max SM clock). Datacenter rates; GeForce parts run fp16/bf16/fp8
# tensor math with fp32 accumulate at half these rates, so their derived peaks are high.
_PER_SM_PER_CLOCK: dict[tuple[int, int], dict[str, int]] = {
    (7, 5): {"fp32": 128, "fp16": 1024},
    (8, 0): {"fp32": 128, "tf32": 1024, "bf16": 2048, "fp16": 2048},
    (8, 6): {"fp32": 256, "tf32": 512, "bf16": 1024, "fp16": 1024},
    (8, 7): {"fp32": 256, "tf32": 512, "bf16": 1024, "fp16": 1024},
    (8, 9): {"fp32": 256, "tf32": 512, "bf16": 1024, "fp16": 1024, "fp8": 2048},
    (9, 0): {"fp32": 256, "tf32": 2048, "bf16": 4096, "fp16": 4096, "fp8": 8192},
    (10, 0): {"fp32": 256, "tf32": 4096, "bf16": 8192, "fp16": 8192, "fp8": 16384},
    (10, 3): {"fp32": 256, "tf32": 4096, "bf16": 8192, "fp16": 8192, "fp8": 16384},
    (12, 0): {"fp32": 256, "tf32": 512, "bf16": 1024, "fp16": 1024, "fp8": 2048},
}


def _norm(name: str) -> str:
    s = name.lower().replace("nvidia", " ").replace("geforce", " ")
    s = re.sub(r"[^a-z0-9]+", " ", s)
    return " ".join(s.split())


def spec_for_arch(arch) -> DeviceSpec | None:
    """The device a static report (kernelab inspect, no GPU) assumes for an arch ("sm_90", Arch, (9, 0)):
    the default (H200) for its cc, else the first listed with that cc (A100 for sm_80), else None (also
    for a string that is no arch)."""
    from ..gpu import Arch, KernelabError

    try:
        cc = Arch.parse(arch).cc
    except KernelabError:
        return None
    if DEVICES[DEFAULT_DEVICE].cc == cc:
        return DEVICES[DEFAULT_DEVICE]
    return next((d for d in DEVICES.values() if d.cc == cc), None)


def lookup(name: str) -> DeviceSpec | None:
    """The table entry for a device name ("H100", "NVIDIA H100 80GB HBM3", "a100-sxm4-80gb"), or None.

    An exact alias wins; otherwise the longest alias of two words or more that appears as
    whole words in the name. A bare family name ("h100", "h200") only matches exactly, so
    "NVIDIA H100 NVL" or "NVIDIA H200 NVL" (other clocks and power) are not taken for the
    SXM parts; they get a derived spec."""
    n = _norm(name)
    if not n:
        return None
    for spec in DEVICES.values():
        if n == _norm(spec.name) or n in (_norm(a) for a in spec.aliases):
            return spec
    best, best_len = None, 0
    padded = f" {n} "
    for spec in DEVICES.values():
        for alias in (spec.name, *spec.aliases):
            a = _norm(alias)
            if " " in a and len(a) > best_len and f" {a} " in padded:
                best, best_len = spec, len(a)
    return best


def derived_spec(name: str, cc: tuple[int, int], sm_count: int, sm_clock_mhz: float, bandwidth: float,
                 l2_bytes: int = 0, memory_bytes: int = 0) -> DeviceSpec:
    """A spec from per-SM rates for a GPU the table lacks (approximate)."""
    rates = _PER_SM_PER_CLOCK.get(tuple(cc))
    if rates is None:
        older = [k for k in _PER_SM_PER_CLOCK if k <= tuple(cc)]
        rates = _PER_SM_PER_CLOCK[max(older)] if older else {"fp32": 128}
    flops = {u: r * sm_count * sm_clock_mhz * 1e6 for u, r in rates.items()}
    return DeviceSpec(name, tuple(cc), sm_count, l2_bytes, memory_bytes, bandwidth, flops, sm_clock_mhz,
                      source="derived", reference="per-SM per-clock rates of its architecture x SMs x max SM clock")


def with_live(spec: DeviceSpec, info) -> DeviceSpec:
    """`spec` with what the live GPU (DeviceInfo) reports taking precedence."""
    scale = info.sm_count / spec.sm_count if spec.sm_count else 1.0
    bandwidth = info.nominal_bandwidth if info.nominal_bandwidth > 0 else spec.memory_bandwidth
    return replace(
        spec,
        name=info.name,
        cc=tuple(info.cc),
        sm_count=info.sm_count,
        l2_bytes=info.l2_bytes or spec.l2_bytes,
        memory_bytes=info.total_memory_bytes or spec.memory_bytes,
        memory_bandwidth=bandwidth,
        peak_flops={u: v * scale for u, v in spec.peak_flops.items()},
        source="datasheet+live",
        reference=f"{spec.name}: " + spec.reference + f"; live: {info.sm_count} SMs, L2 {info.l2_bytes / MiB:.0f} MiB, "
                                   f"bandwidth {bandwidth / 1e12:.3f} TB/s from memory clock x bus width",
    )


def spec_for(device=None) -> DeviceSpec:
    """The DeviceSpec for a live GPU (DeviceInfo), a device name, or, with None, the current
    GPU (or the H200 where there is none)."""
    if device is None:
        from ..gpu import has_gpu

        if has_gpu():
            from ..gpu import device_info

            device = device_info()
        else:
            return DEVICES[DEFAULT_DEVICE]
    if isinstance(device, DeviceSpec):
        return device
    if isinstance(device, str):
        spec = lookup(device)
        if spec is None:
            known = ", ".join(DEVICES)
            raise AnalysisError(f"unknown device {device!r}; known: {known}. On a GPU, spec_for() reads the live one.")
        return spec
    if hasattr(device, "sm_count") and hasattr(device, "nominal_bandwidth"):
        spec = lookup(device.name)
        if spec is not None and tuple(spec.cc) == tuple(device.cc):
            return with_live(spec, device)
        return derived_spec(device.name, tuple(device.cc), device.sm_count, device.sm_clock_max_mhz,
                            device.nominal_bandwidth, device.l2_bytes, device.total_memory_bytes)
    raise AnalysisError(f"spec_for() takes a device name, a kernelab.gpu.DeviceInfo or None, got {type(device).__name__}")
