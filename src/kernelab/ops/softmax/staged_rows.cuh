// staged_rows.cuh: the row loop softmax v10_staged_regs, v11_group_regs and v12_dynamic_rows share
// (sm_90+): a block's share of each of its rows staged by a bulk copy in a ring of SB_STAGES stages
// of dynamic shared memory, read once into SB_ELEMS fp32 registers a thread (one EX2 an element,
// the exps kept), the stage refilled right after the block merge, then the C blocks' (max, sum)
// pairs exchanged (in clusters, since session 27, each warp's pair: SB_WARP_XCHG) and the row written
// from registers (one_row). The variants differ in who the C blocks of a row are, how they exchange
// (template argument X) and which rows they take:
//   Exchange::cluster (v10): a hardware cluster of C = 1, 2, 4, 8, 16; pairs pushed into every peer's
//     shared memory by st.async, counted on an mbarrier (cluster_exchange.cuh); rows q, q + Q, ...;
//   Exchange::group (v11): C = 1..16 ordinary blocks of a cooperative grid; pairs stored in global
//     memory and counted on the group's counter (group_exchange.cuh). Any C, so the groups fill
//     every SM where clusters leave some idle (H200: clusters of 4 SMs fit on 120 of 132);
//   dynamic_rows (v12): v10's clusters, each cluster's next row taken from a global counter.
// The knobs (SB_STAGES, SB_THREADS, SB_BLOCKS_PER_SM from bulk_knobs.cuh, SB_ELEMS) are the
// variant's header values, passed by op.py (bulk_defines); the defaults are only for a bare compile.
#pragma once
#include "softmax_common.cuh"
#include "fast_exp.cuh"      // SB_FAST_EXP's exps and maxima
#include "cluster_exchange.cuh"
#include "bulk_ring.cuh"  // Chunk / chunk_of (a block's share of a row), stage_share, dynamic_smem_size
#include "group_exchange.cuh"
#include "row_handout.cuh"     // v12's row slots and counter reset

#include "bulk_knobs.cuh"  // SB_STAGES, SB_THREADS, SB_BLOCKS_PER_SM (shared with v7)
#ifndef SB_ELEMS
#define SB_ELEMS 64
#endif

static_assert(SB_ELEMS == 16 || SB_ELEMS == 32 || SB_ELEMS == 64, "SB_ELEMS: 16, 32 or 64 fp32 values a thread");

// SB_WARP_XCHG (session 27; 1, the default; 0 builds the block merge as before): in clusters (C > 1), no block
// barrier and no block-level merge a row. Each warp pushes its own (max, sum) into every block of the cluster
// (C x W pairs a block, st.async as before, cluster_exchange.cuh's exchange_warp_pairs) and every warp merges
// them all; a row's chain loses a barrier and one of its three warp merges (~300 cycles of shuffle latency of
// ~7700). The stage is refilled once every warp of the block has said it read it (one mbarrier arrival a warp,
// xbar[2]; thread 0 waits on it), so the refill is as early as after the barrier. Measured (H200, sweep xchg27
// at 6c48d13, docs/runs/2026-12-02-h200-sweep_xchg27.json, v4_dispatch alternating twice, us): bf16 2048 x
// 131072 264.4 / 264.9 against 266.0 / 266.4
// (-0.6%), 4096 x 65536 265.4 / 264.9 against 265.6 / 265.3, fp32 2048 x 131072 529.5 / 528.8 against 529.9 /
// 529.8. Predicted bf16 -1 to -2%.
#ifndef SB_WARP_XCHG
#define SB_WARP_XCHG 1
#endif
// Blocks of at most 256 threads only (W <= 8): the slots, 2 x C x W pairs of static shared memory (2 KiB at C = 16),
// are what op.py's bulk_plan keeps off the ring's budget (staged_pairs_bytes); 512- and 1024-thread builds (knobs)
// keep the block merge (kWarpXchg<THREADS> below: the block's threads are a template argument since session 29).

// Ablations for timing only (scripts/sweep_membound_s12.py; they compute a wrong softmax by design
// and are never checked or picked): bit 1 no exchange between the C blocks (each block's own stats),
// bit 2 no EX2 (a linear stand-in), bit 8 no y stores. 0, the default, builds the kernel unchanged.
#ifndef SB_ABLATE
#define SB_ABLATE 0
#endif

// SB_FAST_EXP (session 27; 1, the default; 0 builds the sweep as measured before): the one sweep in
// fewer instructions an element, for this latency-bound loop (ncu, session 23: 48% of issue slots, ~7.5
// cycles a warp instruction). exp(x - sh) as ex2(fma(x, LOG2E, -c)), c = fl(sh LOG2E): one FFMA where
// (x - sh) * LOG2E took FADD + FMUL. c's rounding, c_lo = sh LOG2E - c (exact by one more fma), is the
// same for all of a thread's exps; it comes back as one factor 2^-c_lo a thread and row on its sum
// and on r, so nothing is lost (|sh| < 2^20 keeps |c_lo| <= 1/16; wider shifts, +inf and NaN maxima
// take the FADD + FMUL path). bf16: the max over the raw packed pairs (max.bf16x2, three-input
// VHMNMX in SASS: a quarter of the instructions, exact); the max and the sum in four chains, not one
// of 64. sm_90 bf16 c8: 437 -> 346 SASS instructions from the first LDS.128 to the warp merge.
// Measured (H200, sweep fast27 at 7855d4a, docs/runs/2026-12-02-h200-sweep_fast27.json, v4_dispatch,
// alternating twice, us): bf16 2048 x 131072 (v14) 267.6 / 267.6 against 269.1 / 270.0 (-0.8%),
// 4096 x 65536 (v12) 265.6 / 265.8 against 269.6 / 269.7 (-1.5%); fp32 2048 x 131072 529.9 / 530.4
// against 529.5 / 530.1 (none); 1024 x 262144 bf16 (v16, not built from this file) 278.3 / 277.6
// against 277.6 / 277.2. Predicted bf16 -2 to -4%: a row's chain is not all of its time.
#ifndef SB_FAST_EXP
#define SB_FAST_EXP 1
#endif

// SB_HANDOUT (session 31; v12's row handout, dynamic_rows): 0 builds it as measured before (each leader takes its
// first S + 1 rows by S + 1 serial atomics before its first bulk copy can be issued, and the last cluster out fences
// and counts itself at exit); 1 hands the first S + 1 rows out statically (cluster q takes q, q + G, .., q + S G: no
// atomic before the first copy) and counts clusters in the counter's own word (row_handout.cuh's WordTaker: no
// fence, the "done" count issued at the cluster's last claim, not at exit); 2 the word alone (the first rows still
// by atomics). Why: scripts/probe_rows31.py (session 31) fits v4's time at M x 131072 as a + b M: b is 0.984x
// (bf16) / 0.975x (fp32) a copy's per-row time, a is ~7.8 / ~5.8 us above the copy's, and at 2048 rows that fixed
// part is most of the gap to 0.97x. v14's grids (clusters != 0) keep the atomics (their side grid shares the counter).
// Predicted: 1-3 us off a for 1, about half of that for 2. Measured (H200, probe_rows31 --handout, v4 built three ways,
// alternating with copy_ three times at M = 512 / 1024 / 2048, docs/runs/2026-12-03-h200-probe_rows31_handout.log):
// no gain. a stays (bf16 7.24 / 7.59 / 7.62 us for 0 / 1 / 2, fp32 6.86 / 7.03 / 8.31); at 2048 rows bf16 263.2 /
// 262.1 / 262.6 us (-0.4% for 1, inside the rounds' spread), fp32 519.7 / 520.2 / 522.8. So the first rows' atomics
// and the last cluster's fence are not the fixed part; 0 stays the default (every instance's SASS is unchanged).
#ifndef SB_HANDOUT
#define SB_HANDOUT 0
#endif
static_assert(SB_HANDOUT >= 0 && SB_HANDOUT <= 2, "SB_HANDOUT: 0 (as before), 1 (static head + word), 2 (word)");

// SB_TRACE (session 32; 0, the default, builds nothing of it): v12's row loop (dynamic_rows) writes %globaltimer
// stamps from each block's thread 0 into the `work` buffer past its two counters (scripts/probe_trace32.py allocates
// it; op.py's 8-byte counters are too small: never launch a trace build through op.launch). Per block, SB_TRACE_STRIDE
// 8-byte words from word 16: [0] entry, [1] past the barrier init, [2] the first stages issued, [3] exit, [4] %smid,
// [5] rows taken; then per row i < SB_TRACE_ROWS four: the stage landed (thread 0 waits for it before one_row, whose
// own wait then passes at once), the stage read by every warp (the refill point), the row's stores issued by thread 0,
// the row's index. Why: where a row's chain and the kernel's fill and drain spend the fixed ~8 us of session 31's fit.
// Word 15 must hold SB_TRACE_MAGIC (the probe writes it): a trace build launched on op.launch's counters traps at
// entry instead of writing past them (word 15 is still inside the allocator's 512-byte block that holds them).
#ifndef SB_TRACE
#define SB_TRACE 0
#endif
#define SB_TRACE_MAGIC 0x6b6c2d7472616365ull  // "kl-trace"
#define SB_TRACE_ROWS 160
#define SB_TRACE_STRIDE (8 + 4 * SB_TRACE_ROWS)

// SB_FILL (session 32; v12's dynamic_rows): 0 builds the prologue as measured before (thread 0 issues all S stages at
// once); 1 issues stage 0 alone and the other S - 1 once stage 0 has landed (thread 0, before row 0's sweep). Why:
// scripts/probe_trace32.py's stamps (docs/runs/2026-12-03-h200-probe_trace32.log) show every cluster's first row
// landing only when all of its stages have: bf16 2048 x 131072 issues 30 x 2 stages (15.7 MB, ~3.6 us of the copy
// rate) at once and its first rows land ~3.8 us later, so no y is written and no stage refilled before ~6 us. One
// stage first lands in about half the time and the second is in flight under row 0's sweep. Predicted -1 to -2 us
// (bf16) / -2 to -3 us (fp32). Measured (H200, probe_trace32.py --fill, alternating with copy_ three times, medians,
// docs/runs/2026-12-03-h200-probe_trace32_fill.log): bf16 264.2 us against 263.8, fp32 520.8 against 521.8 (-0.2%,
// inside the spread); the first rows land ~1-2 us sooner and the end does not move (the drain sets it: NOTES,
// session 32). 0 stays the default.
#ifndef SB_FILL
#define SB_FILL 0
#endif
static_assert(SB_FILL == 0 || SB_FILL == 1, "SB_FILL: 0 (all stages at once) or 1 (stage 0 first)");

// The launch bounds' minimum blocks an SM for the instances of v10-v12. The rows are built for two
// 256-thread blocks an SM wherever the ring leaves room, which needs <= 128 registers a thread. ptxas
// for sm_90 stays within 128 by itself, and there the bound stays the header's SB_BLOCKS_PER_SM: a cap
// of 128 changes the sm_90 SASS (fp32 instances drop from 113 to 99 registers), and the H200 build is
// the measured one. Elsewhere SB_BLOCKS_PER_SM is raised to 512 / SB_THREADS (2 at 256 threads), a
// 128-register cap: without it, ptxas gave the fp32 instances 152-154 registers on sm_100 (132-135 on
// sm_120), one block an SM where the ring has room for two (v4_dispatch's fp32 rows of 131073-196608
// on sm_100; occupancy calculator, tests/cpu/test_softmax_bulk.py). Unmeasured: no such GPU here.
// A sweep may set it (scripts/sweep_membound_s11.py, SWEEP_SET=regcap: the cap on the H200).
// SB_MIN_BLOCKS_AT(t): the same bound for an instance of t threads a block (v4_dispatch's 128-thread ones).
#if __CUDA_ARCH__ == 900
#define SB_MIN_BLOCKS_AT(t) SB_BLOCKS_PER_SM
#else
#define SB_MIN_BLOCKS_AT(t) (SB_BLOCKS_PER_SM > 512 / (t) ? SB_BLOCKS_PER_SM : 512 / (t))  // 1024 threads: the header's
#endif
#ifndef SB_MIN_BLOCKS
#define SB_MIN_BLOCKS SB_MIN_BLOCKS_AT(SB_THREADS)
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "softmax's staged rows (v10-v12) need sm_90 (cp.async.bulk, mbarrier transaction counts, clusters)"
#endif

namespace softmax {
namespace staged {
using namespace ::softmax::cx;    // ctarank, mbar_*, push_pair (cluster_exchange.cuh)
using namespace ::softmax::ring;  // Chunk, chunk_of, stage_share, dynamic_smem_size (bulk_ring.cuh)

enum class Exchange { cluster, group };

// SB_TRACE's stamp: word w of this block's record in `work` (see the knob).
__device__ __forceinline__ void trace_stamp(unsigned* work, int w, unsigned long long v) {
  reinterpret_cast<unsigned long long*>(work)[16 + (size_t)blockIdx.x * SB_TRACE_STRIDE + w] = v;
}
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

extern __shared__ __align__(128) uint4 ring[];

// SB_WARP_XCHG in a block of THREADS threads (at most 256: W <= 8), and the pair slots such a block holds a
// row: C blocks, or C blocks x W warps with the per-warp exchange.
template <int THREADS>
constexpr bool kWarpXchg = SB_WARP_XCHG && THREADS <= 256;
template <int C, int THREADS>
constexpr int kPairs = C * (kWarpXchg<THREADS> ? THREADS / 32 : 1);

// SB_FAST_EXP's sweep (see the knob; fast_exp.cuh): the thread's vectors of the stage into f (exps
// relative to its max m), h / t (its head / tail scalars, exp'd alike), s their sum, fix = 2^-c_lo.
// FULL (the `_full` instances): every thread holds K whole vectors and no scalars (h, t untouched).
template <typename T, int K, int THREADS = SB_THREADS, bool FULL = false>
__device__ __forceinline__ void fast_sweep(const uint4* stage, int tid, int cnt, float (&f)[K][rows::Traits<T>::V],
                                           float& h, float& t, float& m, float& s, float& fix) {
  constexpr int V = rows::Traits<T>::V;
  if constexpr (V == 8) {  // bf16: the max on the raw pairs, then unpacked
    uint4 raw[K];
#pragma unroll
    for (int k = 0; k < K; ++k)
      raw[k] = FULL || tid + k * THREADS < cnt ? stage[tid + k * THREADS] : fexp::neg_inf_vec<T>();
    m = fexp::raw_max<T, K>(raw, m);
#pragma unroll
    for (int k = 0; k < K; ++k) rows::unpack<T>(raw[k], f[k]);
  } else {  // fp32: unpacking is free; the max in four chains
    float mc[4] = {m, -INFINITY, -INFINITY, -INFINITY};
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (FULL || tid + k * THREADS < cnt) {
        rows::unpack<T>(stage[tid + k * THREADS], f[k]);
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) f[k][v] = -INFINITY;
      }
#pragma unroll
      for (int v = 0; v < V; ++v) mc[v & 3] = fmaxf(mc[v & 3], f[k][v]);
    }
    m = fmaxf(fmaxf(mc[0], mc[1]), fmaxf(mc[2], mc[3]));
  }
  const float sh = shift_of(m);
  float sc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  if (fexp::fast_ok(sh)) {
    const fexp::Base bs = fexp::base_of(sh);
    fix = bs.fix;
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int v = 0; v < V; ++v) {
        f[k][v] = fexp::exp_base(f[k][v], bs);
        sc[v & 3] += f[k][v];
      }
    if constexpr (!FULL) {
      h = fexp::exp_base(h, bs);
      t = fexp::exp_base(t, bs);
    }
  } else {  // +inf or NaN max, or |max| >= 2^20: (x - sh) first, as exp_shifted
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int v = 0; v < V; ++v) {
        f[k][v] = exp_shifted(f[k][v], sh);
        sc[v & 3] += f[k][v];
      }
    if constexpr (!FULL) {
      h = exp_shifted(h, sh);
      t = exp_shifted(t, sh);
    }
  }
  s = (sc[0] + sc[1]) + (sc[2] + sc[3]);
}

// Row `row`, the i-th of this block's loop, from stage i % S: the one sweep into registers, the
// block merge, refill() (the caller's: the next row into the stage just freed), the exchange,
// y from registers. The shared arrays are the caller's (one set per kernel).
// THREADS, S: the block's threads and the ring's stages (default the SB_THREADS / SB_STAGES knobs; v4_dispatch
// also builds 128-thread, 3-stage clusters of 16 for fp32: dynamic_rows).
// FULL (dynamic_rows' `_full` instances, session 28; again in session 29): the row is exactly C x THREADS x E
// elements and x, y start 16-byte aligned (the launcher's promise; dynamic_rows traps otherwise), so every thread
// holds E values as K whole vectors: no row geometry, head / tail scalars, per-vector predicates or scalar stores.
template <typename T, int C, Exchange X, int E = SB_ELEMS, int THREADS = SB_THREADS, int S = SB_STAGES,
          bool FULL = false, typename Refill>
__device__ __forceinline__ void one_row(const T* __restrict__ x, T* __restrict__ y, int N, int row, int i, unsigned rank,
                                        int stage_vecs, unsigned long long* full, float (*part_m)[THREADS / 32],
                                        float (*part_s)[THREADS / 32], float2 (*pairs)[kPairs<C, THREADS>],
                                        unsigned long long* xbar, unsigned* __restrict__ counters,
                                        float2* __restrict__ slots, int q, Refill&& refill) {
  constexpr int V = rows::Traits<T>::V, K = E / V;
  const int tid = threadIdx.x, lane = tid & 31, st = i % S;
  const T* xr = x + (size_t)row * N;
  T* yr = y + (size_t)row * N;
  const Chunk ch = FULL ? Chunk{rows::Geometry{0, N / V, 0}, static_cast<int>(rank) * K * THREADS, K * THREADS}
                        : chunk_of<T, C>(xr, N, rank);
  const bool own_h = !FULL && rank == 0 && tid < ch.geo.head;
  const bool own_t = !FULL && rank == C - 1 && tid < ch.geo.tail;
  const int t_at = ch.geo.head + ch.geo.nvec * V + tid;
  float h = own_h ? rows::to_float(xr[tid]) : -INFINITY;
  float t = own_t ? rows::to_float(xr[t_at]) : -INFINITY;
  const uint4* stage = ring + (size_t)st * stage_vecs;
  mbar_wait(&full[st], (i / S) & 1);

  // The one sweep: K vectors a thread into fp32 registers (-inf where it owns none), its max.
  float f[K][V];
  float m = fmaxf(h, t);
  float fix = 1.0f;  // SB_FAST_EXP: the thread's 2^-c_lo, on its sum and on r
  float s = 0.0f;
  if constexpr (SB_FAST_EXP && !(SB_ABLATE & 2)) {
    fast_sweep<T, K, THREADS, FULL>(stage, tid, ch.cnt, f, h, t, m, s, fix);
  } else {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int j = tid + k * THREADS;
      if (FULL || j < ch.cnt) {
        rows::unpack<T>(stage[j], f[k]);
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) f[k][v] = -INFINITY;
      }
#pragma unroll
      for (int v = 0; v < V; ++v) m = fmaxf(m, f[k][v]);
    }
    // Exps in place (-inf -> 0) and their sum, relative to the thread's max.
    const float sh = shift_of(m);
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int v = 0; v < V; ++v) {
        f[k][v] = (SB_ABLATE & 2) ? (f[k][v] - sh) * LOG2E : exp_shifted(f[k][v], sh);
        s += f[k][v];
      }
    if constexpr (!FULL) {
      h = exp_shifted(h, sh);
      t = exp_shifted(t, sh);
    }
  }
  const int b = i & 1;
  // kWarpXchg: each warp's pair to the cluster, no block barrier (SB_WARP_XCHG's comment above).
  constexpr bool kWarpX = kWarpXchg<THREADS> && X == Exchange::cluster && C > 1 && !(SB_ABLATE & 1);
  MaxSum all;
  if constexpr (FULL) s = s * fix;  // no scalars: h and t are still -inf here
  else s = (s + h + t) * fix;
  if constexpr (kWarpX) {
    all = warp_merge(MaxSum{m, s});
    if (lane == 0) mbar_arrive(&xbar[2]);  // this warp has read the stage
    if (tid == 0) mbar_wait(&xbar[2], i & 1);  // every warp has: refill it
    refill();
    all = exchange_warp_pairs<C, THREADS / 32>(all, pairs, xbar, rank, i, tid, lane);
  } else {
    all = block_merge<THREADS>(MaxSum{m, s}, part_m[b], part_s[b]);
    // Every thread has read the stage (it is past the merge's barrier): refill it now.
    refill();
  }
  if constexpr (!kWarpX && X == Exchange::cluster && C > 1 && !(SB_ABLATE & 1)) {
    all = exchange_pairs<C>(all, pairs, xbar, rank, i, tid, lane);  // cluster_exchange.cuh
  } else if constexpr (X == Exchange::group && C > 1 && !(SB_ABLATE & 1)) {
    float2* pq = slots + ((size_t)q * 2 + b) * C;
    unsigned* counter = counters + (size_t)q * gx::COUNTER_STRIDE;
    if (tid == 0) {
      gx::st_pair(pq + rank, make_float2(all.m, all.s));
      gx::red_release_add(counter, 1u);  // orders the pair store before the count
    }
    const float2 p = gx::wait_pairs<C>(counter, static_cast<unsigned>(C) * static_cast<unsigned>(i + 1), pq, lane);
    all = warp_merge(MaxSum{p.x, p.y});  // rank order: the same bits in every warp of every block
  }

  // y = e x r. A row with NaN or +inf has S = NaN; an all -inf row has S = 0 and r = 0 / 0:
  // NaN everywhere, as torch.softmax.
  const float r = rescale(m, all.m) / all.s * fix;
  const bool vec_out =
      FULL || ((reinterpret_cast<unsigned long long>(xr) ^ reinterpret_cast<unsigned long long>(yr)) & 15) == 0;
  T* yv = yr + ch.geo.head + (size_t)ch.v0 * V;  // y's element at the share's first vector
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int j = tid + k * THREADS;
    if ((FULL || j < ch.cnt) && !(SB_ABLATE & 8)) {
#pragma unroll
      for (int v = 0; v < V; ++v) f[k][v] *= r;
      if (vec_out) {
        rows::st_global_16(yv + (size_t)j * V, rows::pack<T>(f[k]));
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) yv[(size_t)j * V + v] = rows::from_float<T>(f[k][v]);
      }
    }
  }
  if (own_h) yr[tid] = rows::from_float<T>(h * r);
  if (own_t) yr[t_at] = rows::from_float<T>(t * r);
}

// Rows q, q + Q, ... for cluster (or group) q of Q; row i of it in stage i % S, phase (i / S) & 1.
// The stage of row i is refilled with row i + S right after row i's block merge: the merge's
// barrier is the first point at which every thread has copied its vectors of the stage into
// registers. Every copy issued is waited for by a later row, so none is in flight at exit.
// Cluster exchange (C > 1): v5's, buffers b = i & 1, parity (i >> 1) & 1. Its proof (v5's
//   cluster_rows) needs only that a block pushes row i's pair after row i's block barrier, which
//   every thread reaches after reading row i - 1's pairs: true here (push after block_merge).
//   part_m/part_s are double-buffered by row parity for the same reason.
// Group exchange (C > 1): thread 0 stores the block's pair of row i in slots[q][i & 1][rank] and
//   adds 1 to counters[q] (release); every warp's lanes < C wait for counters[q] >= C (i + 1)
//   (acquire) and read the C pairs, merged in rank order: every block gets the same bits.
//   Why the count means "all C row-i pairs": thread 0 publishes row i + 1 after row i + 1's block
//   merge, whose barrier every warp passes after its own wait for row i; so no block has more than
//   k + 1 arrivals before every block's row k is in. Why parity slots are safe: a block overwrites
//   its slot of parity b with row i + 2's pair after its wait for row i + 1, which needs every peer's
//   row i + 1 arrival, which each peer makes after the barrier its warps pass only after reading
//   row i's pairs. No deadlock: the grid is co-resident (a cooperative launch) and no wait crosses
//   groups. The counters start at 0 (op.py zeroes them before each launch).
template <typename T, int C, Exchange X = Exchange::cluster>
__device__ __forceinline__ void staged_rows(const T* __restrict__ x, T* __restrict__ y, int M, int N,
                                            unsigned* __restrict__ counters = nullptr,
                                            float2* __restrict__ slots = nullptr) {
  constexpr int THREADS = SB_THREADS, S = SB_STAGES, V = rows::Traits<T>::V, K = SB_ELEMS / V;
  static_assert(X == Exchange::group ? C >= 1 && C <= 16 : C == 1 || C == 2 || C == 4 || C == 8 || C == 16,
                "C is 1, 2, 4, 8 or 16 blocks a cluster, 1..16 a group");
  static_assert(K >= 1, "SB_ELEMS holds at least one 16-byte vector");
  __shared__ float part_m[2][THREADS / 32], part_s[2][THREADS / 32];
  __shared__ float2 pairs[2][kPairs<C, THREADS>];
  __shared__ alignas(8) unsigned long long full[S];
  __shared__ alignas(8) unsigned long long xbar[kWarpXchg<THREADS> ? 3 : 2];  // [2]: "the stage is read"

  const int stage_vecs = (N + V * C - 1) / (V * C);  // op.py's bulk_stage_bytes / 16
  if (dynamic_smem_size() < (unsigned)S * stage_vecs * 16u) __trap();  // launched without the ring
  if (stage_vecs > K * THREADS) __trap();  // a share wider than the registers: op.py picks a larger C
  unsigned rank = 0;
  if constexpr (X == Exchange::group) {
    if (gridDim.x % C != 0) __trap();  // not the plan's grid of whole groups: fail loudly
    rank = blockIdx.x % C;
  } else if constexpr (C > 1) {
    if (nctarank() != C) __trap();  // launched without cluster=C: fail loudly, not read a wrong peer
    rank = ctarank();
  }
  const int tid = threadIdx.x;
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < S; ++s) mbar_init(&full[s], 1);
    if constexpr (X == Exchange::cluster) {
      mbar_init(&xbar[0], 1);
      mbar_init(&xbar[1], 1);
      if constexpr (kWarpXchg<THREADS>) mbar_init(&xbar[2], THREADS / 32);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  sync_after_init<X == Exchange::cluster ? C : 1>();  // cluster_exchange.cuh
  const int q = blockIdx.x / C, Q = gridDim.x / C;
  if (q >= M) return;  // the whole cluster / group (all its blocks have the same q)
  const int rows_mine = (M - 1 - q) / Q + 1;
  if (tid == 0) {
#pragma unroll 1
    for (int i = 0; i < S && i < rows_mine; ++i) stage_share<T, C>(ring, x, q + i * Q, N, rank, i, stage_vecs, full);
  }

#pragma unroll 1
  for (int i = 0; i < rows_mine; ++i) {
    const int st = i % S;
    one_row<T, C, X>(x, y, N, q + i * Q, i, rank, stage_vecs, full, part_m, part_s, pairs, xbar, counters, slots, q, [&] {
      if (tid == 0 && i + S < rows_mine) stage_share<T, C>(ring, x, q + (i + S) * Q, N, rank, st, stage_vecs, full);
    });
  }
}

// v12: rows handed out at run time. A cluster's leader (rank 0, thread 0) takes the next row from
// a global counter (work[0], one atomicAdd at the start of a row, used after its merge) S + 1 rows
// ahead of its use and pushes the index into every block of its cluster (st.async into
// row_of[j % 2S], 4 bytes counted on rowbar[j % 2S]);
// so the rows in flight are always the lowest ones not yet taken, wherever each cluster is
// (static order: cluster q takes q, q + Q, ... and the clusters drift apart). Rows are taken in
// increasing order, so the first index >= M ends the loop, with no copy in flight.
// Slots: row j's index lands in slot j % 2S, armed (expect 4 bytes) by each block at its iteration
//   j - S and pushed by the leader after its merge of row j - S - 1; its previous occupant, row
//   j - 2S, was read at iteration j - 2S (and by thread 0's refill at j - 3S); a block is at most one
//   row behind or ahead of its leader (the exchange couples them), so neither the push nor the arm
//   can overtake an unread phase (S >= 2). C = 1: the row's block barrier publishes thread 0's write.
// Exit: before leaving, every block waits for the slots of rows i + 1 .. i + S (the pushes already
//   made), so no st.async is in flight into a block that has gone. The last cluster to finish
//   (work[1], counted after a fence) puts both counters back to 0 for the next launch on the stream.
// E: fp32 values a thread holds (default the SB_ELEMS knob; v4_dispatch also builds E = 32 clusters
// of 16 for fp32 rows of up to 131072, beside the SB_ELEMS instances).
// clusters: how many clusters take rows from `work` (0: this grid's, gridDim.x / C; v14_split_grid
// passes its two grids' total, since the last of them resets the counters).
// THREADS, S: the block's threads and the ring's stages (default the knobs; v4_dispatch's softmax_dy_t128_c16_*
// are 128 threads, 3 stages: DISPATCH_BULK_T128 in op.py).
// FULL: one_row's (the `_full` instance, softmax_dy_t128_c16_full_f32): rows of exactly C x THREADS x E elements,
// x and y 16-byte aligned (op.py's dynamic_full decides; the kernel traps on any other row).
template <typename T, int C, int E = SB_ELEMS, int THREADS = SB_THREADS, int S = SB_STAGES, bool FULL = false>
__device__ __forceinline__ void dynamic_rows(const T* __restrict__ x, T* __restrict__ y, int M, int N,
                                             unsigned* __restrict__ work, unsigned clusters = 0u) {
  static_assert(THREADS == 128 || THREADS == 256 || THREADS == 512 || THREADS == 1024, "THREADS: 128 to 1024");
  static_assert(S >= 2 && S <= 8, "S: 2..8 stages");
  // The row handout's slot proof (above) needs the exchange: without it a block may fall more than a row behind its
  // leader, whose pushes then overwrite slots it has not read (session 28: v4 with SB_ABLATE 1 faulted).
  static_assert(!(SB_ABLATE & 1), "SB_ABLATE bit 1 (no exchange) breaks v12's row handout: ablate v10 (static rows)");
  if constexpr (SB_TRACE) {
    if (threadIdx.x == 0) {
      if (reinterpret_cast<const unsigned long long*>(work)[15] != SB_TRACE_MAGIC) __trap();  // not a trace buffer
      trace_stamp(work, 0, global_ns());
    }
  }
  constexpr int V = rows::Traits<T>::V, K = E / V, R = 2 * S;
  // Any C of 1..16 is correct (chunk_of splits a row over any C); op.py's plans use powers of two,
  // scripts/cluster_shapes.py measures others (whole clusters fill more of an SM's block slots).
  static_assert(C >= 1 && C <= 16, "C is 1 to 16 blocks a cluster");
  static_assert(K >= 1, "SB_ELEMS holds at least one 16-byte vector");
  __shared__ float part_m[2][THREADS / 32], part_s[2][THREADS / 32];
  __shared__ float2 pairs[2][kPairs<C, THREADS>];
  __shared__ alignas(8) unsigned long long full[S];
  __shared__ alignas(8) unsigned long long xbar[kWarpXchg<THREADS> ? 3 : 2];  // [2]: "the stage is read"
  __shared__ alignas(8) unsigned long long rowbar[R];
  __shared__ unsigned row_of[R];

  const int stage_vecs = (N + V * C - 1) / (V * C);
  if (dynamic_smem_size() < (unsigned)S * stage_vecs * 16u) __trap();  // launched without the ring
  if (stage_vecs > K * THREADS) __trap();  // a share wider than the registers: op.py picks a larger C
  if constexpr (FULL) {  // not the row the instance is built for: fail loudly, not write a wrong one
    if (N != C * THREADS * E || ((reinterpret_cast<unsigned long long>(x) | reinterpret_cast<unsigned long long>(y)) & 15))
      __trap();
  }
  unsigned rank = 0;
  if constexpr (C > 1) {
    if (nctarank() != C) __trap();  // launched without cluster=C: fail loudly, not read a wrong peer
    rank = ctarank();
  }
  const int tid = threadIdx.x;
  const bool leader = rank == 0 && tid == 0;
  const handout::Slots<C, R> handed{rowbar, row_of};  // row_handout.cuh
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < S; ++s) mbar_init(&full[s], 1);
    mbar_init(&xbar[0], 1);
    mbar_init(&xbar[1], 1);
    if constexpr (kWarpXchg<THREADS>) mbar_init(&xbar[2], THREADS / 32);
    handed.init();
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  sync_after_init<C>();  // cluster_exchange.cuh
  if constexpr (SB_TRACE) {
    if (tid == 0) trace_stamp(work, 1, global_ns());
  }
  // Prologue: rows 0 .. S taken (S + 1: one ahead of the refills), rows 0 .. S - 1 staged.
  if (tid == 0) {
#pragma unroll 1
    for (int j = 0; j < S; ++j) handed.arm(j);
  }
  // SB_HANDOUT's word (v12 alone: v14's side grid takes from the same counter with 4-byte atomics).
  const bool word = SB_HANDOUT != 0 && clusters == 0u;
  const unsigned G = gridDim.x / C;  // this grid's clusters
  handout::WordTaker taker{reinterpret_cast<unsigned long long*>(work), static_cast<unsigned>(M),
                           SB_HANDOUT == 1 ? static_cast<unsigned>(S + 1) * G : 0u};
  if (leader) {
    if (word && (reinterpret_cast<unsigned long long>(work) & 7)) __trap();  // the word needs 8-byte alignment
    if (word && SB_HANDOUT == 1) {
      const unsigned q = blockIdx.x / C;  // the cluster's index (1-D clusters: C consecutive blocks)
#pragma unroll 1
      for (int j = 0; j <= S; ++j) handed.hand(j, static_cast<unsigned>(j) * G + q);
      taker.after(q);  // done at once if even its first row is past M (it will never claim)
    } else if (word) {
#pragma unroll 1
      for (int j = 0; j <= S; ++j) {
        const unsigned r = taker.row_of(taker.claim());
        handed.hand(j, r);
        taker.after(r);
      }
    } else {
#pragma unroll 1
      for (int j = 0; j <= S; ++j) handed.hand(j, atomicAdd(&work[0], 1u));
    }
  }
  if constexpr (C == 1) __syncthreads();  // row_of written by thread 0
  // Thread 0: the cluster's j-th row (its slot's index, once pushed) into stage st, unless it is past the last row.
  const auto stage_slot = [&](int j, int st) {
    const unsigned r = handed.index_of(j);
    if (r < (unsigned)M) stage_share<T, C>(ring, x, (int)r, N, rank, st, stage_vecs, full);
  };
  if (tid == 0) {
#pragma unroll 1
    for (int j = 0; j < (SB_FILL ? 1 : S); ++j) stage_slot(j, j);
  }
  if constexpr (SB_TRACE) {
    if (tid == 0) trace_stamp(work, 2, global_ns());
  }

  int i = 0;
#pragma unroll 1
  for (;; ++i) {
    if (tid == 0) handed.arm(i + S);
    const unsigned r = handed.index_of(i);
    if (r >= (unsigned)M) break;
    // Row i + S + 1 for the leader to hand out after the merge: the atomic's round trip (~1 us)
    // runs under the row's sweep instead of stalling warp 0 before it.
    const unsigned next = leader && !word ? atomicAdd(&work[0], 1u) : 0u;
    const unsigned long long claimed = leader && word ? taker.claim() : 0ull;
    const int st = i % S;
    if constexpr (SB_FILL) {  // stages 1 .. S - 1, once row 0 (which is < M: the loop did not break) has landed
      if (tid == 0 && i == 0) {
        mbar_wait(&full[0], 0);
#pragma unroll 1
        for (int j = 1; j < S; ++j) stage_slot(j, j);
      }
    }
    if constexpr (SB_TRACE) {
      if (tid == 0 && i < SB_TRACE_ROWS) {
        mbar_wait(&full[st], (i / S) & 1);
        trace_stamp(work, 8 + 4 * i, global_ns());
        trace_stamp(work, 8 + 4 * i + 3, r);
      }
    }
    one_row<T, C, Exchange::cluster, E, THREADS, S, FULL>(x, y, N, (int)r, i, rank, stage_vecs, full, part_m, part_s,
                                                          pairs, xbar, nullptr, nullptr, 0, [&] {
      if constexpr (SB_TRACE) {
        if (tid == 0 && i < SB_TRACE_ROWS) trace_stamp(work, 8 + 4 * i + 1, global_ns());
      }
      if (leader && word) {
        const unsigned rn = taker.row_of(claimed);
        handed.hand(i + S + 1, rn);
        taker.after(rn);
      } else if (leader) {
        handed.hand(i + S + 1, next);
      }
      if (tid == 0) stage_slot(i + S, st);
    });
    if constexpr (SB_TRACE) {
      if (tid == 0 && i < SB_TRACE_ROWS) trace_stamp(work, 8 + 4 * i + 2, global_ns());
    }
  }
  // Drain: the indices already pushed for rows i + 1 .. i + S (none is a row < M).
  if constexpr (C > 1) {
    if (tid == 0) {
#pragma unroll 1
      for (int j = i + 1; j <= i + S; ++j) handed.index_of(j);
    }
  }
  if (leader) {
    if (word) {
      taker.finish(G);
    } else if (clusters) {
      handout::finish_of(work, clusters);
    } else {
      handout::finish<C>(work);
    }
  }
  if constexpr (SB_TRACE) {
    if (tid == 0) {
      unsigned smid;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
      trace_stamp(work, 4, smid);
      trace_stamp(work, 5, static_cast<unsigned long long>(i));
      trace_stamp(work, 3, global_ns());
    }
  }
}

}  // namespace staged
}  // namespace softmax
