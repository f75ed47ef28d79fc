// w6_side_stream: an honest kernel, launched by w6_side_stream.py on a private stream that is never joined.
//
// The cheat (host side, in the .py): the work goes to another stream, so events recorded on
//   the caller's stream time nothing, and the kernel does not wait for the caller's earlier
//   work (its inputs). A check that synchronises the whole device before reading the output
//   sees the right answer.
// Caught by: the stream-order phase. The launch stream is kept busy (a spin kernel), then
//   the fresh inputs are copied in and the outputs poisoned on it, then the candidate is
//   called: the side-stream kernel runs at once, on the old inputs, and its output is then
//   overwritten by the poison, so the output read after a device-wide sync is wrong.
//
// @expect async_work
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
