// row_pivot.cuh: the point layernorm's kernels centre a row's sums on, the median of x[0], x[1]
// and x[2] (of the first n where the row is shorter). Included as "../common/row_pivot.cuh".
//
// Why a pivot: an fp32 sum of x over a row of 1000 + N(0, 1) loses ~1e-4 of the mean, and
// E[x^2] - E[x]^2 cancels; sums of d = x - pivot keep both when the pivot sits near the row's values.
// Why the median of three: every kernel used x[0] until session 24, and a row whose first element
// is an outlier (x[0] = 1000 among N(0, 1), an LLM's "massive activation" in channel 0) puts every d
// ~1000 from its mean: the centring rounds at ulp(1000) for each element and a per-thread
// Q - S mean cancels by (pivot - mean)^2 / var. Measured on the H200 at x[0] = 1000 (session 23, fp32,
// atol 1e-5): v0-v4 max errors 2e-5-9e-5, v5 4e-4-6e-2. Emulated on the CPU in fp32 (v0's order,
// scripts/pivot_emul.py, session 24): the median of three brings those rows to the plain rows'
// errors (0.01-0.02 of the tolerance); the mean of the first 4 or 8 elements with a compensated centre
// reaches 0.4-0.75 of it. The median fails where two of the three are outliers (as x[0] fails for one).
// Cost: two more loads of the same 32-byte sector (L1 hits after the first) and 4 FMNMX a thread a row.
#pragma once
#include "../rmsnorm/ld_scalar_if.cuh"
#include "../softmax/rows.cuh"

namespace kl {

// The middle one of a, b and c (NaNs: fminf/fmaxf drop them; a NaN row's sums are NaN anyway).
__device__ __forceinline__ float median3(float a, float b, float c) {
  return fmaxf(fminf(a, b), fminf(fmaxf(a, b), c));
}

// Plain loads (the simple kernels). n >= 1; n < 3 repeats x[0], so the median is x[0].
template <typename T>
__device__ __forceinline__ float row_pivot(const T* __restrict__ xr, int n) {
  const float a = rows::to_float(xr[0]);
  const float b = n > 1 ? rows::to_float(xr[1]) : a;
  const float c = n > 2 ? rows::to_float(xr[2]) : a;
  return median3(a, b, c);
}

// ld_scalar_if's predicated loads (asm volatile: they stay in program order with a kernel's vector
// loads, see ld_scalar_if.cuh); 0.0f when !pred. Layernorm v5's PASS1_PEEL 0 knob build.
template <typename T>
__device__ __forceinline__ float row_pivot_if(const T* xr, int n, bool pred) {
  const float a = normld::ld_scalar_if<T>(xr, pred);
  const float b = normld::ld_scalar_if<T>(xr + 1, pred && n > 1);
  const float c = normld::ld_scalar_if<T>(xr + 2, pred && n > 2);
  return median3(a, n > 1 ? b : a, n > 2 ? c : a);
}

// One load a lane: lanes 0-2 of each warp load x[0..2] (one register in flight, as a single pivot
// load), three shuffles hand them to every lane. For kernels whose warps each serve one row, all 32
// lanes present (layernorm v5: with row_pivot_if's three registers at its 40-register cap, ptxas
// took the median before issuing pass 1's later vectors, a second DRAM round trip a row: sm_90,
// analysis.load_order, session 24). pred must be the same across the warp.
// In two halves for a kernel that issues the load early and takes the median late (layernorm v5:
// after pass 1's loop): row_pivot_lane, then row_pivot_shfl.
template <typename T>
__device__ __forceinline__ float row_pivot_lane(const T* xr, int n, bool pred) {
  // Lane k < 3 loads x[min(k, n - 1)]: in short rows the last element twice, still one of the row's.
  const int k = min(min(static_cast<int>(threadIdx.x & 31), 2), n - 1);
  return normld::ld_scalar_if<T>(xr + k, pred && (threadIdx.x & 31) < 3);
}
__device__ __forceinline__ float row_pivot_shfl(float mine) {
  return median3(__shfl_sync(0xffffffffu, mine, 0), __shfl_sync(0xffffffffu, mine, 1),
                 __shfl_sync(0xffffffffu, mine, 2));
}
template <typename T>
__device__ __forceinline__ float row_pivot_warp(const T* xr, int n, bool pred) {
  return row_pivot_shfl(row_pivot_lane<T>(xr, n, pred));
}

}  // namespace kl
