// w5_past_end: two elements per thread, bounds-checked on the first only: writes c[n] when n is odd.
//
// The bug: `if (2 * t < n) { c[2t] = ...; c[2t + 1] = ...; }`, the fence-post error of a
//   kernel that handles pairs (or vectors) and forgets the odd tail. Every element of c is
//   right; the extra store lands one element past the end, in whatever lives there (it also
//   reads a[n] and b[n]).
// Caught by: guard bands (the check reports element offset n, one past the end) and
//   compute-sanitizer memcheck (an invalid __global__ write just after the allocation).
//
// @expect out_of_bounds
// @block 256
// @elems_per_thread 2
#include <cuda_bf16.h>

extern "C" __global__ void vector_add_f32(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, unsigned long long n) {
  unsigned long long i = 2 * (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x);
  if (i < n) {
    c[i] = a[i] + b[i];
    c[i + 1] = a[i + 1] + b[i + 1];
  }
}

extern "C" __global__ void vector_add_bf16(const __nv_bfloat16* __restrict__ a,
                                           const __nv_bfloat16* __restrict__ b,
                                           __nv_bfloat16* __restrict__ c, unsigned long long n) {
  unsigned long long i = 2 * (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x);
  if (i < n) {
    c[i] = __hadd(a[i], b[i]);
    c[i + 1] = __hadd(a[i + 1], b[i + 1]);
  }
}
