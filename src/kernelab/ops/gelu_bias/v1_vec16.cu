// v1_vec16: 16-byte loads and stores, the bias vector loaded once per thread and kept in
// registers while the thread walks down the rows.
//
// What changed from v0: a thread owns one 16-byte column chunk (8 bf16 or 4 fp32 columns):
//   it loads that chunk of bias once (LDG.E.128), then loops over rows with a stride of the
//   grid's height, one 16-byte load of x (LDG.E.128) and one store of y (STG.E.128) per row.
//   The block is 2-D, (chunks per row, rounded up to a power of two, at most 256) x (the rest
//   of 256 threads in rows), so narrow rows still fill it; the grid holds about as many
//   blocks as the GPU keeps resident.
// Why: v0 issued one 2-byte (bf16) load per element of x and one of bias; now one 16-byte load
//   covers 8 elements and the bias costs nothing per row, so the load/store and index
//   instructions per element drop from ~8 to ~1, and a warp's access is 512 bytes instead of
//   64: 64 warps per SM keep 32 KB of reads in flight (MIN_BLOCKS below).
// What remains: the GELU itself, torch's formula v/2 (1 + erff(v / sqrt 2)). The row loop is
//   269 instructions per 8 bf16 elements in the SASS (sm_90): ~34 per element, against the
//   ~31 per element that 4.2 TB/s allows in bf16 at full issue rate (v0's header has the
//   arithmetic). So bf16 becomes issue-bound just short of the bandwidth.
// Predicted: bf16 at 32768 x 8192 ~3.3-3.7 TB/s (2-2.5x v0); fp32 (131 instructions per 4
//   elements, 8 bytes each: a budget of ~63 per element) bound by bytes, ~4.1-4.2 TB/s,
//   a device copy's bandwidth.
// Alignment: vectors need x, bias and y 16-byte aligned and rows a multiple of 16 bytes
//   (cols x itemsize); otherwise (views like x[1:], odd widths) each thread does its chunk's
//   elements one by one, still with the bias in registers.
// Measured: BENCHMARKS.md, gelu_bias rows.
//
// @block 256
// @layout chunks
// @access_bytes 16 (loads of x and bias, stores of y, where aligned)
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 256
#endif
// 8 blocks of 256 = 2048 threads per SM: caps registers at 32 (no spills on sm_80..sm_120).
// Each thread has one row's 16-byte load in flight at a time (ptxas places each load just
// before its use even when several rows are loaded up front, seen in the SASS), so latency is
// hidden by warps: 64 warps x 512 B = 32 KB per SM, over the ~13 KB of reads that
// 2.2 TB/s (half of 4.4, reads) x ~0.8 us of latency / 132 SMs needs.
#define MIN_BLOCKS 8

#include "vec16.cuh"  // to_f32, from_f32, unpack, pack

// Exact GELU as torch's CUDA kernel writes it: v/2 (1 + erf(v / sqrt 2)).
__device__ __forceinline__ float gelu(float v) { return 0.5f * v * (1.0f + erff(0.70710678118654752440f * v)); }

template <typename T>
__device__ __forceinline__ uint4 gelu_bias16(uint4 xv, const float (&b)[16 / sizeof(T)]) {
  float f[16 / sizeof(T)];
  unpack<T>(xv, f);
#pragma unroll
  for (unsigned k = 0; k < 16 / sizeof(T); ++k) f[k] = gelu(f[k] + b[k]);
  return pack<T>(f);
}

template <typename T>
__device__ __forceinline__ void gelu_bias_vec(const T* __restrict__ x, const T* __restrict__ bias, T* __restrict__ y,
                                              unsigned long long rows, unsigned cols) {
  constexpr unsigned V = 16 / sizeof(T);
  const unsigned chunks = (cols + V - 1) / V;  // 16-byte column chunks per row (the last may be partial)
  const unsigned chunk = blockIdx.x * blockDim.x + threadIdx.x;
  if (chunk >= chunks) return;  // no barrier in this kernel
  const unsigned long long row0 = blockIdx.y * (unsigned long long)blockDim.y + threadIdx.y;
  const unsigned long long step = (unsigned long long)gridDim.y * blockDim.y;
  const bool vec = ((reinterpret_cast<unsigned long long>(x) | reinterpret_cast<unsigned long long>(bias) |
                     reinterpret_cast<unsigned long long>(y) | (cols * sizeof(T))) & 15) == 0;
  float b[V];
  if (vec) {  // cols % V == 0 here, so every chunk is whole
    unpack<T>(__ldg(reinterpret_cast<const uint4*>(bias) + chunk), b);
    const uint4* __restrict__ xv = reinterpret_cast<const uint4*>(x) + chunk;  // row r: xv[r * chunks]
    uint4* __restrict__ yv = reinterpret_cast<uint4*>(y) + chunk;
    for (unsigned long long r = row0; r < rows; r += step)
      yv[r * chunks] = gelu_bias16<T>(__ldg(xv + r * chunks), b);
  } else {  // element by element: this thread's columns c0 .. c0 + V - 1 that exist
    const unsigned c0 = chunk * V;
    bias_elems<T>(b, bias, c0, cols);
    for (unsigned long long r = row0; r < rows; r += step) row_elems<T>(x, y, b, r, cols, c0, [](float v) { return gelu(v); });
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS) gelu_bias_bf16(const __nv_bfloat16* __restrict__ x,
                                                                   const __nv_bfloat16* __restrict__ bias,
                                                                   __nv_bfloat16* __restrict__ y,
                                                                   unsigned long long rows, unsigned int cols) {
  gelu_bias_vec<__nv_bfloat16>(x, bias, y, rows, cols);
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS) gelu_bias_f32(const float* __restrict__ x,
                                                                  const float* __restrict__ bias,
                                                                  float* __restrict__ y,
                                                                  unsigned long long rows, unsigned int cols) {
  gelu_bias_vec<float>(x, bias, y, rows, cols);
}
