// v8_cluster_multicast: v7 in 2-CTA clusters: the two blocks of a cluster compute vertically
// adjacent 128x256 tiles that share their B panel, and each loads half of it for both (TMA
// multicast). Stretch variant: same math, same tiles, same pipeline as v7.
//
// What changed from v7:
//   - Clusters of 2 along M (cluster launch attribute): block rank r of cluster c computes
//     M-tile 2p + r of the pair p it is given, N-tile n, with the same B[n*256 .., :] panel.
//     Per k-block, block r issues its own A box (128x64) and B rows r*128 .. r*128+127 of the
//     panel with .multicast::cluster to both blocks (mask 0b11): each block's full barrier still
//     counts 48 KB (16 A + 16 own B + 16 peer B), but B crosses L2 -> SM once per pair instead
//     of twice: L2 traffic per tile falls from 48 KB to 32 KB per k-block (-33%).
//   - A stage may be refilled only when both blocks' consumers are done with it (my multicast
//     writes into my peer's copy too): empty barriers count 2 x 8 consumer warps, and every
//     consumer warp arrives on the empty barrier of both blocks (mapa + remote arrive, after
//     wgmma.wait_group has retired its reads of the stage).
//   - Start: barriers are initialised before a cluster-wide barrier, so no remote arrive or
//     multicast reaches an uninitialised peer. End: the producer waits for one more release of
//     every stage ("producer tail", as CUTLASS does), so no block exits while its peer can still
//     arrive on its barriers or multicast into its shared memory.
//   - The grid is 2 x (clusters that fit at once, from the occupancy API), not 2 x 66: a GPC
//     with an odd number of free SMs cannot host a pair, and a second wave of a few clusters
//     would double the tail. Tile order: v7's grouped order over pairs of M-tiles.
//   - An odd number of M-tiles leaves the last pair's second block with rows >= M: it loads the
//     last real A panel (no box wholly outside A), still multicasts its B half for its peer, and
//     its epilogue stores nothing.
// Count: as v7. Predicted: +3-6% on v7 at 8192^3 (fast.cu: clusters took 777 -> 799 TFLOP/s,
//   +2.8%, on an H100), 0.95-1.0x cuBLAS; little change at 4096^3 (there L2 traffic was not the limit).
// Measured: BENCHMARKS.md, gemm rows.
//
// Requirements (supports()): K % 8 == 0 and A, B 16-byte aligned (TMA's 16-byte row strides).
//
// @dtypes bfloat16
// @arch sm_90a
// @block 384
// @tile 128 256
// @bk 64
// @smem 197632
// @grid persistent
// @cluster 2
// @k_multiple 8
// @align 16
#include <cuda_bf16.h>

typedef unsigned int u32;
typedef unsigned long long u64;

// cuda.h's CUtensorMap (128 opaque bytes, 64-byte aligned); NVRTC has no cuda.h.
struct alignas(64) CUtensorMap {
  u64 opaque[16];
};

#define BM 128
#define BN 256
#define BK 64                          // 64 bf16 = 128 bytes: one swizzle span per row
#define STAGES 4
#define CONSUMERS 2                    // warpgroups 1..2, 64 rows of the tile each
#define A_BYTES (BM * BK * 2)          // 16 KB
#define B_BYTES (BN * BK * 2)          // 32 KB
#define STAGE_BYTES (A_BYTES + B_BYTES)  // 48 KB; 4 stages = 192 KB (+1 KB to align to 1024)
#define GROUP_M 8                      // tile order: 8 M-tile pairs per group
#define CLUSTER 2                      // blocks per cluster, along M
#define B_HALF_BYTES (B_BYTES / CLUSTER)  // 16 KB: the part of B each block loads for both

#include "sm90_wgmma_tma.cuh"  // mbarriers, TMA loads, wgmma

// ---- cluster-scope helpers --------------------------------------------------------------
__device__ __forceinline__ u32 cluster_ctarank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ u32 cluster_id() {
  u32 r;
  asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ u32 cluster_count() {
  u32 r;
  asm volatile("mov.u32 %0, %%nclusterid.x;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// Arrive on the mbarrier at the same shared offset in block `cta` of this cluster. Plain
// arrive, as CUTLASS's ClusterBarrier::arrive(cta_id): what it orders is the completion of
// this warp's wgmma reads (wgmma.wait_group, program order) before the peer's TMA overwrite;
// there are no generic-proxy writes to release, and .release.cluster costs a MEMBAR.GPU.
__device__ __forceinline__ void mbar_arrive_cluster(u32 bar, u32 cta) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(bar),
      "r"(cta)
      : "memory");
}
// Like tma_load_2d, but the box lands at offset `dst` in every block of `mask` and completes
// on the mbarrier at offset `bar` in each of them.
__device__ __forceinline__ void tma_load_2d_multicast(u32 dst, const CUtensorMap* map, u32 bar, int c0, int c1,
                                                      unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
      "[%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<u64>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
      : "memory");
}

// ---- tile order -----------------------------------------------------------------------
// Tile t -> (M-tile, N-tile): groups of GROUP_M M-tiles; inside a group, consecutive t go down
// the M-tiles of one N-tile, then on to the next N-tile. Blocks running together then share
// a few A row-panels and B column-panels in L2 instead of sweeping all of B.
__device__ __forceinline__ void tile_coords(int t, int tiles_m, int tiles_n, int& tm, int& tn) {
  const int per_group = GROUP_M * tiles_n;
  const int group = t / per_group;
  const int first = group * GROUP_M;
  const int rows = min(tiles_m - first, GROUP_M);
  const int in_group = t - group * per_group;
  tm = first + in_group % rows;
  tn = in_group / rows;
}

__device__ __forceinline__ void store_pair(__nv_bfloat16* __restrict__ c, int M, int N, int row, int col, float x,
                                           float y, bool pairs) {
  if (row >= M) return;
  __nv_bfloat16* p = c + (size_t)row * N + col;
  if (pairs) {  // N even: (row, even col) is 4-byte aligned
    if (col < N) *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(x, y);
  } else {
    if (col < N) p[0] = __float2bfloat16_rn(x);
    if (col + 1 < N) p[1] = __float2bfloat16_rn(y);
  }
}

extern "C" __global__ void __launch_bounds__(384, 1) gemm_bf16(const __grid_constant__ CUtensorMap tmap_a,
                                                               const __grid_constant__ CUtensorMap tmap_b,
                                                               __nv_bfloat16* __restrict__ c, int M, int N, int K) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) u64 full_bar[STAGES], empty_bar[STAGES];
  // Same offsets in both blocks of a cluster: multicast and remote arrives address the peer's
  // tiles and barriers by this block's own offsets.
  const u32 tiles_base = ((u32)__cvta_generic_to_shared(smem_raw) + 1023u) & ~1023u;
  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
  const u32 rank = cluster_ctarank();
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const int pairs_m = (tiles_m + CLUSTER - 1) / CLUSTER, ctiles = pairs_m * tiles_n;
  const int kblocks = (K + BK - 1) / BK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init((u32)__cvta_generic_to_shared(&full_bar[s]), 1);                           // own producer
      mbar_init((u32)__cvta_generic_to_shared(&empty_bar[s]), CLUSTER * CONSUMERS * 4);    // all consumer warps
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  cluster_sync();  // both blocks' barriers exist before anyone multicasts or arrives remotely

  if (wg == 0) {
    // ------------------------------ producer ------------------------------
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid == 0) {
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<u64>(&tmap_a)) : "memory");
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<u64>(&tmap_b)) : "memory");
      int it = 0;
      for (int ct = (int)cluster_id(); ct < ctiles; ct += (int)cluster_count()) {
        int pm, tn;
        tile_coords(ct, pairs_m, tiles_n, pm, tn);
        const int tm = pm * CLUSTER + (int)rank;
        for (int kb = 0; kb < kblocks; ++kb, ++it) {
          const int s = it % STAGES;
          const u32 pass = (u32)(it / STAGES);
          const u32 full = (u32)__cvta_generic_to_shared(&full_bar[s]);
          // free in both blocks: my B half is about to land in my peer's copy of stage s too
          mbar_wait((u32)__cvta_generic_to_shared(&empty_bar[s]), (pass & 1) ^ 1);
          mbar_arrive_expect_tx(full, STAGE_BYTES);  // own A + own B half + the peer's B half
          const u32 sa = tiles_base + s * STAGE_BYTES;
          // A spare block (tm == tiles_m, odd tiles_m) loads the last real A panel instead of a box
          // wholly outside A: its products are never stored, and every box stays in bounds.
          tma_load_2d(sa, &tmap_a, full, kb * BK, min(tm, tiles_m - 1) * BM);
          tma_load_2d_multicast(sa + A_BYTES + rank * B_HALF_BYTES, &tmap_b, full, kb * BK,
                                tn * BN + (int)rank * (BN / CLUSTER), (unsigned short)0x3);
        }
      }
      // Producer tail: one more acquire of every stage = every release (local and remote) of its
      // last use has arrived, so nothing can reach this block after it exits.
      for (int i = 0; i < STAGES; ++i, ++it) {
        const int s = it % STAGES;
        mbar_wait((u32)__cvta_generic_to_shared(&empty_bar[s]), ((u32)(it / STAGES) & 1) ^ 1);
      }
    }
  } else {
    // ------------------------------ consumers -----------------------------
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int cw = wg - 1;
    const int warp = tid / 32, lane = tid % 32;
    const bool pairs = (N % 2 == 0) && (reinterpret_cast<size_t>(c) % 4 == 0);
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.0f;
    int it = 0;
    for (int ct = (int)cluster_id(); ct < ctiles; ct += (int)cluster_count()) {
      int pm, tn;
      tile_coords(ct, pairs_m, tiles_n, pm, tn);
      const int tm = pm * CLUSTER + (int)rank;
      int prev = -1;
      for (int kb = 0; kb < kblocks; ++kb, ++it) {
        const int s = it % STAGES;
        const u32 pass = (u32)(it / STAGES);
        mbar_wait((u32)__cvta_generic_to_shared(&full_bar[s]), pass & 1);
        const u32 sa = tiles_base + s * STAGE_BYTES + cw * (64 * BK * 2);
        const u32 sb = tiles_base + s * STAGE_BYTES + A_BYTES;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)
          wgmma_m64n256k16(d, smem_desc(sa + kk * 32), smem_desc(sb + kk * 32), (kb | kk) != 0);
        wgmma_commit();
        wgmma_wait<1>();
        if (prev >= 0 && lane == 0) {
          const u32 e = (u32)__cvta_generic_to_shared(&empty_bar[prev]);
          mbar_arrive_cluster(e, 0);
          mbar_arrive_cluster(e, 1);
        }
        prev = s;
      }
      wgmma_wait<0>();
      fence_acc(d);
      if (prev >= 0 && lane == 0) {
        const u32 e = (u32)__cvta_generic_to_shared(&empty_bar[prev]);
        mbar_arrive_cluster(e, 0);
        mbar_arrive_cluster(e, 1);
      }

      const int row = tm * BM + cw * 64 + warp * 16 + lane / 4;  // >= M for a pair's spare block
#pragma unroll
      for (int g = 0; g < 16; ++g) {
        const int col = tn * BN + g * 16 + 2 * (lane % 4);
        store_pair(c, M, N, row, col, d[8 * g + 0], d[8 * g + 1], pairs);
        store_pair(c, M, N, row + 8, col, d[8 * g + 2], d[8 * g + 3], pairs);
        store_pair(c, M, N, row, col + 8, d[8 * g + 4], d[8 * g + 5], pairs);
        store_pair(c, M, N, row + 8, col + 8, d[8 * g + 6], d[8 * g + 7], pairs);
      }
      fence_acc(d);
    }
  }
}
