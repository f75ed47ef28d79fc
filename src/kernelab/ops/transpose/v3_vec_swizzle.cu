// v3_vec_swizzle: 64 x 64 tiles moved with 16-byte accesses on both sides (LDG.E.128 and
// STG.E.128), through an XOR-swizzled shared-memory tile instead of a padded one.
//
// What changed from v2: (1) each global access is one 16-byte vector (4 fp32 or 8 bf16)
//   instead of one element: a thread loads 4 (bf16: 2) vectors of m's rows, and writes 4
//   (bf16: 2) vectors of out's rows, each gathered from 4 (bf16: 8) rows of the tile;
//   (2) the tile is 64 x 64 (16 KB fp32, 8 KB bf16) and stored as 16-byte chunks at
//   chunk' = chunk XOR ((row / V) mod 8), V = elements per vector. Padding cannot keep both
//   the 16-byte stores into the tile aligned and the column reads conflict-free; the XOR
//   permutation does (Banks, below). Tiles inside the matrix take a path without bounds
//   checks; edge tiles check each chunk.
// Why: v2 moved 4 (2) bytes per instruction and a warp's access covered one 128-byte (64 B)
//   line; now a warp covers 512 bytes per instruction, in whole 128-byte lines on both
//   sides (reads: 2 rows x 256 B fp32, 4 rows x 128 B bf16; writes: 4 rows x 128 B), with a
//   quarter (an eighth) of the load/store instructions, and the per-tile barrier cost is
//   spread over 4x more bytes. Bytes in flight per SM: 8 blocks x 16 KB = 128 KB (bf16 64 KB),
//   above the ~25 KB that 4.8 TB/s x ~700 ns needs.
// Banks (32 banks x 4 bytes; STS.128 is served 8 lanes at a time, LDS 32 lanes at once):
//   - store into the tile: 8 consecutive lanes hold chunks 8m .. 8m+7 of one row; XOR with one
//     3-bit value permutes them within the same 8 chunks = 128 bytes = all 32 banks once;
//   - gather from the tile: lane L reads row V q + k with q mod 8 = L mod 8, column
//     c = 4 (warp's row group) + L / 8; its word sits in bank 4 (((c / V) XOR (L mod 8)) mod 8)
//     + c mod 4 (fp32) or + (c mod 8) / 2 (bf16, two lanes share each word): 32 distinct
//     banks (fp32) or 16 distinct words in 16 banks (bf16), no conflict either way.
// Alignment: vectors need 16-byte aligned rows: m's if ptr % 16 == 0 and the row stride is a
//   multiple of 16 bytes, out's if ptr % 16 == 0 and R x itemsize is. Each side checks on
//   its own (uniform across the grid) and falls back to element accesses for the chunks it
//   cannot vectorise; chunks cut by the matrix edge also go element by element.
// Predicted: ~0.93-0.97x a device copy at 16384^2 fp32 (~4.0-4.15 TB/s; a copy is 4.28 in
//   ANCHORS), >= 3x copy_(m.t())'s 1.16 TB/s; bf16 a little lower (8 KB tiles: 64 KB in
//   flight per SM instead of 128, and 128-byte rather than 256-byte row segments), ~3.8-4.0 TB/s.
// Measured: BENCHMARKS.md, transpose rows.
//
// @block 256
// @tile_rows 64
// @tile_cols 64
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
// 8 resident blocks (2048 threads) per SM: caps registers at 32. Without it ptxas keeps all 16
// shared-memory addresses live across the tile loop (62 registers, 4 blocks per SM).
// sm_80 under NVRTC 13.5 spilled 12 B at that cap (CI, 2026-11-30), so Ampere gets 6 blocks
// (42 registers); Hopper and later keep 8, which is what the H200 measured.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define MIN_BLOCKS 6
#else
#define MIN_BLOCKS 8
#endif

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

// A transpose moves bits: the kernels work on B = the element's bit pattern.
template <typename B>
__device__ __forceinline__ void vec_transpose(const B* __restrict__ in, B* __restrict__ out, unsigned rows,
                                              unsigned cols, unsigned long long ld) {
  constexpr unsigned V = 16 / sizeof(B);            // elements per 16-byte vector: 4 fp32, 8 bf16
  constexpr unsigned TR = TILE_ROWS, TC = TILE_COLS;
  constexpr unsigned IN_CPR = TC / V;               // 16-byte chunks per tile row: 16 fp32, 8 bf16
  constexpr unsigned OUT_CPR = TR / V;              // chunks per output row within the tile
  constexpr unsigned LOADS = TR * IN_CPR / BLOCK;   // chunks each thread loads: 4 fp32, 2 bf16
  constexpr unsigned STORES = TC * OUT_CPR / BLOCK; // chunks each thread stores
  constexpr unsigned GROUPS = OUT_CPR / 8;          // warp tasks per 4 output rows
  static_assert(IN_CPR >= 8 && (IN_CPR & (IN_CPR - 1)) == 0, "the 3-bit XOR must stay inside a tile row");
  static_assert(OUT_CPR % 8 == 0 && TC % 4 == 0 && V % 4 == 0, "a warp stores 8 chunks x 4 output rows");
  static_assert((TR * IN_CPR) % BLOCK == 0 && (TC * OUT_CPR) % BLOCK == 0 && BLOCK % 32 == 0,
                "the tile must split evenly over the block's threads");

  __shared__ uint4 tile[TR * IN_CPR];  // chunk (r, ch) lives at tile[r * IN_CPR + (ch ^ ((r / V) & 7))]
  const B* tile_e = reinterpret_cast<const B*>(tile);

  // Uniform across the grid, so the vector/element choice never splits a warp except at edges.
  const bool vin = ((reinterpret_cast<unsigned long long>(in) | (ld * sizeof(B))) & 15) == 0;
  const bool vout = ((reinterpret_cast<unsigned long long>(out) | ((unsigned long long)rows * sizeof(B))) & 15) == 0;
  const unsigned c0 = blockIdx.x * TC;
  const unsigned row_tiles = (rows + TR - 1) / TR;
  // The loop bound depends only on blockIdx: every thread reaches both barriers.
  for (unsigned tr = blockIdx.y; tr < row_tiles; tr += gridDim.y) {
    const unsigned r0 = tr * TR;

    // Interior tiles (all but the last row and column of tiles) take a path with no bounds
    // checks, so the loads and stores are straight-line code; `interior` is block-uniform.
    const bool interior = r0 + TR <= rows && c0 + TC <= cols;

    // Load phase: all LOADS vectors in flight before the first shared-memory store.
    uint4 v[LOADS];
    if (interior && vin) {
#pragma unroll
      for (unsigned s = 0; s < LOADS; ++s) {
        const unsigned idx = s * BLOCK + threadIdx.x;
        const unsigned r = idx / IN_CPR, ch = idx % IN_CPR;
        v[s] = __ldg(reinterpret_cast<const uint4*>(in + (r0 + r) * ld + c0 + ch * V));
      }
    } else {
#pragma unroll
      for (unsigned s = 0; s < LOADS; ++s) {
        const unsigned idx = s * BLOCK + threadIdx.x;
        const unsigned r = idx / IN_CPR, ch = idx % IN_CPR;
        const unsigned i = r0 + r, j = c0 + ch * V;  // m[i][j .. j + V - 1]
        v[s] = make_uint4(0u, 0u, 0u, 0u);  // chunks outside m are never stored to out
        if (i < rows && j < cols) {
          const B* src = in + i * ld + j;
          if (vin && j + V <= cols) {
            v[s] = __ldg(reinterpret_cast<const uint4*>(src));
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
    for (unsigned s = 0; s < LOADS; ++s) {
      const unsigned idx = s * BLOCK + threadIdx.x;
      const unsigned r = idx / IN_CPR, ch = idx % IN_CPR;
      tile[r * IN_CPR + (ch ^ ((r / V) & 7))] = v[s];
    }
    __syncthreads();

    // Store phase: warp task t writes output rows 4 (t / GROUPS) .. + 3 of the tile, chunks
    // 8 (t % GROUPS) .. + 7; lane L takes row + L / 8, chunk + L % 8.
#pragma unroll
    for (unsigned s = 0; s < STORES; ++s) {
      const unsigned idx = s * BLOCK + threadIdx.x;
      const unsigned task = idx / 32, lane = idx % 32;
      const unsigned oc = (task / GROUPS) * 4 + lane / 8;  // output row in the tile = column of m
      const unsigned q = (task % GROUPS) * 8 + lane % 8;   // output chunk = rows q V .. q V + V - 1 of m
      const unsigned phys = (oc / V) ^ (q & 7);            // ((q V + k) / V) & 7 == q & 7 for every k
      B e[V];
#pragma unroll
      for (unsigned k = 0; k < V; ++k) e[k] = tile_e[((q * V + k) * IN_CPR + phys) * V + oc % V];
      const unsigned j = c0 + oc, i = r0 + q * V;  // out[j][i .. i + V - 1]
      B* dst = out + j * (unsigned long long)rows + i;
      if (interior && vout) {
        *reinterpret_cast<uint4*>(dst) = pack<B>(e);
      } else if (j < cols && i < rows) {
        if (vout && i + V <= rows) {
          *reinterpret_cast<uint4*>(dst) = pack<B>(e);
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

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS) transpose_f32(const float* __restrict__ in,
                                                                  float* __restrict__ out, unsigned int rows,
                                                                  unsigned int cols, unsigned long long ld) {
  vec_transpose<unsigned>(reinterpret_cast<const unsigned*>(in), reinterpret_cast<unsigned*>(out), rows, cols, ld);
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS) transpose_bf16(const __nv_bfloat16* __restrict__ in,
                                                                   __nv_bfloat16* __restrict__ out,
                                                                   unsigned int rows, unsigned int cols,
                                                                   unsigned long long ld) {
  vec_transpose<unsigned short>(reinterpret_cast<const unsigned short*>(in),
                                reinterpret_cast<unsigned short*>(out), rows, cols, ld);
}
