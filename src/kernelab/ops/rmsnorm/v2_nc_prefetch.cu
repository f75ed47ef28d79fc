// v2_nc_prefetch: v1 with x read without the evict-first hint and the weight loaded in one
// batch before the reduction, so no load waits behind a store.
//
// What changed from v1: (1) x's 16-byte loads are LDG.E.128.CONSTANT (__ldg) instead of
//   LDG.E.EF.128 (__ldcs; knob X_LOAD, norm_rows.cuh); (2) the weight vectors of the thread's
//   columns are loaded before the reduction (knob PARAMS_EARLY), all in flight together, instead
//   of one LDG per stored vector behind the previous STG (v1's SASS: 4 dependent L1/L2 round
//   trips per thread in bf16, 8 in fp32, after the barrier). ptxas issues them after the sum of
//   squares (which waits for x), so their latency overlaps the shuffles and the barrier rather
//   than x's; (3) x stays in registers as raw 16-byte
//   vectors (bf16: 16 registers for 32 elements instead of 32) and is unpacked on use;
//   (4) elements per thread are set per dtype (`@elems_bf16`, `@elems_f32`, macros ELEMS_BF16 /
//   ELEMS_F32): one block of P = N / E threads per row (P a power of two, 64..1024), so
//   N = 8192 runs 256 threads x 32 bf16 (as v1) and 512 threads x 16 fp32 (v1: 256 x 32, which
//   with the weight also in registers would need ~80 registers). Warp-per-row instances for
//   N <= 1024 and a two-pass stream for wider rows, as in v1.
// Why: v1 ran at 0.93x torch.compile in bf16 and 0.91x in fp32 (269.0 / 546.4 us at
//   32768 x 8192, H200, 2026-11-30). Bytes are the same as v1's; what it lacks is loads in
//   flight: a block spends its store phase (~0.5-1.5 us of a ~4.3 us bf16 lifetime at 4 blocks
//   per SM) waiting on weight loads with no x loads outstanding, and the evict-first hint cost
//   vector_add 5% at 2^28 on the same GPU.
// Predicted: bytes first. 32768 x 8192 bf16 moves 1.07 GB: 251 us at the copy rate (4.28 TB/s);
//   fp32 2.15 GB: 502 us. Expect ~250-258 us bf16 (0.97-1.0x torch.compile's 251) and ~500-515 us
//   fp32 (0.97-1.0x its 499): 5-8% over v1, from the hint (~4%) and the shorter store phase.
// Measured: BENCHMARKS.md (full runs); the H200 sweep (docs/runs/2026-11-30-h200-sweep_membound.json, same process as the peers): bf16 255.2 us = 0.97x torch.compile
//   (v1 0.92x), fp32 506.0 us = 0.98x (v1 0.91x); v1's .cs hint on x (X_LOAD=2) gives the gain back
//   (0.92x / 0.95x): the hint was most of v1's gap. Full runs: BENCHMARKS.md, rmsnorm rows.
//
// Knobs (#ifndef macros, for sweeps; defaults are the header's): X_LOAD, PARAMS_EARLY
// (norm_rows.cuh); SM_THREADS_BF16 / SM_THREADS_F32: threads per SM the register cap must
// allow (__launch_bounds__ min blocks = SM_THREADS / P; 1024 caps registers at 64);
// ONLY_BLOCK_T: compile only the block instance of that many threads (plus the contract kernels),
// so a sweep that times one shape compiles in a fraction of the time.
//
// @strategy fast_rows
// @elems_bf16 32
// @elems_f32 16
// @access_bytes 16
#include "norm_rows.cuh"

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
#include "min_blocks.cuh"  // MINB_* from SM_THREADS_*

namespace rmsnorm2 {

// P threads per row: P == 32 is a warp per row (blockDim.x / 32 rows per block, no barrier),
// otherwise a block of P threads per row (grid = M). E elements per thread.
template <typename T, int P, int E>
__device__ __forceinline__ void regs_row(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int M,
                                         int N, float eps) {
  constexpr bool kWarp = P == 32;
  constexpr int V = rows::Traits<T>::V;
  __shared__ float partial[kWarp ? 1 : P / 32];
  const int row = kWarp ? blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5) : blockIdx.x;
  const int g = kWarp ? (threadIdx.x & 31) : threadIdx.x;
  if (kWarp && row >= M) return;  // warp mode only: the whole warp leaves; no block barrier follows
  const T* xr = x + (size_t)row * N;
  T* yr = y + (size_t)row * N;
  const rows::Geometry geo = rows::geometry(xr, N);
  const bool vec_out = normrows::co_aligned(xr, yr);
  const bool wvec = rows::aligned16(w + geo.head);

  // PARAMS_EARLY: the weight's loads first in program order (L1/L2 hits, shorter than x's trip to
  // HBM); ptxas may still issue them after the sum of squares (norm_rows.cuh, ldg_pinned).
  normrows::ParamSlice<T, E, P> ws;
#if PARAMS_EARLY >= 1
  ws.load(w, geo, g, wvec);
#endif
  normrows::RawSlice<T, E, P> xs;
  xs.load(xr, geo, g);

  // One partial sum per vector (K independent FFMA chains instead of one chain of E), then a tree.
  float part[xs.K];
#pragma unroll
  for (int k = 0; k < xs.K; ++k) {
    float f[V];
    xs.get(k, f);  // vectors not owned are zeros: they add nothing
    part[k] = 0.0f;
#pragma unroll
    for (int i = 0; i < V; ++i) part[k] += f[i] * f[i];
  }
#pragma unroll
  for (int s = 1; s < xs.K; s *= 2)
#pragma unroll
    for (int k = 0; k + s < xs.K; k += 2 * s) part[k] += part[k + s];
  float ss = part[0] + (xs.h * xs.h + xs.t * xs.t);  // head/tail: 0 where not owned
  if constexpr (kWarp) {
    ss = rows::warp_sum(ss);
  } else {
    ss = rows::block_sum<P>(ss, partial);
  }
  const float rstd = rsqrtf(ss / static_cast<float>(N) + eps);
#if PARAMS_EARLY < 1
  ws.load(w, geo, g, wvec);
#endif

  T* ybase = yr + geo.head;
#pragma unroll
  for (int k = 0; k < xs.K; ++k) {
    if (xs.owns(k, g, geo)) {
      float f[V], wf[V];
      xs.template get<1>(k, f);  // another unpack form than the sum's (norm_rows.cuh)
      ws.get(w, geo, g, wvec, k, wf);
#pragma unroll
      for (int i = 0; i < V; ++i) f[i] = f[i] * rstd * wf[i];
      rows::store_span<T>(ybase + (size_t)(k * P + g) * V, vec_out, f);
    }
  }
  if (g < geo.head) yr[g] = rows::from_float<T>(xs.h * rstd * rows::to_float(w[g]));
  if (g < geo.tail) {
    const int col = geo.head + geo.nvec * V + g;
    yr[col] = rows::from_float<T>(xs.t * rstd * rows::to_float(w[col]));
  }
}

// Rows wider than a block holds: pass 1 sums squares (U vectors in flight per thread), pass 2
// re-reads (from L2 when the row fits) and writes, loading each step's U weight vectors
// together before its stores. grid = M.
template <typename T, int THREADS>
__device__ __forceinline__ void stream_row(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int N,
                                           float eps) {
  constexpr int V = rows::Traits<T>::V, U = 4;
  __shared__ float partial[THREADS / 32];
  const int tid = threadIdx.x;
  const T* xr = x + (size_t)blockIdx.x * N;
  T* yr = y + (size_t)blockIdx.x * N;
  const rows::Geometry geo = rows::geometry(xr, N);
  const bool vec_out = normrows::co_aligned(xr, yr);
  const bool wvec = rows::aligned16(w + geo.head);
  const int tail0 = geo.head + geo.nvec * V;
  const uint4* xv = reinterpret_cast<const uint4*>(xr + geo.head);
  const uint4* wv = reinterpret_cast<const uint4*>(w + geo.head);

  const float hv = tid < geo.head ? rows::to_float(xr[tid]) : 0.0f;
  const float tv = tid < geo.tail ? rows::to_float(xr[tail0 + tid]) : 0.0f;
  float ss = hv * hv + tv * tv;
  for (int j0 = tid; j0 < geo.nvec; j0 += THREADS * U) {
    uint4 raw[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = j0 + u * THREADS;
      raw[u] = j < geo.nvec ? __ldg(xv + j) : make_uint4(0u, 0u, 0u, 0u);  // zeros add nothing
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float f[V];
      rows::unpack<T>(raw[u], f);
#pragma unroll
      for (int i = 0; i < V; ++i) ss += f[i] * f[i];
    }
  }
  ss = rows::block_sum<THREADS>(ss, partial);
  const float rstd = rsqrtf(ss / static_cast<float>(N) + eps);

  for (int j0 = tid; j0 < geo.nvec; j0 += THREADS * U) {
    uint4 raw[U], wraw[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = j0 + u * THREADS;
      raw[u] = j < geo.nvec ? __ldg(xv + j) : make_uint4(0u, 0u, 0u, 0u);
      wraw[u] = wvec && j < geo.nvec ? __ldg(wv + j) : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = j0 + u * THREADS;
      if (j < geo.nvec) {
        float f[V], wf[V];
        rows::unpack<T>(raw[u], f);
        if (wvec) {
          rows::unpack<T>(wraw[u], wf);
        } else {
#pragma unroll
          for (int i = 0; i < V; ++i) wf[i] = rows::to_float(w[geo.head + j * V + i]);
        }
#pragma unroll
        for (int i = 0; i < V; ++i) f[i] = f[i] * rstd * wf[i];
        rows::store_span<T>(yr + geo.head + (size_t)j * V, vec_out, f);
      }
    }
  }
  if (tid < geo.head) yr[tid] = rows::from_float<T>(hv * rstd * rows::to_float(w[tid]));
  if (tid < geo.tail) yr[tail0 + tid] = rows::from_float<T>(tv * rstd * rows::to_float(w[tail0 + tid]));
}

}  // namespace rmsnorm2

// Parameters are written out in full: kernelab reads each kernel's C signature from the source
// to convert arguments (gpu/params.py), so they cannot hide in a macro.

#ifndef ONLY_BLOCK_T
// One warp per row (8 rows per 256-thread block): rows of up to 256, 512, 1024 (rows.py's warp plan).
extern "C" __global__ void __launch_bounds__(256, 4) rmsnorm_warp_e8_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::regs_row<float, 32, 8>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) rmsnorm_warp_e16_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::regs_row<float, 32, 16>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 2) rmsnorm_warp_e32_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::regs_row<float, 32, 32>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) rmsnorm_warp_e8_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::regs_row<__nv_bfloat16, 32, 8>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) rmsnorm_warp_e16_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::regs_row<__nv_bfloat16, 32, 16>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 3) rmsnorm_warp_e32_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::regs_row<__nv_bfloat16, 32, 32>(x, w, y, M, N, eps);
}
#endif

// One block of P threads per row, E = ELEMS_* elements per thread: rows of up to P x E.
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 64
extern "C" __global__ void __launch_bounds__(64, MINB_F32_T64) rmsnorm_block_t64_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::regs_row<float, 64, ELEMS_F32>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(64, MINB_BF16_T64) rmsnorm_block_t64_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::regs_row<__nv_bfloat16, 64, ELEMS_BF16>(x, w, y, M, N, eps);
}
#endif
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 128
extern "C" __global__ void __launch_bounds__(128, MINB_F32_T128) rmsnorm_block_t128_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::regs_row<float, 128, ELEMS_F32>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(128, MINB_BF16_T128) rmsnorm_block_t128_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::regs_row<__nv_bfloat16, 128, ELEMS_BF16>(x, w, y, M, N, eps);
}
#endif
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 256
extern "C" __global__ void __launch_bounds__(256, MINB_F32_T256) rmsnorm_block_t256_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::regs_row<float, 256, ELEMS_F32>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, MINB_BF16_T256) rmsnorm_block_t256_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::regs_row<__nv_bfloat16, 256, ELEMS_BF16>(x, w, y, M, N, eps);
}
#endif
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 512
extern "C" __global__ void __launch_bounds__(512, MINB_F32_T512) rmsnorm_block_t512_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::regs_row<float, 512, ELEMS_F32>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, MINB_BF16_T512) rmsnorm_block_t512_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::regs_row<__nv_bfloat16, 512, ELEMS_BF16>(x, w, y, M, N, eps);
}
#endif
#if !defined(ONLY_BLOCK_T) || ONLY_BLOCK_T == 1024
extern "C" __global__ void __launch_bounds__(1024, MINB_F32_T1024) rmsnorm_block_t1024_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::regs_row<float, 1024, ELEMS_F32>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(1024, MINB_BF16_T1024) rmsnorm_block_t1024_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::regs_row<__nv_bfloat16, 1024, ELEMS_BF16>(x, w, y, M, N, eps);
}
#endif

#ifndef ONLY_BLOCK_T
extern "C" __global__ void __launch_bounds__(512, 2) rmsnorm_stream_t512_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::stream_row<float, 512>(x, w, y, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, 2) rmsnorm_stream_t512_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::stream_row<__nv_bfloat16, 512>(x, w, y, N, eps);
}
#endif
// Any width, two passes: the names the op contract looks up.
extern "C" __global__ void __launch_bounds__(512, 2) rmsnorm_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::stream_row<float, 512>(x, w, y, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, 2) rmsnorm_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm2::stream_row<__nv_bfloat16, 512>(x, w, y, N, eps);
}
