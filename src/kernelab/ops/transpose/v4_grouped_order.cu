// v4_grouped_order: v3's 16-byte swizzled tiles, visited in grouped order: consecutive blocks
// walk down a group of GROUP row tiles before moving one tile to the right, so the blocks in
// flight cover a square of the matrix and both DRAM streams run through long rows.
//
// What changed from v3: (1) the order of the tiles. v3 maps blockIdx.x to the column tile and
//   blockIdx.y to the row tile, and the GPU dispatches blocks x-fastest, so the ~1056 resident
//   blocks (132 SMs x 8) at 16384^2 fp32 hold ~4 whole rows of tiles: the reads sweep 256
//   input rows end to end, but the writes go to all 16384 output rows at once, 4 x 256 B =
//   1 KiB per row (bf16, 64 x 64 tiles of 128-byte rows: 4 x 128 B = 512 B). Here the block's
//   linear index t = blockIdx.y x gridDim.x + blockIdx.x (dispatch order) is mapped to tile
//   (row tile, column tile) in groups of GROUP row tiles, row tile fastest: blocks t .. t+31
//   write 32 consecutive 256-byte pieces of the same 64 output rows (8 KiB of each), and the
//   ~1056 blocks in flight span ~33 column tiles x 32 row tiles: 8.4 KiB per input row read
//   and 8 KiB per output row written, 2112 rows each side. GROUP 1 is v3's order; a GROUP
//   above the row-tile count is column-major (the reads scattered instead of the writes).
//   (2) the tile shape is a knob (TILE_ROWS x TILE_COLS, powers of two, multiples of 8; the bf16
//   kernel's own with TILE_ROWS_BF16 x TILE_COLS_BF16, `@tile_rows_bf16` / `@tile_cols_bf16`):
//   v3's layout generalised below 8 chunks per row, so 32 x 32 tiles work in bf16 too (the
//   small-shape geometry: 256 x 512 bf16 in 128 blocks of 128 threads, one 16-byte load and one
//   16-byte store per thread); (3) a grid-stride loop over linear tile indices (gridDim.y is
//   capped at 65535: tall matrices loop, as in v3).
// Why: bytes first. 16384^2 fp32 moves 2 x 1 GiB = 2.147 GB; at the copy ceiling (4.29 TB/s)
//   that is 500 us, v3 takes 547 us (3.92 TB/s, 0.91x copy; bf16 285 us vs 250, 0.88x). Not
//   the bytes in flight: Little's law asks ~4.3 TB/s x ~1 us / 132 SMs ~ 33 KB per SM, and v3
//   keeps up to 8 blocks x 16 KB = 128 KB (bf16 64 KB) of loads in flight per SM. Not the
//   instruction stream: a 16-byte store costs 4 LDS (bf16 8) and a few ALU ops, ~10% of the
//   SM's issue slots at 33 GB/s per SM. What differs from a copy is where the bytes go: a
//   copy's reads and writes both run along rows, v3's writes touch 16384 rows (each row of
//   out is 64 KiB away from the next, a DRAM page each) with 1 KiB (bf16 512 B) apiece while
//   its reads stream, and bf16 (half the bytes per row segment) sits lower, 0.88x vs 0.91x:
//   the locality of the write side is the one difference that also explains the dtype gap.
//   With 8 KiB per row on both sides every DRAM page opened for the transpose is filled (a DRAM
//   row is ~1-2 KiB), as in a copy.
// Not TMA (cp.async.bulk.tensor): a TMA box lands in shared memory as rows, so the transpose
//   still takes a pass of LDS/STS by the threads between the TMA load and the TMA store; what
//   TMA saves is issue slots and bytes-in-flight bookkeeping, and neither is short here (above).
//   The order of the tiles is the same question with or without TMA; it is measured first.
// Predicted: 16384^2 fp32 ~4.10-4.20 TB/s (0.96-0.98x copy, 511-524 us, >= torch.compile's
//   544 us); bf16 the same TB/s (~256-262 us) since the dtype no longer changes the row spans
//   (GROUP x TILE_ROWS x itemsize: 8 KiB fp32, 4 KiB bf16, both above a page). GROUP 1 should
//   measure v3's 547 us (it is v3's order) and a column-major GROUP about the same (symmetric):
//   if GROUP 8-64 do not beat them, page locality is not the limit and the row spans are not
//   the story. 256 x 512 (graph mode, L2-resident): 32 x 32 tiles, fp32 ~1.3-1.4 us, bf16 with
//   128-thread blocks ~1.3 us (v2 1.44; the 4 (bf16 8) serial element loads of v2 become one
//   16-byte load per thread).
// Measured (docs/runs/2026-11-30-h200-sweep_membound_s4.json, copy 501.9 us for 2.15 GB):
//   the grouped orders did not pay: 16384^2 fp32 GROUP 32 552.6 us, 8 549.2, 16 551.3, 64 545.1,
//   1 (v3's order) 545.9; column-major (GROUP 2^20: tile rows fastest, so consecutive blocks
//   write neighbouring columns of the same output rows) 524.9 us = 0.96x a copy, 1.04x
//   torch.compile (545.9); bf16 270.5 us (v3 285.2, torch.compile 317.4), and 128x128 bf16
//   tiles in GROUP 32 order 270.9. So it is the write side's locality that pays, not a square
//   patch: GROUP defaults to 2^20 (column-major) now. Evict hints (LD_HINT 1, ST_HINT 1) lose 4%.
//   Column-major with 128 x 128 bf16 tiles (256 B per row segment each side, as fp32's 64 x 64):
//   260.1 us = 0.97x a copy, 1.22x torch.compile (docs/runs/2026-11-30-h200-sweep_membound_s4b.json):
//   the bf16 default now (@tile_rows_bf16 / @tile_cols_bf16).
//   Small tiles for 256 x 512 lost to v2 (0.83x vs 0.89x torch.compile in graph mode).
//   Session 5 (docs/runs/2026-11-30-h200-sweep_membound_s5.json, -s6.json): fp32 tiles 128 x 64,
//   64 x 128 and 128-thread blocks 523.0-525.6 us (default 524.8); bf16 128 x 64 272.2, 64 x 128
//   263.6 (default 261.2); a skewed column-major order (column tile c starting SKEW x c row tiles
//   down, SKEW 1, 8, 37) 522.4-523.9 / 260.3-260.9 against the default's 524.0 / 260.4: no knob moves it past
//   0.96-0.97x a copy; the skew was not kept.
// Measured: BENCHMARKS.md, transpose rows (full runs).
// Banks: tiles of >= 32 x 32 whose rows hold >= 8 chunks (fp32 TILE_COLS >= 32, bf16 >= 64) are
//   conflict-free both ways, as in v3. Rows of 4 or 2 chunks (bf16 TILE_COLS 32, 16) keep 2 or 1
//   XOR bits; the STS.128 phases still cover 128 contiguous bytes, and the gather stays
//   conflict-free for bf16 32 x 32 (16 words in 16 banks) but not for bf16 64 x 32 or 16 x 32
//   (2-way) or narrower tiles (tests/cpu/test_transpose_v4.py replays the addresses).
// Alignment and edges: as v3 (vectors where rows are 16-byte aligned, element accesses for the
//   chunks cut by an edge or on a misaligned side; interior tiles skip the bounds checks).
//
// Knobs (#ifndef macros): TILE_ROWS, TILE_COLS, BLOCK (from the header; powers of two),
// TILE_ROWS_BF16, TILE_COLS_BF16 (default: TILE_ROWS, TILE_COLS; tile bytes <= 48 KiB), GROUP (row tiles per group, default 32; 1 = v3's order), MIN_BLOCKS (resident blocks the
// register budget is set for), LD_HINT (0 ld.global.nc, 1 ld.global.nc.L1::no_allocate),
// ST_HINT (0 st.global, 1 st.global.cs: evict-first).
//
// @block 256
// @tile_rows 64
// @tile_cols 64
// @tile_rows_bf16 128
// @tile_cols_bf16 128
// @access_bytes 16 (loads of m and stores of out, where rows are 16-byte aligned)
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef TILE_ROWS
#define TILE_ROWS 64
#endif
#ifndef TILE_COLS
#define TILE_COLS 64
#endif
// The bf16 kernel's tile (default: the same elements as fp32, half the bytes). With `@tile_rows_bf16`
// and `@tile_cols_bf16` in the header (or the sweep's meta) op.py passes these and sizes its grid.
#ifndef TILE_ROWS_BF16
#define TILE_ROWS_BF16 TILE_ROWS
#endif
#ifndef TILE_COLS_BF16
#define TILE_COLS_BF16 TILE_COLS
#endif
#ifndef GROUP
#define GROUP 1048576  // column-major (the sweep's winner); 32 was the first default
#endif
#ifndef LD_HINT
#define LD_HINT 0
#endif
#ifndef ST_HINT
#define ST_HINT 0
#endif
// Register budget (resident blocks per SM the compiler must fit): v3's, 2048 threads per SM on
// Hopper and later (32 registers at 256 threads, 4 vectors per thread), 1536 on sm_80 (v3 spilled
// under NVRTC 13.5 at 32 registers there); halved for every doubling of the vectors a thread
// holds past 4 (8 vectors: 64 registers), which bigger tiles need.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define RESIDENT_THREADS 1536
#else
#define RESIDENT_THREADS 2048
#endif
#define VECS_PER_THREAD(TR, TC, V) (((TR) * (TC) / (V) + BLOCK - 1) / BLOCK)
#define BUDGET_BLOCKS(P) (RESIDENT_THREADS / BLOCK * 4 / ((P) > 4 ? (P) : 4) > 0 ? RESIDENT_THREADS / BLOCK * 4 / ((P) > 4 ? (P) : 4) : 1)
#ifdef MIN_BLOCKS
#define MIN_BLOCKS_F32 MIN_BLOCKS
#define MIN_BLOCKS_BF16 MIN_BLOCKS
#else
#define MIN_BLOCKS_F32 BUDGET_BLOCKS(VECS_PER_THREAD(TILE_ROWS, TILE_COLS, 4))
#define MIN_BLOCKS_BF16 BUDGET_BLOCKS(VECS_PER_THREAD(TILE_ROWS_BF16, TILE_COLS_BF16, 8))
#endif

__device__ __forceinline__ uint4 load16(const void* p) {
#if LD_HINT == 0
  return __ldg(reinterpret_cast<const uint4*>(p));
#elif LD_HINT == 1
  uint4 r;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p));
  return r;
#else
#error "LD_HINT must be 0 (ld.global.nc) or 1 (ld.global.nc.L1::no_allocate)"
#endif
}

__device__ __forceinline__ void store16(void* p, uint4 v) {
#if ST_HINT == 0
  *reinterpret_cast<uint4*>(p) = v;
#elif ST_HINT == 1
  __stcs(reinterpret_cast<uint4*>(p), v);
#else
#error "ST_HINT must be 0 (st.global) or 1 (st.global.cs)"
#endif
}

// 16 bytes <-> V elements of B (B: the element's bits, unsigned for fp32, unsigned short for bf16).
template <typename B>
__device__ __forceinline__ uint4 pack(const B (&e)[16 / sizeof(B)]) {
  if constexpr (sizeof(B) == 4) {
    return make_uint4(e[0], e[1], e[2], e[3]);
  } else {
    return make_uint4(e[0] | ((unsigned)e[1] << 16), e[2] | ((unsigned)e[3] << 16),
                      e[4] | ((unsigned)e[5] << 16), e[6] | ((unsigned)e[7] << 16));
  }
}

#include "tile_order.cuh"  // TileOrder: linear tile index -> (row tile, column tile) by GROUP

template <typename B, unsigned TR, unsigned TC>
__device__ __forceinline__ void grouped_transpose(const B* __restrict__ in, B* __restrict__ out, unsigned rows,
                                                  unsigned cols, unsigned long long ld) {
  constexpr unsigned V = 16 / sizeof(B);            // elements per 16-byte vector: 4 fp32, 8 bf16
  constexpr unsigned IN_CPR = TC / V;               // 16-byte chunks per tile row
  constexpr unsigned OUT_CPR = TR / V;              // chunks per output row within the tile
  constexpr unsigned CHUNKS = TR * IN_CPR;          // chunks per tile (= TC x OUT_CPR)
  constexpr unsigned PER_THREAD = (CHUNKS + BLOCK - 1) / BLOCK;  // loads (and stores) per thread
  constexpr bool EVEN = CHUNKS % BLOCK == 0;        // else the last step leaves threads idle
  constexpr unsigned XMASK = (IN_CPR < 8 ? IN_CPR : 8) - 1;      // swizzle bits: within one tile row
  constexpr unsigned LPR = OUT_CPR < 8 ? OUT_CPR : 8;            // lanes per output row in a warp store
  constexpr unsigned RPW = 32 / LPR;                // output rows per warp store
  constexpr unsigned GROUPS = OUT_CPR / LPR;        // warp tasks across one output row of the tile
  static_assert(TR % V == 0 && TC % V == 0 && (TR & (TR - 1)) == 0 && (TC & (TC - 1)) == 0,
                "tile sides: powers of two, multiples of one 16-byte vector (8 elements covers both dtypes)");
  static_assert(TC % RPW == 0, "a warp stores RPW whole output rows of the tile");
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps: a warp shares one store task");
  static_assert(CHUNKS * 16 <= 48 * 1024, "the tile is static shared memory: at most 48 KiB (fp32 128 x 96)");

  __shared__ uint4 tile[CHUNKS];  // chunk (r, ch) lives at tile[r * IN_CPR + (ch ^ ((r / V) & XMASK))]
  const B* tile_e = reinterpret_cast<const B*>(tile);

  // Uniform across the grid, so the vector/element choice never splits a warp except at edges.
  const bool vin = ((reinterpret_cast<unsigned long long>(in) | (ld * sizeof(B))) & 15) == 0;
  const bool vout = ((reinterpret_cast<unsigned long long>(out) | ((unsigned long long)rows * sizeof(B))) & 15) == 0;

  TileOrder order;
  order.n_x = (cols - 1) / TC + 1;  // the launch returns early for an empty matrix
  order.n_y = (rows - 1) / TR + 1;
  order.g_rows = min((unsigned)GROUP, order.n_y);
  order.per_group = order.g_rows * order.n_x;
  const unsigned tiles = order.n_y * order.n_x;
  const unsigned stride = gridDim.x * gridDim.y;
  // The loop bound depends only on blockIdx: every thread reaches both barriers.
  for (unsigned t = blockIdx.y * gridDim.x + blockIdx.x; t < tiles; t += stride) {
    unsigned ty, tx;
    order.coords(t, ty, tx);
    const unsigned r0 = ty * TR, c0 = tx * TC;
    // Interior tiles take a path with no bounds checks; `interior` is block-uniform.
    const bool interior = rows - r0 >= TR && cols - c0 >= TC;  // r0 < rows, c0 < cols: no wrap

    // Load phase: all PER_THREAD vectors in flight before the first shared-memory store. The
    // interior path is straight-line code (one base pointer, constant offsets), as in v3.
    uint4 v[PER_THREAD];
    if (interior && vin) {
#pragma unroll
      for (unsigned s = 0; s < PER_THREAD; ++s) {
        const unsigned idx = s * BLOCK + threadIdx.x;
        const unsigned r = idx / IN_CPR, ch = idx % IN_CPR;
        if (EVEN || idx < CHUNKS) v[s] = load16(in + (r0 + r) * ld + c0 + ch * V);
      }
    } else {
#pragma unroll
      for (unsigned s = 0; s < PER_THREAD; ++s) {
        const unsigned idx = s * BLOCK + threadIdx.x;
        const unsigned r = idx / IN_CPR, ch = idx % IN_CPR;
        const unsigned i = r0 + r, j = c0 + ch * V;  // m[i][j .. j + V - 1]
        v[s] = make_uint4(0u, 0u, 0u, 0u);  // chunks outside m are never stored to out
        if ((EVEN || idx < CHUNKS) && i < rows && j < cols) {
          const B* src = in + i * ld + j;
          if (vin && j + V <= cols) {
            v[s] = load16(src);
          } else {
            B e[V];
#pragma unroll
            for (unsigned k = 0; k < V; ++k) e[k] = j + k < cols ? src[k] : B(0);
            v[s] = pack<B>(e);
          }
        }
      }
    }
#pragma unroll
    for (unsigned s = 0; s < PER_THREAD; ++s) {
      const unsigned idx = s * BLOCK + threadIdx.x;
      if (!EVEN && idx >= CHUNKS) continue;
      const unsigned r = idx / IN_CPR, ch = idx % IN_CPR;
      tile[r * IN_CPR + (ch ^ ((r / V) & XMASK))] = v[s];
    }
    __syncthreads();

    // Store phase: warp task w writes output rows RPW (w / GROUPS) .. + RPW - 1 of the tile,
    // chunks LPR (w % GROUPS) .. + LPR - 1; lane L takes row + L / LPR, chunk + L % LPR.
#pragma unroll
    for (unsigned s = 0; s < PER_THREAD; ++s) {
      const unsigned idx = s * BLOCK + threadIdx.x;
      if (!EVEN && idx >= CHUNKS) continue;
      const unsigned task = idx / 32, lane = idx % 32;
      const unsigned oc = (task / GROUPS) * RPW + lane / LPR;  // output row in the tile = column of m
      const unsigned q = (task % GROUPS) * LPR + lane % LPR;   // output chunk = rows q V .. q V + V - 1 of m
      const unsigned phys = (oc / V) ^ (q & XMASK);            // ((q V + k) / V) & XMASK == q & XMASK
      B e[V];
#pragma unroll
      for (unsigned k = 0; k < V; ++k) e[k] = tile_e[((q * V + k) * IN_CPR + phys) * V + oc % V];
      const unsigned j = c0 + oc, i = r0 + q * V;  // out[j][i .. i + V - 1]
      B* dst = out + j * (unsigned long long)rows + i;
      if (interior && vout) {
        store16(dst, pack<B>(e));
      } else if (j < cols && i < rows) {
        if (vout && i + V <= rows) {
          store16(dst, pack<B>(e));
        } else {
#pragma unroll
          for (unsigned k = 0; k < V; ++k)
            if (i + k < rows) dst[k] = e[k];
        }
      }
    }
    __syncthreads();  // the next tile overwrites `tile`
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS_F32) transpose_f32(const float* __restrict__ in,
                                                                      float* __restrict__ out, unsigned int rows,
                                                                      unsigned int cols, unsigned long long ld) {
  grouped_transpose<unsigned, TILE_ROWS, TILE_COLS>(reinterpret_cast<const unsigned*>(in),
                                                    reinterpret_cast<unsigned*>(out), rows, cols, ld);
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS_BF16) transpose_bf16(
    const __nv_bfloat16* __restrict__ in, __nv_bfloat16* __restrict__ out, unsigned int rows, unsigned int cols,
    unsigned long long ld) {
  grouped_transpose<unsigned short, TILE_ROWS_BF16, TILE_COLS_BF16>(reinterpret_cast<const unsigned short*>(in),
                                                                    reinterpret_cast<unsigned short*>(out), rows,
                                                                    cols, ld);
}
