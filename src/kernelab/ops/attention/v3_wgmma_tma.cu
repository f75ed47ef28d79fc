// v3_wgmma_tma: v2 with TMA loads from one producer thread, FA3's 24/240 register split, and
// persistent blocks that start loading the next tile while the consumers finish this one.
//
// What changed from v2 (the consumers' code is v2's, shared through sm90_fa3.cuh):
//   - Loads: one thread of the producer warpgroup issues cp.async.bulk.tensor.3d (TMA) for each
//     64-column slab of a Q, K or V tile, over 3-D tensor maps [B*H][S][D] with the 128-byte
//     swizzle: the copy engine writes exactly the layout v2's 128 threads wrote by hand (16-byte
//     chunk ^ row % 8 in 1024-byte atoms), and rows past S of a head read as zeros (the map's
//     bounds are per head, so a tail tile never reads the next head's keys). One mbarrier
//     arrival with expect_tx per tile replaces 128 cp.async arrivals. v2's producer spent ~160
//     LDGSTS + address warp-instructions per K/V tile pair on the SM's schedulers; this one ~8.
//   - Registers: the producer needs almost none, so setmaxnreg gives it 24 and the consumers 240
//     (FA3's split), 8 more per consumer thread for S, P, O and the addresses.
//   - Persistent tiles (PERSISTENT 1, non-causal only): the grid is one block per SM; a block
//     walks tiles t = blockIdx.x, + gridDim.x, ... head-major, so neighbouring blocks share a
//     head's K/V in L2. Causal launches keep one block per tile: their tiles' work differs up to
//     S / 128-fold, and a static stride hands some blocks ~20% more than others, while the
//     hardware's block scheduler balances them as blocks finish. The producer's ring and
//     the consumers' named-barrier turns run on across tiles: the first K/V tiles of tile j+1 load
//     while tile j's last P V runs and its O is stored, and Q's buffer is refilled as soon as the
//     consumers' last S GEMM of tile j completes (an empty_q barrier). v2 pays, per 128-row tile,
//     the latency of its first Q and K loads (~1.5-2 us from DRAM) and the epilogue with the
//     tensor cores idle: at B4 H32 S4096 D128 a tile takes ~30 us, so ~5%.
// Predicted: at B4 H32 S4096 D128 on the H200, TMA and 240 registers +2-4%, persistence +3-5%:
//   ~600-620 TFLOP/s non-causal (0.87-0.9x SDPA's default as measured, 689) from v2's 563-588.
// Sweep (docs/runs/2026-11-30-h200-sweep_attention_v3b.json, one process, SDPA's default 687 / 604
//   TFLOP/s): v2 591 / 528 (0.86x / 0.87x), v3 675 / 586 (0.98x / 0.97x); persistence alone +2%
//   non-causal (PERSISTENT 0: 661). BLOCK_N 176 687 / 585, 160 682 / 583, 144 673 / 578, 3 stages
//   674 / 586: within ~2% of 128, which stays the default (no tail tile at S = 2^k, any D). Causal
//   tiles in head-major order: 586; longest-first across heads (the first build) 498.
// Measured: BENCHMARKS.md, attention rows (generated from results JSON).
//
// Knobs: v2's (its header says what each does), with 24/240 registers, plus
//   PERSISTENT (1): 0 launches one block per tile (grid = tiles) for non-causal too, as v2 does,
//     to isolate TMA's gain.
//   The host side (v3_wgmma_tma.py) builds the three tensor maps and sizes the grid.
//
// @arch sm_90a
// @block 384
// @block_m 128
// @smem_d64 115840
// @smem_d128 164992
#include <cuda_bf16.h>

#ifndef BLOCK_N
#define BLOCK_N 128
#endif
#ifndef STAGES_D128
#define STAGES_D128 2
#endif
#ifndef STAGES_D64
#define STAGES_D64 3
#endif
#ifndef PRODUCER_REGS
#define PRODUCER_REGS 24
#endif
#ifndef CONSUMER_REGS
#define CONSUMER_REGS 240
#endif
#ifndef PINGPONG
#define PINGPONG 1
#endif
#ifndef INTRA_WG_OVERLAP
#define INTRA_WG_OVERLAP 1
#endif
#ifndef ORDER_SOFTMAX
#define ORDER_SOFTMAX 0
#endif
#ifndef SOFTMAX_ILP
#define SOFTMAX_ILP 1
#endif
#ifndef RESCALE_THRESHOLD
#define RESCALE_THRESHOLD -1
#endif
#ifndef PERSISTENT
#define PERSISTENT 1
#endif

static_assert(PERSISTENT == 0 || PERSISTENT == 1, "PERSISTENT: 0 (grid = tiles) or 1 (grid = SMs); the host reads it");
#define FA_TMA_LOADS 1
#define FA_PERSISTENT 1  // the empty_q hand-back costs one arrival per warp and tile; kept for PERSISTENT 0 too
#include "sm90_fa3.cuh"  // layout, barriers, wgmma, softmax and the consumers (shared with v2)

// cuda.h's CUtensorMap (128 opaque bytes, 64-byte aligned); NVRTC has no cuda.h.
struct alignas(64) CUtensorMap {
  unsigned long long opaque[16];
};

namespace {

__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// Box (64 columns, `rows` rows, 1 head) at (column c0, row c1, head c2) of `map` into shared
// memory at `dst`; its bytes complete a transaction of `bar`. Rows past S arrive as zeros.
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n"
      ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}

// Tile t of the block's walk: which head and which 128-row block of queries. Head-major, so
// the ~132 tiles in flight cover ~4 heads and their K/V stay in L2 (ordering the causal tiles
// longest-first across all heads instead made every block read another head: 476 against 525
// TFLOP/s for v2, H200); causal rows longest first inside each head, as v2's grid does.
struct Tile {
  int bh, m_block;
};
__device__ __forceinline__ Tile tile_of(int t, int m_blocks, int causal) {
  const int m = t % m_blocks;
  return {t / m_blocks, causal ? m_blocks - 1 - m : m};
}
__device__ __forceinline__ int key_tiles(int m0, int seqlen, int causal) {
  return causal ? (min(seqlen, m0 + BM) + BN - 1) / BN : (seqlen + BN - 1) / BN;
}

// One thread: every tile's Q, then its K/V tiles in the consumers' order (K of the last key
// tile, then K_n with V_{n+1}, then V_0), on a ring that runs on across tiles.
template <int D>
__device__ __forceinline__ void producer_tma(uint32_t base, const Barriers& bar, const CUtensorMap* tq,
                                             const CUtensorMap* tk, const CUtensorMap* tv, int seqlen, int causal,
                                             int m_blocks, int heads) {
  using L = Layout<D>;
  constexpr int SLABS = D / 64;
  const int tiles = m_blocks * heads;
  int kv0 = 0;  // ring position of this tile's first K (and V) tile
  int j = 0;    // tiles this block has run
  for (int t = blockIdx.x; t < tiles; t += gridDim.x, ++j) {
    const Tile tile = tile_of(t, m_blocks, causal);
    const int m0 = tile.m_block * BM;
    const int n_max = key_tiles(m0, seqlen, causal);
    auto load = [&](const CUtensorMap* map, uint32_t off, uint32_t full, uint32_t empty, int n, int it) {
      const int st = it % L::STAGES;
      mbar_wait(empty + 8 * st, ((it / L::STAGES) & 1) ^ 1);
      mbar_arrive_expect_tx(full + 8 * st, L::KV_BYTES);
#pragma unroll
      for (int sl = 0; sl < SLABS; ++sl)
        tma_load_3d(base + off + st * L::KV_BYTES + sl * (BN * 128), map, full + 8 * st, 64 * sl, n * BN, tile.bh);
    };
    const uint32_t fk = bar.full_k(0), ek = bar.empty_k(0), fv = bar.full_v(0), ev = bar.empty_v(0);
    load(tk, L::K_OFF, fk, ek, n_max - 1, kv0);
    mbar_wait(bar.empty_q(), (j & 1) ^ 1);  // the consumers' S GEMMs of the previous tile are done
    mbar_arrive_expect_tx(bar.full_q(), L::Q_BYTES);
#pragma unroll
    for (int sl = 0; sl < SLABS; ++sl) tma_load_3d(base + sl * (BM * 128), tq, bar.full_q(), 64 * sl, m0, tile.bh);
    int it = kv0;
    for (int n = n_max - 2; n >= 0; --n, ++it) {
      load(tk, L::K_OFF, fk, ek, n, it + 1);
      load(tv, L::V_OFF, fv, ev, n + 1, it);
    }
    load(tv, L::V_OFF, fv, ev, 0, it);
    kv0 += n_max;
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(384, 1)
    attention_bf16(const __grid_constant__ CUtensorMap tmap_q, const __grid_constant__ CUtensorMap tmap_k,
                   const __grid_constant__ CUtensorMap tmap_v, __nv_bfloat16* __restrict__ o,
                   float* __restrict__ lse, int seqlen, int head_dim, int causal, float scale, int heads) {
  extern __shared__ __align__(1024) uint8_t smem[];
  if (head_dim != 128 && head_dim != 64) __trap();  // the host refuses other head dims
  const bool d128 = head_dim == 128;
  const uint32_t base = smem_base(smem, d128);
  const Barriers bar = setup_barriers(base, d128);

  const int m_blocks = (seqlen + BM - 1) / BM;
  if (threadIdx.x < 128) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS));
    if (threadIdx.x == 0) {  // the other 127 producer threads have nothing to do and exit
      if (d128) {
        producer_tma<128>(base, bar, &tmap_q, &tmap_k, &tmap_v, seqlen, causal, m_blocks, heads);
      } else {
        producer_tma<64>(base, bar, &tmap_q, &tmap_k, &tmap_v, seqlen, causal, m_blocks, heads);
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS));
    const int wg = threadIdx.x / 128 - 1;
#if PINGPONG
    if (wg == 0) named_bar_arrive(1, 256);  // warpgroup 1 (wg 0) takes the first turn; turns run on across tiles
#endif
    const int tiles = m_blocks * heads;
    int kv0 = 0, j = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x, ++j) {
      const Tile tile = tile_of(t, m_blocks, causal);
      const int m0 = tile.m_block * BM;
      const int n_max = key_tiles(m0, seqlen, causal);
      if (d128) {
        consumer<128>(wg, base, bar, o, lse, m0, n_max, seqlen, causal, scale, tile.bh, j & 1, kv0);
      } else {
        consumer<64>(wg, base, bar, o, lse, m0, n_max, seqlen, causal, scale, tile.bh, j & 1, kv0);
      }
      kv0 += n_max;
    }
  }
}
