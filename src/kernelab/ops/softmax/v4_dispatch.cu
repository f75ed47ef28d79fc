// v4_dispatch: the library softmax: picks v0, v1, v2, v5, v6, v12, v14, v15 or v16 by row width, dtype and GPU.
//
// What changed: no new kernel. This module holds the instances of v0-v3, v5, v6, v12 and v14-v16 that the
//   op's launch chooses from, each strategy's list from the *_instances.cuh its own module includes (v5's
//   and v14's without those only their knobs take); the choice is the table DISPATCH_SM90 in op.py, with
//   the measured figures behind each entry. On sm_90+ (2026-11-30 table):
//     N <= 1024                 v0, one warp per row (E = 8/16/32 elements per lane);
//     N <= 8192 (fp32: 4096)    v1, one block per row of 64/128/256 threads;
//     N <= 32768                fp32 4097-12288: v2, online softmax: its re-read hits L2 (fp32
//                               32768 x 8192: v2 515, v1 542; wider fp32 rows take "wide" below);
//                               bf16 4097-32768: v6's block rows (8192 x 32768
//                               bf16, session 6: v6's 32-element instance 257.7 us, v2 262.8;
//                               session 3: v2 266, v1 303, v3 362);
//     N <= 262144               (fp32 from 12289) the "wide" entry (session 14: a grid of 12 widths 40960-262144 in
//                               each dtype, op.py wide_plan): v12_dynamic_rows (v10's clusters of
//                               256-thread blocks, 2 stages of each block's share, rows from a
//                               counter) where each block's stage is a full 32 KiB or more and its
//                               clusters place (at most 4 blocks, or two rings an SM); for bf16
//                               past 65536 as v14_split_grid in sessions 13-26 (v12's clusters plus
//                               v13's on the 12 SMs they leave, one row counter: 2048 x 131072 bf16
//                               268.0 us vs v12 275.7), v12 alone again since session 27 (its rows
//                               on staged_rows.cuh's SB_FAST_EXP: v12 266.0-266.5 us, v14 267.2-268.4,
//                               op.py DISPATCH_WIDE_SPLIT); else fp32 rows of up to 131072 in v12's clusters of 16
//                               holding 32 values a thread (2048 x 131072 fp32 527.4 us vs 546.9), aligned
//                               rows of exactly 131072 since session 29 in 128-thread clusters of 16, 3 stages,
//                               the `_full` instance (520.5 us vs 526.5: op.py DISPATCH_T128_FULL),
//                               and every other width v13_packed_regs's kernel (1024-thread blocks
//                               holding raw vectors): bf16 4915 x 40960 204.8 us vs v12 287.4, 2457 x
//                               81920 223.7 vs v14 275.0; fp32 384 x 262144 212.8 vs v12 244.4; as
//                               v16_half_blocks, in the fewest 512-thread blocks (1-8, two an SM)
//                               that hold a row (session 15: bf16 1325 x 151936 in 5, 215.0 us, vs
//                               v15's 3 x 1024 threads 235.8, v13's 4 253.2); v15_any_cluster
//                               (1024-thread blocks) for the fp32 rows past 131072 v16 cannot hold.
//                               Until session 14 the table went by proximity to the powers of two
//                               measured, which lost up to 1.4x between them.
//     before sm_90: v0 to 1024, v1 to 32768, v2 beyond; wider rows everywhere: v2.
//   v5's persistent instances are compiled in when an entry names "persistent", so a sweep's verdict
//   is still a one-word change in op.py ("persistent" in DISPATCH_SM90).
//   Every strategy keeps 32 elements per thread (4 x 16 B bf16, 8 x 16 B fp32), so a
//   thread's registers hold the same 128 bytes (bf16: 64 B loaded) whatever the width.
// Why: no single shape of work fits rows from 1 to 262144 wide: a warp per row wastes
//   nothing at N = 1024 but cannot hold 8192; a 1024-thread block holds 32768 but leaves
//   one block per SM; only clusters keep 131072-wide rows on chip.
// Predicted: at each bench shape, the figure of the variant it picks: ~255-265 us for every
//   bf16 ANCHORS shape (1.07 GB each; 251 us at the copy rate), i.e. >= 0.95x copy rate,
//   2.3x torch.compile at 32768 x 8192 and 3.1x at 2048 x 131072.
// Measured: BENCHMARKS.md, softmax rows (generated from results JSON).
//
// @strategy dispatch
// @access_bytes 16
// Instance lists no entry of op.py's tables names are left out (session 20: v3's and v5's, 48 of 152
// kernels; sm_90 compile 9.6 s instead of 14.4 on 2 cores). Softmax.defines passes V4_CLUSTER and
// V4_PERSISTENT from the tables and `@dispatch_only`, so flipping an entry to either strategy still
// takes one word in op.py; compiled by hand without them, v4 holds every list.
#ifndef V4_CLUSTER
#define V4_CLUSTER 1
#endif
#ifndef V4_PERSISTENT
#define V4_PERSISTENT 1
#endif
#ifndef V4_SPLIT  // v14's instances: since session 27 only with op.py's DISPATCH_WIDE_SPLIT (or a "split" entry)
#define V4_SPLIT 1
#endif
#define SOFTMAX_NO_ENTRY_POINTS  // take the strategies' device code; the entry points are below
#include "v0_warp_row.cu"
#include "v1_block_row.cu"
#include "v2_online.cu"
#if __CUDA_ARCH__ >= 900
#include "v3_cluster.cu"
#endif
#include "v5_persistent.cu"  // (its cluster code is guarded by __CUDA_ARCH__ >= 900 itself)
#include "v6_packed_rows.cu"  // bf16 rows of 513-1024 and 4097-32768 on sm_90+ (DISPATCH_SM90)
#if __CUDA_ARCH__ >= 900
// v12_dynamic_rows, built with the knobs op.py's DISPATCH_BULK gives (Softmax.defines passes them
// as SB_STAGES, SB_THREADS, SB_BLOCKS_PER_SM, SB_ELEMS): bf16 rows of 32769-262144, fp32 65537-262144.
#include "v12_dynamic_rows.cu"
// v13_packed_regs's kernel: "wide"'s remaining widths as v15_any_cluster's instances (clusters of 1-8)
#include "v13_packed_regs.cu"  // and, with the split entry points below, v14_split_grid's side grid
#include "counter_rows.cuh"     // v14's "online" side grid (v2's rows from the counter)
#endif

// v0: one warp per row, 8 rows per 256-thread block.
#include "warp_row_instances.cuh"  // softmax_warp_e{8,16,32}_*

// v1: one block per row.
#include "block_row_instances.cuh"  // softmax_block_t{64..1024}_*

// v2: online softmax, any width.
#include "online_instances.cuh"  // softmax_online_t512_*

// v3: clusters (sm_90+ only; on older GPUs the launch never asks for these names), compiled only when
// a table entry (or `@dispatch_only`) is "cluster": op.py's dispatch_lists passes V4_CLUSTER.
#if __CUDA_ARCH__ >= 900 && V4_CLUSTER
#include "cluster_instances.cuh"  // softmax_cluster_t*_c*_*
#endif

// v5: persistent warps and blocks (any arch), clusters (sm_90+): the instances op.py's
// persistent_plan picks (without a `@threads` knob), for DISPATCH_SM90 entries "persistent",
// 32 or 64 elements a thread (DISPATCH_PERSISTENT_ELEMS); compiled only when an entry (or
// `@dispatch_only`) is "persistent" (V4_PERSISTENT).
#if V4_PERSISTENT
#include "persistent_instances.cuh"  // softmax_pw_*, softmax_pc_*: v5's, less the clusters only `@threads` takes
#endif

// v6_packed_rows's instances (all of v6's, built with its header's default knobs).
#include "packed_rows_instances.cuh"  // softmax_pk_*

// The names the op contract looks up: the kernel that handles any width (v2's).
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::online_row<float, 512, 4>(x, y, N); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::online_row<__nv_bfloat16, 512, 4>(x, y, N); }

// v12_dynamic_rows's instances (DISPATCH_SM90 entries "dynamic"): clusters of 1-16 blocks, each
// block's share of the next rows staged in shared memory (launch: cluster=C, the ring as dynamic
// shared memory, op.py's dynamic_work counters), read once into registers, rows from a counter.
#if __CUDA_ARCH__ >= 900
#include "dynamic_rows_instances.cuh"  // softmax_dy_c{1,2,4,8,16}_*
// DISPATCH_SM90 entries "dynamic_e32" (fp32 rows of 65537-131072): clusters of 16 whose threads hold
// 32 values (32 KiB shares, 64 KiB rings, two or more blocks an SM). The bf16 twin is there so any
// entry can be flipped to any strategy (tests/cpu/test_softmax_persistent.py).
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_dy_e32_c16_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::staged::dynamic_rows<float, 16, 32>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_dy_e32_c16_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::staged::dynamic_rows<__nv_bfloat16, 16, 32>(x, y, M, N, work); }
// DISPATCH_SM90 entries "dynamic_t128" (session 29): clusters of 16 blocks of 128 threads holding V4_T128_ELEMS
// values a thread, in a ring of V4_T128_STAGES stages (op.py's DISPATCH_BULK_T128, passed by Softmax.defines):
// fp32 2048 x 131072's 32 KiB shares in 96 KiB rings, two blocks an SM. The general kernel is slower than e32
// (574 against 526 us, sweep t128_29); the "wide" entry takes only the `_full` instance below, for aligned rows
// of exactly 131072 (520.5 against 526.5, t128_29b). Both dtypes, as e32, so any entry can be flipped.
#ifndef V4_T128_STAGES
#define V4_T128_STAGES 3
#endif
#ifndef V4_T128_ELEMS
#define V4_T128_ELEMS 64
#endif
extern "C" __global__ void __launch_bounds__(128, SB_MIN_BLOCKS_AT(128))
softmax_dy_t128_c16_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::staged::dynamic_rows<float, 16, V4_T128_ELEMS, 128, V4_T128_STAGES>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(128, SB_MIN_BLOCKS_AT(128))
softmax_dy_t128_c16_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::staged::dynamic_rows<__nv_bfloat16, 16, V4_T128_ELEMS, 128, V4_T128_STAGES>(x, y, M, N, work); }
// Its `_full` instance (staged_rows.cuh's FULL): fp32 rows of exactly 16 x 128 x V4_T128_ELEMS with x and y
// 16-byte aligned, which op.py's dynamic_full sends here (no row geometry, scalars or predicates).
extern "C" __global__ void __launch_bounds__(128, SB_MIN_BLOCKS_AT(128))
softmax_dy_t128_c16_full_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::staged::dynamic_rows<float, 16, V4_T128_ELEMS, 128, V4_T128_STAGES, true>(x, y, M, N, work); }
// The "wide" entry's other widths (op.py wide_plan, and `@dispatch_only any_cluster`): v15_any_cluster,
// v13's kernel (1024-thread blocks, one an SM, each thread holding 8 raw 16-byte vectors; one stage of
// dynamic shared memory, op.py's dynamic_work counters) in clusters of the fewest blocks, 1-8, that hold
// a row. All C and both dtypes, so any entry can be flipped.
#include "any_cluster_instances.cuh"  // softmax_ac_c{1..8}_*

// The "wide" entry's part-stage widths (op.py wide_plan, and `@dispatch_only half_blocks`): v16_half_blocks,
// v13's kernel in 512-thread blocks, two an SM, in clusters of the fewest blocks (1-8) that hold a row
// (bf16 to 262144, fp32 to 131072; wider fp32 rows take the v15 instances above).
#include "half_blocks_instances.cuh"  // softmax_hb_c{1..8}_*

// v14_split_grid: bf16 rows of 65537-262144 (DISPATCH_SM90 "split"): v12's clusters (main grid, the
// caller's stream) and v13's (side grid, a second stream) taking rows from one counter; op.py's
// split_grid_launch launches both.
#if V4_SPLIT
#include "split_grid_instances.cuh"  // softmax_sg_*: only the bf16 ones v14's plans take
#endif
#endif
