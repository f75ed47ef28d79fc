// w1_copy_not_transpose: writes out[i * C + j] = m[i][j], i.e. copies m into out's buffer row by
// row instead of transposing. Every element is written, and the result is right for 1 x 1,
// 1 x N and N x 1 (where a transpose is a copy), wrong for every other shape.
// @expect mismatch
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
__device__ __forceinline__ void copy_rows(const T* __restrict__ in, T* __restrict__ out, unsigned rows, unsigned cols,
                                          unsigned long long ld) {
  const unsigned tx = threadIdx.x % TILE_COLS, ty = threadIdx.x / TILE_COLS;
  const unsigned j = blockIdx.x * TILE_COLS + tx;
  if (j >= cols) return;
  for (unsigned long long i = blockIdx.y * (unsigned long long)TILE_ROWS + ty; i < rows;
       i += (unsigned long long)gridDim.y * TILE_ROWS)
    out[i * cols + j] = in[i * ld + j];  // BUG (deliberate): should be out[j * rows + i]
}

extern "C" __global__ void __launch_bounds__(BLOCK) transpose_f32(const float* __restrict__ in,
                                                                  float* __restrict__ out, unsigned int rows,
                                                                  unsigned int cols, unsigned long long ld) {
  copy_rows<float>(in, out, rows, cols, ld);
}

extern "C" __global__ void __launch_bounds__(BLOCK) transpose_bf16(const __nv_bfloat16* __restrict__ in,
                                                                   __nv_bfloat16* __restrict__ out,
                                                                   unsigned int rows, unsigned int cols,
                                                                   unsigned long long ld) {
  copy_rows<__nv_bfloat16>(in, out, rows, cols, ld);
}
