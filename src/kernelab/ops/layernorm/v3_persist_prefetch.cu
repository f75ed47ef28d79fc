// v3_persist_prefetch: v1's one-row-in-registers kernel made persistent: each block (or warp)
// walks rows with the next row's 16-byte loads issued before this row's two reductions, the
// weight and bias loaded once per block instead of once per row, and x read through the
// read-only path (ld.global.nc) instead of v1's evict-first hint.
//
// What changed from v2 (and from v1, the best so far): (1) `@grid persistent`: the grid is
//   SMs x resident blocks (capped by the rows) and a group of P threads takes rows r, r + stride,
//   ...; before reducing row r it issues row r + stride's K loads (`asm volatile`, so they stay
//   above the barriers), so its next 16 KiB (bf16) / 32 KiB (fp32) row is in flight through both
//   block sums and the store phase, where v1 and v2 had nothing outstanding; (2) weight and bias
//   stay in registers across rows (every row has the same 16-byte phase when N x itemsize is a
//   multiple of 16; otherwise they are reloaded per row); (3) x through LDG.E.128.CONSTANT
//   (rmsnorm v2's main gain: v1's .cs hint cost ~5%); (4) v1's two block sums (one barrier each)
//   stay: v2's single-barrier Chan merge measured slower. Shared with rmsnorm v3:
//   ../rmsnorm/norm_persist.cuh. E per thread is 16 bf16 / 8 fp32 (K = 2 vectors), so x now,
//   x next, weight and bias fit in 32 registers: N = 8192 runs 512 threads (bf16, 2 blocks per SM)
//   and 1024 threads (fp32, 1 block per SM); the variance stays two-pass about a pivot (v1).
// Why: v1 reached 0.955x torch.compile in bf16 (299.5 vs 285.9 us at 32768 x 8192, H200
//   full run) and 0.94x in fp32 (533.3 vs 503.4); rmsnorm's v1 -> v2 (same bytes, the hint and
//   earlier weight loads) gained ~5%, and a block of v1 spends its two barriers and its store
//   phase with no load of x in flight (64 KiB per SM at 4 blocks when all load, near 0 when all
//   reduce).
// Predicted: bytes first. 32768 x 8192 bf16 moves 1.07 GB: 251 us at the 4.27 TB/s copy rate;
//   fp32 2.15 GB: 503 us. Expect ~265-280 us bf16 (1.02-1.08x torch.compile) and ~505-520 us fp32
//   (0.97-1.0x): 6-10% over v1 from the hint (~5%) and the prefetch.
// Sweep (docs/runs/2026-11-30-h200-sweep_membound_s3.json, one H200 process): a measured dead end. bf16 32768 x 8192
//   432.5 us against v1's 299.5 and torch.compile's 285.6 (PREFETCH 0 452.5, 2 waves 427.1); fp32
//   562.6 against v1's 537.9. The rmsnorm twin lost less (271.4 vs v2's 256.8): layernorm's two
//   block reductions per row leave a persistent block idle twice per row, and the prefetched row
//   does not cover that. Kept as the measured counter-example to v1.
// Measured: BENCHMARKS.md, layernorm rows (generated from results JSON).
//
// Knobs (#ifndef macros, for sweeps; defaults are the header's): X_LOAD (norm_rows.cuh);
// PREFETCH (0: load each row after the previous one is written), PF_MAX_K (prefetch where K <=
// this many vectors per thread); SM_THREADS_BF16 / SM_THREADS_F32 (threads per SM the register
// cap must allow); ONLY_BLOCK_T (compile only that block instance and the contract kernels).
//
// @strategy fast_rows
// @grid persistent
// @elems_bf16 16
// @elems_f32 8
// @access_bytes 16
#include "../rmsnorm/norm_persist.cuh"

#ifndef ELEMS_BF16
#define ELEMS_BF16 16
#endif
#ifndef ELEMS_F32
#define ELEMS_F32 8
#endif
#ifndef SM_THREADS_BF16
#define SM_THREADS_BF16 1024
#endif
#ifndef SM_THREADS_F32
#define SM_THREADS_F32 1024
#endif
#include "../rmsnorm/min_blocks.cuh"  // MINB_* from SM_THREADS_*

// Parameters are written out in full: kernelab reads each kernel's C signature from the source
// to convert arguments (gpu/params.py), so they cannot hide in a macro.
#ifndef ONLY_BLOCK_T
// One warp per row group (8 warps per 256-thread block): rows of up to 256, 512, 1024 (rows.py's warp plan).
extern "C" __global__ void __launch_bounds__(256, 3) layernorm_warp_e8_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<float, 32, 8, true>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 3) layernorm_warp_e8_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<__nv_bfloat16, 32, 8, true>(x, w, b, y, M, N, eps);
}
// E = 16 fp32 spills 8 B at 80 registers on sm_120 with NVRTC 13.5 (CI): 2 blocks per SM.
extern "C" __global__ void __launch_bounds__(256, 2) layernorm_warp_e16_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<float, 32, 16, true>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 3) layernorm_warp_e16_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<__nv_bfloat16, 32, 16, true>(x, w, b, y, M, N, eps);
}
// E = 32 fp32 (32 values of x, w and b each) spills 16 B at 128 registers on sm_120 with NVRTC 13.5 (CI):
// one 256-thread block per SM's worth of registers is its floor.
extern "C" __global__ void __launch_bounds__(256, 1) layernorm_warp_e32_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<float, 32, 32, true>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 2) layernorm_warp_e32_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<__nv_bfloat16, 32, 32, true>(x, w, b, y, M, N, eps);
}
#endif

// One block of P threads per row group, E = ELEMS_* elements per thread: rows of up to P x E.
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 64
extern "C" __global__ void __launch_bounds__(64, MINB_F32_T64) layernorm_block_t64_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<float, 64, ELEMS_F32, true>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(64, MINB_BF16_T64) layernorm_block_t64_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<__nv_bfloat16, 64, ELEMS_BF16, true>(x, w, b, y, M, N, eps);
}
#endif
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 128
extern "C" __global__ void __launch_bounds__(128, MINB_F32_T128) layernorm_block_t128_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<float, 128, ELEMS_F32, true>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(128, MINB_BF16_T128) layernorm_block_t128_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<__nv_bfloat16, 128, ELEMS_BF16, true>(x, w, b, y, M, N, eps);
}
#endif
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 256
extern "C" __global__ void __launch_bounds__(256, MINB_F32_T256) layernorm_block_t256_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<float, 256, ELEMS_F32, true>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, MINB_BF16_T256) layernorm_block_t256_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<__nv_bfloat16, 256, ELEMS_BF16, true>(x, w, b, y, M, N, eps);
}
#endif
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 512
extern "C" __global__ void __launch_bounds__(512, MINB_F32_T512) layernorm_block_t512_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<float, 512, ELEMS_F32, true>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, MINB_BF16_T512) layernorm_block_t512_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<__nv_bfloat16, 512, ELEMS_BF16, true>(x, w, b, y, M, N, eps);
}
#endif
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 1024
extern "C" __global__ void __launch_bounds__(1024, MINB_F32_T1024) layernorm_block_t1024_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<float, 1024, ELEMS_F32, true>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(1024, MINB_BF16_T1024) layernorm_block_t1024_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<__nv_bfloat16, 1024, ELEMS_BF16, true>(x, w, b, y, M, N, eps);
}
#endif

#ifndef ONLY_BLOCK_T
// Wider rows: passes over memory, one block per row.
extern "C" __global__ void __launch_bounds__(512, 1) layernorm_stream_t512_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  normpersist::stream_row<float, 512, true>(x, w, b, y, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, 1) layernorm_stream_t512_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::stream_row<__nv_bfloat16, 512, true>(x, w, b, y, N, eps);
}
#endif
// Any width: the names the op contract looks up (the streaming kernel, grid = M).
extern "C" __global__ void __launch_bounds__(512, 1) layernorm_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  normpersist::stream_row<float, 512, true>(x, w, b, y, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, 1) layernorm_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::stream_row<__nv_bfloat16, 512, true>(x, w, b, y, N, eps);
}
