// shifted_tiles.cuh: grouped_transpose's tile loop for matrices whose rows are not all 16-byte
// aligned (odd widths, offset views, column slices): the same tiles, order and 16-byte accesses as
// the aligned loop, with each row's phase handled in shared memory on the load side and by a warp
// shuffle on the store side. Included after grouped_tiles.cuh (load16 unused, store16, pack, TileGeom,
// TileOrder, GridStrideTiles); v4_grouped_order's transpose_shifted_* kernels are this loop, and
// op.py launches them (`@shifted 1`) when a row of m or of out is off a 16-byte boundary.
//
// Why: before session 22 such a matrix went element by element on both sides (4-byte loads and
//   stores at 16-byte strides across a warp in fp32), and 16383^2 fp32 took 1159.9 us against
//   523.5 us for 16384^2 and torch.compile's 864.8 (0.75x; docs/runs/2026-12-02-h200-sweep_odd22.json).
//   The bytes are the same as at 16384^2, so the aligned loop's ~0.96x of a copy is the target.
// How, load side: row i of m starts at element phase p_i = (in / E + i ld) mod V (E the element size,
//   V = 16 / E). Its TC columns c0 .. c0 + TC - 1 span IN_CPR + 1 aligned 16-byte chunks, the raw
//   chunks at c0 - p_i + ch V. Raw chunks 0 .. IN_CPR - 1 go to the tile's slots, as the aligned loop
//   places its chunks; raw chunk IN_CPR of each row goes to `extra` (TR more chunks of shared memory,
//   copied in one more step by threads 0 .. TR - 1). All by cp.async, global to shared with no
//   register in between. The gather reads element (row, col) of the tile
//   at raw position col + p_row. Since tiles start at multiples of V rows, p of tile row q V + k is
//   (in / E + k ld) mod V for every q and every tile: one phase per k, known before the loop.
//   Each raw chunk holds at least one element of m that a load is allowed to read (the first raw
//   chunk of row 0 may start before m, inside the 16-byte granule of m's first element).
// How, store side: out row j starts its segment r0 + q V at phase s_j = (out / E + j rows) mod V. The
//   LPR lanes of a group hold V consecutive elements each of one output row; lane q takes lane
//   q - 1's vector by __shfl_up_sync and stores the aligned 16 bytes at i - s_j (kl::bytes_at: the
//   last s_j elements of q - 1's, then the first V - s_j of its own). The group's first lane stores its
//   first V - s_j elements one at a time, its last lane its last s_j: V scalar stores a group, the
//   rest 16-byte. Rows of out with s_j = 0 store as the aligned loop does.
// Cost, fp32 64 x 64 tile: 1 more 16-byte copy a tile row (1/16 more load requests; the bytes are the
//   neighbouring tile's first chunk, mostly an L2 hit), 4 shuffles and ~12 selects a stored vector, ~8 integer
//   instructions a gathered element, 4 scalar stores per 8 vectors stored; 1 KiB more shared memory
//   a block (16 -> 17 KiB: 8 blocks still fit an SM on sm_80/sm_90/sm_100).
#pragma once
#include "../common/words16.cuh"  // kl::bytes_at

// Element k of the 16 bytes v, as B (k is a constant once the callers' loops unroll).
template <typename B>
__device__ __forceinline__ B elem16(const uint4 v, const unsigned k) {
  const unsigned wi = k * sizeof(B) / 4;
  const unsigned w = wi == 0 ? v.x : wi == 1 ? v.y : wi == 2 ? v.z : v.w;
  if constexpr (sizeof(B) == 4) return w;
  return static_cast<B>(w >> ((k & 1) * 16));
}

// 16 bytes global -> shared without a register (cp.async, sm_80 and later; .cg: L2 only), and the wait
// for this thread's copies.
__device__ __forceinline__ void cp_async16(uint4* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))),
               "l"(src)
               : "memory");
}
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }

template <typename B, unsigned TR, unsigned TC>
__device__ __forceinline__ void shifted_transpose(const B* __restrict__ in, B* __restrict__ out, unsigned rows,
                                                  unsigned cols, unsigned long long ld) {
  using G = TileGeom<B, TR, TC>;
  constexpr unsigned V = G::V, IN_CPR = G::IN_CPR, CHUNKS = G::CHUNKS, PER_THREAD = G::PER_THREAD;
  constexpr unsigned XMASK = G::XMASK, LPR = G::LPR, RPW = G::RPW, GROUPS = G::GROUPS;
  constexpr bool EVEN = G::EVEN;
  constexpr unsigned XSTEPS = (TR + BLOCK - 1) / BLOCK;  // steps that load the extra chunk of each row
  static_assert((CHUNKS + TR) * 16 <= 48 * 1024, "the tile is static shared memory: at most 48 KiB");
  __shared__ uint4 tile[CHUNKS + TR];  // the aligned loop's slots, then the extra raw chunk of each row
  uint4* extra = tile + CHUNKS;        // raw chunk IN_CPR of tile row r: extra[r]
  GridStrideTiles tiles_from;
  const B* tile_e = reinterpret_cast<const B*>(tile);

  // Phases: of m's row r0 + r, (in_phase + r ld) mod V; of out's row j, (out_phase + j rows) mod V.
  // Products may wrap: only their low bits (mod V, a power of two) are used. The four residues are
  // packed in one word, bits 0-3 in_phase, 4-7 ld mod V, 8-11 out_phase, 12-15 rows mod V.
  const unsigned phases =
      ((static_cast<unsigned>(reinterpret_cast<unsigned long long>(in) / sizeof(B)) & (V - 1)) |
       ((static_cast<unsigned>(ld) & (V - 1)) << 4) |
       ((static_cast<unsigned>(reinterpret_cast<unsigned long long>(out) / sizeof(B)) & (V - 1)) << 8) |
       ((rows & (V - 1)) << 12));
  // A raw chunk starting at column j - p holds an element of row i's columns 0 .. cols - 1 (j >= V or 0).
  auto needed = [cols](unsigned j, unsigned p) { return j < p || j - p < cols; };

  TileOrder order;
  order.n_x = (cols - 1) / TC + 1;
  order.n_y = (rows - 1) / TR + 1;
  order.g_rows = min((unsigned)GROUP, order.n_y);
  order.per_group = order.g_rows * order.n_x;
  const unsigned tiles = order.n_y * order.n_x;
  for (unsigned t = tiles_from.first(); t < tiles; t = tiles_from.next(t)) {
    unsigned ty, tx;
    order.coords(t, ty, tx);
    const unsigned r0 = ty * TR, c0 = tx * TC;
    // The packed phases passed through an empty asm each tile: the compiler then computes the addresses
    // and phases below inside the loop. Without it, it hoisted every thread's PER_THREAD x V gather
    // addresses out of the loop as invariants and spilled them (80-432 bytes on sm_100 and sm_120).
    unsigned ph = phases;
    asm volatile("" : "+r"(ph));
    // m's tile row r (tile rows start at multiples of V, so r mod V decides); out's row j.
    auto phase_of = [ph](unsigned r) { return ((ph & 15u) + (r & (V - 1)) * ((ph >> 4) & 15u)) & (V - 1); };
    auto out_phase_of = [ph](unsigned j) { return (((ph >> 8) & 15u) + j * ((ph >> 12) & 15u)) & (V - 1); };

    // Load phase: every raw chunk straight to its shared-memory slot by cp.async, all in flight
    // before the wait (no registers hold them: with 16-byte register loads, as the aligned loop
    // takes, the fp32 kernel spilled 24-56 bytes at its 32-register cap on sm_90 and sm_100).
#pragma unroll
    for (unsigned s = 0; s < PER_THREAD; ++s) {
      const unsigned idx = s * BLOCK + threadIdx.x;
      const unsigned r = idx / IN_CPR, ch = idx % IN_CPR;
      const unsigned i = r0 + r, j = c0 + ch * V, p = phase_of(r);
      // Raw chunks outside m are not loaded: their slots hold stale bytes that are never stored to out.
      if ((EVEN || idx < CHUNKS) && i < rows && needed(j, p))
        cp_async16(tile + r * IN_CPR + (ch ^ ((r / V) & XMASK)), (in + i * ld + j) - p);
    }
#pragma unroll
    for (unsigned x = 0; x < XSTEPS; ++x) {  // the extra raw chunk of each row, where its phase needs one
      const unsigned r = x * BLOCK + threadIdx.x;
      const unsigned i = r0 + r, j = c0 + TC, p = phase_of(r);
      if (r < TR && p != 0 && i < rows && needed(j, p)) cp_async16(extra + r, (in + i * ld + j) - p);
    }
    cp_async_wait_all();  // this thread's chunks are in shared memory before the barrier
    tiles_from.take();
    __syncthreads();

    // Store phase: the aligned loop's warp tasks (lane: output row oc of the tile, chunk q).
#pragma unroll
    for (unsigned s = 0; s < PER_THREAD; ++s) {
      const unsigned idx = s * BLOCK + threadIdx.x;
      const bool live = EVEN || idx < CHUNKS;  // whole warps (CHUNKS is a power of two >= 32 or < BLOCK)
      const unsigned task = idx / 32, lane = idx % 32;
      const unsigned oc = (task / GROUPS) * RPW + lane / LPR;
      const unsigned q = (task % GROUPS) * LPR + lane % LPR;
      B e[V];  // m[r0 + q V + k][c0 + oc], k = 0 .. V - 1
#pragma unroll
      for (unsigned k = 0; k < V; ++k) {
        const unsigned c = oc + phase_of(k);  // raw column in tile row q V + k
        const unsigned ch = c / V, at = c % V;
        const unsigned slot = ch < IN_CPR ? (q * V + k) * IN_CPR + (ch ^ (q & XMASK)) : CHUNKS + q * V + k;
        e[k] = live ? tile_e[slot * V + at] : B(0);
      }
      const uint4 cur = pack<B>(e);
      // Every lane of the warp shuffles (width LPR: the group's first lane gets its own, unused).
      const uint4 prev = make_uint4(__shfl_up_sync(0xffffffffu, cur.x, 1, LPR), __shfl_up_sync(0xffffffffu, cur.y, 1, LPR),
                                    __shfl_up_sync(0xffffffffu, cur.z, 1, LPR), __shfl_up_sync(0xffffffffu, cur.w, 1, LPR));
      const unsigned j = c0 + oc, i = r0 + q * V;  // out[j][i .. i + V - 1]
      if (!live || j >= cols) continue;
      B* dst = out + j * (unsigned long long)rows + i;
      const unsigned sh = out_phase_of(j);
      const bool first = lane % LPR == 0, last = lane % LPR == LPR - 1;
      if (sh == 0) {  // this row of out is aligned: the aligned loop's store
        if (i + V <= rows) {
          store16(dst, cur);
        } else {
#pragma unroll
          for (unsigned k = 0; k < V; ++k)
            if (i + k < rows) dst[k] = e[k];
        }
        continue;
      }
      if (!first) {  // the aligned 16 bytes at i - sh: lane q - 1's last sh elements, then our first V - sh
        const uint4 w = kl::bytes_at<sizeof(B)>(prev, cur, (V - sh) * sizeof(B));
        B* a = dst - sh;
        if (i - sh + V <= rows) {
          store16(a, w);
        } else {
#pragma unroll
          for (unsigned k = 0; k < V; ++k)
            if (i - sh + k < rows) a[k] = elem16<B>(w, k);
        }
      }
#pragma unroll
      for (unsigned k = 0; k < V; ++k) {  // the group's ends: before the first aligned vector, after the last
        const bool mine = (first && k < V - sh) || (last && k >= V - sh);
        if (mine && i + k < rows) dst[k] = e[k];
      }
    }
    tiles_from.publish();
    __syncthreads();
  }
  tiles_from.done();
}
