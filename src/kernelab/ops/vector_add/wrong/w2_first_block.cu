// w2_first_block: only block 0 writes; every other block exits at once.
//
// The bug: `if (blockIdx.x == 0 && i < n)`, the shape of a kernel debugged on one block and
//   never switched back. A benchmark that times it sees a kernel ~n/256 times too fast.
// Caught by: poisoned outputs. Elements 256.. still hold the poison after both runs.
//
// @expect unwritten
// @block 256
// @elems_per_thread 1
#include <cuda_bf16.h>

extern "C" __global__ void vector_add_f32(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (blockIdx.x == 0 && i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void vector_add_bf16(const __nv_bfloat16* __restrict__ a,
                                           const __nv_bfloat16* __restrict__ b,
                                           __nv_bfloat16* __restrict__ c, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (blockIdx.x == 0 && i < n) c[i] = __hadd(a[i], b[i]);
}
