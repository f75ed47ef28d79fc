// v7_bulk_smem: v5's persistent clusters, with the next rows staged in shared memory by 1-D bulk
// async copies (TMA, cp.async.bulk) instead of held in registers: 2-3 rows in flight per block.
// Rows of 2049 .. 262144 elements, sm_90+ (cp.async.bulk, mbarrier transaction counts, clusters).
//
// What changed from v5 (clusters of C blocks per row, each thread holding 32-64 elements of the
//   current row and the raw words of the next one in registers):
//   1. Loads: one thread of each block issues `cp.async.bulk.shared::cluster.global.mbarrier::
//      complete_tx::bytes` for the block's chunk of a row (its C-th share of the row's 16-byte
//      vectors: one copy, up to 113 KiB) into stage r % S of a ring of S stages in dynamic shared
//      memory; the copy counts its bytes on that stage's mbarrier (arrive.expect_tx by the same
//      thread), and the block's threads wait on it (try_wait.parity, phase = (row / S) & 1).
//      S - 1 rows are in flight while one is reduced: the bytes in flight cost no registers, so
//      they are not capped by the register file (v5: 256 x 128 B = 32 KiB an SM).
//   2. Per row: two sweeps over the chunk in shared memory (16-byte LDS, thread t reads vectors
//      t, t + T, ...: conflict-free), the thread's max, then its sum of exp(x - max); the pairs are
//      merged over the block (one barrier) and over the cluster with v5's st.async + mbarrier
//      exchange (no cluster barrier, so no MEMBAR: see v5's cluster_rows for the proof of the
//      buffers by row parity, unchanged here); a third sweep writes y = 2^((x - M) log2 e) / S.
//      After a block barrier (every thread is done reading the stage) thread 0 refills the stage
//      with the row S rounds later (r + S x Q, Q clusters). Head / tail scalars (rows that do
//      not start 16-byte aligned: N = 32769, 65537, offset views) are plain loads by rank 0
//      (head) and rank C-1 (tail), issued before the stage wait so their latency hides under it.
//   3. C is chosen per row width: the smallest of 1, 2, 4, 8, 16 (at least `@min_cluster`) whose
//      chunk fits S stages in the block's share of the SM's shared memory (227 KiB on sm_90 /
//      sm_100, over `@blocks_per_sm`; 99 KiB on sm_120). Defaults (S = 3, one 512-thread block an
//      SM): bf16 131072 -> C = 4 (64 KiB chunks, 192 KiB ring); fp32 131072 -> C = 8 (64 KiB).
//      C = 1 (rows up to ~37000 bf16) is a block per row with no exchange.
//   4. Stores: SB_STORE 0: st.global.v4 from registers (v5's); 2: st.global.cs.v4 (streaming);
//      1: y is written back into the stage, fence.proxy.async, and thread 0 issues one
//      cp.async.bulk.global.shared::cta bulk_group store of the chunk (rows whose y is not
//      co-aligned with x fall back to path 0). A stage is refilled only after its store has read
//      it: the refill lags one row (cp.async.bulk.wait_group.read 1), so S - 2 rows are in flight.
//   Knob predictions (2048 x 131072): SB_STORE 1 +-2% (frees the LSU of 64 KiB of STG a row, costs
//   a row of depth); SB_STORE 2 0-1%; stages 4 (smaller chunks, C doubles) within 2%; 2 blocks an
//   SM (two 96 KiB rings) -1..+3%; 256 threads slower by up to 3% if the sweeps are on the
//   critical path, 1024 within 1%; SB_LOAD_EF 0-1%.
// Why: v5 at 2048 x 131072 bf16 is 302.4 us (0.83x the copy rate; fp32 567.7 us, 0.88x). Its
//   bytes in flight are capped by registers at ~32 KiB an SM, just what HBM needs at 4.3 TB/s x
//   ~1 us / 132 SMs (~33 KiB): any stall (the reduction, a barrier, stores backing up) drains the
//   queue. Staging in shared memory holds 128 KiB an SM in flight (2 stages of 64 KiB) and the
//   copy engine issues them with no thread waiting. C = 4 for bf16 131072 also means clusters
//   of 4 (33 would fit 132 SMs if a GPC holds a multiple of 4; v5's 16 clusters of 8 leave 4 SMs).
// Predicted: bytes first: 2048 x 131072 bf16 moves 2 x 2^28 x 2 B = 1.07 GB: 250 us at the copy
//   rate (4.30 TB/s); fp32 2.15 GB: 500 us. Shared memory: per element 1 TMA write + 3 LDS reads
//   (+1 write with SB_STORE 1) = ~33 B/clk an SM at the copy rate of the 128 B/clk it has; 2 EX2
//   an element (~50% of the SFU for bf16). Predicted 2048 x 131072 bf16 258-270 us (0.93-0.97x
//   copy; v5 302.4), fp32 510-530 us (v5 567.7). Risks: the 2 sweeps + exchange + store sweep
//   per row take longer than the row's load (then S does not help), and load imbalance with
//   33 clusters (2048 rows / 33 = 62.06: a 63rd row for 2 clusters, the tail prefetched).
// Measured (H200, 2048 x 131072, one process: docs/runs/2026-11-30-h200-sweep_softmax7.json, copy
//   ~4.27 TB/s): fp32 544.7 us (1024 threads 538.8 = 0.94x a copy; v5 569.7-571.3, torch.compile
//   784.1): +5-6% over v5. bf16 300.1 (v5 with 64 elements a thread 295.2-295.5; torch.compile
//   543.1): no gain. Bulk stores from shared memory (SB_STORE=1) -1 to -2%, st.global.cs -0.5 to
//   -2%; stages=4 (clusters of 8/16) -24 to -29%, two blocks per SM -6%, min_cluster 8 -6%.
//   What caps it: clusters of 4 x 192 KiB fit 30 at once (grid 30: 120 of the 132 SMs), clusters
//   of 8 fit 15 (120 SMs): 91% of the SMs, the same fraction of the copy rate at best.
// Measured: BENCHMARKS.md, softmax rows (full runs).
//
// Knobs: header values (op.py reads them for the plan and passes them to the compiler as
//   SB_STAGES, SB_THREADS, SB_BLOCKS_PER_SM; a sweep overrides them as meta) and compile-only
//   macros (SB_STORE: 0 STG, 1 bulk store, 2 STG .cs; SB_LOAD_EF: 1 adds an L2 evict-first
//   cache hint to the bulk loads).
// @strategy bulk
// @arch sm_90
// @stages 3
// @threads 512
// @blocks_per_sm 1
// @min_cluster 1
#include "softmax_common.cuh"
#include "cluster_exchange.cuh"
#include "bulk_ring.cuh"  // Chunk / chunk_of (a block's share of a row), sweep (read a staged share)

#include "bulk_knobs.cuh"  // SB_STAGES, SB_THREADS, SB_BLOCKS_PER_SM (shared with v10-v12)
#ifndef SB_STORE
#define SB_STORE 0
#endif
#ifndef SB_LOAD_EF
#define SB_LOAD_EF 0
#endif
// Measurement only (wrong output by design; never a default, the sweeps time it unchecked):
// bit 1 skips the cluster exchange (each block uses its own stats), bit 2 replaces the EX2 of
// sweeps 2 and 3 with a multiply, bit 4 skips sweeps 1 and 2 (stats of 0 and 1). Tells which
// part of a row's work holds the SM back.
#ifndef SB_ABLATE
#define SB_ABLATE 0
#endif

static_assert(SB_STORE != 1 || SB_STAGES >= 3, "SB_STORE 1 refills a stage one row late: at least 3 stages");

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "v7_bulk_smem needs sm_90 (cp.async.bulk, mbarrier transaction counts, clusters)"
#endif

namespace softmax {
namespace bulk {
using namespace ::softmax::cx;  // ctarank, peer_addr, mbar_*, push_pair (cluster_exchange.cuh)
using namespace ::softmax::ring;  // Chunk, chunk_of, sweep (bulk_ring.cuh)

// The ring: S stages of the block's chunk, 16-byte vectors (stage size set by the launch).
extern __shared__ __align__(128) uint4 ring[];

// Stage a share (bulk_ring.cuh's copy), with SB_LOAD_EF an L2 evict-first policy on the read.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
#if SB_LOAD_EF
  unsigned long long pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  bulk_copy_in_hint(dst, src, bytes, bar, pol);
#else
  bulk_copy_in(dst, src, bytes, bar);
#endif
}
// Shared -> global bulk store (SB_STORE 1), tracked by this thread's bulk async-groups.
__device__ __forceinline__ void bulk_store(void* dst, const void* src, unsigned bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(smem_addr(src)),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

__device__ __forceinline__ void st_global_16_cs(void* p, const uint4& v) {
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}


// Thread 0: the block's chunk of row `row` into stage `st`, completing on full[st].
template <typename T, int C>
__device__ __forceinline__ void issue(const T* x, int row, int n, int rank, int st, int stage_vecs,
                                      unsigned long long* full) {
  constexpr int V = rows::Traits<T>::V;
  const T* xr = x + (size_t)row * n;
  const Chunk ch = chunk_of<T, C>(xr, n, rank);
  const unsigned bytes = static_cast<unsigned>(ch.cnt) * 16u;
  mbar_expect(&full[st], bytes);  // 0 bytes: the phase completes on this arrival
  if (bytes) bulk_load(ring + (size_t)st * stage_vecs, xr + ch.geo.head + (size_t)ch.v0 * V, bytes, &full[st]);
}


// Rows q, q + Q, ... for cluster q of Q (C = 1: every block is a "cluster"). All blocks of a
// cluster take the same rows, so they run the same trip count.
// Stages: row i of this cluster (i = 0, 1, ...) lives in stage i % S, phase (i / S) & 1 of
//   full[i % S]. Thread 0 fills stages 0..S-1 with rows 0..S-1 before the loop; the stage of row i
//   is refilled with row i + S after the barrier that ends row i (every thread has read it), or,
//   with SB_STORE 1, with row i - 1 + S at the end of row i once row i - 1's bulk store has read
//   its stage (wait_group.read 1). Every copy issued is waited for by a later row, so none is in
//   flight when the block exits.
// Exchange (C > 1): v5's, buffers b = i & 1, parity (i >> 1) & 1 (proof at v5's cluster_rows; the
//   extra end-of-row barrier here only strengthens it).
template <typename T, int C>
__device__ __forceinline__ void bulk_rows(const T* __restrict__ x, T* __restrict__ y, int M, int N) {
  constexpr int THREADS = SB_THREADS, S = SB_STAGES, V = rows::Traits<T>::V;
  static_assert(C == 1 || C == 2 || C == 4 || C == 8 || C == 16, "C is 1, 2, 4, 8 or 16");
  __shared__ float part_m[2][THREADS / 32], part_s[2][THREADS / 32];
  __shared__ float2 pairs[2][C];
  __shared__ alignas(8) unsigned long long full[S];
  __shared__ alignas(8) unsigned long long xbar[2];

  // Stage size: the widest chunk any row of N can give (ceil(ceil(N / V) / C) vectors); op.py's
  // bulk_plan sizes the dynamic shared memory with the same formula.
  const int stage_vecs = (N + V * C - 1) / (V * C);
  if (dynamic_smem_size() < (unsigned)S * stage_vecs * 16u) __trap();  // launched without the ring
  unsigned rank = 0;
  if constexpr (C > 1) {
    if (nctarank() != C) __trap();  // launched without cluster=C: fail loudly, not read a wrong peer
    rank = ctarank();
  }
  const int tid = threadIdx.x, lane = tid & 31;
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < S; ++s) mbar_init(&full[s], 1);
    mbar_init(&xbar[0], 1);
    mbar_init(&xbar[1], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  sync_after_init<C>();  // cluster_exchange.cuh: once, before the loop
  const int q = blockIdx.x / C, Q = gridDim.x / C;
  if (q >= M) return;  // the whole cluster (all its blocks have the same q)
  const int rows_mine = (M - 1 - q) / Q + 1;  // rows q, q + Q, ... < M
  if (tid == 0) {
#pragma unroll 1
    for (int i = 0; i < S && i < rows_mine; ++i) issue<T, C>(x, q + i * Q, N, rank, i, stage_vecs, full);
  }

#pragma unroll 1
  for (int i = 0; i < rows_mine; ++i) {
    const int row = q + i * Q, st = i % S;
    const T* xr = x + (size_t)row * N;
    T* yr = y + (size_t)row * N;
    const Chunk ch = chunk_of<T, C>(xr, N, rank);
    // Head (rank 0) and tail (rank C - 1) scalars: plain loads, in flight across the stage wait.
    const bool own_h = rank == 0 && tid < ch.geo.head;
    const bool own_t = rank == C - 1 && tid < ch.geo.tail;
    const int t_at = ch.geo.head + ch.geo.nvec * V + tid;
    const float h = own_h ? rows::to_float(xr[tid]) : -INFINITY;
    const float t = own_t ? rows::to_float(xr[t_at]) : -INFINITY;
    uint4* stage = ring + (size_t)st * stage_vecs;
    mbar_wait(&full[st], (i / S) & 1);

    // Sweep 1: the thread's max. Sweep 2: its sum of exp(x - max) (-inf parts: shift 0, sum 0).
    float m = fmaxf(h, t);
    float s = 1.0f;
    if constexpr (!(SB_ABLATE & 4)) {
      sweep<THREADS>(stage, ch.cnt, [&](const uint4& r, int) {
        float f[V];
        rows::unpack<T>(r, f);
#pragma unroll
        for (int k = 0; k < V; ++k) m = fmaxf(m, f[k]);
      });
      const float sh = shift_of(m);
      s = exp_shifted(h, sh) + exp_shifted(t, sh);
      sweep<THREADS>(stage, ch.cnt, [&](const uint4& r, int) {
        float f[V];
        rows::unpack<T>(r, f);
#pragma unroll
        for (int k = 0; k < V; ++k) s += (SB_ABLATE & 2) ? (f[k] - sh) * LOG2E : exp_shifted(f[k], sh);
      });
    } else {
      m = 0.0f;
    }
    const int b = i & 1;
    MaxSum all = block_merge<THREADS>(MaxSum{m, s}, part_m[b], part_s[b]);
    if constexpr (C > 1 && !(SB_ABLATE & 1)) {
      all = exchange_pairs<C>(all, pairs, xbar, rank, i, tid, lane);  // cluster_exchange.cuh
    }

    // Sweep 3: y = 2^((x - M) log2 e) / S. A row with NaN or +inf has S = NaN, an all -inf row
    // has x - M = NaN: NaN everywhere, as torch.softmax.
    const float mx = all.m, inv = 1.0f / all.s;
    const bool vec_out = ((reinterpret_cast<unsigned long long>(xr) ^ reinterpret_cast<unsigned long long>(yr)) & 15) == 0;
    T* yv = yr + ch.geo.head + (size_t)ch.v0 * V;  // y's element at the chunk's first vector
    const bool bulk_out = SB_STORE == 1 && vec_out;
    sweep<THREADS>(stage, ch.cnt, [&](const uint4& r, int j) {
      float f[V];
      rows::unpack<T>(r, f);
#pragma unroll
      for (int k = 0; k < V; ++k) f[k] = ((SB_ABLATE & 2) ? (f[k] - mx) * LOG2E : ex2((f[k] - mx) * LOG2E)) * inv;
      if (bulk_out) {
        stage[j] = rows::pack<T>(f);  // in place: this thread read vector j, and only it
      } else if (vec_out) {
        if constexpr (SB_STORE == 2) {
          st_global_16_cs(yv + (size_t)j * V, rows::pack<T>(f));
        } else {
          rows::st_global_16(yv + (size_t)j * V, rows::pack<T>(f));
        }
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) yv[(size_t)j * V + k] = rows::from_float<T>(f[k]);
      }
    });
    if (own_h) yr[tid] = rows::from_float<T>(ex2((h - mx) * LOG2E) * inv);
    if (own_t) yr[t_at] = rows::from_float<T>(ex2((t - mx) * LOG2E) * inv);

    if constexpr (SB_STORE == 1) {
      // Make this thread's generic-proxy writes of the stage visible to the bulk store (async proxy).
      if (bulk_out) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      __syncthreads();
      if (tid == 0) {
        if (bulk_out && ch.cnt) bulk_store(yv, stage, static_cast<unsigned>(ch.cnt) * 16u);
        bulk_commit();  // one group per row (empty for STG rows), so "all but the newest" = rows < i
        if (i >= 1 && i - 1 + S < rows_mine) {
          bulk_wait_read<1>();  // row i - 1's store has read its stage
          issue<T, C>(x, q + (i - 1 + S) * Q, N, rank, (i - 1) % S, stage_vecs, full);
        }
      }
    } else {
      __syncthreads();  // every thread has read the stage
      if (tid == 0 && i + S < rows_mine) issue<T, C>(x, q + (i + S) * Q, N, rank, st, stage_vecs, full);
    }
  }
  if constexpr (SB_STORE == 1) {
    if (tid == 0) bulk_wait_all();  // the stores have read the ring and written y before it is freed
  }
}

}  // namespace bulk
}  // namespace softmax

// Instances: a cluster of C = 1, 2, 4, 8, 16 blocks of SB_THREADS threads per row (C = 16 is a
// non-portable cluster size; kernelab.gpu allows it). Launch with cluster=C and the dynamic
// shared memory op.py's bulk_plan gives (S stages x ceil(N / (V x C)) x 16 B).
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_bk_c1_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::bulk::bulk_rows<float, 1>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_bk_c2_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::bulk::bulk_rows<float, 2>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_bk_c4_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::bulk::bulk_rows<float, 4>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_bk_c8_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::bulk::bulk_rows<float, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_bk_c16_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::bulk::bulk_rows<float, 16>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_bk_c1_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::bulk::bulk_rows<__nv_bfloat16, 1>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_bk_c2_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::bulk::bulk_rows<__nv_bfloat16, 2>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_bk_c4_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::bulk::bulk_rows<__nv_bfloat16, 4>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_bk_c8_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::bulk::bulk_rows<__nv_bfloat16, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_bk_c16_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::bulk::bulk_rows<__nv_bfloat16, 16>(x, y, M, N); }

// The names the op contract looks up: the widest instance (launch it with cluster=16 and the ring).
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::bulk::bulk_rows<float, 16>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::bulk::bulk_rows<__nv_bfloat16, 16>(x, y, M, N); }
