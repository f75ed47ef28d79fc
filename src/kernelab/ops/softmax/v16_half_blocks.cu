// v16_half_blocks: v15's rows (a cluster of blocks holding a row as raw 16-byte vectors in registers,
// rows from a counter) in blocks of 512 threads, two an SM, so clusters of any size fill the GPU.
//
// What changed from v15_any_cluster: the block is 512 threads (v13's packed_reg_rows<T, C, false, 512>,
//   its thread count now a template parameter), launched two an SM with at most half an SM's shared
//   memory each, holding at most 64 KiB of a row (8 vectors a thread); the plan (op.py
//   half_blocks_plan) takes the fewest blocks, 1-8, whose shares fit: twice v15's C for the same row.
// Why (the occupancy query, scripts/v15_cluster_fit.py, docs/runs/2026-12-01-h200-v15_cluster_fit.txt):
//   the H200 holds 39 of v15's clusters of 3 x 1024 threads (117 of 132 SMs), 22 of 5 (110), 17 of 6
//   (102), 15 of 7 (105), 15 of 8 (120): a cluster's blocks sit on SMs of one GPC, and GPCs of 16-18
//   SMs do not divide into clusters of 3-8 whole SMs. With half-SM blocks a GPC's leftover is at most
//   one half. bf16 1325 x 151936 (Qwen's vocabulary, 297 KiB rows) ran 238.1 us = 0.79x a copy in
//   v15's clusters of 3; at C = 2's per-SM rate (0.855x on 132 SMs) 117 SMs predict 0.76x, so the
//   loss is the idle SMs, not the cluster size.
// Predicted: bytes first: 1325 x 151936 bf16 moves 0.805 GB, 188 us at the copy rate. Clusters of 5
//   x 512 threads (59 KiB shares) fill ~52 of 264 half-SM slots; if a half block keeps v15's per-SM
//   rate, ~0.86-0.89x a copy: ~212-219 us (vs 238.1, -8 to -11%); smaller shares cost more per row
//   (the exchange and two barriers per row amortised over half the bytes), the risk. Rows that fit
//   one 1024-thread block (bf16 <= 65536) gain two rows in flight an SM; ~0-3%.
// Measured (session 15, docs/runs/2026-12-01-h200-sweep_membound_s15_half.json, one process, ~384 MiB
//   each way, floor ~188 us): bf16 1325 x 151936 215.7 / 215.0 us vs v15 235.7 (-9%; predicted
//   212-219), 1228 x 163840 210.4 / 210.1 vs 230.5 (-9%), 1024 x 196608 209.7 / 210.0 vs 224.8 (-7%),
//   2048 x 98304 209.5 / 208.6 vs 217.1 (-4%), 768 x 262144 210.4 / 211.7 vs v15 225.9 and v14 (v4's
//   pick) 218.7; 0.88-0.91x a copy at every bf16 width from 65536. Against v12 / v14's full stages it
//   lost: bf16 3072 x 65536 207.1 vs 204.6, 1536 x 131072 209.1 vs 204.1; fp32 65536-131072 tied
//   (201.1-202.1 vs 201.3-202.2). v4's "wide" entry takes v16's plan where it took v15's.
//   Session 16 (-sweep_membound_s16_w262k.json, one process): bf16 262144 against v14 (v4's pick
//   there until then) 144.1 / 151.0 us at 512 rows, 209.8 / 218.3 at 768, 276.2 / 287.6 at 1024,
//   408.5 / 423.8 at 1536, 262143 x 768 218.6 / 236.0: v4 takes v16 for every bf16 row past 131072.
// Measured: BENCHMARKS.md, softmax rows (section membound).
//
// @strategy half_blocks
// @arch sm_90
// @threads 512
// @access_bytes 16
#define SOFTMAX_NO_ENTRY_POINTS  // v13's kernel; this module's instances are below
#include "v13_packed_regs.cu"
#undef SOFTMAX_NO_ENTRY_POINTS

// Instances: a cluster of C = 1-8 blocks of 512 threads per row, two blocks an SM; the list, and how
// to launch them, is shared with v4_dispatch.
#include "half_blocks_instances.cuh"

// The names the op contract looks up: the widest instance (launch it as softmax_hb_c8_*).
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<float, 8, false, 512>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<__nv_bfloat16, 8, false, 512>(x, y, M, N, work); }
