// v2_online: online softmax, any row width: one pass computes the running (max, sum), a
// second pass writes. 2 reads + 1 write.
//
// What changed from v1: the row is no longer held on chip. Each thread streams over its
//   share of the row, 4 vectors (64 bytes) at a time, and folds every chunk into a running
//   pair: m' = max(m, chunk max), s' = s * exp(m - m') + sum exp(x - m') (Milakov and
//   Gimelshein, 2018). The block merges the pairs (one barrier), then re-reads the row to
//   write exp(x - M) / S. One exp per element per pass, plus one per chunk.
// Why: v1 holds at most 32768 elements (1024 threads x 32 registers); this works for any N
//   with a fixed register budget. The classic safe softmax reads the row three times (max,
//   sum, write); the running pair removes one read.
// Predicted: bytes first. 2048 x 131072 bf16: one pass each way is 1.07 GB (251 us at the
//   copy rate); the second read adds 0.54 GB unless it hits L2. With 2 blocks of 512 threads
//   per SM, ~264 rows (66 MiB) are in flight, about the 60 MiB L2, so expect a partial hit:
//   290-380 us (1.5-1.9x eager's 561 us, 2.2-2.9x torch.compile's 840 us), short of v3,
//   which reads once.
// Measured: BENCHMARKS.md, softmax rows (generated from results JSON).
//
// @strategy online
// @access_bytes 16
#include "softmax_common.cuh"
#include "../common/ld16.cuh"  // kl::ld16_nc_policy, l2_policy_evict_last (v14's side rows)

// Knob PASS1_PEEL (session 20; default 0, the measured build), layernorm v5's session-19 fix: 1 issues
// pass 1's first step of vectors before the head/tail scalars are touched. With 0, the SASS (sm_80 to
// sm_120) compares or converts the scalars (FMNMX; bf16: a shift) before the loop's first LDG.E.128
// (analysis.load_order), so a row with a head or tail scalar pays a second DRAM round trip; aligned
// rows (the bench shapes) load no scalar. Loading the scalars first and reading them after the loop
// is not enough: ptxas still selects them (FSEL ..., -INF) before the loop.
// Measured (H200, session 21, sweep peel20: docs/runs/2026-12-02-h200-sweep_peel20.json, fp32 32768 rows):
// the peel lost at both widths, 8192 519.6 / 519.4 us against 514.7 / 514.5 and 8191 554.2 / 555.2
// against 540.3 / 539.4 (predicted: 8191 1-5% faster). Its 48 registers (40 without) leave 2 blocks an
// SM, not 3: the bytes in flight an SM fall by a third, and that costs more than the one round trip
// a row, which the other resident blocks hide. So 0 stays the default.
#ifndef PASS1_PEEL
#define PASS1_PEEL 0
#endif

namespace softmax {

// grid = M blocks, one row each; U vectors per thread per step.
// Row `row` of x (N wide) into y, by the whole block: the online pass, the block merge, the write pass.
// KeepL2: pass 1's loads carry an evict-last L2 policy (v14's side rows), else plain __ldg (v2).
template <typename T, int THREADS, int U, bool KeepL2 = false>
__device__ __forceinline__ void online_row_at(const T* __restrict__ x, T* __restrict__ y, int N, size_t row,
                                              float* part_m, float* part_s) {
  constexpr int V = rows::Traits<T>::V;
  const int tid = threadIdx.x;
  const T* xr = x + row * N;
  T* yr = y + row * N;
  unsigned long long pol = 0;
  if constexpr (KeepL2) pol = kl::l2_policy_evict_last();
  const rows::Geometry geo = rows::geometry(xr, N);
  const bool vec_out = ((reinterpret_cast<unsigned long long>(xr) ^ reinterpret_cast<unsigned long long>(yr)) & 15) == 0;
  const int tail0 = geo.head + geo.nvec * V;  // first tail column
  const uint4* xv = reinterpret_cast<const uint4*>(xr + geo.head);

  // Pass 1: the running pair over steps of U vectors a thread, starting from this thread's head and
  // tail scalars (if any).
  auto load_step = [&](int j0, uint4 (&raw)[U]) {
#pragma unroll
    for (int u = 0; u < U; ++u) {  // __ldg, not evict-first: pass 2 wants these lines still in L2
      const int j = j0 + u * THREADS;
      if constexpr (KeepL2) {
        raw[u] = j < geo.nvec ? kl::ld16_nc_policy(xv + j, pol) : make_uint4(0u, 0u, 0u, 0u);
      } else {
        raw[u] = j < geo.nvec ? __ldg(xv + j) : make_uint4(0u, 0u, 0u, 0u);
      }
    }
  };
  MaxSum acc;
  auto fold_step = [&](int j0, const uint4 (&raw)[U]) {
    float v[U][V];
    float cm = -INFINITY;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (j0 + u * THREADS < geo.nvec) {
        rows::unpack<T>(raw[u], v[u]);
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i) v[u][i] = -INFINITY;
      }
#pragma unroll
      for (int i = 0; i < V; ++i) cm = fmaxf(cm, v[u][i]);
    }
    const float m = fmaxf(acc.m, cm);
    const float sh = shift_of(m);
    float cs = 0.0f;
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int i = 0; i < V; ++i) cs += exp_shifted(v[u][i], sh);
    acc.s = acc.s * rescale(acc.m, m) + cs;
    acc.m = m;
  };
#if PASS1_PEEL
  uint4 raw[U];
  load_step(tid, raw);  // the first step's vectors in flight before the scalars are touched
#endif
  const float hv = tid < geo.head ? rows::to_float(xr[tid]) : -INFINITY;
  const float tv = tid < geo.tail ? rows::to_float(xr[tail0 + tid]) : -INFINITY;
  acc.m = fmaxf(hv, tv);
  acc.s = exp_shifted(hv, shift_of(acc.m)) + exp_shifted(tv, shift_of(acc.m));
#if PASS1_PEEL
  for (int j0 = tid; j0 < geo.nvec;) {
    fold_step(j0, raw);
    j0 += THREADS * U;
    if (j0 < geo.nvec) load_step(j0, raw);
  }
#else
  for (int j0 = tid; j0 < geo.nvec; j0 += THREADS * U) {
    uint4 raw[U];
    load_step(j0, raw);
    fold_step(j0, raw);
  }
#endif
  const MaxSum all = block_merge<THREADS>(acc, part_m, part_s);

  // Pass 2: y = exp(x - M) / S. An all -inf row has S = 0 and gives 0 * inf = NaN, like torch.
  const float sh = shift_of(all.m);
  const float inv = 1.0f / all.s;
  for (int j0 = tid; j0 < geo.nvec; j0 += THREADS * U) {
    uint4 raw[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {  // the last use of x: evict-first
      const int j = j0 + u * THREADS;
      raw[u] = j < geo.nvec ? __ldcs(xv + j) : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = j0 + u * THREADS;
      if (j < geo.nvec) {
        float v[V];
        rows::unpack<T>(raw[u], v);
#pragma unroll
        for (int i = 0; i < V; ++i) v[i] = exp_shifted(v[i], sh) * inv;
        rows::store_span<T>(yr + geo.head + (size_t)j * V, vec_out, v);
      }
    }
  }
  if (tid < geo.head) yr[tid] = rows::from_float<T>(exp_shifted(hv, sh) * inv);
  if (tid < geo.tail) yr[tail0 + tid] = rows::from_float<T>(exp_shifted(tv, sh) * inv);
}

// v2: row blockIdx.x.
template <typename T, int THREADS, int U>
__device__ __forceinline__ void online_row(const T* __restrict__ x, T* __restrict__ y, int N) {
  __shared__ float part_m[THREADS / 32], part_s[THREADS / 32];
  online_row_at<T, THREADS, U>(x, y, N, (size_t)blockIdx.x, part_m, part_s);
}

}  // namespace softmax

#ifndef SOFTMAX_NO_ENTRY_POINTS  // v4_dispatch and v14 include this file for its code alone
#include "online_instances.cuh"  // 512 threads, 2 blocks per SM; shared with v4_dispatch

// The names the op contract looks up.
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::online_row<float, 512, 4>(x, y, N); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::online_row<__nv_bfloat16, 512, 4>(x, y, N); }
#endif
