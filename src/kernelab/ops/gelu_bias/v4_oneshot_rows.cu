// v4_oneshot_rows: v3 on a one-shot grid: each thread takes R consecutive row bands once (all R
// 16-byte loads of x issued before the first GELU) and exits, instead of a persistent grid
// whose threads walk rows r, r + stride, ... with one load in flight.
//
// What changed from v3: (1) the grid is sized by the data: block (bx, by) threads cover bx
//   16-byte column chunks of R x by consecutive rows (`@rows_per_thread` R, macro ROWS), blocks
//   dispatched in address order (x fastest over the column chunks of one band of rows); v3 ran
//   SMs x 8 blocks that each strode over all rows; (2) a thread's R loads are issued together
//   (`asm volatile` ld.global.nc, so NVVM keeps them ahead of the math; v3's header: ptxas sank a
//   prefetched row below the store), R x 16 B in flight per thread, and the bias vector it loads
//   once serves its R rows; (3) MIN_BLOCKS (blocks per SM the register cap must allow) is a
//   knob, default 4 (64 registers; v3: 8, 32 registers): at 32 registers R = 2 spilled 16-36
//   bytes on sm_80/sm_90 (NVRTC 13.0); at 64 R = 2 and R = 4 do not (43-64 registers). 1024
//   threads x 2 x 16 B = 32 KiB of loads in flight per SM, v3's 2048 x 1 x 16 B.
// Why: fp32 32768 x 8192 ran 540.9 us in v3 against torch.compile's 504.2 (H200 full run), 3.97
//   TB/s where vector_add fp32 reaches 4.42: not a bandwidth limit. The same persistent -> one-shot
//   change measured +6% for vector_add at 2^28 on the H200 (737 vs 790 us fp32, NOTES.md): a
//   one-shot grid sweeps memory front to back. GELU's ~30 instructions per element are ~120
//   per fp32 vector, which 2048 threads per SM issue well within a vector's ~0.8 us memory time.
//   At 256 x 1024 (graph replay) v3's grid is 256 blocks of one row each already; R = 1 with a
//   different block size is what the sweep varies there.
// Predicted: 32768 x 8192 fp32 moves 2.15 GB: 503 us at the copy rate; expect ~500-515 us
//   (0.98-1.01x torch.compile, 5-8% over v3); bf16 about v3's 286 us (it is at the copy rate).
//   256 x 1024 fp32 (1 MiB, graph): ~1.6-1.75 us (target <= 1.76 us).
// Sweep (docs/runs/2026-11-30-h200-sweep_membound_s3.json, one H200 process, torch.compile 503.8 us):
//   fp32 32768 x 8192: R = 4 503.2 us (1.00x torch.compile, the default now), R = 2 529.5, R = 1
//   534.9, v3 538.9. bf16 stays v3's (285.8 us; v4 R = 2 335.9). 256 x 1024 (graph): R = 1 1.9 us
//   against v3's 1.8 and torch.compile's 1.6: the one-shot grid does not help there.
// Measured: BENCHMARKS.md, gelu_bias rows (generated from results JSON).
//
// Knobs (#ifndef macros): ROWS (rows per thread, from the header), MIN_BLOCKS, BLOCK (header).
//
// @block 256
// @layout oneshot
// @rows_per_thread 4
// @access_bytes 16 (loads of x and bias, stores of y, where aligned)
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ROWS
#define ROWS 4
#endif
// 4 blocks of 256 = 1024 threads per SM: caps registers at 64 (8 x 256 caps them at 32).
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 4
#endif

#include "gelu_erfc.cuh"  // v2's element math, unchanged

__device__ __forceinline__ uint4 ldg_pinned(const uint4* p) {
  uint4 r;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  return r;
}

// Rows of band b: b x (R x by) + u x by + threadIdx.y for u < R (consecutive rows per warp row).
template <typename T>
__device__ __forceinline__ void gelu_bias_oneshot(const T* __restrict__ x, const T* __restrict__ bias,
                                                  T* __restrict__ y, unsigned long long rows, unsigned cols) {
  constexpr unsigned V = 16 / sizeof(T);
  constexpr unsigned R = ROWS;
  const unsigned chunks = (cols + V - 1) / V;
  const unsigned chunk = blockIdx.x * blockDim.x + threadIdx.x;
  if (chunk >= chunks) return;  // no barrier in this kernel
  const unsigned long long band_rows = (unsigned long long)R * blockDim.y;
  const unsigned long long bands = (rows + band_rows - 1) / band_rows;
  const bool vec = ((reinterpret_cast<unsigned long long>(x) | reinterpret_cast<unsigned long long>(bias) |
                     reinterpret_cast<unsigned long long>(y) | (cols * sizeof(T))) & 15) == 0;
  float b[V];
  if (vec) {  // cols % V == 0 here, so every chunk is whole
    const uint4* __restrict__ xv = reinterpret_cast<const uint4*>(x) + chunk;  // row r: xv[r * chunks]
    uint4* __restrict__ yv = reinterpret_cast<uint4*>(y) + chunk;
    const uint4 braw = ldg_pinned(reinterpret_cast<const uint4*>(bias) + chunk);
    bool first = true;
    // One pass for grids within 65535 bands (the sizes here); the loop covers taller tensors.
    for (unsigned long long band = blockIdx.y; band < bands; band += gridDim.y) {
      const unsigned long long r0 = band * band_rows + threadIdx.y;
      uint4 cur[R];
#pragma unroll
      for (unsigned u = 0; u < R; ++u) {
        const unsigned long long r = r0 + u * (unsigned long long)blockDim.y;
        cur[u] = r < rows ? ldg_pinned(xv + r * chunks) : make_uint4(0u, 0u, 0u, 0u);
      }
      if (first) {  // after x's loads are issued: the bias load's latency hides under theirs
        unpack<T>(braw, b);
        first = false;
      }
#pragma unroll
      for (unsigned u = 0; u < R; ++u) {
        const unsigned long long r = r0 + u * (unsigned long long)blockDim.y;
        if (r < rows) yv[r * chunks] = gelu_bias16<T>(cur[u], b);
      }
    }
  } else {  // element by element: this thread's columns c0 .. c0 + V - 1 that exist
    const unsigned c0 = chunk * V;
    bias_elems<T>(b, bias, c0, cols);
    for (unsigned long long band = blockIdx.y; band < bands; band += gridDim.y) {
      for (unsigned u = 0; u < R; ++u) {
        const unsigned long long r = band * band_rows + u * (unsigned long long)blockDim.y + threadIdx.y;
        if (r >= rows) break;
        row_elems<T>(x, y, b, r, cols, c0, [](float v) { return gelu(v); });
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS) gelu_bias_bf16(const __nv_bfloat16* __restrict__ x,
                                                                               const __nv_bfloat16* __restrict__ bias,
                                                                               __nv_bfloat16* __restrict__ y,
                                                                               unsigned long long rows, unsigned int cols) {
  gelu_bias_oneshot<__nv_bfloat16>(x, bias, y, rows, cols);
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS) gelu_bias_f32(const float* __restrict__ x,
                                                                              const float* __restrict__ bias,
                                                                              float* __restrict__ y,
                                                                              unsigned long long rows, unsigned int cols) {
  gelu_bias_oneshot<float>(x, bias, y, rows, cols);
}
