// reduce.cuh: the reduction pieces shared by sum v2 and v3 (they differ in the grid and the
// loads): element conversion, the pairwise sum of one 16-byte vector, warp and block sums.
#pragma once
#include <cuda_bf16.h>

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }

// The sum of one 16-byte vector, pairwise. bf16 -> fp32 is exact: the bf16 bits are the
// top half of the fp32 bits.
template <typename T>
__device__ __forceinline__ float sum16(uint4 v) {
  if constexpr (sizeof(T) == 4) {
    return (__uint_as_float(v.x) + __uint_as_float(v.y)) + (__uint_as_float(v.z) + __uint_as_float(v.w));
  } else {
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
    float p[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) p[k] = __uint_as_float(w[k] << 16) + __uint_as_float(w[k] & 0xffff0000u);
    return (p[0] + p[1]) + (p[2] + p[3]);
  }
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Sum over a block of THREADS threads; the result is valid in thread 0. Every thread of the
// block must call it (it has a barrier).
template <unsigned THREADS>
__device__ __forceinline__ float block_sum(float v) {
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps, at most 32 of them");
  constexpr unsigned WARPS = THREADS / 32;
  __shared__ float warp_sums[WARPS];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = 0.0f;
  if (warp == 0) v = warp_sum(lane < WARPS ? warp_sums[lane] : 0.0f);
  return v;
}
