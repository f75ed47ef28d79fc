// v15_any_cluster: v13's rows (1024-thread blocks holding their share as raw 16-byte vectors, one
// block an SM, rows from a counter) in clusters of any size from 1 to 8 blocks, so a row takes the
// fewest SMs its share fits, not the next power of two.
//
// What changed from v13_packed_regs: nothing in the kernel (v13's packed_reg_rows<T, C> was written
//   for any C; its static_assert now allows 1-8); the plan (op.py any_cluster_plan) takes C from 1,
//   2, 3, ..., 8 where v13 takes it from 1, 2, 4, 8, and this module declares those instances.
// Why (docs/runs/2026-12-01-h200-sweep_membound_s14_grid.json.gz, v13 at 12 widths, 384 MiB each way,
//   floor 188 us): v13's rate falls with C, not with how full a block's share is: C = 1 ran 0.88-0.92x
//   a copy (bf16 40960-65536, shares of 80-128 KiB), C = 2 0.84-0.87x (81920-131072), C = 4
//   0.75-0.84x (163840-262144). Between the powers of two a row takes the larger C with part-full
//   shares: bf16 1325 x 151936 (the Qwen vocabulary) runs 253.2 us = 0.75x in clusters of 4 of 74 KiB
//   (docs/runs/2026-12-01-h200-sweep_membound_s14_vocab.json), the slowest width measured. Clusters
//   of 3 hold it in 99 KiB shares; a non-power-of-two cluster is legal (cudaLaunchKernelEx takes any
//   cluster dims up to the portable 8) and the exchange, the hand-out and the share split divide by
//   C, never shift.
// Predicted: bytes first: 1325 x 151936 bf16 moves 0.805 GB, 188 us at the copy rate. At C = 2's
//   0.84-0.87x, C = 3 would run ~216-224 us (vs 253.2, -12%); 1024 x 196608 bf16 (C = 3 of 128 KiB,
//   was C = 4 of 96 KiB: 230.6 us) ~216-224 (-3 to -6%); 1228 x 163840 (C = 3 of 107 KiB; 243.2)
//   ~220 (-9%). fp32 rows go to v12 in v4 (1-3% faster than v13 at C = 1-8); here fp32 98304 takes
//   C = 3, 163840 C = 5, 196608 C = 6, 229376 C = 7. Risk: the driver places clusters of 3, 5, 6, 7
//   blocks (one an SM) in GPCs of 16-18 SMs with leftovers (a GPC of 16 SMs holds five clusters of 3:
//   15 SMs), which the occupancy query (persistent_grid) counts.
// Measured (session 15, docs/runs/2026-12-01-h200-sweep_membound_s15_anyc.json, one process): bf16
//   1325 x 151936 238.5 / 238.1 us vs v13 252.8 (-6%, not the -12% predicted: 0.79x a copy where C = 2
//   runs 0.84-0.87x); 1228 x 163840 231.9 vs 243.4 (-5%); 1024 x 196608 226.6 / 225.6 vs 232.3 (-3%).
//   fp32 98304-229376 (C = 3, 5, 6, 7) 207-218 us, 3-6% behind v4's v12 instances. v4's "wide" entry
//   now takes v15's plan where it took v13's.
// Measured: BENCHMARKS.md, softmax rows (section membound: the bench shapes, where v4 does not pick it).
//
// @strategy any_cluster
// @arch sm_90
// @threads 1024
// @access_bytes 16
#define SOFTMAX_NO_ENTRY_POINTS  // v13's kernel; this module's instances are below
#include "v13_packed_regs.cu"
#undef SOFTMAX_NO_ENTRY_POINTS

// Instances: a cluster of C = 1-8 blocks of 1024 threads per row, one block an SM; the list, and how
// to launch them, is shared with v4_dispatch.
#include "any_cluster_instances.cuh"

// The names the op contract looks up: the widest instance (launch it as softmax_ac_c8_*).
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<float, 8>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<__nv_bfloat16, 8>(x, y, M, N, work); }
