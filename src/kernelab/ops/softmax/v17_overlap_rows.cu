// v17_overlap_rows: v12's rows (clusters of C blocks per row, each block's share staged by a bulk copy, rows
// taken from a counter), with each row's cluster exchange hidden behind the next row's sweep.
//
// What changed from v12_dynamic_rows: v12 holds a row's exps in registers (64 fp32 a thread, 127 registers),
//   pushes its warps' (max, sum) pairs to the cluster and waits for every block's before it can write the
//   row: each row waits for the cluster's slowest block. Here (overlap_rows.cuh) a block's iteration i
//   computes row i's pairs and pushes them without waiting (pass A), then writes row i - 1, whose pairs
//   arrived while it swept row i (pass B: the share read again from shared memory, exponentiated again
//   relative to the row's max, scaled, stored). Stages are held one row longer (3, not 2) and nothing but
//   pass A's raw vectors sits in registers; 4 pair buffers and 2S + 2 row slots (the proofs are in the
//   header of overlap_rows.cuh). Clusters of 2-16 (no C = 1: a block per row has no exchange to hide).
// Why: ncu's source counters on v12 at 2048 x 131072 (session 28, scripts/ncu_compare.py --source; under
//   ncu's fixed clocks): 21.8% of bf16's warp stall samples and 33.5% of fp32's sit on one instruction,
//   the branch that spins on the cluster's pairs (the stage's own wait: 1.3% / 0.4%). v12 is at 0.966x
//   (bf16) and 0.951x (fp32) a same-bytes copy (run at 10274e0).
// Predicted: bytes first: 2048 x 131072 bf16 moves 1.07 GB (~254 us at the run's copy rate), fp32 2.15 GB
//   (~500 us). Per element pass A + pass B take ~9 instructions (v12: ~6.5) and 2 EX2 (MUFU at ~56% of
//   its rate at the copy rate in bf16); if the wait's share of the row comes off and the added work hides
//   under other warps' stalls (v12 issues in 46% of cycles), bf16 -2 to -4% against v12 (~253-258 us), fp32
//   -3 to -6%. Risks: the second sweep's LDS and EX2 on the row's chain, the MUFU rate, and 16 warps an SM
//   at 256 threads (512-thread blocks give 32).
// Measured (H200, one process each, sweep ov28 in scripts/sweep_membound_s14.py; docs/runs/2026-12-03-h200-
//   sweep_ov28.json, -sweep_ov28_f32.json): slower. bf16 2048 x 131072 283.1 us against v4_dispatch's (v12's) 262.8
//   (+7.7%), at 512 threads 300.7 (+14%); fp32 535.3 / 535.5 against 530.4 / 528.6 (+1%), 512 threads 568.0 /
//   567.5. Predicted -2 to -4% / -3 to -6%: wrong in sign. The wait was not idle time the SM could fill: v12's
//   issue slots are 46% busy, and every added instruction (a second LDS, unpack, FFMA, EX2 and FMUL an element:
//   ~1.4x v12's stream) lengthens each warp's chain by its own latency, as fewer instructions shortened it in
//   session 27 (SB_FAST_EXP). fp32, whose elements need no unpacking, comes closest. Kept as the measured
//   record of that reading; v4_dispatch takes no v17 plan.
// Measured: BENCHMARKS.md, softmax rows (full runs, generated from results JSON).
//
// Knobs (header values; op.py's overlap_plan reads them and passes SB_STAGES, SB_THREADS,
//   SB_BLOCKS_PER_SM, SB_ELEMS): @stages (3+), @threads, @blocks_per_sm (the launch bounds' minimum and
//   the ring's share of the SM), @elems (fp32 values a thread holds in pass A: the share must fit
//   threads x elems), @min_cluster (2+).
// @strategy overlap
// @arch sm_90
// @stages 3
// @threads 256
// @blocks_per_sm 2
// @min_cluster 2
// @elems 64
// @access_bytes 16
#include "overlap_rows.cuh"

// A cluster of C = 2, 4, 8, 16 blocks of SB_THREADS threads per row. Launch with cluster=C, the dynamic shared
// memory op.py's overlap_plan gives and `work`: two unsigned (rows taken, clusters finished), zero before the
// launch; the kernel leaves them zero.
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_ov_c2_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::overlap::overlap_rows<float, 2>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_ov_c4_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::overlap::overlap_rows<float, 4>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_ov_c8_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::overlap::overlap_rows<float, 8>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_ov_c16_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::overlap::overlap_rows<float, 16>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_ov_c2_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::overlap::overlap_rows<__nv_bfloat16, 2>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_ov_c4_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::overlap::overlap_rows<__nv_bfloat16, 4>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_ov_c8_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::overlap::overlap_rows<__nv_bfloat16, 8>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_ov_c16_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::overlap::overlap_rows<__nv_bfloat16, 16>(x, y, M, N, work); }

// The names the op contract looks up: the widest instance (launch it as softmax_ov_c16_*).
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::overlap::overlap_rows<float, 16>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::overlap::overlap_rows<__nv_bfloat16, 16>(x, y, M, N, work); }
