// v2_wgmma_pingpong: Hopper (sm_90a) FlashAttention-3 style: wgmma for both GEMMs, a producer
// warpgroup filling an mbarrier ring, two consumer warpgroups whose softmax overlaps the GEMMs.
//
// What changed from v1: the tensor-core path and who does what.
//   - wgmma (HGMMA): S = Q K^T with both operands read by the tensor cores straight from shared
//     memory (no ldmatrix, no register copy of Q or K), and O += P V with P from registers (the
//     S accumulator layout is the A-operand layout) and V from shared memory read transposed by
//     the hardware (V is [key][d]: an MN-major B operand, "trans-b"). One warpgroup instruction
//     is a 64 x N x 16 product; the smem operands use the 128-byte swizzle (16-byte chunk ^ row % 8
//     inside 1024-byte atoms), described by 64-bit matrix descriptors.
//   - Warp specialisation: 384 threads = warpgroup 0, the producer (setmaxnreg down to 40
//     registers), and warpgroups 1 and 2, the consumers (setmaxnreg up to 232), each owning 64 of
//     the block's 128 query rows. The producer loads Q once and K/V tiles of 128 keys into a ring
//     of 2 stages (D = 128; 3 at D = 64) with separate full/empty mbarriers for K and for V.
//   - Loads: plain cp.async (16 bytes per thread, 128 producer threads, written pre-swizzled),
//     completion signalled by cp.async.mbarrier.arrive. Why not TMA: a tensor map is a host-side
//     descriptor per tensor and call, and kernelab.gpu had no way to make or pass one when this
//     kernel was designed (gemm's gpu/tensormap.py, 2-D maps only, appeared as it was finished);
//     and cp.async.bulk (1-D) cannot write the swizzled layout wgmma wants. This is the path
//     FlashAttention-3 itself takes for paged K/V (a producer warpgroup issuing cp.async +
//     cp.async.mbarrier.arrive, consumers running wgmma on the result with no proxy fence). Its
//     cost: ~160 LDGSTS + address warp-instructions per K/V tile pair on the consumers' schedulers
//     (~5% of their issue slots) and 40 registers x 128 threads. A 3-D TMA map [B*H, S, D] (rows
//     past S read as zeros) is the next step.
//   - Overlap (FA3's two levels): inside a warpgroup, iteration n issues S_n = Q K_n^T and
//     O += P_{n+1} V_{n+1} back to back, then does the softmax of S_n while the P V product runs
//     (wgmma.wait_group 1); between the two warpgroups, named barriers 1 and 2 make them take turns
//     issuing their GEMM pair (ping-pong), so one warpgroup's softmax (exp2 on the MUFU unit) runs
//     while the other's GEMMs occupy the tensor cores. (As compiled with the defaults, ptxas moves
//     the wait for P V above the softmax, so only the ping-pong level is real: see ORDER_SOFTMAX.)
//   - Key tiles are walked from last to first (as FA3 does), so the tiles that need the causal or
//     sequence-end mask come first; the rows' running max starts at -inf and a tile that hides
//     every key of a row leaves it at -inf without NaNs (exp2 of -inf is 0, the scale base is 0).
// Why it is faster: on H100/H200 mma.sync reaches about 2/3 of the tensor-core peak and needs
//   ldmatrix traffic through the register file; wgmma reaches the full 990 TFLOP/s class peak
//   with operands from shared memory, and the ping-pong hides the softmax (about half the time of
//   the GEMMs at D = 128 if run serially: 2 x 64 x 128 exps per tile at 16 per SM per clock is 1024
//   clocks, against 2048 for the 8.4 MFLOP of the tile at 4096 FLOP per SM per clock).
// Predicted: FA3 reports 610-660 TFLOP/s at D = 128 with TMA and a persistent scheduler; without
//   those (no epilogue overlap, cp.async), about 540-600 TFLOP/s non-causal and 480-560 causal at
//   B4 H32 S4096 D128, i.e. 0.9-0.97x SDPA's default (ANCHORS: 622 / 589), ~1.6x v1.
// Measured: BENCHMARKS.md, attention rows (generated from results JSON).
//
// Tuning knobs (macros; the defaults below are the code measured above, and the header's
//   @block / @smem lines are their geometry: op.defines passes them as EXPECT_* and the kernel
//   refuses to compile if they disagree). scripts/sweep_attention.py times the alternatives.
//   BLOCK_N (128): keys per K/V tile, a multiple of 16 in 64..192. S costs BLOCK_N / 2 fp32
//     registers per consumer thread and P BLOCK_N / 4; FA3 uses 176 at D = 128 with 240 registers.
//   STAGES_D128 (2), STAGES_D64 (3): K/V ring depth per head dim (D = 128, BLOCK_N = 128 fits 3).
//   PRODUCER_REGS (40), CONSUMER_REGS (232): setmaxnreg targets; 128 P + 256 C must not exceed the
//     64512 registers the block starts with (384 x 168), or the consumers' setmaxnreg waits forever.
//   PINGPONG (1): named barriers make the two consumer warpgroups take turns issuing their GEMMs.
//   INTRA_WG_OVERLAP (1): issue S_n = Q K_n^T and O += P_{n+1} V_{n+1} back to back and do the
//     softmax of S_n while P V runs; 0 is FA3's non-overlapped step (each GEMM waited for at once).
//   ORDER_SOFTMAX (0): 1 makes that overlap real. Without it ptxas (NVRTC 13.x) schedules the
//     `wgmma.wait_group 0` that ends P V right after the S mask, before the row max: in the SASS
//     of the defaults no MUFU.EX2 of the loop lies between the two waits, so the softmax runs after
//     P V has finished, not under it. With 1, a one-warp named barrier whose id depends on the
//     row sums sits between the softmax and the wait; ptxas does not move a wgmma wait above a
//     barrier, and the barrier needs every exp first (tests/cpu/test_attention_tuning.py checks it).
//   SOFTMAX_ILP (1): independent partial accumulators for the row max and row sum (1 = one chain
//     of 16 FMNMX / 32 FADD per row, as measured; 2 or 4 shorten the latency chains).
//   RESCALE_THRESHOLD (-1): -1 rescales O and l by exp2(m_old - m_new) every tile. k >= 0 keeps
//     the old row max until a tile's max exceeds it by more than 2^k (in the exp2 domain, so P <= 2^k
//     in bf16) and skips the 64 multiplies of O when no row of the warp moved (FA4's lazy rescale).
//   Two consumer warpgroups are fixed: a third (BLOCK_M 192, 160 registers each, FA3's D = 64
//     shape) cannot hold S, P and O at D = 128 (64 + 32 + 64 = 160 before any address).
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
#define PRODUCER_REGS 40
#endif
#ifndef CONSUMER_REGS
#define CONSUMER_REGS 232
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
#include "sm90_fa3.cuh"  // layout, barriers, wgmma, softmax, producer and consumers (shared with v3)

extern "C" __global__ void __launch_bounds__(384, 1)
    attention_bf16(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                   const __nv_bfloat16* __restrict__ v, __nv_bfloat16* __restrict__ o, float* __restrict__ lse,
                   int seqlen, int head_dim, int causal, float scale) {
  extern __shared__ __align__(1024) uint8_t smem[];
  if (head_dim != 128 && head_dim != 64) __trap();  // the host refuses other head dims
  const bool d128 = head_dim == 128;
  const uint32_t base = smem_base(smem, d128);
  const Barriers bar = setup_barriers(base, d128);

  const int m_block = causal ? (gridDim.x - 1 - blockIdx.x) : blockIdx.x;  // heaviest causal blocks first
  const int m0 = m_block * BM;
  const int n_max = causal ? (min(seqlen, m0 + BM) + BN - 1) / BN : (seqlen + BN - 1) / BN;
  const size_t head = (size_t)blockIdx.y * seqlen * head_dim;

  if (threadIdx.x < 128) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS));
    if (d128) {
      producer<128>(base, bar, q + head, k + head, v + head, m0, n_max, seqlen);
    } else {
      producer<64>(base, bar, q + head, k + head, v + head, m0, n_max, seqlen);
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS));
    const int wg = threadIdx.x / 128 - 1;
#if PINGPONG
    if (wg == 0) named_bar_arrive(1, 256);  // warpgroup 1 (wg 0) takes the first turn at the GEMMs
#endif
    if (d128) {
      consumer<128>(wg, base, bar, o, lse, m0, n_max, seqlen, causal, scale, blockIdx.y, 0, 0);
    } else {
      consumer<64>(wg, base, bar, o, lse, m0, n_max, seqlen, causal, scale, blockIdx.y, 0, 0);
    }
  }
}
