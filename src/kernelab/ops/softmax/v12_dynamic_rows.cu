// v12_dynamic_rows: v10 with its rows handed out at run time: each cluster's leader takes the next
// row from a global counter (an atomicAdd, S + 1 rows ahead) and pushes its index to the cluster's
// blocks, instead of cluster q taking rows q, q + Q, q + 2Q, ... fixed at launch.
//
// What changed from v11 (and v10, whose clusters, ring and row body it keeps): v11 replaced v10's
//   clusters by cooperative groups to reach every SM, and lost ~40% to its global exchange (NOTES.md,
//   session 8). The SM count was not what held v10 back: a 16-byte copy of v10's bytes with one
//   1024-thread block an SM runs 273.6 us on 120 SMs and 267.4 on 132 (2%). What matters more is
//   the ORDER in which a kernel walks memory: the same copy, persistent over 264 blocks, takes
//   268.6 us with chunks c, c + 264, ... fixed per block (271.6 with whole 256 KiB rows), and
//   257.3 us (4.17 TB/s; torch's copy_ 253.7) when each block takes the next 32 KiB chunk from a
//   counter (docs/runs/2026-12-01-h200-copy_patterns.json, scripts/copy_patterns.py). Static
//   rows let the clusters drift apart, so the rows in flight spread over the tensor; taken from a
//   counter they stay the lowest untaken ones. Here (staged_rows.cuh's dynamic_rows):
//   1. the leader (rank 0, thread 0) issues the atomicAdd for row i + S + 1 at the start of row i
//      and hands the index out after row i's merge (st.async into each block's slot, counted on an
//      mbarrier; C = 1: a shared-memory write), so the round trip runs under the row's sweep;
//   2. each block's thread 0 refills the stage freed by row i with row i + S's index (handed out a
//      row earlier), as v10 refills with row i + S;
//   3. the first index >= M ends the loop (rows are taken in increasing order, so no copy is in
//      flight); blocks wait for the indices already pushed to them, and the last cluster to finish
//      resets the counter (a second counter of finished clusters): no memset before a launch.
//   The workspace: two unsigned a stream (op.py's dynamic_work), zeroed once, left zeroed by every
//   launch that completes.
// Why: v10 at 2048 x 131072 runs 282.0-284.6 us bf16 (0.88x a copy), 544.5-549.1 fp32 (0.92x); a
//   static persistent copy loses 4-5% to a counter-driven one at the same bytes.
// Predicted: bytes first: 2048 x 131072 bf16 1.07 GB (250 us at the copy rate), fp32 2.15 GB (500
//   us). If v10 loses what the static copy loses (268.6 vs 257.3 us: 4.4%), bf16 ~271-273 us (0.92x),
//   fp32 ~522-527. Cost: one atomic per row and cluster (2048 on one address over ~270 us: far
//   below an L2 atomic unit's rate), a 4-byte push per block and row; S + 1 failed takes a cluster.
//   Risk: the leader lagging its peers delays their refills (they wait for its push).
// Measured (H200, one process each; docs/runs/2026-11-30-h200-sweep_membound_s8_dynamic.json, _dynamic2):
//   2048 x 131072 bf16 276.4 / 275.9 us (v10 283.6 / 284.6 in the same run: -2.7%; 0.91x a copy),
//   3 stages 278.6; 4096 x 65536 bf16 268.8 (v10 284.1, v4_dispatch's then v5 298.3: -10%); fp32
//   2048 x 131072 549.6 / 546.9 (v10 547.0 / 548.7: the same). Knobs (_dynamic2): fp32 with 32
//   values a thread in clusters of 16 (32 KiB shares, a 64 KiB ring, two or more blocks an SM)
//   527.4 us (0.95x a copy; v4_dispatch's for fp32 rows of 65537-131072 since: 526.9 us in
//   _e32.json; 32 x 256 values cannot hold a 16th of a wider row), bf16 there 315.4; clusters of 16 at 64 values 528-533 bf16 / 568-572
//   fp32; 512 threads 325 / 610. The copy behind it (docs/runs/2026-12-01-h200-copy_patterns.json):
//   264 blocks taking 32 KiB chunks from a counter 257.3 us, chunks c, c + 264, ... 268.6, whole
//   256 KiB rows 271.6, 8 chunks a take 269.1; torch's copy_ 253.7. v4_dispatch routes bf16
//   32769-262144 and fp32 65537-262144 here (full run at 2fe3158: bf16 2048 x 131072 275.6 us).
// Since session 27 the row's sweep is staged_rows.cuh's SB_FAST_EXP (exps as one FFMA + EX2, bf16 maxima on packed
//   pairs): 4096 x 65536 bf16 265.6 / 265.8 us against 269.6 / 269.7 (-1.5%), fp32 unchanged (sweep fast27); and
//   its exchange SB_WARP_XCHG's (each warp's pair to the cluster, no block barrier): 2048 x 131072 bf16 -0.6%
//   (sweep xchg27). v4_dispatch takes v12 alone at bf16 2048 x 131072 again (run at 10274e0: 262.8 us, paired
//   0.966x a same-bytes copy; v14 265.2 in the same run).
// Session 28, not kept: `_full` instances for rows of exactly C x 256 x 64 (x and y 16-byte aligned: no row
//   geometry, head / tail scalars, per-vector predicates or scalar stores; sm_90 SASS of softmax_dy_c8_bf16 1920 ->
//   1576 lines) ran 264.4-264.5 us against the general kernel's 263.4-264.5 at 2048 x 131072 bf16, fp32 527.8-528.2
//   against 526.7-527.6 (sweep full28, docs/runs/2026-12-03-h200-sweep_full28.json; predicted bf16 -1 to -2%).
// Session 29: dynamic_rows takes the block's threads, the ring's stages and FULL as template arguments, so
//   v4_dispatch holds 128-thread, 3-stage clusters of 16 beside these (op.py DISPATCH_BULK_T128); at 128 threads
//   the `_full` form pays (fp32 2048 x 131072 520.5 us against the general kernel's ~575 and e32's 526.5: with
//   8 warps an SM the row's instructions are exposed), and v4 takes it for aligned fp32 rows of 131072.
// Measured: BENCHMARKS.md, softmax rows (full runs, generated from results JSON).
//
// Knobs: v10's (header values; op.py passes them as SB_STAGES, SB_THREADS, SB_BLOCKS_PER_SM,
//   SB_ELEMS and plans C as v10 does, bulk_plan).
// @strategy dynamic
// @arch sm_90
// @stages 2
// @threads 256
// @blocks_per_sm 1
// @min_cluster 1
// @elems 64
// @access_bytes 16
#include "staged_rows.cuh"  // v10's row loop, here dynamic_rows; the SB_* knobs

#ifndef SOFTMAX_NO_ENTRY_POINTS  // v4_dispatch (and v14) include this file for dynamic_rows alone
// Instances: a cluster of C = 1, 2, 4, 8, 16 blocks of SB_THREADS threads per row; the list, and how
// to launch them, is shared with v4_dispatch (its "dynamic" and "wide" entries: op.py wide_plan).
#include "dynamic_rows_instances.cuh"

// The names the op contract looks up: the widest instance (launch it as softmax_dy_c16_*).
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::staged::dynamic_rows<float, 16>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::staged::dynamic_rows<__nv_bfloat16, 16>(x, y, M, N, work); }
#endif
