// v2_chan_prefetch: v1 with one barrier per row instead of two (each warp's mean and
// variance merged across warps by Chan's formula), x read without the evict-first hint, and
// the weight and bias loaded in batches instead of one load per stored vector.
//
// What changed from v1: (1) the variance: each warp takes its own two-pass mean and sum of
//   squared deviations from registers with shuffles only (no barrier), and one barrier hands
//   the P / 32 (count, mean, M2) triples to every warp, which merges them in a fixed tree order
//   with Chan et al.'s update (M2 = M2a + M2b + d^2 na nb / n, d = mean_b - mean_a): v1 paid two
//   block reductions (two barriers) per row, for the mean and then the variance (knob LN_MERGE;
//   0 = v1's two block sums). The sums stay of z = x - pivot (v1's pivot, the median of x[row][0..2] since session 24), so the shift=1000
//   cases keep their precision, and no E[x^2] - E[x]^2 appears anywhere; (2) x's 16-byte loads
//   are LDG.E.128.CONSTANT (__ldg) instead of LDG.E.EF.128 (__ldcs; knob X_LOAD, norm_rows.cuh);
//   (3) the weight vectors load in one batch before the barrier and the bias vectors one
//   vector ahead of their use after it (knob PARAMS_EARLY: 2 = both in one batch early, which
//   spills at 64 registers; 0 = both in one batch after the barrier), instead of two loads per
//   stored vector behind the previous store (v1's SASS: 8 dependent L1/L2 round trips per thread
//   in bf16 after the second barrier); (4) x stays in registers as raw 16-byte vectors and
//   elements per thread are set per dtype (`@elems_bf16`, `@elems_f32`), as in rmsnorm v2:
//   N = 8192 runs 256 threads x 32 bf16 and 512 threads x 16 fp32.
// Why: v1 bf16 ran 12% slower than rmsnorm v1 on the same bytes (302.4 vs 269.0 us at
//   32768 x 8192, H200, 2026-11-30): the difference is its second barrier and its bias loads,
//   both in the phase where a block holds its registers with no loads of x in flight.
// Predicted: bytes first. 32768 x 8192 bf16 moves 1.07 GB (+16 KiB of bias): 251 us at the copy
//   rate (4.28 TB/s); fp32 2.15 GB: 502 us. Expect ~252-262 us bf16 (1.10-1.15x torch.compile's
//   289, 13-17% over v1) and ~500-515 us fp32 (0.97-1.0x its 502).
// Measured: BENCHMARKS.md (full runs); the H200 sweep (docs/runs/2026-11-30-h200-sweep_membound.json): slower, not faster: bf16 437.7 us = 0.65x torch.compile (v1 0.955x),
//   fp32 693.4 us = 0.72x (v1 0.94x); with two barriers (LN_MERGE=0) 0.73x / 0.87x, so the Chan merge
//   costs most of it and the rest is the fast_rows layout for layernorm. v1 stays the best variant.
//   Full runs: BENCHMARKS.md, layernorm rows.
//
// Knobs (#ifndef macros, for sweeps; defaults are the header's): X_LOAD, PARAMS_EARLY
// (norm_rows.cuh); LN_MERGE (1: one barrier, Chan merge; 0: two block sums as v1);
// SM_THREADS_BF16 / SM_THREADS_F32 (threads per SM the register cap must allow);
// ONLY_BLOCK_T (compile only that block instance and the contract kernels).
//
// @strategy fast_rows
// @elems_bf16 32
// @elems_f32 16
// @access_bytes 16
#include "../rmsnorm/norm_rows.cuh"
#include "../common/row_pivot.cuh"  // kl::row_pivot

#ifndef ELEMS_BF16
#define ELEMS_BF16 32
#endif
#ifndef ELEMS_F32
#define ELEMS_F32 16
#endif
#ifndef SM_THREADS_BF16
#define SM_THREADS_BF16 1024
#endif
#ifndef SM_THREADS_F32
#define SM_THREADS_F32 1024
#endif
#ifndef LN_MERGE
#define LN_MERGE 1
#endif
#ifndef PARAMS_EARLY
#define PARAMS_EARLY 1  // the weight with x, the bias one vector ahead after the barrier (see the store loop)
#endif
#include "../rmsnorm/min_blocks.cuh"  // MINB_* from SM_THREADS_*

namespace layernorm2 {

// Merge two (count, mean, M2) summaries, a before b (Chan, Golub and LeVeque). Empty parts
// (count 0) leave the other unchanged.
__device__ __forceinline__ void chan_merge(float na, float ma, float qa, float nb, float mb, float qb, float& n,
                                           float& m, float& q) {
  n = na + nb;
  const float f = n > 0.0f ? nb / n : 0.0f;
  const float d = mb - ma;
  m = fmaf(d, f, ma);
  q = qa + qb + d * d * na * f;
}

// The (count, mean, M2) of the whole block from one triple per warp in shared memory: every warp
// reads the NW triples (lanes >= NW hold empty ones) and merges them with a butterfly in which
// both partners merge the lower lane's group first, so every lane of every warp ends with the
// same bits.
template <int NW>
__device__ __forceinline__ void merge_warps(const float* sn, const float* sm, const float* sq, float& mean, float& m2) {
  const int lane = threadIdx.x & 31;
  float n = lane < NW ? sn[lane] : 0.0f, m = lane < NW ? sm[lane] : 0.0f, q = lane < NW ? sq[lane] : 0.0f;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const float n2 = __shfl_xor_sync(rows::FULL_MASK, n, o);
    const float m2_ = __shfl_xor_sync(rows::FULL_MASK, m, o);
    const float q2 = __shfl_xor_sync(rows::FULL_MASK, q, o);
    if (lane & o) {
      chan_merge(n2, m2_, q2, n, m, q, n, m, q);
    } else {
      chan_merge(n, m, q, n2, m2_, q2, n, m, q);
    }
  }
  mean = m;
  m2 = q;
}

// y = (z - mean) * rstd * w + b over a vector of V deviations z.
template <typename T>
__device__ __forceinline__ void affine(float* f, const float* wf, const float* bf, float mean, float rstd) {
#pragma unroll
  for (int i = 0; i < rows::Traits<T>::V; ++i) f[i] = (f[i] - mean) * rstd * wf[i] + bf[i];
}

// P == 32: a warp per row (blockDim.x / 32 rows per block); otherwise a block of P threads per row.
template <typename T, int P, int E>
__device__ __forceinline__ void regs_row(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                         T* __restrict__ y, int M, int N, float eps) {
  constexpr bool kWarp = P == 32;
  constexpr int V = rows::Traits<T>::V, NW = kWarp ? 1 : P / 32;
#if LN_MERGE
  __shared__ float s_n[NW], s_m[NW], s_q[NW];
#else
  __shared__ float partial_mean[NW], partial_var[NW];
#endif
  const int row = kWarp ? blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5) : blockIdx.x;
  const int g = kWarp ? (threadIdx.x & 31) : threadIdx.x;
  if (kWarp && row >= M) return;  // warp mode only: the whole warp leaves; no block barrier follows
  const T* xr = x + (size_t)row * N;
  T* yr = y + (size_t)row * N;
  const rows::Geometry geo = rows::geometry(xr, N);
  const bool vec_out = normrows::co_aligned(xr, yr);
  const bool wvec = rows::aligned16(w + geo.head), bvec = rows::aligned16(b + geo.head);

  // PARAMS_EARLY: the weight (1) and the bias (2) first (L1/L2 hits), then x (see rmsnorm v2).
  normrows::ParamSlice<T, E, P> ws, bs;
#if PARAMS_EARLY >= 1
  ws.load(w, geo, g, wvec);
#endif
#if PARAMS_EARLY >= 2
  bs.load(b, geo, g, bvec);
#endif
  normrows::RawSlice<T, E, P> xs;
  xs.load(xr, geo, g);
  const float pivot = kl::row_pivot(xr, N);  // median of x[0..2]: the same addresses in every thread (broadcasts)
  const bool own_h = g < geo.head, own_t = g < geo.tail;
  constexpr int K = xs.K;

  // Sum of z = x - pivot over owned elements: one partial per vector (independent chains).
  float part[K];
  int count = (own_h ? 1 : 0) + (own_t ? 1 : 0);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    part[k] = 0.0f;
    if (xs.owns(k, g, geo)) {
      float f[V];
      xs.get(k, f);
#pragma unroll
      for (int i = 0; i < V; ++i) part[k] += f[i] - pivot;
      count += V;
    }
  }
#pragma unroll
  for (int s = 1; s < K; s *= 2)
#pragma unroll
    for (int k = 0; k + s < K; k += 2 * s) part[k] += part[k + s];
  const float hz = own_h ? xs.h - pivot : 0.0f, tz = own_t ? xs.t - pivot : 0.0f;
  float sum = part[0] + (hz + tz);

  float mean;  // of z over the row (or, in block mode with LN_MERGE, first over this warp)
  int wcount = 0;  // elements this warp owns (LN_MERGE)
  if constexpr (kWarp) {
    mean = rows::warp_sum(sum) / static_cast<float>(N);
  } else {
#if LN_MERGE
    wcount = __reduce_add_sync(rows::FULL_MASK, count);
    const float wsum = rows::warp_sum(sum);
    mean = wcount > 0 ? wsum / static_cast<float>(wcount) : 0.0f;
#else
    mean = rows::block_sum<P>(sum, partial_mean) / static_cast<float>(N);
#endif
  }

  // Sum of squared deviations from that mean, over owned elements only.
#pragma unroll
  for (int k = 0; k < K; ++k) {
    part[k] = 0.0f;
    if (xs.owns(k, g, geo)) {
      float f[V];
      xs.template get<1>(k, f);  // each pass its own unpack form (norm_rows.cuh)
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const float d = f[i] - pivot - mean;
        part[k] = fmaf(d, d, part[k]);
      }
    }
  }
#pragma unroll
  for (int s = 1; s < K; s *= 2)
#pragma unroll
    for (int k = 0; k + s < K; k += 2 * s) part[k] += part[k + s];
  float sq = part[0] + ((own_h ? (hz - mean) * (hz - mean) : 0.0f) + (own_t ? (tz - mean) * (tz - mean) : 0.0f));

  float m2;
  if constexpr (kWarp) {
    m2 = rows::warp_sum(sq);
  } else {
#if LN_MERGE
    const float wq = rows::warp_sum(sq);
    if ((threadIdx.x & 31) == 0) {  // this warp's (count, mean, M2); counts <= 2^15 are exact in fp32
      const int wid = threadIdx.x >> 5;
      s_n[wid] = static_cast<float>(wcount);
      s_m[wid] = mean;
      s_q[wid] = wq;
    }
    __syncthreads();  // the row's only barrier
    merge_warps<NW>(s_n, s_m, s_q, mean, m2);
#else
    m2 = rows::block_sum<P>(sq, partial_var);
#endif
  }
  const float rstd = rsqrtf(m2 / static_cast<float>(N) + eps);  // biased variance, like torch
#if PARAMS_EARLY < 1
  ws.load(w, geo, g, wvec);
#endif
#if PARAMS_EARLY < 1 || PARAMS_EARLY >= 2
#if PARAMS_EARLY < 2
  bs.load(b, geo, g, bvec);
#endif
  T* ybase = yr + geo.head;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (xs.owns(k, g, geo)) {
      float f[V], wf[V], bf[V];
      xs.template get<2>(k, f);
#pragma unroll
      for (int i = 0; i < V; ++i) f[i] -= pivot;
      ws.get(w, geo, g, wvec, k, wf);
      bs.get(b, geo, g, bvec, k, bf);
      affine<T>(f, wf, bf, mean, rstd);
      rows::store_span<T>(ybase + (size_t)(k * P + g) * V, vec_out, f);
    }
  }
#else
  // PARAMS_EARLY == 1: the bias one vector ahead of its use. x, weight and all K bias vectors
  // live at once need ~68 registers in bf16 at E = 32 (4-8 B of spills on sm_100 at the
  // 64-register cap); one vector ahead needs 4 and still overlaps each load with a vector's math.
  const uint4* bv = reinterpret_cast<const uint4*>(b + geo.head);
  uint4 bnext = bvec && xs.owns(0, g, geo) ? normrows::ldg_pinned(bv + g) : make_uint4(0u, 0u, 0u, 0u);
  T* ybase = yr + geo.head;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const uint4 bcur = bnext;
    if (k + 1 < K)
      bnext = bvec && xs.owns(k + 1, g, geo) ? normrows::ldg_pinned(bv + (k + 1) * P + g) : make_uint4(0u, 0u, 0u, 0u);
    if (xs.owns(k, g, geo)) {
      float f[V], wf[V], bf[V];
      xs.template get<2>(k, f);
#pragma unroll
      for (int i = 0; i < V; ++i) f[i] -= pivot;
      ws.get(w, geo, g, wvec, k, wf);
      if (bvec) {
        rows::unpack<T>(bcur, bf);
      } else {
        const int col = geo.head + (k * P + g) * V;
#pragma unroll
        for (int i = 0; i < V; ++i) bf[i] = rows::to_float(b[col + i]);
      }
      affine<T>(f, wf, bf, mean, rstd);
      rows::store_span<T>(ybase + (size_t)(k * P + g) * V, vec_out, f);
    }
  }
#endif
  if (own_h) yr[g] = rows::from_float<T>((hz - mean) * rstd * rows::to_float(w[g]) + rows::to_float(b[g]));
  if (own_t) {
    const int col = geo.head + geo.nvec * V + g;
    yr[col] = rows::from_float<T>((tz - mean) * rstd * rows::to_float(w[col]) + rows::to_float(b[col]));
  }
}

// Rows wider than a block holds: three passes (mean, variance, write), 4 vectors in flight per
// thread; passes 2 and 3 re-read the row (from L2 when it fits); pass 3 loads each step's
// weight and bias vectors together before its stores (2 vectors per step). grid = M.
template <typename T, int THREADS>
__device__ __forceinline__ void stream_row(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                           T* __restrict__ y, int N, float eps) {
  constexpr int V = rows::Traits<T>::V, U = 4;
  __shared__ float partial_mean[THREADS / 32], partial_var[THREADS / 32];
  const int tid = threadIdx.x;
  const T* xr = x + (size_t)blockIdx.x * N;
  T* yr = y + (size_t)blockIdx.x * N;
  const rows::Geometry geo = rows::geometry(xr, N);
  const bool vec_out = normrows::co_aligned(xr, yr);
  const bool wvec = rows::aligned16(w + geo.head), bvec = rows::aligned16(b + geo.head);
  const int tail0 = geo.head + geo.nvec * V;
  const uint4* xv = reinterpret_cast<const uint4*>(xr + geo.head);
  const uint4* wv = reinterpret_cast<const uint4*>(w + geo.head);
  const uint4* bv = reinterpret_cast<const uint4*>(b + geo.head);
  const float pivot = kl::row_pivot(xr, N);
  const bool own_h = tid < geo.head, own_t = tid < geo.tail;
  const float hz = own_h ? rows::to_float(xr[tid]) - pivot : 0.0f;
  const float tz = own_t ? rows::to_float(xr[tail0 + tid]) - pivot : 0.0f;

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
  const float mean = rows::block_sum<THREADS>(sum, partial_mean) / static_cast<float>(N);

  float sq = (own_h ? (hz - mean) * (hz - mean) : 0.0f) + (own_t ? (tz - mean) * (tz - mean) : 0.0f);
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
  const float rstd = rsqrtf(rows::block_sum<THREADS>(sq, partial_var) / static_cast<float>(N) + eps);

  constexpr int U3 = 2;  // pass 3 holds x, weight and bias vectors: 2 of each (24 registers) fit without spills
  for (int j0 = tid; j0 < geo.nvec; j0 += THREADS * U3) {
    uint4 raw[U3], wraw[U3], braw[U3];
#pragma unroll
    for (int u = 0; u < U3; ++u) {
      const int j = j0 + u * THREADS;
      const bool in = j < geo.nvec;
      raw[u] = in ? __ldg(xv + j) : make_uint4(0u, 0u, 0u, 0u);
      wraw[u] = in && wvec ? __ldg(wv + j) : make_uint4(0u, 0u, 0u, 0u);
      braw[u] = in && bvec ? __ldg(bv + j) : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int u = 0; u < U3; ++u) {
      const int j = j0 + u * THREADS;
      if (j < geo.nvec) {
        const int col = geo.head + j * V;
        float f[V], wf[V], bf[V];
        rows::unpack<T>(raw[u], f);
        if (wvec) {
          rows::unpack<T>(wraw[u], wf);
        } else {
#pragma unroll
          for (int i = 0; i < V; ++i) wf[i] = rows::to_float(w[col + i]);
        }
        if (bvec) {
          rows::unpack<T>(braw[u], bf);
        } else {
#pragma unroll
          for (int i = 0; i < V; ++i) bf[i] = rows::to_float(b[col + i]);
        }
#pragma unroll
        for (int i = 0; i < V; ++i) f[i] -= pivot;
        affine<T>(f, wf, bf, mean, rstd);
        rows::store_span<T>(yr + col, vec_out, f);
      }
    }
  }
  if (own_h) yr[tid] = rows::from_float<T>((hz - mean) * rstd * rows::to_float(w[tid]) + rows::to_float(b[tid]));
  if (own_t) {
    const int col = tail0 + tid;
    yr[col] = rows::from_float<T>((tz - mean) * rstd * rows::to_float(w[col]) + rows::to_float(b[col]));
  }
}

}  // namespace layernorm2

// Parameters are written out in full: kernelab reads each kernel's C signature from the source
// to convert arguments (gpu/params.py), so they cannot hide in a macro.

#ifndef ONLY_BLOCK_T
// One warp per row (8 rows per 256-thread block): rows of up to 256, 512, 1024.
extern "C" __global__ void __launch_bounds__(256, 4) layernorm_warp_e8_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm2::regs_row<float, 32, 8>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 3) layernorm_warp_e16_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm2::regs_row<float, 32, 16>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 2) layernorm_warp_e32_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm2::regs_row<float, 32, 32>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) layernorm_warp_e8_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm2::regs_row<__nv_bfloat16, 32, 8>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) layernorm_warp_e16_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm2::regs_row<__nv_bfloat16, 32, 16>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 3) layernorm_warp_e32_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm2::regs_row<__nv_bfloat16, 32, 32>(x, w, b, y, M, N, eps);
}
#endif

// One block of P threads per row, E = ELEMS_* elements per thread: rows of up to P x E.
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 64
extern "C" __global__ void __launch_bounds__(64, MINB_F32_T64) layernorm_block_t64_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm2::regs_row<float, 64, ELEMS_F32>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(64, MINB_BF16_T64) layernorm_block_t64_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm2::regs_row<__nv_bfloat16, 64, ELEMS_BF16>(x, w, b, y, M, N, eps);
}
#endif
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 128
extern "C" __global__ void __launch_bounds__(128, MINB_F32_T128) layernorm_block_t128_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm2::regs_row<float, 128, ELEMS_F32>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(128, MINB_BF16_T128) layernorm_block_t128_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm2::regs_row<__nv_bfloat16, 128, ELEMS_BF16>(x, w, b, y, M, N, eps);
}
#endif
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 256
extern "C" __global__ void __launch_bounds__(256, MINB_F32_T256) layernorm_block_t256_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm2::regs_row<float, 256, ELEMS_F32>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, MINB_BF16_T256) layernorm_block_t256_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm2::regs_row<__nv_bfloat16, 256, ELEMS_BF16>(x, w, b, y, M, N, eps);
}
#endif
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 512
extern "C" __global__ void __launch_bounds__(512, MINB_F32_T512) layernorm_block_t512_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm2::regs_row<float, 512, ELEMS_F32>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, MINB_BF16_T512) layernorm_block_t512_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm2::regs_row<__nv_bfloat16, 512, ELEMS_BF16>(x, w, b, y, M, N, eps);
}
#endif
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 1024
extern "C" __global__ void __launch_bounds__(1024, MINB_F32_T1024) layernorm_block_t1024_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm2::regs_row<float, 1024, ELEMS_F32>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(1024, MINB_BF16_T1024) layernorm_block_t1024_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm2::regs_row<__nv_bfloat16, 1024, ELEMS_BF16>(x, w, b, y, M, N, eps);
}
#endif

#ifndef ONLY_BLOCK_T
extern "C" __global__ void __launch_bounds__(512, 2) layernorm_stream_t512_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm2::stream_row<float, 512>(x, w, b, y, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, 2) layernorm_stream_t512_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm2::stream_row<__nv_bfloat16, 512>(x, w, b, y, N, eps);
}
#endif
// Any width, three passes: the names the op contract looks up.
extern "C" __global__ void __launch_bounds__(512, 2) layernorm_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm2::stream_row<float, 512>(x, w, b, y, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, 2) layernorm_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm2::stream_row<__nv_bfloat16, 512>(x, w, b, y, N, eps);
}
