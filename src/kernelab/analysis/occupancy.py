"""The CUDA occupancy calculator, in pure Python: how many blocks of a kernel an SM holds.

The rules are those of `cuda_occupancy.h` (CUDA 13.0, /usr/local/cuda/include), which the
driver's cuOccupancyMaxActiveBlocksPerMultiprocessor follows; each step below names the
header function it mirrors. For one block of `threads` threads:

- warps:      warps per block = ceil(threads / 32); blocks <= max warps per SM // that.
- blocks:     a hard cap per SM (16, 24 or 32 by architecture).
- registers:  a warp gets regs_per_thread * 32 registers rounded up to 256. The register
              file is split in 4 sub-partitions (16384 registers each) and a warp lives in
              one, so the warps that fit are 4 * (16384 // per-warp allocation), and
              blocks <= that // warps per block. A block whose warps, rounded up to a
              multiple of 4, need more than 65536 registers cannot launch at all.
- shared mem: per block = static + dynamic + the driver's reserve (1 KiB on 8.0 and
              later), rounded up to 128 B (256 B on 7.x); blocks <= the SM's shared
              memory // that. More than the per-block limit (48 KiB, or the opt-in
              maximum once the kernel opted in) cannot launch.
- barriers:   on 9.0 and later, a kernel using N named barriers (ptxas: "used N
              barriers") fits at most (2 * block cap, or 1 * on 8.6/8.9/12.x) // N blocks.

Carve-out: shared memory and L1 share one array per SM, split in a few fixed sizes.
With no preference (the default, CU_SHAREDMEM_CARVEOUT_DEFAULT) the calculation uses the
largest carve-out, so the carve-out never limits occupancy; the driver then configures,
per launch, a carve-out big enough for the resident blocks (the tuning guides: "the driver
automatically configures the shared memory capacity for each kernel to avoid shared memory
occupancy bottlenecks"). We report the smallest supported carve-out that holds them as
`carveout_bytes`. A preference in percent (cudaFuncAttributePreferredSharedMemoryCarveout)
is rounded up to a supported size and used as long as one block fits; otherwise the driver
ignores it and takes the smallest size that fits one block.

Seeds' worked example (seeds/003): H100 (9.0), 64 KiB shared memory per block, 40
registers, 256 threads: (64 + 1) KiB per block, 228 // 65 = 3 blocks, 24 of 64 warps, 37.5%.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from .errors import AnalysisError

KiB = 1024
WARP = 32
UNLIMITED = 2**31 - 1  # INT_MAX, what cuda_occupancy.h uses for "this resource sets no limit"

LIMITERS = ("warps", "registers", "shared_memory", "blocks", "barriers")


@dataclass(frozen=True)
class ArchLimits:
    """Per-SM resources of one compute capability, as the CUDA Programming Guide's table and
    cuda_occupancy.h (CUDA 13.0) give them. The device's own attributes (DeviceInfo)
    agree on the GPUs we measured; `limits_from_device` builds one from them."""

    cc: tuple[int, int]
    family: str
    max_threads_per_sm: int
    max_blocks_per_sm: int
    smem_per_sm: int  # the largest carve-out (cudaDevAttrMaxSharedMemoryPerMultiprocessor)
    smem_per_block_optin: int  # cudaDevAttrMaxSharedMemoryPerBlockOptin
    carveouts_kib: tuple[int, ...]  # supported shared-memory sizes per SM (cudaOccAlignUpShmemSizeVoltaPlus)
    smem_reserved_per_block: int  # the driver's per-block reserve (0 before Ampere, 1 KiB since)
    smem_granularity: int  # allocation unit of shared memory per block
    barrier_slots_factor: int  # named-barrier slots per SM = factor * max_blocks_per_sm (9.0+)
    regs_per_sm: int = 65536
    regs_per_block: int = 65536
    max_regs_per_thread: int = 255
    reg_alloc_unit: int = 256  # registers are given to a warp in units of 256
    sub_partitions: int = 4  # register file sub-partitions (one warp scheduler each)
    smem_per_block_default: int = 48 * KiB  # without the opt-in attribute
    max_threads_per_block: int = 1024
    warp_size: int = WARP

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size

    @property
    def arch(self) -> str:
        return f"sm_{self.cc[0]}{self.cc[1]}"

    def to_dict(self) -> dict:
        return asdict(self)


_VOLTA_PLUS_SIZES = (0, 8, 16, 32, 64, 100)  # KiB; 8.6, 8.9, 12.0
_GA100_SIZES = _VOLTA_PLUS_SIZES + (132, 164)  # 8.0
_HOPPER_SIZES = _GA100_SIZES + (196, 228)  # 9.0, 10.0

ARCH_LIMITS: dict[tuple[int, int], ArchLimits] = {
    (7, 5): ArchLimits((7, 5), "Turing", max_threads_per_sm=1024, max_blocks_per_sm=16, smem_per_sm=64 * KiB,
                       smem_per_block_optin=64 * KiB, carveouts_kib=(32, 64), smem_reserved_per_block=0,
                       smem_granularity=256, barrier_slots_factor=2),
    (8, 0): ArchLimits((8, 0), "Ampere GA100", max_threads_per_sm=2048, max_blocks_per_sm=32, smem_per_sm=164 * KiB,
                       smem_per_block_optin=163 * KiB, carveouts_kib=_GA100_SIZES, smem_reserved_per_block=KiB,
                       smem_granularity=128, barrier_slots_factor=2),
    (8, 6): ArchLimits((8, 6), "Ampere GA10x", max_threads_per_sm=1536, max_blocks_per_sm=16, smem_per_sm=100 * KiB,
                       smem_per_block_optin=99 * KiB, carveouts_kib=_VOLTA_PLUS_SIZES, smem_reserved_per_block=KiB,
                       smem_granularity=128, barrier_slots_factor=1),
    (8, 9): ArchLimits((8, 9), "Ada", max_threads_per_sm=1536, max_blocks_per_sm=24, smem_per_sm=100 * KiB,
                       smem_per_block_optin=99 * KiB, carveouts_kib=_VOLTA_PLUS_SIZES, smem_reserved_per_block=KiB,
                       smem_granularity=128, barrier_slots_factor=1),
    (9, 0): ArchLimits((9, 0), "Hopper", max_threads_per_sm=2048, max_blocks_per_sm=32, smem_per_sm=228 * KiB,
                       smem_per_block_optin=227 * KiB, carveouts_kib=_HOPPER_SIZES, smem_reserved_per_block=KiB,
                       smem_granularity=128, barrier_slots_factor=2),
    (10, 0): ArchLimits((10, 0), "Blackwell (datacenter)", max_threads_per_sm=2048, max_blocks_per_sm=32,
                        smem_per_sm=228 * KiB, smem_per_block_optin=227 * KiB, carveouts_kib=_HOPPER_SIZES,
                        smem_reserved_per_block=KiB, smem_granularity=128, barrier_slots_factor=2),
    # 12.x: 24 blocks per SM and 1 barrier slot per block slot in cuda_occupancy.h of CUDA 13.0.
    (12, 0): ArchLimits((12, 0), "Blackwell (GeForce/workstation)", max_threads_per_sm=1536, max_blocks_per_sm=24,
                        smem_per_sm=100 * KiB, smem_per_block_optin=99 * KiB, carveouts_kib=_VOLTA_PLUS_SIZES,
                        smem_reserved_per_block=KiB, smem_granularity=128, barrier_slots_factor=1),
}


def _cc(value) -> tuple[int, int]:
    """(major, minor) from (9, 0), "9.0", "sm_90", "sm_90a", 90, an Arch or a DeviceInfo."""
    if hasattr(value, "cc") and isinstance(value.cc, tuple):
        return tuple(value.cc)  # Arch, DeviceInfo, DeviceSpec, ArchLimits
    if isinstance(value, tuple) and len(value) == 2:
        return int(value[0]), int(value[1])
    from ..gpu.arch import Arch
    from ..gpu.errors import KernelabError

    try:
        return Arch.parse(str(value)).cc
    except KernelabError:
        raise AnalysisError(f"not a compute capability: {value!r}. Write it as 9.0, (9, 0), 90 or sm_90.") from None


def limits_for(cc) -> ArchLimits:
    """The table entry for `cc` (anything _cc accepts, or an ArchLimits, returned as is)."""
    if isinstance(cc, ArchLimits):
        return cc
    key = _cc(cc)
    if key not in ARCH_LIMITS:
        known = ", ".join(f"{a}.{b}" for a, b in ARCH_LIMITS)
        raise AnalysisError(f"no occupancy limits for compute capability {key[0]}.{key[1]} (known: {known}). "
                            "On a GPU, pass limits_from_device(device_info()) instead.")
    return ARCH_LIMITS[key]


def limits_from_device(info) -> ArchLimits:
    """Limits of a live GPU (kernelab.gpu.DeviceInfo): its attributes over the table's."""
    base = ARCH_LIMITS.get(tuple(info.cc))
    if base is None:  # an architecture newer than the table: take the closest older one's rules
        older = [k for k in ARCH_LIMITS if k <= tuple(info.cc)]
        if not older:
            raise AnalysisError(f"compute capability {info.cc} is older than any kernelab knows (7.5)")
        base = replace(ARCH_LIMITS[max(older)], cc=tuple(info.cc), family="unknown (rules of the closest older)")
    return replace(
        base,
        max_threads_per_sm=info.max_threads_per_sm,
        max_blocks_per_sm=info.max_blocks_per_sm,
        smem_per_sm=info.smem_per_sm,
        smem_per_block_optin=info.smem_per_block_optin,
        smem_per_block_default=info.smem_per_block,
        regs_per_sm=info.regs_per_sm,
        regs_per_block=info.regs_per_block,
        max_threads_per_block=info.max_threads_per_block,
        warp_size=info.warp_size,
    )


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def carveout_for(limits: ArchLimits, nbytes: int) -> int | None:
    """The smallest supported shared-memory carve-out holding `nbytes`, or None if none does."""
    for kib in limits.carveouts_kib:
        if nbytes <= kib * KiB:
            return kib * KiB
    return None


@dataclass(frozen=True)
class Occupancy:
    """What an SM holds of one kernel launch configuration, and why not more."""

    cc: tuple[int, int]
    threads: int
    regs_per_thread: int
    smem_per_block: int  # bytes the kernel asks for: static + dynamic (the driver's reserve is extra)
    blocks_per_sm: int
    active_warps: int  # resident warps per SM
    max_warps: int  # the SM's warp slots
    occupancy: float  # active_warps / max_warps, 0..1
    limiter: str  # the binding limit: warps, registers, shared_memory, blocks or barriers
    limiters: tuple[str, ...]  # every limit that binds (ties)
    block_limits: dict[str, int | None]  # blocks per SM each resource allows; None = no limit
    warps_per_block: int
    regs_per_warp: int  # allocated: regs * 32 rounded up to 256
    regs_per_block: int  # allocated
    smem_alloc_per_block: int  # allocated: static + dynamic + reserve, rounded to the granularity
    carveout_bytes: int | None  # shared memory configured per SM (see the module docstring)
    barriers: int = 1
    reason: str | None = None  # why nothing fits, when blocks_per_sm == 0
    limits: ArchLimits | None = field(default=None, repr=False, compare=False)

    @property
    def percent(self) -> float:
        return 100.0 * self.occupancy

    @property
    def active_threads(self) -> int:
        return self.blocks_per_sm * self.threads

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("limits")
        d["cc"] = list(self.cc)
        d["limiters"] = list(self.limiters)
        return d

    def summary(self) -> str:
        if self.blocks_per_sm == 0:
            return f"does not fit on an SM: {self.reason}"
        return (f"{self.blocks_per_sm} blocks/SM x {self.warps_per_block} warps = {self.active_warps}/{self.max_warps} "
                f"warps ({self.percent:.1f}%), limited by {self.limiter.replace('_', ' ')}")


def occupancy(cc, threads: int, regs_per_thread: int, smem_per_block: int = 0, carveout: int | None = None, *,
              barriers: int = 1, opt_in: bool = True, max_threads: int | None = None) -> Occupancy:
    """Blocks per SM, occupancy and the binding limit of a launch configuration.

    cc:             compute capability (9.0, "sm_90", (9, 0)) or an ArchLimits (limits_from_device).
    threads:        threads per block.
    regs_per_thread: ptxas "Used N registers" (kernel attribute num_regs).
    smem_per_block: static + dynamic shared memory in bytes, without the driver's reserve.
    carveout:       shared-memory carve-out preference in percent (0..100), None = no preference.
    barriers:       named barriers the kernel uses (ptxas "used N barriers"); only 9.0+ counts them.
    opt_in:         the kernel raised its dynamic shared-memory limit to the opt-in maximum
                    (kernelab.gpu does it for every launch that asks for more than 48 KiB);
                    False: the per-block limit is 48 KiB.
    max_threads:    the kernel's own block-size limit (__launch_bounds__; the function attribute
                    max_threads_per_block); a larger block cannot launch.
    """
    lim = limits_for(cc)
    for name, v in (("threads", threads), ("regs_per_thread", regs_per_thread), ("smem_per_block", smem_per_block),
                    ("barriers", barriers)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise AnalysisError(f"{name} must be an int, got {v!r}")
    if threads < 1:
        raise AnalysisError(f"threads per block must be at least 1, got {threads}")
    if regs_per_thread < 0 or regs_per_thread > lim.max_regs_per_thread:
        raise AnalysisError(f"regs_per_thread must be 0..{lim.max_regs_per_thread} (ptxas never allocates more), "
                            f"got {regs_per_thread}")
    if smem_per_block < 0 or barriers < 0:
        raise AnalysisError("smem_per_block and barriers cannot be negative")
    if carveout is not None and not (isinstance(carveout, int) and 0 <= carveout <= 100):
        raise AnalysisError(f"carveout is a percentage of the SM's shared memory, 0..100 (or None), got {carveout!r}")

    reasons: dict[str, str] = {}
    warps_per_block = -(-threads // lim.warp_size)

    # cudaOccMaxBlocksPerSMWarpsLimit
    if threads > lim.max_threads_per_block:
        by_warps = 0
        reasons["warps"] = f"{threads} threads exceed the {lim.max_threads_per_block}-thread limit of a block"
    elif max_threads is not None and threads > max_threads:
        by_warps = 0
        reasons["warps"] = (f"{threads} threads exceed the kernel's own limit of {max_threads} "
                            "(__launch_bounds__ or its register count)")
    else:
        by_warps = lim.max_warps_per_sm // warps_per_block

    # cudaOccMaxBlocksPerMultiprocessor
    by_blocks = lim.max_blocks_per_sm

    # cudaOccMaxBlocksPerSMRegsLimit
    regs_per_warp = _round_up(regs_per_thread * lim.warp_size, lim.reg_alloc_unit)
    regs_per_block = regs_per_warp * warps_per_block
    regs_assumed = regs_per_warp * _round_up(warps_per_block, lim.sub_partitions)  # the hardware's launch check
    if regs_assumed > lim.regs_per_block or regs_per_block > lim.regs_per_block:
        by_regs: int | None = 0
        reasons["registers"] = (f"{regs_per_thread} registers x {threads} threads need {regs_assumed} registers "
                                f"(per-warp allocation {regs_per_warp}, warps rounded up to {lim.sub_partitions}); "
                                f"a block may have {lim.regs_per_block}")
    elif regs_per_warp == 0:
        by_regs = None
    else:
        warps_per_sub = (lim.regs_per_sm // lim.sub_partitions) // regs_per_warp
        by_regs = (warps_per_sub * lim.sub_partitions) // warps_per_block

    # cudaOccMaxBlocksPerSMSmemLimit
    smem_alloc = _round_up(smem_per_block + lim.smem_reserved_per_block, lim.smem_granularity)
    per_block_limit = (lim.smem_per_block_optin if opt_in else lim.smem_per_block_default) + lim.smem_reserved_per_block
    if carveout is None:
        preference = carveout_for(lim, lim.smem_per_sm)
    else:
        preference = carveout_for(lim, carveout * lim.smem_per_sm // 100)
    if preference is None:  # smem_per_sm of a live device beyond the known sizes: take it as is
        preference = lim.smem_per_sm
    if smem_alloc > per_block_limit:
        by_smem: int | None = 0
        what = "the opt-in maximum" if opt_in else "the default limit (opt in to go further)"
        reasons["shared_memory"] = (f"{smem_per_block} B of shared memory (+{lim.smem_reserved_per_block} B reserve) "
                                    f"exceed {what} of {per_block_limit - lim.smem_reserved_per_block} B per block")
        smem_used = preference
    else:
        if preference >= smem_alloc:
            smem_used = preference
        else:  # the preference cannot hold one block: the driver ignores it
            smem_used = carveout_for(lim, smem_alloc) or smem_alloc
        by_smem = smem_used // smem_alloc if smem_alloc > 0 else None

    limits: dict[str, int | None] = {"warps": by_warps, "registers": by_regs, "shared_memory": by_smem,
                                     "blocks": by_blocks, "barriers": None}
    blocks = min(UNLIMITED if v is None else v for v in limits.values())

    # cudaOccMaxBlocksPerSMBlockBarrierLimit: Hopper and later only
    if lim.cc >= (9, 0) and barriers > 0:
        by_bars = (lim.barrier_slots_factor * by_blocks) // barriers
        limits["barriers"] = by_bars
        if by_bars < blocks:
            reasons.setdefault("barriers", f"{barriers} named barriers per block; the SM has "
                                           f"{lim.barrier_slots_factor * by_blocks} barrier slots")
        blocks = min(blocks, by_bars)

    binding = tuple(k for k in LIMITERS if limits[k] is not None and limits[k] == blocks)
    active_warps = blocks * warps_per_block
    if blocks == 0:
        reason = "; ".join(reasons[k] for k in binding if k in reasons) or "no resources"
    else:
        reason = None
    if carveout is None and blocks > 0:
        carve = carveout_for(lim, blocks * smem_alloc) or smem_used
    else:
        carve = smem_used
    return Occupancy(
        cc=lim.cc, threads=threads, regs_per_thread=regs_per_thread, smem_per_block=smem_per_block,
        blocks_per_sm=blocks, active_warps=active_warps, max_warps=lim.max_warps_per_sm,
        occupancy=active_warps / lim.max_warps_per_sm, limiter=binding[0] if binding else "none", limiters=binding,
        block_limits=limits, warps_per_block=warps_per_block, regs_per_warp=regs_per_warp,
        regs_per_block=regs_per_block, smem_alloc_per_block=smem_alloc, carveout_bytes=carve, barriers=barriers,
        reason=reason, limits=lim,
    )


def occupancy_for_kernel(resources, cc, threads: int, dynamic_smem: int = 0, **kw) -> Occupancy:
    """Occupancy of a compiled kernel (kernelab.gpu.KernelResources from the ptxas report)."""
    return occupancy(cc, threads, resources.registers, resources.shared_static + dynamic_smem,
                     barriers=resources.barriers, **kw)


# ---- what-if ----------------------------------------------------------------------------

DEFAULT_BLOCK_SIZES = tuple(range(32, 1025, 32))


@dataclass
class WhatIf:
    """Occupancy as one of block size, registers or shared memory varies, the others fixed.

    The same three sweeps as NVIDIA's occupancy calculator spreadsheet draws."""

    base: Occupancy
    by_block_size: list[Occupancy]
    by_registers: list[Occupancy]
    by_shared_memory: list[Occupancy]

    def rows(self) -> list[dict]:
        """Flat rows for a table: {"vary", "value", "blocks_per_sm", "active_warps", "occupancy", "limiter"}."""
        out = []
        for vary, items, attr in (("threads", self.by_block_size, "threads"),
                                  ("registers", self.by_registers, "regs_per_thread"),
                                  ("shared_memory", self.by_shared_memory, "smem_per_block")):
            for o in items:
                out.append({"vary": vary, "value": getattr(o, attr), "blocks_per_sm": o.blocks_per_sm,
                            "active_warps": o.active_warps, "occupancy": o.occupancy, "limiter": o.limiter,
                            "current": getattr(o, attr) == getattr(self.base, attr)})
        return out

    def to_dict(self) -> dict:
        return {"base": self.base.to_dict(), "rows": self.rows()}


def _register_steps(lim: ArchLimits) -> list[int]:
    # Allocation changes every 8 registers (8 * 32 = 256); the top of each step is what a kernel can use.
    steps = list(range(8, lim.max_regs_per_thread + 1, 8))
    if steps[-1] != lim.max_regs_per_thread:
        steps.append(lim.max_regs_per_thread)
    return steps


def _smem_steps(lim: ArchLimits, opt_in: bool) -> list[int]:
    """For each possible block count, the most shared memory per block that still gives it."""
    cap = (lim.smem_per_block_optin if opt_in else lim.smem_per_block_default)
    values = {0}
    for b in range(1, lim.max_blocks_per_sm + 1):
        per_block = (lim.smem_per_sm // b) // lim.smem_granularity * lim.smem_granularity - lim.smem_reserved_per_block
        if 0 < per_block <= cap:
            values.add(per_block)
    values.add(cap)
    return sorted(values)


def what_if(cc, threads: int, regs_per_thread: int, smem_per_block: int = 0, carveout: int | None = None, *,
            block_sizes=DEFAULT_BLOCK_SIZES, registers=None, shared_memory=None, barriers: int = 1,
            opt_in: bool = True) -> WhatIf:
    """Sweep block size, registers and shared memory around one configuration.

    Defaults: block sizes 32..1024 by 32; registers at every allocation step (8, 16, ..., 255);
    shared memory at the largest size per block that still allows 1, 2, 3, ... blocks per SM.
    The current value is always included."""
    lim = limits_for(cc)
    kw = dict(carveout=carveout, barriers=barriers, opt_in=opt_in)
    base = occupancy(lim, threads, regs_per_thread, smem_per_block, **kw)
    sizes = sorted(set(block_sizes) | {threads})
    regs = sorted(set(registers if registers is not None else _register_steps(lim)) | {regs_per_thread})
    smem = sorted(set(shared_memory if shared_memory is not None else _smem_steps(lim, opt_in)) | {smem_per_block})
    return WhatIf(
        base=base,
        by_block_size=[occupancy(lim, t, regs_per_thread, smem_per_block, **kw) for t in sizes],
        by_registers=[occupancy(lim, threads, r, smem_per_block, **kw) for r in regs],
        by_shared_memory=[occupancy(lim, threads, regs_per_thread, s, **kw) for s in smem],
    )


def max_regs_for_blocks(cc, threads: int, blocks: int) -> int | None:
    """The most registers per thread that still let `blocks` blocks of `threads` threads reside
    (registers alone considered), or None if even 0 registers cannot (other limits bind)."""
    lim = limits_for(cc)
    best = None
    for r in range(0, lim.max_regs_per_thread + 1):
        o = occupancy(lim, threads, r, 0)
        by_regs = o.block_limits["registers"]
        if by_regs is None or by_regs >= blocks:
            best = r
        else:
            break
    return best
