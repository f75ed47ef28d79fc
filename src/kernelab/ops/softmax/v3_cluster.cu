// v3_cluster: very wide rows kept whole on chip by a thread-block cluster (sm_90+): C blocks
// hold one row in their registers and merge their (max, sum) pairs through distributed
// shared memory. 1 read + 1 write for rows of up to 262144 elements.
//
// What changed from v1/v2: a row is split over a cluster of C = 2..8 blocks (on C SMs) of
//   THREADS threads x 32 elements, so 8 x 1024 x 32 = 262144 elements fit (512 KiB bf16,
//   1 MiB fp32) with no re-read. Each block merges its threads' pairs as in v1 and publishes
//   one pair in its shared memory; after one cluster barrier every warp reads the C pairs
//   straight from the peers' shared memory (mapa + ld.shared::cluster) and merges them.
//   For rows that v1 could hold in one 1024-thread block (16K-32K), clusters of 256-thread
//   blocks let 4 blocks share an SM instead of 1, so one row's barrier no longer idles it.
// Why: v2 reads wide rows twice; an SM's registers (256 KiB) cannot hold a 512 KiB row, but
//   8 SMs' can. Blocks of a cluster are co-scheduled, which is what makes waiting for peers
//   safe (no deadlock), and DSMEM avoids a round trip through global memory.
// Barriers: (1) arrive+wait after publishing the block's pair: peers' pairs are written and
//   visible (release/acquire); (2) a relaxed arrive after reading them, and the wait just
//   before exiting: a block's shared memory must outlive its peers' reads of it, and the
//   output stores run between the two halves. Every thread of every block reaches both
//   (no early return in this kernel).
// Predicted: bytes first. 2048 x 131072 bf16 moves 1.07 GB: 251 us at the copy rate. Blocks of
//   512 x 32 in clusters of 8, <= 64 registers, 2 blocks per SM: ~260-270 us, 3.1-3.2x
//   torch.compile (840 us) and ~2.1x eager (561 us). 8192 x 32768 bf16 (clusters of 4 x 256):
//   the same ~260 us, 1.8x eager (473 us).
// Measured: BENCHMARKS.md, softmax rows (generated from results JSON).
//
// @strategy cluster
// @arch sm_90
// @access_bytes 16
#include "softmax_common.cuh"

namespace softmax {

__device__ __forceinline__ unsigned cluster_ctarank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned cluster_nctarank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}
// barrier.cluster.arrive has release and .wait acquire semantics by default (PTX ISA 7.8);
// ptxas puts a MEMBAR.ALL.GPU before a releasing arrive. `.relaxed` (PTX 8.0) orders nothing
// and skips it: enough where the arrive only says "I am done reading your shared memory"
// (the values read were already used, so those reads have completed).
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive;" ::: "memory"); }
__device__ __forceinline__ void cluster_arrive_relaxed() { asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait;" ::: "memory"); }

// The float2 at `local` (a __shared__ variable) in the shared memory of cluster block `rank`.
__device__ __forceinline__ float2 load_peer(const float2* local, unsigned rank) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(local));
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
  float2 v;
  asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(remote) : "memory");
  return v;
}

// M clusters of C blocks along x (M * C blocks): cluster r / block rank k holds
// vectors j = i * (C * THREADS) + k * THREADS + tid of row r.
template <typename T, int THREADS, int E, int C>
__device__ __forceinline__ void cluster_row(const T* __restrict__ x, T* __restrict__ y, int M, int N) {
  static_assert(C >= 2 && C <= 8, "portable cluster sizes are 2..8");
  __shared__ float part_m[THREADS / 32], part_s[THREADS / 32];
  __shared__ float2 block_pair;
  // Launched without cluster=C, or with a grid that is not one cluster per row (cuda.core's
  // LaunchConfig counts the grid in clusters when a cluster is given): fail loudly rather
  // than read a wrong peer or skip rows.
  if (cluster_nctarank() != C || gridDim.x != static_cast<unsigned>(M) * C) __trap();

  const unsigned rank = cluster_ctarank();
  const int row = blockIdx.x / C;
  const int g = rank * THREADS + threadIdx.x;  // this thread among the row's C * THREADS
  const int lane = threadIdx.x & 31;
  const T* xr = x + (size_t)row * N;
  T* yr = y + (size_t)row * N;
  const rows::Geometry geo = rows::geometry(xr, N);
  const bool vec_out = ((reinterpret_cast<unsigned long long>(xr) ^ reinterpret_cast<unsigned long long>(yr)) & 15) == 0;

  rows::Slice<T, E, C * THREADS> sl;
  sl.load(xr, geo, g, -INFINITY);
  const MaxSum mine = exp_in_place(sl);
  const MaxSum blk = block_merge<THREADS>(mine, part_m, part_s);
  if (threadIdx.x == 0) block_pair = make_float2(blk.m, blk.s);

  cluster_arrive();  // (1) our pair is published
  cluster_wait();    //     and so are the peers'
  MaxSum peer{-INFINITY, 0.0f};
  if (lane < C) {
    const float2 p = load_peer(&block_pair, lane);
    peer = MaxSum{p.x, p.y};
  }
  const MaxSum all = warp_merge(peer);  // every warp of every block merges the same C pairs in the same order
  cluster_arrive_relaxed();  // (2) done reading peers' shared memory

  store_scaled<T>(sl, yr, geo, g, vec_out, mine, all);
  cluster_wait();  // (2) keep block_pair alive until every peer has read it
}

}  // namespace softmax

#ifndef SOFTMAX_NO_ENTRY_POINTS  // v4_dispatch includes this file for its code alone
#include "cluster_instances.cuh"  // clusters of 2-8 blocks of 256-1024 threads; shared with v4_dispatch

// The names the op contract looks up: the widest instance (launch it with cluster=8).
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::cluster_row<float, 1024, 32, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::cluster_row<__nv_bfloat16, 1024, 32, 8>(x, y, M, N); }
#endif
