// v1_vec16: 16-byte vector loads and stores (LDG.E.128 / STG.E.128), one vector per thread.
//
// What changed from v0: each thread moves 16 bytes per input (4 fp32 or 8 bf16) instead of
//   4 or 2, so a warp issues one 512-byte request per array instead of a 128- or 64-byte one,
//   and there are 4x (8x in bf16) fewer blocks to schedule.
// Alignment: a 16-byte load needs a 16-byte-aligned address, and torch views are not always
//   aligned (x[1:] of bf16 has ptr % 16 == 2, seeds/000 §4). The kernel checks at run time:
//   - all three pointers share the same misalignment: peel a scalar prologue up to the
//     next 16-byte boundary, vectors in the middle, a scalar tail;
//   - they do not: no vector can be aligned for all three; fall back to scalar access.
// Predicted: bf16 gains most (from 2-byte to 16-byte accesses): ~0.9x -> ~0.95x torch.add.
// Measured: BENCHMARKS.md, vector_add rows.
//
// @block 256
// @bytes_per_thread 16
#include <cuda_bf16.h>

template <typename T>
__device__ __forceinline__ T add1(T x, T y) { return x + y; }
template <>
__device__ __forceinline__ __nv_bfloat16 add1(__nv_bfloat16 x, __nv_bfloat16 y) { return __hadd(x, y); }

// Adds two 16-byte vectors of T lane by lane. bf16 pairs go through fp32 (one rounding).
template <typename T>
__device__ __forceinline__ uint4 add_vec(uint4 x, uint4 y) {
  uint4 r;
  if constexpr (sizeof(T) == 4) {
    const float* fx = reinterpret_cast<const float*>(&x);
    const float* fy = reinterpret_cast<const float*>(&y);
    float* fr = reinterpret_cast<float*>(&r);
#pragma unroll
    for (int k = 0; k < 4; ++k) fr[k] = fx[k] + fy[k];
  } else {
    const __nv_bfloat162* hx = reinterpret_cast<const __nv_bfloat162*>(&x);
    const __nv_bfloat162* hy = reinterpret_cast<const __nv_bfloat162*>(&y);
    __nv_bfloat162* hr = reinterpret_cast<__nv_bfloat162*>(&r);
#pragma unroll
    for (int k = 0; k < 4; ++k) hr[k] = __hadd2(hx[k], hy[k]);
  }
  return r;
}

// One vector (16 / sizeof(T) elements) per thread over the aligned middle; scalar ends.
template <typename T>
__device__ __forceinline__ void vec16_add(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
                                          unsigned long long n) {
  constexpr unsigned V = 16 / sizeof(T);
  const unsigned long long tid = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  const unsigned long long mis = reinterpret_cast<unsigned long long>(a) & 15;
  const bool coaligned = ((reinterpret_cast<unsigned long long>(b) & 15) == mis) &&
                         ((reinterpret_cast<unsigned long long>(c) & 15) == mis) && (mis % sizeof(T) == 0);
  if (!coaligned) {  // scalar fallback: each thread handles V consecutive-in-stride elements
#pragma unroll
    for (unsigned k = 0; k < V; ++k) {
      unsigned long long i = tid + k * (unsigned long long)gridDim.x * blockDim.x;
      if (i < n) c[i] = add1(a[i], b[i]);
    }
    return;
  }
  const unsigned long long head = mis ? min((unsigned long long)((16 - mis) / sizeof(T)), n) : 0;
  if (tid < head) c[tid] = add1(a[tid], b[tid]);
  const unsigned long long nvec = (n - head) / V;
  const uint4* va = reinterpret_cast<const uint4*>(a + head);
  const uint4* vb = reinterpret_cast<const uint4*>(b + head);
  uint4* vc = reinterpret_cast<uint4*>(c + head);
  if (tid < nvec) vc[tid] = add_vec<T>(va[tid], vb[tid]);
  const unsigned long long tail = head + nvec * V;  // < V elements remain
  if (tid < n - tail) c[tail + tid] = add1(a[tail + tid], b[tail + tid]);
}

extern "C" __global__ void vector_add_f32(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, unsigned long long n) {
  vec16_add<float>(a, b, c, n);
}

extern "C" __global__ void vector_add_bf16(const __nv_bfloat16* __restrict__ a,
                                           const __nv_bfloat16* __restrict__ b,
                                           __nv_bfloat16* __restrict__ c, unsigned long long n) {
  vec16_add<__nv_bfloat16>(a, b, c, n);
}
