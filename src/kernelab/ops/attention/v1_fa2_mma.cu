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
// Measured: BENCHMARKS.md, attention rows (generated from results JSON).
//
// @block 256
// @block_m 128
// @smem_d64 65536
// @smem_d128 131072
#include <cuda_bf16.h>

// NVRTC has no <math.h> INFINITY: -inf as its IEEE bit pattern.
#define NEG_INF __int_as_float(0xff800000u)
// NVRTC has no <stdint.h>; identical typedefs are legal where it exists (nvcc).
typedef unsigned char uint8_t;
typedef unsigned int uint32_t;

namespace {

constexpr int BM = 128;                 // query rows per block
constexpr int BN = 64;                  // keys per tile
constexpr int WARPS = 8;                // 16 query rows each
constexpr int THREADS = WARPS * 32;
constexpr int STAGES = 3;               // K/V tiles in the cp.async ring
constexpr float LOG2E = 1.4426950408889634f;

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

  // Q fragments for this warp's 16 rows, all of D: lanes 0-15 address rows 0-15 at chunk 2kk,
  // lanes 16-31 the same rows at chunk 2kk+1 (matrices: rows 0-7 lo, rows 8-15 lo, rows 0-7 hi, rows 8-15 hi).
  uint32_t qf[KSTEPS][4];
#pragma unroll
  for (int kk = 0; kk < KSTEPS; ++kk) {
    const int r = warp * 16 + (lane % 16);
    ldmatrix_x4(qf[kk], sQ + swz<D>(r, 2 * kk + lane / 16));
  }

  float acc_o[NBLK_O][4];
#pragma unroll
  for (int i = 0; i < NBLK_O; ++i) acc_o[i][0] = acc_o[i][1] = acc_o[i][2] = acc_o[i][3] = 0.f;
  float m_run[2] = {NEG_INF, NEG_INF};  // running max of raw scores, rows g and g+8
  float l_run[2] = {0.f, 0.f};              // this thread's share of the running sum of exp
  const float sl2 = scale * LOG2E;
  const int row_lo = m0 + warp * 16 + g;     // this thread's rows: row_lo and row_lo + 8

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
    if (causal && n0 > m0 + warp * 16 + 15) continue;  // every key of this tile is after all 16 rows
    const uint32_t sKj = sK + (j % STAGES) * KV_BYTES;
    const uint32_t sVj = sV + (j % STAGES) * KV_BYTES;

    // S = Q K^T for 16 rows x 64 keys.
    float s[NBLK_S][4];
#pragma unroll
    for (int i = 0; i < NBLK_S; ++i) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < KSTEPS; ++kk) {
#pragma unroll
      for (int nb2 = 0; nb2 < NBLK_S / 2; ++nb2) {
        // matrices: keys 0-7 / d lo, keys 0-7 / d hi, keys 8-15 / d lo, keys 8-15 / d hi
        const int r = nb2 * 16 + (lane % 8) + (lane / 16) * 8;
        uint32_t kb[4];
        ldmatrix_x4(kb, sKj + swz<D>(r, 2 * kk + (lane / 8) % 2));
        mma_bf16_16816(s[2 * nb2], qf[kk], kb[0], kb[1]);
        mma_bf16_16816(s[2 * nb2 + 1], qf[kk], kb[2], kb[3]);
      }
    }

    // Mask keys past the sequence end and, when causal, keys after the row.
    if (n0 + BN > seqlen || (causal && n0 + BN - 1 > m0 + warp * 16)) {
#pragma unroll
      for (int i = 0; i < NBLK_S; ++i) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int col = n0 + i * 8 + 2 * t + (e & 1);
          const int row = row_lo + (e >> 1) * 8;
          if (col >= seqlen || (causal && col > row)) s[i][e] = NEG_INF;
        }
      }
    }

    // Online softmax for rows g (e = 0, 1) and g + 8 (e = 2, 3).
    float mx[2] = {m_run[0], m_run[1]};
#pragma unroll
    for (int i = 0; i < NBLK_S; ++i) {
      mx[0] = fmaxf(mx[0], fmaxf(s[i][0], s[i][1]));
      mx[1] = fmaxf(mx[1], fmaxf(s[i][2], s[i][3]));
    }
    float corr[2], base[2], rowsum[2] = {0.f, 0.f};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
      base[h] = mx[h] == NEG_INF ? 0.f : mx[h] * sl2;  // a row with no visible key yet stays 0
      corr[h] = exp2_approx(fmaf(m_run[h], sl2, -base[h]));  // m_run = -inf on the first tile: 0
      m_run[h] = mx[h];
    }
#pragma unroll
    for (int i = 0; i < NBLK_S; ++i) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[i][e] = exp2_approx(fmaf(s[i][e], sl2, -base[e >> 1]));
        rowsum[e >> 1] += s[i][e];
      }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) l_run[h] = l_run[h] * corr[h] + rowsum[h];
#pragma unroll
    for (int i = 0; i < NBLK_O; ++i) {
      acc_o[i][0] *= corr[0];
      acc_o[i][1] *= corr[0];
      acc_o[i][2] *= corr[1];
      acc_o[i][3] *= corr[1];
    }

    // O += P V. P's A fragment for keys 16kk..16kk+15 is S blocks 2kk and 2kk+1, rounded to bf16.
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      uint32_t pf[4];
      pf[0] = pack_bf16(s[2 * kk][0], s[2 * kk][1]);
      pf[1] = pack_bf16(s[2 * kk][2], s[2 * kk][3]);
      pf[2] = pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]);
      pf[3] = pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3]);
#pragma unroll
      for (int db2 = 0; db2 < NBLK_O / 2; ++db2) {
        // matrices (transposed): keys 0-7 / d lo, keys 8-15 / d lo, keys 0-7 / d hi, keys 8-15 / d hi
        const int r = kk * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
        uint32_t vb[4];
        ldmatrix_x4_trans(vb, sVj + swz<D>(r, 2 * db2 + lane / 16));
        mma_bf16_16816(acc_o[2 * db2], pf, vb[0], vb[1]);
        mma_bf16_16816(acc_o[2 * db2 + 1], pf, vb[2], vb[3]);
      }
    }
  }
  cp_async_wait<0>();  // no copy may still target shared memory when the block exits

  // Epilogue: the 4 lanes of a quad hold parts of the same two rows' sums.
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float l = l_run[h];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    const bool empty = !(l > 0.f);  // no visible key (cannot happen for S >= 1) or NaN
    const float inv = empty ? 1.f : 1.f / l;
    const int row = row_lo + h * 8;
    if (row < seqlen) {
      __nv_bfloat16* orow = o + head + (size_t)row * D;
#pragma unroll
      for (int i = 0; i < NBLK_O; ++i) {
        *reinterpret_cast<uint32_t*>(orow + i * 8 + 2 * t) =
            pack_bf16(acc_o[i][2 * h] * inv, acc_o[i][2 * h + 1] * inv);
      }
      if (t == 0) lse[(size_t)blockIdx.y * seqlen + row] = empty ? NEG_INF : m_run[h] * scale + logf(l);
    }
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS, 1)
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
