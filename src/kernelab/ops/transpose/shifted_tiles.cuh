// shifted_tiles.cuh: the tile loop of transpose v4's transpose_shifted_* kernels, for matrices whose
// rows are not all 16-byte aligned (odd widths, offset views, column slices): the aligned loop's tiles,
// order and 16-byte accesses, with each row's phase absorbed in shared memory on both sides. Included
// after grouped_tiles.cuh (st_global_v4, pack, TileGeom, TileOrder, GridStrideTiles); op.py launches these
// kernels (`@shifted 1`) when a row of m or of out is off a 16-byte boundary.
//
// Why: before session 22 such a matrix went element by element on both sides (4-byte accesses 16
//   bytes apart across a warp in fp32): 16383^2 fp32 took 1159.9 us against 523.5 us for 16384^2 and
//   torch.compile's 864.8 (docs/runs/2026-12-02-h200-sweep_odd22.json). The bytes are those of 16384^2,
//   so the aligned loop's ~0.96x of a copy is the target.
// Load side: row i of m starts at element phase p_i = (in / E + i ld) mod V (E the element size, V =
//   16 / E). Its columns c0 .. c0 + TC - 1 span IN_CPR + 1 aligned 16-byte chunks, the raw chunks at
//   c0 - p_i + ch V: raw chunks 0 .. IN_CPR - 1 go to the aligned loop's swizzled slots, raw chunk IN_CPR
//   of each row to `extra`. All by cp.async, global to shared with no register in between (with register
//   loads the fp32 kernel spilled at its 32-register cap). The gather reads element (row, col) at raw
//   column col + p_row. Tile rows start at multiples of V, so p of a tile row depends on the row mod V
//   only. Each raw chunk holds an element of m (a granule that holds m's first element may start before
//   m), so no copy can fault.
// Store side: out row j's elements sit at phase s_j = (out / E + j rows) mod V. The tile of rows r0 ..
//   r0 + TR - 1 writes, in out row j, the window r0 - s_j .. r0 - s_j + TR - 1: aligned 16-byte vectors
//   only, every one whole (bar the row's first and last, cut by its ends). So the tile holds V rows of m
//   above r0 as well (TR + V rows; those V come from L2: the block before, in column-major order, read
//   them), and the row tiles run to rows + V - 1.
// First form (session 22, measured in docs/runs/2026-12-02-h200-sweep_shift22.json): the aligned loop's
//   windows r0 .. r0 + TR - 1, realigned by a warp shuffle, with the V elements at each 8-lane group's two
//   ends stored one at a time. 16383^2 fp32 912.9-913.2 us, 16383 x 16384 (only out misaligned) 849.8-850.7
//   against 16384 x 16383 (only m) 558.6-559.0: the store side. ncu (16383 x 16384, against 16384^2): 9x
//   the store instructions, 4x the L1 store sectors, 4.6x the L2 write requests, DRAM bytes unchanged.
//   The windows above remove every scalar store but the rows' ends.
// Cost, fp32 64 x 64 tile: (64 + 4) x 17 raw chunks copied where the aligned loop loads 64 x 16 (1.13x the
//   load requests, the extra from L2), ~10 integer instructions a gathered element, 18.1 KiB of shared memory
//   a block (the aligned kernel 16 KiB; 8 blocks an SM still fit on sm_80-sm_100).
#pragma once
#include "../common/words16.cuh"  // kl::bytes_at (the gather's rotation)

// SHIFT_ROTATE / SHIFT_ROTATE_BF16 (fp32 / bf16 kernel; 1: rotate the gather's element order in odd
// squares, below). Measured at 16383^2 (docs/runs/2026-12-02-h200-sweep_shift22c.json, one process, twice):
// fp32 597.0 / 599.5 us rotated, 611.1 / 608.6 not; bf16 309.5 / 310.4 rotated, 297.8 / 298.1 not (its
// 2-byte elements take funnel shifts to rotate back, and its conflicts were 4.16-way -> 2.28, not -> 1.16).
#ifndef SHIFT_ROTATE
#define SHIFT_ROTATE 1
#endif
#ifndef SHIFT_ROTATE_BF16
#define SHIFT_ROTATE_BF16 0
#endif

// 16 bytes global -> shared without a register (cp.async, sm_80 and later; .cg: L2 only), and the wait
// for this thread's copies.
__device__ __forceinline__ void cp_async16(uint4* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))),
               "l"(src)
               : "memory");
}
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// Element k of the 16 bytes v, as B (k a constant once the caller's loop unrolls).
template <typename B>
__device__ __forceinline__ B elem16(const uint4 v, const unsigned k) {
  const unsigned wi = k * sizeof(B) / 4;
  const unsigned w = wi == 0 ? v.x : wi == 1 ? v.y : wi == 2 ? v.z : v.w;
  if constexpr (sizeof(B) == 4) return w;
  return static_cast<B>(w >> ((k & 1) * 16));
}

template <typename B, unsigned TR, unsigned TC, unsigned BLK>
__device__ __forceinline__ void shifted_transpose(const B* __restrict__ in, B* __restrict__ out, unsigned rows,
                                                  unsigned cols, unsigned long long ld) {
  using G = TileGeom<B, TR, TC, BLK>;
  constexpr unsigned V = G::V, IN_CPR = G::IN_CPR, CHUNKS = G::CHUNKS, PER_THREAD = G::PER_THREAD;
  constexpr unsigned XMASK = G::XMASK, LPR = G::LPR;
  constexpr bool EVEN = G::EVEN;
  constexpr unsigned HELD_ROWS = TR + V;                       // tile row R holds m row r0 - V + R
  constexpr unsigned HELD = HELD_ROWS * IN_CPR;                // swizzled slots
  constexpr unsigned LOAD_STEPS = (HELD + BLK - 1) / BLK;      // copies a thread issues for them
  constexpr unsigned XSTEPS = (HELD_ROWS + BLK - 1) / BLK;     // and for the extra raw chunk of each row
  static_assert((HELD + HELD_ROWS) * 16 <= 48 * 1024, "the tile is static shared memory: at most 48 KiB");
  __shared__ uint4 tile[HELD + HELD_ROWS];  // slot of (R, ch) as the aligned loop's; then extra[R]
  uint4* extra = tile + HELD;
  const B* tile_e = reinterpret_cast<const B*>(tile);
  GridStrideTiles tiles_from;

  // Residues mod V (products may wrap: only their low bits are used), packed in one word: bits 0-3
  // in / E, 4-7 ld, 8-11 out / E, 12-15 rows.
  const unsigned phases =
      ((static_cast<unsigned>(reinterpret_cast<unsigned long long>(in) / sizeof(B)) & (V - 1)) |
       ((static_cast<unsigned>(ld) & (V - 1)) << 4) |
       ((static_cast<unsigned>(reinterpret_cast<unsigned long long>(out) / sizeof(B)) & (V - 1)) << 8) |
       ((rows & (V - 1)) << 12));
  // A raw chunk that starts at column j - p holds an element of the row's columns 0 .. cols - 1.
  auto needed = [cols](unsigned j, unsigned p) { return j < p || j - p < cols; };

  TileOrder order;
  order.n_x = (cols - 1) / TC + 1;
  order.n_y = (rows + V - 2) / TR + 1;  // windows start up to V - 1 rows early: tiles reach rows + V - 1
  order.g_rows = min((unsigned)GROUP, order.n_y);
  order.per_group = order.g_rows * order.n_x;
  const unsigned tiles = order.n_y * order.n_x;
  for (unsigned t = tiles_from.first(); t < tiles; t = tiles_from.next(t)) {
    unsigned ty, tx;
    order.coords(t, ty, tx);
    const unsigned r0 = ty * TR, c0 = tx * TC;
    // The packed phases passed through an empty asm each tile: the compiler then computes the addresses
    // and phases below inside the loop. Without it, it hoisted every thread's gather addresses out of the
    // loop as invariants and spilled them (80-432 bytes on sm_100 and sm_120).
    unsigned ph = phases;
    asm volatile("" : "+r"(ph));
    // Phase of m's row r0 - V + R (r0 - V is a multiple of V, so R mod V decides); of out's row j.
    auto phase_of = [ph](unsigned R) { return ((ph & 15u) + (R & (V - 1)) * ((ph >> 4) & 15u)) & (V - 1); };
    auto out_phase_of = [ph](unsigned j) { return (((ph >> 8) & 15u) + j * ((ph >> 12) & 15u)) & (V - 1); };

    // Load phase: every raw chunk straight to its slot, all in flight before the wait. Row i = r0 - V + R
    // wraps past 2^32 - V for the rows above m (tile 0), so `i < rows` also skips those.
#pragma unroll
    for (unsigned s = 0; s < LOAD_STEPS; ++s) {
      const unsigned idx = s * BLK + threadIdx.x;
      const unsigned R = idx / IN_CPR, ch = idx % IN_CPR;
      const unsigned i = r0 + R - V, j = c0 + ch * V, p = phase_of(R);
      // Chunks outside m are not copied: their slots keep stale bytes, which no store writes to out.
      if ((HELD % BLK == 0 || idx < HELD) && i < rows && needed(j, p))
        cp_async16(tile + R * IN_CPR + (ch ^ ((R / V) & XMASK)), (in + i * ld + j) - p);
    }
#pragma unroll
    for (unsigned x = 0; x < XSTEPS; ++x) {
      const unsigned R = x * BLK + threadIdx.x;
      const unsigned i = r0 + R - V, j = c0 + TC, p = phase_of(R);
      if (R < HELD_ROWS && p != 0 && i < rows && needed(j, p)) cp_async16(extra + R, (in + i * ld + j) - p);
    }
    cp_async_wait_all();  // this thread's copies are in shared memory before the barrier
    tiles_from.take();
    __syncthreads();

    // Store phase: the aligned loop's warp tasks (lane: output row oc of the tile, chunk q), each chunk
    // the aligned vector out[j][w .. w + V - 1], w = r0 - s_j + q V: m rows w + k = tile rows V - s_j + q V + k.
#pragma unroll
    for (unsigned s = 0; s < PER_THREAD; ++s) {
      const unsigned idx = s * BLK + threadIdx.x;
      if (!EVEN && idx >= CHUNKS) continue;
      const unsigned lane = idx % 32;
      unsigned oc, q;
      G::store_task(idx, oc, q);
      const unsigned j = c0 + oc;
      if (j >= cols) continue;
      const unsigned sh = out_phase_of(j);
      // Where ld and rows are both odd mod V (an odd square), raw column oc + p has one value mod V in
      // all 32 lanes at each step, and a warp's 4 output rows read 8 of the 32 banks: 4-way conflicts
      // (tests/cpu/test_transpose_shifted.py). There the lanes of output row oc read their elements in
      // an order rotated by oc mod V, so the 4 rows read 4 columns mod V (1.16-way fp32, 2.3 bf16), and
      // the vector is rotated back into element order once gathered. fp32 only by default (see the knob).
      constexpr unsigned ROTATE = sizeof(B) == 4 ? SHIFT_ROTATE : SHIFT_ROTATE_BF16;
      const unsigned rot = ROTATE * ((ph >> 4) & (ph >> 12) & 1u) * ((lane / LPR) & (V - 1));
      B e[V];  // e[kk]: element (kk + rot) mod V of the vector
#pragma unroll
      for (unsigned kk = 0; kk < V; ++kk) {
        const unsigned R = V - sh + q * V + ((kk + rot) & (V - 1));
        const unsigned c = oc + phase_of(R);  // raw column
        const unsigned ch = c / V;
        const unsigned slot = ch < IN_CPR ? R * IN_CPR + (ch ^ ((R / V) & XMASK)) : HELD + R;
        e[kk] = tile_e[slot * V + c % V];
      }
      const uint4 packed = pack<B>(e);
      const uint4 vec = kl::bytes_at<sizeof(B)>(packed, packed, (16 - rot * sizeof(B)) & 15);  // element order
      // w < 0 only in tile 0, chunk 0, where it wraps (unsigned) past 2^32 - V: the tests below skip it.
      const unsigned w = r0 + q * V - sh;
      B* dst = out + (j * (unsigned long long)rows + r0 + q * V) - sh;
      if (w < rows && rows - w >= V) {
        st_global_v4(dst, vec);
      } else {  // the row's first or last vector: the elements inside it
#pragma unroll
        for (unsigned k = 0; k < V; ++k)
          if (w + k < rows) dst[k] = elem16<B>(vec, k);
      }
    }
    tiles_from.publish();
    __syncthreads();
  }
  tiles_from.done();
}
