// v0_naive: one element per thread; reads along rows of m, writes down columns of out.
//
// What changed: nothing; this is the baseline. A block of 256 threads covers 8 rows x 32
//   columns of m; thread (ty, tx) copies m[i][j] to out[j][i] with i = row, j = column.
// Why it is slow: a warp's 32 reads hit one contiguous 128-byte line (64 B in bf16), but
//   its 32 writes land in 32 different rows of out, R elements apart: 32 separate sectors,
//   each receiving 4 bytes of 32 (2 in bf16). L2 merges the 8 (16) writes that fill one
//   sector, since the block's 8 rows write neighbouring elements, but the SM-to-L2 path
//   carries 8x (16x) more write transactions than a copy, and a sector that is evicted
//   before it fills costs a read-modify-write in DRAM.
// Predicted: about torch's strided copy, ~1.0-1.2 TB/s at 16384^2 fp32 (ANCHORS: copy_(m.t())
//   1.16 TB/s, whose writes are equally scattered); bf16 lower, ~0.6-0.8 TB/s (16 writes
//   per sector).
// Measured: BENCHMARKS.md, transpose rows (generated from results JSON).
//
// @block 256
// @tile_rows 8
// @tile_cols 32
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef TILE_ROWS
#define TILE_ROWS 8
#endif
#ifndef TILE_COLS
#define TILE_COLS 32
#endif

template <typename T>
__device__ __forceinline__ void naive_transpose(const T* __restrict__ in, T* __restrict__ out, unsigned rows,
                                                unsigned cols, unsigned long long ld) {
  static_assert(BLOCK == TILE_ROWS * TILE_COLS, "one thread per element of the block's tile");
  const unsigned tx = threadIdx.x % TILE_COLS, ty = threadIdx.x / TILE_COLS;
  const unsigned j = blockIdx.x * TILE_COLS + tx;  // column of m = row of out
  if (j >= cols) return;  // no barrier in this kernel
  // gridDim.y is capped at 65535: loop over the row tiles beyond it.
  for (unsigned long long i = blockIdx.y * (unsigned long long)TILE_ROWS + ty; i < rows;
       i += (unsigned long long)gridDim.y * TILE_ROWS)
    out[j * (unsigned long long)rows + i] = in[i * ld + j];
}

extern "C" __global__ void __launch_bounds__(BLOCK) transpose_f32(const float* __restrict__ in,
                                                                  float* __restrict__ out, unsigned int rows,
                                                                  unsigned int cols, unsigned long long ld) {
  naive_transpose<float>(in, out, rows, cols, ld);
}

extern "C" __global__ void __launch_bounds__(BLOCK) transpose_bf16(const __nv_bfloat16* __restrict__ in,
                                                                   __nv_bfloat16* __restrict__ out,
                                                                   unsigned int rows, unsigned int cols,
                                                                   unsigned long long ld) {
  naive_transpose<__nv_bfloat16>(in, out, rows, cols, ld);
}
