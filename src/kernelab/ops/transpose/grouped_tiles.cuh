// grouped_tiles.cuh: the tile transpose of v4_grouped_order and v7_ticket_tiles (v3's 16-byte
// swizzled tiles, visited in TileOrder's order), with where a block's next tile comes from as a
// template parameter: v4's GridStrideTiles (t = the block's linear index, then + the grid's size)
// or v7's TicketTiles (t from a global counter). The knob defaults below are v4's (its header
// documents them); the including file may override any of them with a macro.
#pragma once
#include "../common/ld16.cuh"  // kl::ld16_nc_no_allocate (LD_HINT 1)

#ifndef BLOCK
#define BLOCK 256
#endif
// Threads a block per dtype (default BLOCK; with `@block_f32` / `@block_bf16` in the header op.py passes
// these and launches that many): v4 runs fp32 at 512 since session 25 (two vectors a thread, not four).
#ifndef BLOCK_F32
#define BLOCK_F32 BLOCK
#endif
#ifndef BLOCK_BF16
#define BLOCK_BF16 BLOCK
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
#define VECS_PER_THREAD(TR, TC, V, BLK) (((TR) * (TC) / (V) + (BLK) - 1) / (BLK))
#define BUDGET_BLOCKS(P, BLK) \
  (RESIDENT_THREADS / (BLK) * 4 / ((P) > 4 ? (P) : 4) > 0 ? RESIDENT_THREADS / (BLK) * 4 / ((P) > 4 ? (P) : 4) : 1)
#ifdef MIN_BLOCKS
#define MIN_BLOCKS_F32 MIN_BLOCKS
#define MIN_BLOCKS_BF16 MIN_BLOCKS
#else
#define MIN_BLOCKS_F32 BUDGET_BLOCKS(VECS_PER_THREAD(TILE_ROWS, TILE_COLS, 4, BLOCK_F32), BLOCK_F32)
#define MIN_BLOCKS_BF16 BUDGET_BLOCKS(VECS_PER_THREAD(TILE_ROWS_BF16, TILE_COLS_BF16, 8, BLOCK_BF16), BLOCK_BF16)
#endif

__device__ __forceinline__ uint4 load16(const void* p) {
#if LD_HINT == 0
  return __ldg(reinterpret_cast<const uint4*>(p));
#elif LD_HINT == 1
  return kl::ld16_nc_no_allocate(p);
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

// One 16-byte store as one PTX instruction, which cannot be split. store16 (a uint4 assignment) came out
// of NVRTC as four 4-byte STG.E in v8 and in the shifted kernels (where an element-by-element branch
// stores the same words: the compiler merged the two), the vector gathered from shared memory split
// back into its words (SASS, sm_80 and sm_90).
__device__ __forceinline__ void st_global_v4(void* p, uint4 v) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
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

// A tile of TR x TC elements of B as 16-byte chunks, and how a block of BLK threads covers it.
template <typename B, unsigned TR, unsigned TC, unsigned BLK>
struct TileGeom {
  static constexpr unsigned V = 16 / sizeof(B);            // elements per 16-byte vector: 4 fp32, 8 bf16
  static constexpr unsigned IN_CPR = TC / V;               // 16-byte chunks per tile row
  static constexpr unsigned OUT_CPR = TR / V;              // chunks per output row within the tile
  static constexpr unsigned CHUNKS = TR * IN_CPR;          // chunks per tile (= TC x OUT_CPR)
  static constexpr unsigned PER_THREAD = (CHUNKS + BLK - 1) / BLK;  // loads (and stores) per thread
  static constexpr bool EVEN = CHUNKS % BLK == 0;          // else the last step leaves threads idle
  static constexpr unsigned XMASK = (IN_CPR < 8 ? IN_CPR : 8) - 1;      // swizzle bits: within one tile row
  static constexpr unsigned LPR = OUT_CPR < 8 ? OUT_CPR : 8;            // lanes per output row in a warp store
  static constexpr unsigned RPW = 32 / LPR;                // output rows per warp store
  static constexpr unsigned GROUPS = OUT_CPR / LPR;        // warp tasks across one output row of the tile

  // Store phase: warp task w = idx / 32 writes output rows RPW (w / GROUPS) .. + RPW - 1 of the tile,
  // chunks LPR (w % GROUPS) .. + LPR - 1; lane L takes row + L / LPR, chunk + L % LPR. oc: the output row
  // in the tile (a column of m); q: the output chunk (rows q V .. q V + V - 1 of m).
  __device__ static __forceinline__ void store_task(unsigned idx, unsigned& oc, unsigned& q) {
    const unsigned task = idx / 32, lane = idx % 32;
    oc = (task / GROUPS) * RPW + lane / LPR;
    q = (task % GROUPS) * LPR + lane % LPR;
  }
};

// Where a block's tiles come from: a Tiles policy, called by every thread of the block as
//   t = tiles_from.first();    before the loop;
//   tiles_from.take();         once the tile is in shared memory, before the barrier that ends
//                              the load phase (v7: thread 0 takes the next tile's ticket here);
//   tiles_from.publish();      after the store phase, before the barrier that ends the tile;
//   t = tiles_from.next(t);    after that barrier (the result must be uniform across the block:
//                              the loop holds two barriers).
//   tiles_from.done();         after the loop.
// The loop runs while t < the tile count, t in TileOrder's linear order.
// v4: the block's linear index in the grid, then + the grid's size (a grid-stride loop; a grid of
// one block per tile runs it once). v7's TicketTiles is in v7_ticket_tiles.cu.
struct GridStrideTiles {
  unsigned stride;
  __device__ __forceinline__ unsigned first() {
    stride = gridDim.x * gridDim.y;
    return blockIdx.y * gridDim.x + blockIdx.x;
  }
  __device__ __forceinline__ void take() {}
  __device__ __forceinline__ void publish() {}
  __device__ __forceinline__ unsigned next(unsigned t) const { return t + stride; }
  __device__ __forceinline__ void done() {}
};

template <typename B, unsigned TR, unsigned TC, unsigned BLK, typename Tiles>
__device__ __forceinline__ void grouped_transpose(const B* __restrict__ in, B* __restrict__ out, unsigned rows,
                                                  unsigned cols, unsigned long long ld, Tiles tiles_from) {
  using G = TileGeom<B, TR, TC, BLK>;
  constexpr unsigned V = G::V, IN_CPR = G::IN_CPR, CHUNKS = G::CHUNKS;
  constexpr unsigned PER_THREAD = G::PER_THREAD, XMASK = G::XMASK, RPW = G::RPW;
  constexpr bool EVEN = G::EVEN;
  static_assert(TR % V == 0 && TC % V == 0 && (TR & (TR - 1)) == 0 && (TC & (TC - 1)) == 0,
                "tile sides: powers of two, multiples of one 16-byte vector (8 elements covers both dtypes)");
  static_assert(TC % RPW == 0, "a warp stores RPW whole output rows of the tile");
  static_assert(BLK % 32 == 0 && BLK <= 1024, "whole warps: a warp shares one store task");
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
  // The loop bound is uniform across the block (v4: blockIdx only; v7: a shared-memory value
  // read after a barrier): every thread reaches both barriers.
  for (unsigned t = tiles_from.first(); t < tiles; t = tiles_from.next(t)) {
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
        const unsigned idx = s * BLK + threadIdx.x;
        const unsigned r = idx / IN_CPR, ch = idx % IN_CPR;
        if (EVEN || idx < CHUNKS) v[s] = load16(in + (r0 + r) * ld + c0 + ch * V);
      }
    } else {
#pragma unroll
      for (unsigned s = 0; s < PER_THREAD; ++s) {
        const unsigned idx = s * BLK + threadIdx.x;
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
      const unsigned idx = s * BLK + threadIdx.x;
      if (!EVEN && idx >= CHUNKS) continue;
      const unsigned r = idx / IN_CPR, ch = idx % IN_CPR;
      tile[r * IN_CPR + (ch ^ ((r / V) & XMASK))] = v[s];
    }
    tiles_from.take();
    __syncthreads();

    // Store phase: TileGeom::store_task's warp tasks.
#pragma unroll
    for (unsigned s = 0; s < PER_THREAD; ++s) {
      const unsigned idx = s * BLK + threadIdx.x;
      if (!EVEN && idx >= CHUNKS) continue;
      unsigned oc, q;  // output row in the tile (a column of m), output chunk (rows q V .. q V + V - 1 of m)
      G::store_task(idx, oc, q);
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
    tiles_from.publish();
    __syncthreads();  // the next tile overwrites `tile` (v7: and this barrier publishes the next ticket)
  }
  tiles_from.done();
}
