// v1_smem_tiled: stage a 32 x 32 tile in shared memory so both the reads and the writes
// run along rows; the tile has no padding, so the transposed read from it conflicts.
//
// What changed from v0: a block loads a 32 x 32 tile of m row by row (coalesced), waits at a
//   barrier, then writes the tile's columns as rows of out (coalesced: a warp writes 32
//   consecutive elements of one output row). 256 threads, 4 elements each way per thread.
// Why: v0 sent 32 scattered writes per warp; now every global access of a warp is one
//   128-byte line (64 B in bf16), as in a copy.
// The cost it exposes: the write phase reads tile[tx][k] for tx = 0..31, a column. A tile row
//   is 32 x 4 = 128 bytes, exactly one pass over the 32 banks, so all 32 lanes hit the same
//   bank: a 32-way conflict, 32 shared-memory wavefronts per warp read instead of 1. In bf16
//   a row is 64 bytes, so lanes fall in 2 banks: 16-way.
// Predicted: faster than v0 but held back by the conflicts: per SM, 32 cycles of the shared
//   memory pipe per 128 B written, ~4 B/clk x 132 SMs x ~1.8 GHz ~ 0.95 TB/s of writes, so
//   ~1.5-2 TB/s counting reads + writes at 16384^2 fp32; bf16 similar in TB/s (half the
//   bytes per lane, half the conflict degree).
// Measured: BENCHMARKS.md, transpose rows.
//
// @block 256
// @tile_rows 32
// @tile_cols 32
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef TILE_ROWS
#define TILE_ROWS 32
#endif
#ifndef TILE_COLS
#define TILE_COLS 32
#endif
#define PAD 0  // v2 changes this one number

template <typename T>
__device__ __forceinline__ void tiled_transpose(const T* __restrict__ in, T* __restrict__ out, unsigned rows,
                                                unsigned cols, unsigned long long ld) {
  constexpr unsigned TILE = TILE_COLS;
  static_assert(TILE_ROWS == TILE_COLS && BLOCK % TILE == 0, "square tiles, whole rows of threads");
  constexpr unsigned STEP = BLOCK / TILE;  // rows of threads: each thread handles TILE / STEP elements
  __shared__ T tile[TILE][TILE + PAD];
  const unsigned tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
  const unsigned c0 = blockIdx.x * TILE;  // this block's columns of m: c0 .. c0 + TILE - 1
  const unsigned row_tiles = (rows + TILE - 1) / TILE;
  // The loop bound depends only on blockIdx, so every thread runs the same iterations and
  // reaches both barriers.
  for (unsigned tr = blockIdx.y; tr < row_tiles; tr += gridDim.y) {
    const unsigned r0 = tr * TILE;
#pragma unroll
    for (unsigned s = 0; s < TILE / STEP; ++s) {  // read rows of m: lanes along a row
      const unsigned k = ty + s * STEP, i = r0 + k, j = c0 + tx;
      if (i < rows && j < cols) tile[k][tx] = in[i * ld + j];
    }
    __syncthreads();
#pragma unroll
    for (unsigned s = 0; s < TILE / STEP; ++s) {  // write rows of out: lanes down a tile column
      const unsigned k = ty + s * STEP, j = c0 + k, i = r0 + tx;  // out[j][i] = m[i][j] = tile[tx][k]
      if (j < cols && i < rows) out[j * (unsigned long long)rows + i] = tile[tx][k];
    }
    __syncthreads();  // the next tile overwrites `tile`
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK) transpose_f32(const float* __restrict__ in,
                                                                  float* __restrict__ out, unsigned int rows,
                                                                  unsigned int cols, unsigned long long ld) {
  tiled_transpose<float>(in, out, rows, cols, ld);
}

extern "C" __global__ void __launch_bounds__(BLOCK) transpose_bf16(const __nv_bfloat16* __restrict__ in,
                                                                   __nv_bfloat16* __restrict__ out,
                                                                   unsigned int rows, unsigned int cols,
                                                                   unsigned long long ld) {
  tiled_transpose<__nv_bfloat16>(in, out, rows, cols, ld);
}
