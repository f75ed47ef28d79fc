// w10_infinite_loop: spins on a "ready" flag that nothing ever sets: the kernel never finishes.
//
// The hang: a broken producer/consumer handshake. Every thread waits, through a volatile
//   read (so the compiler must reload it), for the first word of a to become 0xFFFFFFFF, a
//   NaN bit pattern that no input distribution produces. The process blocks in its next
//   synchronisation forever.
// Caught by: the isolation worker's watchdog, which kills the child at the timeout and
//   reports a "hang" outcome with the last step the child had reached.
//
// @expect hang
// @block 256
// @elems_per_thread 1
#include <cuda_bf16.h>

__device__ __forceinline__ void wait_for_flag(const void* p) {
  const volatile unsigned int* flag = reinterpret_cast<const volatile unsigned int*>(p);
  while (*flag != 0xFFFFFFFFu) {
  }
}

extern "C" __global__ void vector_add_f32(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  wait_for_flag(a);
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void vector_add_bf16(const __nv_bfloat16* __restrict__ a,
                                           const __nv_bfloat16* __restrict__ b,
                                           __nv_bfloat16* __restrict__ c, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  wait_for_flag(a);
  if (i < n) c[i] = __hadd(a[i], b[i]);
}
