// v11_group_regs: v10's rows (a ring of bulk-copied shares read once into registers, one EX2 an
// element), with a row's C blocks an ordinary *group* of a cooperative grid, as in v9, instead of a
// hardware cluster: the (max, sum) pairs go through global memory, so C can be any of 1..16 and the
// groups fill every SM. Rows of 2049 .. 262144 elements, sm_90+ (cp.async.bulk, mbarriers).
//
// What changed from v10 (clusters of C = 1, 2, 4, 8, 16 blocks, pairs pushed by st.async into
//   every peer's shared memory):
//   1. Groups, not clusters: block b is rank b % C of group b / C; the grid is C x floor(resident
//      blocks / C), launched cooperatively (all blocks co-resident, or the launch is refused). The
//      row loop is v10's (staged_rows.cuh, Exchange::group).
//   2. The exchange: thread 0 stores the block's pair and adds 1 to the group's counter (release);
//      each warp spins (acquire) until the count says all C pairs of the row are in, reads them from
//      L2 and merges them in rank order (v9's protocol and proof, group_exchange.cuh), without v9's
//      exchange warp: the other block on the SM works while this one waits.
//   3. Two blocks an SM by default (`@blocks_per_sm 2`: the launch bounds cap 256 threads at 128
//      registers), which v10 reached only at 256 threads and cluster shapes that happen to fit.
//   C is chosen as v9's rule does (op.py's group_regs_plan: the least rounds x bytes a block moves a
//   round), among the C whose S stages fit half an SM's shared memory and whose share fits the
//   registers (ceil(nvec / C) x V <= T x E). H200 (132 SMs, 264 blocks), defaults: bf16
//   2048 x 131072 -> C = 8, 33 groups (all SMs; v10: 30 clusters of 8 blocks on 120 SMs); fp32 ->
//   C = 11, 24 groups (all SMs).
// Why: v10 at 2048 x 131072 bf16 runs 282.0 us; its clusters of 8 blocks (two an SM, 4 SMs a
//   cluster) place 30 at once, as v7's clusters of 4 did: 120 of 132 SMs, 69 rows for the busiest
//   cluster where 132 SMs would need 63 (2048 / 33 = 62.1). v7's ablations put the 120-SM floor at
//   ~276 us. v9 tested the same cure on v7 (session 6) and gained only 2%, but v7 then lost ~8% to
//   per-row work that v10 has since removed; v10 is now within 2% of that floor.
// Predicted: bytes first: 2048 x 131072 bf16 1.07 GB (250 us at the copy rate), fp32 2.15 GB
//   (500 us). Rounds of the busiest group: bf16 63 (v10 69): 282.0 x 63 / 69 = 257 us if a row
//   costs what it does in v10 (0.97x a copy); fp32 C = 11: 86 rounds of 46.5 KiB vs v10's 8-block
//   clusters (one an SM, 15 of them: 137 rounds of 64 KiB): v10 547.9 -> ~525 us if the SM count
//   was its cap. Risk: the global exchange (~1-2 us a row: store, release add, L2 polls) is not
//   hidden inside a block as v9's exchange warp hid it; only the SM's other block covers it.
// Measured (H200, one process each; docs/runs/2026-11-30-h200-sweep_membound_s8_groups.json and
//   _groups2.json): correct, and much slower. 2048 x 131072 bf16 397.7-399.4 us (v10 283.5-284.2 in
//   the same runs), 3 stages 402.1, C = 11 519.5, 512 threads at one block an SM (C = 4) 445.8, 32
//   values a thread at 3 blocks an SM (C = 16) 418.9; fp32 748.2-754.4 (C = 10: 734.4; v10
//   544.5-549.1). 63 rounds in 398 us is 6.3 us a row against v10's 4.1 (69 rounds in 284): the
//   global exchange (the release's fence, an L2 add, the acquire polls: ~2 us) sits on every row's
//   critical path, and the SM's second block does not cover it. The placement it was built to fix
//   is real (the driver's max_active_clusters: 30 clusters of v10's 8 blocks, 240 of 264 slots) but
//   small: a 16-byte copy with one 1024-thread block an SM runs 273.6 us on 120 SMs and 267.4 on
//   132 (docs/runs/2026-12-01-h200-copy_patterns.json).
//   v9, whose exchange warp overlaps the exchange with the next row's stats, at 2 blocks an SM
//   (256 threads, C = 8, 3 stages) 298.5. Not adopted; v10 stays v4_dispatch's pick.
// Measured: BENCHMARKS.md, softmax rows (full runs, generated from results JSON).
//
// Knobs: header values (op.py reads them for the plan and passes the first four to the compiler as
//   SB_STAGES, SB_THREADS, SB_BLOCKS_PER_SM, SB_ELEMS; `@group auto` or 1..16 forces C).
// @strategy group_regs
// @arch sm_90
// @stages 2
// @threads 256
// @blocks_per_sm 2
// @elems 64
// @group auto
// @access_bytes 16
#include "staged_rows.cuh"  // v10's row loop with the group exchange; the SB_* knobs

// Instances: groups of C = 1..16 blocks of SB_THREADS threads. Launch cooperatively with grid =
// C x groups, the dynamic shared memory op.py's group_regs_plan gives (S stages x ceil(N / (V x C))
// x 16 B) and a zeroed workspace (op.py's grid_groups_workspace): counters (groups x 32 unsigned)
// and slots (groups x 2 x C float2).
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c1_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<float, 1, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c1_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<__nv_bfloat16, 1, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c2_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<float, 2, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c2_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<__nv_bfloat16, 2, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c3_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<float, 3, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c3_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<__nv_bfloat16, 3, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c4_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<float, 4, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c4_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<__nv_bfloat16, 4, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c5_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<float, 5, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c5_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<__nv_bfloat16, 5, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c6_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<float, 6, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c6_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<__nv_bfloat16, 6, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c7_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<float, 7, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c7_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<__nv_bfloat16, 7, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c8_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<float, 8, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c8_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<__nv_bfloat16, 8, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c9_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<float, 9, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c9_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<__nv_bfloat16, 9, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c10_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<float, 10, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c10_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<__nv_bfloat16, 10, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c11_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<float, 11, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c11_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<__nv_bfloat16, 11, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c12_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<float, 12, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c12_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<__nv_bfloat16, 12, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c13_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<float, 13, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c13_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<__nv_bfloat16, 13, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c14_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<float, 14, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c14_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<__nv_bfloat16, 14, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c15_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<float, 15, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c15_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<__nv_bfloat16, 15, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c16_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<float, 16, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_gr_c16_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<__nv_bfloat16, 16, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}

// The names the op contract looks up: the widest instance (launch it as softmax_gr_c16_*).
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<float, 16, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::staged::staged_rows<__nv_bfloat16, 16, softmax::staged::Exchange::group>(x, y, M, N, counters, slots);
}
