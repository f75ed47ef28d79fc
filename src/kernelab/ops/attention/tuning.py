"""Tuning knobs of the attention kernels v1 and v2: their defaults, the launch geometry each
setting implies, and the configurations scripts/sweep_attention.py builds and times.

The knobs are `#ifndef NAME / #define NAME default` macros at the top of v1_fa2_mma.cu and
v2_wgmma_pingpong.cu (their headers say what each one does). The defaults are the code that was
measured (the same SASS as before the knobs existed), and KNOBS below must equal them: a CPU test
reads them back from the sources. Every build of a library variant gets EXPECT_BLOCK,
EXPECT_BLOCK_M, EXPECT_SMEM_D64 and EXPECT_SMEM_D128 from its header (op.defines), and the
kernels static_assert their macros against those, so a header and its macros cannot drift apart;
the sweep passes the values `geometry()` computes, so this module cannot drift from the kernels
either.

    from kernelab.ops.attention import tuning
    g = tuning.geometry("v2_wgmma_pingpong", {"BLOCK_N": 176})   # Geometry(block=384, block_m=128, ...)
    defines = tuning.build_defines("v2_wgmma_pingpong", {"BLOCK_N": 176})  # knobs + EXPECT_*
    for cfg in tuning.SWEEP: ...                                  # Config(name, variant, overrides, why)

To promote a configuration, copy the kernel to a new variant (v3_....cu), set its #ifndef
defaults to the configuration, and write its header's @block / @block_m / @smem_d64 / @smem_d128
from `geometry()`: the EXPECT_* asserts refuse a header that disagrees.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).parent

V1 = "v1_fa2_mma"
V2 = "v2_wgmma_pingpong"
V3 = "v3_wgmma_tma"

# name -> default, in the order the sources define them.
KNOBS: dict[str, dict[str, int]] = {
    V1: {"WARPS": 4, "WARP_M": 32, "Q_IN_REGS": 0, "BLOCK_N": 32, "STAGES": 3, "MIN_BLOCKS": 2, "RESCALE_THRESHOLD": 8},
    V2: {"BLOCK_N": 128, "STAGES_D128": 2, "STAGES_D64": 3, "PRODUCER_REGS": 40, "CONSUMER_REGS": 232,
         "PINGPONG": 1, "INTRA_WG_OVERLAP": 1, "ORDER_SOFTMAX": 0, "SOFTMAX_ILP": 1, "RESCALE_THRESHOLD": -1},
    V3: {"BLOCK_N": 128, "STAGES_D128": 2, "STAGES_D64": 3, "PRODUCER_REGS": 24, "CONSUMER_REGS": 240,
         "PINGPONG": 1, "INTRA_WG_OVERLAP": 1, "ORDER_SOFTMAX": 0, "SOFTMAX_ILP": 1, "RESCALE_THRESHOLD": -1,
         "PERSISTENT": 1},
}
# The arch each family is built for here and in the sweep (v2 is sm_90a-only; v1 runs from sm_80,
# and the H200 needs an sm_90 cubin).
ARCHS = {V1: ("sm_80", "sm_90"), V2: ("sm_90a",), V3: ("sm_90a",)}

SMEM_OPTIN_SM90 = 227 * 1024  # the most one block may ask for on sm_90 (232448 B)
REGS_PER_SM = 65536
V2_THREADS = 384
V2_ENTRY_REGS = 168  # __launch_bounds__(384, 1): 65536 / 384 rounded down to a multiple of 8


@dataclass(frozen=True)
class Geometry:
    """How the host launches one setting: threads per block, query rows per block (grid.x =
    ceil(S / block_m), grid.y = B * H), dynamic shared memory per head dim."""

    block: int
    block_m: int
    smem_d64: int
    smem_d128: int

    def smem(self, head_dim: int) -> int:
        return {64: self.smem_d64, 128: self.smem_d128}[head_dim]

    def to_dict(self) -> dict:
        return {"block": self.block, "block_m": self.block_m, "smem_d64": self.smem_d64, "smem_d128": self.smem_d128}


def knobs(variant: str, overrides: dict | None = None) -> dict[str, int]:
    """The full knob setting: defaults updated by `overrides` (unknown names are an error)."""
    if variant not in KNOBS:
        raise KeyError(f"attention variant {variant!r} has no tuning knobs (tunable: {', '.join(KNOBS)})")
    out = dict(KNOBS[variant])
    for k, v in (overrides or {}).items():
        if k not in out:
            raise KeyError(f"{variant} has no knob {k!r}; its knobs are {', '.join(out)}")
        out[k] = int(v)
    return out


def geometry(variant: str, overrides: dict | None = None) -> Geometry:
    """Launch geometry of `variant` built with `overrides` (mirrors the kernels' own arithmetic)."""
    k = knobs(variant, overrides)
    if variant == V1:
        bm = k["WARPS"] * k["WARP_M"]
        smem = {d: (bm + 2 * k["STAGES"] * k["BLOCK_N"]) * d * 2 for d in (64, 128)}
        return Geometry(block=k["WARPS"] * 32, block_m=bm, smem_d64=smem[64], smem_d128=smem[128])
    # v2 and v3: Q [128][D] | K, V [stages][BLOCK_N][D] | 128 B of mbarriers | 1024 B to align the base.
    smem = {}
    for d, stages in ((64, k["STAGES_D64"]), (128, k["STAGES_D128"])):
        smem[d] = 128 * d * 2 + 2 * stages * k["BLOCK_N"] * d * 2 + 128 + 1024
    return Geometry(block=V2_THREADS, block_m=128, smem_d64=smem[64], smem_d128=smem[128])


def problems(variant: str, overrides: dict | None = None) -> list[str]:
    """Why a setting cannot build or launch (empty when it can): the same limits the kernels
    static_assert, plus shared memory against the sm_90 per-block limit."""
    k = knobs(variant, overrides)
    g = geometry(variant, overrides)
    out = []
    if max(g.smem_d64, g.smem_d128) > SMEM_OPTIN_SM90:
        out.append(f"shared memory {max(g.smem_d64, g.smem_d128)} B is over the {SMEM_OPTIN_SM90} B a block may use")
    if variant in (V2, V3):
        if 128 * k["PRODUCER_REGS"] + 256 * k["CONSUMER_REGS"] > V2_THREADS * V2_ENTRY_REGS:
            out.append(f"setmaxnreg {k['PRODUCER_REGS']}/{k['CONSUMER_REGS']} needs more than the "
                       f"{V2_THREADS * V2_ENTRY_REGS} registers the block starts with")
        if k["BLOCK_N"] % 16 or not 64 <= k["BLOCK_N"] <= 192:
            out.append(f"BLOCK_N {k['BLOCK_N']} is not a multiple of 16 in 64..192")
    else:
        if k["WARP_M"] not in (16, 32):
            out.append(f"WARP_M {k['WARP_M']} is not 16 or 32")
        if k["BLOCK_N"] % 16 or not 32 <= k["BLOCK_N"] <= 128:
            out.append(f"BLOCK_N {k['BLOCK_N']} is not a multiple of 16 in 32..128")
        if g.block > 1024:
            out.append(f"{g.block} threads per block is over 1024")
    return out


def expect_defines(g: Geometry) -> dict[str, int]:
    """The EXPECT_* macros the kernels static_assert their own geometry against."""
    return {"EXPECT_BLOCK": g.block, "EXPECT_BLOCK_M": g.block_m, "EXPECT_SMEM_D64": g.smem_d64,
            "EXPECT_SMEM_D128": g.smem_d128}


def build_defines(variant: str, overrides: dict | None = None) -> dict[str, int]:
    """Macros for building `variant` with `overrides`: the overridden knobs (the rest keep the
    source's defaults) plus EXPECT_* from `geometry()`."""
    k = knobs(variant, overrides)
    changed = {name: v for name, v in k.items() if v != KNOBS[variant][name]}
    return {**changed, **expect_defines(geometry(variant, overrides))}


def header_defines(variant) -> dict[str, int]:
    """EXPECT_* from a Variant's header lines (@block, @block_m, @smem_d64, @smem_d128), for the
    ones it has: op.defines passes these to every build."""
    out = {}
    for key, macro in (("block", "EXPECT_BLOCK"), ("block_m", "EXPECT_BLOCK_M"), ("smem_d64", "EXPECT_SMEM_D64"),
                       ("smem_d128", "EXPECT_SMEM_D128")):
        if key in variant.meta:
            out[macro] = variant.meta_int(key)
    return out


_IFNDEF = re.compile(r"^#ifndef (\w+)\n#define \1 (-?\d+)\n#endif", re.MULTILINE)


def source_defaults(variant: str) -> dict[str, int]:
    """{knob: default} as written in the variant's .cu (`#ifndef X / #define X n / #endif`)."""
    text = (HERE / f"{variant}.cu").read_text()
    return {m[1]: int(m[2]) for m in _IFNDEF.finditer(text)}


# ---- the sweep ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Config:
    """One build to check and time: `variant`'s source with `overrides`, and why it is worth a slot."""

    name: str
    variant: str
    overrides: dict = field(default_factory=dict)
    why: str = ""

    @property
    def defines(self) -> dict[str, int]:
        return build_defines(self.variant, self.overrides)

    @property
    def geometry(self) -> Geometry:
        return geometry(self.variant, self.overrides)

    def to_dict(self) -> dict:
        return {"name": self.name, "variant": self.variant, "overrides": dict(self.overrides), "why": self.why,
                "defines": self.defines, "geometry": self.geometry.to_dict()}


_R240 = {"PRODUCER_REGS": 24, "CONSUMER_REGS": 240}  # FA3's split with 2 consumer warpgroups (TMA producer)
_ORDER = {"ORDER_SOFTMAX": 1}
_FA2 = {"WARPS": 4, "WARP_M": 32, "Q_IN_REGS": 0, "BLOCK_N": 32, "MIN_BLOCKS": 2}
_FIRST = {"WARPS": 8, "WARP_M": 16, "Q_IN_REGS": 1, "BLOCK_N": 64, "MIN_BLOCKS": 1}  # v1's first layout

_NP = {"PERSISTENT": 0}

# In priority order: the sweep runs them top to bottom and drops what its time budget does not reach.
# The first sweep's other settings (v1's first layouts, v2 with ORDER_SOFTMAX combined with lazy
# rescale, softmax ILP, BLOCK_N 144/160, 3 stages) all lost to v2's defaults; their figures are in
# docs/runs/2026-11-30-h200-sweep_attention.json and NOTES.md, and they left this list.
SWEEP: tuple[Config, ...] = (
    Config("v2", V2, {}, "as measured (588 / 528 TFLOP/s in the first sweep): the baseline the v3 rows compare with"),
    Config("v1", V1, {}, "the default: FA2's layout, 4 warps x 32 rows, lazy rescale 2^8 (356 / 330 TFLOP/s as v1+lazy8)"),
    Config("v1+lazy0", V1, {"RESCALE_THRESHOLD": 0}, "v1 skipping a warp's O rescale (128 FMULs per thread and "
           "32-key tile) only when no row max moved (348 / 320 TFLOP/s)"),
    Config("v1-lazy", V1, {"RESCALE_THRESHOLD": -1}, "control: v1 rescaling O every tile (330 / 312 TFLOP/s)"),
    Config("v1+s2", V1, {"STAGES": 2}, "a 2-tile ring (64 KiB per block at D = 128): v1 is at 0.99-1.00x the FA2 "
           "backend, and the ring depth is the knob not yet swept with the lazy rescale"),
    Config("v1+s4", V1, {"STAGES": 4}, "a 4-tile ring (96 KiB, still 2 blocks per SM): more load slack per tile"),
    Config("v3", V3, {}, "TMA loads from one thread, 24/240 registers, persistent tiles (the next tile's loads "
           "under this one's last P V and epilogue)"),
    Config("v3-persistent", V3, _NP, "TMA and 24/240 registers alone, one block per tile as v2: isolates persistence"),
    Config("v3+n176", V3, {"BLOCK_N": 176}, "FA3's D = 128 tile (128 x 176) now that 240 registers are free: "
           "27% fewer key-loop iterations (v2+n176 was +0.6% with a cp.async producer at 24 registers)"),
    Config("v3+s3", V3, {"STAGES_D128": 3}, "a third K/V stage (225 KiB): persistent tiles have more to prefetch"),
    Config("v3+lazy8", V3, {"RESCALE_THRESHOLD": 8}, "FA4's lazy rescale on top of v3"),
    Config("v3+n160", V3, {"BLOCK_N": 160}, "between 128 and 176 (4096 = 25 x 160 + 96: a shorter tail tile)"),
    Config("v3+order", V3, _ORDER, "ORDER_SOFTMAX with v3's registers: the softmax really under P V"),
    Config("v3+n144", V3, {"BLOCK_N": 144}, "a shorter step from 128 (the first v3 sweep: n160 684, n176 668, "
           "n128 663 TFLOP/s non-causal)"),
    Config("v3+n160+lazy8", V3, {"BLOCK_N": 160, "RESCALE_THRESHOLD": 8}, "the best tile with the lazy rescale"),
    Config("v2+order", V2, _ORDER,
           "the softmax really overlaps this warpgroup's P V (today ptxas waits for P V before the first exp)"),
    Config("v2+order+n176", V2, {**_ORDER, "BLOCK_N": 176, **_R240},
           "FA3's D = 128 tile (128 x 176, 240 registers): 27% fewer key-loop iterations and barriers"),
    Config("v2+order+n176+lazy8+ilp4", V2,
           {**_ORDER, "BLOCK_N": 176, **_R240, "RESCALE_THRESHOLD": 8, "SOFTMAX_ILP": 4},
           "everything above that fits together"),
    Config("v2+n176", V2, {"BLOCK_N": 176, **_R240}, "the long tile alone, to separate its gain from ORDER_SOFTMAX's"),
    Config("v2-pingpong", V2, {"PINGPONG": 0}, "diagnostic: what the named-barrier turns buy today"),
    Config("v2-overlap", V2, {"INTRA_WG_OVERLAP": 0}, "diagnostic: FA3's step without intra-warpgroup overlap"),
)


def sweep_configs(names: list[str] | None = None) -> list[Config]:
    """SWEEP, or the named subset in SWEEP's order (an unknown name is an error that lists them)."""
    if not names:
        return list(SWEEP)
    known = {c.name: c for c in SWEEP}
    missing = [n for n in names if n not in known]
    if missing:
        raise KeyError(f"no sweep configuration {', '.join(missing)}; have: {', '.join(known)}")
    return [c for c in SWEEP if c.name in names]
