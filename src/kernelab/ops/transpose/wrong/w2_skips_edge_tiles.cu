// w2_skips_edge_tiles: v2_smem_padded where a block whose 32 x 32 tile sticks out of the matrix
// returns at once, the classic way of "handling" edges. Right when R and C are multiples of
// 32; otherwise the last row and column of tiles of out are never written (still NaN from
// the checker's poison).
// @expect unwritten
//
// @block 256
// @tile_rows 32
// @tile_cols 32
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 256
#endif
#define TILE 32

template <typename T>
__device__ __forceinline__ void tiled(const T* __restrict__ in, T* __restrict__ out, unsigned rows, unsigned cols,
                                      unsigned long long ld) {
  constexpr unsigned STEP = BLOCK / TILE;
  __shared__ T tile[TILE][TILE + 1];
  const unsigned tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
  const unsigned c0 = blockIdx.x * TILE;
  if (c0 + TILE > cols) return;  // BUG (deliberate): the partial column of tiles is dropped
  const unsigned row_tiles = (rows + TILE - 1) / TILE;
  for (unsigned tr = blockIdx.y; tr < row_tiles; tr += gridDim.y) {
    const unsigned r0 = tr * TILE;
    if (r0 + TILE > rows) return;  // BUG (deliberate): block-uniform, so no barrier is split
    for (unsigned s = 0; s < TILE / STEP; ++s) {
      const unsigned k = ty + s * STEP;
      tile[k][tx] = in[(r0 + k) * ld + c0 + tx];
    }
    __syncthreads();
    for (unsigned s = 0; s < TILE / STEP; ++s) {
      const unsigned k = ty + s * STEP;
      out[(c0 + k) * (unsigned long long)rows + r0 + tx] = tile[tx][k];
    }
    __syncthreads();
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK) transpose_f32(const float* __restrict__ in,
                                                                  float* __restrict__ out, unsigned int rows,
                                                                  unsigned int cols, unsigned long long ld) {
  tiled<float>(in, out, rows, cols, ld);
}

extern "C" __global__ void __launch_bounds__(BLOCK) transpose_bf16(const __nv_bfloat16* __restrict__ in,
                                                                   __nv_bfloat16* __restrict__ out,
                                                                   unsigned int rows, unsigned int cols,
                                                                   unsigned long long ld) {
  tiled<__nv_bfloat16>(in, out, rows, cols, ld);
}
