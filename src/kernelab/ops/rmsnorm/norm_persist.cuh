// norm_persist.cuh: the persistent row loop that rmsnorm v3 and layernorm v3 share (on top of
// norm_rows.cuh and ../softmax/rows.cuh). CENTER = true is layernorm (mean, two-pass variance
// about a pivot, bias), false is rmsnorm.
//
// A group of P threads (a warp when P == 32, else the whole block) no longer takes one row and
// exits: the grid holds what the GPU keeps resident (the launch caps it, `@grid persistent`) and
// each group walks rows r, r + stride, ... Two things follow:
//   1. Prefetch (PREFETCH, on where the registers allow it: K <= PF_MAX_K vectors per thread):
//      the next row's K 16-byte loads are issued before this row's reductions and stores, so a
//      group holds its next row's bytes in flight through its barriers and its store phase: the
//      phases where the one-row-per-block kernels (v1, v2) had no load of x outstanding. The
//      loads are `asm volatile`, so NVVM keeps them above the barrier (a plain __ldg may be
//      sunk to its first use, after the reductions).
//   2. weight and bias are loaded once per group, not once per row, where every row shares
//      x's 16-byte phase (N x sizeof(T) a multiple of 16, which the bench shapes are); other
//      widths reload them per row (their head moves from row to row).
// With prefetch off (K > PF_MAX_K) the loop is the v2 row body: params loaded after the
// reductions in one batch, one exposed L1/L2 round trip.
//
// Registers at the defaults (E = 16 bf16 / 8 fp32, K = 2): x now + x next + weight + bias =
// 4 x 2 x 4 = 32 registers of data, under the 64 that 1024 threads per SM allow.
#pragma once
#include "norm_rows.cuh"
#include "../common/row_pivot.cuh"  // kl::row_pivot (layernorm's centre)

#ifndef PREFETCH
#define PREFETCH 1
#endif
#ifndef PF_MAX_K
#define PF_MAX_K 2
#endif

namespace normpersist {

// x's vectors, read in program order (asm volatile); X_LOAD picks the cache hint as in
// norm_rows.cuh (0 .nc, 1 plain, 2 .cs evict-first, 3 .nc.L1::no_allocate).
__device__ __forceinline__ uint4 ldx_pinned(const uint4* p) {
  uint4 r;
#if X_LOAD == 0
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
#elif X_LOAD == 1
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
#elif X_LOAD == 2
  asm volatile("ld.global.cs.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
#else
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
#endif
  return r;
}

// One row's slice of x plus what the row needs besides it (its geometry and pivot).
template <typename T, int E, int P>
struct Row {
  normrows::RawSlice<T, E, P> s;
  rows::Geometry geo;
  float pivot;

  __device__ __forceinline__ void load(const T* xr, int N, int g, bool center) {
    geo = rows::geometry(xr, N);
    const uint4* base = reinterpret_cast<const uint4*>(xr + geo.head);
#pragma unroll
    for (int k = 0; k < s.K; ++k) s.v[k] = s.owns(k, g, geo) ? ldx_pinned(base + k * P + g) : make_uint4(0u, 0u, 0u, 0u);
    s.h = g < geo.head ? rows::to_float(xr[g]) : 0.0f;
    s.t = g < geo.tail ? rows::to_float(xr[geo.head + geo.nvec * rows::Traits<T>::V + g]) : 0.0f;
    pivot = center ? kl::row_pivot(xr, N) : 0.0f;  // median of x[0..2] (../common/row_pivot.cuh)
  }
};

template <int P>
__device__ __forceinline__ float group_sum(float v, float* partials) {
  if constexpr (P == 32) {
    return rows::warp_sum(v);
  } else {
    return rows::block_sum<P>(v, partials);
  }
}

// Reduce and write one row held in `r`: y = (x - mean) * rstd * w + b (CENTER) or x * rstd * w.
// ws / bs hold the params at r's columns (loaded before, or here when `load_params`).
template <typename T, int P, int E, bool CENTER>
__device__ __forceinline__ void finish_row(const Row<T, E, P>& r, const T* __restrict__ w, const T* __restrict__ b,
                                           T* __restrict__ yr, bool vec_out, int N, float eps, int g,
                                           normrows::ParamSlice<T, E, P>& ws, normrows::ParamSlice<T, E, P>& bs,
                                           bool load_params, float* s_a, float* s_b) {
  constexpr int V = rows::Traits<T>::V, K = E / V;
  const rows::Geometry& geo = r.geo;
  const bool own_h = g < geo.head, own_t = g < geo.tail;
  float part[K];
  float mean = 0.0f, rstd;
  const float hz = own_h ? r.s.h - r.pivot : 0.0f, tz = own_t ? r.s.t - r.pivot : 0.0f;
  if constexpr (CENTER) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      part[k] = 0.0f;
      if (r.s.owns(k, g, geo)) {  // padding must not count: (0 - pivot) is not zero
        float f[V];
        r.s.get(k, f);
#pragma unroll
        for (int i = 0; i < V; ++i) part[k] += f[i] - r.pivot;
      }
    }
#pragma unroll
    for (int s = 1; s < K; s *= 2)
#pragma unroll
      for (int k = 0; k + s < K; k += 2 * s) part[k] += part[k + s];
    mean = group_sum<P>(part[0] + (hz + tz), s_a) / static_cast<float>(N);
  }
  // Sum of squares: of (z - mean) for layernorm (two-pass variance, over owned elements), of x for rmsnorm.
#pragma unroll
  for (int k = 0; k < K; ++k) {
    part[k] = 0.0f;
    if (!CENTER || r.s.owns(k, g, geo)) {  // rmsnorm: padding is zero bits, adds nothing
      float f[V];
      r.s.template get<1>(k, f);  // another unpack form per pass (norm_rows.cuh)
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const float d = CENTER ? f[i] - r.pivot - mean : f[i];
        part[k] = fmaf(d, d, part[k]);
      }
    }
  }
#pragma unroll
  for (int s = 1; s < K; s *= 2)
#pragma unroll
    for (int k = 0; k + s < K; k += 2 * s) part[k] += part[k + s];
  const float hd = own_h ? hz - mean : 0.0f, td = own_t ? tz - mean : 0.0f;
  rstd = rsqrtf(group_sum<P>(part[0] + (hd * hd + td * td), s_b) / static_cast<float>(N) + eps);

  const bool wvec = rows::aligned16(w + geo.head);
  const bool bvec = CENTER && rows::aligned16(b + geo.head);
  if (load_params) {  // one batch after the reductions: one exposed round trip (L1/L2 hits)
    ws.load(w, geo, g, wvec);
    if constexpr (CENTER) bs.load(b, geo, g, bvec);
  }
  T* ybase = yr + geo.head;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (r.s.owns(k, g, geo)) {
      float f[V], wf[V];
      r.s.template get<2>(k, f);
      ws.get(w, geo, g, wvec, k, wf);
      if constexpr (CENTER) {
        float bf[V];
        bs.get(b, geo, g, bvec, k, bf);
#pragma unroll
        for (int i = 0; i < V; ++i) f[i] = (f[i] - r.pivot - mean) * rstd * wf[i] + bf[i];
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i) f[i] = f[i] * rstd * wf[i];
      }
      rows::store_span<T>(ybase + (size_t)(k * P + g) * V, vec_out, f);
    }
  }
  if (own_h) {
    const float o = CENTER ? hd * rstd * rows::to_float(w[g]) + rows::to_float(b[g]) : r.s.h * rstd * rows::to_float(w[g]);
    yr[g] = rows::from_float<T>(o);
  }
  if (own_t) {
    const int col = geo.head + geo.nvec * V + g;
    const float o = CENTER ? td * rstd * rows::to_float(w[col]) + rows::to_float(b[col])
                           : r.s.t * rstd * rows::to_float(w[col]);
    yr[col] = rows::from_float<T>(o);
  }
}

// The persistent loop. P == 32: blockDim.x / 32 warps, each its own row group; else one group
// per block. Rows group, group + stride, ... where stride counts every group of the grid.
template <typename T, int P, int E, bool CENTER>
__device__ __forceinline__ void persist_rows(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                             T* __restrict__ y, int M, int N, float eps) {
  constexpr bool kWarp = P == 32;
  constexpr int V = rows::Traits<T>::V, K = E / V;
  constexpr bool PF = PREFETCH && K <= PF_MAX_K;
  __shared__ float s_a[kWarp ? 1 : P / 32], s_b[kWarp ? 1 : P / 32];  // alternate: one barrier apart (rows.cuh)
  const int groups = kWarp ? (blockDim.x >> 5) : 1;
  const int g = kWarp ? (threadIdx.x & 31) : threadIdx.x;
  const int stride = gridDim.x * groups;
  int row = blockIdx.x * groups + (kWarp ? (threadIdx.x >> 5) : 0);
  if (row >= M) return;  // the whole group leaves (block mode: row is the same in every thread)
  // Every row has row 0's 16-byte phase: the params' slices are the same for every row.
  const bool same_phase = ((size_t)N * sizeof(T)) % 16 == 0;

  normrows::ParamSlice<T, E, P> ws, bs;
  Row<T, E, P> cur;
  cur.load(x + (size_t)row * N, N, g, CENTER);
  if constexpr (PF) {
    ws.load(w, cur.geo, g, rows::aligned16(w + cur.geo.head));
    if constexpr (CENTER) bs.load(b, cur.geo, g, rows::aligned16(b + cur.geo.head));
  }
  for (;;) {
    const int next = row + stride;
    T* yr = y + (size_t)row * N;
    const bool vec_out = normrows::co_aligned(x + (size_t)row * N, yr);
    if constexpr (PF) {
      Row<T, E, P> nxt;
      if (next < M) nxt.load(x + (size_t)next * N, N, g, CENTER);  // in flight through this row's barriers
      finish_row<T, P, E, CENTER>(cur, w, b, yr, vec_out, N, eps, g, ws, bs, !same_phase, s_a, s_b);
      if (next >= M) break;
      cur = nxt;
    } else {
      finish_row<T, P, E, CENTER>(cur, w, b, yr, vec_out, N, eps, g, ws, bs, true, s_a, s_b);
      if (next >= M) break;
      cur.load(x + (size_t)next * N, N, g, CENTER);
    }
    row = next;
  }
}

// Rows wider than a block holds: passes over memory (layernorm: mean, variance, write; rmsnorm:
// sum of squares, write), U = 4 vectors in flight per thread, re-reads from L2 when the row fits.
// grid = M (one block per row; not persistent).
template <typename T, int THREADS, bool CENTER>
__device__ __forceinline__ void stream_row(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                           T* __restrict__ y, int N, float eps) {
  constexpr int V = rows::Traits<T>::V, U = 4;
  __shared__ float s_a[THREADS / 32], s_b[THREADS / 32];
  const int tid = threadIdx.x;
  const T* xr = x + (size_t)blockIdx.x * N;
  T* yr = y + (size_t)blockIdx.x * N;
  const rows::Geometry geo = rows::geometry(xr, N);
  const bool vec_out = normrows::co_aligned(xr, yr);
  const bool wvec = rows::aligned16(w + geo.head), bvec = CENTER && rows::aligned16(b + geo.head);
  const int tail0 = geo.head + geo.nvec * V;
  const uint4* xv = reinterpret_cast<const uint4*>(xr + geo.head);
  const uint4* wv = reinterpret_cast<const uint4*>(w + geo.head);
  const uint4* bv = reinterpret_cast<const uint4*>(b + geo.head);
  const float pivot = CENTER ? kl::row_pivot(xr, N) : 0.0f;
  const bool own_h = tid < geo.head, own_t = tid < geo.tail;
  const float hz = own_h ? rows::to_float(xr[tid]) - pivot : 0.0f;
  const float tz = own_t ? rows::to_float(xr[tail0 + tid]) - pivot : 0.0f;

  float mean = 0.0f;
  if constexpr (CENTER) {
    float sum = hz + tz;
    for (int j0 = tid; j0 < geo.nvec; j0 += THREADS * U) {
      uint4 raw[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int j = j0 + u * THREADS;
        raw[u] = j < geo.nvec ? __ldg(xv + j) : make_uint4(0u, 0u, 0u, 0u);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (j0 + u * THREADS < geo.nvec) {
          float f[V];
          rows::unpack<T>(raw[u], f);
#pragma unroll
          for (int i = 0; i < V; ++i) sum += f[i] - pivot;
        }
      }
    }
    mean = rows::block_sum<THREADS>(sum, s_a) / static_cast<float>(N);
  }
  const float hd = own_h ? hz - mean : 0.0f, td = own_t ? tz - mean : 0.0f;
  float sq = hd * hd + td * td;
  for (int j0 = tid; j0 < geo.nvec; j0 += THREADS * U) {
    uint4 raw[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = j0 + u * THREADS;
      raw[u] = j < geo.nvec ? __ldg(xv + j) : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (j0 + u * THREADS < geo.nvec) {
        float f[V];
        rows::unpack<T>(raw[u], f);
#pragma unroll
        for (int i = 0; i < V; ++i) {
          const float d = f[i] - pivot - mean;
          sq = fmaf(d, d, sq);
        }
      }
    }
  }
  const float rstd = rsqrtf(rows::block_sum<THREADS>(sq, s_b) / static_cast<float>(N) + eps);

  for (int j0 = tid; j0 < geo.nvec; j0 += THREADS * U) {
    uint4 raw[U], wraw[U], braw[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = j0 + u * THREADS;
      raw[u] = j < geo.nvec ? __ldg(xv + j) : make_uint4(0u, 0u, 0u, 0u);
      wraw[u] = wvec && j < geo.nvec ? __ldg(wv + j) : make_uint4(0u, 0u, 0u, 0u);
      braw[u] = bvec && j < geo.nvec ? __ldg(bv + j) : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = j0 + u * THREADS;
      if (j < geo.nvec) {
        float f[V], wf[V], bf[V];
        const int col = geo.head + j * V;
        rows::unpack<T>(raw[u], f);
        if (wvec) {
          rows::unpack<T>(wraw[u], wf);
        } else {
#pragma unroll
          for (int i = 0; i < V; ++i) wf[i] = rows::to_float(w[col + i]);
        }
        if constexpr (CENTER) {
          if (bvec) {
            rows::unpack<T>(braw[u], bf);
          } else {
#pragma unroll
            for (int i = 0; i < V; ++i) bf[i] = rows::to_float(b[col + i]);
          }
#pragma unroll
          for (int i = 0; i < V; ++i) f[i] = (f[i] - pivot - mean) * rstd * wf[i] + bf[i];
        } else {
#pragma unroll
          for (int i = 0; i < V; ++i) f[i] = f[i] * rstd * wf[i];
        }
        rows::store_span<T>(yr + col, vec_out, f);
      }
    }
  }
  if (own_h)
    yr[tid] = rows::from_float<T>(CENTER ? hd * rstd * rows::to_float(w[tid]) + rows::to_float(b[tid])
                                         : hz * rstd * rows::to_float(w[tid]));
  if (own_t)
    yr[tail0 + tid] = rows::from_float<T>(CENTER ? td * rstd * rows::to_float(w[tail0 + tid]) + rows::to_float(b[tail0 + tid])
                                                 : tz * rstd * rows::to_float(w[tail0 + tid]));
}

}  // namespace normpersist
