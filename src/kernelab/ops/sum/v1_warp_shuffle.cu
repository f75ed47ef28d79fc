// v1_warp_shuffle: warp shuffles instead of the shared-memory tree, and 8 elements per thread.
//
// What changed from v0: (1) each thread first sums 8 elements in registers (coalesced: the
//   k-th load of every thread in a block covers one contiguous 1 KB (fp32) span); (2) the
//   block reduces with __shfl_down_sync inside each warp (5 register exchanges, no shared
//   memory, no barrier), then one shared-memory slot per warp, one barrier, and warp 0
//   shuffles the 8 warp sums.
// Why: v0 paid 8 barriers and 8 shared-memory round trips per 4 bytes; this pays 1 barrier
//   per 32 bytes (fp32) and issues the 8 independent loads before the first add, so each
//   thread keeps 32 B (fp32) in flight instead of 4: 2048 x 32 B = 64 KB per SM, above the
//   ~25 KB per SM that 4.8 TB/s x ~700 ns needs. Partials shrink 8x (one per 2048 elements).
// Predicted: near the read bandwidth in fp32, ~3.6-4.0 TB/s at 2^28 (scalar 4-byte loads:
//   8 load instructions per 32 bytes, more instructions than v2); bf16 lower, ~2.5-3 TB/s
//   (2-byte loads: 16 bytes per thread in flight, still ~32 KB per SM).
// Measured: BENCHMARKS.md, sum rows.
//
// @block 256
// @elems_per_thread 8
// @finish recursive
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ELEMS
#define ELEMS 8
#endif

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;  // lane 0 holds the warp's sum
}

template <typename T>
__device__ __forceinline__ void shuffle_sum(const T* __restrict__ x, float* __restrict__ partial,
                                            unsigned long long n) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, at most 32 of them");
  constexpr unsigned WARPS = BLOCK / 32;
  __shared__ float warp_sums[WARPS];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned long long base = blockIdx.x * (unsigned long long)(BLOCK * ELEMS) + threadIdx.x;

  float v[ELEMS];
#pragma unroll
  for (unsigned k = 0; k < ELEMS; ++k) {  // all loads first, then the adds
    const unsigned long long i = base + k * (unsigned long long)BLOCK;
    v[k] = i < n ? to_f32(x[i]) : 0.0f;
  }
  // Pairwise in registers: ((v0 + v1) + (v2 + v3)) + ... for ELEMS = 8.
#pragma unroll
  for (unsigned w = 1; w < ELEMS; w *= 2) {
#pragma unroll
    for (unsigned k = 0; k + w < ELEMS; k += 2 * w) v[k] += v[k + w];
  }
  float acc = v[0];

  acc = warp_sum(acc);  // every lane of every warp takes part: no lane has returned
  if (lane == 0) warp_sums[warp] = acc;
  __syncthreads();
  if (warp == 0) {  // a whole warp enters, so the full mask below is right
    acc = warp_sum(lane < WARPS ? warp_sums[lane] : 0.0f);
    if (lane == 0) partial[blockIdx.x] = acc;
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK) sum_f32(const float* __restrict__ x,
                                                            float* __restrict__ partial,
                                                            unsigned long long n) {
  shuffle_sum<float>(x, partial, n);
}

extern "C" __global__ void __launch_bounds__(BLOCK) sum_bf16(const __nv_bfloat16* __restrict__ x,
                                                             float* __restrict__ partial,
                                                             unsigned long long n) {
  shuffle_sum<__nv_bfloat16>(x, partial, n);
}
