// w1_tail_unwritten: the guard rounds n down to whole blocks, so the last n % 256 elements are never written.
//
// The bug: `if (i < n / 256 * 256)` (a "fast path for full blocks" whose tail loop was never
//   written). On n = 256k it is right; on n = 100003 the last 163 elements keep whatever the
//   output buffer held, which on a zeroed or reused buffer can even look right.
// Caught by: poisoned outputs. Those elements still hold the NaN poison after run A and the
//   0x7F7F7F7F poison after run B.
//
// @expect unwritten
// @block 256
// @elems_per_thread 1
#include <cuda_bf16.h>

extern "C" __global__ void vector_add_f32(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n / 256 * 256) c[i] = a[i] + b[i];
}

extern "C" __global__ void vector_add_bf16(const __nv_bfloat16* __restrict__ a,
                                           const __nv_bfloat16* __restrict__ b,
                                           __nv_bfloat16* __restrict__ c, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n / 256 * 256) c[i] = __hadd(a[i], b[i]);
}
