// v6_register_blocks: no shared memory and no barrier: each thread transposes a V x V block
// (V = 4 fp32, 8 bf16) in its registers, from V 16-byte loads of m's rows to V 16-byte stores of
// out's rows. The small-tensor transpose.
//
// What changed from v5 (and v2-v4, which all stage a tile in shared memory between a load phase
//   and a store phase): the tile exchange goes through registers. Thread t of a block holds the
//   V x V block (row block rb, column block cb) with cb = (t / 2) mod CB and rb = 2 ((t / 2) / CB)
//   + t mod 2 (CB = TILE_COLS / V column blocks a tile): a warp's load instruction reads 16
//   column blocks of two rows, 2 x 256 B contiguous; the store of lanes 2j and 2j + 1 (row blocks
//   rb, rb + 1) lands in the same output row side by side, 32 contiguous bytes (a whole sector).
//   fp32 needs no instruction for the transpose (a 4 x 4 block of 32-bit words is renamed); bf16
//   builds each output word from two input rows with one PRMT (__byte_perm, selectors 0x5410 /
//   0x7632): 32 PRMT per thread. Rows or blocks that are cut by the edge or not 16-byte aligned
//   go element by element.
// Why: at 256 x 512 (graph mode, L2-resident, 256 KiB bf16) a launch is latency: v2 spends
//   1.42-1.44 us against torch.compile's 1.29-1.31 (session 6: 1.10-1.11x; the issue's small-shape
//   target is 1.1x), and its thread does load -> STS -> barrier -> LDS -> store: one L2 round
//   trip, a barrier and the shared-memory round trip in series. Here a thread's V loads are in
//   flight together, then V stores: one round trip, no barrier.
// Predicted: 256 x 512 bf16 in graph mode ~1.25-1.35 us (v2 1.43), fp32 ~1.3-1.4 (v2 1.48;
//   torch.compile 1.38). At 16384^2 it loses to v4 (no coalescing help from a tile: a store
//   instruction covers 16 output rows x 32 B), ~0.6-0.8x a copy; it is not meant for them.
// Measured (H200, graph mode: docs/runs/2026-11-30-h200-sweep_membound_s6_small2.json): slower
//   than v2 in bf16, not adopted. 256 x 512 bf16: defaults (16 blocks) 1.8 us, 64-thread blocks
//   (32 x 128 / 64 x 64 tiles) 1.6, 256 threads 2.3; v2 1.42, torch.compile 1.30. fp32: 32 x 32
//   tiles with 64 threads 1.5 = v2 (1.48), defaults 1.5, torch.compile 1.38. The barrier and the
//   shared-memory round trip were not what v2 spends: fewer blocks with more bytes each (16-64
//   blocks here, v2's 128) cost more than they save, and bf16's 8 PRMT-built stores a thread add
//   to the chain.
// Measured: BENCHMARKS.md, transpose rows (full runs).
//
// @block 128
// @tile_rows 32
// @tile_cols 64
// @tile_rows_bf16 64
// @tile_cols_bf16 128
// @access_bytes 16 (loads of m and stores of out, where rows are 16-byte aligned)
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 128
#endif
#ifndef TILE_ROWS
#define TILE_ROWS 32
#endif
#ifndef TILE_COLS
#define TILE_COLS 64
#endif
#ifndef TILE_ROWS_BF16
#define TILE_ROWS_BF16 64
#endif
#ifndef TILE_COLS_BF16
#define TILE_COLS_BF16 128
#endif

// A V x V block of 32-bit words (fp32) or 16-bit halves (bf16): out[c] = column c of in.
__device__ __forceinline__ void transpose_block(const uint4 (&in)[4], uint4 (&out)[4]) {
  out[0] = make_uint4(in[0].x, in[1].x, in[2].x, in[3].x);
  out[1] = make_uint4(in[0].y, in[1].y, in[2].y, in[3].y);
  out[2] = make_uint4(in[0].z, in[1].z, in[2].z, in[3].z);
  out[3] = make_uint4(in[0].w, in[1].w, in[2].w, in[3].w);
}
__device__ __forceinline__ unsigned word(const uint4& v, unsigned i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;  // i is a compile-time constant after unrolling
}
__device__ __forceinline__ void transpose_block(const uint4 (&in)[8], uint4 (&out)[8]) {
#pragma unroll
  for (unsigned c = 0; c < 8; ++c) {
    // Element c of row i is half c % 2 of word c / 2; output word w = (row 2w, row 2w + 1).
    const unsigned sel = (c & 1) ? 0x7632u : 0x5410u;
    unsigned w[4];
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) w[k] = __byte_perm(word(in[2 * k], c / 2), word(in[2 * k + 1], c / 2), sel);
    out[c] = make_uint4(w[0], w[1], w[2], w[3]);
  }
}

template <typename B, unsigned TR, unsigned TC>
__device__ __forceinline__ void register_transpose(const B* __restrict__ in, B* __restrict__ out, unsigned rows,
                                                   unsigned cols, unsigned long long ld) {
  constexpr unsigned V = 16 / sizeof(B);  // elements per 16-byte vector: 4 fp32, 8 bf16
  constexpr unsigned CB = TC / V, RB = TR / V;
  static_assert(TC % V == 0 && TR % (2 * V) == 0, "tiles are whole V x V blocks, an even number of them down");
  static_assert(CB * RB == BLOCK, "one V x V block per thread: (TILE_COLS / V) x (TILE_ROWS / V) == BLOCK");
  const unsigned t = threadIdx.x;
  const unsigned cb = (t >> 1) % CB, rb = 2 * ((t >> 1) / CB) + (t & 1);
  // Uniform across the grid: 16-byte rows on each side (ptr and row stride).
  const bool vin = ((reinterpret_cast<unsigned long long>(in) | (ld * sizeof(B))) & 15) == 0;
  const bool vout = ((reinterpret_cast<unsigned long long>(out) | ((unsigned long long)rows * sizeof(B))) & 15) == 0;
  const unsigned j0 = blockIdx.x * TC + cb * V;  // m's first column of the block = out's first row
  if (j0 >= cols) return;  // no barrier anywhere: a thread may leave early
  const unsigned row_tiles = (rows + TR - 1) / TR;
  for (unsigned tr = blockIdx.y; tr < row_tiles; tr += gridDim.y) {
    const unsigned i0 = tr * TR + rb * V;  // m's first row of the block = out's first column
    if (i0 >= rows) continue;
    if (vin && vout && i0 + V <= rows && j0 + V <= cols) {
      uint4 r[V], o[V];
#pragma unroll
      for (unsigned k = 0; k < V; ++k) r[k] = __ldg(reinterpret_cast<const uint4*>(in + (i0 + k) * ld + j0));
      transpose_block(r, o);
#pragma unroll
      for (unsigned c = 0; c < V; ++c)
        *reinterpret_cast<uint4*>(out + (unsigned long long)(j0 + c) * rows + i0) = o[c];
    } else {
      for (unsigned k = 0; k < V && i0 + k < rows; ++k)
        for (unsigned c = 0; c < V && j0 + c < cols; ++c)
          out[(unsigned long long)(j0 + c) * rows + i0 + k] = in[(i0 + k) * ld + j0 + c];
    }
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK) transpose_f32(const float* __restrict__ in, float* __restrict__ out,
                                                                  unsigned int rows, unsigned int cols,
                                                                  unsigned long long ld) {
  register_transpose<unsigned, TILE_ROWS, TILE_COLS>(reinterpret_cast<const unsigned*>(in),
                                                     reinterpret_cast<unsigned*>(out), rows, cols, ld);
}

extern "C" __global__ void __launch_bounds__(BLOCK) transpose_bf16(const __nv_bfloat16* __restrict__ in,
                                                                   __nv_bfloat16* __restrict__ out,
                                                                   unsigned int rows, unsigned int cols,
                                                                   unsigned long long ld) {
  register_transpose<unsigned short, TILE_ROWS_BF16, TILE_COLS_BF16>(
      reinterpret_cast<const unsigned short*>(in), reinterpret_cast<unsigned short*>(out), rows, cols, ld);
}
