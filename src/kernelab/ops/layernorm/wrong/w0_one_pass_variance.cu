// w0_one_pass_variance: the variance as E[x^2] - E[x]^2 from one pass of plain fp32 sums (no
// pivot). Algebraically right, numerically not: at x = 1000 + N(0, 1) (the shift=1000 test
// cases), E[x^2] ~ 1e6 is summed with an ulp of 64-1024 and the variance, ~1, comes out
// wrong by tens of percent (clamped at 0 so it stays finite). On zero-mean data it passes.
// The checker's "precision" reason means lower-precision arithmetic (bf16/fp16/tf32 math);
// this is an unstable formula in full fp32, with errors far beyond that: a mismatch.
//
// @expect mismatch
// @dtypes float32
// @strategy rows
// @block 256
// @rows_per_block 1
#include "../../softmax/rows.cuh"

extern "C" __global__ void __launch_bounds__(256)
layernorm_f32(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y,
              int M, int N, float eps) {
  __shared__ float partial_sum[8], partial_sq[8];
  const float* xr = x + (size_t)blockIdx.x * N;
  float* yr = y + (size_t)blockIdx.x * N;
  float s = 0.0f, sq = 0.0f;
  for (int i = threadIdx.x; i < N; i += 256) {
    s += xr[i];
    sq += xr[i] * xr[i];
  }
  const float mean = rows::block_sum<256>(s, partial_sum) / static_cast<float>(N);
  const float mean_sq = rows::block_sum<256>(sq, partial_sq) / static_cast<float>(N);
  const float var = fmaxf(mean_sq - mean * mean, 0.0f);  // BUG: catastrophic cancellation when |mean| >> std
  const float rstd = rsqrtf(var + eps);
  for (int i = threadIdx.x; i < N; i += 256) yr[i] = (xr[i] - mean) * rstd * w[i] + b[i];
}
