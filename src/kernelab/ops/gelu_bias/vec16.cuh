// vec16.cuh: conversions, one 16-byte vector <-> 4 (fp32) or 8 (bf16) floats, and the
// element-by-element path, shared by gelu_bias v1 to v4.
#pragma once
#include <cuda_bf16.h>

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// 16 bytes <-> V fp32 values. bf16 -> fp32 is exact (the top half of the bits); fp32 -> bf16
// rounds to nearest even, once.
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
      const __nv_bfloat162 h = __floats2bfloat162_rn(f[2 * k], f[2 * k + 1]);  // .x = low half
      w[k] = *reinterpret_cast<const unsigned*>(&h);
    }
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// The element-by-element path (rows whose 16-byte chunks are not aligned, or a row's last
// partial chunk): this thread's bias values at columns c0 .. c0 + V - 1 (0 past the row's end)...
template <typename T, int V>
__device__ __forceinline__ void bias_elems(float (&b)[V], const T* __restrict__ bias, unsigned c0, unsigned cols) {
#pragma unroll
  for (unsigned k = 0; k < V; ++k) b[k] = c0 + k < cols ? to_f32(bias[c0 + k]) : 0.0f;
}
// ...and row r of them, with the variant's element function f (its gelu).
template <typename T, int V, typename F>
__device__ __forceinline__ void row_elems(const T* __restrict__ x, T* __restrict__ y, const float (&b)[V],
                                          unsigned long long r, unsigned cols, unsigned c0, F f) {
#pragma unroll
  for (unsigned k = 0; k < V; ++k) {
    if (c0 + k < cols) {
      const unsigned long long i = r * cols + c0 + k;
      y[i] = from_f32<T>(f(to_f32(x[i]) + b[k]));
    }
  }
}
