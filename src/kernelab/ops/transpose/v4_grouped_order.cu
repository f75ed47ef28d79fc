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
//   Session 19 (docs/runs/2026-12-02-h200-sweep_tr19.json and -tr19_first.txt, one process each; the
//   64 x 64 default 523.4-524.2 us, torch.compile 544.9-545.0): tiles long on one side all lose:
//   32 x 128 531.3 / 531.5, 32 x 256 536.2 / 537.2, 32 x 64 525.4 / 526.1, 64 x 32 541.1 / 541.5,
//   128 x 32 (40 registers; 32 spill) 544.6 / 545.0, 256 x 32 546.1 / 546.9. Short input rows
//   (TILE_COLS 32: 128 B of each input row a tile) cost 3-4%; short output rows (TILE_ROWS 32) 0.3-2.6%.
// Session 25, fp32 at 512 threads a block (two 16-byte vectors a thread where 256 threads carry four,
//   4 blocks an SM at 32 registers as before): sweep tr24 put it at 516.7 us against 523.5 (one sample), and
//   tr24b (docs/runs/2026-12-02-h200-sweep_tr24b.json, one process, alternating with the default three times)
//   at 517.3 / 517.0 / 517.3 against 523.7 / 523.5 / 524.2 (-1.2%; copy_ 505 us in session 24's runs). bf16
//   at 512 (128 x 128 tile, four vectors a thread, 2 blocks an SM: 32 registers spill) 262.3 / 262.8 / 262.7
//   against 261.1 / 260.0 / 260.0: +0.9%. Predicted: fp32 -1% (half the chain of loads a thread between a
//   tile's first load and its barrier), bf16 within 0.5%. So the block is per dtype: `@block_f32 512`
//   (BLOCK_F32; the shifted fp32 kernel follows it), bf16 256.
// Measured: BENCHMARKS.md, transpose rows (full runs).
// Banks: tiles of >= 32 x 32 whose rows hold >= 8 chunks (fp32 TILE_COLS >= 32, bf16 >= 64) are
//   conflict-free both ways, as in v3. Rows of 4 or 2 chunks (bf16 TILE_COLS 32, 16) keep 2 or 1
//   XOR bits; the STS.128 phases still cover 128 contiguous bytes, and the gather stays
//   conflict-free for bf16 32 x 32 (16 words in 16 banks) but not for bf16 64 x 32 or 16 x 32
//   (2-way) or narrower tiles (tests/cpu/test_transpose_v4.py replays the addresses).
// Alignment and edges: as v3 (vectors where rows are 16-byte aligned, element accesses for the
//   chunks cut by an edge; interior tiles skip the bounds checks). A matrix with a row of m or of out
//   off a 16-byte boundary runs transpose_shifted_* (session 22, below).
// Session 22, rows at any 16-byte phase (odd widths, offset views, column slices): sweep odd22
//   (docs/runs/2026-12-02-h200-sweep_odd22.json) ran 16383^2 fp32 in 1159.9 us against 523.5 us at
//   16384^2 and torch.compile's 864.8 (0.75x): such rows took the element-by-element path on both
//   sides, 4-byte accesses 16 bytes apart across a warp. What changed: op.py launches the kernels
//   transpose_shifted_* (`@shifted 1`; shifted_tiles.cuh has the how) for those matrices: raw 16-byte
//   chunks of each row copied by cp.async into the same swizzled slots plus one extra chunk a row, the
//   gather reading each element at its row's phase, and each tile writing in out row j the aligned window
//   r0 - s_j .. (s_j that row's phase; the tile holds V rows above r0), so every store is a whole 16-byte
//   vector. Bytes: the aligned kernel's, plus (TR + V) / TR x 17 / 16 load requests (the extra rows and
//   chunks: L2 hits). Predicted: 16383^2 fp32 525-560 us (0.90-0.96x a copy, >= 1.5x torch.compile),
//   bf16 in proportion; aligned matrices unchanged (the aligned kernels are not touched).
// Measured (sweep shift22, docs/runs/2026-12-02-h200-sweep_shift22b.json at 5cca6c1 and -shift22c.json at
//   6341c68, us, each twice in one process; torch.compile beside them):
//   | shape                          | shifted         | element path (@shifted 0) | torch.compile |
//   | 16383^2 fp32                   | 597.0 / 599.5   | 1159.6 / 1158.5           | 869.7 / 868.5 |
//   | 16383 x 16384 fp32 (out only)  | 578.5 / 574.9   | 1183.9 / 1184.3           | 813.3 / 809.6 |
//   | 16384 x 16383 fp32 (m only)    | 558.0 / 557.8   | 545.5 / 545.8             | 557.4 / 556.4 |
//   | 16383^2 bf16 (no rotation)     | 297.8 / 298.1   | 1230.1 / 1231.3           | 455.7 / 452.4 |
//   | 16384^2 fp32 (aligned kernels) | 523.9 / 523.7   | 524.0 / 523.9             | 540.9 / 541.1 |
//   1.45x (fp32) and 1.52x (bf16) torch.compile at 16383^2, 0.85x a copy: short of the 0.90-0.96 predicted.
//   Only m misaligned, the element path's 4-byte loads (with 16-byte stores) are 2% ahead of the shifted
//   kernel; not special-cased. The first form (warp-shuffled stores, V scalar stores a lane group) ran
//   16383^2 fp32 913 us and bf16 750 (-sweep_shift22.json): shifted_tiles.cuh says why it was replaced.
//
// Knobs (#ifndef macros; defaults in grouped_tiles.cuh, which holds this kernel's code since v7
// shares it): TILE_ROWS, TILE_COLS, BLOCK (from the header; powers of two), BLOCK_F32 / BLOCK_BF16 (the
// header's `@block_f32` / `@block_bf16`; default BLOCK), TILE_ROWS_BF16,
// TILE_COLS_BF16 (default: TILE_ROWS, TILE_COLS; tile bytes <= 48 KiB), GROUP (row tiles per
// group, default 2^20 = column-major; 1 = v3's order), MIN_BLOCKS (resident blocks the register
// budget is set for), LD_HINT (0 ld.global.nc, 1 ld.global.nc.L1::no_allocate), ST_HINT (0
// st.global, 1 st.global.cs: evict-first).
//
// @block 256
// @block_f32 512
// @tile_rows 64
// @tile_cols 64
// @tile_rows_bf16 128
// @tile_cols_bf16 128
// @access_bytes 16 (loads of m and stores of out, where rows are 16-byte aligned)
// @shifted 1 (transpose_shifted_* for matrices with a misaligned row of m or out)
#include <cuda_bf16.h>
#include "grouped_tiles.cuh"  // the knob defaults, the tile transpose (shared with v7_ticket_tiles)
#include "shifted_tiles.cuh"  // shifted_transpose: the same tiles for rows at any 16-byte phase

extern "C" __global__ void __launch_bounds__(BLOCK_F32, MIN_BLOCKS_F32) transpose_f32(
    const float* __restrict__ in, float* __restrict__ out, unsigned int rows, unsigned int cols, unsigned long long ld) {
  grouped_transpose<unsigned, TILE_ROWS, TILE_COLS, BLOCK_F32>(
      reinterpret_cast<const unsigned*>(in), reinterpret_cast<unsigned*>(out),
      rows, cols, ld, GridStrideTiles{});
}

extern "C" __global__ void __launch_bounds__(BLOCK_BF16, MIN_BLOCKS_BF16) transpose_bf16(
    const __nv_bfloat16* __restrict__ in, __nv_bfloat16* __restrict__ out, unsigned int rows, unsigned int cols,
    unsigned long long ld) {
  grouped_transpose<unsigned short, TILE_ROWS_BF16, TILE_COLS_BF16, BLOCK_BF16>(
      reinterpret_cast<const unsigned short*>(in), reinterpret_cast<unsigned short*>(out),
      rows, cols, ld, GridStrideTiles{});
}

// Rows of m or of out off a 16-byte boundary (op.py picks these when `@shifted 1`): shifted_tiles.cuh.
// Kernels of their own so the aligned ones above keep their code and registers as measured. Their loads
// hold no registers (cp.async), so their budget is not the aligned kernels' vectors-a-thread rule: the
// same blocks an SM, but at least 40 registers for bf16 (its 8-element gathers spilled 8-16 bytes at
// 32, the 64 x 64 bf16 tile's budget).
#define MIN_BLOCKS_SHIFTED_BF16 (MIN_BLOCKS_BF16 > 6 ? 6 : MIN_BLOCKS_BF16)

extern "C" __global__ void __launch_bounds__(BLOCK_F32, MIN_BLOCKS_F32) transpose_shifted_f32(
    const float* __restrict__ in, float* __restrict__ out, unsigned int rows, unsigned int cols, unsigned long long ld) {
  shifted_transpose<unsigned, TILE_ROWS, TILE_COLS, BLOCK_F32>(
      reinterpret_cast<const unsigned*>(in), reinterpret_cast<unsigned*>(out),
      rows, cols, ld);
}

extern "C" __global__ void __launch_bounds__(BLOCK_BF16, MIN_BLOCKS_SHIFTED_BF16) transpose_shifted_bf16(
    const __nv_bfloat16* __restrict__ in, __nv_bfloat16* __restrict__ out, unsigned int rows, unsigned int cols,
    unsigned long long ld) {
  shifted_transpose<unsigned short, TILE_ROWS_BF16, TILE_COLS_BF16, BLOCK_BF16>(
      reinterpret_cast<const unsigned short*>(in), reinterpret_cast<unsigned short*>(out),
      rows, cols, ld);
}
