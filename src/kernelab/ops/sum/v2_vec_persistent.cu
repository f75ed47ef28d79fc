// v2_vec_persistent: 16-byte loads, a grid sized to the GPU that strides over the array,
// one partial per block, then a one-block second pass (deterministic: no atomics).
//
// What changed from v1: (1) each load is 16 bytes (LDG.E.128: 4 fp32 or 8 bf16) instead of
//   4 or 2, and each thread issues 4 of them (64 B) before the first add; (2) the grid is
//   SMs x resident blocks (occupancy API) instead of n / 2048, and each thread loops with a
//   stride of the whole grid, so ~1000 partials are left instead of n / 2048, and one extra
//   launch of 1024 threads (`sum_finish`) sums them in a fixed order.
// Why: v1 spends 8 load instructions (16 in bf16) per 32 bytes; this spends 2 per 32 bytes,
//   so the SM's issue slots stop mattering and bf16 moves as many bytes per instruction as
//   fp32. Bytes in flight: 2048 threads x 64 B = 128 KB per SM, 5x the ~25 KB per SM that
//   4.8 TB/s x ~700 ns needs. Blocks never retire and relaunch, and v1's extra passes
//   (a 4-byte partial per 2048 elements, plus their launches) become one ~3 us launch.
// Alignment: x[k:] views start anywhere on an element boundary; the kernel peels a head of
//   (16 - ptr % 16) / itemsize elements, loads vectors from the next 16-byte boundary, and
//   adds the last n % V elements singly. One input, so there is always a common alignment.
// Accumulation: 4 fp32 accumulators per thread (one per vector in flight: independent add
//   chains, and at n = 2^28 each sums ~62 vectors), pairwise within a vector, then the block
//   tree, then the second pass: rounding ~ eps x sqrt(depth) relative to sum|x| (op.py).
// Predicted: at n = 2^28 (1 GiB fp32, 512 MiB bf16), >= 4.4 TB/s for both dtypes, above a
//   copy's 4.28 since nothing is written; the second launch adds ~2-3 us to ~240 us (1%).
//   At 2^18 (1 MiB) it is launch-bound: two launches, a few microseconds.
// Measured: BENCHMARKS.md, sum rows.
//
// @block 256
// @bytes_per_thread 16
// @grid persistent
// @unroll 4
// @access_bytes 16 (loads of x; the only stores are one fp32 partial per block)
// @finish sum_finish
// @finish_block 1024
// @deterministic yes: the grid depends only on the GPU and n, every thread adds in a fixed order, and the partials are summed by one block in a fixed order; no float atomics.
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef FINISH_BLOCK
#define FINISH_BLOCK 1024
#endif

#include "reduce.cuh"  // to_f32, sum16 (one 16-byte vector, pairwise), warp_sum, block_sum

template <typename T>
__device__ __forceinline__ void vec_sum(const T* __restrict__ x, float* __restrict__ partial,
                                        unsigned long long n) {
  constexpr unsigned V = 16 / sizeof(T);  // elements per vector
  constexpr unsigned U = UNROLL;          // vectors in flight per thread
  const unsigned long long tid = blockIdx.x * (unsigned long long)BLOCK + threadIdx.x;
  const unsigned long long stride = (unsigned long long)gridDim.x * BLOCK;

  // A T* is always T-aligned (the launch checks), so the misalignment is whole elements.
  const unsigned long long mis = (reinterpret_cast<unsigned long long>(x) & 15) / sizeof(T);
  const unsigned long long head = mis ? min((unsigned long long)(V - mis), n) : 0ull;

  float acc[U];
#pragma unroll
  for (unsigned u = 0; u < U; ++u) acc[u] = 0.0f;
  if (tid < head) acc[0] = to_f32(x[tid]);

  const unsigned long long nvec = (n - head) / V;
  const uint4* __restrict__ xv = reinterpret_cast<const uint4*>(x + head);
  unsigned long long i = tid;
  for (; i + (U - 1) * stride < nvec; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (unsigned u = 0; u < U; ++u) v[u] = __ldg(xv + i + u * stride);
#pragma unroll
    for (unsigned u = 0; u < U; ++u) acc[u] += sum16<T>(v[u]);
  }
  for (; i < nvec; i += stride) acc[0] += sum16<T>(__ldg(xv + i));  // fewer than U vectors left

  const unsigned long long tail = head + nvec * V;  // fewer than V elements remain
  if (tid < n - tail) acc[0] += to_f32(x[tail + tid]);

#pragma unroll
  for (unsigned w = 1; w < U; w *= 2) {
#pragma unroll
    for (unsigned u = 0; u + w < U; u += 2 * w) acc[u] += acc[u + w];
  }
  const float total = block_sum<BLOCK>(acc[0]);
  if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

extern "C" __global__ void __launch_bounds__(BLOCK) sum_f32(const float* __restrict__ x,
                                                            float* __restrict__ partial,
                                                            unsigned long long n) {
  vec_sum<float>(x, partial, n);
}

extern "C" __global__ void __launch_bounds__(BLOCK) sum_bf16(const __nv_bfloat16* __restrict__ x,
                                                             float* __restrict__ partial,
                                                             unsigned long long n) {
  vec_sum<__nv_bfloat16>(x, partial, n);
}

// Second pass: one block sums `count` partials. Thread t adds partials t, t + 1024, ... in
// order, then the block tree: the same order on every run.
extern "C" __global__ void __launch_bounds__(FINISH_BLOCK) sum_finish(const float* __restrict__ partial,
                                                                      float* __restrict__ out,
                                                                      unsigned int count) {
  float acc = 0.0f;
  for (unsigned i = threadIdx.x; i < count; i += FINISH_BLOCK) acc += partial[i];
  acc = block_sum<FINISH_BLOCK>(acc);
  if (threadIdx.x == 0) out[0] = acc;
}
