// w1_bias_broadcast: a correct two-pass layernorm that adds bias[0] to every column instead
// of bias[col] (an indexing slip that a bias of all zeros, or N = 1, would hide). Every test
// case with N >= 2 fails: a mismatch.
//
// @expect mismatch
// @strategy rows
// @block 256
// @rows_per_block 1
#include "../../softmax/rows.cuh"

template <typename T>
__device__ __forceinline__ void layernorm_bias0(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                                T* __restrict__ y, int N, float eps) {
  __shared__ float partial_mean[8], partial_var[8];
  const T* xr = x + (size_t)blockIdx.x * N;
  T* yr = y + (size_t)blockIdx.x * N;
  const float pivot = rows::to_float(xr[0]);
  float s = 0.0f;
  for (int i = threadIdx.x; i < N; i += 256) s += rows::to_float(xr[i]) - pivot;
  const float mean = rows::block_sum<256>(s, partial_mean) / static_cast<float>(N);
  float sq = 0.0f;
  for (int i = threadIdx.x; i < N; i += 256) {
    const float d = rows::to_float(xr[i]) - pivot - mean;
    sq += d * d;
  }
  const float rstd = rsqrtf(rows::block_sum<256>(sq, partial_var) / static_cast<float>(N) + eps);
  for (int i = threadIdx.x; i < N; i += 256) {
    const float d = rows::to_float(xr[i]) - pivot - mean;
    yr[i] = rows::from_float<T>(d * rstd * rows::to_float(w[i]) + rows::to_float(b[0]));  // BUG: b[i]
  }
}

extern "C" __global__ void __launch_bounds__(256)
layernorm_f32(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y,
              int M, int N, float eps) {
  layernorm_bias0<float>(x, w, b, y, N, eps);
}
extern "C" __global__ void __launch_bounds__(256)
layernorm_bf16(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
               __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm_bias0<__nv_bfloat16>(x, w, b, y, N, eps);
}
