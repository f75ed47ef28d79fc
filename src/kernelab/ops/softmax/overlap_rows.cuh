// overlap_rows.cuh: softmax v17_overlap_rows's row loop (sm_90+): v12's clusters, ring and row handout, with
// each row's cluster exchange hidden behind the next row's sweep. A block's iteration i does
//   A. row i's statistics: its share read from stage i % S into registers as raw 16-byte vectors, the
//      thread's (max, sum of exps) (fast_exp.cuh's one FFMA + EX2 an element), merged over the warp and
//      pushed to every block of the cluster (pair buffer i % XB), with no wait;
//   B. row i - 1's output: its pairs (pushed during the previous iteration, by every block) merged into
//      the row's (M, S), its share read again from stage (i - 1) % S, y = exp(x - M) / S stored; then the
//      stage refilled with row i - 1 + S once every warp has read it.
// So a block waits for its peers only if one of them is a whole sweep behind, where v12 waits after every
// row for the slowest block of the cluster (ncu, session 28, 2048 x 131072: 22% of v12's bf16 and 34% of
// its fp32 stall samples sit on that one wait). The price: the share is read from shared memory twice and
// exponentiated twice (2 EX2 an element, v12's 1), and the ring holds one more row (S >= 3).
// Nothing is held in registers across a row but the raw vectors of pass A, so blocks of 512 threads fit
// two an SM.
//
// Pair buffers (XB = 4): row k's pairs go into buffer k % 4 of every block, counted on its xbar[k % 4]
// (armed by thread 0 in pass A(k), parity (k / 4) & 1). A peer pushes row k in its pass A(k) (iteration k),
// after its pass B(k - 2) (iteration k - 1), which waited for this block's row k - 2 pairs, pushed in this
// block's iteration k - 2, after its iteration k - 3, whose pass B(k - 4) read buffer k % 4: so no push
// lands in a buffer before its previous row's pairs are read, and every phase completes before the next
// row's first push (3 buffers would not do: pass A(k - 2) runs before pass B(k - 3) in one iteration).
// Stage release: each warp says it has read stage k % S (row k, pass B) on freed[k % S] (W arrivals a
// phase); thread 0 waits for the phase, then refills the stage. One barrier a stage, not one for all:
// a warp's next arrival on freed[k % S] is for row k + S, which it reaches only after that refill.
// Row handout (row_handout.cuh), v12's schedule one iteration later: row j's index is armed at iteration
// j - S, handed out by the leader at the end of iteration j - S - 1, read at iteration j and by thread 0's
// refill at iteration j - S + 1. A block is at most two iterations behind its leader here (pass B(k) needs
// every block's pass A(k)), so the slots are R = 2S + 2 (v12: 2S): a slot's previous row, j - 2S - 2, was
// read by every block before the leader, at iteration j - S - 1, can push row j into it.
// Exit: the first index >= M ends the loop after pass B of the last row; each block waits for the indices
// already pushed to it (rows i + 1 .. i + S), so nothing is in flight into a block that has gone; the last
// cluster resets the counters (handout::finish).
#pragma once
#include "softmax_common.cuh"
#include "fast_exp.cuh"
#include "cluster_exchange.cuh"
#include "bulk_ring.cuh"    // Chunk / chunk_of, stage_share, dynamic_smem_size
#include "row_handout.cuh"  // the row slots and the counter reset
#include "bulk_knobs.cuh"   // SB_STAGES, SB_THREADS, SB_BLOCKS_PER_SM

// fp32 values a thread holds in pass A (raw vectors: SB_ELEMS / V of them); op.py's plan keeps a share within it.
#ifndef SB_ELEMS
#define SB_ELEMS 64
#endif
static_assert(SB_ELEMS == 16 || SB_ELEMS == 32 || SB_ELEMS == 64, "SB_ELEMS: 16, 32 or 64 values a thread");
static_assert(SB_STAGES >= 3, "v17 reads a stage in two iterations: 3 stages or more");

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "softmax v17 needs sm_90 (cp.async.bulk, mbarrier transaction counts, clusters)"
#endif

namespace softmax {
namespace overlap {
using namespace ::softmax::cx;
using namespace ::softmax::ring;

constexpr int XB = 4;  // pair buffers: rows k .. k + 3 (see the proof above)

extern __shared__ __align__(128) uint4 ring[];

// Pass A: the thread's (max, sum) over its vectors of `stage` and its head / tail scalars h, t (-inf where
// it owns none); the sum is relative to the max and already carries fast_exp's fix.
template <typename T, int K>
__device__ __forceinline__ MaxSum share_stats(const uint4* stage, int tid, int cnt, float h, float t) {
  constexpr int THREADS = SB_THREADS, V = rows::Traits<T>::V;
  uint4 raw[K];
#pragma unroll
  for (int k = 0; k < K; ++k) raw[k] = tid + k * THREADS < cnt ? stage[tid + k * THREADS] : fexp::neg_inf_vec<T>();
  const float m = fexp::raw_max<T, K>(raw, fmaxf(h, t));
  const float sh = shift_of(m);
  float sc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  if (fexp::fast_ok(sh)) {
    const fexp::Base bs = fexp::base_of(sh);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      float f[V];
      rows::unpack<T>(raw[k], f);
#pragma unroll
      for (int v = 0; v < V; ++v) sc[v & 3] += fexp::exp_base(f[v], bs);
    }
    sc[0] += fexp::exp_base(h, bs) + fexp::exp_base(t, bs);
    return MaxSum{m, ((sc[0] + sc[1]) + (sc[2] + sc[3])) * bs.fix};
  }
#pragma unroll
  for (int k = 0; k < K; ++k) {  // +inf or NaN max, or |max| >= 2^20: (x - sh) first
    float f[V];
    rows::unpack<T>(raw[k], f);
#pragma unroll
    for (int v = 0; v < V; ++v) sc[v & 3] += exp_shifted(f[v], sh);
  }
  sc[0] += exp_shifted(h, sh) + exp_shifted(t, sh);
  return MaxSum{m, (sc[0] + sc[1]) + (sc[2] + sc[3])};
}

// Pass B's elements: y = exp(x - M) / S, as ex2(fma(x, LOG2E, -c)) * (fix / S) (fast_exp.cuh) where the
// shift allows it. An all -inf row has S = 0: 0 * inf = NaN everywhere, as torch.softmax; +inf or NaN in a
// row make S NaN.
struct Scale {
  fexp::Base bs;
  float sh, rs;
  bool fast;
};
__device__ __forceinline__ Scale scale_of(MaxSum row) {
  const float sh = shift_of(row.m);
  const bool fast = fexp::fast_ok(sh);
  const fexp::Base bs = fast ? fexp::base_of(sh) : fexp::Base{0.0f, 1.0f};
  return Scale{bs, sh, bs.fix / row.s, fast};
}
template <bool FAST>
__device__ __forceinline__ float y_of(float x, const Scale& sc) {
  return (FAST ? fexp::exp_base(x, sc.bs) : exp_shifted(x, sc.sh)) * sc.rs;
}

// Pass B's stores: the thread's vectors of `stage` (row xr / yr, share ch) as y.
template <typename T, int K, bool FAST>
__device__ __forceinline__ void share_out(const uint4* stage, int tid, const Chunk& ch, const T* xr, T* yr,
                                          const Scale& sc) {
  constexpr int THREADS = SB_THREADS, V = rows::Traits<T>::V;
  const bool vec_out = ((reinterpret_cast<unsigned long long>(xr) ^ reinterpret_cast<unsigned long long>(yr)) & 15) == 0;
  T* yv = yr + ch.geo.head + (size_t)ch.v0 * V;  // y's element at the share's first vector
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int j = tid + k * THREADS;
    if (j < ch.cnt) {
      float f[V];
      rows::unpack<T>(stage[j], f);
#pragma unroll
      for (int v = 0; v < V; ++v) f[v] = y_of<FAST>(f[v], sc);
      if (vec_out) {
        rows::st_global_16(yv + (size_t)j * V, rows::pack<T>(f));
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) yv[(size_t)j * V + v] = rows::from_float<T>(f[v]);
      }
    }
  }
}

template <typename T, int C>
__device__ __forceinline__ void overlap_rows(const T* __restrict__ x, T* __restrict__ y, int M, int N,
                                             unsigned* __restrict__ work) {
  constexpr int THREADS = SB_THREADS, S = SB_STAGES, W = THREADS / 32, V = rows::Traits<T>::V, K = SB_ELEMS / V;
  constexpr int R = 2 * S + 2;
  static_assert(C >= 2 && C <= 16, "C is 2 to 16 blocks a cluster");
  static_assert(K >= 1, "SB_ELEMS holds at least one 16-byte vector");
  __shared__ float2 pairs[XB][C * W];
  __shared__ alignas(8) unsigned long long full[S], freed[S], xbar[XB], rowbar[R];
  __shared__ unsigned row_of[R];

  const int stage_vecs = (N + V * C - 1) / (V * C);  // op.py's bulk_stage_bytes / 16
  if (dynamic_smem_size() < (unsigned)S * stage_vecs * 16u) __trap();  // launched without the ring
  if (stage_vecs > K * THREADS) __trap();  // a share wider than pass A's registers: op.py picks a larger C
  if (nctarank() != C) __trap();  // launched without cluster=C: fail loudly, not read a wrong peer
  const unsigned rank = ctarank();
  const int tid = threadIdx.x, lane = tid & 31;
  const bool leader = rank == 0 && tid == 0;
  const handout::Slots<C, R> handed{rowbar, row_of};
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < S; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&freed[s], W);
    }
#pragma unroll
    for (int b = 0; b < XB; ++b) mbar_init(&xbar[b], 1);
    handed.init();
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  sync_after_init<C>();
  // Prologue (v12's): rows 0 .. S taken, rows 0 .. S - 1 staged.
  if (tid == 0) {
#pragma unroll 1
    for (int j = 0; j < S; ++j) handed.arm(j);
  }
  if (leader) {
#pragma unroll 1
    for (int j = 0; j <= S; ++j) handed.hand(j, atomicAdd(&work[0], 1u));
  }
  if (tid == 0) {
#pragma unroll 1
    for (int j = 0; j < S; ++j) {
      const unsigned r = handed.index_of(j);
      if (r < (unsigned)M) stage_share<T, C>(ring, x, (int)r, N, rank, j, stage_vecs, full);
    }
  }

  unsigned prev = 0;                          // row i - 1's index
  float prev_h = -INFINITY, prev_t = -INFINITY;  // its head / tail scalars (this thread's, raw)
  int i = 0;
#pragma unroll 1
  for (;; ++i) {
    if (tid == 0) handed.arm(i + S);
    const unsigned r = handed.index_of(i);
    const bool have = r < (unsigned)M;
    unsigned next = 0u;
    float h = -INFINITY, t = -INFINITY;
    if (have) {  // A: row i's statistics, pushed
      next = leader ? atomicAdd(&work[0], 1u) : 0u;  // row i + S + 1, handed out at the end of the iteration
      const T* xr = x + (size_t)r * N;
      const Chunk ch = chunk_of<T, C>(xr, N, rank);
      if (rank == 0 && tid < ch.geo.head) h = rows::to_float(xr[tid]);
      if (rank == C - 1 && tid < ch.geo.tail) t = rows::to_float(xr[ch.geo.head + ch.geo.nvec * V + tid]);
      const int st = i % S;
      mbar_wait(&full[st], (i / S) & 1);
      const MaxSum w = warp_merge(share_stats<T, K>(ring + (size_t)st * stage_vecs, tid, ch.cnt, h, t));
      push_warp_pair<C, W>(w, pairs[i % XB], &xbar[i % XB], rank, tid, lane);
    }
    if (i > 0) {  // B: row i - 1's output, its stage refilled
      const int k = i - 1, st = k % S;
      const MaxSum row = merge_warp_pairs<C, W>(pairs[k % XB], &xbar[k % XB], (k / XB) & 1, lane);
      const T* xr = x + (size_t)prev * N;
      T* yr = y + (size_t)prev * N;
      const Chunk ch = chunk_of<T, C>(xr, N, rank);
      const Scale sc = scale_of(row);
      const uint4* stage = ring + (size_t)st * stage_vecs;
      if (sc.fast) {
        share_out<T, K, true>(stage, tid, ch, xr, yr, sc);
      } else {
        share_out<T, K, false>(stage, tid, ch, xr, yr, sc);
      }
      if (rank == 0 && tid < ch.geo.head) yr[tid] = rows::from_float<T>(sc.fast ? y_of<true>(prev_h, sc) : y_of<false>(prev_h, sc));
      if (rank == C - 1 && tid < ch.geo.tail) {
        yr[ch.geo.head + ch.geo.nvec * V + tid] = rows::from_float<T>(sc.fast ? y_of<true>(prev_t, sc) : y_of<false>(prev_t, sc));
      }
      __syncwarp();  // every lane's reads of the stage are done before lane 0 says so
      if (lane == 0) mbar_arrive(&freed[st]);
      if (tid == 0) {
        mbar_wait(&freed[st], (k / S) & 1);  // every warp has read the stage: refill it with row k + S
        const unsigned rn = handed.index_of(k + S);
        if (rn < (unsigned)M) stage_share<T, C>(ring, x, (int)rn, N, rank, st, stage_vecs, full);
      }
    }
    if (!have) break;
    if (leader) handed.hand(i + S + 1, next);
    prev = r;
    prev_h = h;
    prev_t = t;
  }
  // Drain: the indices already pushed for rows i + 1 .. i + S (none is a row < M).
  if (tid == 0) {
#pragma unroll 1
    for (int j = i + 1; j <= i + S; ++j) handed.index_of(j);
  }
  if (leader) handout::finish<C>(work);
}

}  // namespace overlap
}  // namespace softmax
