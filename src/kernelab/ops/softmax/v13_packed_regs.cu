// v13_packed_regs: one 1024-thread block an SM holds its share of a row in registers as the raw
// 16-byte vectors it loaded (v6's packed rows, at v12's widths), so a cluster of C = 2 blocks holds
// a 131072-wide bf16 row and the clusters fill all 132 SMs of an H200 where v12's clusters of 8
// fill 120; the row's exps are computed twice (for the sum, then for y) instead of kept.
//
// What changed from v12_dynamic_rows (whose counter-driven rows, bulk-copied stage and cluster
//   exchange it keeps):
//   1. a thread holds 8 raw vectors (32 registers: 64 bf16 or 32 fp32 values), not v12's 64 fp32
//      exps; a block of 1024 threads holds 128 KiB of a row (v12: 256 threads, 32 KiB);
//   2. one block an SM and a single 128 KiB stage (the next row's share, copied in while the
//      current one is worked on from registers), so C = 2 at 2048 x 131072 bf16: the driver places
//      66 clusters of 2 on 132 SMs, clusters of 4 on 120, of 8 on 120 (scripts/cluster_fit.py,
//      docs/runs/2026-12-01-h200-cluster_fit.log);
//   3. two EX2 an element (the sum, then y = exp(x - M) / S) where v12 keeps the exps: 32 registers
//      cannot hold them.
// Why (docs/runs/2026-12-01-h200-sweep_membound_s12_ablate.json): v12 runs 2048 x 131072 bf16 at
//   276 us = 0.91x a copy. Removing its EX2 gives 263 us, removing its stores 213, both 178: v12's
//   per-row chain (sweep, merge, exchange, stores) on two 256-thread blocks an SM, on 120 SMs, is
//   what it waits on, not the bytes. Here the same rows take twice the SMs' worth of block
//   resources (1024 threads, 128 KiB of registers a block) and all 132 SMs.
// Predicted: bytes first: 2048 x 131072 bf16 1.07 GB, 254 us at torch's copy_ rate (4.23 TB/s).
//   Per SM and row share (128 KiB in, 128 KiB out): 8.2 us of HBM time at 1/132 of the copy rate;
//   2 x 65536 EX2 at 16 a clock is 8192 clocks, 4.3 us at 1.9 GHz, plus ~5 us of issue for the
//   other ~8 instructions an element: under the HBM time if the next share's copy (in flight the
//   whole row) and the other SMs' rows keep the memory busy. Expected 260-268 us (0.95-0.98x);
//   fp32 rows of 131072 need C = 4 (120 SMs), no better than v12's 32-value clusters of 16.
// Measured (H200, each against v4_dispatch in the same process, twice; docs/runs/
//   2026-12-01-h200-sweep_membound_s12_v13a.json with the stage refilled after the block's (max, sum)
//   merge, _v13b.json with it refilled after the max, before the sum's EX2 sweep, as now):
//   2048 x 131072 bf16 293.4 -> 289.6 us vs v12 277.0 (0.87x a copy: slower, the prediction missed);
//   fp32 558.1 -> 543.0 vs 526.2 (C = 4, 120 SMs); 4096 x 65536 bf16 291.4 -> 277.7 vs 268.4 (v12);
//   4096 x 65536 fp32 542.4 -> 535.3 vs v5 574.7 (-6.8%, 0.94x a copy: v4_dispatch takes fp32
//   32769-65536 here since); 8192 x 32768 bf16 (C = 1) 344.4 -> 284.0 vs v6 257.0. One block an SM
//   leaves each row's chain (sweep, two block reductions, the exchange, two EX2 sweeps, the stores)
//   with nothing beside it but the next row's copy; v12's second block an SM covers it.
// Measured: BENCHMARKS.md, softmax rows (section membound: v13 at every bench shape it holds).
//
// @strategy packed_regs
// @arch sm_90
// @threads 1024
// @access_bytes 16
#include "softmax_common.cuh"
#include "fast_exp.cuh"  // PR_FAST_EXP
#include "cluster_exchange.cuh"
#include "bulk_ring.cuh"  // Chunk / chunk_of, stage_share, dynamic_smem_size
#include "row_handout.cuh"  // the row slots and counter reset v12 uses

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "softmax v13_packed_regs needs sm_90 (cp.async.bulk, mbarrier transaction counts, clusters)"
#endif

namespace softmax {
namespace preg {
using namespace ::softmax::cx;
using namespace ::softmax::ring;

constexpr int THREADS = 1024;
// Raw 16-byte vectors a thread holds: a block's share is at most 8192 vectors (128 KiB). sm_120 gives
// a block 99 KiB of shared memory, so its stage caps a share at 6208 vectors: 7 a thread suffice
// there, and 8 made ptxas spill 16 bytes at the 64-register cap (op.py's plan is the same either way).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1200
constexpr int K = 7;
#else
constexpr int K = 8;
#endif
constexpr int R = 4;  // row-index slots (rows i .. i + 2 are handed out at once)

// PR_FAST_EXP 1 (session 27; fast_exp.cuh, staged_rows.cuh's SB_FAST_EXP for this body): the thread's max
// on the raw vectors (bf16 pairs: a quarter of the instructions; the padding -inf, so the sum sweep needs no
// bounds test), both EX2 sweeps as ex2(fma(x, LOG2E, -c)) with the shift's rounding residual 2^-c_lo folded
// into the block's sum and into 1 / S once (the shifts are the block's and the row's maxima: one branch for
// the block). Per bf16 element: 8.75 instructions where there were 12.5 (unpack + max; unpack, FADD, FMUL,
// EX2, FADD; unpack, FADD, FMUL, EX2, FMUL, half a pack). Measured (H200, sweep fast27b at c9a820f,
// docs/runs/2026-12-02-h200-sweep_fast27b.json, alternating twice, us): v13 alone 2048 x 131072 bf16 281.8 / 281.6
// against 289.5 / 290.0 (-2.8%; predicted -5 to -10%), but through v4_dispatch mixed: v16's 1024 x 262144 bf16
// 274.8 / 274.0 against 277.2 / 275.8, 1325 x 151936 216.7 / 216.6 against 215.0 / 215.1 (+0.8%), v14's side grid
// at 2048 x 131072 and v13's fp32 4096 x 65536 the same. So it stays off: no shape v4 sends here gains for sure.
#ifndef PR_FAST_EXP
#define PR_FAST_EXP 0
#endif

extern __shared__ __align__(128) uint4 stage[];

// Rows taken from work[0] (v12's hand-out, two rows ahead with one stage): the leader (rank 0,
// thread 0) takes row i + 2's index at the start of row i and pushes it into every block's slot
// (i + 2) % R after row i's block merge; thread 0 of each block refills the stage with row i + 1
// right after that merge (every thread has copied its vectors into registers by then).
// Slots: row j's slot is armed by a block at its iteration j - 2, pushed at the leader's iteration
//   j - 2 and read at iterations j - 1 (thread 0) and j; its previous occupant, row j - 4, was read
//   at iteration j - 4, which every block has passed when the leader is at j - 2: the exchange of
//   row j - 3 needs every block's pair of it. A push may land before its arm (the phase also waits
//   for the arm's arrival). C = 1: thread 0 writes the slot; the next merge barrier publishes it.
// Exchange (C > 1): v12's pairs and double-buffered mbarriers (b = i & 1, parity (i >> 1) & 1).
// Exit: the first index >= M (rows are taken in increasing order, so no copy is in flight); each
//   block waits for row i + 1's index, the last push made to it; the last cluster resets work.
// Split (v14_split_grid, this kernel the side grid beside v12's clusters): the leader stops taking
//   rows once a take returns an index >= `stop` (that row is still done) and hands out M from then
//   on, so the last rows go to the faster main grid; `clusters` counts both grids' clusters for the
//   reset.
template <typename T, int C, bool Split = false, int NT = THREADS>  // NT: v16's 512-thread blocks
__device__ __forceinline__ void packed_reg_rows(const T* __restrict__ x, T* __restrict__ y, int M, int N,
                                                unsigned* __restrict__ work, unsigned clusters = 0u,
                                                unsigned stop = 0u) {
  constexpr int V = rows::Traits<T>::V;
  static_assert(C >= 1 && C <= 8, "C is 1 to 8 blocks a cluster (8: the portable cluster size)");
  __shared__ float part_m[2][NT / 32], part_s[2][NT / 32];
  __shared__ float2 pairs[2][C];
  __shared__ alignas(8) unsigned long long full[1];
  __shared__ alignas(8) unsigned long long xbar[2];
  __shared__ alignas(8) unsigned long long rowbar[R];
  __shared__ unsigned row_of[R];

  const int stage_vecs = (N + V * C - 1) / (V * C);  // op.py's bulk_stage_bytes / 16
  if (dynamic_smem_size() < (unsigned)stage_vecs * 16u) __trap();  // launched without the stage
  if (stage_vecs > K * NT) __trap();  // a share wider than the registers: op.py picks a larger C
  unsigned rank = 0;
  if constexpr (C > 1) {
    if (nctarank() != C) __trap();  // launched without cluster=C: fail loudly, not read a wrong peer
    rank = ctarank();
  }
  const int tid = threadIdx.x, lane = tid & 31;
  const bool leader = rank == 0 && tid == 0;
  const handout::Slots<C, R> handed{rowbar, row_of};  // row_handout.cuh
  handout::StopTaker taker{work, stop, (unsigned)M};  // Split: the leader's rows while below `stop`
  auto take = [&]() -> unsigned {
    if constexpr (!Split) {
      return atomicAdd(&work[0], 1u);
    } else {
      return taker.take();
    }
  };
  if (tid == 0) {
    mbar_init(&full[0], 1);
    mbar_init(&xbar[0], 1);
    mbar_init(&xbar[1], 1);
    handed.init();
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  sync_after_init<C>();  // cluster_exchange.cuh
  if (tid == 0) {
    handed.arm(0);
    handed.arm(1);
  }
  if (leader) {
    handed.hand(0, take());
    handed.hand(1, take());
  }
  if constexpr (C == 1) __syncthreads();  // row_of written by thread 0
  if (tid == 0) {
    const unsigned r0 = handed.index_of(0);
    if (r0 < (unsigned)M) stage_share<T, C>(stage, x, (int)r0, N, rank, 0, stage_vecs, full);
  }

  int i = 0;
#pragma unroll 1
  for (;; ++i) {
    if (tid == 0) handed.arm(i + 2);
    const unsigned r = handed.index_of(i);
    if (r >= (unsigned)M) break;
    const unsigned next = leader ? take() : 0u;  // row i + 2; its round trip runs under the sweep

    const size_t base = (size_t)r * N;
    const T* xr = x + base;
    const Chunk ch = chunk_of<T, C>(xr, N, rank);
    // The row's head and tail scalars (before its first and after its last 16-byte vector): one
    // a thread at most, the head's in threads 0.., the tail's in threads NT - 1 down.
    auto edge_at = [&]() -> int {
      if (rank == 0 && tid < ch.geo.head) return tid;
      if (rank == C - 1 && NT - 1 - tid < ch.geo.tail) return ch.geo.head + ch.geo.nvec * V + (NT - 1 - tid);
      return -1;
    };
    const int e_at = edge_at();
    const float e = e_at >= 0 ? rows::to_float(xr[e_at]) : -INFINITY;
    mbar_wait(&full[0], i & 1);

    // The share into registers, raw; the thread's max.
    uint4 raw[K];
    float m = e;
    if constexpr (PR_FAST_EXP) {
#pragma unroll
      for (int k = 0; k < K; ++k) raw[k] = tid + k * NT < ch.cnt ? stage[tid + k * NT] : fexp::neg_inf_vec<T>();
      m = fexp::raw_max<T, K>(raw, m);
    } else {
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const int j = tid + k * NT;
        if (j < ch.cnt) {
          raw[k] = stage[j];
          float f[V];
          rows::unpack<T>(raw[k], f);
#pragma unroll
          for (int v = 0; v < V; ++v) m = fmaxf(m, f[v]);
        }
      }
    }
    // The block's max (one barrier): past it every thread has copied its vectors out of the stage,
    // so the stage is refilled with row i + 1 here, before the sum's EX2 sweep rather than after it
    // (one stage: the copy has the rest of the row to land).
    const int b = i & 1, warp = tid >> 5;
    m = rows::warp_max(m);
    if (lane == 0) part_m[b][warp] = m;
    __syncthreads();
    m = rows::warp_max(lane < NT / 32 ? part_m[b][lane] : -INFINITY);  // NT = 512: 16 warps
    if (leader) handed.hand(i + 2, next);
    if (tid == 0) {
      const unsigned rn = handed.index_of(i + 1);
      if (rn < (unsigned)M) stage_share<T, C>(stage, x, (int)rn, N, rank, 0, stage_vecs, full);
    }
    // The block's sum of exp(x - m): the first EX2 of each element.
    const float sh = shift_of(m);
    float s;
    if constexpr (PR_FAST_EXP) {
      float sc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      if (fexp::fast_ok(sh)) {  // m is the block's: the whole block takes one side
        const fexp::Base bs = fexp::base_of(sh);
#pragma unroll
        for (int k = 0; k < K; ++k) {  // padding is -inf: exps to 0, no bounds test
          float f[V];
          rows::unpack<T>(raw[k], f);
#pragma unroll
          for (int v = 0; v < V; ++v) sc[v & 3] += fexp::exp_base(f[v], bs);
        }
        s = ((sc[0] + sc[1]) + (sc[2] + sc[3]) + fexp::exp_base(e, bs)) * bs.fix;
      } else {
#pragma unroll
        for (int k = 0; k < K; ++k) {
          float f[V];
          rows::unpack<T>(raw[k], f);
#pragma unroll
          for (int v = 0; v < V; ++v) sc[v & 3] += exp_shifted(f[v], sh);
        }
        s = (sc[0] + sc[1]) + (sc[2] + sc[3]) + exp_shifted(e, sh);
      }
    } else {
      s = exp_shifted(e, sh);
#pragma unroll
      for (int k = 0; k < K; ++k) {
        if (tid + k * NT < ch.cnt) {
          float f[V];
          rows::unpack<T>(raw[k], f);
#pragma unroll
          for (int v = 0; v < V; ++v) s += exp_shifted(f[v], sh);
        }
      }
    }
    MaxSum all{m, rows::block_sum<NT>(s, part_s[b])};
    if constexpr (C > 1) {
      all = exchange_pairs<C>(all, pairs, xbar, rank, i, tid, lane);  // cluster_exchange.cuh
    }

    // y = exp(x - M) / S: the second EX2. An all -inf row has M = -inf, S = 0: 0 x inf = NaN, as
    // torch.softmax; a row with NaN or +inf has S = NaN.
    const float shm = shift_of(all.m), inv = 1.0f / all.s;
    T* yr = y + base;
    const bool vec_out = ((reinterpret_cast<unsigned long long>(xr) ^ reinterpret_cast<unsigned long long>(yr)) & 15) == 0;
    T* yv = yr + ch.geo.head + (size_t)ch.v0 * V;  // y's element at the share's first vector
    // PR_FAST_EXP: y = 2^(x LOG2E - c) x (fix / S), one FFMA, EX2 and FMUL (the row's shift: one side for all).
    const bool fast_out = PR_FAST_EXP && fexp::fast_ok(shm);
    const fexp::Base bo = fexp::base_of(fast_out ? shm : 0.0f);
    const float inv_fix = inv * bo.fix;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int j = tid + k * NT;
      if (j < ch.cnt) {
        float f[V];
        rows::unpack<T>(raw[k], f);
        if (fast_out) {
#pragma unroll
          for (int v = 0; v < V; ++v) f[v] = fexp::exp_base(f[v], bo) * inv_fix;
        } else {
#pragma unroll
          for (int v = 0; v < V; ++v) f[v] = exp_shifted(f[v], shm) * inv;
        }
        if (vec_out) {
          rows::st_global_16(yv + (size_t)j * V, rows::pack<T>(f));
        } else {
#pragma unroll
          for (int v = 0; v < V; ++v) yv[(size_t)j * V + v] = rows::from_float<T>(f[v]);
        }
      }
    }
    // The edge scalar is read again here rather than kept live across the merge (at 1024 threads
    // a register more spills).
    const int e_out = edge_at();
    if (e_out >= 0) yr[e_out] = rows::from_float<T>(exp_shifted(rows::to_float(xr[e_out]), shm) * inv);
  }
  // Drain: row i + 1's index, the last one pushed to this block (>= M, as row i's).
  if constexpr (C > 1) {
    if (tid == 0) handed.index_of(i + 1);
  }
  if (leader) {
    if constexpr (Split) {
      handout::finish_of(work, clusters);
    } else {
      handout::finish<C>(work);
    }
  }
}

}  // namespace preg
}  // namespace softmax

#ifndef SOFTMAX_NO_ENTRY_POINTS  // v4_dispatch and v14-v16 include this file for packed_reg_rows alone
// Instances: a cluster of C = 1, 2, 4, 8 blocks of 1024 threads per row, one block an SM. Launch
// with cluster=C, the dynamic shared memory op.py's packed_regs_plan gives (one stage) and `work`:
// two unsigned (rows taken, clusters finished), zero before the launch; the kernel leaves them zero.
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_pr_c1_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<float, 1>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_pr_c2_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<float, 2>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_pr_c4_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<float, 4>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_pr_c8_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<float, 8>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_pr_c1_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<__nv_bfloat16, 1>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_pr_c2_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<__nv_bfloat16, 2>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_pr_c4_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<__nv_bfloat16, 4>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_pr_c8_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<__nv_bfloat16, 8>(x, y, M, N, work); }

// The names the op contract looks up: the widest instance (launch it as softmax_pr_c8_*).
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<float, 8>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<__nv_bfloat16, 8>(x, y, M, N, work); }
#endif
