// v2_persistent: a persistent grid-stride loop over 16-byte vectors, 4 vectors in flight per thread.
//
// What changed from v1: the grid is sized from the GPU (SMs x resident blocks, from the
//   occupancy API) instead of the data, and each thread loops over the array with a stride
//   of the whole grid, issuing the loads of 4 vectors (64 bytes per input) before the first
//   add. Blocks never retire and relaunch, and each thread keeps 128 bytes of loads in flight.
// Why: bytes in flight ~ bandwidth x latency (seeds/000 §9): 4.8 TB/s x ~700 ns ~ 3.4 MB, about
//   25 KB per SM; 2048 threads x 128 B = 256 KB per SM is ample even if latency doubles.
// Alignment: the same run-time check as v1 (co-aligned prologue, or scalar fallback).
// Predicted: at n = 2^28 within 3% of torch.add (ANCHORS: 4.35 TB/s fp32 and bf16), since both
//   are then at the achievable HBM bandwidth; at 2^20 (12 MiB, launch-bound) no better than v1.
// Measured: BENCHMARKS.md, vector_add rows.
//
// @block 256
// @bytes_per_thread 16
// @grid persistent
#include <cuda_bf16.h>

template <typename T>
__device__ __forceinline__ T add1(T x, T y) { return x + y; }
template <>
__device__ __forceinline__ __nv_bfloat16 add1(__nv_bfloat16 x, __nv_bfloat16 y) { return __hadd(x, y); }

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

template <typename T>
__device__ __forceinline__ void persistent_add(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
                                               unsigned long long n) {
  constexpr unsigned V = 16 / sizeof(T);  // elements per vector
  constexpr unsigned U = 4;               // vectors in flight per thread
  const unsigned long long tid = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  const unsigned long long mis = reinterpret_cast<unsigned long long>(a) & 15;
  const bool coaligned = ((reinterpret_cast<unsigned long long>(b) & 15) == mis) &&
                         ((reinterpret_cast<unsigned long long>(c) & 15) == mis) && (mis % sizeof(T) == 0);
  if (!coaligned) {
    for (unsigned long long i = tid; i < n; i += stride) c[i] = add1(a[i], b[i]);
    return;
  }
  const unsigned long long head = mis ? min((unsigned long long)((16 - mis) / sizeof(T)), n) : 0;
  if (tid < head) c[tid] = add1(a[tid], b[tid]);
  const unsigned long long nvec = (n - head) / V;
  const uint4* va = reinterpret_cast<const uint4*>(a + head);
  const uint4* vb = reinterpret_cast<const uint4*>(b + head);
  uint4* vc = reinterpret_cast<uint4*>(c + head);

  unsigned long long i = tid;
  for (; i + (U - 1) * stride < nvec; i += U * stride) {
    uint4 x[U], y[U];
#pragma unroll
    for (unsigned u = 0; u < U; ++u) { x[u] = va[i + u * stride]; y[u] = vb[i + u * stride]; }
#pragma unroll
    for (unsigned u = 0; u < U; ++u) vc[i + u * stride] = add_vec<T>(x[u], y[u]);
  }
  for (; i < nvec; i += stride) vc[i] = add_vec<T>(va[i], vb[i]);

  const unsigned long long tail = head + nvec * V;
  if (tid < n - tail) c[tail + tid] = add1(a[tail + tid], b[tail + tid]);
}

extern "C" __global__ void vector_add_f32(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, unsigned long long n) {
  persistent_add<float>(a, b, c, n);
}

extern "C" __global__ void vector_add_bf16(const __nv_bfloat16* __restrict__ a,
                                           const __nv_bfloat16* __restrict__ b,
                                           __nv_bfloat16* __restrict__ c, unsigned long long n) {
  persistent_add<__nv_bfloat16>(a, b, c, n);
}
