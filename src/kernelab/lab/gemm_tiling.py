"""The shared-memory tiled SGEMM against the naive one, and what the +1 padding does (seeds/004 §3.3).

Naive and tiled are the gemm op's v0_naive and v2_smem_tiled (C = A Bᵀ, B stored [N, K], fp32).
The padding is measured on kernels/gemm_pad.cu compiled with PAD = 0 and PAD = 1, in two
layouts: the seeds' own kernel (C = A B, B [K, N]: its inner loop reads rows of both tiles)
and the same tiling with B stored [N, K] (the inner loop reads a column of the B tile). The
32-bank model (memory.bank_conflict_degree) predicts which one the padding changes.
"""

from __future__ import annotations

from ._common import EFFECT, load_kernels, pick, timed
from .base import Check, Verdict, experiment
from .memory import bank_conflict_degree

TILED = "naive / tiled time (gemm op v0_naive vs v2_smem_tiled)"
PAD_SEED = "seeds' kernel (B [K, N]): unpadded / padded time"
PAD_COLUMN = "B stored [N, K] (column reads of the B tile): unpadded / padded time"
TILE = 16


def inner_loop_degrees(layout: str, pad: int, i: int = 0) -> dict:
    """Conflict degree of the two shared-memory reads of the inner loop's step i, for one warp of a
    16 x 16 block (lanes 0..31: tx = lane % 16, ty = lane // 16, the first two rows of the block).
    layout "nn": As[ty][i], Bs[i][tx] (the seeds' kernel); "tn": As[ty][i], Bs[tx][i]."""
    row = TILE + pad
    lanes = [(lane % TILE, lane // TILE) for lane in range(32)]
    a = [ty * row + i for tx, ty in lanes]
    b = [i * row + tx for tx, ty in lanes] if layout == "nn" else [tx * row + i for tx, ty in lanes]
    return {"A": bank_conflict_degree(a), "B": bank_conflict_degree(b)}


def gemm_verdict(t_naive: float, t_tiled: float, nn_unpadded: float, nn_padded: float, tn_unpadded: float,
                 tn_padded: float) -> Verdict:
    nn0, tn0 = inner_loop_degrees("nn", 0), inner_loop_degrees("tn", 0)
    return Verdict([
        Check(TILED, t_naive / t_tiled, 1.0 + EFFECT, None, "x"),
        Check(PAD_SEED, nn_unpadded / nn_padded, 1.0 + EFFECT, None, "x"),
        Check(PAD_COLUMN, tn_unpadded / tn_padded, 1.0 + EFFECT, None, "x"),
    ], note=f"32-bank model, unpadded 16-float rows: the seeds' inner loop reads are {nn0['A']}-way (A) and "
            f"{nn0['B']}-way (B) conflicted, so padding has nothing to fix there; with B stored [N, K] the B read is "
            f"{tn0['B']}-way, and 1-way once padded")


@experiment("gemm_tiling", title="Tiled shared-memory GEMM and the +1 padding",
            claim="Tiling the GEMM through shared memory loads each element of A and B from global memory once per "
                  "tile and reuses it from shared memory, which makes it much faster than the naive kernel; the "
                  "tiles are declared [TILE][TILE + 1] because without the extra column the threads of a warp hit "
                  "one bank and the accesses serialise.",
            source="seeds/004 §3.3")
def gemm_tiling(ctx):
    import torch

    from ..ops import Case, discover, run_variant

    size = pick(ctx, quick=1024, full=2048)
    ops = discover()
    if "gemm" not in ops:
        return Verdict(not_run_reason="the gemm op (kernelab/ops/gemm) is not in this tree")
    op = ops["gemm"]
    case = Case((size, size, size), "float32")
    inputs = op.make_inputs(case, 0, "cuda")
    outputs = op.make_outputs(case, inputs)
    flops = 2 * size**3
    t = {}
    for name in ("v0", "v2"):
        v = op.variant(name)
        m = timed(ctx, lambda v=v: run_variant(op, v, case, inputs, outputs), f"gemm {v.name} fp32 {size}^3",
                  key=f"gemm_{v.name}")
        t[name] = m.median_s
        ctx.log(f"  {flops / m.median_s / 1e12:.2f} TFLOP/s")
    a, bt = inputs["a"], inputs["b"]  # A [M, K], B [N, K]
    b = bt.t().contiguous()  # B [K, N] for the seeds' layout
    ref = (a.double() @ bt.double().t())
    c = torch.empty(size, size, device="cuda")
    grid = (-(-size // TILE), -(-size // TILE))
    pads = {}
    for layout, bmat in (("nn", b), ("tn", bt)):
        for pad in (0, 1):
            kern = load_kernels("gemm_pad", defines={"PAD": pad}).kernel(f"tiled_{layout}")

            def fn(kern=kern, bmat=bmat):
                kern(a, bmat, c, size, size, size, grid=grid, block=(TILE, TILE))
            c.fill_(float("nan"))
            pads[(layout, pad)] = timed(ctx, fn, f"tiled_{layout} PAD={pad} {size}^3", mode="cold",
                                        key=f"tiled_{layout}_pad{pad}").median_s
            err = ((c.double() - ref).norm() / ref.norm()).item()
            if not err < 1e-5:
                raise RuntimeError(f"tiled_{layout} PAD={pad} is wrong: relative error {err:.3g}")
    ctx.record("predicted_degrees", {f"{layout}_pad{pad}": inner_loop_degrees(layout, pad)
                                     for layout in ("nn", "tn") for pad in (0, 1)})
    ctx.log(f"naive/tiled {t['v0'] / t['v2']:.1f}x; unpadded/padded: seeds' layout "
            f"{pads[('nn', 0)] / pads[('nn', 1)]:.3f}x, B [N, K] {pads[('tn', 0)] / pads[('tn', 1)]:.3f}x")
    return gemm_verdict(t["v0"], t["v2"], pads[("nn", 0)], pads[("nn", 1)], pads[("tn", 0)], pads[("tn", 1)])
