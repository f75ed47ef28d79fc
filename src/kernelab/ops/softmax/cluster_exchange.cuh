// cluster_exchange.cuh: the cluster primitives softmax v5, v7, v10 and v12 share (sm_90+):
// cluster rank and size, shared-memory addresses of this block and of a peer (mapa), mbarrier
// init / expect-tx arrival / parity wait, and push_pair: a (max, sum) pair stored into a peer
// block's shared memory by st.async, its 8 bytes counted on that block's mbarrier (complete_tx);
// exchange_pairs: a row's pairs pushed to every block of the cluster and merged.
// No cluster barrier and no fence: barrier.cluster.arrive.release makes ptxas emit MEMBAR.ALL.GPU,
// which waits for the thread's loads in flight (v5's prefetch, v7's bulk copies).
#pragma once
#include "softmax_common.cuh"

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
namespace softmax {
namespace cx {

__device__ __forceinline__ unsigned ctarank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned nctarank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ unsigned peer_addr(unsigned local, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}
__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
// One arrival that also says how many bytes the phase waits for (a bulk copy's or the peers' st.async).
__device__ __forceinline__ void mbar_expect(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
// One plain arrival (no bytes): softmax v12's SB_WARP_XCHG "every warp has read the stage".
__device__ __forceinline__ void mbar_arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) {
  const unsigned a = smem_addr(bar);
  unsigned done;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(a), "r"(parity)
        : "memory");
  } while (!done);
}
// The pair into `slot` of block `rank`'s shared memory; its 8 bytes complete on that block's `bar`.
__device__ __forceinline__ void push_pair(float2* slot, unsigned long long* bar, unsigned rank, MaxSum p) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(
                   peer_addr(smem_addr(slot), rank)),
               "f"(p.m), "f"(p.s), "r"(peer_addr(smem_addr(bar), rank))
               : "memory");
}

// After thread 0's mbarrier inits and their fence.mbarrier_init: every block of the cluster waits for
// every other's (C > 1; a relaxed arrive, no MEMBAR: the fence publishes the inits), or the block's
// threads for thread 0's (C = 1). Once, before a kernel's row loop.
template <int C>
__device__ __forceinline__ void sync_after_init() {
  if constexpr (C > 1) {
    asm volatile("barrier.cluster.arrive.relaxed;\n barrier.cluster.wait;" ::: "memory");
  } else {
    __syncthreads();
  }
}

// Row i's (max, sum) pair of this block (rank `rank` of C) for every block of the cluster, and the
// row's pair merged from all C: thread t < C pushes it into slot `rank` of block t's buffer b = i & 1,
// counted on that block's xbar[b]; every warp waits for its own C pairs (parity (i >> 1) & 1) and
// merges them in rank order, so every block gets the same bits. The caller proves that a buffer is
// read before it is pushed into again (softmax v5's proof: a block pushes row i's pair after row i's
// block barrier, which every thread reaches after reading row i - 1's pairs). C > 1; every thread,
// with its threadIdx.x (tid, int or unsigned) and lane as the caller holds them.
template <int C, typename Tid>
__device__ __forceinline__ MaxSum exchange_pairs(MaxSum all, float2 (*pairs)[C], unsigned long long* xbar,
                                                 unsigned rank, int i, Tid tid, int lane) {
  const int b = i & 1;
  if (tid == 0) mbar_expect(&xbar[b], static_cast<unsigned>(C * sizeof(float2)));
  if (tid < C) push_pair(&pairs[b][rank], &xbar[b], tid, all);
  mbar_wait(&xbar[b], (i >> 1) & 1);
  const float2 p = lane < C ? pairs[b][lane] : make_float2(-INFINITY, 0.0f);
  return warp_merge(MaxSum{p.x, p.y});
}

// Two pairs merged: the larger max, each sum rescaled to it (the pair algebra of softmax_common.cuh).
__device__ __forceinline__ MaxSum merge_pair(MaxSum a, float2 b) {
  const float m = fmaxf(a.m, b.x);
  return MaxSum{m, a.s * rescale(a.m, m) + b.y * rescale(b.x, m)};
}

// The two halves of exchange_warp_pairs, for a caller that does other work between them (softmax v17: the
// next row's sweep). push_warp_pair: thread 0 arms `bar` for the C * W pairs this block will receive, and
// lane t < C of each warp pushes the warp's pair `w` into slot rank * W + warp of block t's `slots`, counted
// on block t's `bar`. merge_warp_pairs: once `bar`'s phase of parity `parity` completes, the C * W pairs
// merged (lane l the pairs l, l + 32, ..., then across the warp: the same bits in every warp of every block).
// Which buffer and parity a row takes, and why a buffer is read before it is pushed into again, is the
// caller's proof.
template <int C, int W, typename Tid>
__device__ __forceinline__ void push_warp_pair(MaxSum w, float2* slots, unsigned long long* bar, unsigned rank,
                                               Tid tid, int lane) {
  const int warp = static_cast<int>(tid) >> 5;
  if (tid == 0) mbar_expect(bar, static_cast<unsigned>(C * W * sizeof(float2)));
  if (lane < C) push_pair(&slots[rank * W + warp], bar, lane, w);
}
template <int C, int W>
__device__ __forceinline__ MaxSum merge_warp_pairs(const float2* slots, unsigned long long* bar, unsigned parity,
                                                   int lane) {
  mbar_wait(bar, parity);
  MaxSum p{-INFINITY, 0.0f};
#pragma unroll
  for (int j = 0; j < (C * W + 31) / 32; ++j)
    if (lane + 32 * j < C * W) p = merge_pair(p, slots[lane + 32 * j]);
  return warp_merge(p);
}

// exchange_pairs with no block barrier before it (staged_rows.cuh's SB_WARP_XCHG): each of the block's W
// warps pushes its own pair `w` (warp-merged, in every lane) into slot rank * W + warp of every block's
// buffer b = i & 1 (lane t < C to block t), counted on that block's xbar[b] (C * W pairs); every warp waits
// for all C * W and merges them, lane l the pairs l, l + 32, ... in that order, then across the warp: every
// warp of every block gets the same bits. Buffer reuse: a warp pushes row i + 2's pair into a peer's buffer
// b after its own wait for row i + 1, which needs every peer warp's row i + 1 push, which each makes after
// reading row i's pairs (its merge used them). C > 1.
template <int C, int W, typename Tid>
__device__ __forceinline__ MaxSum exchange_warp_pairs(MaxSum w, float2 (*pairs)[C * W], unsigned long long* xbar,
                                                      unsigned rank, int i, Tid tid, int lane) {
  const int b = i & 1;
  push_warp_pair<C, W>(w, pairs[b], &xbar[b], rank, tid, lane);
  return merge_warp_pairs<C, W>(pairs[b], &xbar[b], (i >> 1) & 1, lane);
}

// A 32-bit value into `slot` of block `rank`'s shared memory; its 4 bytes complete on that block's
// `bar` (softmax v12's row index, from the cluster's leader to every block).
__device__ __forceinline__ void push_u32(unsigned* slot, unsigned long long* bar, unsigned rank, unsigned v) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(
                   peer_addr(smem_addr(slot), rank)),
               "r"(v), "r"(peer_addr(smem_addr(bar), rank))
               : "memory");
}

}  // namespace cx
}  // namespace softmax
#endif
