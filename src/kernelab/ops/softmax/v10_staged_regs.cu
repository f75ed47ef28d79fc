// v10_staged_regs: v7's ring of bulk-copied row shares in shared memory, read ONCE into registers,
// where the exps are kept (v5's arithmetic): one shared-memory sweep and one EX2 an element, and
// the stage is refilled as soon as the block's (max, sum) merge is done, before the exchange and
// the stores. Rows of 2049 .. 262144 elements, sm_90+ (cp.async.bulk, mbarriers, clusters).
//
// What changed from v7 (per row: wait the stage, sweep 1 max, sweep 2 sum of exp, block merge,
//   cluster exchange, sweep 3 y = exp(x - M) / S from the stage, block barrier, refill):
//   1. One sweep: thread t reads vectors t, t + T, ... (K = E / V of them, E = `@elems`) of the
//      staged share into fp32 registers and takes its max; then e = 2^((x - m_t) log2 e) in place
//      and its sum, all in registers (v5's exp_in_place: one EX2 an element; v7 spends two, one
//      in sweep 2 and one in sweep 3, and three LDS sweeps where this spends one).
//   2. The stage is free once the block merge's barrier has passed (every thread has copied its
//      vectors out), so thread 0 refills it with row i + S right there, before the cluster
//      exchange and the stores; v7 refills after the stores and an extra end-of-row barrier. So
//      while the block waits for its peers' pairs and writes row i, rows i + 1 .. i + S are all
//      staged or in flight (v7: S - 1).
//   3. Output: y = e x r, r = 2^((m_t - M) log2 e) / S (one EX2 a thread), packed and stored with
//      16-byte st.global from registers, as v5's store_scaled.
//   C is the smallest of 1, 2, 4, 8, 16 (at least `@min_cluster`) whose stages fit shared memory
//   (v7's rule) and whose share fits the registers (ceil(nvec / C) x V <= T x E). Defaults
//   (256 threads x 64 values, 2 stages): bf16 131072 -> C = 8 (32 KiB shares, a 64 KiB ring, two
//   blocks of two different clusters on each SM: 33 clusters, all 132 SMs); fp32 131072 -> C = 8
//   (64 KiB shares, a 128 KiB ring, one block an SM).
// Why: the ablations of v7 at 2048 x 131072 (docs/runs/2026-11-30-h200-sweep_membound_s7_ablate.json,
//   one process, bf16 v7 300.2 us): without the cluster exchange 281.0, without the EX2s 276.2,
//   without sweeps 1 and 2 280.0, without sweeps and exchange 276.9. Removing any part of a row's
//   work reaches the same ~276-281 us, the floor of 30 clusters of 4 on 120 of the 132 SMs
//   (250 us x 132 / 120 = 275): v7's bf16 loses ~8% to per-row work on top of placement. This
//   variant removes two sweeps and half the EX2s, and takes the refill off the end of the row.
// Predicted: bytes first: 2048 x 131072 bf16 moves 1.07 GB (250 us at the copy rate), fp32 2.15 GB
//   (500 us). Per SM (bf16, 120 SMs): 2.2 M elements, one EX2 each = 140 K clk of the 16/clk MUFU
//   (~80 us of 276): no longer near the critical path. Expect bf16 278-288 us (0.87-0.90x a copy;
//   v4_dispatch 293.5-304, v7 300), fp32 535-545 (v7 544.6, its floor ~536). Risks: 64 fp32 values
//   a thread (~100 registers at 512 threads, 1 block an SM: fine) and the exchange now right before
//   the stores with nothing to overlap it but the staged rows' copies.
// Measured (H200, 2048 x 131072, one process each; docs/runs/2026-11-30-h200-sweep_membound_s7_staged.json
//   and _staged2.json): with v7's shape (512 threads, 3 stages, C = 4) bf16 298.5 us, fp32 561.1:
//   no gain over v7 (301.6 / 548.9). What won was two blocks an SM: 256 threads (C = 8, 96 KiB
//   rings) 285.0 / 286.7 us, with 2 stages 282.0 (0.887x a copy; v4_dispatch's v5 293.4 / 294.2,
//   v7 300.2), the defaults since; fp32 256 threads 540.6 / 543.7, 2 stages 547.9 (v7 548.9 /
//   551.5, v5 565.6 / 568.0). The ablations' reading holds: per-row latency (block merge, the
//   exchange, the wait for a stage) stalls an SM unless a second block (another cluster, another
//   row) has work; 128 threads (C = 16, 4 blocks an SM) 287.9, 32 values a thread 297.8.
//   Pathology: 512 threads at C = 8 (min_cluster 8 or 4 stages; one block an SM, 4 of a thread's
//   8 vectors used) 470-473 us bf16 in both sweeps, 1.6x slower, unexplained (v7 at C = 8: 320).
//   At rows a block holds it loses to v4's picks (8192 x 32768 bf16 276.3 vs v6 256.8;
//   32768 x 8192 fp32 731.4 vs v2 514.2: one 512-thread block an SM, one row at a time).
//   v4_dispatch routes 65537-262144 here (DISPATCH_BULK in op.py).
// Measured: BENCHMARKS.md, softmax rows (full runs, generated from results JSON).
//
// Knobs: header values (op.py reads them for the plan and passes them to the compiler as
//   SB_STAGES, SB_THREADS, SB_BLOCKS_PER_SM, SB_ELEMS; a sweep overrides them as meta).
// @strategy bulk
// @arch sm_90
// @stages 2
// @threads 256
// @blocks_per_sm 1
// @min_cluster 1
// @elems 64
// @access_bytes 16
#include "staged_rows.cuh"  // the row loop (v11 shares it with a group exchange), SB_* knobs

// Instances: a cluster of C = 1, 2, 4, 8, 16 blocks of SB_THREADS threads per row (C = 16 is a
// non-portable cluster size; kernelab.gpu allows it). Launch with cluster=C and the dynamic
// shared memory op.py's bulk_plan gives (S stages x ceil(N / (V x C)) x 16 B). (v4_dispatch holds
// none of these: it holds v12_dynamic_rows's, which keep this row loop but take rows from a counter.)
#ifndef SOFTMAX_NO_ENTRY_POINTS
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_bk_c1_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::staged::staged_rows<float, 1>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_bk_c2_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::staged::staged_rows<float, 2>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_bk_c4_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::staged::staged_rows<float, 4>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_bk_c8_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::staged::staged_rows<float, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_bk_c16_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::staged::staged_rows<float, 16>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_bk_c1_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::staged::staged_rows<__nv_bfloat16, 1>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_bk_c2_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::staged::staged_rows<__nv_bfloat16, 2>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_bk_c4_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::staged::staged_rows<__nv_bfloat16, 4>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_bk_c8_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::staged::staged_rows<__nv_bfloat16, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_bk_c16_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::staged::staged_rows<__nv_bfloat16, 16>(x, y, M, N); }

// The names the op contract looks up: the widest instance (launch it with cluster=16 and the ring).
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::staged::staged_rows<float, 16>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::staged::staged_rows<__nv_bfloat16, 16>(x, y, M, N); }
#endif
