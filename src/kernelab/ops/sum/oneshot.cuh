// oneshot.cuh: the one-shot chunk sum sum v3 and v4 share. The including file defines BLOCK
// (threads per block), VECS (16-byte vectors per thread) and X_LOAD, and includes reduce.cuh.
#pragma once

__device__ __forceinline__ uint4 load16(const uint4* p) {
#if X_LOAD == 0
  return __ldg(p);
#elif X_LOAD == 1
  uint4 r;
  asm("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  return r;
#elif X_LOAD == 3
  uint4 r;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p));
  return r;
#else
#error "X_LOAD must be 0 (ld.global.nc), 1 (ld.global) or 3 (ld.global.nc.L1::no_allocate)"
#endif
}

// This thread's share of its block's chunk, before the block reduction: the block takes BLOCK x
// VECS consecutive 16-byte vectors; block 0 also adds the unaligned head and the tail.
template <typename T>
__device__ __forceinline__ float chunk_sum(const T* __restrict__ x, unsigned long long n) {
  constexpr unsigned V = 16 / sizeof(T);  // elements per vector
  constexpr unsigned U = VECS;            // vectors per thread, all in flight at once
  const unsigned tid = threadIdx.x;

  // A T* is always T-aligned (the launch checks), so the misalignment is whole elements: block 0
  // adds the head (before the first 16-byte boundary) and the tail (after the last whole vector).
  const unsigned long long mis = (reinterpret_cast<unsigned long long>(x) & 15) / sizeof(T);
  const unsigned long long head = mis ? min((unsigned long long)(V - mis), n) : 0ull;
  const unsigned long long nvec = (n - head) / V;
  const uint4* __restrict__ xv = reinterpret_cast<const uint4*>(x + head);

  // This block's chunk: BLOCK x U consecutive vectors; load u of the block covers BLOCK
  // consecutive vectors (a warp reads 512 contiguous bytes per load instruction). Every block
  // but the last takes the unpredicated path: one base pointer and U constant offsets, so all U
  // loads issue back to back (with a 64-bit bound check per load, ptxas issued 4 of 8, then
  // waited on the first before computing the next addresses; sm_90 SASS).
  const unsigned long long first = (unsigned long long)blockIdx.x * (BLOCK * U);
  const uint4* __restrict__ p = xv + first + tid;
  uint4 v[U];
  if (first + BLOCK * U <= nvec) {
#pragma unroll
    for (unsigned u = 0; u < U; ++u) v[u] = load16(p + u * BLOCK);
  } else {
#pragma unroll
    for (unsigned u = 0; u < U; ++u)  // zero bits add 0.0f
      v[u] = first + u * BLOCK + tid < nvec ? load16(p + u * BLOCK) : make_uint4(0u, 0u, 0u, 0u);
  }
  float acc[U];
#pragma unroll
  for (unsigned u = 0; u < U; ++u) acc[u] = sum16<T>(v[u]);
#pragma unroll
  for (unsigned s = 1; s < U; s *= 2)
#pragma unroll
    for (unsigned u = 0; u + s < U; u += 2 * s) acc[u] += acc[u + s];
  float total = acc[0];
  if (blockIdx.x == 0) {
    const unsigned long long tail0 = head + nvec * V;  // fewer than V elements remain after it
    if (tid < head) total += to_f32(x[tid]);
    if (tid < n - tail0) total += to_f32(x[tail0 + tid]);
  }
  return total;
}
