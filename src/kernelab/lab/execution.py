"""The execution model: warp divergence (seeds/000 §8.2) and occupancy (seeds/003, first exercise;
seeds/000 §3.3)."""

from __future__ import annotations

from ._common import EFFECT, SAME, about, fmt_bw, load_kernels, pick, pow2, timed
from .base import Check, Verdict, experiment

# ---- 8. warp divergence ----------------------------------------------------------------------

DIV_SUM = "even/odd branch / (T(f) + T(g))"
DIV_DOUBLES = "even/odd branch / one path (mean of T(f), T(g))"
ALIGNED = "warp-aligned branch / one path (mean of T(f), T(g))"
SEED_DIVERGENT_FACTOR = 2.0  # seeds/000 §8.2: "总时间 = T(f) + T(g)", "等效吞吐减半"


def divergence_verdict(t_f: float, t_g: float, t_divergent: float, t_aligned: float) -> Verdict:
    one_path = (t_f + t_g) / 2.0
    return Verdict([
        Check(DIV_SUM, t_divergent / (t_f + t_g), 1.0 - SAME, 1.0 + SAME, "x"),
        Check(DIV_DOUBLES, t_divergent / one_path, *about(SEED_DIVERGENT_FACTOR), "x"),
        Check(ALIGNED, t_aligned / one_path, 1.0 - SAME, 1.0 + SAME, "x"),
    ], note="f and g are chains of the same number of dependent FMAs; T(f), T(g): every thread on one path")


@experiment("warp_divergence", title="Warp divergence: an even/odd branch against a warp-aligned one",
            claim="When the threads of a warp take different sides of a branch the warp runs both sides one after "
                  "the other (time T(f) + T(g)), so an even/odd branch doubles the time of equal paths; a branch "
                  "that follows warp boundaries costs nothing.",
            source="seeds/000 §8.2")
def warp_divergence(ctx):
    import torch

    from ..gpu import device_info

    info = device_info()
    iters = pick(ctx, quick=1024, full=4096)
    block = 256
    grid = info.sm_count * (info.max_threads_per_sm // block)  # one full wave of resident threads
    out = torch.empty(grid * block, device="cuda")
    kern = load_kernels("divergence").kernel("branchy")
    names = {0: "every thread f", 1: "every thread g", 2: "even lanes f, odd lanes g", 3: "even warps f, odd warps g"}
    t = {}
    for mode, label in names.items():
        def fn(mode=mode):
            kern(out, iters, mode, grid=grid, block=block)
        t[mode] = timed(ctx, fn, f"{label} ({iters} FMAs per path)", mode="hot", key=f"mode_{mode}").median_s
    ctx.log(f"even/odd: {t[2] / ((t[0] + t[1]) / 2):.2f}x one path; warp-aligned: {t[3] / ((t[0] + t[1]) / 2):.2f}x")
    return divergence_verdict(t[0], t[1], t[2], t[3])


# ---- 9. occupancy -------------------------------------------------------------------------------

# seeds/003, first exercise: H100 (9.0), 64 KB shared memory and 40 registers per thread, 256 threads:
# "228 KB / 64 KB = 3 个 block ... occupancy ≈ 24/64 = 37%".
EXAMPLE = {"cc": (9, 0), "threads": 256, "regs": 40, "smem": 64 * 1024}
SEED_BLOCKS = 3
SEED_OCCUPANCY_PCT = 100.0 * 24 / 64
# seeds/000 §3.3: blocks of 32 threads hit the 32 blocks/SM cap and cannot fill 2048 threads.
SEED_MAX_BLOCKS, SEED_THREADS_PER_SM = 32, 2048

CALC_BLOCKS = "calculator, the seeds' example: blocks per SM"
CALC_OCC = "calculator, the seeds' example: occupancy"
API_BLOCKS = "driver occupancy API, the same launch (64 KiB dynamic smem, 256 threads): blocks per SM"
MISMATCH = "block sizes 32..1024 where the calculator and the driver disagree"
OCC_32 = "occupancy with 32-thread blocks"
BW_32 = "vector add with 32-thread blocks: bandwidth / best of 128-1024"
SWEEP = (32, 64, 128, 256, 512, 1024)


def occupancy_verdict(calc_blocks: int, calc_occ: float, api_blocks: int | None, mismatches: int, occ_32: float,
                      bw_32_ratio: float) -> Verdict:
    checks = [
        Check(CALC_BLOCKS, calc_blocks, SEED_BLOCKS, SEED_BLOCKS),
        Check(CALC_OCC, 100.0 * calc_occ, SEED_OCCUPANCY_PCT, SEED_OCCUPANCY_PCT, "%"),
    ]
    if api_blocks is not None:
        checks.append(Check(API_BLOCKS, api_blocks, SEED_BLOCKS, SEED_BLOCKS))
    checks += [
        Check(MISMATCH, mismatches, 0, 0),
        Check(OCC_32, 100.0 * occ_32, None, 100.0 * SEED_MAX_BLOCKS * 32 / SEED_THREADS_PER_SM, "%"),
        Check(BW_32, bw_32_ratio, None, 1.0 - EFFECT, "x"),
    ]
    return Verdict(checks, note="" if api_blocks is not None else
                   "the driver check of the example needs a 9.0 GPU (the example is an H100's); this GPU's own "
                   "limits are compared with the calculator across block sizes instead")


@experiment("occupancy", title="Occupancy: the seeds' worked example and a block-size sweep",
            claim="On an H100 a block with 64 KB of shared memory, 40 registers per thread and 256 threads fits 3 "
                  "times per SM (228 KB / 64 KB): 24 of 64 warps, 37% occupancy, limited by shared memory. Blocks "
                  "of 32 threads hit the 32-blocks-per-SM cap and cannot fill the SM's 2048 threads.",
            source="seeds/003 §exercises, answer 1; seeds/000 §3.3")
def occupancy(ctx):
    import torch

    from ..analysis import limits_from_device, occupancy as calc
    from ..gpu import device_info
    from ..ops import discover, load_variant

    info = device_info()
    ex = calc(EXAMPLE["cc"], EXAMPLE["threads"], EXAMPLE["regs"], EXAMPLE["smem"])
    ctx.log(f"calculator, H100 example: {ex.summary()}")
    ctx.record("example", ex.to_dict())
    live = limits_from_device(info)
    probe = load_kernels("occupancy_probe").kernel("probe")
    regs = probe.resources.registers
    api_blocks = None
    if tuple(info.cc) == EXAMPLE["cc"]:
        api_blocks = probe.max_active_blocks_per_sm(EXAMPLE["threads"], EXAMPLE["smem"])
        mine = calc(live, EXAMPLE["threads"], regs, EXAMPLE["smem"])
        ctx.log(f"driver API, probe kernel ({regs} registers) with 64 KiB dynamic smem x 256 threads: {api_blocks} "
                f"blocks/SM (calculator with the same registers: {mine.blocks_per_sm})")
    rows, mismatches = [], 0
    for threads in range(32, 1025, 32):
        api = probe.max_active_blocks_per_sm(threads, threads * 4)
        ours = calc(live, threads, regs, threads * 4)
        mismatches += api != ours.blocks_per_sm
        rows.append({"threads": threads, "api_blocks": api, "calculator_blocks": ours.blocks_per_sm,
                     "occupancy": ours.occupancy, "limiter": ours.limiter})
    ctx.record("sweep", rows)
    occ_32 = next(r for r in rows if r["threads"] == 32)["occupancy"]
    ctx.log(f"block-size sweep 32..1024: {mismatches} disagreements; 32 threads/block: "
            f"{100 * occ_32:.0f}% occupancy ({next(r for r in rows if r['threads'] == 32)['limiter']}-limited)")
    op = discover()["vector_add"]
    kern = load_variant(op, op.variant("v0")).kernel("vector_add_f32")
    n = pick(ctx, quick=1 << 24, full=1 << 26)
    a, b, c = torch.randn(n, device="cuda"), torch.randn(n, device="cuda"), torch.empty(n, device="cuda")
    bw = {}
    for block in SWEEP:
        def fn(block=block):
            kern(a, b, c, n, grid=-(-n // block), block=block)
        bw[block] = 12 * n / timed(ctx, fn, f"vector_add v0 n={pow2(n)}, {block} threads/block", work_bytes=12 * n,
                                   key=f"block_{block}").median_s
    if not torch.equal(c, a + b):
        raise RuntimeError("vector_add v0 gave a wrong result in the block sweep")
    best = max(bw[k] for k in SWEEP if k >= 128)
    ctx.log(f"32 threads/block: {fmt_bw(bw[32])}, best of 128-1024: {fmt_bw(best)}")
    ctx.record("bandwidth_by_block", {str(k): v for k, v in bw.items()})
    return occupancy_verdict(ex.blocks_per_sm, ex.occupancy, api_blocks, mismatches, occ_32, bw[32] / best)
