// w9_illegal_address: stores through a pointer 2^40 elements (4 TiB of fp32) past c: an illegal address.
//
// The fault: the index of a corrupt base offset lands in unmapped memory. The kernel faults;
//   the CUDA error is sticky, so every later CUDA call in the process fails the same way.
// Caught by: the isolation worker. The check runs in a child process, which reports the
//   error text as a "crash" outcome; the parent goes on to the next candidate.
//
// @expect crash
// @block 256
// @elems_per_thread 1
#include <cuda_bf16.h>

extern "C" __global__ void vector_add_f32(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) c[i + (1ull << 40)] = a[i] + b[i];
}

extern "C" __global__ void vector_add_bf16(const __nv_bfloat16* __restrict__ a,
                                           const __nv_bfloat16* __restrict__ b,
                                           __nv_bfloat16* __restrict__ c, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) c[i + (1ull << 40)] = __hadd(a[i], b[i]);
}
