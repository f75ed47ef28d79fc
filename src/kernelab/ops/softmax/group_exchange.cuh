// group_exchange.cuh: what softmax v9_grid_groups and v11_group_regs share to exchange a row's
// (max, sum) pairs between the C ordinary blocks of a group (no hardware cluster) through global
// memory: a pair store, a gpu-scope release add on the group's counter, an acquire load to spin
// on it, and a relaxed load that reads a peer's pair from L2. The workspace (op.py's
// grid_groups_workspace): per group a counter on its own 128-byte line (COUNTER_STRIDE unsigned,
// zeroed before every launch) and 2 x C float2 slots (row parity; written before read).
#pragma once
#include "softmax_common.cuh"

namespace softmax {
namespace gx {

constexpr int COUNTER_STRIDE = 32;  // unsigned: one 128-byte line per group's counter (op.py: GG_COUNTER_STRIDE)

__device__ __forceinline__ void red_release_add(unsigned* p, unsigned v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
// L2, not a stale L1 line: the same slot was read two rows ago.
__device__ __forceinline__ float2 ld_relaxed_pair(const float2* p) {
  float2 v;
  asm volatile("ld.relaxed.gpu.global.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_pair(float2* p, float2 v) {
  asm volatile("st.global.v2.f32 [%0], {%1, %2};" ::"l"(p), "f"(v.x), "f"(v.y) : "memory");
}

// Lanes < C of the calling warp: wait until `counter` reaches `target` (every peer's pair of the
// row is stored), then read pair `lane` of `pairs`; other lanes get the merge's identity.
template <int C>
__device__ __forceinline__ float2 wait_pairs(const unsigned* counter, unsigned target, const float2* pairs, int lane) {
  float2 p = make_float2(-INFINITY, 0.0f);
  if (lane < C) {
    unsigned ns = 32;
    while (ld_acquire(counter) < target) {
      __nanosleep(ns);
      ns = min(ns * 2, 256u);  // the exchange is normally complete by now: backoff only bounds L2 polls
    }
    p = ld_relaxed_pair(pairs + lane);  // ordered after this lane's own acquire
  }
  return p;
}

}  // namespace gx
}  // namespace softmax
