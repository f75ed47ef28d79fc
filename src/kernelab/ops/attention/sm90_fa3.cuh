// sm90_fa3.cuh: the FlashAttention-3 style machinery attention v2 and v3 share (sm_90a): the
// shared-memory layout, mbarriers, wgmma (SS for S = Q K^T, RS for O += P V), the online softmax,
// the cp.async producer (v2) and the consumer warpgroups (both). The including variant defines its
// knobs first (BLOCK_N, STAGES_D128, STAGES_D64, PRODUCER_REGS, CONSUMER_REGS, PINGPONG,
// INTRA_WG_OVERLAP, ORDER_SOFTMAX, SOFTMAX_ILP, RESCALE_THRESHOLD: v2's header says what each does)
// and, for v3, FA_TMA_LOADS (full barriers count one expect_tx arrival instead of 128 cp.async
// arrivals) and FA_PERSISTENT (a block runs several tiles: the consumers hand Q's buffer back
// through an empty_q barrier). Shared so the two variants differ only in what v3 adds.
#pragma once
#ifndef FA_TMA_LOADS
#define FA_TMA_LOADS 0
#endif
#ifndef FA_PERSISTENT
#define FA_PERSISTENT 0
#endif

// NVRTC has no <math.h> INFINITY or <stdint.h>; identical typedefs are legal where they exist.
#define NEG_INF __int_as_float(0xff800000u)
typedef unsigned char uint8_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;

namespace {

constexpr int BM = 128;               // query rows per block (64 per consumer warpgroup)
constexpr int BN = BLOCK_N;           // keys per tile
constexpr int CONSUMER_WARPS = 8;     // arrivals that free a stage (one per consumer warp)
// setmaxnreg: the block starts with 384 x 168 = 64512 registers (__launch_bounds__(384, 1)); the
// defaults move them to 128 x 40 + 256 x 232 = 64512.
static_assert(128 * PRODUCER_REGS + 256 * CONSUMER_REGS <= 384 * 168,
              "PRODUCER_REGS / CONSUMER_REGS ask for more registers than the block has: setmaxnreg.inc would wait forever");
static_assert(PRODUCER_REGS % 8 == 0 && CONSUMER_REGS % 8 == 0 && PRODUCER_REGS >= 24 && CONSUMER_REGS <= 256,
              "setmaxnreg takes a multiple of 8 in 24..256");
static_assert(BN % 16 == 0 && BN >= 64 && BN <= 192, "BLOCK_N: a multiple of 16 (P V k-steps) in 64..192");
static_assert(SOFTMAX_ILP == 1 || SOFTMAX_ILP == 2 || SOFTMAX_ILP == 4, "SOFTMAX_ILP: 1, 2 or 4");
static_assert(RESCALE_THRESHOLD >= -1 && RESCALE_THRESHOLD <= 16, "RESCALE_THRESHOLD: -1 (off) or 0..16");
constexpr int PRODUCER_THREADS = 128;
constexpr float LOG2E = 1.4426950408889634f;

// Shared memory, from a 1024-byte-aligned base (the 128-byte swizzle repeats every 1024 bytes and
// the hardware applies it to absolute address bits 4-6 ^ 7-9):
//   Q [D/64][BM][64] | K [STAGES][D/64][BN][64] | V [STAGES][D/64][BN][64] | mbarriers
// Each [rows][64] slab is a K-major SW128 operand: row r, 16-byte chunk c at r*128 + ((c ^ r%8) << 4).
template <int D>
struct Layout {
  static constexpr int STAGES = D == 128 ? STAGES_D128 : STAGES_D64;
  static constexpr uint32_t Q_BYTES = BM * D * 2;
  static constexpr uint32_t KV_BYTES = BN * D * 2;  // one K (or V) tile
  static constexpr uint32_t K_OFF = Q_BYTES;
  static constexpr uint32_t V_OFF = K_OFF + STAGES * KV_BYTES;
  static constexpr uint32_t BAR_OFF = V_OFF + STAGES * KV_BYTES;
  static constexpr uint32_t BAR_BYTES = 128;         // 2 + 4 * STAGES barriers of 8 bytes, rounded up
  static constexpr uint32_t SMEM = BAR_OFF + BAR_BYTES + 1024;  // + alignment slack; = the header's @smem_dD
  static_assert(8 * (2 + 4 * STAGES) <= BAR_BYTES, "barriers do not fit");
};
static_assert(Layout<128>::SMEM <= 232448 && Layout<64>::SMEM <= 232448,
              "shared memory over the 227 KiB one block may use on sm_90: lower BLOCK_N or the stages");
// The launch geometry the host uses (the header's lines, or the sweep's computed values).
#ifdef EXPECT_SMEM_D128
static_assert(Layout<128>::SMEM == EXPECT_SMEM_D128, "@smem_d128 (EXPECT_SMEM_D128) disagrees with the macros");
#endif
#ifdef EXPECT_SMEM_D64
static_assert(Layout<64>::SMEM == EXPECT_SMEM_D64, "@smem_d64 (EXPECT_SMEM_D64) disagrees with the macros");
#endif
#ifdef EXPECT_BLOCK
static_assert(EXPECT_BLOCK == 384, "@block (EXPECT_BLOCK) must be 384: a producer and two consumer warpgroups");
#endif
#ifdef EXPECT_BLOCK_M
static_assert(EXPECT_BLOCK_M == BM, "@block_m (EXPECT_BLOCK_M) must be 128");
#endif

// mbarrier addresses: full_q, then full_k[s], empty_k[s], full_v[s], empty_v[s], then empty_q.
struct Barriers {
  uint32_t base;
  int stages;
  __device__ uint32_t full_q() const { return base; }
  __device__ uint32_t full_k(int s) const { return base + 8 * (1 + s); }
  __device__ uint32_t empty_k(int s) const { return base + 8 * (1 + stages + s); }
  __device__ uint32_t full_v(int s) const { return base + 8 * (1 + 2 * stages + s); }
  __device__ uint32_t empty_v(int s) const { return base + 8 * (1 + 3 * stages + s); }
  __device__ uint32_t empty_q() const { return base + 8 * (1 + 4 * stages); }  // FA_PERSISTENT only
};

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarrier ---------------------------------------------------------------------------
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(bar) : "memory");
}
// Blocks until the phase with parity `parity` has completed. A fresh barrier is in phase 0, so
// waiting for parity 1 returns at once (the "previous" phase counts as complete): producers
// start their empty-barrier waits at parity 1, consumers their full-barrier waits at 0.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      " .reg .pred P1;\n"
      "WAIT_LOOP:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
      " @P1 bra WAIT_DONE;\n"
      " bra WAIT_LOOP;\n"
      "WAIT_DONE:\n"
      "}\n" ::"r"(bar), "r"(parity) : "memory");
}

// ---- cp.async ----------------------------------------------------------------------------
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
// Arrive on `bar` when all of this thread's earlier cp.async have landed. Without .noinc it first
// adds one to the pending count, so the thread also arrives normally (mbar_arrive) and the barrier
// counts PRODUCER_THREADS arrivals per phase (FA3 / CUTLASS producer_commit(cpasync_barrier_arrive)).
__device__ __forceinline__ void cp_async_arrive(uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

// ---- named barriers (ids 1, 2: the consumer warpgroups' turns) -------------------------------
__device__ __forceinline__ void named_bar_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_bar_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// ---- wgmma ---------------------------------------------------------------------------------
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving reads or writes of these registers across an asynchronous
// wgmma boundary (CUTLASS's warpgroup_fence_operand).
template <int N>
__device__ __forceinline__ void reg_fence(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N>
__device__ __forceinline__ void reg_fence(uint32_t (&r)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) asm volatile("" : "+r"(r[i][j])::"memory");
}

// Shared-memory matrix descriptor, 128-byte swizzle: bits 0-13 address >> 4, 16-29 leading byte
// offset >> 4, 32-45 stride byte offset >> 4, 62-63 = 1 (SW128). Base offset 0: every tile starts
// on a 1024-byte boundary; K-steps inside a swizzle atom move the start address by 32 bytes, as
// CUTLASS's descriptor iterator does.
__device__ __forceinline__ uint64_t sw128_desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)((lbo & 0x3FFFF) >> 4) << 16) |
         ((uint64_t)((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}

#define ACC8(b) "+f"(d[b + 0]), "+f"(d[b + 1]), "+f"(d[b + 2]), "+f"(d[b + 3]), \
                "+f"(d[b + 4]), "+f"(d[b + 5]), "+f"(d[b + 6]), "+f"(d[b + 7])

// D[64 x N] (+)= A[64 x 16] B[16 x N], A and B K-major in shared memory; N = BLOCK_N.
// Accumulator fragment (warp w of the warpgroup, g = lane / 4, t = lane % 4): d[4i + e] is
// row 16w + g + 8 (e / 2), column 8i + 2t + (e % 2).
template <int N>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], uint64_t a_desc, uint64_t b_desc, int accumulate);
template <>
__device__ __forceinline__ void wgmma_ss<64>(float (&d)[32], uint64_t a_desc, uint64_t b_desc, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
      "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "%32, %33, p, 1, 1, 0, 0;\n"
      "}\n"
      : ACC8(0), ACC8(8), ACC8(16), ACC8(24)
      : "l"(a_desc), "l"(b_desc), "r"(accumulate));
}
template <>
__device__ __forceinline__ void wgmma_ss<96>(float (&d)[48], uint64_t a_desc, uint64_t b_desc, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %50, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n96k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
      "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, "
      "%42, %43, %44, %45, %46, %47}, "
      "%48, %49, p, 1, 1, 0, 0;\n"
      "}\n"
      : ACC8(0), ACC8(8), ACC8(16), ACC8(24), ACC8(32), ACC8(40)
      : "l"(a_desc), "l"(b_desc), "r"(accumulate));
}
template <>
__device__ __forceinline__ void wgmma_ss<128>(float (&d)[64], uint64_t a_desc, uint64_t b_desc, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
      "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, "
      "%42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, "
      "%63}, "
      "%64, %65, p, 1, 1, 0, 0;\n"
      "}\n"
      : ACC8(0), ACC8(8), ACC8(16), ACC8(24), ACC8(32), ACC8(40), ACC8(48), ACC8(56)
      : "l"(a_desc), "l"(b_desc), "r"(accumulate));
}
template <>
__device__ __forceinline__ void wgmma_ss<144>(float (&d)[72], uint64_t a_desc, uint64_t b_desc, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %74, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n144k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
      "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, "
      "%42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, "
      "%63, %64, %65, %66, %67, %68, %69, %70, %71}, "
      "%72, %73, p, 1, 1, 0, 0;\n"
      "}\n"
      : ACC8(0), ACC8(8), ACC8(16), ACC8(24), ACC8(32), ACC8(40), ACC8(48), ACC8(56), ACC8(64)
      : "l"(a_desc), "l"(b_desc), "r"(accumulate));
}
template <>
__device__ __forceinline__ void wgmma_ss<160>(float (&d)[80], uint64_t a_desc, uint64_t b_desc, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %82, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n160k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
      "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, "
      "%42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, "
      "%63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79}, "
      "%80, %81, p, 1, 1, 0, 0;\n"
      "}\n"
      : ACC8(0), ACC8(8), ACC8(16), ACC8(24), ACC8(32),
        ACC8(40), ACC8(48), ACC8(56), ACC8(64), ACC8(72)
      : "l"(a_desc), "l"(b_desc), "r"(accumulate));
}
template <>
__device__ __forceinline__ void wgmma_ss<176>(float (&d)[88], uint64_t a_desc, uint64_t b_desc, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %90, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n176k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
      "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, "
      "%42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, "
      "%63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, "
      "%84, %85, %86, %87}, "
      "%88, %89, p, 1, 1, 0, 0;\n"
      "}\n"
      : ACC8(0), ACC8(8), ACC8(16), ACC8(24), ACC8(32), ACC8(40),
        ACC8(48), ACC8(56), ACC8(64), ACC8(72), ACC8(80)
      : "l"(a_desc), "l"(b_desc), "r"(accumulate));
}
template <>
__device__ __forceinline__ void wgmma_ss<192>(float (&d)[96], uint64_t a_desc, uint64_t b_desc, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %98, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
      "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, "
      "%42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, "
      "%63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, "
      "%84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, "
      "%96, %97, p, 1, 1, 0, 0;\n"
      "}\n"
      : ACC8(0), ACC8(8), ACC8(16), ACC8(24), ACC8(32), ACC8(40),
        ACC8(48), ACC8(56), ACC8(64), ACC8(72), ACC8(80), ACC8(88)
      : "l"(a_desc), "l"(b_desc), "r"(accumulate));
}

// D[64 x 128] += A[64 x 16] B[16 x 128], A in registers (the m16n8k16 A layout per warp: a[0] =
// row g, k 2t..2t+1; a[1] = row g+8; a[2] = row g, k 2t+8..; a[3] = row g+8, k 2t+8..), B MN-major
// in shared memory (imm-trans-b = 1).
__device__ __forceinline__ void wgmma_rs_m64n128_tb(float (&d)[64], const uint32_t (&a)[4], uint64_t b_desc) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, "
      "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, "
      "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "{%64, %65, %66, %67}, %68, p, 1, 1, 1;\n"
      "}\n"
      : ACC8(0), ACC8(8), ACC8(16), ACC8(24), ACC8(32), ACC8(40), ACC8(48), ACC8(56)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1));
}

// The same with N = 64 (head dim 64).
__device__ __forceinline__ void wgmma_rs_m64n64_tb(float (&d)[32], const uint32_t (&a)[4], uint64_t b_desc) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, "
      "%23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "{%32, %33, %34, %35}, %36, p, 1, 1, 1;\n"
      "}\n"
      : ACC8(0), ACC8(8), ACC8(16), ACC8(24)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1));
}
#undef ACC8

__device__ __forceinline__ float exp2_approx(float x) {  // ex2.approx(-inf) = +0
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {  // lo -> bits 0..15 (lower column)
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// ---- producer: warpgroup 0 (v2: cp.async; v3 brings its TMA producer) --------------------------
#if !FA_TMA_LOADS
// Copies rows [row0, row0 + ROWS) of a [seqlen][D] matrix into the [D/64][ROWS][64] SW128 layout;
// rows past seqlen become zeros (never garbage: 0 * NaN would poison O through P V).
template <int D, int ROWS>
__device__ __forceinline__ void load_tile(uint32_t s_tile, const __nv_bfloat16* g, int row0, int seqlen, int ptid) {
  constexpr int CPR = D / 8;                     // 16-byte chunks per row: 16 or 8
  constexpr int RPP = PRODUCER_THREADS / CPR;    // rows per pass: 8 or 16 (a multiple of 8, so r % 8 is fixed)
  static_assert(ROWS % RPP == 0, "tile rows must be a multiple of the rows one pass covers");
  const int c = ptid % CPR, r_in = ptid / CPR;
  const uint32_t dst0 = s_tile + (c / 8) * (ROWS * 128) + r_in * 128 + (((c % 8) ^ (r_in % 8)) << 4);
#pragma unroll
  for (int p = 0; p < ROWS / RPP; ++p) {
    const int gr = row0 + r_in + p * RPP;
    const bool ok = gr < seqlen;
    cp_async_16(dst0 + p * RPP * 128, g + (size_t)(ok ? gr : 0) * D + c * 8, ok ? 16 : 0);
  }
}

template <int D>
__device__ __forceinline__ void producer(uint32_t base, const Barriers& bar, const __nv_bfloat16* qh,
                                         const __nv_bfloat16* kh, const __nv_bfloat16* vh, int m0, int n_max,
                                         int seqlen) {
  using L = Layout<D>;
  const int ptid = threadIdx.x;  // 0..127
  // Tile n of K (and of V) goes to ring slot it % STAGES, where it counts tiles from the last one.
  auto load_k = [&](int n, int it) {
    const int st = it % L::STAGES;
    mbar_wait(bar.empty_k(st), ((it / L::STAGES) & 1) ^ 1);
    load_tile<D, BN>(base + L::K_OFF + st * L::KV_BYTES, kh, n * BN, seqlen, ptid);
    cp_async_arrive(bar.full_k(st));
    mbar_arrive(bar.full_k(st));
  };
  auto load_v = [&](int n, int it) {
    const int st = it % L::STAGES;
    mbar_wait(bar.empty_v(st), ((it / L::STAGES) & 1) ^ 1);
    load_tile<D, BN>(base + L::V_OFF + st * L::KV_BYTES, vh, n * BN, seqlen, ptid);
    cp_async_arrive(bar.full_v(st));
    mbar_arrive(bar.full_v(st));
  };
  // The consumers' order: S for tile n_max-1 first, then (S for n, P V for n+1) pairs. V lags K
  // by one tile, as in FA3's producer (INTRA_WG_OVERLAP 0 reads V_n after S_n: the same order).
  load_k(n_max - 1, 0);
  load_tile<D, BM>(base, qh, m0, seqlen, ptid);
  cp_async_arrive(bar.full_q());
  mbar_arrive(bar.full_q());
  int it = 0;
  for (int n = n_max - 2; n >= 0; --n) {
    load_k(n, it + 1);
    load_v(n + 1, it);
    ++it;
  }
  load_v(0, it);
  asm volatile("cp.async.wait_all;\n" ::: "memory");  // leave no copy in flight behind this thread
}

#endif  // !FA_TMA_LOADS

// ---- consumers: warpgroups 1 and 2 -----------------------------------------------------------
#if ORDER_SOFTMAX
// A one-warp named barrier (ids 3..10, one per consumer warp; 0 is __syncthreads, 1 and 2 the
// turns) whose id is computed from `dep`: the barrier cannot issue before `dep` exists, and ptxas
// keeps a later wgmma.wait_group below it. The id never changes in practice (no row sum has that
// bit pattern, a NaN no FADD produces); if it did, the warp would just use the next id, another
// 32-thread barrier that it alone completes.
__device__ __forceinline__ void order_after(float dep, int bar_id) {
  const int id = bar_id + (__any_sync(0xffffffffu, __float_as_uint(dep) == 0x7fbadbadu) ? 1 : 0);  // warp-uniform
  asm volatile("bar.sync %0, 32;\n" ::"r"(id) : "memory");
}
#endif

// One 128-row tile (this warpgroup's 64 rows of it) of head `bh`. Its K/V tiles occupy ring
// positions kv0 .. kv0 + n_max - 1 (kv0 = 0 with one tile per block), Q's buffer holds its rows once
// full_q completes the phase of parity q_parity. The named-barrier turns (PINGPONG) continue from
// tile to tile: the caller gives warpgroup 0 the first turn once per block.
template <int D>
__device__ __forceinline__ void consumer(int wg, uint32_t base, const Barriers& bar, __nv_bfloat16* __restrict__ o,
                                         float* __restrict__ lse, int m0, int n_max, int seqlen, int causal,
                                         float scale, uint32_t bh, uint32_t q_parity, int kv0) {
  using L = Layout<D>;
  constexpr int KSTEPS_S = D / 16;    // k16 steps of Q K^T
  constexpr int KSTEPS_O = BN / 16;   // k16 steps of P V
  constexpr int NACC_O = D / 2;       // fp32 O accumulators per thread (64 x D over 128 threads)
  constexpr int NACC_S = BN / 2;      // fp32 S accumulators per thread (64 x BN over 128 threads)
  const int tid = threadIdx.x - 128 * (wg + 1);
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int row_lo = m0 + 64 * wg + 16 * warp + g;  // this thread's rows: row_lo, row_lo + 8
  const float sl2 = scale * LOG2E;

  float s[NACC_S];      // S tile: 64 rows x BN keys over the warpgroup
  float acc[NACC_O];    // O: 64 rows x D
  uint32_t p[KSTEPS_O][4];  // P as bf16 A fragments
#pragma unroll
  for (int i = 0; i < NACC_O; ++i) acc[i] = 0.f;
  float m_run[2] = {NEG_INF, NEG_INF};
  float l_run[2] = {0.f, 0.f};
  float corr[2];

  const uint32_t q_wg = base + wg * 64 * 128;  // this warpgroup's 64 rows inside each Q slab

  auto gemm_qk = [&](int st) {  // s = Q K^T, zero-initialised by the first k-step
    const uint32_t k_tile = base + L::K_OFF + st * L::KV_BYTES;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < KSTEPS_S; ++kk) {
      const uint64_t da = sw128_desc(q_wg + (kk / 4) * (BM * 128) + (kk % 4) * 32, 16, 1024);
      const uint64_t db = sw128_desc(k_tile + (kk / 4) * (BN * 128) + (kk % 4) * 32, 16, 1024);
      wgmma_ss<BN>(s, da, db, kk > 0);
    }
    wgmma_commit();
  };
  auto gemm_pv = [&](int st) {  // acc += P V; V MN-major: LBO = next 64-column slab, SBO = next 8 keys
    const uint32_t v_tile = base + L::V_OFF + st * L::KV_BYTES;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < KSTEPS_O; ++kk) {
      const uint64_t db = sw128_desc(v_tile + kk * 16 * 128, BN * 128, 1024);
      if constexpr (D == 128) {
        wgmma_rs_m64n128_tb(acc, p[kk], db);
      } else {
        wgmma_rs_m64n64_tb(acc, p[kk], db);
      }
    }
    wgmma_commit();
  };
  auto release = [&](uint32_t empty_bar) {  // after this warp's wgmma.wait_group covered the reads
    if (lane == 0) mbar_arrive(empty_bar);
  };
  auto mask = [&](int n) {  // keys past the sequence end, and after the row when causal
    const int n0 = n * BN;
    if (n0 + BN > seqlen || (causal && n0 + BN - 1 > m0 + 64 * wg)) {
#pragma unroll
      for (int i = 0; i < BN / 8; ++i) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int col = n0 + 8 * i + 2 * t + (e & 1);
          const int row = row_lo + 8 * (e >> 1);
          if (col >= seqlen || (causal && col > row)) s[4 * i + e] = NEG_INF;
        }
      }
    }
  };
  auto softmax = [&]() {  // updates m_run, l_run, corr; s becomes P (fp32)
    float mx[2] = {m_run[0], m_run[1]};
#if SOFTMAX_ILP == 1
#pragma unroll
    for (int i = 0; i < BN / 8; ++i) {
      mx[0] = fmaxf(mx[0], fmaxf(s[4 * i], s[4 * i + 1]));
      mx[1] = fmaxf(mx[1], fmaxf(s[4 * i + 2], s[4 * i + 3]));
    }
#else
    {  // SOFTMAX_ILP independent max chains per row (max is exact: same result in any order)
      float part[2][SOFTMAX_ILP];
#pragma unroll
      for (int j = 0; j < SOFTMAX_ILP; ++j) part[0][j] = part[1][j] = NEG_INF;
#pragma unroll
      for (int i = 0; i < BN / 8; ++i) {
        part[0][i % SOFTMAX_ILP] = fmaxf(part[0][i % SOFTMAX_ILP], fmaxf(s[4 * i], s[4 * i + 1]));
        part[1][i % SOFTMAX_ILP] = fmaxf(part[1][i % SOFTMAX_ILP], fmaxf(s[4 * i + 2], s[4 * i + 3]));
      }
#pragma unroll
      for (int j = 0; j < SOFTMAX_ILP; ++j) {
        mx[0] = fmaxf(mx[0], part[0][j]);
        mx[1] = fmaxf(mx[1], part[1][j]);
      }
    }
#endif
    float b[2], rowsum[2] = {0.f, 0.f};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
#if RESCALE_THRESHOLD < 0
      b[h] = mx[h] == NEG_INF ? 0.f : mx[h] * sl2;    // no visible key yet: keep the base finite
      corr[h] = exp2_approx(fmaf(m_run[h], sl2, -b[h]));  // m_run = -inf: 0
      m_run[h] = mx[h];
#else
      // Keep the old max unless the new one is more than 2^RESCALE_THRESHOLD larger in the exp2
      // domain (mx >= m_run always: it started from m_run). m_run = -inf and mx finite: +inf > k,
      // so the max moves (corr = exp2(-inf) = 0); both -inf: NaN > k is false, the row stays empty.
      if ((mx[h] - m_run[h]) * sl2 > (float)RESCALE_THRESHOLD) {
        b[h] = mx[h] * sl2;
        corr[h] = exp2_approx(fmaf(m_run[h], sl2, -b[h]));
        m_run[h] = mx[h];
      } else {
        b[h] = m_run[h] == NEG_INF ? 0.f : m_run[h] * sl2;
        corr[h] = 1.f;  // exactly: rescale_o skips the warp when every lane has 1
      }
#endif
    }
#if SOFTMAX_ILP == 1
#pragma unroll
    for (int i = 0; i < NACC_S; ++i) {
      s[i] = exp2_approx(fmaf(s[i], sl2, -b[(i >> 1) & 1]));
      rowsum[(i >> 1) & 1] += s[i];
    }
#else
    {  // SOFTMAX_ILP independent sum chains per row (fp32 sums in another order: ~1e-7 relative)
      float part[2][SOFTMAX_ILP];
#pragma unroll
      for (int j = 0; j < SOFTMAX_ILP; ++j) part[0][j] = part[1][j] = 0.f;
#pragma unroll
      for (int i = 0; i < NACC_S; ++i) {
        s[i] = exp2_approx(fmaf(s[i], sl2, -b[(i >> 1) & 1]));
        part[(i >> 1) & 1][(i >> 2) % SOFTMAX_ILP] += s[i];
      }
#pragma unroll
      for (int j = 0; j < SOFTMAX_ILP; ++j) {
        rowsum[0] += part[0][j];
        rowsum[1] += part[1][j];
      }
    }
#endif
#pragma unroll
    for (int h = 0; h < 2; ++h) l_run[h] = l_run[h] * corr[h] + rowsum[h];
  };
  auto convert_p = [&]() {  // S blocks 2kk and 2kk+1 (columns 16kk..16kk+15) -> A fragment kk
#pragma unroll
    for (int kk = 0; kk < KSTEPS_O; ++kk) {
      p[kk][0] = pack_bf16(s[8 * kk + 0], s[8 * kk + 1]);
      p[kk][1] = pack_bf16(s[8 * kk + 2], s[8 * kk + 3]);
      p[kk][2] = pack_bf16(s[8 * kk + 4], s[8 * kk + 5]);
      p[kk][3] = pack_bf16(s[8 * kk + 6], s[8 * kk + 7]);
    }
  };
  auto rescale_o = [&]() {
#if RESCALE_THRESHOLD >= 0
    if (!__any_sync(0xffffffffu, corr[0] != 1.f || corr[1] != 1.f)) return;  // no row of the warp moved
#endif
#pragma unroll
    for (int i = 0; i < NACC_O; ++i) acc[i] *= corr[(i >> 1) & 1];
  };
  // The turns (PINGPONG): warpgroup wg issues after a sync on barrier 1 + wg, and hands the turn
  // over with an arrive on the other's barrier.
  auto my_turn = [&]() {
#if PINGPONG
    named_bar_sync(1 + wg, 256);
#endif
  };
  auto their_turn = [&]() {
#if PINGPONG
    named_bar_arrive(1 + (wg ^ 1), 256);
#endif
  };

  mbar_wait(bar.full_q(), q_parity);

#if INTRA_WG_OVERLAP
  int it = kv0;  // ring position of the K (and V) tile in use
  int n = n_max - 1;
  {
    const int sk = it % L::STAGES;
    mbar_wait(bar.full_k(sk), (it / L::STAGES) & 1);
    gemm_qk(sk);
    wgmma_wait<0>();
    reg_fence(s);
    release(bar.empty_k(sk));
  }
  mask(n);
  softmax();
  convert_p();
  rescale_o();  // O is still 0: multiplies zeros, kept so every step is the same code

  for (--n; n >= 0; --n) {
    const int it_v = it;
    ++it;
    const int sk = it % L::STAGES, sv = it_v % L::STAGES;
    mbar_wait(bar.full_k(sk), (it / L::STAGES) & 1);
    my_turn();                    // my turn to issue
    gemm_qk(sk);                  // S_n = Q K_n^T
    mbar_wait(bar.full_v(sv), (it_v / L::STAGES) & 1);
    gemm_pv(sv);                  // O += P_{n+1} V_{n+1}
    their_turn();                 // the other warpgroup's turn
    wgmma_wait<1>();              // S_n is done; P V may still run
    reg_fence(s);
    release(bar.empty_k(sk));
    mask(n);
    softmax();                    // overlaps this warpgroup's P V and the other's GEMMs
#if ORDER_SOFTMAX
    order_after(l_run[0] + l_run[1], 3 + 4 * wg + warp);  // every exp before the wait below
#endif
    wgmma_wait<0>();              // P V is done: O and the P registers are free
    reg_fence(acc);
    reg_fence(p);
    release(bar.empty_v(sv));
    convert_p();
    rescale_o();
  }
  {
    const int sv = it % L::STAGES;
    mbar_wait(bar.full_v(sv), (it / L::STAGES) & 1);
    gemm_pv(sv);
  }
#else
  // FA3's step without intra-warpgroup overlap: each GEMM is one turn and is waited for at once.
  int it = kv0;
  for (int n = n_max - 1; n >= 0; --n, ++it) {
    const int st = it % L::STAGES;
    const uint32_t phase = (it / L::STAGES) & 1;
    mbar_wait(bar.full_k(st), phase);
    my_turn();
    gemm_qk(st);
    their_turn();
    wgmma_wait<0>();
    reg_fence(s);
    release(bar.empty_k(st));
    mask(n);
    softmax();
    convert_p();
    rescale_o();
    mbar_wait(bar.full_v(st), phase);
    my_turn();
    gemm_pv(st);
    their_turn();
    wgmma_wait<0>();
    reg_fence(acc);
    reg_fence(p);
    release(bar.empty_v(st));
  }
#endif
#if FA_PERSISTENT
  release(bar.empty_q());  // every S GEMM of this tile has completed: Q's buffer may take the next tile
#endif
  float inv[2], row_lse[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float l = l_run[h];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    const bool empty = !(l > 0.f);  // no visible key (cannot happen for S >= 1) or NaN
    inv[h] = empty ? 1.f : 1.f / l;
    row_lse[h] = empty ? NEG_INF : m_run[h] * scale + logf(l);
  }
#if INTRA_WG_OVERLAP
  wgmma_wait<0>();
  reg_fence(acc);
  release(bar.empty_v(it % L::STAGES));
#endif

  // Epilogue: O straight from registers (4-byte stores; O is 1/(2 S / D) of the traffic), then LSE.
  const size_t head = (size_t)bh * seqlen;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row_lo + 8 * h;
    if (row < seqlen) {
      __nv_bfloat16* orow = o + (head + row) * D;
#pragma unroll
      for (int i = 0; i < D / 8; ++i) {
        *reinterpret_cast<uint32_t*>(orow + 8 * i + 2 * t) =
            pack_bf16(acc[4 * i + 2 * h] * inv[h], acc[4 * i + 2 * h + 1] * inv[h]);
      }
      if (t == 0) lse[head + row] = row_lse[h];
    }
  }
}

// Full barriers complete on 128 cp.async arrivals (v2) or one expect_tx arrival plus the TMA's
// bytes (v3); empty barriers on one arrival per consumer warp.
constexpr uint32_t FULL_ARRIVALS = FA_TMA_LOADS ? 1 : PRODUCER_THREADS;
template <int D>
__device__ __forceinline__ void init_barriers(const Barriers& bar) {
  mbar_init(bar.full_q(), FULL_ARRIVALS);
  for (int s = 0; s < Layout<D>::STAGES; ++s) {
    mbar_init(bar.full_k(s), FULL_ARRIVALS);
    mbar_init(bar.full_v(s), FULL_ARRIVALS);
    mbar_init(bar.empty_k(s), CONSUMER_WARPS);
    mbar_init(bar.empty_v(s), CONSUMER_WARPS);
  }
#if FA_PERSISTENT
  mbar_init(bar.empty_q(), CONSUMER_WARPS);
#endif
}

// The block's 1024-byte-aligned shared-memory base (the 128-byte swizzle repeats every 1024 bytes);
// traps when the launch gave less dynamic shared memory than the layout needs (a header's
// @smem_dD that disagrees with the kernel).
__device__ __forceinline__ uint32_t smem_base(uint8_t* smem, bool d128) {
  const uint32_t base = (smem_u32(smem) + 1023u) & ~1023u;
  uint32_t dyn_smem;
  asm("mov.u32 %0, %%dynamic_smem_size;\n" : "=r"(dyn_smem));
  if (dyn_smem < (d128 ? Layout<128>::SMEM : Layout<64>::SMEM)) __trap();
  return base;
}

// Thread 0 initialises the barriers; every thread returns once they are visible.
__device__ __forceinline__ Barriers setup_barriers(uint32_t base, bool d128) {
  const Barriers bar{base + (d128 ? Layout<128>::BAR_OFF : Layout<64>::BAR_OFF),
                     d128 ? Layout<128>::STAGES : Layout<64>::STAGES};
  if (threadIdx.x == 0) {
    if (d128) {
      init_barriers<128>(bar);
    } else {
      init_barriers<64>(bar);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  return bar;
}

}  // namespace
