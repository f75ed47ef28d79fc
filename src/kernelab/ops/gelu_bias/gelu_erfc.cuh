// gelu_erfc.cuh: the element math of gelu_bias v2 to v5 (v3 and v4 change only loads and grid):
// the exact GELU through a fast erfc, the GELU of one 16-byte vector (its unpack / pack are
// vec16.cuh's, shared with v1), and v5's shorter fit for bf16 outputs (at the end). Why each
// piece is written as it is: v2_fast_erfc.cu's and v5's headers, and the comments below.
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

// ---- gelu_bias v5: a shorter fit where the output is bf16 ---------------------------------------
// A bf16 output rounds to 8 significant bits (relative error up to 2^-8 = 3.9e-3), so the 9-term
// fit's 1.2e-7 buys nothing there. gelu_short() keeps gelu()'s form (one rcp, one ex2, relative
// precision in the tail) with a degree-5 polynomial, a minimax fit computed for v5 in float64
// (numpy, Lawson-weighted least squares over |v| in [0, 13.3]):
//   Phi(-|v|) = t 2^(Q(t) - v^2 log2(e) / 2),  t = 1 / (|v| + 2.875),
// Q in log2 units (the 1/2 of erfc / 2 folded in). gelu() computes t = 1 / (1 + c |v|), an FFMA
// with two constants (one of them held in a register); 1 / (|v| + 2.875) is one FADD with an
// immediate, the scale 1 / c moved into Q's coefficients. The fit's error is 8.8e-6 in log2 units
// (6.1e-6 relative, fp32 coefficients); with fp32 evaluation and the MUFU errors (rcp 1 ulp, ex2
// 2 ulp) the worst relative error of gelu over v in [-13, 14] is 1.2e-5 (8e-6 for v > -8),
// against math.erfc on 1.4M points (tests/cpu/test_ops_mem_a.py: 700k, each step in float32).
// Below v ~ -13.1 (|gelu| < 3e-38) ex2.approx.ftz flushes to 0 (torch's own fp32/bf16 kernel,
// 1 + erf, returns 0 from v ~ -5.5).
// The select of gelu() (v < 0 ? h : 1 - h, then v x Phi: FSETP + predicated FADD + FMUL) becomes
// gelu(v) = max(v, 0) - |v| Phi(-|v|): one FMNMX and one FFMA with the -|.| operand modifier.
// Special values: |v| is taken from min(v, FLT_MAX), so +inf gives inf - FLT_MAX x 0 = inf (a
// plain |v| would give inf - inf x 0 = NaN); -inf keeps |v| = inf and gives 0 - inf x 0 = NaN,
// as torch does; NaN reaches h through t and v^2 (max/min drop NaNs; the FFMA does not).
__device__ __forceinline__ float gelu_short(float v) {
  constexpr float LOG2E = 1.4426950408889634f;
  const float t = fast_rcp(fabsf(v) + 2.875f);
  float q = 65.70113f;  // Q(t) = -1.3278906 + 4.2457237 t + ... + 65.70113 t^5, t <= 1 / 2.875
  q = fmaf(q, t, -72.81991f);
  q = fmaf(q, t, 18.291988f);
  q = fmaf(q, t, 2.7797892f);
  q = fmaf(q, t, 4.2457237f);
  q = fmaf(q, t, -1.3278906f);
  const float h = t * fast_exp2(fmaf(v * v, -0.5f * LOG2E, q));  // Phi(-|v|)
  return fmaf(-fabsf(fminf(v, 3.402823466e38f)), h, fmaxf(v, 0.0f));
}

// The element function v5 uses for T: the short fit for bf16 outputs, the 9-term one for fp32.
template <typename T> __device__ __forceinline__ float gelu_for(float v) {
  if constexpr (sizeof(T) == 2) {
    return gelu_short(v);
  } else {
    return gelu(v);
  }
}

// gelu_bias16 with the element function chosen by gelu_for<T>.
template <typename T>
__device__ __forceinline__ uint4 gelu_bias16_for(uint4 xv, const float (&b)[16 / sizeof(T)]) {
  float f[16 / sizeof(T)];
  unpack<T>(xv, f);
#pragma unroll
  for (unsigned k = 0; k < 16 / sizeof(T); ++k) f[k] = gelu_for<T>(f[k] + b[k]);
  return pack<T>(f);
}
