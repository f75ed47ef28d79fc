// rows.cuh: the row machinery that softmax, rmsnorm and layernorm share (all three reduce
// each row of an [M, N] tensor and rewrite it).
//
// A row of N elements starts wherever row * N lands, so its 16-byte alignment changes from
// row to row (N = 1000 bf16 rows are 2000 B apart) and with the view's offset (x[1:]). Each
// row is therefore split, by the address of x's row, into
//     head: 0..V-1 scalars up to the first 16-byte boundary,
//     nvec: 16-byte vectors of V = 16 / sizeof(T) elements (4 fp32, 8 bf16),
//     tail: 0..V-1 scalars after the last whole vector,
// and only the vectors use 16-byte accesses (LDG.E.128 / STG.E.128). Another array indexed
// like x (y, weight, bias) is 16-byte aligned at the same places only if it has the same
// address mod 16; each such array gets a run-time flag and falls back to scalar accesses.
//
// P threads cooperate on a row; thread g (0 <= g < P) owns vectors j = k * P + g for
// k < K, head scalar g if g < head and tail scalar g if g < tail. Consecutive threads own
// consecutive vectors, so a warp's access is 512 contiguous bytes. `Slice` keeps those
// elements in registers as fp32 (the row is read from memory once).
#pragma once
#include <cuda_bf16.h>

#ifndef INFINITY  // NVRTC has no <math.h>
#define INFINITY __int_as_float(0x7f800000)
#endif

namespace rows {

constexpr float LOG2E = 1.4426950408889634f;
constexpr unsigned FULL_MASK = 0xffffffffu;

template <typename T>
struct Traits;
template <>
struct Traits<float> {
  static constexpr int V = 4;  // elements per 16-byte vector
};
template <>
struct Traits<__nv_bfloat16> {
  static constexpr int V = 8;
};

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) { return v; }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// 16 raw bytes -> V floats. A bf16 is the top half of an fp32, so widening is a shift.
template <typename T>
__device__ __forceinline__ void unpack(const uint4& r, float* f);
template <>
__device__ __forceinline__ void unpack<float>(const uint4& r, float* f) {
  f[0] = __uint_as_float(r.x);
  f[1] = __uint_as_float(r.y);
  f[2] = __uint_as_float(r.z);
  f[3] = __uint_as_float(r.w);
}
template <>
__device__ __forceinline__ void unpack<__nv_bfloat16>(const uint4& r, float* f) {
  const unsigned w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(w[i] << 16);              // element 2i: the low half (little-endian)
    f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);  // element 2i+1: the high half
  }
}

// V floats -> 16 raw bytes, rounding to nearest even (bf16: one cvt.rn.bf16x2 per pair).
template <typename T>
__device__ __forceinline__ uint4 pack(const float* f);
template <>
__device__ __forceinline__ uint4 pack<float>(const float* f) {
  return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]), __float_as_uint(f[3]));
}
template <>
__device__ __forceinline__ uint4 pack<__nv_bfloat16>(const float* f) {
  unsigned w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);  // .x = f[2i] (low half)
    w[i] = *reinterpret_cast<const unsigned*>(&h);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

__device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<unsigned long long>(p) & 15) == 0;
}

// Where the 16-byte vectors of a row start and end (see the top of this file).
struct Geometry {
  int head;  // scalars before the first vector
  int nvec;  // whole vectors
  int tail;  // scalars after the last vector
};

template <typename T>
__device__ __forceinline__ Geometry geometry(const T* row, int n) {
  constexpr int V = Traits<T>::V;
  const unsigned mis = static_cast<unsigned>(reinterpret_cast<unsigned long long>(row) & 15);
  // torch tensors are aligned to their element size, so mis is a multiple of sizeof(T).
  const int head = mis ? min(static_cast<int>((16 - mis) / sizeof(T)), n) : 0;
  const int nvec = (n - head) / V;
  return Geometry{head, nvec, n - head - nvec * V};
}

// V elements starting at p, as one 16-byte access when `vec` (p is 16-byte aligned), else V scalars.
// `__ldg`: read-only path, for weight and bias (reused by every row, so L1/L2 hits).
template <typename T>
__device__ __forceinline__ void load_span_ro(const T* p, bool vec, float* f) {
  constexpr int V = Traits<T>::V;
  if (vec) {
    unpack<T>(__ldg(reinterpret_cast<const uint4*>(p)), f);
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) f[i] = to_float(p[i]);
  }
}

// One 16-byte store. Written in PTX because NVVM split a plain `*(uint4*)p = v` into four
// 4-byte stores when the scalar fallback sat in the other branch (seen with NVRTC 13.0).
__device__ __forceinline__ void st_global_16(void* p, const uint4& v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

template <typename T>
__device__ __forceinline__ void store_span(T* p, bool vec, const float* f) {
  constexpr int V = Traits<T>::V;
  if (vec) {
    st_global_16(p, pack<T>(f));
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) p[i] = from_float<T>(f[i]);
  }
}

// ---- reductions -----------------------------------------------------------------------
// fmaxf ignores a NaN operand; kernels that must propagate NaN do it through their sums.
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, o));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
  return v;
}

// Sum over the THREADS threads of the block, returned to every thread. One barrier: every
// warp reduces the per-warp partials itself instead of waiting for a broadcast. `partials`
// (THREADS / 32 floats of shared memory) must not be reused by a later reduction without a
// barrier in between (a slow warp may still be reading it): give each call its own array.
// Every thread of the block must call it (it contains __syncthreads).
template <int THREADS>
__device__ __forceinline__ float block_sum(float v, float* partials) {
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "THREADS must be a multiple of 32, at most 1024");
  v = warp_sum(v);
  if constexpr (THREADS == 32) {
    return v;
  } else {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) partials[warp] = v;
    __syncthreads();
    return warp_sum(lane < THREADS / 32 ? partials[lane] : 0.0f);
  }
}

// ---- a row slice in registers ------------------------------------------------------------
// E elements per thread (K = E / V vectors), P threads per row, thread index g. Elements that
// the thread does not own hold `pad` (chosen by the op so they drop out of its reductions).
template <typename T, int E, int P>
struct Slice {
  static constexpr int V = Traits<T>::V;
  static constexpr int K = E / V;
  static_assert(E % V == 0, "E must be a whole number of 16-byte vectors");

  float v[K][V];
  float h;  // head scalar (thread g < head)
  float t;  // tail scalar (thread g < tail)

  __device__ __forceinline__ static bool owns(int k, int g, const Geometry& geo) { return k * P + g < geo.nvec; }

  // The row's first element of vector j is row[head + j * V].
  // `__ldcs`: evict-first; x is read exactly once, so it should not displace weights in L2.
  __device__ __forceinline__ void load(const T* row, const Geometry& geo, int g, float pad) {
    const T* base = row + geo.head;
    uint4 raw[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {  // issue every load before using any: K x 16 B in flight per thread
      raw[k] = owns(k, g, geo) ? __ldcs(reinterpret_cast<const uint4*>(base + (size_t)(k * P + g) * V))
                               : make_uint4(0u, 0u, 0u, 0u);
    }
    h = g < geo.head ? to_float(row[g]) : pad;
    t = g < geo.tail ? to_float(row[geo.head + geo.nvec * V + g]) : pad;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (owns(k, g, geo)) {
        unpack<T>(raw[k], v[k]);
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i) v[k][i] = pad;
      }
    }
  }

  // Writes every owned element. `fv(float (&o)[V], int col)` turns the V values of a vector,
  // whose first column is col, into outputs in place; `fs(float value, int col)` returns the
  // output of a head/tail scalar. Two callables, so that an op can load its other operands
  // (weight, bias) 16 bytes at a time for the vectors.
  // `vec_out`: y's row has x's row's alignment, so the vectors can be stored 16 bytes wide.
  template <typename FV, typename FS>
  __device__ __forceinline__ void store(T* row, const Geometry& geo, int g, bool vec_out, FV fv, FS fs) const {
    T* base = row + geo.head;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (owns(k, g, geo)) {
        float o[V];
#pragma unroll
        for (int i = 0; i < V; ++i) o[i] = v[k][i];
        fv(o, geo.head + (k * P + g) * V);
        store_span<T>(base + (size_t)(k * P + g) * V, vec_out, o);
      }
    }
    if (g < geo.head) row[g] = from_float<T>(fs(h, g));
    if (g < geo.tail) {
      const int col = geo.head + geo.nvec * V + g;
      row[col] = from_float<T>(fs(t, col));
    }
  }
};

}  // namespace rows
