// v0_two_pass: the textbook kernel: one block per row, scalar loads, two passes over the row.
//
// What changed: this is the baseline. 256 threads stride over the row: pass 1 sums x^2
//   (each thread its share, then warp shuffles and one __syncthreads to add the 8 warps'
//   partials), pass 2 reads the row again and writes x * rsqrt(mean(x^2) + eps) * weight.
//   Accesses are one element (4 B fp32, 2 B bf16) per thread per instruction.
// Why: it is the simplest correct kernel; every later variant is measured against it.
// Predicted: bytes first. 32768 x 8192 bf16 must move 2 * 2^28 * 2 B + 16 KiB = 1.07 GB, 251 us
//   at the copy rate (4.28 TB/s). Pass 2 re-reads a 16 KiB row just read, so it hits L1/L2 and
//   HBM traffic stays near the minimum; what limits it is bytes in flight: 2048 threads per SM
//   x 2 B x ~4 loads the compiler overlaps = 16 KiB per SM, under the ~25-40 KiB that HBM
//   latency needs. Expect 0.5-0.7x the copy rate (360-500 us): about torch eager (404 us),
//   well behind torch.compile (253 us).
// Measured: BENCHMARKS.md, rmsnorm rows (generated from results JSON).
//
// @strategy rows
// @block 256
// @rows_per_block 1
#include "../softmax/rows.cuh"

template <typename T>
__device__ __forceinline__ void rmsnorm_two_pass(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y,
                                                 int N, float eps) {
  __shared__ float partial[256 / 32];
  const T* xr = x + (size_t)blockIdx.x * N;
  T* yr = y + (size_t)blockIdx.x * N;
  float ss = 0.0f;
  for (int i = threadIdx.x; i < N; i += 256) {
    const float v = rows::to_float(xr[i]);
    ss += v * v;
  }
  ss = rows::block_sum<256>(ss, partial);
  const float rstd = rsqrtf(ss / static_cast<float>(N) + eps);
  for (int i = threadIdx.x; i < N; i += 256)
    yr[i] = rows::from_float<T>(rows::to_float(xr[i]) * rstd * rows::to_float(w[i]));
}

extern "C" __global__ void __launch_bounds__(256)
rmsnorm_f32(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm_two_pass<float>(x, w, y, N, eps);
}
extern "C" __global__ void __launch_bounds__(256)
rmsnorm_bf16(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y,
             int M, int N, float eps) {
  rmsnorm_two_pass<__nv_bfloat16>(x, w, y, N, eps);
}
