// v6_packed_rows: v0's warp rows and v1's block rows, loaded without the evict-first hint,
// held as raw bf16 (two elements a register), in small blocks, and a predicate-free kernel for
// rows that exactly fill an instance. Rows up to 32768 wide; wider rows are v2/v3/v5's.
//
// What changed from v0 (N <= 1024) and v1 (1024 < N <= 32768):
//   1. Loads: `ld.global.nc` (__ldg: LDG.E.128.CONSTANT) instead of `ld.global.cs` (__ldcs:
//      LDG.E.EF.128, evict-first), which rows.cuh gives v0/v1. rmsnorm lost its whole gap to
//      torch.compile to that hint (NOTES.md, 2026-11-30 memory-bound sweep: v2 with __ldg 0.97x,
//      with the hint put back 0.92x), and v0/v1 sit 5-7% under the copy rate. Knob PK_LOAD.
//   2. Registers: v0/v1 widen a bf16 row to fp32 as it arrives (32 elements: 32 registers a
//      thread) and keep the exps there. v6 keeps the 16-byte vectors as loaded (16 registers
//      for 32 bf16), takes the max on packed pairs (VHMNMX.BF16_V2, 4 elements an instruction
//      on sm_90), the sum of exps in a second sweep over the registers, and recomputes the exp
//      at the store as y = 2^((x - M) log2 e - log2 S) (FADD, FFMA, MUFU.EX2: no divide, no
//      scale). ptxas 13.0, sm_90: 32 registers for the bf16 warp and block rows (v0 55, v1 56),
//      so 2048 threads fit an SM instead of 1024: twice the rows and the bytes in flight. The
//      price is a second EX2 an element. Knob PK_KEEP_EXP=1 keeps v0/v1's fp32 exps instead
//      (48 registers). fp32 rows have nothing to pack: they keep the exps (v0/v1's arithmetic).
//   3. Warp rows in blocks of `@warps_per_block` = 2 warps (v0: 8): a block's registers come
//      back only when its slowest warp ends, and 64-thread blocks at 32 registers fill an SM
//      with 32 blocks (the per-SM cap), 64 warps. torch.compile's kernel at 1024 wide (inductor's
//      persistent INNER reduction config) is one warp per row in one-warp programs.
//      `@lanes_per_row 16` puts two rows in a warp (64 elements a lane, 4-step shuffles).
//   4. `_full` kernels: for a row exactly as wide as the instance (256/512/1024 in a warp,
//      64..1024 threads x 32 in a block) with x and y 16-byte aligned, op.py launches a kernel
//      with no per-vector predicate, no -inf padding and no head/tail scalars: 403 SASS
//      instructions a 1024-wide warp row (v0: 680 in the kernel, 36 of them scalar accesses of
//      the misaligned fallback), 429 a 8192-wide row's thread (v1: 728). Other rows take the
//      general kernel (rows.cuh's head / 16-byte vectors / tail split; padding is -inf bits in
//      the raw vectors). One kernel with both paths spilled at 32 and at 40 registers.
//   Block rows: `@block_elems` = 16 elements a thread (32 until session 5: v1's), the smallest block of 64..1024
//   threads that holds the row, one barrier a row; the merge after it spans THREADS / 32 lanes.
// Why: bytes in flight. At the copy rate (4.29 TB/s) with ~1 us of DRAM latency under load,
//   an SM needs ~32 KiB of reads in flight (Little's law: 2.15 TB/s of reads x 1 us / 132
//   SMs) all the time. v0 holds 32 rows an SM (4 blocks of 8 warps at 55 registers) x 2 KiB =
//   64 KiB only while every warp is loading; a warp loads for part of its life, then reduces,
//   stores and waits for its block. v1 holds 4 rows of 16 KiB. v6 holds 64 rows of 2 KiB
//   (1024 wide) or 8 rows of 16 KiB (8192 wide): 128 KiB an SM, and drops the hint.
// Predicted: bytes first: 262144 x 1024 and 32768 x 8192 bf16 each move 2 x 2^28 x 2 B =
//   1.07 GB: 250 us at this H200's copy rate. Issue: at that rate an SM finishes 7.9 rows/us
//   of 1024 (403 warp instructions each: 3200 of its 7920 issue slots a us, 40%; v0 ~60%) or
//   0.99 rows/us of 8192 (8 warps x 429: 43%). SFU: 67-68 MUFU a warp row (16 lanes an SM: 2
//   cycles each) = ~54% of the SFU (v0/v1 ~28%), the cost of 2 EX2s an element.
//   262144 x 1024: 250-254 us (v0 264.8, torch.compile 250.5: 0.99-1.00x it), ~4% of it the hint,
//   ~1% registers, small blocks and the predicate-free kernel; 32768 x 8192: 254-258 us (v1
//   and v4 267.6: 0.97-0.985x copy, 2.36-2.40x torch.compile's 609.4). fp32 rows: v0/v1 without
//   the hint, ~2-4% faster. If the second EX2 costs more than the occupancy gains,
//   PK_KEEP_EXP=1 wins; if PK_LOAD=1 costs < 2%, the hint was not the gap.
// Measured (session 5, docs/runs/2026-11-30-h200-sweep_membound_s5.json, -s7.json): 32768 x 8192
//   bf16 with 16 elements a thread (512-thread rows) 256.3 / 255.4 / 255.5 us against 32's 260.3 /
//   259.6 / 259.3 and 64's 258.4 / 258.2: `@block_elems 16` is the default since (v4_dispatch's
//   bf16 rows of 4097-8192 take it too); plain ld.global (PK_LOAD=3) 258.8.
// Measured: BENCHMARKS.md, softmax rows (generated from results JSON); pending the H200 sweep
//   (scripts/sweep_softmax.py --cases 0,1: default, PK_LOAD=1, PK_LOAD=2, PK_KEEP_EXP=1,
//   lanes_per_row 16, warps_per_block 8, block_elems 64, against v0, v1, v4, torch.compile).
//
// Knobs: the header values below (op.py reads them for the launch plan and passes them to the
//   compiler as PK_WARPS_PER_BLOCK, PK_LANES_PER_ROW, PK_BLOCK_ELEMS) and the compile-only
//   macros after them (PK_LOAD, PK_KEEP_EXP, PK_SM_THREADS_*).
// @strategy packed
// @access_bytes 16
// @warps_per_block 2
// @lanes_per_row 32
// @block_elems 16
#include "softmax_common.cuh"
#include "../common/ld16.cuh"  // kl::ld16_* (the PK_LOAD forms)

// How x is loaded: 0 ld.global.nc (__ldg, read-only path, no eviction hint); 1 ld.global.cs
// (__ldcs: evict-first, v0/v1's); 2 ld.global.nc with an L2 256-byte prefetch hint; 3 plain
// ld.global (what Triton emits without an eviction policy).
#ifndef PK_LOAD
#define PK_LOAD 0
#endif
// bf16 only: 0 keep the raw vectors and recompute exp at the store; 1 keep fp32 exps (v0/v1).
#ifndef PK_KEEP_EXP
#define PK_KEEP_EXP 0
#endif
// Warp rows: warps per block and lanes per row (32: a warp per row; 16: two rows per warp).
#ifndef PK_WARPS_PER_BLOCK
#define PK_WARPS_PER_BLOCK 2
#endif
#ifndef PK_LANES_PER_ROW
#define PK_LANES_PER_ROW 32
#endif
// Block rows: elements per thread (the plan takes the smallest block that holds N). fp32 rows
// hold at most 32: 64 fp32 elements need ~80 registers, more than a 1024-thread block can have.
// (v4_dispatch builds these instances with no header value: this default must stay the header's)
#ifndef PK_BLOCK_ELEMS
#define PK_BLOCK_ELEMS 16
#endif
#define PK_BLOCK_ELEMS_F32 (PK_BLOCK_ELEMS > 32 ? 32 : PK_BLOCK_ELEMS)
// Threads an SM should hold (__launch_bounds__' minimum blocks = this / block size, at most
// 32 blocks); 2048 caps a thread at 32 registers, 1536 at 40, 1024 at 64. Packed bf16:
//   FULL warp rows: 2048 (25-32 registers, every arch);
//   general warp rows (misaligned rows, rows narrower than the instance) keep the row's
//     geometry and scalars beside their 16 data registers: ptxas 13.0 spilled 24 bytes at 32,
//     so 1536 (38-40 registers);
//   block rows: 2048 on sm_90+ (32 registers). ptxas is not monotonic here: the FULL block
//     rows spill 8 bytes at 40 on sm_90 (it then schedules every EX2 of the store ahead of the
//     stores and keeps y's address aside) and at 32 and 40 on sm_80, so sm_80 asks for 1024
//     (56-62 registers). Do not sweep 1536 for block rows.
// sm_120 holds 1536 threads an SM: ptxas relaxes a 2048 bound there itself (40 registers).
// fp32 and kept exps hold twice the data: 1024 (64 registers), as v0/v1.
#ifndef PK_SM_THREADS_PACKED
#if __CUDA_ARCH__ >= 900
#define PK_SM_THREADS_PACKED 2048
#else
#define PK_SM_THREADS_PACKED 1024
#endif
#endif
#ifndef PK_SM_THREADS_PACKED_WARP_FULL
#define PK_SM_THREADS_PACKED_WARP_FULL 2048
#endif
#ifndef PK_SM_THREADS_PACKED_WARP_GENERAL
#define PK_SM_THREADS_PACKED_WARP_GENERAL 1536
#endif
#ifndef PK_SM_THREADS_WIDE
#define PK_SM_THREADS_WIDE 1024
#endif

static_assert(PK_LANES_PER_ROW == 32 || PK_LANES_PER_ROW == 16, "PK_LANES_PER_ROW is 32 or 16");
static_assert(PK_WARPS_PER_BLOCK >= 1 && PK_WARPS_PER_BLOCK <= 32, "PK_WARPS_PER_BLOCK is 1..32");
static_assert(PK_BLOCK_ELEMS == 16 || PK_BLOCK_ELEMS == 32 || PK_BLOCK_ELEMS == 64, "PK_BLOCK_ELEMS is 16, 32 or 64");

namespace softmax {
namespace pk {

using rows::Geometry;
using rows::LOG2E;
using rows::Traits;

// log2(x) in one MUFU.LG2 (lg2.approx: absolute error ~2^-22). log2(0) = -inf.
__device__ __forceinline__ float lg2(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ uint4 load16(const uint4* p) {
#if PK_LOAD == 0
  return __ldg(p);
#elif PK_LOAD == 1
  return __ldcs(p);
#elif PK_LOAD == 2
  return kl::ld16_nc_l2_256(p);
#else
  return kl::ld16_plain(p);
#endif
}

// The raw bits of a 16-byte vector of -inf: padding that never raises a max and whose exp is 0.
template <typename T>
__device__ __forceinline__ uint4 neg_inf16();
template <>
__device__ __forceinline__ uint4 neg_inf16<float>() { return make_uint4(0xff800000u, 0xff800000u, 0xff800000u, 0xff800000u); }
template <>
__device__ __forceinline__ uint4 neg_inf16<__nv_bfloat16>() { return make_uint4(0xff80ff80u, 0xff80ff80u, 0xff80ff80u, 0xff80ff80u); }

// The two bf16 of a 32-bit word as fp32, two ways. `lo/hi_shift` (SHL / LOP) for the sum;
// `lo/hi_prmt` (PRMT) for the store, so that the compiler cannot keep the sum's widened values
// alive until the store (common subexpressions), which would bring back v0's 32 registers.
__device__ __forceinline__ float lo_shift(unsigned w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float hi_shift(unsigned w) { return __uint_as_float(w & 0xffff0000u); }
__device__ __forceinline__ float lo_prmt(unsigned w) { return __uint_as_float(__byte_perm(w, 0u, 0x1044)); }
__device__ __forceinline__ float hi_prmt(unsigned w) { return __uint_as_float(__byte_perm(w, 0u, 0x3244)); }

// A scalar of x read a second time. A volatile asm, so that the compiler keeps the load
// where it is instead of keeping the first read's register alive across the reduction.
__device__ __forceinline__ float reload(const float* p) {
  float v;
  asm volatile("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}
__device__ __forceinline__ float reload(const __nv_bfloat16* p) {
  unsigned short v;
  asm volatile("ld.global.nc.u16 %0, [%1];" : "=h"(v) : "l"(p));
  return __uint_as_float(static_cast<unsigned>(v) << 16);
}

__device__ __forceinline__ unsigned word(const uint4& r, int i) { return i == 0 ? r.x : i == 1 ? r.y : i == 2 ? r.z : r.w; }

// (max, sum) over a group of G lanes (G a power of 2 up to 32, aligned), in every lane of it.
template <int G>
__device__ __forceinline__ MaxSum group_merge(MaxSum p) {
  float m = p.m;
#pragma unroll
  for (int o = G / 2; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(rows::FULL_MASK, m, o));
  float s = p.s * rescale(p.m, m);
#pragma unroll
  for (int o = G / 2; o > 0; o >>= 1) s += __shfl_xor_sync(rows::FULL_MASK, s, o);
  return MaxSum{m, s};
}

// One row: P threads (g = 0..P-1) hold E elements each. FULL: N == E * P and both rows are
// 16-byte aligned, so every thread owns exactly K whole vectors and there are no scalars.
// `merge` turns the thread's (max, sum) into the row's, in every thread.
template <typename T, int E, int P, bool FULL, typename YRow, typename Merge>
__device__ __forceinline__ void row_packed(const T* __restrict__ xr, YRow yrow, int N, int g, bool live, Merge merge) {
  constexpr int V = Traits<T>::V;
  constexpr int K = E / V;
  static_assert(V == 8, "packed rows are bf16 (8 elements a vector, 2 a word)");
  static_assert(E % V == 0, "E must be a whole number of 16-byte vectors");
  Geometry geo{0, K * P, 0};
  if (!FULL) geo = rows::geometry(xr, N);
  T* yr = FULL ? nullptr : yrow();  // FULL: asked for again at the store (see block_row)
  const bool vec_out = FULL || ((reinterpret_cast<unsigned long long>(xr) ^ reinterpret_cast<unsigned long long>(yr)) & 15) == 0;
  const uint4* xv = reinterpret_cast<const uint4*>(xr + geo.head);

  uint4 r[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {  // all K loads in flight before any is used
    const int j = k * P + g;
    r[k] = (FULL ? live : j < geo.nvec) ? load16(xv + j) : neg_inf16<T>();
  }
  float h = -INFINITY, t = -INFINITY;
  if (!FULL) {
    if (g < geo.head) h = rows::to_float(xr[g]);
    if (g < geo.tail) t = rows::to_float(xr[geo.head + geo.nvec * V + g]);
  }

  // Thread max: on packed pairs (max.bf16x2 is exact; like fmaxf it ignores a NaN operand,
  // which the sum then propagates), widened once at the end.
  __nv_bfloat162 m2 = *reinterpret_cast<const __nv_bfloat162*>(&r[0].x);
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const unsigned w = word(r[k], i);
      m2 = __hmax2(m2, *reinterpret_cast<const __nv_bfloat162*>(&w));
    }
  const float m = fmaxf(fmaxf(__low2float(m2), __high2float(m2)), fmaxf(h, t));

  // Thread sum of exp(x - m): two accumulators (halves the FADD chain).
  const float sh = shift_of(m);
  float s0 = 0.0f, s1 = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const unsigned w = word(r[k], i);
      s0 += exp_shifted(lo_shift(w), sh);
      s1 += exp_shifted(hi_shift(w), sh);
    }
  const MaxSum row = merge(MaxSum{m, s0 + s1 + exp_shifted(h, sh) + exp_shifted(t, sh)});

  // y = exp(x - M) / S = 2^((x - M) log2 e - log2 S). An all -inf row: M = -inf (shift 0),
  // S = 0, so the exponent is -inf + inf = NaN, as torch gives (0 / 0). A row with NaN or +inf:
  // S is NaN, so every output is NaN.
  const float shM = shift_of(row.m);
  const float l2s = lg2(row.s);
  if (FULL) yr = yrow();
  T* yb = yr + geo.head;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int j = k * P + g;
    if (FULL ? live : j < geo.nvec) {
      float o[8];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const unsigned w = word(r[k], i);
        o[2 * i] = ex2(fmaf(lo_prmt(w) - shM, LOG2E, -l2s));
        o[2 * i + 1] = ex2(fmaf(hi_prmt(w) - shM, LOG2E, -l2s));
      }
      rows::store_span<T>(yb + (size_t)j * V, vec_out, o);
    }
  }
  if (!FULL) {  // the head/tail scalars are read again (L1/L2 hits) rather than kept: 2 registers
    if (g < geo.head) yr[g] = rows::from_float<T>(ex2(fmaf(reload(xr + g) - shM, LOG2E, -l2s)));
    const int col = geo.head + geo.nvec * V + g;
    if (col < N) yr[col] = rows::from_float<T>(ex2(fmaf(reload(xr + col) - shM, LOG2E, -l2s)));
  }
}

// The same row with the exps kept in fp32 registers (v0/v1's arithmetic: one EX2 an element,
// y = e * (exp(m_thread - M) / S)); fp32 rows always, bf16 rows with PK_KEEP_EXP = 1.
template <typename T, int E, int P, bool FULL, typename YRow, typename Merge>
__device__ __forceinline__ void row_kept(const T* __restrict__ xr, YRow yrow, int N, int g, bool live, Merge merge) {
  constexpr int V = Traits<T>::V;
  constexpr int K = E / V;
  static_assert(E % V == 0, "E must be a whole number of 16-byte vectors");
  Geometry geo{0, K * P, 0};
  if (!FULL) geo = rows::geometry(xr, N);
  T* yr = FULL ? nullptr : yrow();  // FULL: asked for again at the store (see block_row)
  const bool vec_out = FULL || ((reinterpret_cast<unsigned long long>(xr) ^ reinterpret_cast<unsigned long long>(yr)) & 15) == 0;
  const uint4* xv = reinterpret_cast<const uint4*>(xr + geo.head);

  uint4 r[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int j = k * P + g;
    r[k] = (FULL ? live : j < geo.nvec) ? load16(xv + j) : neg_inf16<T>();
  }
  float h = -INFINITY, t = -INFINITY;
  if (!FULL) {
    if (g < geo.head) h = rows::to_float(xr[g]);
    if (g < geo.tail) t = rows::to_float(xr[geo.head + geo.nvec * V + g]);
  }
  float e[K][V];
#pragma unroll
  for (int k = 0; k < K; ++k) rows::unpack<T>(r[k], e[k]);
  float m = fmaxf(h, t);
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int i = 0; i < V; ++i) m = fmaxf(m, e[k][i]);
  const float sh = shift_of(m);
  float s0 = 0.0f, s1 = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int i = 0; i < V; ++i) {
      e[k][i] = exp_shifted(e[k][i], sh);
      if (i & 1) s1 += e[k][i]; else s0 += e[k][i];
    }
  h = exp_shifted(h, sh);
  t = exp_shifted(t, sh);
  const MaxSum mine{m, s0 + s1 + h + t};
  const MaxSum row = merge(mine);
  const float sc = rescale(mine.m, row.m) / row.s;  // all -inf row: 0 / 0 = NaN, as torch
  if (FULL) yr = yrow();
  T* yb = yr + geo.head;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int j = k * P + g;
    if (FULL ? live : j < geo.nvec) {
      float o[V];
#pragma unroll
      for (int i = 0; i < V; ++i) o[i] = e[k][i] * sc;
      rows::store_span<T>(yb + (size_t)j * V, vec_out, o);
    }
  }
  if (!FULL) {
    if (g < geo.head) yr[g] = rows::from_float<T>(h * sc);
    if (g < geo.tail) yr[geo.head + geo.nvec * V + g] = rows::from_float<T>(t * sc);
  }
}

template <typename T>
struct Packs {  // does this dtype keep raw vectors (true) or fp32 exps (false)?
  static constexpr bool value = false;
};
template <>
struct Packs<__nv_bfloat16> {
  static constexpr bool value = PK_KEEP_EXP == 0;
};

// FULL (a kernel of its own, `..._full`): op.py launches it only when N == E * P and x and y
// are 16-byte aligned, so every row is aligned (N * sizeof(T) is a multiple of 16) and each
// thread owns exactly K whole vectors. One kernel holding both paths spilled at 32 and at 40
// registers (ptxas 13.0: the general path's geometry and scalars beside 16 data registers).
// `yrow()` gives y's row (called once: at the start on the general path, at the store on the
// FULL path, so that a kernel can recompute it there instead of holding it; see block_row).
template <typename T, int E, int P, bool FULL, typename YRow, typename Merge>
__device__ __forceinline__ void row(const T* __restrict__ xr, YRow yrow, int N, int g, bool live, Merge merge) {
  if constexpr (Packs<T>::value) {
    row_packed<T, E, P, FULL>(xr, yrow, N, g, live, merge);
  } else {
    row_kept<T, E, P, FULL>(xr, yrow, N, g, live, merge);
  }
}

// Warp rows: CAP-wide rows, PK_LANES_PER_ROW lanes each, PK_WARPS_PER_BLOCK warps a block;
// rows per block = warps x 32 / lanes (op.py's packed_plan says the same).
template <typename T, int CAP, bool FULL>
__device__ __forceinline__ void warp_rows(const T* __restrict__ x, T* __restrict__ y, int M, int N) {
  constexpr int G = PK_LANES_PER_ROW;
  constexpr int ROWS = PK_WARPS_PER_BLOCK * 32 / G;
  const int g = threadIdx.x % G;
  const int row_id = blockIdx.x * ROWS + threadIdx.x / G;
  const bool live = row_id < M;
  if constexpr (G == 32) {
    if (!live) return;  // the whole warp leaves together; no block barrier in this kernel
    row<T, CAP / G, G, FULL>(x + (size_t)row_id * N, [=] { return y + (size_t)row_id * N; }, N, g, true,
                             [](MaxSum p) { return group_merge<G>(p); });
  } else {
    // Two rows a warp: the shuffles name all 32 lanes, so a half whose row is past M stays and
    // runs an empty row (no loads, no stores: `live` false, N = 0) beside its live half.
    if (!__any_sync(rows::FULL_MASK, live)) return;
    const size_t rr = live ? (size_t)row_id : 0;
    row<T, CAP / G, G, FULL>(x + rr * N, [=] { return y + rr * N; }, live ? N : 0, g, live,
                             [](MaxSum p) { return group_merge<G>(p); });
  }
}

// softmax_common's block_merge with the second merge over THREADS / 32 lanes instead of 32
// (8 warps: 3 + 3 shuffles instead of 5 + 5; lane i % NW of each group reads pair i).
// One barrier; pm, ps (THREADS / 32 floats each) serve one row only.
template <int THREADS>
__device__ __forceinline__ MaxSum block_merge_pk(MaxSum p, float* pm, float* ps) {
  p = group_merge<32>(p);
  if constexpr (THREADS == 32) {
    return p;
  } else {
    constexpr int NW = THREADS / 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
      pm[warp] = p.m;
      ps[warp] = p.s;
    }
    __syncthreads();
    const int i = lane % NW;
    return group_merge<NW>(MaxSum{pm[i], ps[i]});
  }
}

// Block rows: one row a block of THREADS threads, PK_BLOCK_ELEMS elements each (fp32: at most
// 32); one barrier.
template <typename T, int THREADS, bool FULL, int E = (sizeof(T) == 4 ? PK_BLOCK_ELEMS_F32 : PK_BLOCK_ELEMS)>
__device__ __forceinline__ void block_row(const T* __restrict__ x, T* __restrict__ y, int N) {
  __shared__ float part_m[THREADS / 32], part_s[THREADS / 32];
  const size_t r = blockIdx.x;
  row<T, E, THREADS, FULL>(x + r * N, [=] { return y + r * N; }, N, threadIdx.x, true,
                                        [&](MaxSum p) { return block_merge_pk<THREADS>(p, part_m, part_s); });
}

// __launch_bounds__' minimum blocks an SM: the target threads over the block size, at least 1,
// at most the 32 blocks an SM holds.
__host__ __device__ constexpr int min_blocks(int threads, int sm_threads) {
  const int want = sm_threads / threads;
  return want < 1 ? 1 : want > 32 ? 32 : want;
}

}  // namespace pk
}  // namespace softmax

#define PK_WARP_THREADS (32 * PK_WARPS_PER_BLOCK)
#define PK_WARP_BF16_SM (PK_KEEP_EXP == 0 ? PK_SM_THREADS_PACKED_WARP_GENERAL : PK_SM_THREADS_WIDE)
#define PK_WARP_FULL_BF16_SM (PK_KEEP_EXP == 0 ? PK_SM_THREADS_PACKED_WARP_FULL : PK_SM_THREADS_WIDE)
#define PK_BLOCK_BF16_SM (PK_KEEP_EXP == 0 ? PK_SM_THREADS_PACKED : PK_SM_THREADS_WIDE)
// Minimum blocks an SM per instance (one macro name each: kernelab's signature reader skips
// `__launch_bounds__(...)` only when its arguments hold no parentheses). Data registers grow
// with the elements a thread holds: past 32 (lanes_per_row 16 at 1024 wide: 64 a lane;
// block_elems 64) the target threads are halved, so the cap stays ~32 (packed) / ~64 (kept).
#define PK_WARP_DOUBLE(cap) ((cap) / PK_LANES_PER_ROW > 32 ? 2 : 1)
#define PK_BLOCK_DOUBLE (PK_BLOCK_ELEMS > 32 ? 2 : 1)
#define PK_BLOCK_DOUBLE_F32 (PK_BLOCK_ELEMS_F32 > 32 ? 2 : 1)
#define PK_MB_W256_F32 softmax::pk::min_blocks(PK_WARP_THREADS * PK_WARP_DOUBLE(256), PK_SM_THREADS_WIDE)
#define PK_MB_W512_F32 softmax::pk::min_blocks(PK_WARP_THREADS * PK_WARP_DOUBLE(512), PK_SM_THREADS_WIDE)
#define PK_MB_W1024_F32 softmax::pk::min_blocks(PK_WARP_THREADS * PK_WARP_DOUBLE(1024), PK_SM_THREADS_WIDE)
#define PK_MB_W256_BF16 softmax::pk::min_blocks(PK_WARP_THREADS * PK_WARP_DOUBLE(256), PK_WARP_BF16_SM)
#define PK_MB_W512_BF16 softmax::pk::min_blocks(PK_WARP_THREADS * PK_WARP_DOUBLE(512), PK_WARP_BF16_SM)
#define PK_MB_W1024_BF16 softmax::pk::min_blocks(PK_WARP_THREADS * PK_WARP_DOUBLE(1024), PK_WARP_BF16_SM)
#define PK_MB_W256_FULL_BF16 softmax::pk::min_blocks(PK_WARP_THREADS * PK_WARP_DOUBLE(256), PK_WARP_FULL_BF16_SM)
#define PK_MB_W512_FULL_BF16 softmax::pk::min_blocks(PK_WARP_THREADS * PK_WARP_DOUBLE(512), PK_WARP_FULL_BF16_SM)
#define PK_MB_W1024_FULL_BF16 softmax::pk::min_blocks(PK_WARP_THREADS * PK_WARP_DOUBLE(1024), PK_WARP_FULL_BF16_SM)
#define PK_MB_T64_F32 softmax::pk::min_blocks(64 * PK_BLOCK_DOUBLE_F32, PK_SM_THREADS_WIDE)
#define PK_MB_T128_F32 softmax::pk::min_blocks(128 * PK_BLOCK_DOUBLE_F32, PK_SM_THREADS_WIDE)
#define PK_MB_T256_F32 softmax::pk::min_blocks(256 * PK_BLOCK_DOUBLE_F32, PK_SM_THREADS_WIDE)
#define PK_MB_T512_F32 softmax::pk::min_blocks(512 * PK_BLOCK_DOUBLE_F32, PK_SM_THREADS_WIDE)
#define PK_MB_T1024_F32 softmax::pk::min_blocks(1024 * PK_BLOCK_DOUBLE_F32, PK_SM_THREADS_WIDE)
#define PK_MB_T64_BF16 softmax::pk::min_blocks(64 * PK_BLOCK_DOUBLE, PK_BLOCK_BF16_SM)
#define PK_MB_T128_BF16 softmax::pk::min_blocks(128 * PK_BLOCK_DOUBLE, PK_BLOCK_BF16_SM)
#define PK_MB_T256_BF16 softmax::pk::min_blocks(256 * PK_BLOCK_DOUBLE, PK_BLOCK_BF16_SM)
#define PK_MB_T512_BF16 softmax::pk::min_blocks(512 * PK_BLOCK_DOUBLE, PK_BLOCK_BF16_SM)
#define PK_MB_T1024_BF16 softmax::pk::min_blocks(1024 * PK_BLOCK_DOUBLE, PK_BLOCK_BF16_SM)
// bf16's 32-element 1024-thread instance (rows of 16385-32768 when PK_BLOCK_ELEMS < 32; v4 has it too)
#define PK_MB_T1024_E32_BF16 softmax::pk::min_blocks(1024, PK_BLOCK_BF16_SM)

#ifndef SOFTMAX_NO_ENTRY_POINTS  // v4_dispatch includes this file for its code alone
#include "packed_rows_instances.cuh"  // warp and block rows, general and `_full`; shared with v4_dispatch

// The names the op contract looks up: the widest warp instance (any row of up to 1024).
extern "C" __global__ void __launch_bounds__(PK_WARP_THREADS, PK_MB_W1024_F32)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pk::warp_rows<float, 1024, false>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(PK_WARP_THREADS, PK_MB_W1024_BF16)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::warp_rows<__nv_bfloat16, 1024, false>(x, y, M, N); }
#endif
