// gelu_erfc.cuh: the element math shared by gelu_bias v2 and v3 (v3 changes only the order of
// the loads in gelu_bias_vec): conversions, the exact GELU through a fast erfc, and the unpack /
// GELU / pack of one 16-byte vector. Why each piece is written as it is: v2_fast_erfc.cu's header
// and the comments below.
#pragma once
#include <cuda_bf16.h>

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Exact GELU through erfc, from a Chebyshev fit with relative error < 1.2e-7 everywhere
// (Numerical Recipes, erfcc):
//   erfc(z) = t exp(-z^2 - 1.26551223 + t P(t)),  t = 1 / (1 + z / 2),  z >= 0.
// With z = |v| / sqrt 2, h = erfc(z) / 2 is Phi(-|v|), so Phi(v) = h for v < 0 and 1 - h
// otherwise, and gelu(v) = v Phi(v). exp is exp2 with the coefficients pre-multiplied by
// log2(e), the 1/2 folded into the constant (-1 in log2), and the two reciprocal/exp2 steps
// are single MUFU instructions (rcp.approx, ex2.approx: ~1 and ~2 ulp). The tail (v < -3)
// keeps its relative precision, which 1 + erf loses. Specials: v = +inf gives t = 0, h = 0,
// Phi = 1, y = inf; v = -inf gives -inf x 0 = NaN, as torch does; NaN stays NaN.
__device__ __forceinline__ float fast_rcp(float d) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
  return r;
}
__device__ __forceinline__ float fast_exp2(float a) {  // ex2(-inf) = 0; results < 2^-126 flush to 0
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
  return r;
}
__device__ __forceinline__ float gelu(float v) {
  constexpr float LOG2E = 1.4426950408889634f;
  const float t = fast_rcp(fmaf(fabsf(v), 0.35355339059327376f, 1.0f));  // 1 / (1 + |v| / (2 sqrt 2))
  float p = 0.17087277f * LOG2E;
  p = fmaf(p, t, -0.82215223f * LOG2E);
  p = fmaf(p, t, 1.48851587f * LOG2E);
  p = fmaf(p, t, -1.13520398f * LOG2E);
  p = fmaf(p, t, 0.27886807f * LOG2E);
  p = fmaf(p, t, -0.18628806f * LOG2E);
  p = fmaf(p, t, 0.09678418f * LOG2E);
  p = fmaf(p, t, 0.37409196f * LOG2E);
  p = fmaf(p, t, 1.00002368f * LOG2E);
  float a = fmaf(t, p, -1.26551223f * LOG2E - 1.0f);  // log2 of exp(-1.2655 + t P(t)) / 2
  a = fmaf(v * v, -0.5f * LOG2E, a);                  // - z^2 log2(e), z^2 = v^2 / 2
  const float h = t * fast_exp2(a);                   // Phi(-|v|)
  return v * (v < 0.0f ? h : 1.0f - h);
}

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

template <typename T>
__device__ __forceinline__ uint4 gelu_bias16(uint4 xv, const float (&b)[16 / sizeof(T)]) {
  float f[16 / sizeof(T)];
  unpack<T>(xv, f);
#pragma unroll
  for (unsigned k = 0; k < 16 / sizeof(T); ++k) f[k] = gelu(f[k] + b[k]);
  return pack<T>(f);
}
