// probe_defer30.cu (session 30; scripts/probe_defer30.py builds and times it, and its docstring holds what it
// measured: slower than v4's clusters in every form). Softmax's wide rows split into units of ordinary blocks (no
// clusters), each unit's (max, sum) pair exchanged through global memory and waited for D units later, so the wait
// sits behind the next units' sweeps instead of on the row's chain.
//
// Unit u (of U = M x nch) is elements [u CH, (u + 1) CH) of x: chunk u % nch of row u / nch, CH = THREADS x K x V
// (K 16-byte vectors a thread), N a multiple of CH, nch <= 32, x and y 16-byte aligned (a probe: no other rows).
// Block b takes units b, b + G, b + 2G, ... (static: a block's units are in distinct rows since G >= nch). A ring
// of S slots holds D units waiting for pass B, the unit in pass A and P = S - D - 1 staged ahead. Iteration k:
//   pass A, unit k: wait for its bulk copy (slot k % S), the thread's vectors swept to (max, sum) (staged_rows.cuh's
//     fast_sweep), the block merge (one barrier); thread 0 stages unit k + P into the slot pass B of iteration
//     k - 1 read (every thread is past that: the barrier), then publishes the unit's pair (SL: below).
//   pass B, unit k - D: each warp's lanes < nch wait for the row's nch pairs, merge them; the warp's vectors of
//     unit k - D's slot exponentiated again, scaled and stored.
// No deadlock: pass A of iteration k waits for nothing but the block's own copy and barrier; pass B of iteration
//   k needs the pairs of units in rounds k - D and k - D + 1 (a row straddles at most two rounds), which every
//   block publishes before its own pass B of iteration k. Every block must be resident at once (G <= occupancy x
//   SMs: the script's grid).
// Exit: the last block to finish (fin) puts the row counters (or the slots) and fin back to 0 for the next launch.
#include "staged_rows.cuh"

// DF_SLOTS 1: no counters and no fences. A unit's pair is one 64-bit word (max, sum bits) stored relaxed into its
// slot, which is 0 until then (a real pair never is: s = 0 only with m = -inf); waiters poll the nch slots of the
// row (relaxed 64-bit loads: single-copy atomic). The last block out puts every slot back to 0. DF_SLOTS 0: the
// pair, then a release add on the row's counter (ptxas: MEMBAR.ALL.GPU first, which waits for the thread's own
// stores in flight), waiters acquire the counter (CCTL.IVALL after each poll).
#ifndef DF_SLOTS
#define DF_SLOTS 1
#endif

namespace probe {
using namespace ::softmax;

__device__ __forceinline__ void st_slot(float2* slot, MaxSum p) {
  const unsigned long long v =
      static_cast<unsigned long long>(__float_as_uint(p.m)) | static_cast<unsigned long long>(__float_as_uint(p.s)) << 32;
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(slot), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned long long ld_slot(const float2* slot) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(slot) : "memory");
  return v;
}
// Wait until `slot` holds a pair (v, if not 0, is a first read the caller issued earlier), then return it.
__device__ __forceinline__ float2 poll_slot(const float2* slot, unsigned long long v = 0ull) {
  unsigned ns = 32, polls = 0;
  while (v == 0ull && (v = ld_slot(slot)) == 0ull) {
    __nanosleep(ns);
    ns = min(ns * 2, 256u);
    if (++polls > (1u << 23)) __trap();  // ~2 s: a probe bug faults instead of hanging the device call
  }
  return make_float2(__uint_as_float(static_cast<unsigned>(v)), __uint_as_float(static_cast<unsigned>(v >> 32)));
}

// Pass B's writes: the thread's K vectors (vec(j): its j-th raw vector of the unit) as exp(x - M) / S of the row's
// merged pair `all`, into vectors tid, tid + THREADS, ... of `out` (the unit's first vector).
template <typename T, int THREADS, int K, typename Vec>
__device__ __forceinline__ void write_unit(MaxSum all, Vec&& vec, uint4* out, int tid) {
  constexpr int V = rows::Traits<T>::V;
  const float sh = shift_of(all.m);
  if (fexp::fast_ok(sh)) {
    const fexp::Base bs = fexp::base_of(sh);
    const float r = bs.fix / all.s;
#pragma unroll
    for (int j = 0; j < K; ++j) {
      float e[V];
      rows::unpack<T>(vec(j), e);
#pragma unroll
      for (int v = 0; v < V; ++v) e[v] = fexp::exp_base(e[v], bs) * r;
      rows::st_global_16(out + tid + j * THREADS, rows::pack<T>(e));
    }
  } else {
    const float r = 1.0f / all.s;
#pragma unroll
    for (int j = 0; j < K; ++j) {
      float e[V];
      rows::unpack<T>(vec(j), e);
#pragma unroll
      for (int v = 0; v < V; ++v) e[v] = exp_shifted(e[v], sh) * r;
      rows::st_global_16(out + tid + j * THREADS, rows::pack<T>(e));
    }
  }
}

// The last block out (fin counts them) puts the U pair slots (or, without slots, the M row counters) and fin back
// to 0 for the next launch: every other block has finished its waits. Every thread of every block, once.
template <int THREADS, bool SL>
__device__ __forceinline__ void last_out_resets(float2* pairs, unsigned U, unsigned* cnt, int M, unsigned* fin,
                                                unsigned& last, int tid) {
  __syncthreads();
  if (tid == 0) {
    __threadfence();
    last = atomicAdd(fin, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (last) {
    __threadfence();
    if constexpr (SL) {  // every slot back to 0 ("not yet published")
      uint4* z = reinterpret_cast<uint4*>(pairs);
      for (unsigned i = tid; i < U / 2; i += THREADS) z[i] = make_uint4(0u, 0u, 0u, 0u);
      if (tid == 0 && (U & 1)) reinterpret_cast<unsigned long long*>(pairs)[U - 1] = 0ull;
    } else {
      for (int r = tid; r < M; r += THREADS) cnt[r] = 0u;
    }
    if (tid == 0) *fin = 0u;
  }
}

// Both forms' unit geometry (the header's): nch units a row (traps on rows the probe does not take), U units in
// all, and how many of them block b takes (b, b + G, ...).
struct Units {
  int nch;
  unsigned U;
  int my;
};
template <int CHV, int V>
__device__ __forceinline__ Units units_of(const void* x, const void* y, int M, int N) {
  const int nch = N / (CHV * V);
  if (nch * CHV * V != N || nch > 32 || nch < 1) __trap();
  if (((reinterpret_cast<unsigned long long>(x) | reinterpret_cast<unsigned long long>(y)) & 15)) __trap();
  const unsigned U = static_cast<unsigned>(M) * nch, G = gridDim.x, b = blockIdx.x;
  return {nch, U, b < U ? static_cast<int>((U - 1 - b) / G + 1) : 0};
}

template <typename T, int THREADS, int K, int S, bool SL = DF_SLOTS, int D = 1, bool EARLY = false>
__device__ __forceinline__ void defer_rows(const T* __restrict__ x, T* __restrict__ y, int M, int N,
                                           float2* __restrict__ pairs, unsigned* __restrict__ cnt,
                                           unsigned* __restrict__ fin) {
  static_assert(D >= 1 && S >= D + 2, "S >= D + 2: D slots waiting for pass B, one in pass A, at least one in flight");
  constexpr int P = S - D - 1;  // units staged ahead of pass A
  constexpr int V = rows::Traits<T>::V, W = THREADS / 32, CHV = THREADS * K;
  __shared__ float pm[2][W], ps[2][W];
  __shared__ alignas(8) unsigned long long full[S];
  __shared__ unsigned last;
  const Units un = units_of<CHV, V>(x, y, M, N);  // named, not bound: lambdas below capture them
  const int nch = un.nch, my = un.my;
  const unsigned U = un.U;
  const unsigned G = gridDim.x, b = blockIdx.x;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  uint4* ring = staged::ring;
  const uint4* xv = reinterpret_cast<const uint4*>(x);
  uint4* yv = reinterpret_cast<uint4*>(y);
  auto stage = [&](int k) {  // thread 0: unit k of this block into slot k % S
    const size_t u = b + static_cast<size_t>(k) * G;
    cx::mbar_expect(&full[k % S], CHV * 16u);
    ring::bulk_copy_in(ring + (size_t)(k % S) * CHV, xv + u * CHV, CHV * 16u, &full[k % S]);
  };
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < S; ++s) cx::mbar_init(&full[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (tid == 0)
    for (int k = 0; k < P && k < my; ++k) stage(k);

#pragma unroll 1
  for (int k = 0; k < my + D; ++k) {
    // EARLY (slots only): pass B's first read of the row's slots issued before pass A, its L2 round trip (~1 us
    // under the streaming load) under pass A's sweep instead of on pass B's chain.
    unsigned long long early = 0ull;
    if constexpr (SL && EARLY) {
      if (k >= D && lane < nch) early = ld_slot(pairs + (size_t)((b + static_cast<unsigned>(k - D) * G) / nch) * nch + lane);
    }
    if (k < my) {  // pass A, unit k
      const unsigned u = b + static_cast<unsigned>(k) * G;
      const uint4* st = ring + (size_t)(k % S) * CHV;
      cx::mbar_wait(&full[k % S], (k / S) & 1);
      float f[K][V], h = -INFINITY, t = -INFINITY, m = -INFINITY, s = 0.0f, fix = 1.0f;
      staged::fast_sweep<T, K, THREADS, true>(st, tid, CHV, f, h, t, m, s, fix);
      MaxSum p = warp_merge(MaxSum{m, s * fix});
      if (lane == 0) {
        pm[k & 1][warp] = p.m;
        ps[k & 1][warp] = p.s;
      }
      __syncthreads();  // also: every warp is done with pass B of iteration k - 1 (unit k - 1 - D's slot is free)
      if (warp == 0) {
        p = warp_merge(lane < W ? MaxSum{pm[k & 1][lane], ps[k & 1][lane]} : MaxSum{-INFINITY, 0.0f});
        if (lane == 0) {
          if (k + P < my) stage(k + P);  // into unit k - 1 - D's slot; first: the counter's release waits for stores
          if constexpr (SL) {
            st_slot(pairs + u, p);
          } else {
            gx::st_pair(pairs + u, make_float2(p.m, p.s));
            gx::red_release_add(cnt + u / nch, 1u);
          }
        }
      }
    }
    if (k >= D) {  // pass B, unit k - D
      const unsigned u = b + static_cast<unsigned>(k - D) * G;
      const unsigned row = u / nch;
      float2 q = make_float2(-INFINITY, 0.0f);
      if (lane < nch) {
        if constexpr (SL) {
          q = poll_slot(pairs + (size_t)row * nch + lane, early);
        } else {
          unsigned ns = 32, polls = 0;
          while (gx::ld_acquire(cnt + row) < static_cast<unsigned>(nch)) {
            __nanosleep(ns);
            ns = min(ns * 2, 256u);
            if (++polls > (1u << 23)) __trap();
          }
          q = gx::ld_relaxed_pair(pairs + (size_t)row * nch + lane);
        }
      }
      const uint4* st = ring + (size_t)((k - D) % S) * CHV;
      write_unit<T, THREADS, K>(warp_merge(MaxSum{q.x, q.y}), [&](int j) { return st[tid + j * THREADS]; },
                                yv + (size_t)u * CHV, tid);
    }
  }
  last_out_resets<THREADS, SL>(pairs, U, cnt, M, fin, last, tid);
}

// The register form (session 30, written after the four runs; REGS in probe_defer30.py): v6_packed_rows' loads
// (LDG.128 straight into registers, no ring, no bulk copy, no mbarrier) with the slots' exchange, D = 1. Three
// register sets rotate: iteration k loads unit k + 1 into one, sweeps unit k in the next (pass A, its pair
// published) and writes unit k - 1 from the third (pass B), so the loads of unit k + 1 are in flight under both
// passes. The loop body is unrolled three times so every set is a fixed group of registers. Same order of units,
// same deadlock argument (pass A waits only for the block's own loads and barrier).
template <typename T, int THREADS, int K>
__device__ __forceinline__ void defer_regs(const T* __restrict__ x, T* __restrict__ y, int M, int N,
                                           float2* __restrict__ pairs, unsigned* __restrict__ fin) {
  constexpr int V = rows::Traits<T>::V, W = THREADS / 32, CHV = THREADS * K;
  __shared__ float pm[2][W], ps[2][W];
  __shared__ unsigned last;
  const Units un = units_of<CHV, V>(x, y, M, N);  // named, not bound: lambdas below capture them
  const int nch = un.nch, my = un.my;
  const unsigned U = un.U;
  const unsigned G = gridDim.x, b = blockIdx.x;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const uint4* xv = reinterpret_cast<const uint4*>(x);
  uint4* yv = reinterpret_cast<uint4*>(y);
  auto load = [&](int k, uint4 (&r)[K]) {
    const uint4* src = xv + (size_t)(b + static_cast<size_t>(k) * G) * CHV + tid;
#pragma unroll
    for (int j = 0; j < K; ++j) r[j] = __ldg(src + j * THREADS);
  };
  auto step = [&](int k, uint4 (&ld)[K], const uint4 (&cur)[K], const uint4 (&prev)[K]) {
    if (k + 1 < my) load(k + 1, ld);
    if (k < my) {  // pass A, unit k
      const unsigned u = b + static_cast<unsigned>(k) * G;
      const float m = fexp::raw_max<T, K>(cur, -INFINITY);
      const float sh = shift_of(m);
      float sc[4] = {0.0f, 0.0f, 0.0f, 0.0f}, fix = 1.0f;
      if (fexp::fast_ok(sh)) {
        const fexp::Base bs = fexp::base_of(sh);
        fix = bs.fix;
#pragma unroll
        for (int j = 0; j < K; ++j) {
          float e[V];
          rows::unpack<T>(cur[j], e);
#pragma unroll
          for (int v = 0; v < V; ++v) sc[v & 3] += fexp::exp_base(e[v], bs);
        }
      } else {
#pragma unroll
        for (int j = 0; j < K; ++j) {
          float e[V];
          rows::unpack<T>(cur[j], e);
#pragma unroll
          for (int v = 0; v < V; ++v) sc[v & 3] += exp_shifted(e[v], sh);
        }
      }
      MaxSum p = warp_merge(MaxSum{m, ((sc[0] + sc[1]) + (sc[2] + sc[3])) * fix});
      if (lane == 0) {
        pm[k & 1][warp] = p.m;
        ps[k & 1][warp] = p.s;
      }
      __syncthreads();
      if (warp == 0) {
        p = warp_merge(lane < W ? MaxSum{pm[k & 1][lane], ps[k & 1][lane]} : MaxSum{-INFINITY, 0.0f});
        if (lane == 0) st_slot(pairs + u, p);
      }
    }
    if (k >= 1 && k - 1 < my) {  // pass B, unit k - 1
      const unsigned u = b + static_cast<unsigned>(k - 1) * G;
      const unsigned row = u / nch;
      float2 q = make_float2(-INFINITY, 0.0f);
      if (lane < nch) q = poll_slot(pairs + (size_t)row * nch + lane);
      write_unit<T, THREADS, K>(warp_merge(MaxSum{q.x, q.y}), [&](int j) { return prev[j]; }, yv + (size_t)u * CHV,
                                tid);
    }
  };
  uint4 ra[K], rb[K], rc[K];  // unit j lives in set j % 3: ra, rb, rc
  if (my > 0) load(0, ra);
#pragma unroll 1
  for (int k = 0; k <= my; k += 3) {
    step(k, rb, ra, rc);
    if (k + 1 <= my) step(k + 1, rc, rb, ra);
    if (k + 2 <= my) step(k + 2, ra, rc, rb);
  }
  last_out_resets<THREADS, true>(pairs, U, nullptr, M, fin, last, tid);
}

}  // namespace probe
