// v9_grid_groups: v7's bulk-copy ring, with the C blocks of a row a *group* of ordinary blocks
// (no hardware cluster) that exchange their (max, sum) pairs through global memory, so every SM
// works. Rows of 2049 .. 262144 elements, sm_90+ (cp.async.bulk, mbarrier transaction counts).
//
// What changed from v7 (a hardware cluster of C = 1, 2, 4, 8, 16 blocks per row, DSMEM exchange):
//   1. Groups, not clusters: block b is rank b % C of group b / C; the Q = gridDim.x / C groups
//      take rows g, g + Q, ... The grid is C x floor(resident blocks / C), launched cooperatively
//      (all blocks co-resident, or the launch is refused): blocks of a group wait for each other,
//      which only co-residency makes deadlock-free. C is any of 1..16, not a power of two: op.py's
//      grid_groups_plan picks it per (N, M, dtype, SMs) to fill the GPU (the rule is there and in
//      Knobs below). H200 (132 SMs), defaults (4 stages): bf16 2048 x 131072 -> C = 6 (22 groups,
//      all 132 SMs, 42.7 KiB shares); fp32 2048 x 131072 -> C = 11 (12 groups, 132 SMs).
//   2. Exchange through global memory: per group a counter (its own 128-byte line) and 2 x C float2
//      slots (row parity). For row j a block stores its pair into slots[g][j & 1][rank], then
//      red.release.gpu.add(counter[g], 1); it waits (ld.acquire.gpu spin, __nanosleep backoff) for
//      counter[g] >= C (j + 1), reads the C pairs (ld.relaxed.gpu) and merges them in rank order in
//      one warp, so every block of the group gets bit-identical (M, S). The counters start at 0:
//      op.py zeroes them (torch .zero_() on the launch stream, a memset node in a CUDA graph, ~1-2
//      us, < 1% of the 250 us bench row) before every launch.
//   3. An exchange warp (THREADS consumers + 32): it publishes, spins and merges, so no consumer
//      thread stalls on a global round trip (~1-2 us) and its release (a MEMBAR.GPU) waits only for
//      its own pair store, not for thread 0's bulk copies. It hands pairs over through shared
//      memory and two mbarrier pairs (pub: consumers -> it, got: it -> consumers, by row parity).
//   4. Rows software-pipelined so the exchange latency hides under work: consumer iteration i =
//        (a) head/tail scalars of row i + 1, wait its stage, sweeps 1-2 (max, sum of exp) over it,
//            merge over the consumer warps, thread 0 hands row i + 1's pair to the exchange warp;
//        (b) wait for row i's (M, S) (the exchange warp got it during (a)), sweep 3: y of row i;
//        (c) consumer barrier, thread 0 refills row i's stage with row i + S.
//      Row 0's stats are the prologue. The exchange warp takes rows in order: wait pub(j),
//      publish j, spin for j, merge, got(j). A row's exchange therefore overlaps the next row's two
//      stats sweeps (~2/3 of a row's work, ~2.5 us at 1/132 of the copy rate for a 43 KiB share).
//   Stage lifetimes: row i's stage is read in iterations i - 1 (stats) and i (output), and
//   refilled in (c) of iteration i, so 2 stages are held and S - 2 rows are in flight (v7: S - 1;
//   why the default is 4 stages, not v7's 3: 2 rows in flight, as v7 had).
//   Why parity double-buffering of the slots is safe: a block's exchange warp writes row j + 2's
//   pair into parity j & 1 only after its spin for row j + 1 ended, which needs every peer's row
//   j + 1 arrival; a peer's exchange warp issues that arrival after it read row j's pairs (it
//   takes rows in order). The shared hand-over buffers (mine, rowstat, by parity) follow the same
//   argument through pub / got: consumers write row j + 2's pair after their got(j) wait, issued
//   after the exchange warp read row j's; the exchange warp writes row j + 2's (M, S) after
//   pub(j + 2), issued after a consumer barrier that every consumer reaches after reading row j's.
//   Why counter >= C (j + 1) means all C row-j pairs (not one block's rows j and j + 1): no block
//   publishes row k + 1 before its spin for row k ended, so before the first row-(k + 1) arrival
//   every block has at most k + 1 arrivals, and C (k + 1) of them means each block's row k is in.
//   No deadlock: block b's publish of row j needs its got(j - 2) (peers' rows < j, induction) and
//   row j's stage (refilled after got(j - S)); no wait crosses groups; the grid is co-resident.
//   The ring's depth S is the launch's (dynamic shared memory / stage, at most 8), not a macro.
// Why: v7 at 2048 x 131072 (docs/runs/2026-11-30-h200-sweep_membound_s6_wide.json): bf16 300.7 us
//   = 0.83x a copy, fp32 548.7 us = 0.91x (copy 4.28 TB/s -> 250 / 500 us). Clusters of 4 or 8
//   blocks place only 30 / 15 at once (GPC shapes): 120 of 132 SMs, a 0.91x cap. v8 (a block per
//   SM, one row share in flight) lost ~20%, so this keeps v7's ring of bulk copies.
// Predicted: bytes first: bf16 2048 x 131072 moves 1.07 GB: 250 us at the copy rate; fp32 2.15 GB:
//   500 us. Per-group tail: bf16 C = 6, 22 groups: 2048 / 22 = 93.1 -> 94 rounds (+1.0%); fp32
//   C = 11, 12 groups: 170.7 -> 171 (+0.2%). Per row and block: ~0.1 us of fixed cost (2 consumer
//   barriers, the hand-overs, the refill; the plan counts it as 4 KiB of traffic: +5% at 42.7 KiB
//   shares, +4% at 46.5 KiB) and the exchange (~1-2 us) hidden under the next row's stats sweeps.
//   Shared memory: per element 1 TMA write + 3 LDS reads; 2 EX2 an element as v7. Predicted bf16
//   262-275 us (0.91-0.95x copy; v7 300.7), fp32 515-535 us (v7 548.7). Risks: a group runs at
//   its slowest block's pace (a late block stalls C SMs), and 6-11 small shares a row cost more
//   per-row overhead than v7's 4-8 larger ones.
// Knobs (header values op.py reads for the plan; `@threads` is compiled in as GG_THREADS):
//   `@group auto` or 1..16: auto picks, among C whose S stages of ceil(nvec / C) x 16 B fit the
//   block's shared memory, the one with the least predicted time ceil(M / Q) x (2 x stage + 4 KiB)
//   (Q = floor(resident / C) groups; ties to the smaller C). Predicted: forcing C = 4 at bf16 needs
//   3 stages (`@stages 3`: 1 row in flight) -3..-10%; C = 12 (11 groups) within 2% of C = 6.
//   `@stages` (the deepest ring; lower where no group fits: fp32 262144 takes 3) 3: 1 row in
//   flight while pipelining, -5..-15% (bf16 C = 4, fp32 C = 11); 5-8: smaller shares, within 3%.
//   `@threads` (consumers, a multiple of 32, 128..992): 256 -2..-5% (the sweeps near the SFU
//   limit), 992 within 2%.
// Measured (H200, one process: docs/runs/2026-11-30-h200-sweep_membound_s6_groups.json, copy 4.28
//   TB/s): correct everywhere (21 GPU tests, cooperative launches, graph replays), but no real gain.
//   2048 x 131072 bf16: the default (C = 6, 4 stages) 362.5 us; `@stages 3` (C = 4, 33 groups: all
//   132 SMs) 297.2, `@group 4` 296.5 = 0.85x a copy, v7 (30 clusters of 4: 120 SMs) 302.5 in the
//   same run; C = 12 482.4, 256 / 992 threads 371.6 / 366.3. fp32: 619.6-643.1 (C = 6 .. 12) vs
//   v7 545.4. What it shows: 10% more SMs bought 2% in bf16, so v7 is not capped by cluster
//   placement (session 5's reading, which this variant was built to test) but by what one SM
//   does per row; the deeper ring (4 stages, smaller shares) and larger groups cost more than
//   they hide. Not adopted; v7 stays the pick for the widest rows.
// Measured: BENCHMARKS.md, softmax rows (full runs).
// @strategy grid_groups
// @arch sm_90
// @stages 4
// @threads 512
// @group auto
#include "softmax_common.cuh"
#include "cluster_exchange.cuh"
#include "bulk_ring.cuh"  // Chunk / chunk_of (a block's share of a row), sweep (read a staged share)
#include "group_exchange.cuh"  // the pairs and counters in global memory

#ifndef GG_THREADS
#define GG_THREADS 512
#endif
#define GG_MAX_STAGES 8  // the ring's depth S is the launch's: dynamic shared memory / stage size, 2..8
static_assert(GG_THREADS % 32 == 0 && GG_THREADS >= 128 && GG_THREADS <= 992,
              "GG_THREADS: consumer threads, a multiple of 32 from 128 to 992 (plus the exchange warp)");

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "v9_grid_groups needs sm_90 (cp.async.bulk, mbarrier transaction counts)"
#endif

namespace softmax {
namespace groups {
using namespace ::softmax::cx;  // smem_addr, mbar_init, mbar_expect, mbar_wait (cluster_exchange.cuh)
using namespace ::softmax::ring;  // Chunk, chunk_of, sweep, stage_share (bulk_ring.cuh)
using namespace ::softmax::gx;    // COUNTER_STRIDE, st_pair, red_release_add, wait_pairs (group_exchange.cuh)

extern __shared__ __align__(128) uint4 ring[];

__device__ __forceinline__ void mbar_arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");  // .release.cta
}
// The consumer warps only (barrier 1; barrier 0 is __syncthreads, which would need the exchange warp).
__device__ __forceinline__ void consumer_sync() {
  asm volatile("bar.sync 1, %0;" ::"n"(GG_THREADS) : "memory");
}

// The consumers' (max, sum) of the block's share of one row (sweeps 1 and 2) and its head / tail
// scalars (rank 0 / rank C - 1, -inf elsewhere).
template <typename T, int THREADS>
__device__ __forceinline__ MaxSum share_stats(const uint4* stage, int cnt, float h, float t, float* pm, float* ps) {
  constexpr int V = rows::Traits<T>::V;
  float m = fmaxf(h, t);
  sweep<THREADS>(stage, cnt, [&](const uint4& r, int) {
    float f[V];
    rows::unpack<T>(r, f);
#pragma unroll
    for (int k = 0; k < V; ++k) m = fmaxf(m, f[k]);
  });
  const float sh = shift_of(m);
  float s = exp_shifted(h, sh) + exp_shifted(t, sh);
  sweep<THREADS>(stage, cnt, [&](const uint4& r, int) {
    float f[V];
    rows::unpack<T>(r, f);
#pragma unroll
    for (int k = 0; k < V; ++k) s += exp_shifted(f[k], sh);
  });
  return consumer_merge<THREADS>(MaxSum{m, s}, pm, ps);
}

template <typename T, int C>
__device__ __forceinline__ void grid_group_rows(const T* __restrict__ x, T* __restrict__ y, int M, int N,
                                                unsigned* __restrict__ counters, float2* __restrict__ slots) {
  constexpr int THREADS = GG_THREADS, V = rows::Traits<T>::V;
  static_assert(C >= 1 && C <= 16, "C is 1..16");
  __shared__ float part_m[2][THREADS / 32], part_s[2][THREADS / 32];
  __shared__ float2 mine[2], rowstat[2];
  __shared__ alignas(8) unsigned long long full[GG_MAX_STAGES];
  __shared__ alignas(8) unsigned long long pub[2], got[2];

  // Stage size: the widest share a row of N can give; the ring holds S of them (op.py's
  // grid_groups_plan sizes the dynamic shared memory as S x this).
  const int stage_vecs = (N + V * C - 1) / (V * C);
  const int S = min(GG_MAX_STAGES, static_cast<int>(dynamic_smem_size() / (stage_vecs * 16u)));
  if (S < 2) __trap();  // launched without a ring of at least 2 stages
  if (blockDim.x != THREADS + 32 || gridDim.x % C != 0) __trap();  // not the plan's block / grid: fail loudly
  const int tid = threadIdx.x, lane = tid & 31;
  if (tid == 0) {
    for (int s = 0; s < S; ++s) mbar_init(&full[s], 1);
    for (int b = 0; b < 2; ++b) {
      mbar_init(&pub[b], 1);
      mbar_init(&got[b], 1);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");  // visible to the async proxy
  }
  __syncthreads();  // the only block-wide barrier: from here the exchange warp and consumers part
  const int g = blockIdx.x / C, rank = blockIdx.x % C, Q = gridDim.x / C;
  if (g >= M) return;  // the whole group (all its blocks have the same g)
  const int rows_mine = (M - 1 - g) / Q + 1;  // rows g, g + Q, ... < M

  if (tid >= THREADS) {
    // ---- the exchange warp: rows in order; pub(j) -> publish -> spin -> merge -> got(j) ----
    unsigned* counter = counters + (size_t)g * COUNTER_STRIDE;
#pragma unroll 1
    for (int j = 0; j < rows_mine; ++j) {
      const int b = j & 1;
      mbar_wait(&pub[b], (j >> 1) & 1);
      MaxSum all;
      if constexpr (C == 1) {
        const float2 p = mine[b];
        all = MaxSum{p.x, p.y};
      } else {
        float2* pairs = slots + ((size_t)g * 2 + b) * C;
        if (lane == 0) {
          st_pair(pairs + rank, mine[b]);
          red_release_add(counter, 1u);  // orders the pair store before the count
        }
        // every peer's row-j pair is stored once the counter reaches C (j + 1)
        const float2 p = wait_pairs<C>(counter, static_cast<unsigned>(C) * static_cast<unsigned>(j + 1), pairs, lane);
        all = warp_merge(MaxSum{p.x, p.y});  // rank order, the same bits in every block of the group
      }
      if (lane == 0) {
        rowstat[b] = make_float2(all.m, all.s);
        mbar_arrive(&got[b]);
      }
    }
    return;
  }

  // ---- consumers ----
  if (tid == 0) {
#pragma unroll 1
    for (int i = 0; i < S && i < rows_mine; ++i) stage_share<T, C>(ring, x, g + i * Q, N, rank, i, stage_vecs, full);
  }
  // Head (rank 0) and tail (rank C - 1) scalars of row `row`: plain loads, before the stage wait.
  auto scalars = [&](int row, float& h, float& t) {
    const T* xr = x + (size_t)row * N;
    const rows::Geometry geo = rows::geometry(xr, N);
    h = rank == 0 && tid < geo.head ? rows::to_float(xr[tid]) : -INFINITY;
    t = rank == C - 1 && tid < geo.tail ? rows::to_float(xr[geo.head + geo.nvec * V + tid]) : -INFINITY;
  };
  // Sweeps 1-2 of this block's row i and the hand-over of its pair to the exchange warp.
  auto stats = [&](int i, float h, float t) {
    const int st = i % S, b = i & 1;
    const Chunk ch = chunk_of<T, C>(x + (size_t)(g + i * Q) * N, N, rank);
    mbar_wait(&full[st], (i / S) & 1);
    const MaxSum p = share_stats<T, THREADS>(ring + (size_t)st * stage_vecs, ch.cnt, h, t, part_m[b], part_s[b]);
    if (tid == 0) {
      mine[b] = make_float2(p.m, p.s);
      mbar_arrive(&pub[b]);
    }
  };

  float h, t;
  scalars(g, h, t);
  stats(0, h, t);
#pragma unroll 1
  for (int i = 0; i < rows_mine; ++i) {
    const int row = g + i * Q, st = i % S, b = i & 1;
    // (a) the next row's stats, while the exchange warp gets this row's (M, S).
    float hn = -INFINITY, tn = -INFINITY;
    if (i + 1 < rows_mine) {
      scalars(row + Q, hn, tn);
      stats(i + 1, hn, tn);
    }
    // (b) sweep 3: y = 2^((x - M) log2 e) / S. A row with NaN or +inf has S = NaN, an all -inf row
    // has x - M = NaN: NaN everywhere, as torch.softmax.
    mbar_wait(&got[b], (i >> 1) & 1);
    const float2 rs = rowstat[b];
    const float mx = rs.x, inv = 1.0f / rs.y;
    const T* xr = x + (size_t)row * N;
    T* yr = y + (size_t)row * N;
    const Chunk ch = chunk_of<T, C>(xr, N, rank);
    const bool vec_out = ((reinterpret_cast<unsigned long long>(xr) ^ reinterpret_cast<unsigned long long>(yr)) & 15) == 0;
    T* yv = yr + ch.geo.head + (size_t)ch.v0 * V;  // y's element at the share's first vector
    const uint4* stage = ring + (size_t)st * stage_vecs;
    sweep<THREADS>(stage, ch.cnt, [&](const uint4& r, int j) {
      float f[V];
      rows::unpack<T>(r, f);
#pragma unroll
      for (int k = 0; k < V; ++k) f[k] = ex2((f[k] - mx) * LOG2E) * inv;
      if (vec_out) {
        rows::st_global_16(yv + (size_t)j * V, rows::pack<T>(f));
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) yv[(size_t)j * V + k] = rows::from_float<T>(f[k]);
      }
    });
    if (rank == 0 && tid < ch.geo.head) yr[tid] = rows::from_float<T>(ex2((h - mx) * LOG2E) * inv);
    if (rank == C - 1 && tid < ch.geo.tail) {
      yr[ch.geo.head + ch.geo.nvec * V + tid] = rows::from_float<T>(ex2((t - mx) * LOG2E) * inv);
    }
    // (c) every consumer has read the stage (stats in iteration i - 1, output now): refill it.
    consumer_sync();
    if (tid == 0 && i + S < rows_mine) stage_share<T, C>(ring, x, g + (i + S) * Q, N, rank, st, stage_vecs, full);
    h = hn;
    t = tn;
  }
}

}  // namespace groups
}  // namespace softmax

// Instances: groups of C = 1..16 blocks of GG_THREADS consumers + the exchange warp. Launch
// cooperatively with grid = C x groups, block = GG_THREADS + 32, the dynamic shared memory op.py's
// grid_groups_plan gives (S stages x ceil(N / (V x C)) x 16 B), and a zeroed workspace: counters
// (groups x 32 unsigned) and slots (groups x 2 x C float2).
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c1_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<float, 1>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c1_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<__nv_bfloat16, 1>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c2_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<float, 2>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c2_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<__nv_bfloat16, 2>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c3_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<float, 3>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c3_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<__nv_bfloat16, 3>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c4_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<float, 4>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c4_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<__nv_bfloat16, 4>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c5_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<float, 5>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c5_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<__nv_bfloat16, 5>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c6_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<float, 6>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c6_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<__nv_bfloat16, 6>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c7_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<float, 7>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c7_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<__nv_bfloat16, 7>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c8_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<float, 8>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c8_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<__nv_bfloat16, 8>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c9_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<float, 9>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c9_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<__nv_bfloat16, 9>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c10_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<float, 10>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c10_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<__nv_bfloat16, 10>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c11_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<float, 11>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c11_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<__nv_bfloat16, 11>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c12_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<float, 12>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c12_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<__nv_bfloat16, 12>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c13_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<float, 13>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c13_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<__nv_bfloat16, 13>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c14_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<float, 14>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c14_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<__nv_bfloat16, 14>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c15_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<float, 15>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c15_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<__nv_bfloat16, 15>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c16_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<float, 16>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_gg_c16_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ counters, float2* __restrict__ slots) { softmax::groups::grid_group_rows<__nv_bfloat16, 16>(x, y, M, N, counters, slots); }

// The names the op contract looks up: the widest instance (launch it as softmax_gg_c16_*).
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ counters,
            float2* __restrict__ slots) { softmax::groups::grid_group_rows<float, 16>(x, y, M, N, counters, slots); }
extern "C" __global__ void __launch_bounds__(GG_THREADS + 32, 1)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N,
             unsigned* __restrict__ counters, float2* __restrict__ slots) {
  softmax::groups::grid_group_rows<__nv_bfloat16, 16>(x, y, M, N, counters, slots);
}
