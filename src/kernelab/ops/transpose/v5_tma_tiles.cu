// v5_tma_tiles: v4's column-major tiles, moved by the tensor-memory accelerator (TMA): one thread
// loads each input tile with cp.async.bulk.tensor.2d into a ring of shared-memory stages and
// stores the transposed tile with cp.async.bulk.tensor.2d; the threads only transpose in shared
// memory. sm_90+.
//
// What changed from v4 (threads load 16-byte vectors into registers, store them swizzled into
//   shared memory, barrier, gather and store 16-byte vectors to out; one tile per loop turn):
//   1. Loads: thread 0 issues the tile's TMA loads (TILE_COLS / SLAB boxes of TILE_ROWS rows x
//      128 bytes; SLAB = 32 fp32 / 64 bf16 elements) into stage k % STAGES of a ring, counted on
//      that stage's mbarrier (arrive.expect_tx with the tile's bytes); the threads wait on its
//      phase parity (k / STAGES) & 1. STAGES - 1 tiles are in flight while one is transposed,
//      held by the copy engine, not in registers (v4: its 4-8 vectors per thread are in flight
//      only between the loop's barriers). The copy engine asks L2 for whole 128-byte lines.
//   2. Stores: the threads write the transposed tile into output buffer k % OUT_BUFS, each
//      thread fences its writes to the async proxy (fence.proxy.async.shared::cta), one barrier,
//      and thread 0 issues TILE_ROWS / SLAB TMA stores (boxes of TILE_COLS rows of out x 128
//      bytes), commits them as a bulk group, and refills the stage just read with tile
//      k + STAGES. Before that barrier thread 0 waits until the store that last used the next
//      tile's buffer has read it (cp.async.bulk.wait_group.read OUT_BUFS - 2): one barrier a
//      tile, OUT_BUFS - 1 stores in flight. (OUT_BUFS 1: a second barrier before the writes.)
//   3. Persistent blocks (PERSISTENT 1): grid = min(tiles, resident blocks), each block walks
//      tiles blockIdx.x, + gridDim.x, ... in v4's column-major order (row tile fastest: the
//      blocks in flight write neighbouring 256-byte pieces of the same output rows), GROUP the
//      same knob as in v4. PERSISTENT 0: one block per tile, one stage and one output buffer
//      (a third of the shared memory, so more blocks per SM hold loads in flight instead).
//   4. Edges are the TMA's: a box that crosses m's edge reads zeros there (the tensor map's
//      OOB fill NONE: zeros, and the mbarrier still counts the whole box), and the part of a
//      stored box outside out is not written (the tensor map's bounds clip it); boxes wholly
//      past the edge (the second slab of a 64-column tile of a 24-column m) are not issued. No
//      per-element checks in the kernel, and no scalar fallback: cases TMA cannot describe (a
//      base address not 16-byte aligned, a row stride not a multiple of 16 bytes, for m or for
//      out) are refused by op.supports() with the constraint named, and run on v0-v4.
// Shared-memory layout: TMA's 128-byte swizzle on both maps (chunk c of a 128-byte row r lands
//   at chunk c ^ (r % 8), in 1024-byte aligned slabs), not SWIZZLE_NONE: with no swizzle a box
//   lands dense (rows of 256 bytes for 64 fp32: 8 lanes that read 8 chunks of one input row
//   write one chunk of 8 output rows, 256 bytes apart, all in the same 4 banks), and TMA cannot
//   pad rows, so one of the two sides would conflict 8-way.
//   The swizzle caps a box's inner side at 128 bytes, hence slabs: a 64 x 64 fp32 tile is two
//   64-row x 32-column boxes on each side. The threads move P x P blocks (P = 4 fp32, 8 bf16:
//   one 16-byte chunk per row of the block): P 16-byte LDS of rows a P .. a P + P - 1 at chunk c,
//   a register transpose (fp32: none, a choice of components; bf16: 32 PRMT), P 16-byte STS to
//   output rows c P .. c P + P - 1 at chunk a. The 8 lanes of each STS.128/LDS.128 phase take
//   the blocks (a, c) = (8 A + (l + d) % 8, 8 C + l), l = 0..7, one diagonal d per phase:
//   distinct c % 8 and a % 8, so after the swizzle both sides hit 8 distinct 16-byte bank
//   groups: conflict-free (tests/cpu/test_transpose_tma.py replays the addresses).
// Why: bytes first. 16384^2 fp32 moves 2 x 1 GiB = 2.147 GB: 500 us at the copy rate (4.28
//   TB/s); v4 takes 523.8 us (0.957x), bf16 260.8 us (0.961x), and no tile shape, block size,
//   order or evict hint moved it (v4's header). What is left that differs from a copy is how
//   the requests reach DRAM: v4's are 16-byte vectors from 256 threads, in flight only between
//   two barriers (a block issues a tile's loads only after its previous tile's stores, so each
//   block alternates read and write bursts and its 8 neighbours on the SM overlap them only by
//   chance), through the LSU and L1. Here the loads of the next STAGES - 1 tiles are always in
//   flight (fp32: 2 blocks x 2 x 16 KiB = 64 KiB an SM, twice Little's ~33 KB), reads and writes
//   overlap continuously as in a copy, and the copy engine generates both streams in whole
//   128-byte lines. Shared memory traffic: each byte is
//   written by TMA, read and written by the threads, read by TMA: 4 x ~18 B/clk an SM at the
//   copy rate = ~72 of its 128 B/clk, conflict-free.
// Predicted: 16384^2 fp32 505-520 us (0.96-0.99x a copy, v4 523.8), bf16 (128 x 128 tiles, one
//   block an SM) 253-262 us (v4 260.8): the target 0.97x needs the overlap to pay 1.5%. 4096^2
//   (64 MiB each way, 15.5 tiles a block for fp32, 7.75 for bf16): fp32 34-37 us (v4 35.4), bf16
//   17.5-19.5 us (v3 17.5; the last of 8 turns runs on 3/4 of the blocks). 256 x 512 (graph mode,
//   32 fp32 tiles / 8 bf16 tiles of 128 x 128 on as many blocks): one load + transpose + store in
//   series per block, latency-bound: ~2-3 us, slower than v2's 1.5 (not this variant's shape).
// Risks: (1) thread 0's wait for the previous store's smem read (OUT_BUFS 2) stalls the barrier
//   every tile: OUT_BUFS 3 is the default for that reason, and 2 is a knob to measure; (2) bf16
//   128 x 128 with STAGES 3 + OUT_BUFS 3 is 192 KiB: one block an SM, so nothing hides its
//   barrier (knobs: 64 x 128 / 128 x 64 tiles, STAGES 2); (3) if the TMA unit's per-SM rate for
//   128-byte-wide boxes is the cap (2 boxes of 8 KiB per 16 KiB fp32 tile each way), wider tiles
//   will not help and TMA loses to v4; (4) 256 x 512 and other small shapes lose to v2/v4 (latency).
// Knobs (header values -> macros through op.py; a sweep overrides them as meta): TILE_ROWS x
//   TILE_COLS (fp32; multiples of 32, at most 256), TILE_ROWS_BF16 x TILE_COLS_BF16 (multiples of
//   64, at most 256), BLOCK (threads: a multiple of 32), STAGES (input ring, 1-8; STAGES_BF16 for
//   the bf16 kernel where `@stages_bf16` is set), OUT_BUFS (output buffers, 1-4), PERSISTENT (1:
//   persistent grid; 0: a block per tile, one stage and one buffer), GROUP (v4's tile order:
//   2^20 column-major, 1 row-major), MIN_BLOCKS (register budget; default: 64 registers a thread).
//   Shared memory per block: (STAGES + OUT_BUFS) x tile bytes + 1 KiB (1024-byte alignment):
//   fp32 64 x 64: 6 x 16 KiB + 1 KiB = 97 KiB, 2 blocks an SM; bf16 128 x 128: 6 x 32 + 1 = 193 KiB.
// Measured (H200, one process: docs/runs/2026-11-30-h200-sweep_membound_s6_transpose.json, -s6_small
//   .json; copy 4.28 TB/s): no gain over v4, not adopted. 16384^2 fp32 549.4 us persistent (v4 524.5,
//   torch.compile 541.7); out_bufs 2 547.1, stages 2 545.5, stages 4 545.5-548.0, 128 / 512 threads
//   546.3 / 548.6, tiles 64 x 128 552.3, 128 x 64 545.8, 32 x 64 558.0, GROUP 1 567.1; one tile a
//   block (no ring: `@persistent 0`) 524.4 = v4's 524.5. bf16 273.0 persistent, one tile a block
//   262.4 (v4 260.2), 64 x 64 tiles 295.0. 4096^2 fp32 34.8 (v4 34.0, torch.compile 33.1). 256 x 512
//   in graph mode 2.2-2.6 us (v2 1.4-1.5). What it shows: a TMA tile pipeline reaches exactly v4's
//   rate at one tile a block and loses 4-5% as a persistent ring, so the SM side (issue slots,
//   bytes in flight, bank conflicts) is not what holds transposes at 0.96x a copy; both hit the
//   same wall, the DRAM side of a transpose's access pattern.
// Measured: BENCHMARKS.md, transpose rows (full runs).
//
// @arch sm_90
// @tma 128
// @block 256
// @tile_rows 64
// @tile_cols 64
// @tile_rows_bf16 128
// @tile_cols_bf16 128
// @stages 3
// @out_bufs 3
// @persistent 1
#include <cuda_bf16.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "v5_tma_tiles needs sm_90 (cp.async.bulk.tensor, mbarrier transaction counts)"
#endif

typedef unsigned int u32;
typedef unsigned long long u64;

// cuda.h's CUtensorMap (128 opaque bytes, 64-byte aligned); NVRTC has no cuda.h.
struct alignas(64) CUtensorMap {
  u64 opaque[16];
};

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef TILE_ROWS
#define TILE_ROWS 64
#endif
#ifndef TILE_COLS
#define TILE_COLS 64
#endif
#ifndef TILE_ROWS_BF16
#define TILE_ROWS_BF16 128
#endif
#ifndef TILE_COLS_BF16
#define TILE_COLS_BF16 128
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef STAGES_BF16
#define STAGES_BF16 STAGES
#endif
#ifndef OUT_BUFS
#define OUT_BUFS 3
#endif
#ifndef PERSISTENT
#define PERSISTENT 1
#endif
#ifndef GROUP
#define GROUP 1048576  // column-major, v4's default
#endif
// Register budget: 64 registers a thread (the bf16 8 x 8 block holds 8 vectors in, 1 out).
#ifndef MIN_BLOCKS
#define MIN_BLOCKS (65536 / (BLOCK * 64) > 0 ? 65536 / (BLOCK * 64) : 1)
#endif

// One block per tile (PERSISTENT 0) keeps one stage and one output buffer: the ring would hold
// loads of tiles the block never visits. op.py sizes the dynamic shared memory the same way.
#if PERSISTENT
#define RING_F32 STAGES
#define RING_BF16 STAGES_BF16
#define OUTS OUT_BUFS
#else
#define RING_F32 1
#define RING_BF16 1
#define OUTS 1
#endif

static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024, "BLOCK: whole warps, at most 1024 threads");
static_assert(STAGES >= 1 && STAGES <= 8 && STAGES_BF16 >= 1 && STAGES_BF16 <= 8, "STAGES: 1..8");
static_assert(OUT_BUFS >= 1 && OUT_BUFS <= 4, "OUT_BUFS: 1..4");

// ---- shared memory, mbarriers, TMA ------------------------------------------------------
__device__ __forceinline__ u32 smem_addr(const void* p) { return static_cast<u32>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void mbar_init(u32 bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
// Arrive once and add `bytes` to the transactions this phase waits for.
__device__ __forceinline__ void mbar_arrive_expect_tx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(u32 bar, u32 parity) {
  u32 done;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}
// Wait until the phase with parity `parity` has completed (acquire: the TMA's writes are visible).
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity) {
  while (!mbar_try_wait(bar, parity)) {
  }
}
// Box at (x = column, y = row) of `map` into shared memory at `dst`; completes on `bar`.
__device__ __forceinline__ void tma_load_2d(u32 dst, const CUtensorMap* map, u32 bar, int x, int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          dst),
      "l"(reinterpret_cast<u64>(map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}
// Shared memory at `src` to the box at (x = column, y = row) of `map`; tracked by this thread's
// bulk async-groups. Elements of the box outside the map's bounds are not written.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, u32 src, int x, int y) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                   reinterpret_cast<u64>(map)),
               "r"(x), "r"(y), "r"(src)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Wait until at most N of this thread's bulk groups still read shared memory.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
// The threads' generic-proxy writes to shared memory, made visible to the TMA store (async proxy).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<u64>(map)) : "memory");
}
__device__ __forceinline__ uint4 lds128(u32 addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr)
               : "memory");
  return v;
}
__device__ __forceinline__ void sts128(u32 addr, uint4 v) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ u32 dynamic_smem_size() {
  u32 r;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
  return r;
}

__device__ __forceinline__ u32 word(const uint4& v, u32 w) { return w == 0 ? v.x : w == 1 ? v.y : w == 2 ? v.z : v.w; }

// ---- tile order: v4's TileOrder (tile_order.cuh) ----------------------------------------------
#include "tile_order.cuh"

// ---- one P x P block of the tile, shared memory to shared memory ----------------------------
// Input stage: TC / SLAB slabs of TR rows x 128 bytes (slab q holds columns q SLAB .. + SLAB - 1 of
// the tile), 16-byte chunk c of row r at chunk c ^ (r % 8). Output buffer: TR / SLAB slabs of TC rows
// (= columns of m) x 128 bytes (slab q holds rows q SLAB .. + SLAB - 1 of m), the same swizzle.
// Block index b -> (a, c): rows a P .. a P + P - 1 of the tile, chunk c (columns c P .. c P + P - 1).
template <u32 E, u32 TR, u32 TC>
__device__ __forceinline__ void transpose_block(u32 in_base, u32 out_base, u32 b) {
  constexpr u32 P = 16 / E;              // elements per 16-byte chunk = rows per block
  constexpr u32 C_SLABS = TC / (8 * P);  // input slabs; 8 chunks (128 bytes) a slab row
  const u32 l = b & 7, d = (b >> 3) & 7, g = b >> 6;
  const u32 a = (g / C_SLABS) * 8 + ((l + d) & 7);  // a / 8 = the output slab
  const u32 c = (g % C_SLABS) * 8 + l;              // c / 8 = the input slab
  // Row k of the block: rows r0 + k (r0 = a P) and j0 + k (j0 = c P) carry no bits into r0 % 8, so
  // its swizzled chunk is chunk0 ^ k, and its address is (row 0's address ^ (k << 4)) + k x 128. The
  // stage base goes in before the XOR: the compiler then computes the 2P addresses per tile (2P LOP3)
  // instead of keeping 2P loop-invariant offsets live across the tile loop (spills at 64 registers).
  const u32 in0 = in_base + (c >> 3) * (TR * 128) + a * P * 128 + (((c & 7) ^ ((a * P) & 7)) << 4);
  const u32 out0 = out_base + (a >> 3) * (TC * 128) + c * P * 128 + (((a & 7) ^ ((c * P) & 7)) << 4);
  uint4 v[P];
#pragma unroll
  for (u32 k = 0; k < P; ++k) v[k] = lds128((in0 ^ (k << 4)) + k * 128);
#pragma unroll
  for (u32 k = 0; k < P; ++k) {
    const u32 dst = (out0 ^ (k << 4)) + k * 128;  // output row j = c P + k, chunk a
    if constexpr (E == 4) {
      sts128(dst, make_uint4(word(v[0], k), word(v[1], k), word(v[2], k), word(v[3], k)));
    } else {
      // bf16: column k of the 8 x 8 block; word w of the output chunk = rows 2w (low half) and 2w + 1
      // (high half), each the half k % 2 of word k / 2 of its row (0x5410: low halves, 0x7632: high).
      const u32 sel = (k & 1) ? 0x7632u : 0x5410u, w = k / 2;
      sts128(dst, make_uint4(__byte_perm(word(v[0], w), word(v[1], w), sel),
                             __byte_perm(word(v[2], w), word(v[3], w), sel),
                             __byte_perm(word(v[4], w), word(v[5], w), sel),
                             __byte_perm(word(v[6], w), word(v[7], w), sel)));
    }
  }
}

// ---- the kernel body ---------------------------------------------------------------------------
// Tile k of this block (tiles blockIdx.x + k gridDim.x) lives in stage k % RING, phase (k / RING) & 1
// of full[k % RING], and is transposed into output buffer k % OUTS. Thread 0 fills the ring before
// the loop and refills stage s with tile k + RING after the barrier that ends tile k (every thread
// has read stage s). Every load issued is waited for by a later turn, and the last stores have read
// shared memory before the block exits (wait_group.read 0), so nothing async outlives the block.
template <u32 E, u32 TR, u32 TC, u32 RING>
__device__ __forceinline__ void tma_transpose(const CUtensorMap* in_map, const CUtensorMap* out_map, u32 rows,
                                              u32 cols) {
  constexpr u32 P = 16 / E;
  constexpr u32 SLAB = 128 / E;  // elements in one 128-byte box row: 32 fp32, 64 bf16
  constexpr u32 TILE_BYTES = TR * TC * E;
  constexpr u32 NB = (TR / P) * (TC / P);  // P x P blocks a tile
  static_assert(TR % SLAB == 0 && TC % SLAB == 0 && TR <= 256 && TC <= 256,
                "tile sides: multiples of one 128-byte box row (32 fp32, 64 bf16), at most 256 (a box side)");
  static_assert(NB % 64 == 0, "whole diagonals: 8 x 8 blocks of P x P");

  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) u64 full[RING];
  // Slabs start 1024-byte aligned: the 128-byte swizzle repeats every 8 rows x 128 bytes, and it is
  // applied to address bits, so chunk c of row r lands at c ^ (r % 8) only from an aligned base.
  const u32 raw = smem_addr(smem_raw);
  const u32 base = (raw + 1023u) & ~1023u;
  const u32 tid = threadIdx.x;

  TileOrder order;
  order.n_x = (cols - 1) / TC + 1;  // the launch returns early for an empty matrix
  order.n_y = (rows - 1) / TR + 1;
  order.g_rows = min((u32)GROUP, order.n_y);
  order.per_group = order.g_rows * order.n_x;
  const u32 tiles = order.n_x * order.n_y;
  const u32 stride = gridDim.x;

  auto load_tile = [&](u32 t, u32 s) {  // thread 0 only
    u32 ty, tx;
    order.coords(t, ty, tx);
    const u32 bar = smem_addr(&full[s]);
    const u32 dst = base + s * TILE_BYTES;
    // Boxes that start past m's last column are skipped (their columns are rows of out past its
    // end: never stored); each box issued counts in full, its zero-filled part included.
    const u32 boxes = min(TC / SLAB, (cols - tx * TC - 1) / SLAB + 1);
    mbar_arrive_expect_tx(bar, boxes * (TR * 128));
#pragma unroll
    for (u32 q = 0; q < TC / SLAB; ++q)
      if (q < boxes) tma_load_2d(dst + q * (TR * 128), in_map, bar, (int)(tx * TC + q * SLAB), (int)(ty * TR));
  };

  if (tid == 0) {
    // The launch sized the dynamic shared memory from the same knobs (op.py); a mismatch would
    // let the TMA write past the block's allocation, so stop here instead.
    if ((base - raw) + (RING + OUTS) * TILE_BYTES > dynamic_smem_size()) __trap();
    prefetch_tensormap(in_map);
    prefetch_tensormap(out_map);
#pragma unroll
    for (u32 s = 0; s < RING; ++s) mbar_init(smem_addr(&full[s]), 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");  // visible to the TMA unit too
  }
  __syncthreads();
  if (tid == 0) {
#pragma unroll
    for (u32 s = 0; s < RING; ++s)
      if (blockIdx.x + s * stride < tiles) load_tile(blockIdx.x + s * stride, s);
  }

  u32 k = 0;
  // The loop bound depends only on blockIdx: every thread reaches every barrier.
  for (u32 t = blockIdx.x; t < tiles; t += stride, ++k) {
    const u32 s = k % RING, o = k % OUTS;
    // `base` through an opaque move each turn: with one stage (or one buffer) the per-thread chunk
    // addresses would be loop-invariant, and the compiler would keep all 2P of them live across the
    // loop (NVRTC 13: 4 bytes of spills at 64 registers on sm_100); recomputing them costs 2P LOP3.
    u32 turn_base;
    asm volatile("mov.u32 %0, %1;" : "=r"(turn_base) : "r"(base));
    const u32 in_base = turn_base + s * TILE_BYTES, out_base = turn_base + (RING + o) * TILE_BYTES;
    if constexpr (OUTS == 1) {
      if (k > 0) {  // the one buffer: the previous store must have read it before anyone writes
        if (tid == 0) bulk_wait_read<0>();
        __syncthreads();
      }
    }
    mbar_wait(smem_addr(&full[s]), (k / RING) & 1);
    // NB / BLOCK blocks a thread (a compile-time count), one at a time: unrolled, the blocks' 2 x 8
    // vectors (bf16) and addresses overlap and spill at 64 registers.
#pragma unroll 1
    for (u32 i = 0; i < (NB + BLOCK - 1) / BLOCK; ++i) {
      const u32 b = i * BLOCK + tid;
      if (NB % BLOCK == 0 || b < NB) transpose_block<E, TR, TC>(in_base, out_base, b);
    }
    fence_proxy_async();
    if constexpr (OUTS >= 2) {
      // Turn k + 1 writes buffer (k + 1) % OUTS, last stored at turn k + 1 - OUTS: of this thread's
      // groups (turns <= k - 1), at most OUTS - 2 may still be reading.
      if (tid == 0) bulk_wait_read<(OUTS >= 2 ? OUTS - 2 : 0)>();
    }
    __syncthreads();
    if (tid == 0) {
      u32 ty, tx;
      order.coords(t, ty, tx);
#pragma unroll
      for (u32 q = 0; q < TR / SLAB; ++q)  // out rows tx TC .., columns ty TR + q SLAB .. (none past R)
        if (ty * TR + q * SLAB < rows)
          tma_store_2d(out_map, out_base + q * (TC * 128), (int)(ty * TR + q * SLAB), (int)(tx * TC));
      bulk_commit();
      if (t + RING * stride < tiles) load_tile(t + RING * stride, s);
    }
  }
  if (tid == 0) bulk_wait_read<0>();  // shared memory must outlive the stores' reads of it
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS)
    transpose_f32(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap out_map,
                  unsigned int rows, unsigned int cols) {
  tma_transpose<4, TILE_ROWS, TILE_COLS, RING_F32>(&in_map, &out_map, rows, cols);
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS)
    transpose_bf16(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap out_map,
                   unsigned int rows, unsigned int cols) {
  tma_transpose<2, TILE_ROWS_BF16, TILE_COLS_BF16, RING_BF16>(&in_map, &out_map, rows, cols);
}
