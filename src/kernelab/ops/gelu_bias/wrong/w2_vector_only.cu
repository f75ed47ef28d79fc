// w2_vector_only: v1_vec16 without its element-by-element fallback: when x, bias or y is not
// 16-byte aligned, or a row is not a multiple of 16 bytes, the thread returns and writes
// nothing. Right on aligned shapes with N % 8 == 0 (bf16) / N % 4 == 0 (fp32); on views like
// x[1:] and on odd widths, y stays as the checker poisoned it.
// @expect unwritten
//
// @block 256
// @layout chunks
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 256
#endif

__device__ __forceinline__ float gelu(float v) { return 0.5f * v * (1.0f + erff(0.70710678118654752440f * v)); }

template <typename T>
__device__ __forceinline__ void unpack(uint4 u, float (&f)[16 / sizeof(T)]) {
  const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if constexpr (sizeof(T) == 4) {
      f[k] = __uint_as_float(w[k]);
    } else {
      f[2 * k] = __uint_as_float(w[k] << 16);
      f[2 * k + 1] = __uint_as_float(w[k] & 0xffff0000u);
    }
  }
}

template <typename T>
__device__ __forceinline__ uint4 pack(const float (&f)[16 / sizeof(T)]) {
  unsigned w[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if constexpr (sizeof(T) == 4) {
      w[k] = __float_as_uint(f[k]);
    } else {
      const __nv_bfloat162 h = __floats2bfloat162_rn(f[2 * k], f[2 * k + 1]);
      w[k] = *reinterpret_cast<const unsigned*>(&h);
    }
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

template <typename T>
__device__ __forceinline__ void vector_only(const T* __restrict__ x, const T* __restrict__ bias, T* __restrict__ y,
                                            unsigned long long rows, unsigned cols) {
  constexpr unsigned V = 16 / sizeof(T);
  const unsigned chunks = (cols + V - 1) / V;
  const unsigned chunk = blockIdx.x * blockDim.x + threadIdx.x;
  if (chunk >= chunks) return;
  const bool vec = ((reinterpret_cast<unsigned long long>(x) | reinterpret_cast<unsigned long long>(bias) |
                     reinterpret_cast<unsigned long long>(y) | (cols * sizeof(T))) & 15) == 0;
  if (!vec) return;  // BUG (deliberate): no fallback for unaligned views or odd widths
  float b[V];
  unpack<T>(__ldg(reinterpret_cast<const uint4*>(bias) + chunk), b);
  const uint4* xv = reinterpret_cast<const uint4*>(x) + chunk;
  uint4* yv = reinterpret_cast<uint4*>(y) + chunk;
  for (unsigned long long r = blockIdx.y * (unsigned long long)blockDim.y + threadIdx.y; r < rows;
       r += (unsigned long long)gridDim.y * blockDim.y) {
    float f[V];
    unpack<T>(__ldg(xv + r * chunks), f);
#pragma unroll
    for (unsigned k = 0; k < V; ++k) f[k] = gelu(f[k] + b[k]);
    yv[r * chunks] = pack<T>(f);
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK) gelu_bias_bf16(const __nv_bfloat16* __restrict__ x,
                                                                   const __nv_bfloat16* __restrict__ bias,
                                                                   __nv_bfloat16* __restrict__ y,
                                                                   unsigned long long rows, unsigned int cols) {
  vector_only<__nv_bfloat16>(x, bias, y, rows, cols);
}

extern "C" __global__ void __launch_bounds__(BLOCK) gelu_bias_f32(const float* __restrict__ x,
                                                                  const float* __restrict__ bias,
                                                                  float* __restrict__ y,
                                                                  unsigned long long rows, unsigned int cols) {
  vector_only<float>(x, bias, y, rows, cols);
}
