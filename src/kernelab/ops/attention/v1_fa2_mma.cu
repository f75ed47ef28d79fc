// v1_fa2_mma: FlashAttention-2 style: tensor cores (mma.sync m16n8k16 bf16), online softmax in
// registers, K/V tiles through a 3-stage cp.async ring; never materialises S. sm_80 and later.
//
// What changed from v0: one kernel, and S = Q K^T never leaves the chip. A block owns 128 query
//   rows (8 warps x 16 rows, one mma row-block per warp) and walks the keys in tiles of 64:
//   - Q: cp.async into shared memory once, then ldmatrix into registers (32 regs at D = 128),
//     where it stays for the whole key loop;
//   - K, V: cp.async (16 bytes per thread, L2 only) into a 3-stage ring, two tiles in flight
//     while the tensor cores work on the third; one __syncthreads per tile;
//   - S = Q K^T: ldmatrix K fragments + mma.sync into 32 fp32 registers (16 x 64 per warp);
//   - online softmax in registers: row max over the 4 lanes of a quad (2 shuffles), rescale
//     the running sum and O by exp2((m_old - m_new) * scale * log2 e), P = exp2(S * scale *
//     log2 e - m * scale * log2 e) (one FFMA + ex2.approx per score);
//   - O += P V: P goes from the S accumulators to bf16 A fragments without touching memory
//     (the m16n8k16 C layout of two n8 blocks is the A layout of one k16 block), V fragments
//     come from ldmatrix.trans (V is [key][d] in memory: the MMA needs it k-major);
//   - shared memory is XOR-swizzled in 16-byte chunks (chunk ^ (row % 8)) so that the 8 row
//     addresses of every ldmatrix phase hit 8 different bank groups (a plain 256-byte row
//     pitch would put all 8 in the same 4 banks: an 8-way conflict).
//   Causal: key tiles past the block's last row are never loaded; the diagonal tiles are
//   masked per element; a warp whose 16 rows all precede a tile skips its math for it; blocks
//   run heaviest-first (m_block = gridDim.x - 1 - blockIdx.x) so the short ones fill the tail.
// Why it is faster: v0 moved 24 bytes per score through DRAM; here a score costs nothing in
//   DRAM and K/V are read from L2 once per 128 query rows. FLOPs: 4 S^2 D per head as before.
// Predicted: bound by shared-memory bandwidth for the MMA operands: per 16x8x16 MMA (4096
//   FLOP) a warp reads 256 B of K or V fragments, 1/16 B/FLOP; at 128 B/clk/SM, 132 SMs and
//   ~1.8 GHz that caps it near 480 TFLOP/s; with softmax, barriers and the non-overlapped
//   epilogue, about 330-380 TFLOP/s at B4 H32 S4096 D128, i.e. about 1.0x SDPA's
//   FlashAttention-2 backend (ANCHORS: 346 non-causal, 326 causal), ~14x v0.
// Measured: BENCHMARKS.md, attention rows (generated from results JSON). The first layout, 8 warps
//   x 16 rows with Q in registers and 64-key tiles, ran 317.5 TFLOP/s = 0.89x the FA2 backend
//   (causal 0.93x); FlashAttention-2's own layout below ran 332.8 = 0.93x (causal 0.96x) in the
//   same H200 run (docs/runs/2026-11-30-h200-sweep_attention.json, configs "v1" and "v1+fa2"),
//   so it is the default now. With it, skipping the O rescale (RESCALE_THRESHOLD) ran, in one H200
//   process (docs/runs/2026-11-30-h200-sweep_attention_v1lazy.json; FA2 backend 355 / 326):
//   every tile 330 / 312 TFLOP/s (0.93x / 0.95x), only when a row max moved (0) 348 / 320 (0.98x /
//   0.98x), when it grew by 2^8 (8, now the default) 356 / 330 (1.00x / 1.01x). ncu at B1 H32 S4096
//   (docs/runs/ncu/): the FA2 backend (128 x 64 tiles, 4 warps) issues 1.81 IPC, v1 1.64, both at
//   2 warps per scheduler: the gap is instructions per MMA (BLOCK_N 64 spills here: 128 bytes).
// Layout (the defaults): 4 warps x 32 query rows, Q re-read from shared memory per key tile,
//   32-key tiles, 3 stages, two 128-row blocks per SM (80 KiB of shared memory each at D = 128),
//   O rescaled only when a row max grows by more than 2^8.
//
// Tuning knobs (macros; the defaults are the layout above, and the header's @block /
//   @block_m / @smem lines are their geometry: op.defines passes them as EXPECT_* and the kernel
//   refuses to compile if they disagree). scripts/sweep_attention.py times the alternatives.
//   WARPS (4): warps per block. WARP_M (32): query rows per warp, 16 or 32; BLOCK_M = WARPS x WARP_M.
//     32 is FlashAttention-2's layout (4 warps x 32 rows at D = 128): each K and V fragment read
//     by ldmatrix feeds two MMAs instead of one, halving that shared-memory traffic per FLOP.
//   Q_IN_REGS (0): 1 keeps the Q fragments in registers for the whole key loop (32 registers per 16 rows
//     at D = 128); 0 re-reads them from shared memory with ldmatrix at every key tile (FA2's
//     default), which WARP_M 32 needs to fit in 255 registers.
//   BLOCK_N (32): keys per K/V tile, a multiple of 16 in 32..128 (with WARP_M 32, S and O take 192
//     registers at BLOCK_N 64 and ptxas spills; 32 builds clean). STAGES (3): K/V tiles in the ring.
//   MIN_BLOCKS (2): __launch_bounds__ minimum blocks per SM (2 caps registers at 65536 / (2 x 32 WARPS)).
//   RESCALE_THRESHOLD (8): v2's knob. At BLOCK_N 32 the rescale of O is 128 FMULs per thread per
//     tile next to 32 MMAs per warp; k >= 0 keeps a row's max until a tile's exceeds it by more than
//     2^k (exp2 domain, so P <= 2^k before bf16 rounding) and skips a warp's rescale when none of its
//     rows moved; -1 rescales every tile (exact FA2 order of operations).
//
// @block 128
// @block_m 128
// @smem_d64 40960
// @smem_d128 81920
#include <cuda_bf16.h>

// NVRTC has no <math.h> INFINITY: -inf as its IEEE bit pattern.
#define NEG_INF __int_as_float(0xff800000u)
// NVRTC has no <stdint.h>; identical typedefs are legal where it exists (nvcc).
typedef unsigned char uint8_t;
typedef unsigned int uint32_t;

#ifndef WARPS
#define WARPS 4
#endif
#ifndef WARP_M
#define WARP_M 32
#endif
#ifndef Q_IN_REGS
#define Q_IN_REGS 0
#endif
#ifndef BLOCK_N
#define BLOCK_N 32
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 2
#endif
#ifndef RESCALE_THRESHOLD
#define RESCALE_THRESHOLD 8
#endif

namespace {

constexpr int BM = WARPS * WARP_M;      // query rows per block
constexpr int BN = BLOCK_N;             // keys per tile
constexpr int MB = WARP_M / 16;         // m16 row blocks per warp
constexpr int THREADS = WARPS * 32;
constexpr float LOG2E = 1.4426950408889634f;
static_assert(WARP_M == 16 || WARP_M == 32, "WARP_M: 16 or 32 query rows per warp");
static_assert(WARPS >= 1 && WARPS <= 16, "WARPS: 1..16");
static_assert(BN % 16 == 0 && BN >= 32 && BN <= 128, "BLOCK_N: a multiple of 16 (P V k-steps) in 32..128");
static_assert(STAGES >= 2 && STAGES <= 4, "STAGES: 2..4 K/V tiles in flight");
static_assert(RESCALE_THRESHOLD >= -1 && RESCALE_THRESHOLD <= 16, "RESCALE_THRESHOLD: -1 (off) or 0..16");
// The launch geometry the host uses (the header's lines, or the sweep's computed values).
#ifdef EXPECT_BLOCK
static_assert(EXPECT_BLOCK == THREADS, "@block (EXPECT_BLOCK) disagrees with WARPS");
#endif
#ifdef EXPECT_BLOCK_M
static_assert(EXPECT_BLOCK_M == BM, "@block_m (EXPECT_BLOCK_M) disagrees with WARPS x WARP_M");
#endif
#ifdef EXPECT_SMEM_D128
static_assert(EXPECT_SMEM_D128 == (BM + 2 * STAGES * BN) * 128 * 2, "@smem_d128 (EXPECT_SMEM_D128) disagrees with the macros");
#endif
#ifdef EXPECT_SMEM_D64
static_assert(EXPECT_SMEM_D64 == (BM + 2 * STAGES * BN) * 64 * 2, "@smem_d64 (EXPECT_SMEM_D64) disagrees with the macros");
#endif

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte global -> shared copy that bypasses L1 (.cg); src_bytes = 0 writes 16 zero bytes.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

// c += a * b for one 16x8x16 tile. Fragments (g = lane / 4, t = lane % 4):
//   a[0] = A[g][2t..2t+1], a[1] = A[g+8][2t..], a[2] = A[g][2t+8..], a[3] = A[g+8][2t+8..]
//   b0 = B[2t..2t+1][g], b1 = B[2t+8..2t+9][g]
//   c[0..1] = C[g][2t..2t+1], c[2..3] = C[g+8][2t..2t+1]
__device__ __forceinline__ void mma_bf16_16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ float exp2_approx(float x) {  // ex2.approx(-inf) = +0
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {  // lo -> bits 0..15 (lower column)
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// Byte offset of 16-byte chunk `c` of row `r` in a [rows][D] bf16 tile: rows are D*2 bytes, and
// the chunk index is XORed with r % 8 (it only flips the low 3 bits, so a chunk stays in its
// 128-byte half-row).
template <int D>
__device__ __forceinline__ uint32_t swz(int r, int c) {
  return r * (D * 2) + ((c ^ (r & 7)) << 4);
}

// The same offset split for rows with r % 8 == x7 (every ldmatrix row here: row bases are
// multiples of 8 plus lane % 8): chunk c = 8 c_hi + c_lo lands at r * 2D + 128 c_hi + ((c_lo ^ x7) << 4),
// so a lane needs only the four values ((2j + b) ^ x7) << 4 (j = 0..3, b its odd-chunk bit) and
// an immediate. WARP_M 32 uses it: the full swz of every (k-step, block) pair, hoisted out of the
// key loop by the compiler, is 24 registers that it has to spill.
__device__ __forceinline__ void swz_lo(uint32_t (&x)[4], int lane, int b) {
#pragma unroll
  for (int j = 0; j < 4; ++j) x[j] = ((2 * j + b) ^ (lane & 7)) << 4;
}

// Copy rows [row0, row0 + ROWS) of a [seqlen][D] matrix into a swizzled tile; rows past seqlen
// become zeros (never garbage: 0 * NaN would poison O through P V even where P is 0).
template <int D, int ROWS>
__device__ __forceinline__ void load_tile(uint32_t s_tile, const __nv_bfloat16* g, int row0, int seqlen, int tid) {
  constexpr int CPR = D / 8;          // 16-byte chunks per row
  constexpr int RPP = THREADS / CPR;  // rows per pass of the block
  static_assert(ROWS % RPP == 0, "tile rows must be a multiple of the rows one pass covers");
  const int c = tid % CPR, r_in = tid / CPR;
#pragma unroll
  for (int p = 0; p < ROWS / RPP; ++p) {
    const int r = r_in + p * RPP;
    const int gr = row0 + r;
    const bool ok = gr < seqlen;
    const __nv_bfloat16* src = g + (size_t)(ok ? gr : 0) * D + c * 8;
    cp_async_16(s_tile + swz<D>(r, c), src, ok ? 16 : 0);
  }
}

template <int D>
__device__ __forceinline__ void attention_fwd(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                                              const __nv_bfloat16* __restrict__ v, __nv_bfloat16* __restrict__ o,
                                              float* __restrict__ lse, int seqlen, int causal, float scale) {
  constexpr uint32_t Q_BYTES = BM * D * 2;
  constexpr uint32_t KV_BYTES = BN * D * 2;
  constexpr int KSTEPS = D / 16;   // k16 steps of Q K^T
  constexpr int NBLK_S = BN / 8;   // n8 blocks of S per warp
  constexpr int NBLK_O = D / 8;    // n8 blocks of O per warp
  extern __shared__ __align__(128) uint8_t smem[];

  uint32_t dyn_smem;
  asm("mov.u32 %0, %%dynamic_smem_size;\n" : "=r"(dyn_smem));
  if (dyn_smem < Q_BYTES + 2 * STAGES * KV_BYTES) __trap();  // the header's @smem_dD is too small

  const uint32_t sQ = smem_u32(smem);
  const uint32_t sK = sQ + Q_BYTES;
  const uint32_t sV = sK + STAGES * KV_BYTES;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;
  const int m_block = causal ? (gridDim.x - 1 - blockIdx.x) : blockIdx.x;  // heaviest causal blocks first
  const int m0 = m_block * BM;
  const size_t head = (size_t)blockIdx.y * seqlen * D;
  const __nv_bfloat16* qh = q + head;
  const __nv_bfloat16* kh = k + head;
  const __nv_bfloat16* vh = v + head;
  const int n_tiles = causal ? min((seqlen + BN - 1) / BN, (m0 + BM + BN - 1) / BN) : (seqlen + BN - 1) / BN;

  // Prologue: Q, then K/V tiles 0 .. STAGES-2, one commit group each.
  load_tile<D, BM>(sQ, qh, m0, seqlen, tid);
  cp_async_commit();
#pragma unroll
  for (int st = 0; st < STAGES - 1; ++st) {
    if (st < n_tiles) {
      load_tile<D, BN>(sK + st * KV_BYTES, kh, st * BN, seqlen, tid);
      load_tile<D, BN>(sV + st * KV_BYTES, vh, st * BN, seqlen, tid);
    }
    cp_async_commit();  // empty groups keep the group count uniform
  }
  cp_async_wait<STAGES - 1>();  // the Q group is done
  __syncthreads();

  // Q fragments for row block mb of this warp (16 rows, all of D): lanes 0-15 address rows 0-15
  // at chunk 2kk, lanes 16-31 the same rows at chunk 2kk+1 (matrices: rows 0-7 lo, rows 8-15 lo,
  // rows 0-7 hi, rows 8-15 hi). Q_IN_REGS 0 reads them the same way inside the key loop.
#if Q_IN_REGS
  uint32_t qf[MB][KSTEPS][4];
#pragma unroll
  for (int mb = 0; mb < MB; ++mb) {
#pragma unroll
    for (int kk = 0; kk < KSTEPS; ++kk) {
      const int r = warp * WARP_M + mb * 16 + (lane % 16);
      ldmatrix_x4(qf[mb][kk], sQ + swz<D>(r, 2 * kk + lane / 16));
    }
  }
#endif

  float acc_o[MB][NBLK_O][4];
#pragma unroll
  for (int mb = 0; mb < MB; ++mb)
#pragma unroll
    for (int i = 0; i < NBLK_O; ++i) acc_o[mb][i][0] = acc_o[mb][i][1] = acc_o[mb][i][2] = acc_o[mb][i][3] = 0.f;
  float m_run[MB][2];  // running max of raw scores, rows g and g+8 of each row block
  float l_run[MB][2];  // this thread's share of the running sum of exp
#pragma unroll
  for (int mb = 0; mb < MB; ++mb) {
    m_run[mb][0] = NEG_INF;
    m_run[mb][1] = NEG_INF;
  }
#pragma unroll
  for (int mb = 0; mb < MB; ++mb) {
    l_run[mb][0] = 0.f;
    l_run[mb][1] = 0.f;
  }
  const float sl2 = scale * LOG2E;
  const int row_lo = m0 + warp * WARP_M + g;  // this thread's rows: row_lo + 16 mb and row_lo + 16 mb + 8

#if WARP_M == 32
  // Per-lane parts of the ldmatrix addresses (see swz_lo): Q and V rows use chunk bit lane / 16,
  // K rows (lane / 8) % 2.
  uint32_t x_hi[4], x_k[4];
  swz_lo(x_hi, lane, lane / 16);
  swz_lo(x_k, lane, (lane / 8) % 2);
  const uint32_t q_row = sQ + (warp * WARP_M + (lane % 16)) * (D * 2);
  const uint32_t k_row = ((lane % 8) + (lane / 16) * 8) * (D * 2);
  const uint32_t v_row = ((lane % 8) + ((lane / 8) % 2) * 8) * (D * 2);
#endif
  for (int j = 0; j < n_tiles; ++j) {
    cp_async_wait<STAGES - 2>();  // tile j has landed (for this thread's copies)...
    __syncthreads();              // ...and for everyone's; every warp is done with tile j-1
    {
      const int jn = j + STAGES - 1;  // refill the stage tile j-1 used
      if (jn < n_tiles) {
        const int st = jn % STAGES;
        load_tile<D, BN>(sK + st * KV_BYTES, kh, jn * BN, seqlen, tid);
        load_tile<D, BN>(sV + st * KV_BYTES, vh, jn * BN, seqlen, tid);
      }
      cp_async_commit();
    }
    const int n0 = j * BN;
    if (causal && n0 > m0 + warp * WARP_M + WARP_M - 1) continue;  // every key of this tile is after all the warp's rows
    const uint32_t sKj = sK + (j % STAGES) * KV_BYTES;
    const uint32_t sVj = sV + (j % STAGES) * KV_BYTES;

    // S = Q K^T for WARP_M rows x BN keys: one K fragment feeds every row block.
    float s[MB][NBLK_S][4];
#pragma unroll
    for (int mb = 0; mb < MB; ++mb)
#pragma unroll
      for (int i = 0; i < NBLK_S; ++i) s[mb][i][0] = s[mb][i][1] = s[mb][i][2] = s[mb][i][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < KSTEPS; ++kk) {
#if !Q_IN_REGS
      uint32_t qk[MB][4];  // this k-step's Q fragments, re-read from shared memory at every tile
#pragma unroll
      for (int mb = 0; mb < MB; ++mb) {
  #if WARP_M == 16
        const int r = warp * WARP_M + mb * 16 + (lane % 16);
        ldmatrix_x4(qk[mb], sQ + swz<D>(r, 2 * kk + lane / 16));
#else
        ldmatrix_x4(qk[mb], q_row + mb * 16 * (D * 2) + (kk / 4) * 128 + x_hi[kk % 4]);
#endif
      }
#endif
#pragma unroll
      for (int nb2 = 0; nb2 < NBLK_S / 2; ++nb2) {
        // matrices: keys 0-7 / d lo, keys 0-7 / d hi, keys 8-15 / d lo, keys 8-15 / d hi
        uint32_t kb[4];
#if WARP_M == 16
        const int r = nb2 * 16 + (lane % 8) + (lane / 16) * 8;
        ldmatrix_x4(kb, sKj + swz<D>(r, 2 * kk + (lane / 8) % 2));
#else
        ldmatrix_x4(kb, sKj + k_row + nb2 * 16 * (D * 2) + (kk / 4) * 128 + x_k[kk % 4]);
#endif
#pragma unroll
        for (int mb = 0; mb < MB; ++mb) {
#if Q_IN_REGS
          const uint32_t (&a)[4] = qf[mb][kk];
#else
          const uint32_t (&a)[4] = qk[mb];
#endif
          mma_bf16_16816(s[mb][2 * nb2], a, kb[0], kb[1]);
          mma_bf16_16816(s[mb][2 * nb2 + 1], a, kb[2], kb[3]);
        }
      }
    }

    // Mask keys past the sequence end and, when causal, keys after the row.
    if (n0 + BN > seqlen || (causal && n0 + BN - 1 > m0 + warp * WARP_M)) {
#pragma unroll
      for (int mb = 0; mb < MB; ++mb) {
#pragma unroll
        for (int i = 0; i < NBLK_S; ++i) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int col = n0 + i * 8 + 2 * t + (e & 1);
            const int row = row_lo + mb * 16 + (e >> 1) * 8;
            if (col >= seqlen || (causal && col > row)) s[mb][i][e] = NEG_INF;
          }
        }
      }
    }

    // Online softmax for rows g (e = 0, 1) and g + 8 (e = 2, 3) of each row block.
#pragma unroll
    for (int mb = 0; mb < MB; ++mb) {
      float mx[2] = {m_run[mb][0], m_run[mb][1]};
#pragma unroll
      for (int i = 0; i < NBLK_S; ++i) {
        mx[0] = fmaxf(mx[0], fmaxf(s[mb][i][0], s[mb][i][1]));
        mx[1] = fmaxf(mx[1], fmaxf(s[mb][i][2], s[mb][i][3]));
      }
      float corr[2], base[2], rowsum[2] = {0.f, 0.f};
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
        mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
#if RESCALE_THRESHOLD < 0
        base[h] = mx[h] == NEG_INF ? 0.f : mx[h] * sl2;  // a row with no visible key yet stays 0
        corr[h] = exp2_approx(fmaf(m_run[mb][h], sl2, -base[h]));  // m_run = -inf on the first tile: 0
        m_run[mb][h] = mx[h];
#else
        // v2's lazy rescale: keep the old max unless the new one is more than 2^RESCALE_THRESHOLD
        // larger in the exp2 domain (mx >= m_run: it started from m_run; both -inf: NaN > k is false).
        if ((mx[h] - m_run[mb][h]) * sl2 > (float)RESCALE_THRESHOLD) {
          base[h] = mx[h] * sl2;
          corr[h] = exp2_approx(fmaf(m_run[mb][h], sl2, -base[h]));
          m_run[mb][h] = mx[h];
        } else {
          base[h] = m_run[mb][h] == NEG_INF ? 0.f : m_run[mb][h] * sl2;
          corr[h] = 1.f;  // exactly: the rescale below skips the warp when every lane has 1
        }
#endif
      }
#pragma unroll
      for (int i = 0; i < NBLK_S; ++i) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          s[mb][i][e] = exp2_approx(fmaf(s[mb][i][e], sl2, -base[e >> 1]));
          rowsum[e >> 1] += s[mb][i][e];
        }
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) l_run[mb][h] = l_run[mb][h] * corr[h] + rowsum[h];
#if RESCALE_THRESHOLD >= 0
      if (!__any_sync(0xffffffffu, corr[0] != 1.f || corr[1] != 1.f)) continue;  // no row of the warp moved
#endif
#pragma unroll
      for (int i = 0; i < NBLK_O; ++i) {
        acc_o[mb][i][0] *= corr[0];
        acc_o[mb][i][1] *= corr[0];
        acc_o[mb][i][2] *= corr[1];
        acc_o[mb][i][3] *= corr[1];
      }
    }

    // O += P V. P's A fragment for keys 16kk..16kk+15 is S blocks 2kk and 2kk+1, rounded to bf16;
    // one V fragment feeds every row block.
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      uint32_t pf[MB][4];
#pragma unroll
      for (int mb = 0; mb < MB; ++mb) {
        pf[mb][0] = pack_bf16(s[mb][2 * kk][0], s[mb][2 * kk][1]);
        pf[mb][1] = pack_bf16(s[mb][2 * kk][2], s[mb][2 * kk][3]);
        pf[mb][2] = pack_bf16(s[mb][2 * kk + 1][0], s[mb][2 * kk + 1][1]);
        pf[mb][3] = pack_bf16(s[mb][2 * kk + 1][2], s[mb][2 * kk + 1][3]);
      }
#pragma unroll
      for (int db2 = 0; db2 < NBLK_O / 2; ++db2) {
        // matrices (transposed): keys 0-7 / d lo, keys 8-15 / d lo, keys 0-7 / d hi, keys 8-15 / d hi
        uint32_t vb[4];
#if WARP_M == 16
        const int r = kk * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
        ldmatrix_x4_trans(vb, sVj + swz<D>(r, 2 * db2 + lane / 16));
#else
        ldmatrix_x4_trans(vb, sVj + v_row + kk * 16 * (D * 2) + (db2 / 4) * 128 + x_hi[db2 % 4]);
#endif
#pragma unroll
        for (int mb = 0; mb < MB; ++mb) {
          mma_bf16_16816(acc_o[mb][2 * db2], pf[mb], vb[0], vb[1]);
          mma_bf16_16816(acc_o[mb][2 * db2 + 1], pf[mb], vb[2], vb[3]);
        }
      }
    }
  }
  cp_async_wait<0>();  // no copy may still target shared memory when the block exits

  // Epilogue: the 4 lanes of a quad hold parts of the same two rows' sums.
#pragma unroll
  for (int mb = 0; mb < MB; ++mb) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float l = l_run[mb][h];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      const bool empty = !(l > 0.f);  // no visible key (cannot happen for S >= 1) or NaN
      const float inv = empty ? 1.f : 1.f / l;
      const int row = row_lo + mb * 16 + h * 8;
      if (row < seqlen) {
        __nv_bfloat16* orow = o + head + (size_t)row * D;
#pragma unroll
        for (int i = 0; i < NBLK_O; ++i) {
          *reinterpret_cast<uint32_t*>(orow + i * 8 + 2 * t) =
              pack_bf16(acc_o[mb][i][2 * h] * inv, acc_o[mb][i][2 * h + 1] * inv);
        }
        if (t == 0) lse[(size_t)blockIdx.y * seqlen + row] = empty ? NEG_INF : m_run[mb][h] * scale + logf(l);
      }
    }
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    attention_bf16(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                   const __nv_bfloat16* __restrict__ v, __nv_bfloat16* __restrict__ o, float* __restrict__ lse,
                   int seqlen, int head_dim, int causal, float scale) {
  if (head_dim == 128) {
    attention_fwd<128>(q, k, v, o, lse, seqlen, causal, scale);
  } else if (head_dim == 64) {
    attention_fwd<64>(q, k, v, o, lse, seqlen, causal, scale);
  } else {
    __trap();  // the host refuses other head dims (op.validate_tensors)
  }
}
