// v7_ticket_tiles: v4's column-major 16-byte swizzled tiles on a persistent grid whose blocks take
// their next tile from a global counter (one atomicAdd a tile, taken one tile ahead by thread 0),
// so the tiles in flight are always the lowest ones not yet taken, in v4's order.
//
// What changed from v6 (register blocks for small shapes) and v5 (TMA): v7 builds on neither
//   (neither was adopted); it is v4 with one change.
// What changed from v4 (a grid of one block per tile, or a grid-stride loop past 65535 row tiles;
//   the tile code itself is shared: grouped_tiles.cuh, with where a block's next tile comes from
//   as a template parameter):
//   1. The grid is persistent: resident blocks (the occupancy API's blocks per SM x SMs: fp32
//      64 x 64 tiles 8 an SM, 1056 on an H200; bf16 128 x 128 4 an SM, 528), capped by the tile
//      count. The first tile of block b is tile b (the tiles a one-shot grid's first wave holds,
//      so no block waits for a round trip before its first loads); every later tile is a ticket:
//      t = gridDim.x + atomicAdd(&work[0], 1), in TileOrder's linear order (column-major by default:
//      GROUP, as in v4). A block stops at the first ticket >= the tile count.
//   2. One ahead: thread 0 takes the next tile's ticket once the current tile is in shared memory
//      (the atomicAdd is issued before the mid-tile barrier, so its round trip, an L2 atomic, runs
//      under that barrier and the tile's store phase), and writes it to next_tile, one word of
//      shared memory, after the store phase; the barrier v4 already has at the end of each tile
//      publishes it, and every thread reads it after that barrier (the loop bound stays uniform).
//      One word, not two alternating ones: the write comes after the mid-tile barrier and every
//      read of the previous value came before it (at the top of the loop), so they never meet.
//      (A double-buffered slot written as soon as the ticket returns, before the mid-tile
//      barrier, needs a slot index live across the loop: at fp32's 32-register cap it spilled 8-36
//      bytes on sm_90 / sm_100, and so did holding the ticket from the loads' issue to the end.)
//   3. The counters are left zero with no memset (graph-replay safe), below.
// Counters: work[0] tickets taken, work[1] blocks finished; two int32 per (device, stream) from
//   op.py's tile_tickets (ops/base.py StreamCounters: zeroed once, then kept zero by the kernel).
//   Each block's thread 0, after its loop: __threadfence(), then atomicAdd(&work[1], 1); the block
//   that gets gridDim.x - 1 stores 0 to both. Why no block can read work[0] after that reset: a
//   block's thread 0 leaves the loop only after reading (after a barrier) a ticket >= the tile
//   count that it took itself with its last atomicAdd on work[0], so that take has returned
//   before the block counts itself, and a block that has left the loop never takes another
//   (a block whose first tile is past the end takes none and still counts: the count is of
//   blocks, not of takes). The fence orders the block's takes before its count. The block that
//   sees gridDim.x - 1 therefore comes after every block's last take: no take of this launch is
//   outstanding or still to come, so work[0] is never read or added to after its reset. The next
//   launch on the stream starts after this grid completes and sees the zeros; another stream has
//   counters of its own. (A launch that dies with a sticky error leaves them dirty, but the
//   context dies with them.)
// Why: bytes first. 16384^2 fp32 moves 2 x 1 GiB = 2.147 GB: 500 us at the copy rate (4.29
//   TB/s); v4 takes 524.5 us (0.954x a copy), bf16 260.1 us (0.962x); tile shapes, group orders,
//   skew (v4's header), TMA (v5) and register blocks (v6) all stop at ~524 us. What is left is
//   how the work reaches the SMs. A 16-byte copy of 512 MiB (scripts/copy_patterns.py,
//   docs/runs/2026-12-01-h200-copy_patterns.json, NOTES session 8) ran 261.9 us as a one-shot grid
//   (v4's form at 16384^2: 65536 fp32 / 16384 bf16 blocks, one tile each), 268.6 us as a persistent
//   grid with a static order (chunks c, c + 264, ...: the blocks drift apart and the bytes in
//   flight spread over the whole buffer; v5 was persistent with a static order, 549.4 us), and
//   257.3 us (-1.8% against one-shot) as a persistent grid whose blocks take the next 32 KiB
//   chunk from a counter, one ahead (torch's copy_ 253.7). The counter keeps the bytes in flight
//   in one compact front in address order, as the one-shot grid does, without a block retiring
//   and a new one being placed between two pieces of work. A v7 tile is 16 KiB read + 16 KiB
//   written (fp32 64 x 64; bf16 128 x 128: 32 + 32 KiB), the copy experiment's piece was 32 KiB.
// Predicted: the copy's gain from one-shot to counter-persistent was 1.8%; on v4's 524.5 us that
//   is ~515 us. 16384^2 fp32 514-520 us (0.96-0.975x a copy), bf16 255-258 us (0.97-0.98x; v4
//   260.1). 4096^2: about v4's (fp32 3.9 tiles a block, bf16 1.9: little to balance). 256 x 512
//   (graph mode, one tile a block): slower than v4 by the ticket's and the finish count's round
//   trips (~1 us), not this variant's shape.
// Risks: (1) a transpose's write side (64 output rows x 256 B a tile) may be the limit rather
//   than the dispatch, and then v7 measures v4's 524 us; (2) fp32 takes 65536 tickets from one
//   address in ~515 us (one every ~8 ns; the copy took one every 16 ns, as bf16 does here): if
//   the L2 serialises atomics on one address slower than that, the takes become the critical
//   path (knob: bigger tiles);
//   (3) thread 0's warp stores the ticket to shared memory at the end of the store phase, so an
//   atomic slower than the mid-tile barrier plus the store phase delays the block's last barrier.
// Measured (H200, one process, docs/runs/2026-12-01-h200-sweep_membound_s9_tickets.json, each timed
//   twice, alternating with v4): slower, so v4 stays the op's best. 16384^2 fp32 533.3 / 533.7 us
//   against v4's 525.1 / 525.1 (-1.6%); bf16 263.8 / 264.7 against 261.1 / 261.3 (-1.1%). A one-shot
//   grid of tiles already goes out in address order (the block scheduler hands out blockIdx in order
//   as slots free up), so the counter adds an atomic and a round trip per tile and changes nothing
//   else: the copy's gain came from its persistent static order being bad, not from the one-shot
//   being. 256 x 512 in graph mode (-s9_small.json): bf16 2.97 us, fp32 2.46 (v4 2.57 / 2.07; the
//   two atomics per block and the last block's reset sit on a ~1.4 us kernel). Kept as the measured
//   negative result.
// Measured: BENCHMARKS.md, transpose rows (full runs).
//
// Knobs: v4's (#ifndef macros; defaults in grouped_tiles.cuh): TILE_ROWS, TILE_COLS, BLOCK,
// TILE_ROWS_BF16, TILE_COLS_BF16, GROUP, MIN_BLOCKS, LD_HINT, ST_HINT.
//
// @block 256
// @tile_rows 64
// @tile_cols 64
// @tile_rows_bf16 128
// @tile_cols_bf16 128
// @tiles tickets (a persistent grid; the kernels take `unsigned* work`: 2 counters, op.py passes them)
// @access_bytes 16 (loads of m and stores of out, where rows are 16-byte aligned)
#include <cuda_bf16.h>
#include "grouped_tiles.cuh"  // v4's knob defaults and tile transpose, with a Tiles policy

// The tile-index source for grouped_transpose (the calls: GridStrideTiles in grouped_tiles.cuh).
// `next_tile` is one word of shared memory; `work` the launch's two counters (zero at launch).
struct TicketTiles {
  unsigned* work;       // [0] tickets taken, [1] blocks finished
  unsigned* next_tile;  // the block's next tile, written by thread 0
  unsigned ahead;       // thread 0: the ticket taken in this tile (0 in the other threads)

  __device__ __forceinline__ unsigned first() const { return blockIdx.x; }  // a 1-D grid (op.py)
  __device__ __forceinline__ void take() {
    // Every thread assigns (thread 0 the ticket): the conditional form spilled 8 bytes of the bf16
    // kernel at sm_80's 80 registers under NVRTC 13.0.
    ahead = threadIdx.x == 0 ? atomicAdd(&work[0], 1u) : 0u;
  }
  __device__ __forceinline__ void publish() const {
    // Tickets number the tiles after the first wave (block b's first tile is b). The counter ends
    // at most at the tile count, so t < tiles + gridDim.x: no wrap below 2^32 - 2^16 tiles
    // (TileOrder already needs < 2^32).
    if (threadIdx.x == 0) *next_tile = gridDim.x + ahead;
  }
  __device__ __forceinline__ unsigned next(unsigned) const { return *next_tile; }  // after the barrier
  __device__ __forceinline__ void done() const {
    if (threadIdx.x == 0) {
      __threadfence();  // this block's takes (all returned: its last one ended its loop) before its count
      if (atomicAdd(&work[1], 1u) == gridDim.x - 1) {  // the last block: every take of the launch is done
        work[0] = 0;
        work[1] = 0;
      }
    }
  }
};

__device__ __forceinline__ TicketTiles ticket_tiles(unsigned* work) {
  __shared__ unsigned next_tile;  // one per kernel (static shared memory of the caller)
  return TicketTiles{work, &next_tile, 0u};
}

// The launcher reads these signatures from this file's text (not from its includes): they are
// written out here, not declared by a macro.
extern "C" __global__ void __launch_bounds__(BLOCK_F32, MIN_BLOCKS_F32) transpose_f32(
    const float* __restrict__ in, float* __restrict__ out, unsigned int rows, unsigned int cols, unsigned long long ld,
    unsigned int* work) {
  grouped_transpose<unsigned, TILE_ROWS, TILE_COLS, BLOCK_F32>(
      reinterpret_cast<const unsigned*>(in), reinterpret_cast<unsigned*>(out),
      rows, cols, ld, ticket_tiles(work));
}

extern "C" __global__ void __launch_bounds__(BLOCK_BF16, MIN_BLOCKS_BF16) transpose_bf16(
    const __nv_bfloat16* __restrict__ in, __nv_bfloat16* __restrict__ out, unsigned int rows, unsigned int cols,
    unsigned long long ld, unsigned int* work) {
  grouped_transpose<unsigned short, TILE_ROWS_BF16, TILE_COLS_BF16, BLOCK_BF16>(
      reinterpret_cast<const unsigned short*>(in), reinterpret_cast<unsigned short*>(out),
      rows, cols, ld, ticket_tiles(work));
}
