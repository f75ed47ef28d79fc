// v1_vec_regs: the row read once into registers with 16-byte loads, warp-shuffle reductions.
//
// What changed from v0: (1) 16-byte loads and stores (LDG.E.128 / STG.E.128: 8 bf16 or 4 fp32
//   per instruction instead of 1), after a scalar head that reaches x's row 16-byte boundary;
//   (2) the row stays in registers (32 elements per thread) between the sum of squares and
//   the write, so x is read from memory once; (3) the threads per row follow N: one warp per
//   row up to N = 1024 (no barrier at all), one block of 64-1024 threads up to 32768;
//   wider rows stream twice through a 512-thread block (the row is re-read, from L2 when it
//   fits). Weight is read with 16-byte __ldg loads where it is aligned like x's row (it is
//   reused by every row, so those are L1/L2 hits).
// Why: v0 keeps too few bytes in flight (2-byte loads); and every extra pass over x is
//   another chance to miss in cache.
// Predicted: bytes first. 32768 x 8192 bf16: 1.07 GB, 251 us at the copy rate. 256 threads x 4
//   LDG.128 per row, 4 blocks per SM = 64 KiB in flight per SM: ~255-262 us, ~0.97x the copy
//   rate, on par with torch.compile (253 us) and 1.55x eager (404 us).
// Measured: BENCHMARKS.md, rmsnorm rows (generated from results JSON).
//
// @strategy registers
// @access_bytes 16
#include "../softmax/rows.cuh"

namespace rmsnorm {

// y = x * rstd * w for V values of a vector starting at column col.
template <typename T>
__device__ __forceinline__ void scale_vec(float* o, const T* __restrict__ w, int col, bool wvec, float rstd) {
  float wf[rows::Traits<T>::V];
  rows::load_span_ro<T>(w + col, wvec, wf);
#pragma unroll
  for (int i = 0; i < rows::Traits<T>::V; ++i) o[i] = o[i] * rstd * wf[i];
}

// P threads per row: P == 32 is a warp per row (blockDim.x / 32 rows per block, no barrier),
// otherwise a block of P threads per row (grid = M).
template <typename T, int P, int E>
__device__ __forceinline__ void regs_row(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int M,
                                         int N, float eps) {
  constexpr bool kWarp = P == 32;
  __shared__ float partial[kWarp ? 1 : P / 32];
  const int row = kWarp ? blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5) : blockIdx.x;
  const int g = kWarp ? (threadIdx.x & 31) : threadIdx.x;
  if (kWarp && row >= M) return;  // warp mode only: the whole warp leaves; no block barrier follows
  const T* xr = x + (size_t)row * N;
  T* yr = y + (size_t)row * N;
  const rows::Geometry geo = rows::geometry(xr, N);
  const bool vec_out = ((reinterpret_cast<unsigned long long>(xr) ^ reinterpret_cast<unsigned long long>(yr)) & 15) == 0;
  const bool wvec = rows::aligned16(w + geo.head);

  rows::Slice<T, E, P> sl;
  sl.load(xr, geo, g, 0.0f);  // padding 0 adds nothing to the sum of squares
  float ss = sl.h * sl.h + sl.t * sl.t;
#pragma unroll
  for (int k = 0; k < sl.K; ++k)
#pragma unroll
    for (int i = 0; i < sl.V; ++i) ss += sl.v[k][i] * sl.v[k][i];
  if constexpr (kWarp) {
    ss = rows::warp_sum(ss);
  } else {
    ss = rows::block_sum<P>(ss, partial);
  }
  const float rstd = rsqrtf(ss / static_cast<float>(N) + eps);
  sl.store(
      yr, geo, g, vec_out, [&](float* o, int col) { scale_vec<T>(o, w, col, wvec, rstd); },
      [&](float v, int col) { return v * rstd * rows::to_float(w[col]); });
}

// Rows wider than a block holds: pass 1 sums squares (4 vectors in flight per thread), pass 2
// re-reads and writes. grid = M.
template <typename T, int THREADS>
__device__ __forceinline__ void stream_row(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int N,
                                           float eps) {
  constexpr int V = rows::Traits<T>::V, U = 4;
  __shared__ float partial[THREADS / 32];
  const int tid = threadIdx.x;
  const T* xr = x + (size_t)blockIdx.x * N;
  T* yr = y + (size_t)blockIdx.x * N;
  const rows::Geometry geo = rows::geometry(xr, N);
  const bool vec_out = ((reinterpret_cast<unsigned long long>(xr) ^ reinterpret_cast<unsigned long long>(yr)) & 15) == 0;
  const bool wvec = rows::aligned16(w + geo.head);
  const int tail0 = geo.head + geo.nvec * V;
  const uint4* xv = reinterpret_cast<const uint4*>(xr + geo.head);

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
    uint4 raw[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = j0 + u * THREADS;
      raw[u] = j < geo.nvec ? __ldcs(xv + j) : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = j0 + u * THREADS;
      if (j < geo.nvec) {
        float f[V];
        rows::unpack<T>(raw[u], f);
        scale_vec<T>(f, w, geo.head + j * V, wvec, rstd);
        rows::store_span<T>(yr + geo.head + (size_t)j * V, vec_out, f);
      }
    }
  }
  if (tid < geo.head) yr[tid] = rows::from_float<T>(hv * rstd * rows::to_float(w[tid]));
  if (tid < geo.tail) yr[tail0 + tid] = rows::from_float<T>(tv * rstd * rows::to_float(w[tail0 + tid]));
}

}  // namespace rmsnorm

// Parameters are written out in full: kernelab reads each kernel's C signature from the source
// to convert arguments (gpu/params.py), so they cannot hide in a macro.


// One warp per row (8 rows per 256-thread block): rows of up to 256, 512, 1024.
extern "C" __global__ void __launch_bounds__(256, 4) rmsnorm_warp_e8_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm::regs_row<float, 32, 8>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) rmsnorm_warp_e16_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm::regs_row<float, 32, 16>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) rmsnorm_warp_e32_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm::regs_row<float, 32, 32>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) rmsnorm_warp_e8_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm::regs_row<__nv_bfloat16, 32, 8>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) rmsnorm_warp_e16_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm::regs_row<__nv_bfloat16, 32, 16>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) rmsnorm_warp_e32_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm::regs_row<__nv_bfloat16, 32, 32>(x, w, y, M, N, eps);
}

// One block per row, 32 elements per thread: rows of up to 2048 .. 32768.
extern "C" __global__ void __launch_bounds__(64, 16) rmsnorm_block_t64_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm::regs_row<float, 64, 32>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(128, 8) rmsnorm_block_t128_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm::regs_row<float, 128, 32>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) rmsnorm_block_t256_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm::regs_row<float, 256, 32>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, 2) rmsnorm_block_t512_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm::regs_row<float, 512, 32>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(1024, 1) rmsnorm_block_t1024_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm::regs_row<float, 1024, 32>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(64, 16) rmsnorm_block_t64_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm::regs_row<__nv_bfloat16, 64, 32>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(128, 8) rmsnorm_block_t128_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm::regs_row<__nv_bfloat16, 128, 32>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) rmsnorm_block_t256_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm::regs_row<__nv_bfloat16, 256, 32>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, 2) rmsnorm_block_t512_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm::regs_row<__nv_bfloat16, 512, 32>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(1024, 1) rmsnorm_block_t1024_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm::regs_row<__nv_bfloat16, 1024, 32>(x, w, y, M, N, eps);
}

// Any width, two passes: also the names the op contract looks up.
extern "C" __global__ void __launch_bounds__(512, 2) rmsnorm_stream_t512_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm::stream_row<float, 512>(x, w, y, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, 2) rmsnorm_stream_t512_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm::stream_row<__nv_bfloat16, 512>(x, w, y, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, 2) rmsnorm_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rmsnorm::stream_row<float, 512>(x, w, y, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, 2) rmsnorm_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  rmsnorm::stream_row<__nv_bfloat16, 512>(x, w, y, N, eps);
}
