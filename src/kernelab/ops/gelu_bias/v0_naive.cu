// v0_naive: the fused kernel written the obvious way: one element per thread, y = gelu(x + b).
//
// What changed: nothing; this is the baseline, and it is already fused: x is read once and y
//   written once, where torch eager runs two kernels (x + bias -> a temporary, then gelu of
//   it) and so moves each byte of the tensor twice: 2 reads + 2 writes against 1 + 1 here.
// Layout: a block of 256 threads covers 256 consecutive columns of one row; grid.y walks the
//   rows (looping beyond 65535). Each thread reads bias[col] (an L1/L2 hit after the first
//   row) and one element of x, so every warp load is 128 bytes in fp32, 64 in bf16.
// Why it is not at the limit: 2-byte (bf16) accesses, one element per thread, so a warp has
//   one 64-byte load in flight in its life, and every element pays a thread's whole setup
//   (indices, bounds, bias) plus erff: ~80 instructions per element in the SASS (55 in the
//   row loop, which runs once when rows <= 65535). At 4.2 TB/s in bf16 (4 bytes moved per
//   element) the H200 retires 1.05e12 elements/s against ~3.3e13 thread-instructions/s of
//   issue (132 SMs x 4 schedulers x 1.98 GHz x 32 lanes): a budget of ~31 per element.
// Predicted: bf16 issue-bound at <= 31/80 of 4.2, ~1.4-1.7 TB/s at 32768 x 8192, so about
//   torch eager or slower (eager's two kernels each run near the bandwidth, ~2.1 TB/s counted
//   on the fused bytes): fusing alone does not pay when the fused kernel runs out of issue
//   slots. fp32 (8 bytes per element, a budget of ~63) ~3.0-3.3 TB/s, ~1.5x eager.
// Measured: BENCHMARKS.md, gelu_bias rows (generated from results JSON).
//
// @block 256
// @layout rows
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 256
#endif

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Exact GELU as torch's CUDA kernel writes it (fp32 math for bf16 too): v/2 (1 + erf(v / sqrt 2)).
__device__ __forceinline__ float gelu_erf(float v) { return 0.5f * v * (1.0f + erff(0.70710678118654752440f * v)); }

template <typename T>
__device__ __forceinline__ void gelu_bias_naive(const T* __restrict__ x, const T* __restrict__ bias, T* __restrict__ y,
                                                unsigned long long rows, unsigned cols) {
  const unsigned col = blockIdx.x * BLOCK + threadIdx.x;
  if (col >= cols) return;  // no barrier in this kernel
  for (unsigned long long r = blockIdx.y; r < rows; r += gridDim.y) {
    const unsigned long long i = r * cols + col;
    y[i] = from_f32<T>(gelu_erf(to_f32(x[i]) + to_f32(bias[col])));
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK) gelu_bias_bf16(const __nv_bfloat16* __restrict__ x,
                                                                   const __nv_bfloat16* __restrict__ bias,
                                                                   __nv_bfloat16* __restrict__ y,
                                                                   unsigned long long rows, unsigned int cols) {
  gelu_bias_naive<__nv_bfloat16>(x, bias, y, rows, cols);
}

extern "C" __global__ void __launch_bounds__(BLOCK) gelu_bias_f32(const float* __restrict__ x,
                                                                  const float* __restrict__ bias,
                                                                  float* __restrict__ y,
                                                                  unsigned long long rows, unsigned int cols) {
  gelu_bias_naive<float>(x, bias, y, rows, cols);
}
