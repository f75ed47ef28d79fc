// w0_unwritten_tail: a correct warp-per-row softmax whose store loop stops one element short
// (`i < N - 1`): the last column of every row is never written and keeps whatever y held.
// The checker poisons outputs with NaN before each run, so it must report the column as unwritten.
//
// @expect unwritten
// @strategy rows
// @block 256
// @rows_per_block 8
#include "../rows.cuh"

template <typename T>
__device__ __forceinline__ void softmax_short_store(const T* __restrict__ x, T* __restrict__ y, int M, int N) {
  const int lane = threadIdx.x & 31;
  const int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (row >= M) return;
  const T* xr = x + (size_t)row * N;
  T* yr = y + (size_t)row * N;
  float m = -INFINITY;
  for (int i = lane; i < N; i += 32) m = fmaxf(m, rows::to_float(xr[i]));
  m = rows::warp_max(m);
  float s = 0.0f;
  for (int i = lane; i < N; i += 32) s += exp2f((rows::to_float(xr[i]) - m) * rows::LOG2E);
  s = rows::warp_sum(s);
  for (int i = lane; i < N - 1; i += 32)  // BUG: should be i < N
    yr[i] = rows::from_float<T>(exp2f((rows::to_float(xr[i]) - m) * rows::LOG2E) / s);
}

extern "C" __global__ void __launch_bounds__(256)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax_short_store<float>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax_short_store<__nv_bfloat16>(x, y, M, N); }
