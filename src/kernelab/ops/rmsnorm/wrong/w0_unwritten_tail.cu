// w0_unwritten_tail: a kernel written for "N is a multiple of 4" (as if every row were whole
// float4 vectors): both passes stop at N / 4 * 4, so the last N % 4 columns are neither summed
// nor written. Test cases with N % 4 != 0 (N = 1, 7, 4097, 16385, 40001) keep the checker's
// poison there: unwritten. (N = 1024 or 8192 hide the bug.)
//
// @expect unwritten
// @strategy rows
// @block 256
// @rows_per_block 1
#include "../../softmax/rows.cuh"

template <typename T>
__device__ __forceinline__ void rmsnorm_whole_fours(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y,
                                                    int N, float eps) {
  __shared__ float partial[8];
  const T* xr = x + (size_t)blockIdx.x * N;
  T* yr = y + (size_t)blockIdx.x * N;
  const int n4 = N / 4 * 4;  // BUG: the remainder N % 4 is dropped
  float ss = 0.0f;
  for (int i = threadIdx.x; i < n4; i += 256) ss += rows::to_float(xr[i]) * rows::to_float(xr[i]);
  ss = rows::block_sum<256>(ss, partial);
  const float rstd = rsqrtf(ss / static_cast<float>(N) + eps);
  for (int i = threadIdx.x; i < n4; i += 256) yr[i] = rows::from_float<T>(rows::to_float(xr[i]) * rstd * rows::to_float(w[i]));
}

extern "C" __global__ void __launch_bounds__(256)
rmsnorm_f32(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm_whole_fours<float>(x, w, y, N, eps);
}
extern "C" __global__ void __launch_bounds__(256)
rmsnorm_bf16(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y,
             int M, int N, float eps) {
  rmsnorm_whole_fours<__nv_bfloat16>(x, w, y, N, eps);
}
