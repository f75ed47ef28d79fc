// v7_wgmma_tma: Hopper (sm_90a). TMA loads into a 4-stage mbarrier ring, wgmma by two consumer
// warpgroups, one producer warpgroup (setmaxnreg), persistent blocks over the output tiles.
//
// What changed from v6 (the design of the public "fast.cu" H100 series, kernels 4-6, and of
// CUTLASS's warp-specialised sm90 GEMM):
//   - wgmma.mma_async.m64n256k16 (HGMMA): one instruction of a whole warpgroup (4 warps)
//     multiplies a 64x16 A tile by a 16x256 Bᵀ tile, both read straight from shared memory
//     through 64-bit descriptors, into 128 fp32 accumulators per thread. No ldmatrix, no
//     operand registers, and it is asynchronous: the warps issue 4 of them per k-block and wait
//     only for the previous k-block's group (wgmma.wait_group 1) before freeing its stage.
//   - TMA (cp.async.bulk.tensor.2d): one thread moves a whole 128x64 (A) or 256x64 (B) box per
//     instruction, described by a CUtensorMap passed by value. The copy engine applies the
//     128-byte swizzle (chunk c of row r lands at chunk c ^ (r % 8)) that wgmma's descriptors
//     then read back (layout type 1), and reads zeros outside A and B: M, N and K tails are
//     free, and M = 1 loads as a 128-row box of one real row.
//   - An mbarrier ring: full[s] completes when stage s's 48 KB have landed (the producer's
//     arrive.expect_tx plus the TMA's byte count), empty[s] when all 8 consumer warps are done
//     reading it. Waits use phase parity: pass r of the ring waits for parity r & 1 on full, and
//     (r & 1) ^ 1 on empty, so the first pass over empty does not wait.
//   - Warp specialisation: warpgroup 0 produces (one thread issues every TMA), warpgroups 1-2
//     consume (each owns 64 of the tile's 128 rows). setmaxnreg moves registers from the
//     producer (40) to the consumers (232), which hold 128 accumulators each.
//   - Persistent tiles: grid = min(tiles, SMs); each block walks tiles blockIdx.x, +gridDim.x,
//     ... in a grouped order (8 M-tiles share each N-tile in turn, for L2 reuse). The producer
//     runs ahead into the next tile while the consumers store the current one.
// Count (4096^3 bf16): 137 GFLOP, 101 MB; floor 139 us at ~990 TFLOP/s; cuBLAS 213 us (646 TFLOP/s),
//   8192^3: 1.1 TFLOP, 1510 us (728). 512 tiles of 128x256 over 132 SMs is 3.9 waves (97% busy).
// Predicted: 560-660 TFLOP/s at 4096^3 and 620-720 at 8192^3, 0.85-0.95x cuBLAS (fast.cu's
//   equivalent kernel 6 ran 777 TFLOP/s at 8192^3 on an H100, 97% of cuBLAS). Epilogue: direct
//   bf16x2 stores from registers, an estimated 4-8% of the time at 4096^3 (not overlapped with
//   the same warpgroup's math; a TMA store from shared memory would hide it).
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
#define GROUP_M 8                      // tile order: 8 M-tiles per group

#include "sm90_wgmma_tma.cuh"  // mbarriers, TMA loads, wgmma

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
  // Tiles start 1024-byte aligned: the 128B swizzle repeats every 8 rows x 128 bytes, and both
  // TMA and wgmma derive it from address bits 4-9. The launch adds 1 KB of slack for this.
  const u32 tiles_base = ((u32)__cvta_generic_to_shared(smem_raw) + 1023u) & ~1023u;
  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, tiles = tiles_m * tiles_n;
  const int kblocks = (K + BK - 1) / BK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init((u32)__cvta_generic_to_shared(&full_bar[s]), 1);                   // the producer's arrive
      mbar_init((u32)__cvta_generic_to_shared(&empty_bar[s]), CONSUMERS * 4);      // every consumer warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the TMA unit too
  }
  __syncthreads();

  if (wg == 0) {
    // ------------------------------ producer ------------------------------
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid == 0) {
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<u64>(&tmap_a)) : "memory");
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<u64>(&tmap_b)) : "memory");
      int it = 0;  // k-blocks issued so far, over all tiles: stage it % STAGES, pass it / STAGES
      for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        int tm, tn;
        tile_coords(t, tiles_m, tiles_n, tm, tn);
        for (int kb = 0; kb < kblocks; ++kb, ++it) {
          const int s = it % STAGES;
          const u32 pass = (u32)(it / STAGES);
          const u32 full = (u32)__cvta_generic_to_shared(&full_bar[s]);
          mbar_wait((u32)__cvta_generic_to_shared(&empty_bar[s]), (pass & 1) ^ 1);  // stage s is free
          mbar_arrive_expect_tx(full, STAGE_BYTES);  // the full box bytes, zero-filled parts included
          const u32 sa = tiles_base + s * STAGE_BYTES;
          tma_load_2d(sa, &tmap_a, full, kb * BK, tm * BM);
          tma_load_2d(sa + A_BYTES, &tmap_b, full, kb * BK, tn * BN);
        }
      }
    }
  } else {
    // ------------------------------ consumers -----------------------------
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int cw = wg - 1;  // rows 64*cw .. 64*cw+63 of each tile
    const int warp = tid / 32, lane = tid % 32;
    const bool pairs = (N % 2 == 0) && (reinterpret_cast<size_t>(c) % 4 == 0);
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.0f;
    int it = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      int tm, tn;
      tile_coords(t, tiles_m, tiles_n, tm, tn);
      int prev = -1;  // the stage whose wgmmas are still reading it
      for (int kb = 0; kb < kblocks; ++kb, ++it) {
        const int s = it % STAGES;
        const u32 pass = (u32)(it / STAGES);
        mbar_wait((u32)__cvta_generic_to_shared(&full_bar[s]), pass & 1);  // stage s has landed
        const u32 sa = tiles_base + s * STAGE_BYTES + cw * (64 * BK * 2);  // this warpgroup's 64 rows
        const u32 sb = tiles_base + s * STAGE_BYTES + A_BYTES;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)
          wgmma_m64n256k16(d, smem_desc(sa + kk * 32), smem_desc(sb + kk * 32), (kb | kk) != 0);
        wgmma_commit();
        wgmma_wait<1>();  // every group but this one is done: the previous stage can be refilled
        if (prev >= 0 && lane == 0) mbar_arrive((u32)__cvta_generic_to_shared(&empty_bar[prev]));
        prev = s;
      }
      wgmma_wait<0>();
      fence_acc(d);
      if (prev >= 0 && lane == 0) mbar_arrive((u32)__cvta_generic_to_shared(&empty_bar[prev]));

      // Epilogue: registers -> bf16 -> C, guarded at the M and N edges.
      const int row = tm * BM + cw * 64 + warp * 16 + lane / 4;
#pragma unroll
      for (int g = 0; g < 16; ++g) {
        const int col = tn * BN + g * 16 + 2 * (lane % 4);
        store_pair(c, M, N, row, col, d[8 * g + 0], d[8 * g + 1], pairs);
        store_pair(c, M, N, row + 8, col, d[8 * g + 2], d[8 * g + 3], pairs);
        store_pair(c, M, N, row, col + 8, d[8 * g + 4], d[8 * g + 5], pairs);
        store_pair(c, M, N, row + 8, col + 8, d[8 * g + 6], d[8 * g + 7], pairs);
      }
      fence_acc(d);  // the next tile's first wgmma (scale_d = 0) must not overtake these reads
    }
  }
}
