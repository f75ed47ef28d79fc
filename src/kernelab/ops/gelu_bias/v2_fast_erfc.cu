// v2_fast_erfc: v1 with the GELU evaluated by a cheaper, equally exact formula: erfc from a
// 9-term Chebyshev fit (one reciprocal, one exp2) instead of 1 + erff.
//
// What changed from v1: only the function gelu(): the row loop drops from 269 to 184
//   instructions per 8 bf16 elements in the SASS (sm_90), ~34 -> ~23 per element, with 2 MUFU
//   (rcp, ex2) per element instead of 1. erff evaluates two polynomials' coefficients by select,
//   an exp and 1 + erf; the fit below is one 9-term polynomial. It is also more exact where it
//   matters least: for v < -3, 1 + erf cancels (torch's fp32 formula is up to 5% off for
//   -5 < v < -3, and returns 0 below v ~ -6), while this keeps ~1e-5 relative (tests/cpu checks it against float64 on a dense grid).
// Why: v1 in bf16 is bound by instruction issue, not bytes: at 4.2 TB/s the H200 must finish
//   1.05e12 elements/s, a budget of ~31 thread-instructions per element at full issue rate
//   (132 SMs x 4 schedulers x 1.98 GHz x 32 lanes), and v1 spends ~34. At ~23 the SM has
//   slots to spare (~75% issue) and the kernel is bound by memory. The MUFU pipe (16 lanes
//   per SM per clock) runs at ~50%: 2 per element x ~4 elements per SM per clock.
// Predicted: bf16 at 32768 x 8192 ~4.0-4.2 TB/s (~0.95x a copy), 1.15-1.25x v1; >= torch.compile,
//   whose Triton kernel evaluates libdevice erf like v1. fp32 about v1's (already bound by bytes).
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

#include "gelu_erfc.cuh"  // to_f32/from_f32, gelu (the fast erfc), unpack, pack, gelu_bias16

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
