// gelu_erfc.cuh: the element math shared by gelu_bias v2 and v3 (v3 changes only the order of
// the loads in gelu_bias_vec): the exact GELU through a fast erfc and the GELU of one 16-byte
// vector (its conversions and unpack / pack are vec16.cuh's, shared with v1). Why each piece is written as it is: v2_fast_erfc.cu's header
// and the comments below.
#pragma once
#include <cuda_bf16.h>

#include "vec16.cuh"  // to_f32, from_f32, unpack, pack

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

template <typename T>
__device__ __forceinline__ uint4 gelu_bias16(uint4 xv, const float (&b)[16 / sizeof(T)]) {
  float f[16 / sizeof(T)];
  unpack<T>(xv, f);
#pragma unroll
  for (unsigned k = 0; k < 16 / sizeof(T); ++k) f[k] = gelu(f[k] + b[k]);
  return pack<T>(f);
}
