// w2_bf16_result: v1_warp_shuffle that returns the sum rounded to bf16, as torch.sum(x) does for
// a bf16 x when the caller forgets dtype=torch.float32: the accumulation is fp32, but the
// answer keeps 8 significant bits, ~2^-9 relative error against the op's 1e-5 tolerance.
// Right to bf16 accuracy, wrong at fp32's: a precision failure (exact only when the sum is
// itself a bf16 value, e.g. n = 0 or one bf16 element).
// @expect precision
//
// @block 256
// @elems_per_thread 8
// @finish recursive
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ELEMS
#define ELEMS 8
#endif

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

template <typename T>
__device__ __forceinline__ void shuffle_sum(const T* __restrict__ x, float* __restrict__ partial, unsigned long long n) {
  constexpr unsigned WARPS = BLOCK / 32;
  __shared__ float warp_sums[WARPS];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned long long base = blockIdx.x * (unsigned long long)(BLOCK * ELEMS) + threadIdx.x;
  float acc = 0.0f;
#pragma unroll
  for (unsigned k = 0; k < ELEMS; ++k) {
    const unsigned long long i = base + k * (unsigned long long)BLOCK;
    if (i < n) acc += to_f32(x[i]);
  }
  acc = warp_sum(acc);
  if (lane == 0) warp_sums[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = warp_sum(lane < WARPS ? warp_sums[lane] : 0.0f);
    // BUG (deliberate): the last pass (one block) hands back a bf16 value.
    if (gridDim.x == 1) acc = __bfloat162float(__float2bfloat16_rn(acc));
    if (lane == 0) partial[blockIdx.x] = acc;
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK) sum_f32(const float* __restrict__ x, float* __restrict__ partial,
                                                            unsigned long long n) {
  shuffle_sum<float>(x, partial, n);
}

extern "C" __global__ void __launch_bounds__(BLOCK) sum_bf16(const __nv_bfloat16* __restrict__ x,
                                                             float* __restrict__ partial, unsigned long long n) {
  shuffle_sum<__nv_bfloat16>(x, partial, n);
}
