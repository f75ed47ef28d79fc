// v9_sgemm_tuned: v5 made tunable by macros: a cp.async ring, interleaved lanes, a clean hot loop (16x8 tiles tried).
//
// What changed from v5. Every knob is a macro with an #ifndef default; scripts/sweep_gemm_fp32.py
// builds a list of settings of them on the GPU (--dry-run compiles them all without one), checks
// each against float64 and ranks them against cuBLAS in one process. Why v5 stops at 0.76x: an
// SM sub-partition issues one warp-instruction per clock and retires one warp-FFMA per clock, so
// every other instruction costs an FFMA, and v5's 8x8 tiles also load the shared-memory port fully. The changes, with the evidence for each:
//   1. 16x8 thread tiles (TM x TN). An LDS.128 returns one 32-bit register per lane per clock
//      (128 B/clk per SM): 8x8 tiles read 16 registers per 64 FFMAs, so 4 sub-partitions at
//      1 FFMA/clk need the port 100% of the time; 16x8 reads 24 per 128 (75%), needs 48 LDS.128
//      per 1024 FFMAs instead of 64, and moves 43 FLOP per byte of L2 traffic instead of 32.
//      Cost: 128 accumulators + 48 fragment registers, ~255 per thread, so blocks are 4 warps
//      (2 x 2 warps of 64x64) and 2 blocks share an SM: 8 warps/SM instead of v5's 16, with 128
//      independent FFMAs per warp per k as the latency cover.
//   2. A hot loop without bounds logic. v5 executes ~614 instructions per 512 FFMAs (83% FFMA;
//      ~70 are the branchy `k < K` / `row < M` checks, BSSY/BSYNC and 64-bit index maths around
//      its 2 LDG.128; NVRTC 13.0 sm_90 SASS). Here blocks inside M x N run a loop with no checks;
//      edge blocks skip whole rows past M (N) (such a row only feeds C rows that are never
//      stored); the partial k-tile (K % BK != 0) is copied first, in the prologue, with zero
//      fill, so every k-tile the loop copies is whole. Default: 1138 instructions per 1024 FFMAs
//      (90%); 8x8 settings 583-595 per 512 (86-88%).
//   3. LOADER 1: a STAGES-deep cp.async ring (sm_80+; works for fp32). TN means A and B have K
//      contiguous while the math wants M (N) contiguous in shared memory, so the copy transposes:
//      4-byte cp.async (LDGSTS), lane l takes k = l % 8 of row l / 8, one full 32-byte sector of
//      each of 4 rows per instruction (CUTLASS's SIMT TN thread map, kElementsPerAccess = 1). No
//      staging registers, no STS, the L2 latency hidden behind STAGES - 1 k-tiles, and any K and
//      any 4-byte-aligned view work (no K % 4 or 16-byte alignment condition). Each row costs one
//      IMAD.WIDE per k-tile. LOADER 0 is v5's path (LDG.128 + 4 transposed STS.32, 2 stages),
//      kept as the control that isolates item 2.
//   4. LANE_MAP 1: CUTLASS's RowMajorInterleaved<2> lane order: lm takes lane bit 0, ln the next
//      bits. Per NVIDIA's forum (CC 7.x), an LDS where lanes n and n^1 (or n and n^2) share
//      addresses returns in half the clocks; v5's order (lm = lane / 4) gives that to A's reads
//      only, the interleaved one to A's and B's. Unverified on Hopper: the sweep's *_v5lanes
//      settings measure it.
//   5. Fragments for k-step kk+1 are read while kk's FFMAs issue, across k-tiles too (XFRAG): the
//      barrier that publishes k-tile kt+1 comes before the last k-step of tile kt, whose operands
//      are already in registers, so a tile's first LDS overlaps 128 FFMAs instead of stalling.
// Knobs (defaults: the setting expected best; the sweep's table ranks them all):
//   BM BN BK      block tile and k-tile (BK a multiple of 8)
//   WARPS_M/N     warp grid; the warp tile is (LANES_M*TM) x (LANES_N*TN); NT = 32*WARPS_M*WARPS_N
//   TM TN         thread tile, multiples of 4 (4x4 pieces read as float4)
//   LANES_M       lanes along M (LANES_N = 32 / LANES_M)
//   LANE_MAP      0: row-major lanes (v5), 1: interleaved pairs (item 4)
//   LOADER        0: registers + STS (v5), 1: cp.async ring (item 3)
//   STAGES        shared stages (LOADER 0: exactly 2); shared bytes = STAGES*BK*(BM+BN+2*PAD)*4
//   MIN_BLOCKS    __launch_bounds__ blocks per SM: caps registers at 65536/(MIN_BLOCKS*NT)
//   PAD           floats per shared row beyond BM (BN): 4 keeps rows 16-byte aligned and puts
//                 row k+1 4 banks after row k, so the transposed 4-byte writes (8 k x 4 rows
//                 per warp) hit 32 distinct banks
//   XFRAG         cross-tile fragment prefetch (item 5; default on with LOADER 1)
//   GROUP_M       block order (item 7): 0 = launch order (tile-rows one after another), G = Triton's
//                 grouped order, G tile-rows per group; the grid and the tiles stay the same
// First default (before the sweep): 128x128x8 tiles, 4 warps of 64x64 (lanes 4x8 interleaved, 16x8
//   each), 3-stage cp.async ring, 2 blocks/SM (255 registers, 25 KB of shared memory each): the shape cuBLAS's
//   sm80 SIMT SGEMM kernels are named after in profiles (..._tilesize128x128x8_stage3_
//   warpsize2x2x1_ffma_...; from memory: the sweep records the kernel cuBLAS runs on the H200).
// Count (4096^3): 137 GFLOP; fp32 floor 2.05 ms at 67 TFLOP/s; cuBLAS 2709 us (50.7 TFLOP/s,
//   0.76 of the floor); v5 3569 us (38.5).
// Predicted: 43-48 TFLOP/s at 4096^3 for the default (0.85-0.95x cuBLAS, +12-25% on v5): items
//   1-3 free 7% of the issue slots (83% -> 90% FFMA); items 1, 4 and 5 remove the port and
//   barrier stalls that keep v5 ~30% below its issue bound. siboehm's warptiled SGEMM reached
//   94% of cuBLAS on an A6000. If another setting wins the sweep, it becomes the default.
// Sweep on the H200 (docs/runs/2026-11-30-h200-sweep_gemm_fp32.json, cuBLAS 2705 us = 50.8 TFLOP/s in
//   the same process, running sm80_xmma_gemm_f32f32_..._tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma):
//   the 16x8 default above reached 42.0 TFLOP/s (0.83x); the winners are 8x8 thread tiles:
//   v5's geometry with items 2 and 4 only ("regs_intl") 0.873x, and 128x128x16 tiles of 8 warps
//   (4 x 2), 8x8 threads, interleaved lanes, 3-stage cp.async ("t8x8_128x128_k16") 0.872x, +15%
//   on v5 (0.759x). Items 2 and 4 are what paid (v5 lanes cost 4%); 16x8 tiles did not (255
//   registers, half the warps). The defaults are now t8x8_128x128_k16: 256 threads, 122
//   registers, 50 KB of shared memory, 2 blocks/SM. The 0.9x target is not reached: the
//   remaining 13% is the next step (ncu: issue-slot and LDS stall breakdown against cuBLAS's).
// Round 2 (settings in the sweep's CONFIGS; NVRTC 13.0 sm_90 SASS of the default's k-loop: 1157
//   instructions per k-tile = 1024 FFMA + 64 LDS.128 + 16 LDGSTS + 53 others: 24 of 64-bit copy
//   address maths (IMAD.WIDE, IADD3, IADD3.X, MOV), 8 uniform ring-offset ops, 3 `@!PT LDS RZ` that
//   ptxas puts before the LDGSTS, 3 BRA, the barrier, LDGDEPBAR / DEPBAR, loop counters). XFRAG
//   works: 62 of the 64 LDS.128 are consumed 30+ instructions later (mean 67); ptxas schedules two
//   (the second A piece at kk 4 and 8) 5 instructions before their first FFMA, at 122 registers.
//   6. BK 32 (2 blocks/SM still fit: 99 KB each) halves again the per-k-tile cost that BK 8 -> 16
//      cut (+4% measured): 2267 instructions per 2048 FFMAs (90.3%). Predicted +1.5-2.5%.
//   7. GROUP_M 16: the 264 resident blocks cover ~16 x 16.5 tiles instead of 8.25 x 32 (20% fewer
//      distinct rows of A and B per k-slice in L2). A and B (64 MiB each) exceed the 50 MiB L2, so
//      B is re-read from DRAM every wave, but that is ~310 MiB ~ 80 us of 3100: predicted +0-1%.
//   8. Warps 2 x 4 (lanes 8 x 4, regs_intl's geometry) with the cp.async ring: round 1 compared the
//      loaders only across warp shapes (regs_intl at BK 8 0.873x, cp.async 4 x 2 at BK 8 0.839x).
//   Tried here and dropped (no GPU needed): register staging at BK 16 spills 168 bytes at the
//   128-register cap of 2 x 256 threads, and still 136 bytes with A's and B's halves fetched and
//   stored half a k-tile apart (64 accumulators + 32 fragment registers + 4 64-bit row pointers).
// Rounds 2 and 3 on the H200 (docs/runs/2026-11-30-h200-sweep_gemm_fp32_r2.json and _r3.json, cuBLAS
//   50.8 TFLOP/s in each process): BK 32 with 2 stages 0.888x both times (paired CI 0.887-0.890), BK 32
//   with 3 stages 0.883x, BK 16 (the old default) 0.872x, BK 40 / 48 at 2 stages 0.867x / 0.860x;
//   GROUP_M 16 +0.8% at BK 16 but -2.4% at BK 32, GROUP_M 8 -2.4%; 2 x 4 warps = 4 x 2 warps. The
//   defaults are now 128x128x32, 2 stages (66 KB, 124 registers, 2 blocks/SM): 45.1 TFLOP/s, 0.888x.
//   The 0.9x target is 1.3% away; the issue slots are not the limit (90% FFMA would allow 59
//   TFLOP/s), so what is left is stall time the sweep's knobs do not reach.
// Round 4 (session 4). ncu on the H200 (docs/runs/ncu/2026-11-30-h200-gemm_fp32-*.txt, one launch at
//   4096^3 each): cuBLAS keeps the issue slots 87% busy with 2 warps per scheduler, v9 75% with 3.8;
//   v9's warps lose 0.68 cycles per issued instruction to dispatch stalls (cuBLAS 0.10) and hit L2
//   84% of the time (cuBLAS 96%).
//   9. FMA_ORDER: the outer product's FFMA order. In row order 384 of the k-tile's 4096 FFMAs read
//      all three registers from one bank (reg % 2) with no operand from the reuse cache; in
//      serpentine order (odd rows run j backwards, CUTLASS's MmaSimt) 15. Predicted +2-5% if the
//      dispatch stalls are bank conflicts.
//   Measured (docs/runs/2026-11-30-h200-sweep_gemm_fp32_r4.json, cuBLAS 50.8 TFLOP/s): serpentine
//   alone 0.887x (= row order's 0.888x: the clashes were not the stall), by columns 0.844x; 16x8 tiles
//   in serpentine column order 0.816x; serpentine with GROUP_M 16 0.903x (paired, interleaved with
//   cuBLAS: 95% CI 0.903-0.904), 0.907x at 2048^3: the defaults now (127 registers, 45.9 TFLOP/s).
//   Row order with GROUP_M 16 at 2 stages was not in this round (at 3 stages it lost 2.4%).
// Measured: BENCHMARKS.md, gemm rows.
//
// @dtypes float32
// @block 256
// @tile 128 128
// @smem 67584

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 32
#endif
#ifndef WARPS_M
#define WARPS_M 4
#endif
#ifndef WARPS_N
#define WARPS_N 2
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
#ifndef LANES_M
#define LANES_M 4
#endif
#ifndef LANE_MAP
#define LANE_MAP 1
#endif
#ifndef LOADER
#define LOADER 1
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 2
#endif
#ifndef PAD
#define PAD 4
#endif
#ifndef XFRAG
#define XFRAG LOADER  // cross-tile fragment prefetch (item 5); LOADER 0 lacks the registers for it
#endif
#ifndef FMA_ORDER
#define FMA_ORDER 1  // the outer product's FFMA order (item 9; outer_product): serpentine
#endif
#ifndef GROUP_M
#define GROUP_M 16  // block order (item 7): 0 = launch order (row-major tiles), G > 0 = G tile-rows per group
#endif

// Blackwell builds (sm_100, sm_120) keep round 3's orders (row FFMA order, launch block order):
// at the 128-register cap of 2 x 256 threads, NVRTC 13.0 and 13.5 spill the serpentine order there
// (52-80 bytes on sm_100) and the grouped order on sm_120 (4-12 bytes). Unmeasured on those GPUs.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
#define FMA_ORDER_USED 0
#define GROUP_M_USED 0
#else
#define FMA_ORDER_USED FMA_ORDER
#define GROUP_M_USED GROUP_M
#endif

#define LANES_N (32 / LANES_M)
#define NT (WARPS_M * WARPS_N * 32)  // threads per block
#define WM (LANES_M * TM)            // warp tile
#define WN (LANES_N * TN)
#define LDA (BM + PAD)               // floats per shared row of the A stage (one k)
#define LDB (BN + PAD)
#define STAGE_FLOATS (BK * (LDA + LDB))
#define STAGE_BYTES (STAGE_FLOATS * 4)

static_assert(WARPS_M * WM == BM && WARPS_N * WN == BN, "BM, BN must equal WARPS x LANES x thread tile");
static_assert(LANES_M * LANES_N == 32 && (LANES_M & (LANES_M - 1)) == 0, "LANES_M must be a power of 2 dividing 32");
static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are made of 4x4 pieces read as float4");
static_assert(BK % 8 == 0, "BK must be a multiple of 8 (one 32-byte sector of k per row and copy)");
static_assert(PAD % 4 == 0, "PAD must keep shared rows 16-byte aligned for the float4 fragment reads");
static_assert(LOADER == 1 || STAGES == 2, "LOADER 0 (register staging) has exactly 2 stages");
static_assert(STAGES >= 2, "at least two stages");
static_assert(LANE_MAP == 0 || (LANES_M >= 2 && LANES_N >= 2), "the interleaved lane map needs 2+ lanes per side");
static_assert(GROUP_M >= 0, "GROUP_M: 0 (launch order) or the tile-rows per group");

// ---- loader geometry ------------------------------------------------------------------
#if LOADER == 1
// cp.async: 8 lanes per 8-k sector, NT/8 rows per round; each thread owns rows lrow + i*ROWS_1.
#define ROWS_1 (NT / 8)
static_assert(BM % ROWS_1 == 0 && BN % ROWS_1 == 0, "BM and BN must be multiples of NT/8 (rows per copy round)");
#define A_ROUNDS (BM / ROWS_1)
#define B_ROUNDS (BN / ROWS_1)
#define SEGS (BK / 8)
#else
// registers: BK/4 lanes per row (one float4 each), NT*4/BK rows per round.
#define TPR (BK / 4)
#define ROWS_0 (NT / TPR)
static_assert(BM % ROWS_0 == 0 && BN % ROWS_0 == 0, "BM and BN must be multiples of NT*4/BK");
#define A_ROUNDS (BM / ROWS_0)
#define B_ROUNDS (BN / ROWS_0)
#endif

typedef unsigned int u32;

__device__ __forceinline__ u32 smem_u32(const void* p) { return (u32)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void cp_async4(u32 dst, const float* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src) : "memory");
}
// src_bytes = 0 writes a zero and reads nothing.
__device__ __forceinline__ void cp_async4_zfill(u32 dst, const float* src, u32 src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

// Everything one thread needs to move its share of a k-tile; the same for every k-tile.
struct Loader {
#if LOADER == 1
  const float* a;  // A[m0 + lrow][lk]: the first element this thread copies; rows i*ROWS_1 apart
  const float* b;
  int a_rows;      // M - (m0 + lrow): round i copies a real row iff i*ROWS_1 < a_rows
  int b_rows;
#else
  // Round i's row, clamped to the last real row: a row past M (N) only feeds C rows (columns)
  // that are never stored, so it may read any real row; no bounds logic in the loop.
  const float* a[A_ROUNDS];
  const float* b[B_ROUNDS];
#endif
  int lk;          // this thread's k within a copy (a sector lane for LOADER 1, a float4 for 0)
  u32 sa, sb;      // byte offsets of this thread's first element in the A / B part of a stage
  u32 b_minus_a;   // sb - sa (0 when BM == BN)
};

#if LOADER == 1
// Issue the copies of one k-tile. `stage`: the shared byte address of this thread's first A
// element in the stage (the stage's address + L.sa). `ga`, `gb`: this thread's first element of
// the k-tile in A and B; a row costs one IMAD.WIDE (rows ROWS_1*K apart), the second 8 k of a
// row (BK 16) an immediate offset. EDGE: rows past M (N) are skipped. TAIL: the k-tile crosses
// K; `k` is the k of the thread's first element, and elements at k >= K are zero-filled
// (src-size 0 reads nothing; the address given is then the row's start, a valid one anyway).
template <bool EDGE, bool TAIL>
__device__ __forceinline__ void issue_tile(const Loader& L, const float* ga, const float* gb, u32 stage, int k, int K) {
  const size_t rstep = (size_t)ROWS_1 * K;
#pragma unroll
  for (int i = 0; i < A_ROUNDS; ++i) {
    if (EDGE && i * ROWS_1 >= L.a_rows) continue;
#pragma unroll
    for (int s = 0; s < SEGS; ++s) {
      const float* src = ga + i * rstep + s * 8;
      const u32 dst = stage + (u32)((s * 8 * LDA + i * ROWS_1) * 4);
      if (!TAIL) {
        cp_async4(dst, src);
      } else {
        const bool ok = k + s * 8 < K;
        cp_async4_zfill(dst, ok ? src : L.a - L.lk + i * rstep, ok ? 4u : 0u);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < B_ROUNDS; ++i) {
    if (EDGE && i * ROWS_1 >= L.b_rows) continue;
#pragma unroll
    for (int s = 0; s < SEGS; ++s) {
      const float* src = gb + i * rstep + s * 8;
      const u32 dst = stage + L.b_minus_a + (u32)((BK * LDA + s * 8 * LDB + i * ROWS_1) * 4);
      if (!TAIL) {
        cp_async4(dst, src);
      } else {
        const bool ok = k + s * 8 < K;
        cp_async4_zfill(dst, ok ? src : L.b - L.lk + i * rstep, ok ? 4u : 0u);
      }
    }
  }
}
#else
struct Staged {
  float4 a[A_ROUNDS];
  float4 b[B_ROUNDS];
};

// One float4 of a row, k..k+3. MODE 0: one 16-byte load (K % 4 == 0, 16-byte-aligned rows);
// 1: four scalar loads; 2: four scalar loads, zero at k >= K (the partial k-tile).
template <int MODE>
__device__ __forceinline__ float4 fetch4(const float* p, int k, int K) {
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
  if (MODE == 0) {
    v = __ldg(reinterpret_cast<const float4*>(p));
  } else {
    if (MODE == 1 || k + 0 < K) v.x = __ldg(p + 0);
    if (MODE == 1 || k + 1 < K) v.y = __ldg(p + 1);
    if (MODE == 1 || k + 2 < K) v.z = __ldg(p + 2);
    if (MODE == 1 || k + 3 < K) v.w = __ldg(p + 3);
  }
  return v;
}

// The k-tile `koff` elements after the pointers pa, pb; `k` = its first k + lk (MODE 2 only).
template <int MODE>
__device__ __forceinline__ void fetch_tile(const float* const (&pa)[A_ROUNDS], const float* const (&pb)[B_ROUNDS],
                                           Staged& r, int koff, int k, int K) {
#pragma unroll
  for (int i = 0; i < A_ROUNDS; ++i) r.a[i] = fetch4<MODE>(pa[i] + koff, k, K);
#pragma unroll
  for (int i = 0; i < B_ROUNDS; ++i) r.b[i] = fetch4<MODE>(pb[i] + koff, k, K);
}

// Transposed stores: the float4 of row r, k..k+3 goes to column r of shared rows k..k+3.
__device__ __forceinline__ void store_tile(const Loader& L, const Staged& r, float* stage) {
  float* sa = stage + L.sa / 4;
  float* sb = stage + BK * LDA + (L.sa + L.b_minus_a) / 4;  // = L.sb; folds to sa's offset when BM == BN
#pragma unroll
  for (int i = 0; i < A_ROUNDS; ++i) {
    float* p = sa + i * ROWS_0;
    p[0 * LDA] = r.a[i].x; p[1 * LDA] = r.a[i].y; p[2 * LDA] = r.a[i].z; p[3 * LDA] = r.a[i].w;
  }
#pragma unroll
  for (int i = 0; i < B_ROUNDS; ++i) {
    float* p = sb + i * ROWS_0;
    p[0 * LDB] = r.b[i].x; p[1 * LDB] = r.b[i].y; p[2 * LDB] = r.b[i].z; p[3 * LDB] = r.b[i].w;
  }
}
#endif

// The thread's fragments for one k: TM values of A and TN of B, as float4 pieces.
__device__ __forceinline__ void load_frags(const float* stage, int kk, int am, int bn, float* ra, float* rb) {
  const float* sa = stage + kk * LDA + am;
  const float* sb = stage + BK * LDA + kk * LDB + bn;
#pragma unroll
  for (int p = 0; p < TM / 4; ++p) {
    const float4 v = *reinterpret_cast<const float4*>(sa + p * LANES_M * 4);
    ra[4 * p + 0] = v.x; ra[4 * p + 1] = v.y; ra[4 * p + 2] = v.z; ra[4 * p + 3] = v.w;
  }
#pragma unroll
  for (int p = 0; p < TN / 4; ++p) {
    const float4 v = *reinterpret_cast<const float4*>(sb + p * LANES_N * 4);
    rb[4 * p + 0] = v.x; rb[4 * p + 1] = v.y; rb[4 * p + 2] = v.z; rb[4 * p + 3] = v.w;
  }
}

// acc += ra x rb in the order FMA_ORDER names (item 9). ptxas keeps the order of independent
// FFMAs largely as written, and the order decides which operand the reuse cache can serve and so
// which registers must come from the banks in the same cycle.
//   0: row by row (i outer, j inner);  1: serpentine (odd rows run j backwards: the last B value
//   of a row is the first of the next, CUTLASS's MmaSimt order);  2: column by column (j outer);
//   3: serpentine by columns.
__device__ __forceinline__ void outer_product(const float (&ra)[TM], const float (&rb)[TN], float (&acc)[TM][TN]) {
#if FMA_ORDER_USED == 0 || FMA_ORDER_USED == 1
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int jj = 0; jj < TN; ++jj) {
      const int j = (FMA_ORDER_USED == 1 && (i & 1)) ? TN - 1 - jj : jj;
      acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    }
#else
#pragma unroll
  for (int j = 0; j < TN; ++j)
#pragma unroll
    for (int ii = 0; ii < TM; ++ii) {
      const int i = (FMA_ORDER_USED == 3 && (j & 1)) ? TM - 1 - ii : ii;
      acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    }
#endif
}

// The k-loop. The partial k-tile (K % BK != 0) goes first, in the prologue, so every k-tile the
// loop copies is whole and needs no checks: k-tile order tail, 0, 1, ..., full-1 (the sum is
// the same set of products, in another order). EDGE: this block's tile crosses M or N.
// VEC (LOADER 0 only): K % 4 == 0 and A, B 16-byte aligned, so whole k-tiles move as float4.
template <bool EDGE, bool VEC>
__device__ __forceinline__ void mainloop(const Loader& L, float* smem, int K, int am, int bn, float (&acc)[TM][TN]) {
  const int full = K / BK;                 // whole k-tiles
  const bool tail = full * BK != K;        // one partial k-tile, at k = full*BK
  const int tiles = full + (tail ? 1 : 0);
  float ra[2][TM], rb[2][TN];
#if LOADER == 1
  const float* ga = L.a;                   // the next whole k-tile's first element
  const float* gb = L.b;
  const u32 s0 = smem_u32(smem) + L.sa;  // this thread's first A element in stage 0
  if (tail) issue_tile<EDGE, true>(L, L.a + full * BK, L.b + full * BK, s0, full * BK + L.lk, K);
  else if (full > 0) {
    issue_tile<EDGE, false>(L, ga, gb, s0, 0, K);
    ga += BK;
    gb += BK;
  }
  cp_async_commit();  // group j holds k-tile j; empty groups keep the count uniform
#pragma unroll
  for (int j = 1; j < STAGES - 1; ++j) {
    if (j < tiles) {
      issue_tile<EDGE, false>(L, ga, gb, s0 + j * STAGE_BYTES, 0, K);
      ga += BK;
      gb += BK;
    }
    cp_async_commit();
  }
  cp_async_wait<STAGES - 2>();
  __syncthreads();
  u32 rd = 0, wr = (STAGES - 1) * STAGE_BYTES;  // byte offsets of the stages read and written next
#else
  Staged st;
  const float* pa[A_ROUNDS];  // the next whole k-tile of each round's row (advanced in place)
  const float* pb[B_ROUNDS];
#pragma unroll
  for (int i = 0; i < A_ROUNDS; ++i) pa[i] = L.a[i];
#pragma unroll
  for (int i = 0; i < B_ROUNDS; ++i) pb[i] = L.b[i];
  if (tail) {
    fetch_tile<2>(pa, pb, st, full * BK, full * BK + L.lk, K);
  } else if (full > 0) {  // K == 0: nothing to read (C = 0)
    fetch_tile<VEC ? 0 : 1>(pa, pb, st, 0, 0, K);
#pragma unroll
    for (int i = 0; i < A_ROUNDS; ++i) pa[i] += BK;
#pragma unroll
    for (int i = 0; i < B_ROUNDS; ++i) pb[i] += BK;
  }
  if (tiles > 0) store_tile(L, st, smem);
  __syncthreads();
  u32 rd = 0;
#endif
  load_frags(smem, 0, am, bn, ra[0], rb[0]);

  // `left`: k-tiles after the current one (one counter instead of an index and a bound).
  for (int left = tiles - 1; left >= 0; --left) {
    const float* cur = smem + rd / 4;
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      if (kk == 0) {  // start the copy of the k-tile STAGES-1 ahead (LOADER 0: the next one)
#if LOADER == 1
        if (left >= STAGES - 1) {
          issue_tile<EDGE, false>(L, ga, gb, s0 + wr, 0, K);
          ga += BK;
          gb += BK;
        }
        cp_async_commit();
        wr = wr + STAGE_BYTES == STAGES * STAGE_BYTES ? 0u : wr + STAGE_BYTES;
#else
        if (left > 0) {
          fetch_tile<VEC ? 0 : 1>(pa, pb, st, 0, 0, K);  // whole k-tiles: no k checks
#pragma unroll
          for (int i = 0; i < A_ROUNDS; ++i) pa[i] += BK;
#pragma unroll
          for (int i = 0; i < B_ROUNDS; ++i) pb[i] += BK;
        }
#endif
      }
#if LOADER == 0
      // The next k-tile's registers go to the other stage (free since the last barrier) three
      // k-steps before its end, leaving the loads BK-3 k-steps (5 x 64 FFMAs per warp at BK 8)
      // to arrive. Where exactly is a ptxas matter: at BK-2 the sm_80 build spilled one register
      // at the 128 cap, at BK-3 neither sm_80 nor sm_90 spills (NVRTC 13.0).
      if (kk == BK - 3 && left > 0) store_tile(L, st, smem + (rd ^ STAGE_BYTES) / 4);
#endif
      if (kk < BK - 1) {
        load_frags(cur, kk + 1, am, bn, ra[(kk + 1) & 1], rb[(kk + 1) & 1]);
      } else if (XFRAG && left > 0) {  // the next k-tile: make it visible, read its first k
#if LOADER == 1
        cp_async_wait<STAGES - 2>();  // k-tile kt+1's group (all but the newest STAGES-2)
        __syncthreads();              // ... from every thread; and stage kt%S is free for reuse
        rd = rd + STAGE_BYTES == STAGES * STAGE_BYTES ? 0u : rd + STAGE_BYTES;
#else
        rd ^= STAGE_BYTES;
        __syncthreads();
#endif
        load_frags(smem + rd / 4, 0, am, bn, ra[(kk + 1) & 1], rb[(kk + 1) & 1]);
      }
      outer_product(ra[kk & 1], rb[kk & 1], acc);
    }
    if (!XFRAG && left > 0) {  // v5's order: the barrier, then the first fragments
#if LOADER == 1
      cp_async_wait<STAGES - 2>();
      __syncthreads();
      rd = rd + STAGE_BYTES == STAGES * STAGE_BYTES ? 0u : rd + STAGE_BYTES;
#else
      rd ^= STAGE_BYTES;
      __syncthreads();
#endif
      load_frags(smem + rd / 4, 0, am, bn, ra[0], rb[0]);
    }
  }
#if LOADER == 1
  cp_async_wait<0>();  // nothing may be in flight into shared memory when the block exits
#endif
}

extern "C" __global__ void __launch_bounds__(NT, MIN_BLOCKS) gemm_f32(const float* __restrict__ a,
                                                                     const float* __restrict__ b,
                                                                     float* __restrict__ c, int M, int N, int K) {
  extern __shared__ __align__(16) float smem[];  // STAGES x [A: BK][LDA], [B: BK][LDB]
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
#if GROUP_M_USED > 0
  // Grouped order (Triton's GROUP_SIZE_M): consecutive blocks walk down GROUP_M tile-rows, then
  // the next tile-column, so the blocks resident together span a squarer patch of C and share
  // more A and B rows in L2. Same grid, same tiles, another assignment of tiles to block ids.
  int tm, tn;
  {
    const int id = blockIdx.y * gridDim.x + blockIdx.x;  // launch order
    const int per_group = GROUP_M_USED * gridDim.x;
    const int first = (id / per_group) * GROUP_M_USED;
    const int rows = min((int)gridDim.y - first, GROUP_M_USED);
    const int r = id % per_group;
    tm = first + r % rows;
    tn = r / rows;
  }
  const int m0 = tm * BM, n0 = tn * BN;
#else
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
#endif
#if LANE_MAP == 1
  // RowMajorInterleaved<2>: lane bit 0 -> lm bit 0, the next log2(LANES_N) bits -> ln, the rest
  // -> lm >> 1. Lanes n, n^1 share ln (B address); n, n^2 share lm (A address).
  const int ln = (lane >> 1) % LANES_N;
  const int lm = (lane & 1) | ((lane / (2 * LANES_N)) << 1);
#else
  const int lm = lane / LANES_N, ln = lane % LANES_N;  // v5's order
#endif
  const int wm = (warp / WARPS_N) * WM, wn = (warp % WARPS_N) * WN;
  const int am = wm + lm * 4, bn = wn + ln * 4;  // first A row / B column of this lane's pieces

  Loader L;
#if LOADER == 1
  const int lrow = t / 8;  // a warp copies one 32-byte sector (8 k) of each of 4 rows
  L.lk = t % 8;
  // Pointers to rows past M (N) are formed but never dereferenced (EDGE skips those rows).
  L.a = a + (size_t)(m0 + lrow) * K + L.lk;
  L.b = b + (size_t)(n0 + lrow) * K + L.lk;
  L.a_rows = M - (m0 + lrow);
  L.b_rows = N - (n0 + lrow);
#else
  const int lrow = t / TPR;  // TPR lanes share a row, one float4 each
  L.lk = (t % TPR) * 4;
#pragma unroll
  for (int i = 0; i < A_ROUNDS; ++i) L.a[i] = a + (size_t)min(m0 + lrow + i * ROWS_0, M - 1) * K + L.lk;
#pragma unroll
  for (int i = 0; i < B_ROUNDS; ++i) L.b[i] = b + (size_t)min(n0 + lrow + i * ROWS_0, N - 1) * K + L.lk;
#endif
  L.sa = (u32)((L.lk * LDA + lrow) * 4);
  L.sb = (u32)((L.lk * LDB + lrow) * 4);
  L.b_minus_a = (u32)(L.lk * (LDB - LDA) * 4);

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  const bool edge = m0 + BM > M || n0 + BN > N;  // uniform per block
#if LOADER == 1
  if (edge) mainloop<true, false>(L, smem, K, am, bn, acc);
  else mainloop<false, false>(L, smem, K, am, bn, acc);
#else
  const bool vec = (K % 4 == 0) && ((reinterpret_cast<size_t>(a) | reinterpret_cast<size_t>(b)) % 16 == 0);
  (void)edge;  // rows are clamped instead (see Loader)
  if (vec) mainloop<false, true>(L, smem, K, am, bn, acc);
  else mainloop<false, false>(L, smem, K, am, bn, acc);  // K % 4 != 0 or unaligned rows
#endif

  // acc[i][j] is C[m0 + am + (i/4)*LANES_M*4 + i%4][n0 + bn + (j/4)*LANES_N*4 + j%4].
  const bool vec_c = (N % 4 == 0) && (reinterpret_cast<size_t>(c) % 16 == 0);
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + am + (i / 4) * LANES_M * 4 + i % 4;
    if (m >= M) continue;
    float* crow = c + (size_t)m * N;
#pragma unroll
    for (int jp = 0; jp < TN / 4; ++jp) {
      const int n = n0 + bn + jp * LANES_N * 4;
      const int j = jp * 4;
      if (vec_c && n + 3 < N) {
        *reinterpret_cast<float4*>(crow + n) = make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      } else {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj)
          if (n + jj < N) crow[n + jj] = acc[i][j + jj];
      }
    }
  }
}
