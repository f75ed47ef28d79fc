// softmax_common.cuh: the (max, sum) algebra every softmax variant reduces with.
//
// softmax(x)_i = exp(x_i - M) / S with M = max_j x_j and S = sum_j exp(x_j - M). A part of
// the row is summarised by a pair (m, s): its own max, and the sum of exp(x - m) over it.
// Two pairs merge exactly:   m = max(m1, m2),  s = s1 * exp(m1 - m) + s2 * exp(m2 - m),
// so threads, warps, blocks and cluster blocks each summarise their part and merge pairs;
// no part needs the global max before it computes its exponentials (one pass, one exp per
// element plus one per merge).
//
// Special values follow torch.softmax: an all -inf row gives NaN (0 / 0), a +inf or NaN
// entry makes its row NaN, -inf entries give 0. Parts that hold only -inf (or padding)
// have m = -inf; `shift_of` and `rescale` keep them from turning into NaN by themselves
// (exp(-inf - (-inf)) would), so only a row that is -inf everywhere ends as 0 / 0.
#pragma once
#include "rows.cuh"

namespace softmax {

using rows::LOG2E;

struct MaxSum {
  float m;  // max over the part (-inf if the part is empty or all -inf)
  float s;  // sum over the part of exp(x - shift_of(m))
};

// 2^x in one MUFU.EX2 (ex2.approx.ftz: relative error ~2^-22). exp2f() adds a range check and
// two multiplies per call to get denormal results right; here a result under 2^-126 becomes 0,
// an absolute error below 1.2e-38 (softmax outputs are in [0, 1]). ex2(-inf) = 0, ex2(NaN) = NaN.
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// The value to subtract before exponentiating: m, except 0 for an empty/-inf part.
__device__ __forceinline__ float shift_of(float m) { return m == -INFINITY ? 0.0f : m; }

// exp(m_from - m_to) with m_to >= m_from: how a sum taken relative to m_from counts relative to m_to.
__device__ __forceinline__ float rescale(float m_from, float m_to) {
  return m_from == -INFINITY ? 0.0f : ex2((m_from - m_to) * LOG2E);
}

// exp(x - shift). (x - shift) first, then the scale: fma(x, LOG2E, -shift * LOG2E) would
// leave the rounding error of shift * LOG2E, about 1e22 when |x| ~ 1e30, inside exp2.
__device__ __forceinline__ float exp_shifted(float x, float shift) { return ex2((x - shift) * LOG2E); }

// Pair over the warp, in every lane: the max first (shuffles only), then each lane rescales
// its sum to that max (one exp) and the sums are added. Merging pairs step by step would
// cost two exps per step (10 per lane). A xor butterfly leaves the same bits in every lane
// (each step adds the same two values in either order).
__device__ __forceinline__ MaxSum warp_merge(MaxSum p) {
  const float m = rows::warp_max(p.m);
  return MaxSum{m, rows::warp_sum(p.s * rescale(p.m, m))};
}

// Pair over the block, returned to every thread, after one barrier (see rows::block_sum):
// each warp publishes its pair, then every warp merges the THREADS / 32 pairs itself.
// pm, ps: THREADS / 32 floats of shared memory each, used by this call only.
template <int THREADS>
__device__ __forceinline__ MaxSum block_merge(MaxSum p, float* pm, float* ps) {
  p = warp_merge(p);
  if constexpr (THREADS == 32) {
    return p;
  } else {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
      pm[warp] = p.m;
      ps[warp] = p.s;
    }
    __syncthreads();
    return warp_merge(lane < THREADS / 32 ? MaxSum{pm[lane], ps[lane]} : MaxSum{-INFINITY, 0.0f});
  }
}

// Replaces the slice's values by exp(x - m_thread) and returns the thread's pair.
// Padding is -inf, which gives exp = 0 and never raises the max.
template <typename SliceT>
__device__ __forceinline__ MaxSum exp_in_place(SliceT& sl) {
  float m = fmaxf(sl.h, sl.t);
#pragma unroll
  for (int k = 0; k < SliceT::K; ++k)
#pragma unroll
    for (int i = 0; i < SliceT::V; ++i) m = fmaxf(m, sl.v[k][i]);
  const float sh = shift_of(m);
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < SliceT::K; ++k)
#pragma unroll
    for (int i = 0; i < SliceT::V; ++i) {
      sl.v[k][i] = exp_shifted(sl.v[k][i], sh);
      s += sl.v[k][i];
    }
  sl.h = exp_shifted(sl.h, sh);
  sl.t = exp_shifted(sl.t, sh);
  return MaxSum{m, s + sl.h + sl.t};
}

// Writes y = e * r, r = exp(m_thread - M) / S: the thread's exps, rescaled to the row's max.
template <typename T, typename SliceT>
__device__ __forceinline__ void store_scaled(const SliceT& sl, T* yrow, const rows::Geometry& geo, int g, bool vec_out,
                                             MaxSum mine, MaxSum row) {
  const float r = rescale(mine.m, row.m) / row.s;
  sl.store(
      yrow, geo, g, vec_out,
      [&](float* o, int) {
#pragma unroll
        for (int i = 0; i < SliceT::V; ++i) o[i] *= r;
      },
      [&](float e, int) { return e * r; });
}

}  // namespace softmax
