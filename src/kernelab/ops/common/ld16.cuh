// ld16.cuh: the 16-byte global loads the memory-bound ops choose between with their load knobs
// (softmax v6's PK_LOAD, transpose v4/v7/v8's LD_HINT, sum's X_LOAD, softmax v2/v14's L2 keep), each
// one PTX instruction with its cache qualifiers. __ldg (ld.global.nc) and __ldcs (ld.global.cs) are
// CUDA's own and are used as they are. Included as "../common/ld16.cuh" (quoted includes resolve
// next to the including file; this folder has no op.py, so it is not an op).
#pragma once
#include <cuda_runtime.h>

namespace kl {

// ld.global: through L1 and L2 with no hint (not the non-coherent path).
__device__ __forceinline__ uint4 ld16_plain(const void* p) {
  uint4 v;
  asm("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// ld.global.nc.L1::no_allocate: the read-only path, no L1 line kept.
__device__ __forceinline__ uint4 ld16_nc_no_allocate(const void* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}

// ld.global.nc.L2::256B: the read-only path, L2 prefetching the 256-byte sector group.
__device__ __forceinline__ uint4 ld16_nc_l2_256(const void* p) {
  uint4 v;
  asm("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// ld.global.nc.L2::cache_hint with an L2 cache policy `pol` (createpolicy, below): the lines stay
// (evict_last) for a second read while other traffic streams through L2. volatile: as measured.
__device__ __forceinline__ uint4 ld16_nc_policy(const void* p, unsigned long long pol) {
  uint4 v;
  asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(pol));
  return v;
}

// createpolicy.fractional.L2::evict_last 1.0: every line the policy's loads bring stays last to go.
__device__ __forceinline__ unsigned long long l2_policy_evict_last() {
  unsigned long long p;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}

}  // namespace kl
