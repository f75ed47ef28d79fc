// ln_affine.cuh: layernorm's output y = (x - mean) * rstd * w + b for sums centred on a pivot, in three
// operations an element: d = x - pivot, t = d * rstd + c with c = -(mean - pivot) * rstd once a row, then
// t * w + b. The plain form ((x - pivot) - m) * rstd * w + b (m = mean - pivot) takes four (FADD, FADD,
// FMUL, FFMA); layernorm bf16 is issue-bound (ncu, session 23: v4 84% of issue slots), so an element's
// operation is ~1/8 of pass 2's and 32 a thread a row in bf16 (session 25).
// Accuracy: c rounds once, to ~6e-8 of |m| rstd, and m (the mean about a pivot that is one of the row's
// values: ../common/row_pivot.cuh) is a few standard deviations at most: ~1e-7 of a unit output, as the
// plain form's rounding of d - m. (Folding the pivot instead, x - (pivot + mean), rounds ulp(pivot):
// layernorm v5's LN5_FOLD, measured wrong on rows of 1000 + N(0, 1).)
// Knob LN_SCALE_FOLD (default 1; 0: the plain four-operation form, for sweeps).
#pragma once

#ifndef LN_SCALE_FOLD
#define LN_SCALE_FOLD 1
#endif

namespace kl {

struct LnScale {
  float m;     // the mean about the pivot
  float rstd;
  float c;     // -m * rstd
};

__device__ __forceinline__ LnScale ln_scale(float m, float rstd) { return LnScale{m, rstd, -m * rstd}; }

// y for d = x - pivot.
__device__ __forceinline__ float ln_affine(float d, const LnScale& s, float w, float b) {
#if LN_SCALE_FOLD
  return fmaf(fmaf(d, s.rstd, s.c), w, b);
#else
  return fmaf((d - s.m) * s.rstd, w, b);
#endif
}

}  // namespace kl
