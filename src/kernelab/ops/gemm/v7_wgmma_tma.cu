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

// ---- mbarriers ------------------------------------------------------------------------
__device__ __forceinline__ void mbar_init(u32 bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
// Arrive once and add `bytes` to the transactions this phase waits for.
__device__ __forceinline__ void mbar_arrive_expect_tx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(u32 bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(u32 bar, u32 parity) {
  u32 done;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}
// Wait until the phase with parity `parity` has completed (acquire: its writes are visible).
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity) {
  while (!mbar_try_wait(bar, parity)) {
  }
}

// ---- TMA ------------------------------------------------------------------------------
// Box at (c0 = column, c1 = row) of `map` into shared memory at `dst`; completes on `bar`.
__device__ __forceinline__ void tma_load_2d(u32 dst, const CUtensorMap* map, u32 bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<u64>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}

// ---- wgmma ----------------------------------------------------------------------------
// Shared-memory matrix descriptor for a K-major tile with 128-byte swizzle: start address >> 4
// (bits 0-13), leading-dimension byte offset >> 4 (bits 16-29; unused for swizzled K-major
// layouts, 1 by convention), stride-dimension byte offset >> 4 (bits 32-45): 1024 bytes from
// one group of 8 rows to the next; layout type 1 = 128B swizzle (bits 62-63). The tile must
// start 1024-byte aligned; the k-th 16-column slice starts 32*k bytes in (same swizzle atom).
__device__ __forceinline__ u64 smem_desc(u32 addr) {
  return (u64)((addr & 0x3FFFF) >> 4) | ((u64)1 << 16) | ((u64)(1024 >> 4) << 32) | ((u64)1 << 62);
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving reads or writes of an accumulator across a wgmma wait: the
// hardware writes them asynchronously, which the compiler cannot see (CUTLASS: warpgroup_fence_operand).
__device__ __forceinline__ void fence_acc(float* d) {
#pragma unroll
  for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// d[0..127] (+)= A(64x16, desc_a) * B(16x256, desc_b); scale_d = 0 overwrites d instead.
// Thread (warp w of the warpgroup, lane l) holds, for 16-column group g = 0..15, d[8g + i] at
//   row 16w + l/4 + 8*((i/2) % 2), column 16g + 2*(l%4) + (i%2) + 8*(i/4).
__device__ __forceinline__ void wgmma_m64n256k16(float* d, u64 desc_a, u64 desc_b, int scale_d) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
      "%128, %129, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
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
