// fast_exp.cuh: exp(x - sh) in one FFMA + one EX2 an element, exactly as (x - sh) first, and the max of
// raw 16-byte vectors in a quarter of the instructions (bf16), for the wide-row loops whose time follows
// their instruction stream (staged_rows.cuh's SB_FAST_EXP, v13_packed_regs.cu's PR_FAST_EXP).
//
// exp(x - sh) = 2^(x LOG2E - sh LOG2E). c = fl(sh LOG2E) rounds by c_lo = sh LOG2E - c, which one more
// fma gives exactly (the error of a product is representable); so 2^fl(x LOG2E - c) (one FFMA: x LOG2E
// is exact inside it) is the wanted exp times 2^c_lo, the same factor for every x of that shift. A loop
// multiplies its sum (or its outputs) by `fix` = 2^-c_lo once and loses nothing. Shifts past 2^20 (and
// +inf / NaN, where fast_ok fails) take exp_shifted's (x - sh) * LOG2E: there |c_lo| could reach
// ulp(c) / 2 >= 1/8 and 2^(x LOG2E - c) could overflow before the fix.
#pragma once
#include "softmax_common.cuh"

namespace softmax {
namespace fexp {

// max.bf16x2: the larger of each half (NaN loses to a number, as fmaxf), exact.
__device__ __forceinline__ unsigned max_bf16x2(unsigned a, unsigned b) {
  unsigned r;
  asm("max.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}

// 16 bytes of -inf in T (bf16 pairs 0xff80, fp32 0xff800000): padding that never raises a max and exps to 0.
template <typename T>
__device__ __forceinline__ uint4 neg_inf_vec() {
  constexpr unsigned w = rows::Traits<T>::V == 8 ? 0xff80ff80u : 0xff800000u;
  return make_uint4(w, w, w, w);
}

// max(m, every value of raw[0..K)): bf16 on the packed pairs (ptxas makes three-input VHMNMX of them),
// fp32 in four independent chains.
template <typename T, int K>
__device__ __forceinline__ float raw_max(const uint4 (&raw)[K], float m) {
  if constexpr (rows::Traits<T>::V == 8) {
    unsigned p[4] = {raw[0].x, raw[0].y, raw[0].z, raw[0].w};
#pragma unroll
    for (int k = 1; k < K; ++k) {
      p[0] = max_bf16x2(p[0], raw[k].x);
      p[1] = max_bf16x2(p[1], raw[k].y);
      p[2] = max_bf16x2(p[2], raw[k].z);
      p[3] = max_bf16x2(p[3], raw[k].w);
    }
    const unsigned q = max_bf16x2(max_bf16x2(p[0], p[1]), max_bf16x2(p[2], p[3]));
    return fmaxf(fmaxf(m, __uint_as_float(q << 16)), fmaxf(__uint_as_float(q & 0xffff0000u), -INFINITY));
  } else {
    float mc[4] = {m, -INFINITY, -INFINITY, -INFINITY};
#pragma unroll
    for (int k = 0; k < K; ++k) {
      mc[0] = fmaxf(mc[0], __uint_as_float(raw[k].x));
      mc[1] = fmaxf(mc[1], __uint_as_float(raw[k].y));
      mc[2] = fmaxf(mc[2], __uint_as_float(raw[k].z));
      mc[3] = fmaxf(mc[3], __uint_as_float(raw[k].w));
    }
    return fmaxf(fmaxf(mc[0], mc[1]), fmaxf(mc[2], mc[3]));
  }
}

// Whether `sh` (a shift_of) takes the FFMA form: |sh| < 2^20, so |c| < 2^21 and |c_lo| <= 1/16.
__device__ __forceinline__ bool fast_ok(float sh) { return fabsf(sh) < 1048576.0f; }

// The FFMA form's constants for shift sh: c = fl(sh LOG2E) and fix = 2^-c_lo.
struct Base {
  float c, fix;
};
__device__ __forceinline__ Base base_of(float sh) {
  const float c = sh * LOG2E;
  return Base{c, ex2(-fmaf(sh, LOG2E, -c))};  // c_lo = sh LOG2E - c, exact
}

// 2^(x LOG2E - c): exp(x - sh) / fix.
__device__ __forceinline__ float exp_base(float x, const Base& b) { return ex2(fmaf(x, LOG2E, -b.c)); }

}  // namespace fexp
}  // namespace softmax
