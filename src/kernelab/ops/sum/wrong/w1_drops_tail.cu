// w1_drops_tail: v2_vec_persistent without its scalar tail: the last n % V elements (V = 4 fp32,
// 8 bf16, counted from the first 16-byte boundary) are never added. Right whenever
// (n - head) % V == 0, e.g. n = 256 aligned; wrong on 257, primes and most misaligned views,
// by about sqrt(tail) / sqrt(n) with the op's N(0, 1/n) inputs: ~1e-3 at n = 2^20 + 3, 100x atol.
// @expect mismatch
//
// @block 256
// @bytes_per_thread 16
// @grid persistent
// @finish sum_finish
// @finish_block 1024
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef FINISH_BLOCK
#define FINISH_BLOCK 1024
#endif

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ float sum16(uint4 v) {
  if constexpr (sizeof(T) == 4) {
    return (__uint_as_float(v.x) + __uint_as_float(v.y)) + (__uint_as_float(v.z) + __uint_as_float(v.w));
  } else {
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; ++k) s += __uint_as_float(w[k] << 16) + __uint_as_float(w[k] & 0xffff0000u);
    return s;
  }
}

template <unsigned THREADS>
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float warp_sums[THREADS / 32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = 0.0f;
  if (warp == 0) {
    v = lane < THREADS / 32 ? warp_sums[lane] : 0.0f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  }
  return v;
}

template <typename T>
__device__ __forceinline__ void vec_sum(const T* __restrict__ x, float* __restrict__ partial, unsigned long long n) {
  constexpr unsigned V = 16 / sizeof(T);
  const unsigned long long tid = blockIdx.x * (unsigned long long)BLOCK + threadIdx.x;
  const unsigned long long stride = (unsigned long long)gridDim.x * BLOCK;
  const unsigned long long mis = (reinterpret_cast<unsigned long long>(x) & 15) / sizeof(T);
  const unsigned long long head = mis ? min((unsigned long long)(V - mis), n) : 0ull;
  float acc = tid < head ? to_f32(x[tid]) : 0.0f;
  const unsigned long long nvec = (n - head) / V;
  const uint4* xv = reinterpret_cast<const uint4*>(x + head);
  for (unsigned long long i = tid; i < nvec; i += stride) acc += sum16<T>(__ldg(xv + i));
  // BUG (deliberate): the n - head - nvec * V elements after the last whole vector are skipped.
  acc = block_sum<BLOCK>(acc);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

extern "C" __global__ void __launch_bounds__(BLOCK) sum_f32(const float* __restrict__ x, float* __restrict__ partial,
                                                            unsigned long long n) {
  vec_sum<float>(x, partial, n);
}

extern "C" __global__ void __launch_bounds__(BLOCK) sum_bf16(const __nv_bfloat16* __restrict__ x,
                                                             float* __restrict__ partial, unsigned long long n) {
  vec_sum<__nv_bfloat16>(x, partial, n);
}

extern "C" __global__ void __launch_bounds__(FINISH_BLOCK) sum_finish(const float* __restrict__ partial,
                                                                      float* __restrict__ out, unsigned int count) {
  float acc = 0.0f;
  for (unsigned i = threadIdx.x; i < count; i += FINISH_BLOCK) acc += partial[i];
  acc = block_sum<FINISH_BLOCK>(acc);
  if (threadIdx.x == 0) out[0] = acc;
}
