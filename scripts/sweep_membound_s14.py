"""Issue 7, session 14: sweeps on top of scripts/sweep_membound.py (same checks, timing and table).

Usage (GPU machine): SWEEP_SET=widths PYTHONPATH=src python3 scripts/sweep_membound_s14.py --ops softmax --out F
    widths:    softmax v4_dispatch at the row widths its table covers by proximity only (bf16 49152,
               98304, 196608; fp32 49152, 98304, 196608: 384-768 MiB each), against the variants v4
               sends the measured neighbours to (v12_dynamic_rows, v13_packed_regs, v14_split_grid)
               and v2_online, each at its header's defaults. Checked at 256 rows.
    grid:      v4_dispatch's wide-row entries on a grid of widths (40960..262144 in steps of 8192-32768,
               bf16 and fp32, 384 MiB each way): v4 as it stands, v4 with one entry at every width
               (`@dispatch_only online | dynamic | dynamic_e32 | any_cluster`) and v14_split_grid
               (bf16), so the table can be written from measurements instead of proximity. (Session
               14 ran it with the entry "packed_regs", v13's plan; session 15 replaced it by
               "any_cluster", v15's, the same kernel and clusters except bf16 131073-196608: 3, not 4.)
    vocab:     softmax over LLM vocabulary widths (32000, 50257, 128256, 151936; 50257 rows are 2-byte
               aligned only), bf16 and fp32, ~384 MiB each way: v4_dispatch against torch.compile and
               the wide-row variants v4 chooses among.
    mid:       softmax fp32 rows of 8192-32768 (v4's "online" entry: v2, measured at 8192 only; 3145 x
               32000 fp32 ran 273.9 us, 0.69x a copy) against v4 with its "wide" entry, v12's and
               v13's plans there (`@dispatch_only`), ~384 MiB each way.
    anyc:      softmax v15_any_cluster (v13's kernel in clusters of 1-8, not only powers of two) against
               v4_dispatch and v13 at the widths where its cluster differs (bf16 151936 / 163840 / 196608:
               C = 3; fp32 98304 / 163840 / 196608 / 229376: C = 3 / 5 / 6 / 7), ~384 MiB each way.
    half:      (session 15) softmax v16_half_blocks (v15 in 512-thread blocks, two an SM, so clusters of
               3-8 leave at most half an SM of a GPC idle) against v4_dispatch and v15 at bf16 65536-262144
               and fp32 65536-131072, ~384 MiB each way.
    half_after: v4_dispatch (once it takes v16's plan) against v16 at bf16 98304 / 151936 / 196608.
    w262k:     (session 16) bf16 rows of 262144 (v4 takes v14 there; v16 measured 4% ahead at 768 rows
               once) at 512 / 768 / 1024 / 1536 rows, 262143 and 229376, v4 against v14 and v16.
    ln16:      (session 16) layernorm bf16 32768 x 8192: v5_l2_two_pass at 128-512 threads and 1024-2048
               threads an SM (rmsnorm v4's bf16 geometry) against v4_pinned_onebar and torch.compile.
    lean17:    (session 17) gelu_bias 256 x 1024 bf16 and fp32 in graph mode (the small-shape 1.1x target):
               v6_lean_small's lean kernel at `@lean_block` 64 / 128 / 256 (and 8-byte vectors, `@lean_vec_bytes 8`,
               at 128 / 256) against v5_short_fit, v3_early_load
               and torch.compile, v5 and v6 twice; and 4096 x 8192 bf16 (graph), where v6 must equal v5.
    ln19:      (session 19) layernorm fp32 32768 x 8192 (0.99x torch.compile): v5_l2_two_pass at 1536
               threads an SM with its pass-2 x re-reads in flight together (X2_AHEAD 2 / 4: rmsnorm v4
               keeps 2 x and 2 w vectors in flight there, v5 one x, w and b, since 2 of each spill), with
               and without the L2 hints, against v4, v5's default at 1536 and torch.compile, twice.
    ln19b:     (session 19) the same case, v5 in the form of the Triton kernel torch.compile runs there
               (scripts/inductor_kernel.py: two rows an SM, pass 2 in steps of 2 x, 2 w and 2 b vectors, w
               and b with an L2 evict-last policy) and its neighbours.
    ln19c:     (session 19) the same case, v5 with shifted sums (LN5_MERGE 1: half the exact merge's serial
               shuffles) at 1024-2048 threads an SM, with and without X2_AHEAD.
    ln19d:     (session 19) layernorm 32768 x 8192 fp32 and bf16: v5 with pass 1's first vectors issued before
               the pivot's use (PASS1_PEEL 1), at 1024-2048 threads an SM, checked on shifted rows.
    tr19:      (session 19) transpose fp32 16384^2 (0.96x a copy): v4's column-major tiles at shapes long on
               one side (32 x 128, 128 x 32 at a 40-register cap, where 32 spill, 32 x 256, 256 x 32,
               32 x 64, 64 x 32; 128 x 128 does not fit 48 KiB of static shared memory), against the
               64 x 64 default and torch.compile, twice.
    tr24:      (session 24) transpose fp32 16384^2: v4 at 32 KiB tiles (64 x 128, 128 x 64) and 512-thread
               blocks, against the 64 x 64 default and torch.compile.
    tr24b:     (session 24) transpose v4 fp32 and bf16 16384^2 at 512 threads a block against the
               defaults, alternating, three times each.
    peel20:    (session 20) softmax fp32 32768 x 8192 (aligned rows) and 32768 x 8191 (3 rows in 4 with a head
               scalar): v2_online's pass 1 as it is (its first LDG.E.128 waits for the head/tail scalars:
               analysis.load_order) against PASS1_PEEL 1 (the first step's vectors first; 48 registers on
               sm_90 where the default has 40, so 2 blocks an SM, not 3), as v2 and inside v4_dispatch
               (whose fp32 8192 pick is v2's kernel); rmsnorm v4 bf16 at the same shapes with and
               without its PASS1_PEEL; torch.compile beside them, twice.
    odd21:     (session 21) rmsnorm v4 and layernorm v5 on rows of 8191, bf16 and fp32: the rows whose weight
               is out of x's 16-byte phase element by element (PARAM_SHIFT 0, as before) against the
               weight/bias vectors shifted into x's phase (PARAM_SHIFT 1; SHIFT_WORDS 1: from 4-byte loads),
               layernorm v4 and torch.compile beside them, twice.
    odd22:     (session 21, to run in 22) each memory-bound op's best variant on its bench shape and one element
               narrower (gelu_bias and softmax bf16 32768 x 8191, transpose fp32 16383^2, sum bf16 2^28 - 1)
               against torch.compile, twice: which op keeps an element-by-element path at odd widths.
    shift22:   (session 22) transpose v4 at 16384^2 and 16383^2 (fp32 and bf16) and at 16384 x 16383 / 16383 x
               16384 (fp32: only out's rows / only m's rows misaligned): the shifted kernels (`@shifted 1`, the
               default now) against the element path they replace (`@shifted 0`) and torch.compile, twice (at
               16383^2 also without the gather's rotation, SHIFT_ROTATE 0); and
               gelu_bias fp32 32768 x 8191 against 8192 (ODD_VEC 1, the default now, measured in bf16 only).
    ln23:      (session 23) layernorm bf16 32768 x 8192 (v4 0.965-0.976x a copy): v5 at rmsnorm v4's bf16
               geometry (256 threads, 1024-1536 an SM) with the shifted-sum merge (LN5_MERGE 1), pass 1's
               peel and pass 2's folded subtract (LN5_FOLD 1), alone and together, against v4 and
               torch.compile; rmsnorm v4 bf16 beside it (the same layout's time without the bias and the
               mean), twice each, checked on shifted rows.
    ln23b:     (session 23; LN5_FOLD is gone since session 25, a no-op macro here) the same case: v5 with all
               three (LN5_MERGE 1, PASS1_PEEL 1, LN5_FOLD 1; ln23's best pair ran 253.6 us against v4's
               259.6) at 128-512 threads a row and 1024-2048 an SM,
               with two pass-2 vectors a step (UNROLL2 2) where it does not spill (and, at a77708d, with pass
               2's vectors indexed instead of stepped: LN5_IDX2, measured slower and removed); ncu put v4 at 84%
               of its issue slots, so fewer instructions a row is the lever.
    ln25:      (session 25) layernorm 32768 x 8192 bf16 and fp32: v4 and v5 with pass 2 in three operations an
               element (kl::ln_affine, the default) against the plain four (LN_SCALE_FOLD 0), alternating twice.
    ln25b:     (session 25) layernorm 32768 x 8192: v5 with X2_STEPS 2 / 4 (both dtypes) and X2_AHEAD 2 (bf16).
    ln25c:     (session 25) layernorm bf16 32768 x 8192: v5 at 2048 threads an SM, v4 PARAMS_AHEAD 4 / PARAMS_EARLY 0.
    ln26:      (session 26) layernorm 32768 x 8192, both dtypes: v5's whole-vector rows kernel (`@vec_kernel`)
               against its general kernel.
    rms26:     (session 26) rmsnorm 32768 x 8192, both dtypes: v4's whole-vector rows kernel against its general one.
    fast27:    (session 27) softmax's wide rows (v4_dispatch's v12 / v14 main grids, staged_rows.cuh) with
               SB_FAST_EXP 1 (exps as FFMA + EX2 with a thread's exact rounding residual folded back once,
               bf16 maxima on packed pairs, the max and sum in four chains: 346 SASS instructions from the
               first LDS to the warp merge where there were 437, sm_90 bf16 c8) against the default,
               alternating twice: bf16 2048 x 131072 / 4096 x 65536 / 1024 x 262144, fp32 2048 x 131072.
    fast27b:   (session 27) v13's body (v13_packed_regs.cu: v14's side grid, v16, v4's fp32 32769-65536 entry) with
               PR_FAST_EXP 1 (fast_exp.cuh, as SB_FAST_EXP: 8.75 instructions a bf16 element where there were
               12.5) against 0, through v4_dispatch at bf16 2048 x 131072 (v14), 1325 x 151936 and 1024 x 262144
               (v16), fp32 4096 x 65536 (v13), and v13 alone at 2048 x 131072 bf16, alternating twice.
    split27:   (session 27) softmax bf16 2048 x 131072 after SB_FAST_EXP: v12_dynamic_rows alone ran 265.6 us in the
               run at
               678edb4 against v4_dispatch (v14's split grid) 267.5; v4, v12, v14 with the side grid off (`@side_margin`
               past M) and v14 as it is, alternating three times.
    stages27:  (session 27) v12's ring depth again now that its rows are shorter (SB_FAST_EXP): 3 stages against 2 at
               2048 x 131072 bf16 (session 8: 278.6 against 276.4 us) and fp32 (e32 clusters of 16), alternating twice.
    xchg27:    (session 27) v12 with SB_WARP_XCHG 1 (each warp's pair pushed to the cluster, no block barrier or block
               merge a row) against the default, through v4_dispatch: bf16 2048 x 131072 / 4096 x 65536, fp32 2048 x
               131072, alternating twice.
Without a GPU, --dry-run compiles every candidate (sweep_membound.py's)."""
import dataclasses
import os
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import sweep_membound as sm
from sweep_membound import Candidate, Sweep, Case

V4 = "v4_dispatch"
ESIZE = {"bfloat16": 2, "float32": 4}


def rows_for(n: int, dt: str) -> int:
    """Rows of n that move ~384 MiB each way (past L2, as the bench shapes)."""
    return 3 * 2**27 // (n * ESIZE[dt])


def versus_v4(n: int, dt: str, candidates, m: int | None = None, peer: bool = True, tail=()) -> Sweep:
    """m rows of n (default rows_for): torch.compile (unless peer=False), v4_dispatch, the candidates
    (variant names or Candidates), v4 again, then `tail` (repeats to pair with it); checked at 256 rows."""
    def cand(c):
        return c if isinstance(c, Candidate) else Candidate(c, "new", c)
    peers = [Candidate("torch.compile", "peer")] if peer else []
    return Sweep("softmax", Case((m or rows_for(n, dt), n), dt), "cold", Case((256, n), dt),
                 peers + [Candidate(V4, "existing", V4)] + [cand(c) for c in candidates]
                 + [Candidate(f"{V4} again", "existing", V4)] + [cand(c) for c in tail])


def again(cands) -> list:
    """The candidates once more, labelled "... again" (same variant, header values and macros): the
    second timing of each in the same process."""
    return [dataclasses.replace(c, label=f"{c.label} again") for c in cands]


def only(entry: str) -> Candidate:
    """v4 with one table entry at every width (`@dispatch_only`)."""
    return Candidate(f"{V4} only {entry}", "new", V4, meta={"dispatch_only": entry})


# (rows, width, dtype) -> the variants beside v4_dispatch; the comment names v4's pick there before
# session 14's "wide" entry, so the table says whether that pick was the fastest.
WIDTHS = {
    (4096, 49152, "bfloat16"): ("v12_dynamic_rows", "v13_packed_regs", "v14_split_grid", "v2_online"),  # dynamic
    (2048, 98304, "bfloat16"): ("v12_dynamic_rows", "v13_packed_regs", "v14_split_grid"),  # split
    (1024, 196608, "bfloat16"): ("v12_dynamic_rows", "v14_split_grid"),  # split
    (2048, 49152, "float32"): ("v12_dynamic_rows", "v13_packed_regs", "v2_online"),  # packed_regs
    (1024, 98304, "float32"): ("v12_dynamic_rows", "v13_packed_regs", "v14_split_grid"),  # dynamic_e32
    (1024, 196608, "float32"): ("v12_dynamic_rows", "v14_split_grid"),  # dynamic
}


def widths_sweeps(selected):
    return [versus_v4(n, dt, others, m) for (m, n, dt), others in WIDTHS.items()] if "softmax" in selected else []


GRID_WIDTHS = (40960, 49152, 57344, 65536, 81920, 98304, 114688, 131072, 163840, 196608, 229376, 262144)


def grid_sweeps(selected):
    if "softmax" not in selected:
        return []
    out = []
    for dt in ("bfloat16", "float32"):
        for n in GRID_WIDTHS:
            entries = ["online", "dynamic", "any_cluster"]
            if dt == "float32" and n <= 131072:
                entries.append("dynamic_e32")
            cands = [only(e) for e in entries] + (["v14_split_grid"] if dt == "bfloat16" else [])
            out.append(versus_v4(n, dt, cands, peer=False))
    return out


VOCAB = (32000, 50257, 128256, 151936)


def vocab_sweeps(selected):
    if "softmax" not in selected:
        return []
    out = []
    for dt in ("bfloat16", "float32"):
        for n in VOCAB:
            if n <= 32768:
                others = ("v2_online",) + (("v6_packed_rows",) if dt == "bfloat16" else ())
            else:
                others = ("v12_dynamic_rows", "v13_packed_regs", "v14_split_grid", "v2_online")
            out.append(versus_v4(n, dt, others))
    return out


def mid_sweeps(selected):
    if "softmax" not in selected:
        return []
    return [versus_v4(n, "float32", [only("wide"), only("dynamic"), only("any_cluster")])
            for n in (8192, 12288, 16384, 24576, 32000, 32768)]


def anyc_sweeps(selected):
    if "softmax" not in selected:
        return []
    sets = (("bfloat16", (151936, 163840, 196608)), ("float32", (98304, 163840, 196608, 229376)))
    again = Candidate("v15_any_cluster again", "new", "v15_any_cluster")
    return [versus_v4(n, dt, ["v13_packed_regs", "v15_any_cluster"], tail=[again])
            for dt, widths in sets for n in widths]


def half_sweeps(selected):
    if "softmax" not in selected:
        return []
    sets = (("bfloat16", (65536, 98304, 131072, 151936, 163840, 196608, 262144)), ("float32", (65536, 98304, 131072)))
    again = Candidate("v16_half_blocks again", "new", "v16_half_blocks")
    return [versus_v4(n, dt, ["v15_any_cluster", "v16_half_blocks"], tail=[again])
            for dt, widths in sets for n in widths]


def half_after_sweeps(selected):
    if "softmax" not in selected:
        return []
    return [versus_v4(n, "bfloat16", ["v16_half_blocks"], peer=False) for n in (98304, 151936, 196608)]


def w262k_sweeps(selected):
    if "softmax" not in selected:
        return []
    again = Candidate("v16_half_blocks again", "new", "v16_half_blocks")
    return [versus_v4(n, "bfloat16", ["v14_split_grid", "v16_half_blocks"], m=m, peer=False, tail=[again])
            for n, m in ((262144, 512), (262144, 768), (262144, 1024), (262144, 1536), (262143, 768), (229376, 878))]


def ln16_sweeps(selected):
    """layernorm bf16 32768 x 8192: v5's geometry at rmsnorm v4's bf16 winner (256 threads, 1024 an SM),
    never tried for layernorm (session 5 tried 256 threads at 2048 an SM only: 290.0 us)."""
    if "layernorm" not in selected:
        return []
    c = ln5  # (the block for both dtypes: v5 has had a `@block_bf16` since session 23)
    return [Sweep("layernorm", Case((32768, 8192), "bfloat16"), "cold", Case((1000, 8192), "bfloat16"), [
        Candidate("torch.compile", "peer"), Candidate("v4_pinned_onebar", "existing", "v4_pinned_onebar"),
        c("b256 SM1024", 256, SM_THREADS=1024), c("b256 SM1536", 256, SM_THREADS=1536),
        c("b256 SM2048", 256, SM_THREADS=2048), c("b128 SM1024", 128, SM_THREADS=1024),
        c("b128 SM2048", 128, SM_THREADS=2048),
        c("b256 SM1024 UNROLL2=2", 256, SM_THREADS=1024, UNROLL2=2), c("b512 SM1024", 512, SM_THREADS=1024),
        Candidate("v4_pinned_onebar again", "existing", "v4_pinned_onebar"),
        c("b256 SM1024 again", 256, SM_THREADS=1024)])]


LN4, LN5 = "v4_pinned_onebar", "v5_l2_two_pass"


def ln5(label, block=None, **d):
    """layernorm v5 with `@block` (if given: for both dtypes, as sweep_membound.variant_for carries it to v5's own
    `@block_bf16`) and the macros d."""
    meta = {"block": str(block)} if block else {}
    return Candidate(f"{LN5} {label}", "new", LN5, meta=meta, defines=d)


def ln_sweep(dt, cands, check=None):
    """layernorm dt 32768 x 8192: torch.compile and v4, the candidates, torch.compile again."""
    return Sweep("layernorm", Case((32768, 8192), dt), "cold", check or Case((1000, 8192), dt),
                 [Candidate("torch.compile", "peer"), Candidate(LN4, "existing", LN4)] + cands
                 + [Candidate("torch.compile again", "peer")])


def ln19_sweeps(selected):
    """layernorm fp32 32768 x 8192: v5 (torch.compile's two passes) with pass 2's x re-reads in flight
    together (X2_AHEAD), and its hints, at 1536 threads an SM; v4 and torch.compile twice."""
    if "layernorm" not in selected:
        return []
    return [ln_sweep("float32", [
        ln5("SM1536", SM_THREADS=1536), ln5("SM1536 X2_AHEAD=4", SM_THREADS=1536, X2_AHEAD=4),
        ln5("SM1536 X2_AHEAD=2", SM_THREADS=1536, X2_AHEAD=2), ln5("SM2048 X2_AHEAD=2", SM_THREADS=2048, X2_AHEAD=2),
        ln5("SM1536 no hints", SM_THREADS=1536, X1_HINT=0, X2_HINT=0),
        ln5("SM1536 X2_AHEAD=4 no hints", SM_THREADS=1536, X2_AHEAD=4, X1_HINT=0, X2_HINT=0),
        ln5("SM1536 X2_AHEAD=4 X1_HINT=0", SM_THREADS=1536, X2_AHEAD=4, X1_HINT=0),
        ln5("SM1024 X2_AHEAD=4", SM_THREADS=1024, X2_AHEAD=4),
        Candidate(f"{LN4} again", "existing", LN4), ln5("SM1536 X2_AHEAD=4 again", SM_THREADS=1536, X2_AHEAD=4)])]


def ln19b_sweeps(selected):
    """layernorm fp32 32768 x 8192, after ln19 and the Triton kernel torch.compile runs (R0_BLOCK 4096,
    16 warps, 44 registers: two rows an SM; pass 2 in two steps of 2 x, 2 w, 2 b vectors, w and b with
    an L2 evict-last policy): v5 in that form at 1024 an SM (UNROLL2 2, W_HINT 1) and its neighbours."""
    if "layernorm" not in selected:
        return []
    return [ln_sweep("float32", [
        ln5("SM1536 X2_AHEAD=4", SM_THREADS=1536, X2_AHEAD=4),
        ln5("SM1536 X2_AHEAD=4 W_HINT=1", SM_THREADS=1536, X2_AHEAD=4, W_HINT=1),
        ln5("SM1024 UNROLL2=2 W_HINT=1 (Triton's)", SM_THREADS=1024, UNROLL2=2, W_HINT=1),
        ln5("SM1024 UNROLL2=2", SM_THREADS=1024, UNROLL2=2),
        ln5("SM1024 X2_AHEAD=2", SM_THREADS=1024, X2_AHEAD=2),
        Candidate(f"{LN4} again", "existing", LN4)])]


def ln19c_sweeps(selected):
    """layernorm fp32 32768 x 8192: v5 with shifted sums (LN5_MERGE 1: S and Q summed in parallel, one
    barrier, M2 = Q - S mean), about half the exact merge's serial shuffles, at 1024-2048 an SM."""
    if "layernorm" not in selected:
        return []
    # Checked on rows of 1000 + N(0, 1) (x[row][0] a draw of them): where the shifted sums cancel.
    shifted = Case((1000, 8192), "float32", params=(("shift", 1000.0),))
    return [ln_sweep("float32", [
        ln5("SM1536 X2_AHEAD=4", SM_THREADS=1536, X2_AHEAD=4),
        ln5("SM1536 MERGE=1", SM_THREADS=1536, LN5_MERGE=1),
        ln5("SM1536 MERGE=1 X2_AHEAD=4", SM_THREADS=1536, LN5_MERGE=1, X2_AHEAD=4),
        ln5("SM1024 MERGE=1 UNROLL2=2 W_HINT=1", SM_THREADS=1024, LN5_MERGE=1, UNROLL2=2, W_HINT=1),
        ln5("SM1024 UNROLL2=2 W_HINT=1", SM_THREADS=1024, UNROLL2=2, W_HINT=1),
        ln5("SM2048 MERGE=1", SM_THREADS=2048, LN5_MERGE=1),
        Candidate(f"{LN4} again", "existing", LN4),
        ln5("SM1536 MERGE=1 X2_AHEAD=4 again", SM_THREADS=1536, LN5_MERGE=1, X2_AHEAD=4)], shifted)]


def ln19d_sweeps(selected):
    """layernorm 32768 x 8192, fp32 and bf16: v5 with pass 1's first step of vectors issued before the
    pivot's use (PASS1_PEEL 1: one DRAM round trip a row where the loop form made two), at 1024-2048
    threads an SM, against v5 as it was, v4 and torch.compile; checked on shifted rows. (Run at 8180cf0,
    where v5's defaults were SM_THREADS 2048 and PASS1_PEEL 0 for both dtypes.)"""
    if "layernorm" not in selected:
        return []
    f32 = [ln5("SM1536", SM_THREADS=1536, PASS1_PEEL=0), ln5("SM1536 PEEL", SM_THREADS=1536, PASS1_PEEL=1),
           ln5("SM1536 PEEL X2_AHEAD=4", SM_THREADS=1536, PASS1_PEEL=1, X2_AHEAD=4),
           ln5("SM1536 PEEL MERGE=1", SM_THREADS=1536, PASS1_PEEL=1, LN5_MERGE=1),
           ln5("SM1024 PEEL UNROLL2=2 W_HINT=1", SM_THREADS=1024, PASS1_PEEL=1, UNROLL2=2, W_HINT=1),
           ln5("SM2048 PEEL", SM_THREADS=2048, PASS1_PEEL=1),
           Candidate(f"{LN4} again", "existing", LN4), ln5("SM1536 PEEL again", SM_THREADS=1536, PASS1_PEEL=1),
           ln5("SM1536 PEEL X2_AHEAD=4 again", SM_THREADS=1536, PASS1_PEEL=1, X2_AHEAD=4)]
    bf16 = [ln5("b256 SM1536", 256, SM_THREADS=1536, PASS1_PEEL=0),
            ln5("b256 SM1536 PEEL", 256, SM_THREADS=1536, PASS1_PEEL=1),
            ln5("b256 SM1024 PEEL", 256, SM_THREADS=1024, PASS1_PEEL=1),
            ln5("b512 SM1536 PEEL", 512, SM_THREADS=1536, PASS1_PEEL=1),
            ln5("b128 SM1024 PEEL", 128, SM_THREADS=1024, PASS1_PEEL=1),
            Candidate(f"{LN4} again", "existing", LN4)]
    return [ln_sweep(dt, c, Case((1000, 8192), dt, params=(("shift", 1000.0),)))
            for dt, c in (("float32", f32), ("bfloat16", bf16))]


def tr19_sweeps(selected):
    """transpose fp32 16384^2 (0.96x a copy): v4's column-major tiles at the shapes never tried, long
    on one side (32 x 128 / 128 x 32, 32 x 256 / 256 x 32: 512 B or 1 KiB a row segment on the side
    that is long, 128 B on the other), against the 64 x 64 default and torch.compile, twice."""
    if "transpose" not in selected:
        return []
    v4 = "v4_grouped_order"

    def t(r, c, **d):
        label = f"{v4} {r}x{c}" + "".join(f" {k}={v}" for k, v in d.items())
        return Candidate(label, "new", v4, meta={"tile_rows": str(r), "tile_cols": str(c)}, defines=d)
    return [Sweep("transpose", Case((16384, 16384), "float32"), "cold", Case((2117, 449), "float32"), [
        Candidate("torch.compile", "peer"), Candidate(v4, "existing", v4),
        t(32, 128), t(128, 32, MIN_BLOCKS=6), t(32, 256), t(256, 32), t(32, 64), t(64, 32),
        Candidate(f"{v4} again", "existing", v4), Candidate("torch.compile again", "peer")])]


def tr24_sweeps(selected):
    """transpose fp32 16384^2 (0.96x a copy): v4's column-major tiles of 32 KiB and 64 KiB (64 x 128,
    128 x 64 fp32: bf16's default tile is 128 x 128 bf16, 32 KiB, at 0.974x a copy), never
    tried in fp32 (session 19 tried tiles <= 64 on one side; 128 x 128 fp32 is over 48 KiB of static shared
    memory), at 256 and 512 threads a block. Session 24: the plain 16-byte copies of
    scripts/transpose_sides.py in v4's shape run 519-520 us against copy_'s 505 and v4's 525; two tiles
    a block as plain copies 522-524. Predicted: 32 KiB tiles within 0.5% of 64 x 64 (fewer, longer
    blocks: each block's barrier and tail cover twice the bytes). Measured (H200, session 24, one process,
    docs/runs/2026-12-02-h200-sweep_tr24.json, us): v4 523.5-523.7, torch.compile 540.8; 64 x 128 524.5 /
    524.7, 128 x 64 522.8 / 523.1, at 48 registers 525.4 / 523.7, at 512 threads (40 registers) 522.7 /
    521.3; and v4's own 64 x 64 tile at 512 threads (two vectors a thread, 32 registers) 516.7: -1.3%, one
    sample, the only shape that moved (unconfirmed; a per-dtype `@block_f32` for v4 is the next step)."""
    if "transpose" not in selected:
        return []
    v4 = "v4_grouped_order"

    def t(r, c, block=256, **d):
        label = f"{v4} {r}x{c}" + (f" block {block}" if block != 256 else "")
        label += "".join(f" {k}={v}" for k, v in d.items())
        return Candidate(label, "new", v4, meta={"tile_rows": str(r), "tile_cols": str(c), "block": str(block)},
                         defines=d)
    return [Sweep("transpose", Case((16384, 16384), "float32"), "cold", Case((2117, 449), "float32"), [
        Candidate("torch.compile", "peer"), Candidate(v4, "existing", v4),
        t(64, 128), t(128, 64), t(64, 128, MIN_BLOCKS=5), t(128, 64, MIN_BLOCKS=5),
        t(64, 128, 512, MIN_BLOCKS=3), t(128, 64, 512, MIN_BLOCKS=3), t(64, 64, 512),
        Candidate(f"{v4} again", "existing", v4), t(64, 128), t(128, 64), Candidate("torch.compile again", "peer")])]


def tr24b_sweeps(selected):
    """transpose v4 at 512 threads a block (session 24's tr24: fp32 64 x 64 at 512 threads 516.7 us against
    523.5, one sample): fp32 16384^2 and bf16 16384^2 (its 128 x 128 tile, four vectors a thread at 512),
    the defaults and the 512-thread builds alternating, three times each. Predicted: fp32 -1% (the two-vector
    chain a thread is half as long between a tile's loads and its barrier), bf16 within 0.5%."""
    if "transpose" not in selected:
        return []
    v4 = "v4_grouped_order"
    out = []
    for dt in ("float32", "bfloat16"):
        # bf16's 128 x 128 tile at 512 threads spills at 32 registers (4 blocks an SM): 2 blocks, 64 registers
        d = {"MIN_BLOCKS": 2} if dt == "bfloat16" else {}
        cands = [Candidate("torch.compile", "peer")]
        for k in range(3):
            suffix = "" if k == 0 else f" #{k + 1}"
            cands += [Candidate(f"{v4}{suffix}", "existing", v4),
                      Candidate(f"{v4} block 512{suffix}", "new", v4, meta={"block": "512"}, defines=d)]
        out.append(Sweep("transpose", Case((16384, 16384), dt), "cold", Case((2117, 449), dt), cands))
    return out


def peel20_sweeps(selected):
    """softmax fp32 and rmsnorm bf16 rows of 8192 (aligned) and 8191 (misaligned): v2_online /
    v4_dispatch and rmsnorm v4 with and without PASS1_PEEL (session 20). Predicted: 8191 1-5% faster
    with the peel (one DRAM round trip a row in pass 1, not two, on the rows with a head: 3 in 4 fp32,
    7 in 8 bf16); 8192 the same for rmsnorm (48 registers, not 50: 4 blocks an SM either way) and
    0-3% slower for softmax (no scalar to wait for, 2 blocks an SM instead of 3)."""
    out = []
    rms = "v4_l2_two_pass"
    for n in (8192, 8191) if "rmsnorm" in selected else ():  # bf16: pass 1 waits for the head scalar
        peel = Candidate(f"{rms} PASS1_PEEL=1", "new", rms, defines={"PASS1_PEEL": 1})
        out.append(Sweep("rmsnorm", Case((32768, n), "bfloat16"), "cold", Case((257, n), "bfloat16", offset=1), [
            Candidate("torch.compile", "peer"), Candidate(rms, "existing", rms), peel,
            Candidate(f"{rms} again", "existing", rms),
            Candidate(f"{peel.label} again", "new", rms, defines=peel.defines),
            Candidate("torch.compile again", "peer")]))
    if "softmax" not in selected:
        return out
    v2 = "v2_online"
    for n in (8192, 8191):
        peel = [Candidate(f"{v2} PASS1_PEEL=1", "new", v2, defines={"PASS1_PEEL": 1}),
                Candidate(f"{V4} PASS1_PEEL=1", "new", V4, defines={"PASS1_PEEL": 1})]
        out.append(Sweep("softmax", Case((32768, n), "float32"), "cold", Case((257, n), "float32", offset=1), [
            Candidate("torch.compile", "peer"), Candidate(V4, "existing", V4), Candidate(v2, "existing", v2)]
            + peel + [Candidate(f"{V4} again", "existing", V4), Candidate(f"{v2} again", "existing", v2)]
            + [Candidate(f"{c.label} again", c.kind, c.variant, defines=c.defines) for c in peel]
            + [Candidate("torch.compile again", "peer")]))
    return out


def odd21_sweeps(selected):
    """rmsnorm v4 and layernorm v5 (the L2 two-pass kernels) on rows of 8191 (bf16: rows start at 8
    16-byte phases, the weight's column `head` is out of x's phase in 7 rows of 8; fp32: 3 of 4):
    PARAM_SHIFT 0 (those rows element by element: y stored 2 or 4 bytes at a time, rmsnorm bf16 1196 us
    against torch.compile's 404 in peel20) against PARAM_SHIFT 1 (the weight/bias vectors shifted into
    x's phase from five 4-byte loads, or with SHIFT_WORDS 0 from two aligned 16-byte loads, which
    spills in layernorm v5; y in 16-byte stores), layernorm v4 beside them, torch.compile twice; and
    rmsnorm bf16 rows of 8192 (every row aligned) with PARAM_SHIFT 0 and 1, where the kernels must
    tie; layernorm v4 bf16 (bf16's best) at 8191 with its parameters out of phase read element by
    element (PARAM_WORDS 0) or as 4-byte words (session 21). Predicted: y's 16-byte stores move the
    same bytes as the aligned rows, so within 5% of the 8192 rows' time (rmsnorm bf16 ~250 us, fp32
    ~500, layernorm the same), 2-4x faster than PARAM_SHIFT 0; layernorm v4 with words 5-15% faster
    (5 loads a parameter vector where there were 8; y was already stored 16 bytes wide).
    Measured (first run, at 579e3e8, before PARAM_WORDS): rmsnorm bf16 1194 -> 272 us (torch.compile
    402), fp32 1107 -> 501 (646); layernorm v5 bf16 1191 -> 385 (558; v4 355.5), fp32 1102 -> 571.5
    (806); 16-byte loads (SHIFT_WORDS 0) 278 / 500 / 694 (spills) / 574; rows of 8192 248.0 / 248.4."""
    out = []
    for op, var in (("rmsnorm", "v4_l2_two_pass"), ("layernorm", LN5)):
        if op not in selected:
            continue
        for dt in ("bfloat16", "float32"):
            def c(label, **d):
                return Candidate(f"{var} {label}".rstrip(), "new" if d else "existing", var, defines=d)
            cands = [Candidate("torch.compile", "peer"), c("PARAM_SHIFT=0", PARAM_SHIFT=0), c(""),
                     c("SHIFT_WORDS=0", SHIFT_WORDS=0)]
            if op == "layernorm":
                cands.append(Candidate(LN4, "existing", LN4))
            cands += [c("PARAM_SHIFT=0 again", PARAM_SHIFT=0), c("again"), c("SHIFT_WORDS=0 again", SHIFT_WORDS=0),
                      Candidate("torch.compile again", "peer")]
            # Checked on 257 rows at offset 1: x and y at every phase.
            out.append(Sweep(op, Case((32768, 8191), dt), "cold", Case((257, 8191), dt, offset=1), cands))
    if "layernorm" in selected:  # bf16's best (v4: the row in registers), its parameters read as words
        w0 = Candidate(f"{LN4} PARAM_WORDS=0", "new", LN4, defines={"PARAM_WORDS": 0})
        check = Case((257, 8191), "bfloat16", offset=1)
        out.append(Sweep("layernorm", Case((32768, 8191), "bfloat16"), "cold", check, [
            Candidate("torch.compile", "peer"), w0, Candidate(LN4, "existing", LN4),
            Candidate(f"{w0.label} again", "new", LN4, defines=w0.defines),
            Candidate(f"{LN4} again", "existing", LN4)]))
    if "rmsnorm" in selected:
        rms = "v4_l2_two_pass"
        old = Candidate(f"{rms} PARAM_SHIFT=0", "new", rms, defines={"PARAM_SHIFT": 0})
        out.append(Sweep("rmsnorm", Case((32768, 8192), "bfloat16"), "cold", Case((257, 8192), "bfloat16"), [
            Candidate("torch.compile", "peer"), old, Candidate(rms, "existing", rms),
            Candidate(f"{old.label} again", "new", rms, defines=old.defines),
            Candidate(f"{rms} again", "existing", rms)]))
    return out


def odd22_sweeps(selected):
    """Each memory-bound op's best variant on the bench shape and on the same shape one element
    narrower (odd widths: rows at every 16-byte phase), against torch.compile, twice (session 21, to run
    first in session 22). The norms' element-by-element body took 1.9-4.4x the fixed time there (odd21); this asks
    which other op has such a path on its best variant. Predicted from the code: gelu_bias (v6 hands odd
    widths to v5's element path: x loaded and y stored 2 bytes at a time, 8 STG.U16 a vector, as the
    norms did) 3-4x slower than on 8192 and behind torch.compile; softmax (x and y share every row's
    phase: vectors after a head) and transpose (tiles, no vectors across rows) within 10%; sum at
    2^28 - 1 (one head and tail in all) within 2%. gelu_bias v5 / v6 with ODD_VEC 1 (v5_short_fit.cu's
    gelu_bias_flat: x and y as 16-byte vectors over the flat index, the bias stepped per vector) beside
    them: at 8191 within 5% of the 8192 time (the same bytes; 4-5 bias word loads a vector are L1 hits),
    at 8192 unchanged (the aligned path is the same code; the kernel grows from 2680 to 3928
    instructions on sm_90)."""
    plans = {
        "gelu_bias": [(Case((32768, 8192), "bfloat16"), Case((32768, 8191), "bfloat16"), Case((257, 8191), "bfloat16"),
                       ("v6_lean_small", "v5_short_fit"))],
        "softmax": [(Case((32768, 8192), "bfloat16"), Case((32768, 8191), "bfloat16"), Case((257, 8191), "bfloat16"),
                     (V4,))],
        "transpose": [(Case((16384, 16384), "float32"), Case((16383, 16383), "float32"), Case((257, 8191), "float32"),
                       ("v4_grouped_order",))],
        "sum": [(Case((1 << 28,), "bfloat16"), Case(((1 << 28) - 1,), "bfloat16"), Case((8191,), "bfloat16"),
                 ("v5_pdl_finish",))],
    }
    out = []
    for op, rows in plans.items():
        if op not in selected:
            continue
        for even, odd, check, variants in rows:
            for case in (even, odd):
                cands = [Candidate(v, "existing", v) for v in variants]
                if op == "gelu_bias":  # the flat 16-byte path (ODD_VEC 1, off by default until this runs)
                    cands += [Candidate(f"{v} ODD_VEC=1", "new", v, defines={"ODD_VEC": 1}) for v in variants]
                out.append(Sweep(op, case, "cold", check, [Candidate("torch.compile", "peer")] + cands + again(cands)
                                 + [Candidate("torch.compile again", "peer")]))
    return out


def lean17_sweeps(selected):
    """gelu_bias v6's lean kernel (one vector a thread, no run-time tests) at the graph-mode small shape."""
    if "gelu_bias" not in selected:
        return []
    v5, v6 = "v5_short_fit", "v6_lean_small"

    def lean(block, vec_bytes=16):
        label = f"{v6} lean_block={block}" + (f" lean_vec_bytes={vec_bytes}" if vec_bytes != 16 else "")
        return Candidate(label, "new", v6, meta={"lean_block": str(block), "lean_vec_bytes": str(vec_bytes)})
    out = []
    for dt in ("bfloat16", "float32"):
        small = Case((256, 1024), dt)
        out.append(Sweep("gelu_bias", small, "graph", small, [
            Candidate("torch.compile", "peer"), Candidate(v5, "existing", v5),
            Candidate("v3_early_load", "existing", "v3_early_load"), Candidate(v6, "new", v6),
            lean(64), lean(256), lean(128, 8), lean(256, 8), Candidate(f"{v5} again", "existing", v5),
            Candidate(f"{v6} again", "new", v6),
            Candidate("torch.compile again", "peer")]))
    mid = Case((4096, 8192), "bfloat16")  # past one wave: v6 runs v5's kernel and grid
    out.append(Sweep("gelu_bias", mid, "graph", mid, [
        Candidate("torch.compile", "peer"), Candidate(v5, "existing", v5), Candidate(v6, "new", v6)]))
    return out


def shift22_sweeps(selected):
    """transpose v4's shifted kernels against the element path on misaligned rows (session 22), and
    gelu_bias fp32 with ODD_VEC 1. Predicted (v4_grouped_order.cu's header): 16383^2 fp32 525-560 us
    (0.90-0.96x a copy; the element path 1160 us, torch.compile 865), bf16 in proportion, one side
    misaligned in between; 16384^2 the same time with either setting (the aligned kernels are untouched).
    gelu_bias fp32 at 8191: within 10% of 8192 (bf16 measured 17% over)."""
    out = []
    if "transpose" in selected:
        v4 = "v4_grouped_order"
        for shape, dt in [((16384, 16384), "float32"), ((16383, 16383), "float32"), ((16384, 16383), "float32"),
                          ((16383, 16384), "float32"), ((16384, 16384), "bfloat16"), ((16383, 16383), "bfloat16")]:
            cands = [Candidate(f"{v4}", "existing", v4), Candidate(f"{v4} shifted=0", "new", v4, meta={"shifted": "0"})]
            if shape[0] == shape[1] == 16383:  # the odd square: the gather's rotation on and off
                cands.append(Candidate(f"{v4} SHIFT_ROTATE=0", "new", v4, defines={"SHIFT_ROTATE": 0}))
            out.append(Sweep("transpose", Case(shape, dt), "cold", Case((257, 8191), dt),
                             [Candidate("torch.compile", "peer")] + cands + again(cands)
                             + [Candidate("torch.compile again", "peer")]))
    if "gelu_bias" in selected:
        for n in (8192, 8191):
            cands = [Candidate(v, "existing", v) for v in ("v6_lean_small", "v5_short_fit")]
            out.append(Sweep("gelu_bias", Case((32768, n), "float32"), "cold", Case((257, n), "float32"),
                             [Candidate("torch.compile", "peer")] + cands + again(cands)
                             + [Candidate("torch.compile again", "peer")]))
    return out


def ln23_sweeps(selected):
    """layernorm bf16 32768 x 8192: v5 (two passes through L2) at rmsnorm v4's bf16 geometry with the cheaper
    merge and the peel, against v4; rmsnorm v4 bf16 as the layout's floor. Predicted: the merge and the peel
    are each worth <= 2% (the fp32 sweeps ln19c / ln19d: merge 0, peel 2.7%); v5 needs 5% to pass v4."""
    out = []
    shifted = Case((1000, 8192), "bfloat16", params=(("shift", 1000.0),))
    if "layernorm" in selected:
        cands = [ln5(f"b256 SM{t}{' ' if k else ''}{' '.join(f'{a}={b}' for a, b in k.items())}", 256,
                     SM_THREADS=t, **k)
                 for t in (1024, 1536) for k in ({}, {"LN5_MERGE": 1}, {"PASS1_PEEL": 1},
                                                 {"LN5_MERGE": 1, "PASS1_PEEL": 1})]
        cands += [ln5("b256 SM1024 LN5_FOLD=1", 256, SM_THREADS=1024, LN5_FOLD=1),
                  ln5("b256 SM1024 LN5_MERGE=1 LN5_FOLD=1", 256, SM_THREADS=1024, LN5_MERGE=1, LN5_FOLD=1)]
        out.append(ln_sweep("bfloat16", cands + again(cands[:4]) + [Candidate(f"{LN4} again", "existing", LN4)],
                            shifted))
    if "rmsnorm" in selected:
        r4 = [Candidate("v4_l2_two_pass", "existing", "v4_l2_two_pass")]
        out.append(Sweep("rmsnorm", Case((32768, 8192), "bfloat16"), "cold", Case((1000, 8192), "bfloat16"),
                         [Candidate("torch.compile", "peer")] + r4 + again(r4)))
    return out


def ln23b_sweeps(selected):
    """layernorm bf16 32768 x 8192: v5 with the merge, the peel and the fold at every geometry near
    rmsnorm's. Predicted: 128 threads a row halves the per-row instructions a thread (~8 of ~20 an
    element: setup, merge, pass-2 prologue) and wins 2-4% over 256 threads; UNROLL2 2 ~1%."""
    if "layernorm" not in selected:
        return []
    shifted = Case((1000, 8192), "bfloat16", params=(("shift", 1000.0),))
    mpf = {"LN5_MERGE": 1, "PASS1_PEEL": 1, "LN5_FOLD": 1}
    cands = [ln5("b256 SM1536 MERGE PEEL", 256, SM_THREADS=1536, LN5_MERGE=1, PASS1_PEEL=1)]
    cands += [ln5(f"b{b} SM{t} MPF{' UNROLL2=2' if u2 else ''}", b, SM_THREADS=t, **mpf,
                  **({"UNROLL2": 2} if u2 else {}))
              for b, t, u2 in ((256, 1536, 0), (128, 1536, 0), (128, 2048, 0), (128, 1024, 0), (256, 2048, 0),
                               (512, 1536, 0), (256, 1024, 1), (128, 1024, 1))]
    # (Run at a77708d with four more candidates, LN5_IDX2 1 at b256 / b128 x SM1536 / SM2048: the knob is gone.)
    return [ln_sweep("bfloat16", cands + again(cands[:4]) + [Candidate(f"{LN4} again", "existing", LN4)], shifted)]


def ln25_sweeps(selected):
    """layernorm 32768 x 8192, bf16 and fp32: pass 2 in three operations an element (kl::ln_affine,
    LN_SCALE_FOLD 1, the default since session 25) against the plain four (LN_SCALE_FOLD 0), v4 and v5,
    alternating twice; torch.compile before and after. Predicted: bf16 (issue-bound, ncu session 23) v5 -2 to -3%
    (32 of ~1100 instructions a thread a row), v4 -1 to -2% (16 fewer in its SASS); fp32 within 0.5% (DRAM-bound)."""
    out = []
    for dt in ("bfloat16", "float32"):
        if "layernorm" not in selected:
            break
        cands = [Candidate(f"{LN4} LN_SCALE_FOLD=0", "new", LN4, defines={"LN_SCALE_FOLD": 0}),
                 Candidate(LN5, "existing", LN5), ln5("LN_SCALE_FOLD=0", LN_SCALE_FOLD=0)]
        shifted = Case((1000, 8192), dt, params=(("shift", 1000.0),))
        out.append(ln_sweep(dt, cands + [Candidate(f"{LN4} again", "existing", LN4)] + again(cands), shifted))
    return out


def ln25b_sweeps(selected):
    """layernorm bf16 32768 x 8192 after ln25 (v5 259 us, v4 259-260: 0.963x a copy paired, the target 0.97):
    v5's pass 2 with its four pointers stepped once a 2 or 4 vectors (X2_STEPS: 75 -> ~63 SASS lines a bf16
    vector, sm_90), and with two x re-reads in flight together (X2_AHEAD 2; fp32 gained 1-2 us with X2_AHEAD 4
    in session 19, bf16 never ran it), against the default, alternating twice; fp32 X2_STEPS beside.
    Predicted: X2_STEPS 4 bf16 -2 to -4% (~48 of ~690 instructions a thread a row, issue-bound), fp32 within
    0.5%; X2_AHEAD 0-1%. Measured slower (run at 4b28eef: bf16 X2_STEPS 4 +10%, 2 +8%,
    X2_AHEAD 2 +12%; fp32 X2_STEPS 4 the same, 2 +5%); the X2_STEPS knob is gone (a no-op macro here)."""
    if "layernorm" not in selected:
        return []
    # (X2_AHEAD 4 and UNROLL2 2 spill at 40 registers under NVRTC 13.5: 16-68 bytes; not run)
    out = []
    for dt in ("bfloat16", "float32"):
        cands = [Candidate(LN5, "existing", LN5), ln5("X2_STEPS=4", X2_STEPS=4), ln5("X2_STEPS=2", X2_STEPS=2)]
        if dt == "bfloat16":
            cands.append(ln5("X2_AHEAD=2", X2_AHEAD=2))
        shifted = Case((1000, 8192), dt, params=(("shift", 1000.0),))
        out.append(ln_sweep(dt, cands + [Candidate(f"{LN4} again", "existing", LN4)] + again(cands), shifted))
    return out


def ln25c_sweeps(selected):
    """layernorm bf16 32768 x 8192 after ln_affine: v5 at 2048 threads an SM (32 registers without spills
    since the three-operation y freed two; session 23's 2048 build lost 10%), and v4's late-parameter knobs
    (PARAMS_AHEAD 4: every late weight/bias vector above the barrier; PARAMS_EARLY 0: weight late too),
    against the defaults, alternating twice. Predicted: v5 at 2048 within 1% either way (more rows in flight,
    but session 23's loss); v4's knobs within 0.5%. Written in session 25, not run (no device time left)."""
    if "layernorm" not in selected:
        return []
    cands = [Candidate(LN5, "existing", LN5), ln5("SM2048", SM_THREADS=2048),
             Candidate(f"{LN4} PARAMS_AHEAD=4", "new", LN4, defines={"PARAMS_AHEAD": 4}),
             Candidate(f"{LN4} PARAMS_EARLY=0", "new", LN4, defines={"PARAMS_EARLY": 0})]
    shifted = Case((1000, 8192), "bfloat16", params=(("shift", 1000.0),))
    return [ln_sweep("bfloat16", cands + [Candidate(f"{LN4} again", "existing", LN4)] + again(cands), shifted)]


def ln26_sweeps(selected):
    """layernorm 32768 x 8192, bf16 and fp32: v5 with `@vec_kernel layernorm_vec` (rows of whole 16-byte vectors
    at aligned addresses: no geometry, head / tail scalars or alignment branches a row) against v5's general
    kernel (`@vec_kernel` empty), alternating twice, v4 and torch.compile beside. Predicted from sm_90 SASS (bf16
    per row and thread: ~620 instructions on the bench path against ~730, -15%; issue-bound, session 23's ncu):
    bf16 -3 to -5% (ln_affine's -4% of instructions gave -1.8%), fp32 -1 to -2% (its kernel is nearer the copy)."""
    if "layernorm" not in selected:
        return []
    out = []
    for dt in ("bfloat16", "float32"):
        cands = [Candidate(f"{LN5} vec", "existing", LN5),
                 Candidate(f"{LN5} general", "new", LN5, meta={"vec_kernel": ""})]
        shifted = Case((1000, 8192), dt, params=(("shift", 1000.0),))
        out.append(ln_sweep(dt, cands + again(cands), shifted))
    return out


def rms26_sweeps(selected):
    """rmsnorm 32768 x 8192, bf16 and fp32: v4_l2_two_pass with `@vec_kernel rmsnorm_vec` (layernorm v5's session-26
    build: no geometry, head / tail scalars or body choice a row) against its general kernel, alternating twice,
    torch.compile before and after. Predicted from sm_90 SASS (848 -> 424 lines bf16, 632 -> 328 fp32; both near
    the copy rate already, rmsnorm bf16 issues 60% of its slots, session 23's ncu): bf16 -0.5 to -1.5%, fp32 within
    0.5%. The paired runs had bf16 at 0.996x torch.compile, fp32 1.000x (session 18). Measured: bf16 vec 251.4 / 251.9
    against 250.1 / 249.7 (slower), fp32 a tie: the vec build stays a knob for rmsnorm."""
    if "rmsnorm" not in selected:
        return []
    v4 = "v4_l2_two_pass"
    out = []
    for dt in ("bfloat16", "float32"):
        # (ran at f9d377e with the vec build as the header's default; since, it is a knob and the general kernel
        # the default)
        cands = [Candidate(f"{v4} vec", "new", v4, meta={"vec_kernel": "rmsnorm_vec"}),
                 Candidate(f"{v4} general", "existing", v4)]
        out.append(Sweep("rmsnorm", Case((32768, 8192), dt), "cold", Case((1000, 8192), dt),
                         [Candidate("torch.compile", "peer")] + cands + again(cands)
                         + [Candidate("torch.compile again", "peer")]))
    return out


def fast27_sweeps(selected):
    """softmax wide rows: v4_dispatch with SB_FAST_EXP 1 against its default, alternating twice. The kernels are
    latency-bound per warp (ncu, session 23: 48% of issue slots at ~7.5 cycles a warp instruction; the time follows
    the SM clock, 353 us under ncu's locked clocks against 276 timed), so a row's time follows its instruction
    stream: the sweep up to the merge is 21% shorter (bf16), the whole row ~13%. Predicted: bf16 2048 x 131072
    -2 to -4% (v14 267 -> ~258-262 us), fp32 within 1% (its EX2 ablation saved nothing: nearer the copy rate).
    Measured (docs/runs/2026-12-02-h200-sweep_fast27.json): bf16 2048 x 131072 -0.8%, 4096 x 65536 -1.5%, fp32 and
    1024 x 262144 (v16: another kernel, the control) the same."""
    if "softmax" not in selected:
        return []
    out = []
    for m, n, dt in ((2048, 131072, "bfloat16"), (2048, 131072, "float32"), (4096, 65536, "bfloat16"),
                     (1024, 262144, "bfloat16")):
        # (ran at 7855d4a, where SB_FAST_EXP 0 was the default, labelled "default"; 1 is the default since)
        cands = [Candidate(f"{V4} fast", "new", V4, defines={"SB_FAST_EXP": 1}),
                 Candidate(f"{V4} default", "new", V4, defines={"SB_FAST_EXP": 0})]
        out.append(Sweep("softmax", Case((m, n), dt), "cold", Case((256, n), dt), cands + again(cands)))
    return out


def fast27b_sweeps(selected):
    """v13's body with PR_FAST_EXP 1 against 0 (v4_dispatch where it takes v13 / v16 / v14's side grid; v13 alone at the
    bench shape, which it held at 289.6 us against v12's 277 in session 12: one 1024-thread block an SM, so its chain is
    its time). Predicted: v13 alone -5 to -10%, v16's widths -3 to -6%, v14 (the side grid does ~6% of the rows) within
    0.5%, fp32 4096 x 65536 -1 to -3%. Measured (docs/runs/2026-12-02-h200-sweep_fast27b.json): v13 alone -2.8%
    (281.7 against 289.8 us), v16 -0.6% at 262144 and +0.8% at 151936, v14 and fp32 the same: the knob stays off."""
    if "softmax" not in selected:
        return []
    out = []
    for m, n, dt in ((2048, 131072, "bfloat16"), (1325, 151936, "bfloat16"), (1024, 262144, "bfloat16"),
                     (4096, 65536, "float32")):
        cands = [Candidate(f"{V4} PR_FAST_EXP 1", "new", V4, defines={"PR_FAST_EXP": 1}),
                 Candidate(f"{V4} PR_FAST_EXP 0", "new", V4, defines={"PR_FAST_EXP": 0})]
        if n == 131072:
            v13 = "v13_packed_regs"
            cands += [Candidate(f"{v13} PR_FAST_EXP 1", "new", v13, defines={"PR_FAST_EXP": 1}),
                      Candidate(f"{v13} PR_FAST_EXP 0", "new", v13, defines={"PR_FAST_EXP": 0})]
        out.append(Sweep("softmax", Case((m, n), dt), "cold", Case((256, n), dt), cands + again(cands)))
    return out


def split27_sweeps(selected):
    """softmax bf16 2048 x 131072: is v14's side grid still worth its place beside v12's faster rows? v4_dispatch (v14
    at
    this width), v12_dynamic_rows, v14 `@side_margin 4096` (the main grid alone, v14's launch) and v14, three times
    alternating. The run at 678edb4 had v12 265.6 us, v14 267.6, v4 267.5 (one sample each; session 13 had v14 2.8%
    ahead of v12). Predicted: v12 and the margin build tie, 0.5-1% ahead of v14."""
    if "softmax" not in selected:
        return []
    cands = [Candidate(V4, "existing", V4), Candidate("v12_dynamic_rows", "existing", "v12_dynamic_rows"),
             Candidate("v14_split_grid side off", "new", "v14_split_grid", meta={"side_margin": "4096"}),
             Candidate("v14_split_grid", "existing", "v14_split_grid")]
    return [Sweep("softmax", Case((2048, 131072), "bfloat16"), "cold", Case((256, 131072), "bfloat16"),
                  cands + again(cands) + [dataclasses.replace(c, label=f"{c.label} third") for c in cands])]


def stages27_sweeps(selected):
    """v12 at 3 stages against 2 (its header, v4's DISPATCH_BULK / _E32), bf16 and fp32 2048 x 131072, v4 beside,
    alternating twice. Predicted: within 0.5% either way (session 8's 3 stages lost 0.8% in bf16; a shorter row
    leaves less time to cover a load, so a deeper ring may now help a little). Measured (docs/runs/2026-12-02-h200-
    sweep_stages27.json): bf16 3 stages 267.0 / 266.3 us against 2's 266.1 / 265.8, fp32 537.5 / 536.7 against 528.4 /
    529.4: 2 stays."""
    if "softmax" not in selected:
        return []
    v12 = "v12_dynamic_rows"
    out = []
    for dt, knobs in (("bfloat16", {}), ("float32", {"min_cluster": "16", "elems": "32"})):
        cands = [Candidate(V4, "existing", V4),
                 Candidate(f"{v12} 2 stages", "new", v12, meta={"stages": "2", **knobs}),
                 Candidate(f"{v12} 3 stages", "new", v12, meta={"stages": "3", **knobs})]
        out.append(Sweep("softmax", Case((2048, 131072), dt), "cold", Case((256, 131072), dt), cands + again(cands)))
    return out


def xchg27_sweeps(selected):
    """v4_dispatch with SB_WARP_XCHG 1 against 0 where its rows are v12's (staged_rows.cuh). Predicted from the chain
    (~300 of ~7700 cycles a row, SB_FAST_EXP's ~700 bought v12 4%): bf16 -1 to -2%, fp32 within 0.5%. Measured
    (docs/runs/2026-12-02-h200-sweep_xchg27.json): bf16 131072 -0.6%, 65536 -0.1%, fp32 -0.1%: the default since.
    (Ran at 6c48d13, where 0 was the default; both builds are spelled out.)"""
    if "softmax" not in selected:
        return []
    out = []
    for m, n, dt in ((2048, 131072, "bfloat16"), (4096, 65536, "bfloat16"), (2048, 131072, "float32")):
        cands = [Candidate(f"{V4} SB_WARP_XCHG 1", "new", V4, defines={"SB_WARP_XCHG": 1}),
                 Candidate(f"{V4} SB_WARP_XCHG 0", "new", V4, defines={"SB_WARP_XCHG": 0})]
        out.append(Sweep("softmax", Case((m, n), dt), "cold", Case((256, n), dt), cands + again(cands)))
    return out


def ablate28_sweeps(selected):
    """(session 28) What the cluster exchange costs v12's rows now: ncu's source counters (session 28, 2048 x 131072)
    put 22% (bf16) and 34% (fp32) of the warps' stall samples on one instruction, the wait for the cluster's pairs.
    v4_dispatch (v12 there) against itself with SB_ABLATE 1 (no exchange: each block's own (max, sum), unchecked) and
    SB_ABLATE 3 (no exchange, no EX2), bf16 and fp32, alternating twice. Predicted: without the exchange bf16 3-6%
    faster, fp32 3-8%; if so, a row loop that hides the exchange behind the next row's sweep is worth building.
    v4 with SB_ABLATE 1 faulted (see ov28); since session 29 dynamic_rows refuses bit 1 at compile time, so those
    candidates now report a compile error (session 12's sweep said so first: bit 1 only on v10's static rows)."""
    if "softmax" not in selected:
        return []
    out = []
    for dt in ("bfloat16", "float32"):
        cands = [Candidate(V4, "existing", V4),
                 Candidate(f"{V4} SB_ABLATE 1", "new", V4, defines={"SB_ABLATE": 1}, check=False),
                 Candidate(f"{V4} SB_ABLATE 3", "new", V4, defines={"SB_ABLATE": 3}, check=False)]
        out.append(Sweep("softmax", Case((2048, 131072), dt), "cold", Case((256, 131072), dt), cands + again(cands)))
    return out


def ov28_sweeps(selected):
    """(session 28) softmax v17_overlap_rows (v12's rows with each row's cluster exchange hidden behind the next row's
    sweep) at 2048 x 131072 against v4_dispatch (v12 there), alternating twice. Predicted (v17's header): bf16 -2 to
    -4% against v12, fp32 -3 to -6%. First run (bf16; docs/runs/2026-12-03-h200-sweep_ov28.json): v4 262.8 us, v17
    283.1, v17 at 512 threads 300.7: +8% and +14%, the second sweep's instructions cost more than the wait they hide;
    v4 with SB_ABLATE 1 (no exchange) faulted, ending that run before fp32. So `OV28_DTYPES` picks the dtypes
    (default both), and fp32 runs v17 at 32 values a thread (its C = 16 share is 8 vectors: 64 held 16) and at 512
    threads x 16."""
    if "softmax" not in selected:
        return []
    out = []
    for dt in os.environ.get("OV28_DTYPES", "bfloat16,float32").split(","):
        e = "64" if dt == "bfloat16" else "32"
        cands = [Candidate(V4, "existing", V4),
                 Candidate(f"v17_overlap_rows {e} values", "new", "v17_overlap_rows", meta={"elems": e}),
                 Candidate("v17_overlap_rows 512 threads", "new", "v17_overlap_rows",
                           meta={"threads": "512", "elems": str(int(e) // 2)})]
        out.append(Sweep("softmax", Case((2048, 131072), dt), "cold", Case((256, 131072), dt), cands + again(cands)))
    return out


def t128_28_sweeps(selected):
    """(session 28) v12 in 128-thread blocks (64 values a thread: clusters of 16, up to four blocks an SM) at 2048 x
    131072, bf16 and fp32, 2 and 3 stages, against v4_dispatch (v12 in 256-thread blocks, two an SM), alternating
    twice; and the tail: v4 at 2040 rows (68 rows for each of the 30 clusters the H200 places, no partial last
    round) against 2048. ncu (session 28) has v12's warps of a block in step (one exchange a row couples them) and
    only two blocks an SM to interleave; four smaller blocks an SM give four. Predicted: 128 threads within +-2%
    (session 7's v10 at 128 threads: 287.9 against 286.7 us, before the faster sweeps); 2040 rows 1.0-1.4% faster
    than 2048 (rows 0.4% fewer; a last round with 8 of 30 clusters busy).
    Measured (docs/runs/2026-12-03-h200-sweep_t128_28.json): bf16 128 threads 264.1 / 263.4 us, 3 stages 265.3 / 265.1,
    against v4's 265.1 / 264.4 (-0.3%); fp32 128 threads 526.5 / 527.4, **3 stages 520.7 / 520.8** against 529.2 /
    528.0 (-1.5%). 2040 rows 263.5 / 264.0 against 2048's 264.2 / 264.3: -0.2% for 0.4% fewer rows, so the last
    round costs nothing measurable (the counter-fed rows already even it out); predicted 1.0-1.4%: wrong.
    Correction (session 29): this ran at 272884e, where v12's launch took its `_full` instances for rows of exactly C
    x block x elems; every 2048 x 131072 candidate here above was one (128 x 64 x 16 = 131072). The general
    128-thread kernel runs fp32 574-584 us (t128_29, scripts/probe_t128.py)."""
    if "softmax" not in selected:
        return []
    v12 = "v12_dynamic_rows"
    out = []
    for dt in ("bfloat16", "float32"):
        cands = [Candidate(V4, "existing", V4),
                 Candidate(f"{v12} 128 threads", "new", v12, meta={"threads": "128", "stages": "2"}),
                 Candidate(f"{v12} 128 threads 3 stages", "new", v12, meta={"threads": "128", "stages": "3"})]
        out.append(Sweep("softmax", Case((2048, 131072), dt), "cold", Case((256, 131072), dt), cands + again(cands)))
    tail = [Candidate(V4, "existing", V4)]
    for m in (2040, 2048):
        out.append(Sweep("softmax", Case((m, 131072), "bfloat16"), "cold", Case((256, 131072), "bfloat16"),
                         tail + again(tail)))
    return out


def full28_sweeps(selected):
    """(session 28) v12's `_full` instances (staged_rows.cuh FULL: rows of exactly C x 256 x E elements, 16-byte
    aligned: no row geometry, head / tail scalars, per-vector predicates or scalar stores; sm_90 SASS of
    softmax_dy_c8_bf16 1920 -> 1576 lines) against the general kernels (`@full 0`), through v4_dispatch: bf16 2048 x
    131072 (C = 8) and 4096 x 65536 (C = 4), fp32 2048 x 131072 (the e32 clusters of 16), alternating, three times
    at the bench shapes. ncu (session 28): v12 bf16 executes ~900 warp instructions a warp and row, ~450 of them
    outside the per-element work. Predicted: bf16 -1 to -2% (session 27's -21% of the sweep's instructions bought
    -4%, layernorm's whole-vector kernel -21% bought -2.9%), fp32 within 0.5% (its time is not the chain).
    Measured (docs/runs/2026-12-03-h200-sweep_full28.json, at 272884e): bf16 131072 264.5 / 264.4 / 264.5 us against
    263.4 / 264.5 / 264.1, 65536 264.1 / 263.6 against 263.0 / 263.3, fp32 527.8-528.2 against 526.7-527.6: none
    (+0.1-0.3%). The instances are removed; `@full` is read by nothing since, so the set now times v4 against itself."""
    if "softmax" not in selected:
        return []
    out = []
    for (m, n, dt), reps in (((2048, 131072, "bfloat16"), 3), ((4096, 65536, "bfloat16"), 2),
                             ((2048, 131072, "float32"), 3)):
        cands = [Candidate(V4, "existing", V4), Candidate(f"{V4} full 0", "new", V4, meta={"full": "0"})]
        runs = cands + again(cands) + ([dataclasses.replace(c, label=f"{c.label} third") for c in cands] if reps > 2
                                       else [])
        out.append(Sweep("softmax", Case((m, n), dt), "cold", Case((256, n), dt), runs))
    return out


def t128_29_sweeps(selected):
    """(session 29) v4_dispatch's "dynamic_t128" entry (v12 in clusters of 16 blocks of 128 threads holding 64 values
    each, 3 stages: softmax_dy_t128_c16_*, DISPATCH_BULK_T128) against v4 as it stands, on fp32 rows of 65536-131072
    (v4: v12's clusters of 4 / 8 in 256-thread blocks to 115711, e32's clusters of 16 from 115712), 1 GiB each
    way, alternating twice. Session 28 (t128_28) measured this build as v12 at 2048 x 131072 only: 520.7 / 520.8 us
    against 528.0 / 529.2. Predicted: -1.5% at 131072, the same at 115712-131072 (e32's widths: the same shares in
    fewer bytes), no gain at 65536-98304, where v4's clusters of 4-8 already keep two stages of 256-thread blocks."""
    if "softmax" not in selected:
        return []
    out = []
    for n in (65536, 81920, 98304, 114688, 122880, 131072):
        cands = [Candidate(V4, "existing", V4), only("dynamic_t128")]
        out.append(Sweep("softmax", Case((2**28 // n, n), "float32"), "cold", Case((256, n), "float32"),
                         cands + again(cands)))
    return out


def t128_29b_sweeps(selected):
    """(session 29) t128_29 measured v4's general t128 instances 9% slower than e32 at fp32 2048 x 131072 (574 against
    526 us), and v12 built with the same knobs as slow (probe, scripts/probe_t128.py: 579-584): session 28's 520.7 us
    (t128_28) was v12's `_full` instance at 128 threads, rows of exactly 16 x 128 x 64 (272884e, removed at 9aa308f
    after the 256-thread `_full` instances gained nothing). Here v4's softmax_dy_t128_c16_full_f32 (the same SASS as
    that build) through `@dispatch_only dynamic_t128` against v4 (e32), alternating three times. Predicted: -1.5%,
    as t128_28."""
    if "softmax" not in selected:
        return []
    cands = [Candidate(V4, "existing", V4), only("dynamic_t128")]
    runs = cands + again(cands) + [dataclasses.replace(c, label=f"{c.label} third") for c in cands]
    return [Sweep("softmax", Case((2048, 131072), "float32"), "cold", Case((256, 131072), "float32"), runs)]


def geo33_sweeps(selected):
    """(session 33) rmsnorm bf16 32768 x 8192 (0.994x torch.compile, "same", in session 32's paired run): ncu with the
    clocks left alone (docs/runs/ncu/2026-12-03-h200-rmsnorm-*-clock-none.log) has both kernels moving the same DRAM
    bytes (537 MB read, 511 MB written) and the same L2 read misses, so pass 2 is not the gap; the geometry is
    what differs. torch.compile runs 4 rows an SM of 512 threads (32 registers, 93% occupancy); v4 4 rows of 256
    (50 registers, 47%); in fp32 both run 3 rows of 512 and v4 ties or leads (496.1 against 497.3 under ncu).
    Session 5 measured v4 at 512 threads and 2048 an SM 264 us, but that was its first build (scalar-branch loads,
    no predicated asm). Candidates: 512 threads at 2048 an SM (torch.compile's geometry), 512 at 1536 (3 rows),
    256 at 1280 (5 rows), 1024 at 2048 (2 rows), against the shipped 256 at 1024, alternating twice, torch.compile
    before and after. Predicted: 512 at 2048 -0.5 to -1% (the row's serial work per thread halves at the same rows
    an SM), the others slower (session 5: rows an SM set the time, 4 best).
    Measured (at 37a9c77, docs/runs/2026-12-03-h200-sweep_geo33.json): 512@2048 260.5 / 260.5 us (wrong in sign: ncu
    has it issuing 72% of its slots), 256@1024 248.8 / 249.8, 512@1536 285.6 / 285.5, 256@1280 249.1 / 248.9,
    1024@2048 418.4 / 416.7; torch.compile 247.7 / 247.2."""
    if "rmsnorm" not in selected:
        return []
    v4 = "v4_l2_two_pass"

    def geo(block, sm):
        return Candidate(f"{v4} {block}@{sm}", "new", v4, meta={"block_bf16": str(block)},
                         defines={"SM_THREADS_BF16": sm})
    cands = [geo(512, 2048), Candidate(f"{v4} 256@1024", "existing", v4), geo(512, 1536), geo(256, 1280),
             geo(1024, 2048)]
    return [Sweep("rmsnorm", Case((32768, 8192), "bfloat16"), "cold", Case((1000, 8192), "bfloat16"),
                  [Candidate("torch.compile", "peer")] + cands + again(cands)
                  + [Candidate("torch.compile again", "peer")])]


def geo33b_sweeps(selected):
    """(session 33) After geo33: v4 at torch.compile's geometry (512 threads, 2048 an SM) ran 260.5 us against 248.8
    shipped and torch.compile's 247.2-247.7, and ncu had it issuing 72% of its slots (IPC 2.93; shipped 1.95 at 48%,
    torch.compile 1.78 at 45%): IPC x duration, 1.75x torch.compile's instructions at the same geometry. At 512
    threads a bf16 row of 8192 is 2 vectors a thread, so UNROLL 4 leaves half of pass 1's load slots predicated
    off and still unpacks and squares their zeros, and the general kernel adds its geometry, head / tail scalars
    and body choice a row. Candidates at 512 / 2048: UNROLL 2 (pass 1 one step of exactly the row), the
    whole-vector build (`@vec_kernel rmsnorm_vec`) with UNROLL 2 and 4; the whole-vector build at the shipped
    256 / 1024 (session 26: +0.7%); against the shipped kernel, alternating twice, torch.compile before and after.
    Predicted: the vec build with UNROLL 2 at 512 / 2048 within 0.5% of torch.compile (the leanest stream at its
    geometry); UNROLL 2 alone 252-256 (half of the excess).
    Measured (at 223320a, docs/runs/2026-12-03-h200-sweep_geo33b.json): vec 512@2048 U2 248.1 / 247.3 us, 256@1024
    248.4 / 248.4, 512@2048 U2 255.9 / 255.8, vec 512@2048 U4 248.8 / 247.9, vec 256@1024 252.0 / 251.5;
    torch.compile 247.4 / 247.8. Both predictions held; the vec build at 512 / 2048 (U2) became the default."""
    if "rmsnorm" not in selected:
        return []
    v4 = "v4_l2_two_pass"

    def c(label, block=None, sm=None, vec=False, **d):
        meta = {"block_bf16": str(block)} if block else {}
        if vec:
            meta["vec_kernel"] = "rmsnorm_vec"
        defines = ({"SM_THREADS_BF16": sm} if sm else {}) | d
        return Candidate(f"{v4} {label}", "new" if meta or defines else "existing", v4, meta=meta, defines=defines)
    cands = [c("vec 512@2048 U2", 512, 2048, True, UNROLL=2), c("256@1024"), c("512@2048 U2", 512, 2048, UNROLL=2),
             c("vec 512@2048 U4", 512, 2048, True), c("vec 256@1024", vec=True)]
    return [Sweep("rmsnorm", Case((32768, 8192), "bfloat16"), "cold", Case((1000, 8192), "bfloat16"),
                  [Candidate("torch.compile", "peer")] + cands + again(cands)
                  + [Candidate("torch.compile again", "peer")])]


def geo33c_sweeps(selected):
    """(session 33) rmsnorm 32768 x 8192 with the whole-vector build on by default (bf16 at its own 512 threads, 2048
    an SM, UNROLL 2; fp32 at the general kernel's 512 / 1536): the header as it stands against the general kernel
    (`@vec_kernel` empty), bf16 and fp32, alternating three times, torch.compile before and after. Predicted: bf16
    -0.2 to -0.6% (geo33b: 247.7 against 248.4 mean), fp32 within 0.3% (session 26's rms26: 498.5 / 498.8 against
    499.1). Measured (at 715ae81, docs/runs/2026-12-03-h200-sweep_geo33c.json): bf16 vec 249.8 / 248.3 / 249.0 us
    against general 249.0 / 249.9 / 249.0 (mean -0.1%, inside the spread), torch.compile 249.0 / 248.0; fp32 vec
    499.2 / 498.8 / 498.9 against 498.3 / 499.5 / 498.9, torch.compile 498.1 / 497.6: ties."""
    if "rmsnorm" not in selected:
        return []
    v4 = "v4_l2_two_pass"
    out = []
    for dt in ("bfloat16", "float32"):
        cands = [Candidate(f"{v4} vec (default)", "existing", v4),
                 Candidate(f"{v4} general", "new", v4, meta={"vec_kernel": ""})]
        out.append(Sweep("rmsnorm", Case((32768, 8192), dt), "cold", Case((1000, 8192), dt),
                         [Candidate("torch.compile", "peer")] + cands + again(cands)
                         + [dataclasses.replace(c, label=f"{c.label} third") for c in cands]
                         + [Candidate("torch.compile again", "peer")]))
    return out


# The sets are records of what ran (docstring, session): a candidate's macros and header values are spelled
# out where its label names them, but one that leaves a knob at its default takes today's default.
SETS = {"widths": widths_sweeps, "grid": grid_sweeps, "vocab": vocab_sweeps, "mid": mid_sweeps, "anyc": anyc_sweeps,
        "half": half_sweeps, "half_after": half_after_sweeps, "w262k": w262k_sweeps, "ln16": ln16_sweeps,
        "lean17": lean17_sweeps, "ln19": ln19_sweeps,
        "ln19b": ln19b_sweeps, "ln19c": ln19c_sweeps, "ln19d": ln19d_sweeps, "tr19": tr19_sweeps,
        "tr24": tr24_sweeps, "tr24b": tr24b_sweeps,
        "peel20": peel20_sweeps, "odd21": odd21_sweeps, "odd22": odd22_sweeps,
        "shift22": shift22_sweeps, "ln23": ln23_sweeps, "ln23b": ln23b_sweeps,
        "ln25": ln25_sweeps, "ln25b": ln25b_sweeps, "ln25c": ln25c_sweeps,
        "ln26": ln26_sweeps, "rms26": rms26_sweeps, "fast27": fast27_sweeps, "fast27b": fast27b_sweeps,
        "split27": split27_sweeps, "stages27": stages27_sweeps, "xchg27": xchg27_sweeps,
        "ablate28": ablate28_sweeps, "ov28": ov28_sweeps, "t128_28": t128_28_sweeps, "full28": full28_sweeps,
        "t128_29": t128_29_sweeps, "t128_29b": t128_29b_sweeps,
        "geo33": geo33_sweeps, "geo33b": geo33b_sweeps, "geo33c": geo33c_sweeps}
sm.sweeps = SETS[os.environ.get("SWEEP_SET", "widths")]
if __name__ == "__main__":
    sys.exit(sm.main())
