// v3_persist_prefetch: v2 made persistent: each block (or warp) walks rows with the next row's
// 16-byte loads issued before this row's reduction, and the weight loaded once per block
// instead of once per row.
//
// What changed from v2: (1) `@grid persistent`: the grid is SMs x resident blocks (capped by the
//   rows) and a group of P threads takes rows r, r + stride, ...; before reducing row r it
//   issues row r + stride's K loads (`asm volatile`, so they stay above the barrier), so its next
//   row is in flight through the block sum and the store phase, where v2 had nothing
//   outstanding; (2) the weight stays in registers across rows (every row has the same 16-byte
//   phase when N x itemsize is a multiple of 16; otherwise it is reloaded per row); (3) E per
//   thread is 16 bf16 / 8 fp32 (K = 2 vectors; v2: 32 / 16), so x now, x next and the weight fit
//   in 24 registers: N = 8192 runs 512 threads (bf16, 2 blocks per SM) and 1024 threads (fp32).
//   Shared with layernorm v3: norm_persist.cuh.
// Why: v2 reached 0.97x torch.compile in bf16 (257.1 vs 248.5 us at 32768 x 8192, H200 full run)
//   and 0.98x in fp32 (509.5 vs 498.0): the bytes are the copy's, so what is left is time with
//   no loads in flight (a block's barrier and store phase: ~1 us of a ~4 us life).
// Predicted: bytes first. 32768 x 8192 bf16 moves 1.07 GB: 251 us at the 4.27 TB/s copy rate;
//   fp32 2.15 GB: 503 us. Expect ~247-254 us bf16 (0.98-1.01x torch.compile) and ~500-508 us fp32.
// Sweep (docs/runs/2026-11-30-h200-sweep_membound_s3.json, one H200 process): slower than v2, a measured dead end. bf16
//   32768 x 8192 271.4 us (v2 256.8, torch.compile 249.5; without the prefetch 319.9, so the
//   prefetch itself pays 15%), fp32 538.1 (v2 509.8, torch.compile 498.4).
// Measured: BENCHMARKS.md, rmsnorm rows (generated from results JSON).
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
#include "norm_persist.cuh"

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
#include "min_blocks.cuh"  // MINB_* from SM_THREADS_*

// Parameters are written out in full: kernelab reads each kernel's C signature from the source
// to convert arguments (gpu/params.py), so they cannot hide in a macro.
#ifndef ONLY_BLOCK_T
// One warp per row group (8 warps per 256-thread block): rows of up to 256, 512, 1024 (rows.py's warp plan).
extern "C" __global__ void __launch_bounds__(256, 4) rmsnorm_warp_e8_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<float, 32, 8, false>(x, w, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) rmsnorm_warp_e8_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<__nv_bfloat16, 32, 8, false>(x, w, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) rmsnorm_warp_e16_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<float, 32, 16, false>(x, w, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) rmsnorm_warp_e16_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<__nv_bfloat16, 32, 16, false>(x, w, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 2) rmsnorm_warp_e32_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<float, 32, 32, false>(x, w, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 2) rmsnorm_warp_e32_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<__nv_bfloat16, 32, 32, false>(x, w, w, y, M, N, eps);
}
#endif

// One block of P threads per row group, E = ELEMS_* elements per thread: rows of up to P x E.
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 64
extern "C" __global__ void __launch_bounds__(64, MINB_F32_T64) rmsnorm_block_t64_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<float, 64, ELEMS_F32, false>(x, w, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(64, MINB_BF16_T64) rmsnorm_block_t64_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<__nv_bfloat16, 64, ELEMS_BF16, false>(x, w, w, y, M, N, eps);
}
#endif
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 128
extern "C" __global__ void __launch_bounds__(128, MINB_F32_T128) rmsnorm_block_t128_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<float, 128, ELEMS_F32, false>(x, w, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(128, MINB_BF16_T128) rmsnorm_block_t128_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<__nv_bfloat16, 128, ELEMS_BF16, false>(x, w, w, y, M, N, eps);
}
#endif
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 256
extern "C" __global__ void __launch_bounds__(256, MINB_F32_T256) rmsnorm_block_t256_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<float, 256, ELEMS_F32, false>(x, w, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, MINB_BF16_T256) rmsnorm_block_t256_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<__nv_bfloat16, 256, ELEMS_BF16, false>(x, w, w, y, M, N, eps);
}
#endif
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 512
extern "C" __global__ void __launch_bounds__(512, MINB_F32_T512) rmsnorm_block_t512_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<float, 512, ELEMS_F32, false>(x, w, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, MINB_BF16_T512) rmsnorm_block_t512_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<__nv_bfloat16, 512, ELEMS_BF16, false>(x, w, w, y, M, N, eps);
}
#endif
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 1024
extern "C" __global__ void __launch_bounds__(1024, MINB_F32_T1024) rmsnorm_block_t1024_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<float, 1024, ELEMS_F32, false>(x, w, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(1024, MINB_BF16_T1024) rmsnorm_block_t1024_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::persist_rows<__nv_bfloat16, 1024, ELEMS_BF16, false>(x, w, w, y, M, N, eps);
}
#endif

#ifndef ONLY_BLOCK_T
// Wider rows: passes over memory, one block per row.
extern "C" __global__ void __launch_bounds__(512, 2) rmsnorm_stream_t512_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  normpersist::stream_row<float, 512, false>(x, w, w, y, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, 2) rmsnorm_stream_t512_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::stream_row<__nv_bfloat16, 512, false>(x, w, w, y, N, eps);
}
#endif
// Any width: the names the op contract looks up (the streaming kernel, grid = M).
extern "C" __global__ void __launch_bounds__(512, 2) rmsnorm_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  normpersist::stream_row<float, 512, false>(x, w, w, y, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, 2) rmsnorm_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  normpersist::stream_row<__nv_bfloat16, 512, false>(x, w, w, y, N, eps);
}
