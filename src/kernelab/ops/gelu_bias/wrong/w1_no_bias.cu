// w1_no_bias: v0_naive that forgets the bias: y = gelu(x). Every element is written, and with
// the op's N(0, 1) bias the values are off by ~|gelu'(x)| |b| ~ 0.5 on average.
// @expect mismatch
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

__device__ __forceinline__ float gelu(float v) { return 0.5f * v * (1.0f + erff(0.70710678118654752440f * v)); }

template <typename T>
__device__ __forceinline__ void no_bias(const T* __restrict__ x, const T* __restrict__ bias, T* __restrict__ y,
                                        unsigned long long rows, unsigned cols) {
  const unsigned col = blockIdx.x * BLOCK + threadIdx.x;
  if (col >= cols) return;
  for (unsigned long long r = blockIdx.y; r < rows; r += gridDim.y) {
    const unsigned long long i = r * cols + col;
    y[i] = from_f32<T>(gelu(to_f32(x[i])));  // BUG (deliberate): + bias[col] is missing
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK) gelu_bias_bf16(const __nv_bfloat16* __restrict__ x,
                                                                   const __nv_bfloat16* __restrict__ bias,
                                                                   __nv_bfloat16* __restrict__ y,
                                                                   unsigned long long rows, unsigned int cols) {
  no_bias<__nv_bfloat16>(x, bias, y, rows, cols);
}

extern "C" __global__ void __launch_bounds__(BLOCK) gelu_bias_f32(const float* __restrict__ x,
                                                                  const float* __restrict__ bias,
                                                                  float* __restrict__ y,
                                                                  unsigned long long rows, unsigned int cols) {
  no_bias<float>(x, bias, y, rows, cols);
}
