// A vectorised bf16 add WITHOUT the alignment check (seeds/000 §4.2): what v1_vec16 of the
// vector_add op guards against.
//
// add_vec16_unchecked: takes bf16 pointers and reinterprets them as uint4 (8 bf16, 16 bytes).
//   A 16-byte load needs a 16-byte-aligned address; x[1:] of a bf16 tensor starts 2 bytes into
//   an aligned allocation, so the load faults (misaligned address) or, on hardware that
//   rounds the address down, reads the wrong elements. Run only in a child process.
// add_vec16_typed: the same kernel with uint4 in its signature. kernelab's launch reads the
//   signature and refuses a tensor whose data_ptr is not 16-byte aligned before the launch.
#include <cuda_bf16.h>

__device__ __forceinline__ uint4 add8(uint4 x, uint4 y) {
  uint4 r;
  const __nv_bfloat162* hx = reinterpret_cast<const __nv_bfloat162*>(&x);
  const __nv_bfloat162* hy = reinterpret_cast<const __nv_bfloat162*>(&y);
  __nv_bfloat162* hr = reinterpret_cast<__nv_bfloat162*>(&r);
#pragma unroll
  for (int k = 0; k < 4; ++k) hr[k] = __hadd2(hx[k], hy[k]);
  return r;
}

extern "C" __global__ void add_vec16_unchecked(const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b,
                                               __nv_bfloat16* __restrict__ c, unsigned long long n) {
  const unsigned long long v = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;  // vector index
  if ((v + 1) * 8 <= n) {
    const uint4 x = reinterpret_cast<const uint4*>(a)[v];
    const uint4 y = reinterpret_cast<const uint4*>(b)[v];
    reinterpret_cast<uint4*>(c)[v] = add8(x, y);
  }
}

extern "C" __global__ void add_vec16_typed(const uint4* __restrict__ a, const uint4* __restrict__ b,
                                           uint4* __restrict__ c, unsigned long long nvec) {
  const unsigned long long v = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (v < nvec) c[v] = add8(a[v], b[v]);
}
