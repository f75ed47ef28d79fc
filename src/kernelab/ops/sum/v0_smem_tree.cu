// v0_smem_tree: the textbook reduction. One element per thread into shared memory, then a
// tree: at each step the first half of the active threads adds the second half's values,
// with __syncthreads() between steps (log2(256) = 8 steps). Thread 0 writes the block's
// partial; the launch runs the same kernel on the partials until one value is left.
//
// What changed: nothing; this is the baseline. It already avoids the two classic traps:
//   sequential addressing (thread t adds t + stride, so active threads stay contiguous and
//   whole warps retire; no bank conflicts), and a barrier after every step (no implicit
//   warp-synchronous tail, which Volta's independent thread scheduling broke, seeds/000).
// Why it is slow: every 4 bytes loaded (2 in bf16) costs a thread a store to shared
//   memory, 8 barriers and ~8 dependent shared-memory round trips, and each warp has
//   a single 128-byte load in its life. Blocks spend most of their time in the tree, not
//   waiting on memory, so few bytes are in flight: 2048 threads x 4 B = 8 KB per SM,
//   under a third of the ~25 KB per SM that 4.8 TB/s x ~700 ns of latency asks for.
// Predicted: Little's law with 8 resident blocks per SM: 132 x 8 KB in flight / ~0.8 us
//   (latency plus the tree) ~ 1.0-1.4 TB/s at n = 2^28 fp32, a quarter to a third of the
//   target; bf16 half that in TB/s (2 bytes per thread per round). The extra passes move
//   4 bytes per 256 elements (0.4%).
// Measured: BENCHMARKS.md, sum rows (generated from results JSON).
//
// @block 256
// @elems_per_thread 1
// @finish recursive
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 256
#endif

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ void tree_sum(const T* __restrict__ x, float* __restrict__ partial,
                                         unsigned long long n) {
  static_assert((BLOCK & (BLOCK - 1)) == 0, "the tree halves the block: BLOCK must be a power of two");
  __shared__ float s[BLOCK];
  const unsigned t = threadIdx.x;
  const unsigned long long i = blockIdx.x * (unsigned long long)BLOCK + t;
  s[t] = i < n ? to_f32(x[i]) : 0.0f;
  __syncthreads();
  for (unsigned stride = BLOCK / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();  // every thread reaches it: the `if` above does not return
  }
  if (t == 0) partial[blockIdx.x] = s[0];
}

extern "C" __global__ void __launch_bounds__(BLOCK) sum_f32(const float* __restrict__ x,
                                                            float* __restrict__ partial,
                                                            unsigned long long n) {
  tree_sum<float>(x, partial, n);
}

extern "C" __global__ void __launch_bounds__(BLOCK) sum_bf16(const __nv_bfloat16* __restrict__ x,
                                                             float* __restrict__ partial,
                                                             unsigned long long n) {
  tree_sum<__nv_bfloat16>(x, partial, n);
}
