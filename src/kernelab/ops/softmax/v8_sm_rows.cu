// v8_sm_rows: one persistent block on every SM, no cluster by default: each block's share of a row
// is staged in a ring of shared-memory chunks by 1-D bulk copies (a producer warp refills a chunk
// for the next row as soon as the block has read it) and the rest of the share goes through L2
// (16-byte loads with an evict-last policy, re-read with evict-first). Rows of 2049 .. 262144
// elements, sm_90+ (cp.async.bulk, mbarrier transaction counts, clusters for C > 1).
//
// What changed from v7 (a cluster of C blocks per row, each block's chunk of the next rows in a
//   ring of 3 whole-chunk stages; bf16 131072 takes clusters of 4, fp32 clusters of 8):
//   1. Row split: a block's share (the whole row when C = 1) is a staged part, its first
//      min(share, ring) bytes in K chunks of `@chunk_kib` (default 13 x 16 KiB = 208 KiB ring),
//      and an L2 part, the rest (bf16 131072, C = 1: 256 - 208 = 48 KiB a block, 6.2 MiB over 132
//      SMs). C is the smallest of 1, 2, 4 (at least `@min_cluster`) whose L2 part is at most
//      `@max_l2_kib` (64): bf16 131072 -> C = 1, fp32 131072 -> C = 2 (C = 1 would leave 304 KiB
//      a block, 39 MiB over 132 SMs: most of L2), bf16 262144 -> 2, fp32 262144 -> 4. If no C
//      qualifies (only with knobs that shrink the ring) C = 4, the smallest L2 part there is.
//      Clusters of 2 place on all 132 SMs (an SM pair, a TPC, is never split); v7's clusters of 4
//      fit 30 at once, 120 SMs.
//   2. Ring: chunk k of row i completes on full[k] (phase i & 1); every consumer warp arrives on
//      empty[k] (count: the consumer warps) when it has read chunk k in the output sweep. A
//      dedicated producer warp (lane 0; the block is `@threads` consumers + 32) waits empty[k]
//      (phase (i - 1) & 1) and issues chunk k of row i + 1, so the next row streams in while this
//      row's output is being written: up to the whole ring (~200 KiB) in flight an SM, where v7
//      refilled a stage only after a block barrier at the end of each row. Why a producer warp
//      and not thread 0 of the consumers: thread 0 would wait on empty[k] inside the output sweep,
//      pinning warp 0 to the slowest warp chunk by chunk, and the refills would be issued only as
//      fast as warp 0 reaches them; the extra warp costs 32 threads (no setmaxnreg: ptxas caps a
//      544-thread block at 96 registers; the kernel takes 80 (NVRTC 13.0, sm_90) to 96 (13.5,
//      sm_100), no spills). The block
//      reduction then syncs the consumers only (bar.sync 1, `@threads`): a named barrier instead
//      of softmax_common.cuh's __syncthreads block_merge, which would wait for the producer.
//   3. L2 part: the producer also issues cp.async.bulk.prefetch.L2 (evict-last policy) of row
//      i + 1's L2 part before its chunks, about a row ahead; the consumers read it with
//      ld.global.nc.L1::no_allocate.L2::cache_hint + evict-last in the stats sweep and with an
//      evict-first policy in the output sweep (torch.compile's two-pass hints, as rmsnorm
//      v4_l2_two_pass), U = 4 vectors a thread in flight (2 past 512 threads), double-buffered
//      (the next group loads while this one is used), the first group issued before the staged
//      sweep so its latency hides under it. The staged chunks' bulk loads carry an evict-first policy (SR_LOAD_EF):
//      x's staged bytes are dead once in shared memory, and must not push the L2 parts out.
//   4. One stats sweep: per-thread online (max, sum) over the staged chunks (wait full[k] in order)
//      and the L2 part: a vector's max m_v; if m_v > m: s *= 2^((m - m_v) log2 e), m = m_v; then
//      s += sum 2^((x - m) log2 e). The max rises O(log n) times a thread, so ~1 EX2 an element
//      (v7: 3 shared-memory sweeps, 2 of them for the stats). Then the block merge (named barrier)
//      and, for C > 1, v7's cluster exchange (cluster_exchange.cuh's push_pair into buffer i & 1,
//      parity (i >> 1) & 1; its buffers are safe without v7's end-of-row barrier: block A pushes
//      row i + 2 only after its row i + 1 wait, which needs B's row i + 1 push, which B's thread 0
//      issues after B's row i + 1 block barrier, which every B thread reaches after reading row i's
//      pairs; the same argument covers the partial maxima/sums, double-buffered by row parity).
//   5. Output sweep: y = 2^((x - M) log2 e) / S from the chunks (chunk k released right after) and
//      from the L2 part; 16-byte st.global (SR_STORE: 1 st.global.cs, 2 an L2 evict-first policy).
//      Head / tail scalars of rows not 16-byte aligned are plain loads by rank 0 / rank C - 1, and
//      y not co-aligned with x falls back to scalar stores, as v7.
//   Rows narrower than the ring (bf16 up to 106496, fp32 up to 53248 at C = 1) are all staged,
//   one row at a time in the ring: the next row's chunks stream in only as this row releases them,
//   so such rows get less overlap than v7's 3 stages; v7 (or v4's table) is the pick there.
//   Below ~32768 the row-in-registers variants win anyway.
// Why: 2048 x 131072 on the H200 runs bf16 at 0.83x a device copy (302.6 us; the copy rate
//   4.28 TB/s gives 250 us) and fp32 at 0.93x (541 us vs 500). v7 is capped by placement: clusters
//   of 4 x 192 KiB fit 30 at once (120 of 132 SMs: 0.91x at best), and bf16 lost more to per-row
//   work (3 shared-memory sweeps, the cluster exchange, 2 EX2 an element). v8 runs on every SM
//   without a cluster in bf16 (pairs of SMs in fp32), keeps ~200 KiB a SM in flight, and sweeps
//   shared memory twice (stats, output) with ~2 EX2 an element in all.
// Predicted: bytes first: 2048 x 131072 bf16 moves 2 x 2^28 x 2 B = 1.07 GB = 250 us at 4.28 TB/s;
//   fp32 2.15 GB = 500 us. Per SM a bf16 row (C = 1) is 256 KiB in + 256 KiB out: 16.1 us at the
//   copy rate (1/132 of it). Its work: 2 x 131072 EX2 = 16384 clk of the SM's 16/clk MUFU (8.8 us
//   at 1.86 GHz; 55% of the row's time), 64K bf16x2 packs, shared memory 208 KiB written by the
//   copy engine + read twice = 624 KiB = 4992 clk at 128 B/clk (17%), L2 48 KiB read twice. The
//   persistent tail: 2048 rows / 132 blocks = 15.5 rounds: a 16th round for 68 blocks, whose
//   time is set by one SM's rate (compute ~11 us a row if the MUFU is the limit, vs 16.1 us at an
//   even share): ~0.3 round lost, ~2%. fp32 (C = 2, 66 clusters of 256 KiB shares): 2048 / 66 =
//   31.03 rounds, the 32nd for 2 clusters (~1%); 4.4 us of MUFU a 16.1 us share. Predicted bf16
//   2048 x 131072 255-265 us (0.94-0.98x copy; v7 302.6), fp32 505-520 us (0.96-0.99x; v7 541).
//   Risks: bf16 MUFU-bound (if EX2 + the F2FP packs share the 16/clk pipe: ~11-12 us of 16.1 a
//   row, no margin for the exposed L2 latency); the L2 parts evicted before their re-read (DRAM
//   reads > 1.0x of x in ncu); the stats sweep waiting on chunks (the ring holds only one row).
// Measured (H200, one process: docs/runs/2026-11-30-h200-sweep_membound_s6_wide.json, copy 4.28 TB/s):
//   slower than v7 everywhere, not adopted. 2048 x 131072 bf16 317.3 us (0.79x a copy; v7 300.7),
//   with clusters of 2 (`@min_cluster 2`) 302.1; SR_PREFETCH 0 316.8, SR_L2_HINT 0 325.0, 12 chunks
//   324.9, 992 threads 321.2, 256 threads 374.2, store .cs 313.2, SR_LOAD_EF 0 311.6, 24 x 8 KiB
//   chunks 341.2. fp32 603.4 (v7 548.7); C = 1 (`@max_l2_kib 320`) 801.4 (the L2 parts, 39 MiB,
//   thrash), C = 4 594.9, store .cs 587.2. 8192 x 32768 bf16 (the whole row staged) 324.1 vs v7
//   272.6 and v6 257.7. What it shows: a block that holds one row's share at a time loses ~20%
//   to one that holds 2-3 (v7), whatever else it saves: the stats sweep waits for the chunks the
//   output sweep has just released, and no row is written while the next one is reduced; the
//   prediction (MUFU ~55% of a row's time, hidden) missed that the stats and output sweeps of a
//   block run one after the other, so its MUFU time adds to the load time instead of hiding under it.
// Measured: BENCHMARKS.md, softmax rows (full runs).
//
// Knobs: header values (op.py reads them for the plan; `@chunk_kib`, `@chunks`, `@threads`, `@store`
//   also become SR_CHUNK_KIB, SR_CHUNKS, SR_THREADS, SR_STORE; a sweep overrides them as meta):
//   `@threads` consumer threads (a multiple of 32, 128..992; the block has 32 more), `@chunk_kib`
//   (1..64) x `@chunks` (1..24) the ring (clipped to the block's shared memory: 98 KiB on
//   sm_120), `@max_l2_kib` the largest L2 part a block may have before C doubles, `@min_cluster`
//   (1, 2, 4), `@store` (0 st.global, 1 .cs, 2 L2 evict-first). Compile-only macros: SR_LOAD_EF
//   (1: the bulk loads carry an evict-first policy, default), SR_PREFETCH (1: the producer
//   prefetches the L2 part into L2, default), SR_L2_HINT (1: evict-last / evict-first policies on
//   the L2 part's loads, default; 0: plain ld.global.nc), SR_L2_UNROLL (L2-part vectors a thread
//   has in flight per group: 4, or 2 past 512 threads, where 4 spills at the 64-register cap).
//   Knob predictions: SR_PREFETCH 0 -2..-5% (the stats sweep waits on DRAM for the L2 part),
//   SR_L2_HINT 0 0..-3%, chunks 12 (192 KiB) within 1%, threads 992 0..+2% in bf16 if MUFU-bound
//   (more warps to hide EX2 latency), min_cluster 2 on bf16 -1..+2% (smaller shares, less L2
//   part, but 2 blocks per row exchange).
// @strategy sm_rows
// @arch sm_90
// @access_bytes 16
// @threads 512
// @chunk_kib 16
// @chunks 13
// @max_l2_kib 64
// @min_cluster 1
// @store 0
#include "softmax_common.cuh"
#include "cluster_exchange.cuh"
#include "bulk_ring.cuh"  // ring::Chunk / chunk_of: a block's share of a row (v7's split)

#ifndef SR_THREADS
#define SR_THREADS 512
#endif
#ifndef SR_CHUNK_KIB
#define SR_CHUNK_KIB 16
#endif
#ifndef SR_CHUNKS
#define SR_CHUNKS 13
#endif
#ifndef SR_STORE
#define SR_STORE 0
#endif
#ifndef SR_LOAD_EF
#define SR_LOAD_EF 1
#endif
#ifndef SR_PREFETCH
#define SR_PREFETCH 1
#endif
#ifndef SR_L2_HINT
#define SR_L2_HINT 1
#endif
#ifndef SR_L2_UNROLL  // ~32 KiB of L2-part loads in flight an SM; more threads, fewer each (64 registers at 992)
#define SR_L2_UNROLL (SR_THREADS > 512 ? 2 : 4)
#endif

static_assert(SR_THREADS % 32 == 0 && SR_THREADS >= 128 && SR_THREADS <= 992,
              "SR_THREADS (consumer threads): a multiple of 32, 128..992 (the producer warp makes the block 32 more)");
static_assert(SR_CHUNK_KIB >= 1 && SR_CHUNK_KIB <= 64, "SR_CHUNK_KIB: 1..64 KiB chunks");
static_assert(SR_CHUNKS >= 1 && SR_CHUNKS <= 24, "SR_CHUNKS: 1..24 chunks in the ring");
static_assert(SR_STORE >= 0 && SR_STORE <= 2, "SR_STORE: 0 st.global, 1 st.global.cs, 2 L2 evict-first policy");
static_assert(SR_L2_UNROLL >= 1 && SR_L2_UNROLL <= 8, "SR_L2_UNROLL: 1..8 vectors in flight a thread");

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "v8_sm_rows needs sm_90 (cp.async.bulk, mbarrier transaction counts, clusters)"
#endif

namespace softmax {
namespace smrows {
using namespace ::softmax::cx;  // ctarank, peer_addr, mbar_*, push_pair (cluster_exchange.cuh)

constexpr int THREADS = SR_THREADS;         // consumer threads
constexpr int NW = THREADS / 32;            // consumer warps; warp NW is the producer
constexpr int K = SR_CHUNKS;                // chunks the ring may have
constexpr int CHV = SR_CHUNK_KIB * 1024 / 16;  // 16-byte vectors a chunk
constexpr int U = SR_L2_UNROLL;

// The ring: up to K chunks of CHV vectors (its size is the launch's dynamic shared memory).
extern __shared__ __align__(128) uint4 ring[];


// ---- cache policies (one createpolicy a thread; the same 64-bit value in every thread) ----------
__device__ __forceinline__ unsigned long long policy_evict_last() {
  unsigned long long p;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ unsigned long long policy_evict_first() {
  unsigned long long p;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}

// ---- producer side ----------------------------------------------------------------------------
// Stage a chunk (bulk_ring.cuh's copy), with SR_LOAD_EF the L2 policy `pol` on the read.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, unsigned long long* bar,
                                          unsigned long long pol) {
#if SR_LOAD_EF
  ring::bulk_copy_in_hint(dst, src, bytes, bar, pol);
#else
  (void)pol;
  ring::bulk_copy_in(dst, src, bytes, bar);
#endif
}
// `bytes` (a multiple of 16) at `src` (16-byte aligned) into L2 with policy `pol`; nothing waits for it.
__device__ __forceinline__ void prefetch_l2(const void* src, unsigned bytes, unsigned long long pol) {
  asm volatile("cp.async.bulk.prefetch.L2.global.L2::cache_hint [%0], %1, %2;" ::"l"(src), "r"(bytes), "l"(pol)
               : "memory");
}
// One arrival (release, CTA scope: this warp's reads of the chunk happen before the refill).
__device__ __forceinline__ void mbar_arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// ---- consumer side ----------------------------------------------------------------------------
// A predicated 16-byte load of the L2 part (zeros where !pred, and the address is never read), as
// rmsnorm's norm_l2.cuh: setp + @p ld inside one asm, so no branch for NVVM to sink the load into.
#define SR_LD_BODY(QUAL, TAIL)                                                                             \
  "{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %5, 0;\n\tmov.b32 %0, 0;\n\tmov.b32 %1, 0;\n\tmov.b32 %2, 0;\n\t" \
  "mov.b32 %3, 0;\n\t@q " QUAL ".v4.u32 {%0, %1, %2, %3}, [%4]" TAIL ";\n}"
__device__ __forceinline__ uint4 ld_l2part(const uint4* p, bool pred, unsigned long long pol) {
  uint4 r;
#if SR_L2_HINT
  asm volatile(SR_LD_BODY("ld.global.nc.L1::no_allocate.L2::cache_hint", ", %6")
               : "=&r"(r.x), "=&r"(r.y), "=&r"(r.z), "=&r"(r.w)
               : "l"(p), "r"(static_cast<int>(pred)), "l"(pol));
#else
  (void)pol;
  asm volatile(SR_LD_BODY("ld.global.nc", "")
               : "=&r"(r.x), "=&r"(r.y), "=&r"(r.z), "=&r"(r.w)
               : "l"(p), "r"(static_cast<int>(pred)));
#endif
  return r;
}
#undef SR_LD_BODY

// y's 16-byte store (asm volatile: see rows.cuh's st_global_16).
__device__ __forceinline__ void st_y(void* p, const uint4& v, unsigned long long pol) {
#if SR_STORE == 0
  (void)pol;
  rows::st_global_16(p, v);
#elif SR_STORE == 1
  (void)pol;
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
#else
  asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w), "l"(pol)
               : "memory");
#endif
}



// f(ring[j], j) for j = lo + threadIdx.x, + THREADS, ... < hi: 2 LDS.128 in flight a step.
template <typename F>
__device__ __forceinline__ void ring_sweep(int lo, int hi, F&& f) {
  int j = lo + threadIdx.x;
  for (; j + THREADS < hi; j += 2 * THREADS) {
    const uint4 a = ring[j], b = ring[j + THREADS];
    f(a, j);
    f(b, j + THREADS);
  }
  if (j < hi) f(ring[j], j);
}

// f(src[j], j) for j = threadIdx.x, + THREADS, ... < cnt, where `cur` already holds group 0
// (vectors threadIdx.x + u x THREADS, u < U, zeros past cnt): each step loads the next group before
// it uses this one, so U vectors a thread are always in flight.
template <typename F>
__device__ __forceinline__ void l2_sweep(const uint4* src, int cnt, uint4 (&cur)[U], unsigned long long pol, F&& f) {
  const int tid = threadIdx.x;
#pragma unroll 1
  for (int base = 0; base < cnt; base += U * THREADS) {
    uint4 nxt[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = base + (U + u) * THREADS + tid;
      nxt[u] = ld_l2part(src + j, j < cnt, pol);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = base + u * THREADS + tid;
      if (j < cnt) f(cur[u], j);
      cur[u] = nxt[u];
    }
  }
}
__device__ __forceinline__ void l2_first(const uint4* src, int cnt, uint4 (&cur)[U], unsigned long long pol) {
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int j = threadIdx.x + u * THREADS;
    cur[u] = ld_l2part(src + j, j < cnt, pol);
  }
}

// The producer (lane 0 of warp NW): for each row i of this block, the L2 prefetch of its L2 part,
// then chunk k (k < nk) into ring[k x CHV ...] once the consumers released row i - 1's chunk k.
// Chunks past the row's staged part carry 0 bytes: their phase completes on the expect arrival, so
// every row runs every barrier's phase once.
template <typename T, int C>
__device__ __forceinline__ void produce(const T* __restrict__ x, int q, int Q, int rows_mine, int n, unsigned rank,
                                        int ring_vecs, int nk, unsigned long long* full, unsigned long long* empty) {
  const unsigned long long first = policy_evict_first(), last = policy_evict_last();
#pragma unroll 1
  for (int i = 0; i < rows_mine; ++i) {
    const T* xr = x + (size_t)(q + i * Q) * n;
    const ring::Chunk sh = ring::chunk_of<T, C>(xr, n, rank);
    const int staged = min(sh.cnt, ring_vecs);
    const uint4* src = reinterpret_cast<const uint4*>(xr + sh.geo.head) + sh.v0;
#if SR_PREFETCH
    if (sh.cnt > staged) prefetch_l2(src + staged, static_cast<unsigned>(sh.cnt - staged) * 16u, last);
#else
    (void)last;
#endif
#pragma unroll 1
    for (int k = 0; k < nk; ++k) {
      if (i > 0) mbar_wait(&empty[k], (i - 1) & 1);
      const int lo = k * CHV, cnt = max(0, min(CHV, staged - lo));
      mbar_expect(&full[k], static_cast<unsigned>(cnt) * 16u);
      if (cnt) bulk_load(ring + lo, src + lo, static_cast<unsigned>(cnt) * 16u, &full[k], first);
    }
  }
}

// Rows q, q + Q, ... for cluster q of Q (C = 1: every block is a "cluster"); all blocks of a cluster
// take the same rows. Row i of this block: chunk k on full[k] phase i & 1, released on empty[k].
template <typename T, int C>
__device__ __forceinline__ void sm_rows(const T* __restrict__ x, T* __restrict__ y, int M, int N) {
  constexpr int V = rows::Traits<T>::V;
  static_assert(C == 1 || C == 2 || C == 4, "C is 1, 2 or 4");
  __shared__ float part_m[2][NW], part_s[2][NW];
  __shared__ float2 pairs[2][C];
  __shared__ alignas(8) unsigned long long full[K], empty[K], xbar[2];

  // The ring is what the launch gave (op.py's sm_rows_plan: min(share, chunks x chunk, what fits)),
  // at most K chunks. Any size is correct (the rest of the share goes through L2); none is a launch
  // without the ring: fail loudly.
  const int ring_vecs = min(static_cast<int>(ring::dynamic_smem_size() / 16u), K * CHV);
  if (ring_vecs == 0) __trap();
  const int nk = (ring_vecs + CHV - 1) / CHV;
  unsigned rank = 0;
  if constexpr (C > 1) {
    if (nctarank() != C) __trap();  // launched without cluster=C: fail loudly, not read a wrong peer
    rank = ctarank();
  }
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  if (tid == 0) {
    for (int k = 0; k < nk; ++k) {
      mbar_init(&full[k], 1);    // the producer's expect arrival (+ the copy's bytes)
      mbar_init(&empty[k], NW);  // one arrival a consumer warp
    }
    mbar_init(&xbar[0], 1);
    mbar_init(&xbar[1], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  sync_after_init<C>();  // cluster_exchange.cuh, as v7: once
  const int q = blockIdx.x / C, Q = gridDim.x / C;
  if (q >= M) return;  // the whole cluster (all its blocks have the same q)
  const int rows_mine = (M - 1 - q) / Q + 1;
  if (warp == NW) {
    if (lane == 0) produce<T, C>(x, q, Q, rows_mine, N, rank, ring_vecs, nk, full, empty);
    return;
  }
  const unsigned long long keep = policy_evict_last(), drop = policy_evict_first();

#pragma unroll 1
  for (int i = 0; i < rows_mine; ++i) {
    const int row = q + i * Q;
    const T* xr = x + (size_t)row * N;
    T* yr = y + (size_t)row * N;
    const ring::Chunk sh = ring::chunk_of<T, C>(xr, N, rank);
    const int staged = min(sh.cnt, ring_vecs), nl2 = sh.cnt - staged;
    const uint4* xl = reinterpret_cast<const uint4*>(xr + sh.geo.head) + sh.v0 + staged;  // the L2 part
    // Head (rank 0) and tail (rank C - 1) scalars and the L2 part's first group: in flight across
    // the staged sweep.
    const bool own_h = rank == 0 && tid < sh.geo.head;
    const bool own_t = rank == C - 1 && tid < sh.geo.tail;
    const int t_at = sh.geo.head + sh.geo.nvec * V + tid;
    const float h = own_h ? rows::to_float(xr[tid]) : -INFINITY;
    const float t = own_t ? rows::to_float(xr[t_at]) : -INFINITY;
    uint4 cur[U];
    l2_first(xl, nl2, cur, keep);

    // Stats sweep: online (max, sum of exp(x - shift_of(max))) per thread. -inf parts: shift 0,
    // sum 0; a NaN or +inf entry makes the sum NaN.
    float m = fmaxf(h, t);
    float s = exp_shifted(h, shift_of(m)) + exp_shifted(t, shift_of(m));
    auto stats = [&](const uint4& r, int) {
      float f[V];
      rows::unpack<T>(r, f);
      float mv = f[0];
#pragma unroll
      for (int k = 1; k < V; ++k) mv = fmaxf(mv, f[k]);
      if (mv > m) {  // the thread's max rises: rescale its sum (O(log n) times a thread)
        s *= rescale(m, mv);
        m = mv;
      }
      const float shift = shift_of(m);
#pragma unroll
      for (int k = 0; k < V; ++k) s += exp_shifted(f[k], shift);
    };
#pragma unroll 1
    for (int k = 0; k < nk; ++k) {
      mbar_wait(&full[k], i & 1);
      ring_sweep(k * CHV, min(staged, (k + 1) * CHV), stats);
    }
    l2_sweep(xl, nl2, cur, keep, stats);

    const int b = i & 1;
    MaxSum all = ring::consumer_merge<THREADS>(MaxSum{m, s}, part_m[b], part_s[b]);  // bulk_ring.cuh
    if constexpr (C > 1) {
      all = exchange_pairs<C>(all, pairs, xbar, rank, i, tid, lane);  // cluster_exchange.cuh
    }

    // Output sweep: y = 2^((x - M) log2 e) / S. A row with NaN or +inf has S = NaN, an all -inf row
    // has x - M = NaN: NaN everywhere, as torch.softmax.
    l2_first(xl, nl2, cur, drop);
    const float mx = all.m, inv = 1.0f / all.s;
    const bool vec_out = ((reinterpret_cast<unsigned long long>(xr) ^ reinterpret_cast<unsigned long long>(yr)) & 15) == 0;
    T* yv = yr + sh.geo.head + (size_t)sh.v0 * V;  // y's element at the share's first vector
    auto out = [&](const uint4& r, int j) {
      float f[V];
      rows::unpack<T>(r, f);
#pragma unroll
      for (int k = 0; k < V; ++k) f[k] = ex2((f[k] - mx) * LOG2E) * inv;
      if (vec_out) {
        st_y(yv + (size_t)j * V, rows::pack<T>(f), drop);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) yv[(size_t)j * V + k] = rows::from_float<T>(f[k]);
      }
    };
#pragma unroll 1
    for (int k = 0; k < nk; ++k) {
      ring_sweep(k * CHV, min(staged, (k + 1) * CHV), out);
      __syncwarp();  // the warp's reads of chunk k are done before lane 0's release
      if (lane == 0) mbar_arrive(&empty[k]);
    }
    l2_sweep(xl, nl2, cur, drop, [&](const uint4& r, int j) { out(r, staged + j); });
    if (own_h) yr[tid] = rows::from_float<T>(ex2((h - mx) * LOG2E) * inv);
    if (own_t) yr[t_at] = rows::from_float<T>(ex2((t - mx) * LOG2E) * inv);
  }
}

}  // namespace smrows
}  // namespace softmax

// Instances: a cluster of C = 1, 2, 4 blocks of SR_THREADS + 32 threads (the consumers and the
// producer warp) per row. Launch with cluster=C and the dynamic shared memory op.py's sm_rows_plan
// gives (the ring: min(share, chunks x chunk, the block's shared memory)).
extern "C" __global__ void __launch_bounds__(SR_THREADS + 32, 1)
softmax_sr_c1_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::smrows::sm_rows<float, 1>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SR_THREADS + 32, 1)
softmax_sr_c2_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::smrows::sm_rows<float, 2>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SR_THREADS + 32, 1)
softmax_sr_c4_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::smrows::sm_rows<float, 4>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SR_THREADS + 32, 1)
softmax_sr_c1_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::smrows::sm_rows<__nv_bfloat16, 1>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SR_THREADS + 32, 1)
softmax_sr_c2_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::smrows::sm_rows<__nv_bfloat16, 2>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SR_THREADS + 32, 1)
softmax_sr_c4_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::smrows::sm_rows<__nv_bfloat16, 4>(x, y, M, N); }

// The names the op contract looks up: the widest instance (launch it with cluster=4 and the ring).
extern "C" __global__ void __launch_bounds__(SR_THREADS + 32, 1)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::smrows::sm_rows<float, 4>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SR_THREADS + 32, 1)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::smrows::sm_rows<__nv_bfloat16, 4>(x, y, M, N); }
