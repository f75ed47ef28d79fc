// oneshot.cuh: the chunk sum sum v3, v4, v5 and v6 share (chunk c: BLOCK x VECS consecutive
// 16-byte vectors; v3-v5 sum chunk blockIdx.x, v6 the chunks its blocks take from a counter), and
// v3 / v5's pass and finish (PDL = true: v5's programmatic dependent launch hooks, which v6 uses
// too). The including file includes oneshot_knobs.cuh (BLOCK threads per block, VECS 16-byte
// vectors per thread, X_LOAD; v4 defines its own) and reduce.cuh first.
#pragma once
#include "../common/ld16.cuh"  // kl::ld16_* (the X_LOAD forms)

// Programmatic dependent launch (sm_90+; compiled out below, where a finish is a plain launch).
// launch_dependents: this block allows the grid launched after it with pdl=True to start; the
// dependent starts once every block of this grid has executed it or exited. wait: returns once the
// grids this one depends on have completed and their memory operations are visible (at once when
// the launch was not programmatic).
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ uint4 load16(const uint4* p) {
#if X_LOAD == 0
  return __ldg(p);
#elif X_LOAD == 1
  return kl::ld16_plain(p);
#elif X_LOAD == 3
  return kl::ld16_nc_no_allocate(p);
#else
#error "X_LOAD must be 0 (ld.global.nc), 1 (ld.global) or 3 (ld.global.nc.L1::no_allocate)"
#endif
}

// This thread's share of chunk `chunk`, before the block reduction: the chunk is BLOCK x VECS
// consecutive 16-byte vectors; chunk 0 also adds the unaligned head and the tail. The sum depends
// only on (x, n, chunk), not on which block computes it (v6 relies on that for its bits).
template <typename T>
__device__ __forceinline__ float chunk_sum(const T* __restrict__ x, unsigned long long n, unsigned chunk) {
  constexpr unsigned V = 16 / sizeof(T);  // elements per vector
  constexpr unsigned U = VECS;            // vectors per thread, all in flight at once
  const unsigned tid = threadIdx.x;

  // A T* is always T-aligned (the launch checks), so the misalignment is whole elements: chunk 0
  // adds the head (before the first 16-byte boundary) and the tail (after the last whole vector).
  const unsigned long long mis = (reinterpret_cast<unsigned long long>(x) & 15) / sizeof(T);
  const unsigned long long head = mis ? min((unsigned long long)(V - mis), n) : 0ull;
  const unsigned long long nvec = (n - head) / V;
  const uint4* __restrict__ xv = reinterpret_cast<const uint4*>(x + head);

  // The chunk: BLOCK x U consecutive vectors; load u of the block covers BLOCK consecutive
  // vectors (a warp reads 512 contiguous bytes per load instruction). Every chunk but the last
  // takes the unpredicated path: one base pointer and U constant offsets, so all U loads issue
  // back to back (with a 64-bit bound check per load, ptxas issued 4 of 8, then waited on the
  // first before computing the next addresses; sm_90 SASS).
  const unsigned long long first = (unsigned long long)chunk * (BLOCK * U);
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
  if (chunk == 0) {
    const unsigned long long tail0 = head + nvec * V;  // fewer than V elements remain after it
    if (tid < head) total += to_f32(x[tid]);
    if (tid < n - tail0) total += to_f32(x[tail0 + tid]);
  }
  return total;
}

// The pass: block b writes the sum of its chunk to partial[b]. PDL (v5, sm_90+): every block first
// lets the finish launch (it is scheduled once all blocks have started, i.e. with the last wave).
template <typename T, bool PDL>
__device__ __forceinline__ void oneshot_sum(const T* __restrict__ x, float* __restrict__ partial,
                                            unsigned long long n) {
  if constexpr (PDL) pdl_launch_dependents();
  const unsigned tid = threadIdx.x;
  float total = chunk_sum<T>(x, n, blockIdx.x);
  total = block_sum<BLOCK>(total);
  if (tid == 0) partial[blockIdx.x] = total;
}

// The finish: one block of FB threads sums `count` partials (torch.empty's allocation is 16-byte
// aligned, so they are read as float4). Thread t adds float4s t, t + FB, ... in 4 independent
// accumulators (4 loads in flight), then the remaining partials, then the block tree: the same
// order on every run. PDL (v5, sm_90+): first wait until the pass has completed and its partials
// are visible (griddepcontrol.wait; without a programmatic launch it returns at once).
template <unsigned FB, bool PDL>
__device__ __forceinline__ void finish_sum(const float* __restrict__ partial, float* __restrict__ out,
                                           unsigned int count) {
  constexpr unsigned U = 4;
  if constexpr (PDL) pdl_wait();
  const unsigned tid = threadIdx.x;
  const float4* __restrict__ p4 = reinterpret_cast<const float4*>(partial);
  const unsigned n4 = count / 4;
  float acc[U] = {0.0f, 0.0f, 0.0f, 0.0f};
  unsigned i = tid;
  for (; i + (U - 1) * FB < n4; i += U * FB) {
    float4 a[U];
#pragma unroll
    for (unsigned u = 0; u < U; ++u) a[u] = p4[i + u * FB];
#pragma unroll
    for (unsigned u = 0; u < U; ++u) acc[u] += (a[u].x + a[u].y) + (a[u].z + a[u].w);
  }
  for (; i < n4; i += FB) {
    const float4 a = p4[i];
    acc[0] += (a.x + a.y) + (a.z + a.w);
  }
  if (4 * n4 + tid < count) acc[1] += partial[4 * n4 + tid];  // the last count % 4 partials
  float total = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  total = block_sum<FB>(total);
  if (tid == 0) out[0] = total;
}
