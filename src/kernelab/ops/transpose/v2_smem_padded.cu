// v2_smem_padded: v1 with the shared-memory tile padded by one column (32 x 33).
//
// What changed from v1: `tile[32][33]` instead of `tile[32][32]`; nothing else.
// Why: with 33 words per row, tile[tx][k] for tx = 0..31 sits at word 33 tx + k, i.e. bank
//   (tx + k) mod 32: 32 lanes, 32 banks, no conflict. In bf16 a row is 66 bytes: lane tx reads
//   word floor((66 tx + 2 k) / 4), banks 0, 16, 1, 17, ... for tx = 0, 1, 2, 3, ...: 32 distinct
//   banks again. The row writes of the load phase stay conflict-free (consecutive words). The
//   tile grows by 128 bytes (64 in bf16).
// Predicted: the conflict cost of v1 (32 wavefronts per warp read) drops to 1, so the kernel
//   becomes bound by global memory: ~3.5-3.8 TB/s at 16384^2 fp32 (~0.85-0.9x a copy: 4-byte
//   accesses, 8 per thread, and one barrier round trip per 4 KB tile); bf16 lower, ~2.5-3 TB/s
//   (2-byte accesses, 64-byte rows per warp access).
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
#define PAD 1  // the one change from v1

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
