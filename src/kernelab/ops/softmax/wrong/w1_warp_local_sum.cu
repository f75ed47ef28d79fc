// w1_warp_local_sum: a block-per-row softmax that reduces the max over the whole block but
// normalises each element by its own warp's partial sum: the cross-warp step of the sum was
// forgotten. Rows held by one warp (N <= 32) come out right; wider rows (every test case with
// N >= 33) are too large by about the number of warps holding data: a mismatch.
// (A wrong max would go unnoticed: softmax is shift-invariant, only overflow would show it.)
//
// @expect mismatch
// @strategy rows
// @block 256
// @rows_per_block 1
#include "../rows.cuh"

template <typename T>
__device__ __forceinline__ void softmax_warp_sum_only(const T* __restrict__ x, T* __restrict__ y, int N) {
  __shared__ float partial_max[8];
  const T* xr = x + (size_t)blockIdx.x * N;
  T* yr = y + (size_t)blockIdx.x * N;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < N; i += 256) m = fmaxf(m, rows::to_float(xr[i]));
  m = rows::warp_max(m);
  if ((threadIdx.x & 31) == 0) partial_max[threadIdx.x >> 5] = m;
  __syncthreads();
  m = rows::warp_max((threadIdx.x & 31) < 8 ? partial_max[threadIdx.x & 31] : -INFINITY);
  float s = 0.0f;
  for (int i = threadIdx.x; i < N; i += 256) s += exp2f((rows::to_float(xr[i]) - m) * rows::LOG2E);
  s = rows::warp_sum(s);  // BUG: this warp's share only; needs a block-wide sum
  for (int i = threadIdx.x; i < N; i += 256) yr[i] = rows::from_float<T>(exp2f((rows::to_float(xr[i]) - m) * rows::LOG2E) / s);
}

extern "C" __global__ void __launch_bounds__(256)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax_warp_sum_only<float>(x, y, N); }
extern "C" __global__ void __launch_bounds__(256)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax_warp_sum_only<__nv_bfloat16>(x, y, N); }
