// v0_two_pass: the textbook kernel: one block per row, scalar loads, the two-pass variance.
//
// What changed: this is the baseline. 256 threads stride over the row three times: the
//   mean, then the variance as the mean of (x - mean)^2 (the numerically sound two-pass
//   form: no cancellation between E[x^2] and E[x]^2), then the write of
//   (x - mean) * rsqrt(var + eps) * weight + bias. Each sum goes through warp shuffles and
//   one __syncthreads. The sums are taken relative to a pivot near the row's values, the median
//   of its first three elements (../common/row_pivot.cuh; x[0] until session 24, which an outlier
//   in column 0 defeats): with |mean| >> std, e.g. x = 1000 + N(0, 1), an fp32 sum of 8192 values
//   near 1000 loses ~1e-4 of the mean, which is ~1e-4 of every output; x - pivot is exact and small.
// Why: it is the simplest sound kernel; every later variant is measured against it.
// Predicted: bytes first. 32768 x 8192 bf16 must move 2 * 2^28 * 2 B + 2 x 16 KiB = 1.07 GB:
//   251 us at the copy rate (4.28 TB/s). Passes 2 and 3 re-read a 16 KiB row just read (L1/L2
//   hits); what limits it is bytes in flight, 2-byte loads: ~16 KiB per SM, under the ~25-40 KiB
//   that HBM latency needs. Expect 0.5-0.7x the copy rate (360-500 us): about torch eager
//   (434 us), well behind torch.compile (253 us).
// Measured: BENCHMARKS.md, layernorm rows (generated from results JSON).
//
// @strategy rows
// @block 256
// @rows_per_block 1
#include "../softmax/rows.cuh"
#include "../common/row_pivot.cuh"

template <typename T>
__device__ __forceinline__ void layernorm_two_pass(const T* __restrict__ x, const T* __restrict__ w,
                                                   const T* __restrict__ b, T* __restrict__ y, int N, float eps) {
  __shared__ float partial_mean[256 / 32], partial_var[256 / 32];
  const T* xr = x + (size_t)blockIdx.x * N;
  T* yr = y + (size_t)blockIdx.x * N;
  const float pivot = kl::row_pivot(xr, N);
  float sum = 0.0f;
  for (int i = threadIdx.x; i < N; i += 256) sum += rows::to_float(xr[i]) - pivot;
  const float mean = rows::block_sum<256>(sum, partial_mean) / static_cast<float>(N);  // of x - pivot
  float sq = 0.0f;
  for (int i = threadIdx.x; i < N; i += 256) {
    const float d = rows::to_float(xr[i]) - pivot - mean;
    sq += d * d;
  }
  const float var = rows::block_sum<256>(sq, partial_var) / static_cast<float>(N);  // biased, like torch
  const float rstd = rsqrtf(var + eps);
  for (int i = threadIdx.x; i < N; i += 256) {
    const float d = rows::to_float(xr[i]) - pivot - mean;
    yr[i] = rows::from_float<T>(d * rstd * rows::to_float(w[i]) + rows::to_float(b[i]));
  }
}

extern "C" __global__ void __launch_bounds__(256)
layernorm_f32(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y,
              int M, int N, float eps) {
  layernorm_two_pass<float>(x, w, b, y, N, eps);
}
extern "C" __global__ void __launch_bounds__(256)
layernorm_bf16(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
               __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm_two_pass<__nv_bfloat16>(x, w, b, y, N, eps);
}
