// w7_cached_by_pointer: an honest kernel, but w7_cached_by_pointer.py returns a result cached by pointer.
//
// The cheat (host side, in the .py): the first call with given (a, b, c) addresses computes
//   and keeps a copy of c; every later call with the same addresses copies the cached result
//   back without reading a or b. A benchmark that reuses its buffers (they all do) times a
//   memcpy, and a check that allocates new buffers, which the caching allocator hands out at
//   the same addresses, gets the old answer.
// Caught by: the repeat phase (fresh inputs in the same buffers must change the output) and
//   by comparing a wrong output with the references of earlier calls.
//
// @expect cached_result
// @block 256
// @elems_per_thread 1
#include <cuda_bf16.h>

extern "C" __global__ void vector_add_f32(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void vector_add_bf16(const __nv_bfloat16* __restrict__ a,
                                           const __nv_bfloat16* __restrict__ b,
                                           __nv_bfloat16* __restrict__ c, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) c[i] = __hadd(a[i], b[i]);
}
