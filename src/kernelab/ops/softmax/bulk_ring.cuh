// bulk_ring.cuh: what softmax v7-v11 share about a row split over C blocks and staged in shared
// memory: a block's share of a row (its 16-byte vectors), the sweep that reads a staged share with
// 4 LDS.128 in flight per step, the consumers' block merge (named barrier 1), the 1-D bulk copy
// that stages it and the stage_share that issues it (sm_90+), and the launch's dynamic
// shared-memory size (the ring's).
#pragma once
#include "softmax_common.cuh"
#include "cluster_exchange.cuh"  // cx::smem_addr

namespace softmax {
namespace ring {

// A block's share of a row: vectors [v0, v0 + cnt) of the row's 16-byte vectors (rows.cuh's
// head / vectors / tail split), cv = ceil(nvec / C) per rank (the last ranks may get fewer or none).
struct Chunk {
  rows::Geometry geo;
  int v0, cnt;
};
template <typename T, int C>
__device__ __forceinline__ Chunk chunk_of(const T* xr, int n, int rank) {
  const rows::Geometry geo = rows::geometry(xr, n);
  const int cv = (geo.nvec + C - 1) / C;
  const int v0 = rank * cv;
  return Chunk{geo, v0, max(0, min(cv, geo.nvec - v0))};
}

// f(raw vector, j) for j = threadIdx.x, + THREADS, ... < cnt, 4 LDS.128 in flight per step.
template <int THREADS, typename F>
__device__ __forceinline__ void sweep(const uint4* stage, int cnt, F&& f) {
  constexpr int U = 4;
  int j = threadIdx.x;
  for (; j + (U - 1) * THREADS < cnt; j += U * THREADS) {
    uint4 r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) r[u] = stage[j + u * THREADS];
#pragma unroll
    for (int u = 0; u < U; ++u) f(r[u], j + u * THREADS);
  }
  for (; j < cnt; j += THREADS) f(stage[j], j);
}

// softmax_common.cuh's block_merge over THREADS consumer threads only: named barrier 1 (v8's producer
// warp and v9's exchange warp never join it). pm, ps: THREADS / 32 floats each, not reused before
// the next barrier.
template <int THREADS>
__device__ __forceinline__ MaxSum consumer_merge(MaxSum p, float* pm, float* ps) {
  p = warp_merge(p);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) {
    pm[warp] = p.m;
    ps[warp] = p.s;
  }
  asm volatile("bar.sync 1, %0;" ::"n"(THREADS) : "memory");
  return warp_merge(lane < THREADS / 32 ? MaxSum{pm[lane], ps[lane]} : MaxSum{-INFINITY, 0.0f});
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned dynamic_smem_size() {
  unsigned r;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
  return r;
}
// `bytes` (a multiple of 16) from global `src` (16-byte aligned) into this block's shared memory at
// `dst`; completion is counted on `bar` (this block's mbarrier; .shared::cluster with a CTA address).
__device__ __forceinline__ void bulk_copy_in(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   cx::smem_addr(dst)),
               "l"(src), "r"(bytes), "r"(cx::smem_addr(bar))
               : "memory");
}
// Thread 0: the block's share of row `row` (rank `rank` of C) into stage `st` of `ring` (stage_vecs
// vectors a stage), completing on full[st]. v9, v10 and v11 stage rows with it (v7 with an L2 hint).
template <typename T, int C>
__device__ __forceinline__ void stage_share(uint4* ring, const T* x, int row, int n, int rank, int st, int stage_vecs,
                                            unsigned long long* full) {
  constexpr int V = rows::Traits<T>::V;
  const T* xr = x + (size_t)row * n;
  const Chunk ch = chunk_of<T, C>(xr, n, rank);
  const unsigned bytes = static_cast<unsigned>(ch.cnt) * 16u;
  cx::mbar_expect(&full[st], bytes);  // 0 bytes: the phase completes on this arrival
  if (bytes) bulk_copy_in(ring + (size_t)st * stage_vecs, xr + ch.geo.head + (size_t)ch.v0 * V, bytes, &full[st]);
}
// The same with an L2 cache policy (createpolicy) on the read.
__device__ __forceinline__ void bulk_copy_in_hint(void* dst, const void* src, unsigned bytes, unsigned long long* bar,
                                                  unsigned long long pol) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(
          cx::smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(cx::smem_addr(bar)), "l"(pol)
      : "memory");
}
#endif

}  // namespace ring
}  // namespace softmax
