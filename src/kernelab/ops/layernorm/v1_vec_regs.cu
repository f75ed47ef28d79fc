// v1_vec_regs: the row read once into registers with 16-byte loads; mean and variance both
// taken from the registers (two passes over registers, one over memory).
//
// What changed from v0: (1) 16-byte loads and stores (LDG.E.128 / STG.E.128) after a scalar
//   head that reaches x's row 16-byte boundary; weight and bias by 16-byte __ldg where they
//   are aligned like x's row; (2) the row stays in registers (32 elements per thread), so the
//   mean, the variance and the write cost one read of x instead of three; (3) threads per row
//   follow N: a warp per row up to 1024 (no barrier), a block of 64-1024 threads up to 32768;
//   wider rows stream three times through a 512-thread block (re-reads from L2 when they fit).
//   The variance stays the two-pass form, sum((x - mean)^2), now over registers: as cheap as
//   the one-pass E[x^2] - E[x]^2 and free of its cancellation (at x = 1000 + N(0, 1) in fp32
//   the one-pass form loses most of the variance: wrong/w0_one_pass_variance).
// Why: v0 keeps too few bytes in flight and reads x three times.
// Predicted: bytes first. 32768 x 8192 bf16: 1.07 GB, 251 us at the copy rate. 256 threads x 4
//   LDG.128 per row, 4 blocks per SM = 64 KiB in flight per SM; two block reductions (two
//   barriers) per row instead of one, hidden by the other 3 blocks: ~255-265 us, 0.95-0.98x
//   the copy rate, on par with torch.compile (253 us) and ~1.65x eager (434 us).
// Measured: BENCHMARKS.md, layernorm rows (generated from results JSON).
//
// @strategy registers
// @access_bytes 16
#include "../softmax/rows.cuh"
#include "../common/row_pivot.cuh"  // kl::row_pivot

namespace layernorm {

// y = d * rstd * w + b for the V deviations d of a vector starting at column col.
template <typename T>
__device__ __forceinline__ void affine_vec(float* o, const T* __restrict__ w, const T* __restrict__ b, int col,
                                           bool wvec, bool bvec, float mean, float rstd) {
  constexpr int V = rows::Traits<T>::V;
  float wf[V], bf[V];
  rows::load_span_ro<T>(w + col, wvec, wf);
  rows::load_span_ro<T>(b + col, bvec, bf);
#pragma unroll
  for (int i = 0; i < V; ++i) o[i] = (o[i] - mean) * rstd * wf[i] + bf[i];
}

// P == 32: a warp per row (blockDim.x / 32 rows per block); otherwise a block of P threads per row.
// All sums are of z = x - pivot (the median of x[row][0..2]; see v0): exact to form, small to add.
template <typename T, int P, int E>
__device__ __forceinline__ void regs_row(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                         T* __restrict__ y, int M, int N, float eps) {
  constexpr bool kWarp = P == 32;
  __shared__ float partial_mean[kWarp ? 1 : P / 32], partial_var[kWarp ? 1 : P / 32];
  const int row = kWarp ? blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5) : blockIdx.x;
  const int g = kWarp ? (threadIdx.x & 31) : threadIdx.x;
  if (kWarp && row >= M) return;  // warp mode only: the whole warp leaves; no block barrier follows
  const T* xr = x + (size_t)row * N;
  T* yr = y + (size_t)row * N;
  const rows::Geometry geo = rows::geometry(xr, N);
  const bool vec_out = ((reinterpret_cast<unsigned long long>(xr) ^ reinterpret_cast<unsigned long long>(yr)) & 15) == 0;
  const bool wvec = rows::aligned16(w + geo.head), bvec = rows::aligned16(b + geo.head);

  rows::Slice<T, E, P> sl;
  sl.load(xr, geo, g, 0.0f);
  const float pivot = kl::row_pivot(xr, N);  // median of x[0..2]: the same addresses in every thread (broadcasts)
  const bool own_h = g < geo.head, own_t = g < geo.tail;

  // Mean of z. Padding must not count: shift only owned elements (padding stays 0).
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < sl.K; ++k) {
    if (sl.owns(k, g, geo)) {
#pragma unroll
      for (int i = 0; i < sl.V; ++i) {
        sl.v[k][i] -= pivot;
        sum += sl.v[k][i];
      }
    }
  }
  if (own_h) sl.h -= pivot;
  if (own_t) sl.t -= pivot;
  sum += sl.h + sl.t;  // 0 where not owned
  if constexpr (kWarp) {
    sum = rows::warp_sum(sum);
  } else {
    sum = rows::block_sum<P>(sum, partial_mean);
  }
  const float mean = sum / static_cast<float>(N);

  // Variance: the mean of (z - mean)^2 over owned elements only.
  float sq = 0.0f;
#pragma unroll
  for (int k = 0; k < sl.K; ++k) {
    if (sl.owns(k, g, geo)) {
#pragma unroll
      for (int i = 0; i < sl.V; ++i) sq += (sl.v[k][i] - mean) * (sl.v[k][i] - mean);
    }
  }
  if (own_h) sq += (sl.h - mean) * (sl.h - mean);
  if (own_t) sq += (sl.t - mean) * (sl.t - mean);
  if constexpr (kWarp) {
    sq = rows::warp_sum(sq);
  } else {
    sq = rows::block_sum<P>(sq, partial_var);
  }
  const float rstd = rsqrtf(sq / static_cast<float>(N) + eps);  // biased variance, like torch

  sl.store(
      yr, geo, g, vec_out, [&](float* o, int col) { affine_vec<T>(o, w, b, col, wvec, bvec, mean, rstd); },
      [&](float z, int col) { return (z - mean) * rstd * rows::to_float(w[col]) + rows::to_float(b[col]); });
}

// Rows wider than a block holds: three passes (mean, variance, write), 4 vectors in flight per
// thread; passes 2 and 3 re-read the row (from L2 when it fits). grid = M.
template <typename T, int THREADS>
__device__ __forceinline__ void stream_row(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                           T* __restrict__ y, int N, float eps) {
  constexpr int V = rows::Traits<T>::V, U = 4;
  __shared__ float partial_mean[THREADS / 32], partial_var[THREADS / 32];
  const int tid = threadIdx.x;
  const T* xr = x + (size_t)blockIdx.x * N;
  T* yr = y + (size_t)blockIdx.x * N;
  const rows::Geometry geo = rows::geometry(xr, N);
  const bool vec_out = ((reinterpret_cast<unsigned long long>(xr) ^ reinterpret_cast<unsigned long long>(yr)) & 15) == 0;
  const bool wvec = rows::aligned16(w + geo.head), bvec = rows::aligned16(b + geo.head);
  const int tail0 = geo.head + geo.nvec * V;
  const uint4* xv = reinterpret_cast<const uint4*>(xr + geo.head);
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
      if (j < geo.nvec) raw[u] = __ldg(xv + j);
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
      if (j < geo.nvec) raw[u] = __ldg(xv + j);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (j0 + u * THREADS < geo.nvec) {
        float f[V];
        rows::unpack<T>(raw[u], f);
#pragma unroll
        for (int i = 0; i < V; ++i) {
          const float d = f[i] - pivot - mean;
          sq += d * d;
        }
      }
    }
  }
  const float rstd = rsqrtf(rows::block_sum<THREADS>(sq, partial_var) / static_cast<float>(N) + eps);

  for (int j0 = tid; j0 < geo.nvec; j0 += THREADS * U) {
    uint4 raw[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = j0 + u * THREADS;
      if (j < geo.nvec) raw[u] = __ldcs(xv + j);  // the last use of x
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = j0 + u * THREADS;
      if (j < geo.nvec) {
        float f[V];
        rows::unpack<T>(raw[u], f);
#pragma unroll
        for (int i = 0; i < V; ++i) f[i] -= pivot;
        affine_vec<T>(f, w, b, geo.head + j * V, wvec, bvec, mean, rstd);
        rows::store_span<T>(yr + geo.head + (size_t)j * V, vec_out, f);
      }
    }
  }
  if (own_h) yr[tid] = rows::from_float<T>((hz - mean) * rstd * rows::to_float(w[tid]) + rows::to_float(b[tid]));
  if (own_t) {
    const int col = tail0 + tid;
    yr[col] = rows::from_float<T>((tz - mean) * rstd * rows::to_float(w[col]) + rows::to_float(b[col]));
  }
}

}  // namespace layernorm

// Parameters are written out in full: kernelab reads each kernel's C signature from the source
// to convert arguments (gpu/params.py), so they cannot hide in a macro.

// One warp per row (8 rows per 256-thread block): rows of up to 256, 512, 1024. E = 32 needs
// ~72 registers (the row plus a vector's weight and bias): at the 64 of 4 blocks per SM ptxas
// spilled 20-28 bytes (NVRTC 13.0, sm_90), so that instance runs 3 blocks per SM.
extern "C" __global__ void __launch_bounds__(256, 4) layernorm_warp_e8_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm::regs_row<float, 32, 8>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) layernorm_warp_e16_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm::regs_row<float, 32, 16>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 3) layernorm_warp_e32_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm::regs_row<float, 32, 32>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) layernorm_warp_e8_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm::regs_row<__nv_bfloat16, 32, 8>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) layernorm_warp_e16_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm::regs_row<__nv_bfloat16, 32, 16>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 3) layernorm_warp_e32_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm::regs_row<__nv_bfloat16, 32, 32>(x, w, b, y, M, N, eps);
}

// One block per row, 32 elements per thread: rows of up to 2048 .. 32768.
extern "C" __global__ void __launch_bounds__(64, 16) layernorm_block_t64_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm::regs_row<float, 64, 32>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(128, 8) layernorm_block_t128_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm::regs_row<float, 128, 32>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) layernorm_block_t256_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm::regs_row<float, 256, 32>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, 2) layernorm_block_t512_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm::regs_row<float, 512, 32>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(1024, 1) layernorm_block_t1024_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm::regs_row<float, 1024, 32>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(64, 16) layernorm_block_t64_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm::regs_row<__nv_bfloat16, 64, 32>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(128, 8) layernorm_block_t128_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm::regs_row<__nv_bfloat16, 128, 32>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(256, 4) layernorm_block_t256_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm::regs_row<__nv_bfloat16, 256, 32>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, 2) layernorm_block_t512_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm::regs_row<__nv_bfloat16, 512, 32>(x, w, b, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(1024, 1) layernorm_block_t1024_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm::regs_row<__nv_bfloat16, 1024, 32>(x, w, b, y, M, N, eps);
}

// Any width, three passes: also the names the op contract looks up.
extern "C" __global__ void __launch_bounds__(512, 2) layernorm_stream_t512_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm::stream_row<float, 512>(x, w, b, y, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, 2) layernorm_stream_t512_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm::stream_row<__nv_bfloat16, 512>(x, w, b, y, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, 2) layernorm_f32(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int M, int N, float eps) {
  layernorm::stream_row<float, 512>(x, w, b, y, N, eps);
}
extern "C" __global__ void __launch_bounds__(512, 2) layernorm_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y, int M, int N, float eps) {
  layernorm::stream_row<__nv_bfloat16, 512>(x, w, b, y, N, eps);
}
