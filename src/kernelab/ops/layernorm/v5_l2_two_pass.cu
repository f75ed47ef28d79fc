// v5_l2_two_pass: torch.compile's algorithm: a looped two-pass row that keeps nothing of x in
// registers between the passes. Pass 1 reads x (16-byte vectors, UNROLL in flight per thread)
// with an L2 evict-last policy and accumulates per-thread moments; one barrier merges them exactly;
// pass 2 re-reads x (an L1/L2 hit: the row was just read) with evict-first, loads weight and bias,
// and writes y.
//
// What changed from v4 (the best so far: bf16 1.12x torch.compile, fp32 0.99x): v4 holds the row
//   in registers (bf16 256 threads x 32 elements, fp32 512 x 16, 64 registers: 1024 threads per SM)
//   and reads x from DRAM once with no hint. v5 is the Triton kernel inductor generates for
//   F.layer_norm (.scratch/compile/compile_layernorm_fp32.py, triton_red_fused_native_layer_norm_0:
//   XBLOCK 1, a Welford loop over R0_BLOCK chunks with eviction_policy 'evict_last', then a loop
//   that re-loads x with 'evict_first' and weight and bias with 'evict_last'), written out in CUDA
//   on rmsnorm v4's machinery (../rmsnorm/norm_l2.cuh: the hints, the knobs, the group-per-row
//   geometry): (1) pass 1's loads are ld.global.L1::evict_last.L2::cache_hint with a
//   createpolicy.fractional.L2::evict_last policy, pass 2's x loads ld.global.L1::evict_first
//   .L2::cache_hint with an evict-first policy; (2) the moments: each thread sums d = x - pivot
//   (v0's pivot, x[row][0] until session 24: x = 1000 + N(0, 1) keeps its precision; since session
//   24 each thread's own pivot, moved to the row's median of x[0..2] after pass 1, below)
//   and d^2 over its elements, turns them
//   into its (count n_t, mean_t, M2_t = Q_t - S_t mean_t) (the cancellation is per thread: its
//   rounding, ~1e-7 of Q_t, adds over threads in random directions), each warp merges its lanes'
//   exactly, M2_w = sum [M2_t + n_t (mean_t - m_w)^2] (5 + 5 shuffles and a REDUX), and one
//   barrier merges the warps the same way (layernorm v4's merge_warps, per group of warps). No
//   division per element (Triton's Welford divides per element), no E[x^2] - E[x]^2 over the row;
//   (3) 32 registers (2048 threads per SM, sm_80-sm_100; knob SM_THREADS) and a short block
//   life; (4) 512 threads per row (`@block 512`, inductor's num_warps = 16 for r0 = 8192);
//   `@rows_per_block R` splits the block into R groups, one row each (32 threads: a warp per row,
//   no barrier); (5) two pass-2 bodies chosen per row after the barrier: weight, bias and y in x's
//   16-byte phase (the bench shapes: one x, w and b vector per thread per step, UNROLL2 = 1, as
//   two spill) or the general one (x's vectors, then w, b and y element by element). SASS (sm_90,
//   NVRTC 13.0): pass 1 LDG.E.EL.128 through a memory descriptor carrying the policy (desc[UR4]),
//   pass 2 LDG.E.EF.128 and LDG.E.128.CONSTANT for w and b, y STG.E.128, one BAR.SYNC; 32
//   registers, 0 spills. At 32 ptxas gives pass-1 vectors 2 and 3 the registers of 0 and 1 (fp32
//   at N = 8192, 4 vectors per thread: 2 in flight, then 2); SM_THREADS=1536 (37-40 registers)
//   issues all 4 together.
// Why: torch.compile runs fp32 32768 x 8192 at 500.2 us (4.29 TB/s, the copy rate); v4 at 505.3
//   moves the same DRAM bytes but holds each row in registers until its stores (2 blocks of 512 per
//   SM in fp32), so each block's reduction and store phase leaves DRAM idle for it. bf16 v4 already
//   beats torch.compile (257.7 vs 285.1 us): v5 must not lose that (its bf16 target is v4's time).
// Predicted: bytes first. 32768 x 8192 fp32 moves 2 x 32768 x 8192 x 4 B + 2 x 32 KiB = 2.147 GB:
//   499 us at the 4.30 TB/s copy rate; bf16 1.074 GB: 250 us. Expect fp32 495-505 us (0.99-1.01x
//   torch.compile's 500.2, 0-2% over v4) and bf16 250-260 us (about v4's 257.7; 1.10-1.14x
//   torch.compile) if pass 2 hits L1/L2. Pass 1 costs ~3 ALU operations per element (d, S, Q),
//   pass 2 ~4 (two subtracts, a multiply, an FMA) plus unpacking: ~25 us of issue per pass at
//   32768 x 8192, hidden under the DRAM time if enough warps are resident. Knobs: as rmsnorm v4.
// Measured (H200, 32768 x 8192: docs/runs/2026-11-30-h200-sweep_norm_s5.json, -sweep_membound_s7.json):
//   bf16 358.3 us (256 threads 290.0; v4_pinned_onebar 258.7, torch.compile 285.1), fp32 537.5
//   (1536 threads per SM 509.6-512.0; v4 506.7-508.1, torch.compile 500.6-503.0). Unlike rmsnorm it
//   does not reach v4: a Welford row carries three moments through the merge and its pass 2 reads
//   three arrays; 1024-thread and 256-thread blocks lose 10-75%. Kept as the measured step.
//   Session 16, bf16 at rmsnorm v4's bf16 geometry (docs/runs/2026-12-01-h200-sweep_membound_s16_ln16.json,
//   one process): 256 threads at 1024 an SM 270.2 / 268.6 us, at 1536 262.3, at 2048 287.8; 128 at
//   1024 263.4; 512 at 1024 440.4; v4_pinned_onebar 257.8 / 256.8, torch.compile 284.4. No geometry
//   reaches v4 in bf16 either.
//   Session 19, fp32 (H200, one process each: docs/runs/2026-12-02-h200-sweep_ln19.json, -ln19b.json;
//   torch.compile 500.1-500.6 us, v4 506.8-506.9 in both): pass 2's x re-reads in flight together
//   (knob X2_AHEAD 4: four LDG.E.EF.128, then w and b one vector at a time, 39 registers) 507.6 / 507.1 /
//   508.1 at 1536 an SM against 509.6 without; X2_AHEAD 2 509.8; the w and b loads with Triton's L2
//   evict-last policy (W_HINT 1) 507.9; no hints 525.7 (519.3 with X2_AHEAD 4, X1_HINT 0 alone 517.2).
//   torch.compile's own kernel (scripts/inductor_kernel.py, docs/runs/2026-12-02-h200-inductor-layernorm-f32.txt:
//   R0_BLOCK 4096, 16 warps, 44 registers, so two rows an SM; pass 1's four loads together, pass 2 in
//   two steps of 2 x, 2 w and 2 b vectors) is this kernel's layout at 1024 an SM, yet v5 written that
//   way (UNROLL2 2, W_HINT 1, 48 registers) runs 565.6 us; X2_AHEAD 2 565.0, X2_AHEAD 4 565.7. ncu
//   (docs/runs/2026-12-02-h200-ncu_layernorm_f32.txt, one launch, locked clocks): the same occupancy
//   (47%), L1 hit rate (60%) and L2 hit rate (50%) as torch.compile's kernel, DRAM 70% busy against
//   its 82%, and 1.34x its instructions (IPC 2.05-2.09 over 625-629 us against 1.77 over 540). At two
//   rows an SM the instructions between a row's loads and its stores are on each row's path; at 1536
//   an SM a third row covers them. Where v5's extra instructions go is not known (next: the SASS
//   side by side, per phase). v4 stays the op's best.
//   Session 19, the two DRAM trips: v5's pass-1 loop form subtracts the pivot from the head/tail
//   scalars before the loop, and sm_90's SASS waits there for the pivot's DRAM trip before the loop
//   issues its first vector (fp32, 1024 an SM: FADD ..., -pivot at 0x490, LDG.E.EL.128 at 0x5f0), so a
//   row took two round trips to DRAM where torch.compile's kernel takes one. PASS1_PEEL issues the
//   first step's vectors before the pivot and head/tail loads, all five in flight before any FADD
//   (tests/cpu/test_norm_l2_two_pass.py). Predicted: the gap to torch.compile closes (~1 of 6 us of a
//   row's life at three rows an SM). Measured (docs/runs/2026-12-02-h200-sweep_ln19d.json, one process,
//   checked on rows of 1000 + N(0, 1)): fp32 at 1536 an SM 499.1 / 498.9 us against 512.5 without,
//   torch.compile 503.3 / 503.4, v4 509.9 / 510.1 (1.01x a copy); with X2_AHEAD 4 498.6 / 498.9, with
//   LN5_MERGE 1 530.6, at 1024 an SM in Triton's form 538.2, at 2048 519.4. bf16 lost with it (256
//   threads at 1536 an SM 276.6 against 262.3; v4 258.9). So the defaults are per dtype now: fp32
//   PASS1_PEEL_F32 1 at SM_THREADS_F32 1536 (the op's fp32 best),
//   bf16 as before (PASS1_PEEL_BF16 0, SM_THREADS_BF16 2048; its kernel's instructions unchanged).
// Session 21, odd widths: a row whose weight and bias sit out of x's 16-byte phase (bf16 N = 8191: 7
//   rows in 8, fp32 3 in 4) went element by element (w, b and y 2 or 4 bytes at a time); it now
//   shifts the parameters' 4-byte words into x's phase and stores y 16 bytes wide (norm_l2.cuh's
//   PARAM_SHIFT / SHIFT_WORDS, default 1). Measured (H200, sweep odd21:
//   docs/runs/2026-12-02-h200-sweep_odd21.json, 32768 x 8191): bf16 385.0 / 385.4 us against 1191.0 /
//   1190.8 (torch.compile 557.7 / 557.8; v4, bf16's best, 355.5 then, 300 with norm_rows.cuh's
//   PARAM_WORDS), fp32 571.5 / 571.3 against 1101.9 / 1103.1 (torch.compile 806.0 / 805.7). Shifting
//   two 16-byte loads instead (SHIFT_WORDS 0) spills here: bf16 694.3, fp32 573.6. Predicted: within
//   5% of the 8192 rows; measured bf16 1.47x and fp32 1.15x of them: 10 four-byte loads a vector for w
//   and b (40 L1 wavefronts a warp where the aligned rows take 8) is the suspect, not measured.
// Session 23, bf16 (v4 0.965-0.976x a copy across runs). ncu (docs/runs/ncu/2026-12-02-h200-layernorm-
//   bf16-issue.txt, 32768 x 8192): v4 issues 84% of its slots (IPC 3.37), 1.86e8 warp instructions
//   against rmsnorm v4's 1.22e8 at 60%: layernorm bf16 is issue-bound, so instructions a row are the
//   lever. Per element, pass 1 is unpack, x - pivot, S +=, Q fma (4; rmsnorm 2), pass 2 unpacks x, w
//   and b (3), two subtracts, a multiply, an FMA and half a pack; ~8 more an element are per-row
//   (setup, merge, pass-2 prologue) spread over 32 elements a thread. Sweeps (one process each, twice;
//   docs/runs/2026-12-02-h200-sweep_ln23.json, -ln23b.json; torch.compile 286.0-288.7 us, v4
//   259.4-261.3): at rmsnorm's bf16 geometry (256 threads a row) 1024 an SM 272.0-272.5, + shifted-sum
//   merge 270.6-273.2, + peel 262.2-263.4, + both 260.3-260.5, + fold (LN5_FOLD: x - (pivot + mean),
//   one subtract an element) 266.5-267.5; at 1536 an SM 261.4, + peel 256.4, + merge and peel
//   253.5-253.8 (the bf16 defaults since: -2.2% against v4, 1.13x torch.compile), + all three
//   252.5-252.8 (the fold is off: its rounded centre fails the bf16 check's atol near zero, below).
//   Predicted for the merge and the peel: <= 2% each; measured 1% and 2%. Lost: 128 threads a row
//   276-314, 512 332, 2048 an SM 287, UNROLL2 2 at 1024 an SM 268; pass 2 indexing its vectors instead
//   of stepping four pointers (59 SASS lines a vector against 68) 266.6-269.9 (not kept: fewer
//   instructions, later loads).
//   Tried and dropped then: each thread summing about its own first element (so that a row whose
//   x[row][0] is an outlier does not cancel Q - S mean in every thread): fp32 right (5 x 8192 rows with
//   x[row][0] = 1000 among N(0, 1): max error 2.0e-5 against the default's 7.9e-4), bf16 wrong (errors
//   of 1-58 on plain rows). The bf16 errors were not the knob's: the exact merge counted each thread's
//   elements with the BLOCK geometry's 512 threads a row where bf16 runs 256 (fixed: owned_vectors<G>).
// Session 24, the pivot: sums about x[row][0] fail rows whose first element is an outlier (an LLM's
//   massive activation in channel 0): on the H200, x[row][0] = 1000 among N(0, 1), fp32 max errors
//   4e-4 (8192) and 6e-2 (40000) against atol 1e-5 (NOTES.md, session 23). Now every layernorm variant
//   centres on the median of x[0..2] (../common/row_pivot.cuh; a CPU emulation in fp32 put those rows
//   at the plain rows' errors), and v5 sums pass 1 about each thread's own pivot tp (the median of its
//   first vector's first three elements: no load; the first element alone is x[0] in thread 0, and
//   its M2 then cancelled by n_t: the H200 failed 2 x 40000 rows in both dtypes with it) and moves the
//   sums to the row's pivot after the loop: S + n e and Q + e (2 S + n e), e = tp - pivot (the
//   shifted-sum merge), or each thread's mean_t + e (the exact merge). The row's median is one load a
//   lane issued with the peel, shuffled after the loop. Loading the median's three scalars with the
//   peel and centring pass 1 on it instead made ptxas take the median between the peel's vectors at 40
//   registers (fp32 vectors 3-4, bf16 2-4 issued after a wait on the pivot: analysis.load_order); this
//   form's peel SASS batches as before (tests/cpu/test_norm_l2_two_pass.py). Predicted: +1% or less.
//   Measured (`kernelab run --op layernorm` at ee18207, docs/runs/nvidia-h200-20261202T130958.json):
//   fp32 498.1 us (torch.compile 503.2, paired 1.006x; 1.012x a copy): no change; bf16 264.5 against
//   session 23's 253.3 (torch.compile 286.2 / 286.1 in both runs), +4.4%, and v4 261.7 is faster now.
//   Wrong by 4x: bf16 v5 is issue-bound and the two pivots add ~50 SASS instructions a thread a row
//   before the barrier (466 -> 516 on sm_90; ~6% of a thread's row). Tried and not kept (CPU SASS only,
//   no device time left): x[row][0] as before plus a second moments pass on the rows whose pivot lies
//   > 4 standard deviations from the mean (inlined, __noinline__ or as a second trip through pass 1:
//   each changed pass 1's allocation at 40 registers, 48-56 bytes in the peel's first batch, not 70).
// Session 25, pass 2 in three operations an element (kl::ln_affine: (x - pivot) * rstd + c, then * w + b;
//   the plain form took four). SASS (sm_90): bf16 1144 -> 1112 instructions, 40 -> 38 registers. Predicted
//   bf16 -2 to -3% (issue-bound), fp32 within 0.5%. Measured (sweep ln25, docs/runs/2026-12-02-h200-sweep_ln25.json,
//   one process, alternating): bf16 258.9 / 259.6 us against 264.2 / 264.0 (-1.8%), fp32 496.8 / 496.8 against
//   497.3 / 495.8. In `kernelab run` at 1b077d4 (docs/runs/nvidia-h200-20261202T144112.json): bf16 259.5 (v4
//   258.3, bf16's registered best), fp32 497.7 (1.007x torch.compile). Tried then and not kept (sweep ln25b,
//   docs/runs/2026-12-02-h200-sweep_ln25b.json): the fast pass 2 taking 2 or 4 vectors one after another
//   between pointer steps (knob X2_STEPS; 75 -> ~63 SASS lines a bf16 vector: the four pointers stepped once a
//   step, x and y at constant offsets) bf16 280.6-281.2 (2) and 286.4-286.7 (4) against 259.9-261.1, fp32 (4)
//   497.1-497.4 against 496.8-497.2, (2) 521.1-521.8; X2_AHEAD 2 in bf16 290.2-291.3. Fewer instructions and
//   slower, as session 23's indexed pass 2: in bf16 what the loop's form does to the loads' timing matters more
//   than its count (not measured: an ncu of the X2_STEPS build is the next look).
// Session 26, rows of whole vectors (`@vec_kernel layernorm_vec`): the op launches layernorm_vec_<dtype>, the
//   same row with kVecRows = true, when N fills whole 16-byte vectors and x, y, w and b start on 16-byte
//   boundaries (rmsnorm/op.py's whole_vectors: every row is then aligned, as at the bench shapes). That build
//   has no per-row geometry, no head / tail scalar loads and sums, no alignment branches before pass 2 and no
//   scalar or shifted bodies; the general kernel serves every other row. Why: session 23's ncu put ~8 of bf16's
//   ~20 instructions an element in per-row work over a thread's 32 elements. SASS (sm_90) on the bench path a
//   thread and row: bf16 ~790 -> 622 instructions (pass 1 with the peel 283 -> 219, merge and pass-2 prologue
//   ~209 -> 111, pass 2 75 -> 73 a vector), 38 -> 37 registers; fp32 39 -> 34. Predicted bf16 -3 to -5%, fp32 -1
//   to -2%. Measured (sweep ln26, docs/runs/2026-12-02-h200-sweep_ln26.json, one process, alternating): bf16
//   252.1 / 252.0 us against the general kernel's 259.6 / 259.8 (-2.9%; v4 260.7, torch.compile 285.9), fp32
//   498.9 / 498.8 against 498.7 / 499.1 (no change: fp32 runs at the copy rate already). `kernelab run --op
//   layernorm` at bddfcc8 (docs/runs/nvidia-h200-20261202T172311.json): bf16 251.0 us, paired 0.992x [0.991, 0.994]
//   a same-bytes copy, 1.13x torch.compile (v4 259.1): bf16's best again. The same build of rmsnorm v4 lost 0.7%
//   (its header, session 26): instructions were not what rmsnorm waited on.
// Measured: BENCHMARKS.md, layernorm rows (full runs).
//
// Knobs (#ifndef macros, for sweeps; ../rmsnorm/norm_l2.cuh lists them with their PTX): the
// geometry is the header's `@block` (`@block_bf16`: 256 since session 23) / `@rows_per_block` (the op
// passes them as BLOCK, BLOCK_BF16 / ROWS_PER_BLOCK); X1_HINT (pass-1 x loads, default 1: L1::evict_last + L2 evict_last policy),
// X2_HINT (pass-2 x loads, default 1: L1::evict_first + L2 evict_first policy), W_HINT (weight and
// bias: 0 .nc), Y_STORE (0 plain st.global, as Triton), UNROLL (pass-1 vectors in flight per
// thread, 4), UNROLL2 (pass-2 vectors of x, w and b per thread, 1 here: 2 spills), SM_THREADS
// (threads per SM the register cap allows, both dtypes; SM_THREADS_F32 / SM_THREADS_BF16 1536 by
// default), PASS1_PEEL (both dtypes; PASS1_PEEL_F32 / PASS1_PEEL_BF16 1 by default), X2_AHEAD (0: off; A: the fast pass
// 2 issues A x vectors at once, then loads w and b and stores one vector at a time; session 19),
// LN5_MERGE (per dtype, LN5_MERGE_F32 / LN5_MERGE_BF16; 0: the exact merge of per-thread moments; 1:
// shifted sums S, Q of x - x[row][0], summed in parallel, M2 = Q - S mean: half the serial shuffles;
// session 19), LN_SCALE_FOLD (../common/ln_affine.cuh: 1, y in three operations an element; session 25).
// LN5_FOLD (bf16: pass 2 subtracted pivot + mean once; session 23, off: it rounded the pivot) is gone:
// ln_affine's form takes the same one subtract an element without that rounding.
//
// @strategy rows
// @block 512
// @block_bf16 256
// @rows_per_block 1
// @access_bytes 16
// @vec_kernel layernorm_vec
// (`@vec_kernel K`: rows of whole aligned vectors launch K_f32 / K_bf16; a sweep's empty value keeps the
// general kernel.)
// Threads an SM the register cap allows, per dtype (a sweep's SM_THREADS sets both): fp32 1536 (40
// registers: three rows an SM; session 19), bf16 1536 (six 256-thread rows an SM; session 23; 2048
// before, 32 registers).
#ifdef SM_THREADS
#define SM_THREADS_F32 SM_THREADS
#define SM_THREADS_BF16 SM_THREADS
#endif
#ifndef SM_THREADS_F32
#define SM_THREADS_F32 1536
#endif
#ifndef SM_THREADS_BF16
#define SM_THREADS_BF16 1536
#endif
#ifndef UNROLL2
#define UNROLL2 1  // x, w and b vectors per thread per pass-2 step: 2 (24 registers of data) spills 16-76 bytes at 32 and at 40
#endif
// 1: pass 1's first step of vectors issued before the pivot is used (session 19), per dtype (a
// sweep's PASS1_PEEL sets both): fp32 1 (499 us against 512 at 32768 x 8192), bf16 1 since session 23
// (256.4 against 261.4 at 256 threads, 1536 an SM; it lost at 512 threads, 2048 an SM).
#ifdef PASS1_PEEL
#define PASS1_PEEL_F32 PASS1_PEEL
#define PASS1_PEEL_BF16 PASS1_PEEL
#endif
#ifndef PASS1_PEEL_F32
#define PASS1_PEEL_F32 1
#endif
#ifndef PASS1_PEEL_BF16
#define PASS1_PEEL_BF16 1
#endif
// 0: per-thread moments merged exactly; 1: shifted sums (session 19), per dtype (a sweep's LN5_MERGE sets
// both): fp32 0 (the sums' N x eps worst case is over fp32's tolerance), bf16 1 (session 23: 253.5-253.8
// us against 256.4 with the peel; its worst case, x[row][0] holding the row's variance, 5e-4 of the
// variance at N = 8192, is under bf16's 2^-8).
#ifdef LN5_MERGE
#define LN5_MERGE_F32 LN5_MERGE
#define LN5_MERGE_BF16 LN5_MERGE
#endif
#ifndef LN5_MERGE_F32
#define LN5_MERGE_F32 0
#endif
#ifndef LN5_MERGE_BF16
#define LN5_MERGE_BF16 1
#endif
#ifndef X2_AHEAD
// 0: UNROLL2's steps (x, w and b together); A > 0: A x vectors in flight, then w and b one vector at a time
#define X2_AHEAD 0
#endif
static_assert(X2_AHEAD >= 0 && X2_AHEAD <= 8, "X2_AHEAD: 0 (off) or 1..8 x vectors ahead in pass 2");
#include "../rmsnorm/norm_l2.cuh"
#include "../common/row_pivot.cuh"  // kl::median3, row_pivot_lane / row_pivot_shfl, row_pivot_if
#include "../common/ln_affine.cuh"  // kl::ln_affine: y in three operations an element (session 25)
// One flat token for __launch_bounds__: kernelab's signature reader ends the attribute at its
// first ')' (min_blocks.cuh says the same).
#define LN5_MIN_BLOCKS_F32 (SM_THREADS_F32 / BLOCK_F32 > 0 ? SM_THREADS_F32 / BLOCK_F32 : 1)
#define LN5_MIN_BLOCKS_BF16 (SM_THREADS_BF16 / BLOCK_BF16 > 0 ? SM_THREADS_BF16 / BLOCK_BF16 : 1)

namespace ln5 {

// ((x - pivot) - mean) * rstd * w + b (kl::ln_affine's three operations), and for one 16-byte vector of
// each, word by word (rmsnorm's scale_vec with the shift and the bias): the pass-2 body of the aligned rows.
__device__ __forceinline__ float affine(float x, float pivot, const kl::LnScale& s, float w, float b) {
  return kl::ln_affine(x - pivot, s, w, b);
}
template <typename T>
__device__ __forceinline__ uint4 affine_vec(const uint4& x, const uint4& w, const uint4& b, float pivot,
                                            const kl::LnScale& s);
template <>
__device__ __forceinline__ uint4 affine_vec<float>(const uint4& x, const uint4& w, const uint4& b, float pivot,
                                                   const kl::LnScale& s) {
  const unsigned a[4] = {x.x, x.y, x.z, x.w}, ww[4] = {w.x, w.y, w.z, w.w}, bb[4] = {b.x, b.y, b.z, b.w};
  unsigned o[4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
    o[i] = __float_as_uint(
        affine(__uint_as_float(a[i]), pivot, s, __uint_as_float(ww[i]), __uint_as_float(bb[i])));
  return make_uint4(o[0], o[1], o[2], o[3]);
}
template <>
__device__ __forceinline__ uint4 affine_vec<__nv_bfloat16>(const uint4& x, const uint4& w, const uint4& b,
                                                           float pivot, const kl::LnScale& s) {
  const unsigned a[4] = {x.x, x.y, x.z, x.w}, ww[4] = {w.x, w.y, w.z, w.w}, bb[4] = {b.x, b.y, b.z, b.w};
  unsigned o[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float lo =
        affine(__uint_as_float(a[i] << 16), pivot, s, __uint_as_float(ww[i] << 16), __uint_as_float(bb[i] << 16));
    const float hi = affine(__uint_as_float(a[i] & 0xffff0000u), pivot, s, __uint_as_float(ww[i] & 0xffff0000u),
                            __uint_as_float(bb[i] & 0xffff0000u));
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);  // .x = lo (the low half)
    o[i] = *reinterpret_cast<const unsigned*>(&h);
  }
  return make_uint4(o[0], o[1], o[2], o[3]);
}

// Pass 2 for one row, by norm_l2.cuh's Body. kAligned: w, b and y share x's 16-byte phase (vectors
// only, UNROLL2 a step). kShifted: y shares it, w and b do not (odd widths: bf16 N = 8191 puts 7
// rows in 8 here; a view may put w and b at different phases): their vectors are shifted into x's
// phase and y still goes 16 bytes at a time. kScalar (y out of x's phase: the tests' mixed-alignment
// views): x's vectors are still 16-byte loads, one a step, and w, b and y go element by element:
// with per-array run-time flags the bf16 body spilled 8-48 bytes at 40 registers (NVRTC 13.0).
template <typename T, l2tp::Body B, int G, bool kVecRows = false>
__device__ __forceinline__ void write_row(const T* __restrict__ xr, const T* __restrict__ w, const T* __restrict__ b,
                                          T* __restrict__ yr, const rows::Geometry& geo, int g, float pivot,
                                          const kl::LnScale& s, const l2tp::Policies& pol) {
  constexpr bool kFast = B != l2tp::Body::kScalar;  // the vector bodies
  constexpr int V = rows::Traits<T>::V, U2 = kFast ? UNROLL2 : 1;
  // Head and tail scalars first, re-read (L1/L2 hits): nothing of pass 1 but pivot and s (mean, rstd)
  // stays live into the vector loop.
  if (!kVecRows && g < geo.head)
    yr[g] = rows::from_float<T>(
        affine(rows::to_float(xr[g]), pivot, s, rows::to_float(w[g]), rows::to_float(b[g])));
  if (!kVecRows && g < geo.tail) {
    const int col = geo.head + geo.nvec * V + g;
    yr[col] = rows::from_float<T>(
        affine(rows::to_float(xr[col]), pivot, s, rows::to_float(w[col]), rows::to_float(b[col])));
  }
  // Pointers step G x U2 vectors, `rem` counts the thread's vectors left (rmsnorm v4's form). The
  // vector bodies step w and b as vector pointers (kShifted: the aligned vectors below them), the
  // scalar body as element pointers.
  const uint4* px = reinterpret_cast<const uint4*>(xr + geo.head) + g;
  const l2tp::Shift sw = l2tp::shift_for(w + geo.head), sb = l2tp::shift_for(b + geo.head);  // kShifted only
  const uint4* pwv = l2tp::param_vectors<B>(w + geo.head, sw) + g;
  const uint4* pbv = l2tp::param_vectors<B>(b + geo.head, sb) + g;
  const T* pw = w + geo.head + g * V;
  const T* pb = b + geo.head + g * V;
  T* py = yr + geo.head + g * V;
  constexpr int STEP = G * (kFast && X2_AHEAD > 0 ? X2_AHEAD : U2);  // vectors a step
#pragma unroll 1  // UNROLL2 vectors per step is the knob (NVVM would unroll further)
  for (int rem = geo.nvec - g; rem > 0;
       rem -= STEP, px += STEP, pwv += STEP, pbv += STEP, pw += STEP * V, pb += STEP * V, py += STEP * V) {
    if constexpr (kFast && X2_AHEAD > 0) {
      // x's re-reads (L2 hits, the long trip) all in flight first; w and b (L1 hits) one vector at a
      // time, so A + 2 vectors are live where UNROLL2 = A holds 3A (UNROLL2 = 2 spills at 40).
      uint4 raw[X2_AHEAD > 0 ? X2_AHEAD : 1];  // this branch is checked even when discarded (a macro)
#pragma unroll
      for (int u = 0; u < X2_AHEAD; ++u) raw[u] = l2tp::ldx2(px + u * G, u * G < rem, pol);
#pragma unroll
      for (int u = 0; u < X2_AHEAD; ++u) {
        if (u * G < rem) {
          const uint4 wv = l2tp::ldp_body<B>(pwv + u * G, sw, true, pol);
          const uint4 bv = l2tp::ldp_body<B>(pbv + u * G, sb, true, pol);
          l2tp::sty(py + u * G * V, affine_vec<T>(raw[u], wv, bv, pivot, s), pol);
        }
      }
    } else if constexpr (kFast) {
      uint4 raw[U2], wraw[U2], braw[U2];
#pragma unroll
      for (int u = 0; u < U2; ++u) {  // every load of the step before any store
        const bool in = u * G < rem;
        raw[u] = l2tp::ldx2(px + u * G, in, pol);
        wraw[u] = l2tp::ldp_body<B>(pwv + u * G, sw, in, pol);
        braw[u] = l2tp::ldp_body<B>(pbv + u * G, sb, in, pol);
      }
#pragma unroll
      for (int u = 0; u < U2; ++u)
        if (u * G < rem) l2tp::sty(py + u * G * V, affine_vec<T>(raw[u], wraw[u], braw[u], pivot, s), pol);
    } else {
      const uint4 raw = l2tp::ldx2(px, true, pol);  // rem > 0: this vector exists
#pragma unroll
      for (int e = 0; e < V; ++e)
        py[e] = rows::from_float<T>(
            affine(l2tp::elem<T>(raw, e), pivot, s, rows::to_float(pw[e]), rows::to_float(pb[e])));
    }
  }
}

template <typename T, int BLK, bool kVecRows = false>
__device__ __forceinline__ void layernorm_rows(const T* __restrict__ x, const T* __restrict__ w,
                                               const T* __restrict__ b, T* __restrict__ y, int M, int N, float eps) {
  constexpr int V = rows::Traits<T>::V, U = UNROLL, G = BLK / ROWS_PER_BLOCK, NWG = G / 32;
  static_assert(l2tp::valid_block(BLK),
                "@block_bf16 / @block_f32 over @rows_per_block must be a power-of-two number of warps");
  __shared__ float4 slots[BLK / 32];
  const l2tp::Place pl = l2tp::place_for<G>(M);
  if (NWG == 1 && pl.row < 0) return;  // a warp per row: no barrier follows, the warp may leave
  // A group past the last row (G > 32) runs the barrier with an empty row.
  const bool live = pl.row >= 0;
  const int g = pl.g;
  const T* xr = x + (size_t)(live ? pl.row : 0) * N;
  T* yr = y + (size_t)(live ? pl.row : 0) * N;
  const rows::Geometry geo = !live ? rows::Geometry{0, 0, 0}
                             : kVecRows ? rows::Geometry{0, N / V, 0} : rows::geometry(xr, N);
  const l2tp::Policies pol;

  // Pass 1: the head/tail scalars and U vectors per step; per thread S = sum d and Q = sum d^2,
  // d = x - tp, about the thread's own pivot tp (with the peel: the median of its first vector's first
  // three elements; session 24). Vectors
  // past the row load as zeros: their d = -tp is selected out. After the loop the sums move to the
  // row's pivot (the median of x[0..2], ../common/row_pivot.cuh), which the merges and pass 2 use.
  // Why two pivots: the row's pivot takes three loads, and at 40 registers ptxas spent them by taking
  // the median before it issued the peel's later vectors (a second DRAM round trip a row, sm_90,
  // analysis.load_order); tp costs no load, and the row's pivot, one load a lane issued with the peel,
  // is shuffled and taken after the loop.
  constexpr bool kPeel = sizeof(T) == 4 ? PASS1_PEEL_F32 : PASS1_PEEL_BF16;
  const bool own_h = !kVecRows && g < geo.head, own_t = !kVecRows && g < geo.tail;
  float tp, S, Q, pivot_lane = 0.0f;
  constexpr bool kMerge = sizeof(T) == 4 ? LN5_MERGE_F32 : LN5_MERGE_BF16;  // shifted sums
  if constexpr (kPeel) {
    // fp32 (PASS1_PEEL_F32 1): the first step's U vectors issued before anything else loads. In the
    // loop form below, the head/tail scalars' subtraction of the pivot sits before the loop, and
    // sm_90's SASS waits there for the pivot's DRAM trip before the loop issues a vector: two round
    // trips a row (fp32, 1024 an SM: FADD ..., -pivot at 0x490, the first LDG.E.EL.128 at 0x5f0).
    const uint4* px = reinterpret_cast<const uint4*>(xr + geo.head) + g;
    int rem = geo.nvec - g;
    uint4 raw0[U];
#pragma unroll
    for (int u = 0; u < U; ++u) raw0[u] = l2tp::ldx1(px + u * G, u * G < rem, pol);
    const float hx = kVecRows ? 0.0f : l2tp::ld_scalar_if<T>(xr + g, own_h);
    const float tx = kVecRows ? 0.0f : l2tp::ld_scalar_if<T>(xr + geo.head + geo.nvec * V + g, own_t);
    // The row's pivot: lanes 0-2 load x[0..2] here, the shuffles and the median wait for after the loop.
    pivot_lane = kl::row_pivot_lane<T>(xr, N, live);
    // tp: the median of the first vector's first three elements (the first element alone is x[0] in
    // thread 0: an outlier there cost that thread's M2 ~n_t x eps of it, and fp32 2x40000 rows with
    // x[0] = 1000 missed atol on the H200, session 24).
    tp = rem > 0 ? kl::median3(l2tp::elem<T>(raw0[0], 0), l2tp::elem<T>(raw0[0], 1), l2tp::elem<T>(raw0[0], 2))
                 : (own_h ? hx : tx);  // 0 where the thread owns nothing
    const float hd = hx - tp, td = tx - tp;
    S = (own_h ? hd : 0.0f) + (own_t ? td : 0.0f);
    Q = (own_h ? hd * hd : 0.0f) + (own_t ? td * td : 0.0f);
    auto add_step = [&](const uint4 (&raw)[U], int left) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        float f[V];
        rows::unpack<T>(raw[u], f);
        float s = 0.0f, q = 0.0f;
#pragma unroll
        for (int i = 0; i < V; ++i) {
          const float d = f[i] - tp;
          s += d;
          q = fmaf(d, d, q);
        }
        S += u * G < left ? s : 0.0f;
        Q += u * G < left ? q : 0.0f;
      }
    };
    add_step(raw0, rem);
    rem -= G * U;
    px += G * U;
#pragma unroll 1
    for (; rem > 0; rem -= G * U, px += G * U) {
      uint4 raw[U];
#pragma unroll
      for (int u = 0; u < U; ++u) raw[u] = l2tp::ldx1(px + u * G, u * G < rem, pol);
      add_step(raw, rem);
    }
  } else {
    tp = kl::row_pivot_if<T>(xr, N, live);  // the row's pivot from the start (PASS1_PEEL 0: a knob)
    const float hd = l2tp::ld_scalar_if<T>(xr + g, own_h) - tp;
    const float td = l2tp::ld_scalar_if<T>(xr + geo.head + geo.nvec * V + g, own_t) - tp;
    S = (own_h ? hd : 0.0f) + (own_t ? td : 0.0f);
    Q = (own_h ? hd * hd : 0.0f) + (own_t ? td * td : 0.0f);
    const uint4* px = reinterpret_cast<const uint4*>(xr + geo.head) + g;
#pragma unroll 1  // UNROLL vectors per step is the knob (NVVM would unroll further)
    for (int rem = geo.nvec - g; rem > 0; rem -= G * U, px += G * U) {
      uint4 raw[U];
#pragma unroll
      for (int u = 0; u < U; ++u) raw[u] = l2tp::ldx1(px + u * G, u * G < rem, pol);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        float f[V];
        rows::unpack<T>(raw[u], f);
        float s = 0.0f, q = 0.0f;  // the vector's own sums: V-long chains, U of them independent
#pragma unroll
        for (int i = 0; i < V; ++i) {
          const float d = f[i] - tp;
          s += d;
          q = fmaf(d, d, q);
        }
        S += u * G < rem ? s : 0.0f;  // a select, not a branch
        Q += u * G < rem ? q : 0.0f;
      }
    }
  }

  // The row's pivot, and each thread's count and offset e = tp - pivot (0 without the peel).
  float pivot = tp;
  if constexpr (kPeel) pivot = kl::row_pivot_shfl(pivot_lane);
  const float e = tp - pivot;
  // (G, this dtype's threads a row: a BLOCK-wide one, fp32's 512 under `@block_bf16` 256, made bf16's counts
  // wrong in session 23's LN5_MERGE 0 builds, errors of 1-58.)
  const int cnt = l2tp::owned_vectors<G>(g, geo.nvec) * V + (own_h ? 1 : 0) + (own_t ? 1 : 0);
  const float nt = static_cast<float>(cnt);
  float inv_n, mean, m2;
  if constexpr (kMerge) {
    // About the row's pivot: sum (d - e)^2 = Q + e (2 S + n e) (cancels only where tp is an outlier
    // of its thread: that thread's Q, ~n_t x eps of it), then S + n e.
    Q = fmaf(e, fmaf(nt, e, 2.0f * S), Q);
    S = fmaf(nt, e, S);
    inv_n = __fdividef(1.0f, static_cast<float>(N));
    // Shifted sums (knob LN5_MERGE 1): the row's S and Q of d = x - pivot, summed as they are, M2 = Q -
    // S mean. Two independent sums at each shuffle level, one barrier, no division: about half the
    // serial latency of the exact merge below. Q - S mean cancels (mean - pivot)^2 / var of M2,
    // and (mean - pivot)^2 <= N var: at worst (a pivot that is an outlier holding the row's variance)
    // N x fp32's eps of the variance (5e-4 at N = 8192, 2.4e-3 at 40000: within bf16's 2^-8, not
    // fp32's 1e-5; x = 1000 + N(0, 1) cancels ~1-10 x eps). The median of x[0..2] is such an
    // outlier only where two of the three are.
    float sum_s = S, sum_q = Q;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      sum_s += __shfl_xor_sync(rows::FULL_MASK, sum_s, o);
      sum_q += __shfl_xor_sync(rows::FULL_MASK, sum_q, o);
    }
    if constexpr (NWG > 1) {
      const int lane = threadIdx.x & 31;
      if (lane == 0) slots[threadIdx.x >> 5] = make_float4(sum_s, sum_q, 0.0f, 0.0f);
      __syncthreads();  // the row's one barrier
      const float4 e = slots[pl.warp0 + (lane & (NWG - 1))];
      sum_s = e.x;
      sum_q = e.y;
#pragma unroll
      for (int o = NWG / 2; o > 0; o >>= 1) {
        sum_s += __shfl_xor_sync(rows::FULL_MASK, sum_s, o);
        sum_q += __shfl_xor_sync(rows::FULL_MASK, sum_q, o);
      }
    }
    mean = sum_s * inv_n;
    m2 = fmaxf(fmaf(-sum_s, mean, sum_q), 0.0f);
  } else {
    // Per thread: n_t, M2_t about its own mean (from the sums about tp), mean_t about the row's
    // pivot. Then the warp's, merged exactly.
    const float mtp = cnt > 0 ? __fdividef(S, nt) : 0.0f;  // about tp
    const float m2t = fmaxf(fmaf(-S, mtp, Q), 0.0f);
    const float mt = cnt > 0 ? mtp + e : 0.0f;  // about the row's pivot
    const int wcount = __reduce_add_sync(rows::FULL_MASK, cnt);  // <= 2^15 x 32: exact as a float
    const float wn = static_cast<float>(wcount);
    const float wsum = rows::warp_sum(fmaf(nt, e, S));
    const float wmean = wcount > 0 ? __fdividef(wsum, wn) : 0.0f;
    const float dm = mt - wmean;
    float wm2 = rows::warp_sum(fmaf(nt * dm, dm, m2t));
    inv_n = __fdividef(1.0f, static_cast<float>(N));
    if constexpr (NWG > 1) {
      // The row's one barrier: lane l of every warp of the group reads warp (l mod NWG)'s moments,
      // mean = sum S_w / N, M2 = sum [M2_w + n_w (m_w - mean)^2] (layernorm v4's merge_warps).
      const int lane = threadIdx.x & 31;
      if (lane == 0) slots[threadIdx.x >> 5] = make_float4(wn, wsum, wmean, wm2);
      __syncthreads();
      const float4 e = slots[pl.warp0 + (lane & (NWG - 1))];
      mean = l2tp::lane_sum<NWG>(e.y) * inv_n;
      const float d = e.z - mean;
      m2 = l2tp::lane_sum<NWG>(fmaf(e.x * d, d, e.w));
    } else {
      mean = wsum * inv_n;
      m2 = wm2;
    }
  }
  if (!live) return;
  const float rstd = rsqrtf(fmaf(m2, inv_n, eps));
  const kl::LnScale sc = kl::ln_scale(mean, rstd);  // mean: about the pivot

  // Pass 2, by the row's alignment (after the barrier: groups may take different bodies).
  if constexpr (kVecRows) {
    write_row<T, l2tp::Body::kAligned, G, true>(xr, w, b, yr, geo, g, pivot, sc, pol);
  } else if (!l2tp::co_aligned(xr, yr)) {
    write_row<T, l2tp::Body::kScalar, G>(xr, w, b, yr, geo, g, pivot, sc, pol);
  } else if (rows::aligned16(w + geo.head) && rows::aligned16(b + geo.head)) {
    write_row<T, l2tp::Body::kAligned, G>(xr, w, b, yr, geo, g, pivot, sc, pol);
  } else {
    write_row<T, PARAM_SHIFT ? l2tp::Body::kShifted : l2tp::Body::kScalar, G>(xr, w, b, yr, geo, g, pivot, sc, pol);
  }
}

}  // namespace ln5

// Parameters are written out in full: kernelab reads each kernel's C signature from the source
// to convert arguments (gpu/params.py), so they cannot hide in a macro.
extern "C" __global__ void __launch_bounds__(BLOCK_F32, LN5_MIN_BLOCKS_F32) layernorm_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M,
    int N, float eps) {
  ln5::layernorm_rows<float, BLOCK_F32>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(BLOCK_BF16, LN5_MIN_BLOCKS_BF16) layernorm_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  ln5::layernorm_rows<__nv_bfloat16, BLOCK_BF16>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(BLOCK_F32, LN5_MIN_BLOCKS_F32) layernorm_vec_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M,
    int N, float eps) {
  ln5::layernorm_rows<float, BLOCK_F32, true>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(BLOCK_BF16, LN5_MIN_BLOCKS_BF16) layernorm_vec_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  ln5::layernorm_rows<__nv_bfloat16, BLOCK_BF16, true>(x, w, b, y, M, N, eps);
}
