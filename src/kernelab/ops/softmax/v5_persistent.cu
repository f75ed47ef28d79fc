// v5_persistent: persistent warps, blocks and clusters that load the NEXT row while the
// current one is reduced and written, so DRAM never waits for a reduction or a barrier.
//
// What changed from v0/v1/v3: the grid no longer has one warp/block/cluster per row. It holds
//   as many as fit on the GPU at once (the occupancy API: resident blocks, or
//   cuOccupancyMaxActiveClusters), and each loops over rows r, r + stride, ... Before it
//   exponentiates, reduces and stores row r, each thread issues the 16-byte loads of its
//   share of row r + stride into registers (raw bf16/fp32, E = 32 elements: 64 B bf16,
//   128 B fp32 per thread), so those loads are in flight across the reduction, the barriers
//   and the stores of row r. Three shapes of work, picked by N (plan in op.py):
//     N <= 1024             a warp per row (v0's layout), 8 warps per 256-thread block;
//     N <= 16384            a block of 64..512 threads per row (v1's layout, C = 1);
//     N <= 262144 (sm_90)   a cluster of C = 2..16 blocks per row (v3's layout). C = 16 is a
//                           non-portable cluster size: kernelab.gpu sets
//                           CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED for it.
//   The cluster exchange is new too: v3's barrier.cluster.arrive has release semantics, so
//   ptxas puts a MEMBAR.ALL.GPU before it, and a membar waits for the thread's outstanding
//   memory operations, which here would be the prefetch of the next row. Instead each block
//   pushes its (max, sum) pair into every peer's shared memory with st.async, which counts
//   its bytes on the peer's mbarrier (complete_tx, as quack's cluster reductions do), and
//   waits on its own mbarrier; no cluster barrier, no membar inside the loop. Pairs and
//   mbarriers are double-buffered by row parity (proof at `cluster_rows`).
// Why: v1 and v3 load a row, then stop loading while it is reduced and stored; a cluster also
//   pays its launch and barrier per row. Measured (H200, cold L2): v3 at 2048 x 131072 bf16
//   is 370 us = 68% of the copy rate, v1 at 32768 x 8192 bf16 272 us, v0 at 262144 x 1024
//   267 us; all lose to idle DRAM between phases, not to bytes.
// Predicted: bytes first. Every bf16 bench shape moves 1.07 GB: 251 us at the copy rate
//   (4.27 TB/s); fp32 shapes 2.15 GB: 503 us. In flight per SM: 1024 threads x 64 B = 64 KiB
//   bf16 (512 threads x 128 B fp32), over the ~32 KiB that HBM latency needs. Predicted:
//   2048 x 131072 bf16 (C = 8 x 512 threads) 260-275 us (0.91-0.97x copy; v3 370),
//   fp32 520-540 us (v3 652); 32768 x 8192 bf16 (C = 1, 256 threads) 258-265 us (v1 272);
//   262144 x 1024 bf16 (warps) 255-262 us (v0 267, torch.compile 253); 8192 x 32768 bf16
//   (C = 2 x 512) 260-270 us (v2 266).
// Knobs (header values a sweep overrides; op.py reads them): `@threads 256|512` picks the block
//   size of the cluster instances (default: 256 x 2/4/8, then 512 x 8/16); `@elems 64` takes the
//   instances whose threads hold 64 elements (bf16: 512 threads/SM, 64 KiB in flight; fewer
//   threads per row, so cheaper reductions).
// Sweep (docs/runs/2026-11-30-h200-sweep_softmax.json, one H200 process, copy 505 us): 2048 x 131072
//   bf16 294.9 us with 64 elements per thread (clusters of 8 x 256; 85.6% of copy, 1.84x
//   torch.compile; v3 373.2), fp32 570.6 (v3 651.8); 4096 x 65536 301.5 (v2 303.7). Where a row fits
//   a block or a warp it lost (32768 x 8192 298.0 vs v1 273.4; 262144 x 1024 279.3 vs v0 268.0), so
//   v4 dispatches to it only past 32768.
// Measured: BENCHMARKS.md, softmax rows (generated from results JSON).
//
// @strategy persistent
// @arch sm_90
// @access_bytes 16
#include "softmax_common.cuh"
#include "cluster_exchange.cuh"

// Measurement only (wrong output by design; the sweeps time it unchecked): 1 skips the cluster
// exchange, each block using its own (max, sum).
#ifndef PS_ABLATE
#define PS_ABLATE 0
#endif

namespace softmax {
namespace pers {

// The next row's share of one thread, as raw 16-byte vectors plus its head/tail scalars.
// P threads per row, thread index g (0 <= g < P), the Slice layout of rows.cuh.
template <typename T, int E, int P>
struct NextRow {
  static constexpr int V = rows::Traits<T>::V;
  static constexpr int K = E / V;
  uint4 raw[K];
  float h, t;
  int head;  // the row's geometry follows from head and N (nvec = (N - head) / V): one register
             // carried across the loop instead of three

  // Issues the loads; nothing waits for them until `into` reads the registers.
  __device__ __forceinline__ void issue(const T* row, int n, int g) {
    const rows::Geometry geo = rows::geometry(row, n);
    head = geo.head;
    const T* base = row + geo.head;
#pragma unroll
    for (int k = 0; k < K; ++k) {  // evict-first: x is read once
      raw[k] = k * P + g < geo.nvec ? __ldcs(reinterpret_cast<const uint4*>(base + (size_t)(k * P + g) * V))
                                    : make_uint4(0u, 0u, 0u, 0u);
    }
    h = g < geo.head ? rows::to_float(row[g]) : -INFINITY;
    t = g < geo.tail ? rows::to_float(row[geo.head + geo.nvec * V + g]) : -INFINITY;
  }

  __device__ __forceinline__ rows::Geometry geometry(int n) const {
    const int nvec = (n - head) / V;
    return rows::Geometry{head, nvec, n - head - nvec * V};
  }

  // Widens the loaded values into `sl` (-inf padding where the thread owns nothing).
  __device__ __forceinline__ void into(rows::Slice<T, E, P>& sl, const rows::Geometry& geo, int g) const {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (k * P + g < geo.nvec) {
        rows::unpack<T>(raw[k], sl.v[k]);
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i) sl.v[k][i] = -INFINITY;
      }
    }
    sl.h = h;
    sl.t = t;
  }
};

__device__ __forceinline__ bool same_alignment(const void* a, const void* b) {
  return ((reinterpret_cast<unsigned long long>(a) ^ reinterpret_cast<unsigned long long>(b)) & 15) == 0;
}

// ---- a warp per row: rows warp, warp + W, ... (W = warps in the grid) -------------------------
template <typename T, int E>
__device__ __forceinline__ void warp_rows(const T* __restrict__ x, T* __restrict__ y, int M, int N) {
  const int lane = threadIdx.x & 31;
  const int warps = gridDim.x * (blockDim.x >> 5);
  int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (row >= M) return;  // the whole warp; no block barrier in this kernel
  NextRow<T, E, 32> nx;
  nx.issue(x + (size_t)row * N, N, lane);
  while (true) {
    const rows::Geometry geo = nx.geometry(N);
    rows::Slice<T, E, 32> sl;
    nx.into(sl, geo, lane);
    const int next = row < M - warps ? row + warps : M;  // (no int overflow near M = 2^31)
    if (next < M) nx.issue(x + (size_t)next * N, N, lane);
    const MaxSum mine = exp_in_place(sl);
    const MaxSum all = warp_merge(mine);
    const T* xr = x + (size_t)row * N;
    T* yr = y + (size_t)row * N;
    store_scaled<T>(sl, yr, geo, lane, same_alignment(xr, yr), mine, all);
    if (next >= M) break;
    row = next;
  }
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
using namespace ::softmax::cx;  // ctarank, peer_addr, mbar_*, push_pair (cluster_exchange.cuh)
#endif

// ---- a block (C = 1) or a cluster of C blocks per row ------------------------------------------
// Blocks of cluster q (gridDim.x / C clusters; C = 1: every block) take rows q, q + Q, ... and
// the C blocks of a cluster always take the same row, so their loops run the same trip count.
// Exchange (C > 1), row i (b = i & 1 picks the buffer, phase parity (i >> 1) & 1):
//   thread 0 arrives on its mbar[b] expecting C x 8 bytes; lanes c < C of warp 0 push the
//   block's pair into slot pairs[b][rank] of block c (itself included); every thread waits on
//   mbar[b] and the first C lanes of each warp read pairs[b][0..C-1].
// Why buffer b is free again at row i + 2: a peer pushes row i + 2 only after its mbar of row
//   i + 1 completed, which needs this block's row i + 1 push, which warp 0 issues after the
//   row i + 1 block barrier, which every warp reaches only after reading row i's pairs.
//   part_m/part_s are double-buffered for the same reason (the mbarrier wait is not a block
//   barrier). A block leaves only after receiving every peer's last pair, so no peer writes
//   into an exited block; the cluster barrier at the start makes the mbarriers' init visible.
template <typename T, int THREADS, int E, int C>
__device__ __forceinline__ void cluster_rows(const T* __restrict__ x, T* __restrict__ y, int M, int N) {
  static_assert(C == 1 || C == 2 || C == 4 || C == 8 || C == 16, "C is 1, 2, 4, 8 or 16");
  static_assert(C <= 32, "the pairs are merged by one warp");
  __shared__ float part_m[2][THREADS / 32], part_s[2][THREADS / 32];
  unsigned rank = 0;
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
  __shared__ float2 pairs[2][C];
  __shared__ alignas(8) unsigned long long mbar[2];
  if constexpr (C > 1) {
    if (nctarank() != C) __trap();  // launched without cluster=C: fail loudly, not read a wrong peer
    rank = ctarank();
    if (threadIdx.x == 0) {
      mbar_init(&mbar[0], 1);
      mbar_init(&mbar[1], 1);
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    // Once, before the loop. Relaxed arrive (no MEMBAR): the init is published by the fence above.
    asm volatile("barrier.cluster.arrive.relaxed;\n barrier.cluster.wait;" ::: "memory");
  }
#else
  static_assert(C == 1, "clusters need sm_90");
#endif
  const int q = blockIdx.x / C, clusters = gridDim.x / C;
  const int g = rank * THREADS + threadIdx.x;
  const int lane = threadIdx.x & 31;
  int row = q;
  if (row >= M) return;  // the whole cluster (all its blocks have the same q)
  NextRow<T, E, C * THREADS> nx;
  nx.issue(x + (size_t)row * N, N, g);
  for (int i = 0;; ++i) {
    const rows::Geometry geo = nx.geometry(N);
    rows::Slice<T, E, C * THREADS> sl;
    nx.into(sl, geo, g);
    const int next = row < M - clusters ? row + clusters : M;
    if (next < M) nx.issue(x + (size_t)next * N, N, g);
    const MaxSum mine = exp_in_place(sl);
    const int b = i & 1;
    MaxSum all = block_merge<THREADS>(mine, part_m[b], part_s[b]);
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    if constexpr (C > 1 && !(PS_ABLATE & 1)) {
      all = exchange_pairs<C>(all, pairs, mbar, rank, i, threadIdx.x, lane);  // cluster_exchange.cuh
    }
#endif
    const T* xr = x + (size_t)row * N;
    T* yr = y + (size_t)row * N;
    store_scaled<T>(sl, yr, geo, g, same_alignment(xr, yr), mine, all);
    if (next >= M) break;
    row = next;
  }
}

}  // namespace pers
}  // namespace softmax

// Entry points: persistent_instances.cuh, which v4_dispatch includes too (without the clusters only
// the `@threads` knob takes; it includes this file with SOFTMAX_NO_ENTRY_POINTS, for the code alone).
// Registers, from ptxas (sm_90, NVRTC 13): a thread carries 32 fp32 values
// of its row plus the next row's raw words (16 bf16, 32 fp32) and ~20 of addresses and loop
// state; unconstrained that is 83 (bf16 block), 95 (bf16 cluster), 127 (fp32). So:
//   bf16 C = 1 blocks: 768 threads/SM, 80 registers (48 KiB of next rows in flight);
//   bf16 clusters: 64 registers spill 8-16 B, so 256-thread blocks run 3 per SM (80 registers,
//     768 threads, 48 KiB in flight) and 512-thread blocks 1 per SM (128 registers, 32 KiB);
//   fp32: 512 threads/SM at <= 128 registers (64 KiB in flight);
//   warps: E = 8/16 at 4 blocks of 256 per SM; E = 32 at 3 (bf16, 80 registers) or 2 (fp32).
// bf16 C = 1 at 64 registers spills 8 B on sm_100 and sm_120 with NVRTC 13.0 and on every arch
// with 13.5 (CI): the blocks run 768 threads per SM (<= 80 registers) everywhere. (Measured at
// 1024 threads/SM on sm_90 with 13.0: 298 us at 32768 x 8192 bf16, v1 273; v4 does not route there.)
#define PC1_BF16_MIN_BLOCKS_T64 12
#define PC1_BF16_MIN_BLOCKS_T128 6
#define PC1_BF16_MIN_BLOCKS_T256 3
#define PC1_BF16_MIN_BLOCKS_T512 1

// bf16 E = 64 blocks at 128 registers spill 8 B on sm_80 (v4 builds them there): 384 threads/SM.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define PC1E64_BF16_MIN_BLOCKS_T64 6
#define PC1E64_BF16_MIN_BLOCKS_T128 3
#define PC1E64_BF16_MIN_BLOCKS_T256 1
#else
#define PC1E64_BF16_MIN_BLOCKS_T64 8
#define PC1E64_BF16_MIN_BLOCKS_T128 4
#define PC1E64_BF16_MIN_BLOCKS_T256 2
#endif

#ifndef SOFTMAX_NO_ENTRY_POINTS  // v4_dispatch includes this file for its code alone
#define PERSISTENT_ALL_CLUSTERS  // every (threads, C) pair, for the `@threads` knob
#include "persistent_instances.cuh"

// The names the op contract looks up: the widest instance (launch it with cluster=16).
extern "C" __global__ void __launch_bounds__(512, 1)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 512, 32, 16>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(512, 1)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 512, 32, 16>(x, y, M, N); }
#endif
