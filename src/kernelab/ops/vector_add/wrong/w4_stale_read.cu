// w4_stale_read: accumulates into the output (c[i] += a[i] + b[i]) instead of assigning it.
//
// The bug: the kernel reads its output before writing it. On a freshly zeroed buffer the
//   answer is right, which is why this survives tests that allocate with torch.zeros.
// Caught by: poisoned outputs, two patterns. With NaN poison the result is NaN (a quiet NaN,
//   0x7FFFFFFF, not the poison's bits); with 0x7F7F7F7F poison it stays 3.39e38. The two runs
//   disagree on the same inputs, so the output depends on the buffer's previous contents.
//   compute-sanitizer's initcheck also reports the uninitialised read.
//
// @expect stale_read
// @block 256
// @elems_per_thread 1
#include <cuda_bf16.h>

extern "C" __global__ void vector_add_f32(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) c[i] += a[i] + b[i];
}

extern "C" __global__ void vector_add_bf16(const __nv_bfloat16* __restrict__ a,
                                           const __nv_bfloat16* __restrict__ b,
                                           __nv_bfloat16* __restrict__ c, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) c[i] = __hadd(c[i], __hadd(a[i], b[i]));
}
