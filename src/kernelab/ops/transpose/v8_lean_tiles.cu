// v8_lean_tiles: v2's 32 x 32 shared-memory tile with 16-byte global accesses, fewer instructions
// per element and a short prologue: for the small, L2-resident shapes that run in graph mode.
//
// What changed from v7: v3-v7 are built for bandwidth; this starts again from v2, the best at
//   256 x 512 until now, and cuts its instructions: (1) 128 threads a block and each moves whole
//   16-byte vectors: a tile is 32 rows x 32 / V vectors (V = 4 fp32, 8 bf16): 2 vectors a thread
//   in fp32, 1 in bf16 (v2: 256 threads, 4 element loads and 4 element stores each); (2) the
//   tile's addresses are 64-bit once a block (the tile's corner), a thread's offsets one wide
//   multiply-add each; no bounds checks on tiles inside the matrix (edge tiles and unaligned
//   views take v2's element path, not unrolled); (3) no tile loop when the grid holds every row
//   tile (up to 65535 x 32 rows), and the barrier that ends a tile only when another follows.
// Why: ncu on the H200 (scripts/probe_small_transpose.py, 256 x 512 bf16,
//   docs/runs/2026-12-01-h200-ncu_small_transpose.csv): v2 issues 136,192 warp instructions
//   (133 a warp), the kernel torch.compile generates (Triton: 128 blocks of 128 threads, 16-byte
//   loads and stores through a 32 x 32 tile) 27,136 (53 a warp). v2 runs 1.44 us a graph replay,
//   torch.compile 1.30 (-s9_small3.json), a near-empty kernel 1.06 (launch_overhead): ~0.38 us of
//   body against ~0.24. The guess: the gap is issue slots.
// Banks (32 banks x 4 bytes): fp32 tile[32][33]: element e of thread (i, jv)'s vector goes to word
//   33 i + 4 jv + e, bank (i + 4 jv + e) mod 32: a warp's 4 rows x 8 vectors hit 32 banks; the
//   gather reads tile[4 iv + e][j] at bank (4 iv + e + j) mod 32: 32 banks again. bf16
//   tile[32][34] (17 words a row; 4-byte pair stores need an even pad): pair k of (i, jv) at word
//   17 i + 4 jv + k: a warp's 8 rows x 4 vectors meet 2 ways in some banks (a pad cannot separate
//   both phases in bf16; ncu counts 2,048 conflicts, as many as v2's); the 2-byte gather reads 16
//   distinct words, two lanes a word: no conflict.
// Predicted: ~55-60 warp instructions a warp in bf16; 256 x 512 in graph mode ~1.30-1.35 us in both
//   dtypes, within 1.05x torch.compile. At 16384^2 fp32 ~0.85-0.9x a copy (v4's job).
// Measured (H200, 256 x 512, graph mode, beside torch.compile in each run):
//   - first form ((1), (2), a tile loop): 57,344 warp instructions in bf16 (56 a warp, as
//     predicted), and no faster: bf16 1.449 us vs v2 1.438, torch.compile 1.290; fp32 1.499 vs
//     1.484 (1.377) (-s10_small.json). Issue slots are not the gap.
//   - its knobs (-s10_small2.json): plain or evict_last loads (torch.compile's) within 0.005 us;
//     blocks renumbered down the columns as Triton's are (ORDER 1): 0.11 us slower, the % and /
//     by the row-tile count standing in front of the first load.
//   - with (3): the loop had let ptxas hoist ~70 instructions of the edge path's addresses in
//     front of the first load (85 before the first LDG.E.128 in bf16; now 49, fp32 62, most of them
//     uniform). bf16 1.417 us vs torch.compile 1.291 / 1.297 (1.10x), v2 1.449 / 1.445 (1.12x);
//     fp32 1.477 / 1.477 vs 1.374 / 1.372 (1.075x), v2 1.483 (-s10_small4.json, the row `block 128`
//     for bf16, built as this header). Builds that differ only in code layout moved by
//     +-0.03 us between runs (-s10_small3.json); the gap to Triton's kernel is ~0.12 us, not found.
// Measured: BENCHMARKS.md, transpose rows (full runs).
//
// Knobs (#ifndef macros): BLOCK (64 or 128: whole vectors a thread), LD_KIND, ORDER (below).
// Header: `@full_tiles 1` makes op.py launch transpose_full_* (below) where it applies (16
//   instructions before the first LDG.E.128 in bf16 against the contract kernel's 48, 21 against 61
//   in fp32, sm_90). Measured (H200, session 13, docs/runs/2026-12-01-h200-sweep_membound_s13_fulltiles.json,
//   each build twice, alternating, beside torch.compile): 256 x 512 graph mode bf16 1.367 / 1.370 us
//   vs the contract kernel's 1.408 / 1.413 (torch.compile 1.296 / 1.300: 1.05x where it was 1.09x),
//   fp32 1.426 / 1.423 vs 1.477 / 1.481 (torch.compile 1.376 / 1.377: 1.03x); 4096^2 graph bf16
//   19.26 / 19.16 vs 19.39 / 19.40, fp32 36.28 / 36.28 vs 36.41 / 36.46; 16384^2 cold bf16 297.8 /
//   297.6 vs 299.3 / 299.2, fp32 573.3 / 573.7 vs 573.8 / 573.0 (v4's 16384^2 is faster still). On.
//
// @full_tiles 1
// @block 128
// @tile_rows 32
// @tile_cols 32
// @access_bytes 16 (loads of m and stores of out, on tiles inside the matrix of 16-byte aligned rows)
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 128
#endif
#ifndef TILE_ROWS
#define TILE_ROWS 32
#endif
#ifndef TILE_COLS
#define TILE_COLS 32
#endif
#ifndef LD_KIND
#define LD_KIND 0  // 16-byte loads of m: 0 ld.global.nc (grouped_tiles.cuh's load16), 1 ld.global,
                   // 2 ld.global with an L2 evict_last policy (what torch.compile's Triton kernel issues)
#endif
#ifndef ORDER
#define ORDER 0  // 0: blockIdx.x walks column tiles (op.py's grid); 1: consecutive blocks walk down the
                 // row tiles of one column tile (Triton's order here), when the grid holds every row tile
#endif
#include "grouped_tiles.cuh"  // load16, pack (v4's)

__device__ __forceinline__ uint4 ld_global_v4(const void* p) {
#if LD_KIND == 0
  return load16(p);
#else
  uint4 r;
#if LD_KIND == 1
  asm volatile("ld.global.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
#elif LD_KIND == 2
  asm volatile(
      "{\n .reg .b64 policy;\n createpolicy.fractional.L2::evict_last.b64 policy, 1.0;\n"
      " ld.global.L1::evict_last.L2::cache_hint.v4.b32 {%0, %1, %2, %3}, [%4], policy;\n}"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
#else
#error "LD_KIND must be 0, 1 or 2"
#endif
  return r;
#endif
}

// st_global_v4: grouped_tiles.cuh.

template <typename B, unsigned BLOCK_SIZE>
struct Lean {
  static constexpr unsigned TILE = 32;
  static_assert(TILE_ROWS == TILE && TILE_COLS == TILE, "v8: 32 x 32 tiles");
  static constexpr unsigned V = 16 / sizeof(B);      // elements of a 16-byte vector: 4 fp32, 8 bf16
  static constexpr unsigned VPR = TILE / V;          // vectors in a tile row: 8 fp32, 4 bf16
  static constexpr unsigned VECS = TILE * VPR;       // vectors in a tile: 256 fp32, 128 bf16
  static_assert(VECS % BLOCK_SIZE == 0, "whole vectors a thread");
  static constexpr unsigned PER_THREAD = VECS / BLOCK_SIZE;  // 2 fp32, 1 bf16 at 128 threads
  static constexpr unsigned PAD = sizeof(B) == 4 ? 1 : 2;  // Banks, above
  static constexpr unsigned STEP = BLOCK_SIZE / TILE;      // the element path: v2's rows of threads
  using Tile = B[TILE][TILE + PAD];

  const B* __restrict__ in;
  B* __restrict__ out;
  unsigned rows, cols;
  unsigned long long ld;
  bool vectors;  // 16-byte vectors of m's rows and out's rows: both pointers aligned, both row strides whole vectors

  // A whole tile in 16-byte vectors: `at_m(i, jv)` is vector jv of the tile's row i in m, `at_out(j, iv)`
  // vector iv of its column j in out (the contract kernel's 64-bit addresses from the tile's corner,
  // full_tile's 32-bit offsets from the matrix's start).
  template <typename AtM, typename AtOut>
  static __device__ __forceinline__ void vector_tile(Tile& t, AtM at_m, AtOut at_out) {
    uint4 v[PER_THREAD];
#pragma unroll
    for (unsigned p = 0; p < PER_THREAD; ++p) {  // all loads in flight before the first use
      const unsigned q = threadIdx.x + p * BLOCK_SIZE, i = q / VPR, jv = q % VPR;
      v[p] = ld_global_v4(at_m(i, jv));
    }
#pragma unroll
    for (unsigned p = 0; p < PER_THREAD; ++p) {
      const unsigned q = threadIdx.x + p * BLOCK_SIZE, i = q / VPR, jv = q % VPR;
      unsigned* row = reinterpret_cast<unsigned*>(&t[i][jv * V]);  // 4-byte aligned: PAD keeps rows even
      row[0] = v[p].x; row[1] = v[p].y; row[2] = v[p].z; row[3] = v[p].w;
    }
    __syncthreads();
#pragma unroll
    for (unsigned p = 0; p < PER_THREAD; ++p) {  // out row j (column j of the tile), rows iv V.. of m
      const unsigned q = threadIdx.x + p * BLOCK_SIZE, j = q / VPR, iv = q % VPR;
      B e[V];
#pragma unroll
      for (unsigned k = 0; k < V; ++k) e[k] = t[iv * V + k][j];
      st_global_v4(at_out(j, iv), pack<B>(e));
    }
  }

  // Tile (row tile tr, column tile ct): the vector path inside the matrix, v2's element path at its edges.
  __device__ __forceinline__ void tile(Tile& t, unsigned tr, unsigned ct) const {
    const unsigned r0 = tr * TILE, c0 = ct * TILE;
    if (vectors && r0 + TILE <= rows && c0 + TILE <= cols) {  // uniform across the block
      const B* src = in + (unsigned long long)r0 * ld + c0;      // the tile's corner in m
      B* dst = out + (unsigned long long)c0 * rows + r0;         // and in out
      vector_tile(t, [&](unsigned i, unsigned jv) { return src + (unsigned long long)i * ld + jv * V; },
                  [&](unsigned j, unsigned iv) { return dst + (unsigned long long)j * rows + iv * V; });
    } else {  // an edge tile, or rows that are not whole 16-byte vectors: v2's element path
      // (not unrolled: edge tiles are few, and unrolled their 64-bit addresses took 64+ registers)
      const unsigned lane = threadIdx.x % TILE;
#pragma unroll 1
      for (unsigned s = 0; s < TILE / STEP; ++s) {
        const unsigned k = threadIdx.x / TILE + s * STEP, i = r0 + k, j = c0 + lane;
        if (i < rows && j < cols) t[k][lane] = in[i * ld + j];
      }
      __syncthreads();
#pragma unroll 1
      for (unsigned s = 0; s < TILE / STEP; ++s) {
        const unsigned k = threadIdx.x / TILE + s * STEP, j = c0 + k, i = r0 + lane;
        if (j < cols && i < rows) out[j * (unsigned long long)rows + i] = t[lane][k];
      }
    }
  }
};

template <typename B, unsigned BLOCK_SIZE>
__device__ __forceinline__ void lean_transpose(const B* __restrict__ in, B* __restrict__ out, unsigned rows,
                                               unsigned cols, unsigned long long ld) {
  using L = Lean<B, BLOCK_SIZE>;
  __shared__ __align__(16) typename L::Tile t;
  const bool vectors = ((reinterpret_cast<unsigned long long>(in) | reinterpret_cast<unsigned long long>(out) |
                         ld * sizeof(B) | (unsigned long long)rows * sizeof(B)) & 15) == 0;
  const L lean{in, out, rows, cols, ld, vectors};
  const unsigned row_tiles = (rows + L::TILE - 1) / L::TILE;
  if (gridDim.y >= row_tiles) {  // a tile a block (rows up to 65535 x 32): no loop, so nothing of the
    // edge path is hoisted in front of the vector path's first load (with the loop, ptxas put ~70
    // instructions of loop-invariant edge-path addresses there: ~85 before the first LDG in bf16)
#if ORDER == 1  // renumber the blocks down the columns
    const unsigned linear = blockIdx.y * gridDim.x + blockIdx.x;
    lean.tile(t, linear % row_tiles, linear / row_tiles);
#else
    lean.tile(t, blockIdx.y, blockIdx.x);
#endif
    return;
  }
  for (unsigned tr = blockIdx.y; tr < row_tiles; tr += gridDim.y) {
    lean.tile(t, tr, blockIdx.x);
    if (tr + gridDim.y < row_tiles) __syncthreads();  // the next tile overwrites `t` (uniform)
  }
}

// The whole-tile instance (`@full_tiles 1`: op.py launches it instead of the contract kernel when
// every tile is whole and on the vector path, the grid holds every row tile and m's span and out fit
// 32-bit element offsets): no alignment test, no edge path, no loop, and 32-bit offsets (one 32-bit
// multiply-add a thread, one 64-bit add for the address). Session 10 counted 49 instructions in front
// of the contract kernel's first LDG.E.128 in bf16 (62 fp32), most of them the 64-bit addresses and
// the path tests; at 256 x 512 in graph mode the time is latency, so the prologue is the target.
template <typename B, unsigned BLOCK_SIZE>
__device__ __forceinline__ void full_tile(const B* __restrict__ in, B* __restrict__ out, unsigned rows, unsigned ld) {
  using L = Lean<B, BLOCK_SIZE>;
  constexpr unsigned TILE = L::TILE, V = L::V;
  __shared__ __align__(16) typename L::Tile t;
  const unsigned r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;
  L::vector_tile(t, [&](unsigned i, unsigned jv) { return in + ((r0 + i) * ld + c0 + jv * V); },
                 [&](unsigned j, unsigned iv) { return out + ((c0 + j) * rows + r0 + iv * V); });
}

// 1024 threads an SM at least: <= 64 registers (at 64 threads and no minimum, ptxas took 128 for the
// bf16 kernel on sm_80)
extern "C" __global__ void __launch_bounds__(BLOCK, 1024 / BLOCK) transpose_f32(const float* __restrict__ in,
                                                                  float* __restrict__ out, unsigned int rows,
                                                                  unsigned int cols, unsigned long long ld) {
  lean_transpose<unsigned, BLOCK>(reinterpret_cast<const unsigned*>(in), reinterpret_cast<unsigned*>(out), rows, cols, ld);
}

extern "C" __global__ void __launch_bounds__(BLOCK, 1024 / BLOCK) transpose_bf16(const __nv_bfloat16* __restrict__ in,
                                                                   __nv_bfloat16* __restrict__ out,
                                                                   unsigned int rows, unsigned int cols,
                                                                   unsigned long long ld) {
  lean_transpose<unsigned short, BLOCK>(reinterpret_cast<const unsigned short*>(in),
                                 reinterpret_cast<unsigned short*>(out), rows, cols, ld);
}

extern "C" __global__ void __launch_bounds__(BLOCK, 1024 / BLOCK) transpose_full_f32(const float* __restrict__ in,
                                                                       float* __restrict__ out, unsigned int rows,
                                                                       unsigned int cols, unsigned long long ld) {
  full_tile<unsigned, BLOCK>(reinterpret_cast<const unsigned*>(in), reinterpret_cast<unsigned*>(out), rows,
                             static_cast<unsigned>(ld));
}

extern "C" __global__ void __launch_bounds__(BLOCK, 1024 / BLOCK) transpose_full_bf16(const __nv_bfloat16* __restrict__ in,
                                                                        __nv_bfloat16* __restrict__ out,
                                                                        unsigned int rows, unsigned int cols,
                                                                        unsigned long long ld) {
  full_tile<unsigned short, BLOCK>(reinterpret_cast<const unsigned short*>(in),
                                   reinterpret_cast<unsigned short*>(out), rows, static_cast<unsigned>(ld));
}
