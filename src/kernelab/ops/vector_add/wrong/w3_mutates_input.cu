// w3_mutates_input: computes c right, then stores the sum into its input a as well.
//
// The bug: an input used as scratch space (here: the sum written back into a). The caller's
//   tensor changes under it; run twice, the second call adds b twice.
// Caught by: input snapshots. The bytes under every input are cloned before the call and
//   compared bitwise after it.
//
// @expect input_mutated
// @block 256
// @elems_per_thread 1
#include <cuda_bf16.h>

extern "C" __global__ void vector_add_f32(float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) {
    float s = a[i] + b[i];
    c[i] = s;
    a[i] = s;
  }
}

extern "C" __global__ void vector_add_bf16(__nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b,
                                           __nv_bfloat16* __restrict__ c, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) {
    __nv_bfloat16 s = __hadd(a[i], b[i]);
    c[i] = s;
    a[i] = s;
  }
}
