// v4_l2_two_pass: torch.compile's algorithm: a looped two-pass row that keeps nothing of x in
// registers between the passes. Pass 1 reads x (16-byte vectors, UNROLL in flight per thread)
// with an L2 evict-last policy and sums squares; pass 2 re-reads x (an L1/L2 hit: the row was just
// read) with evict-first, loads the weight, and writes y.
//
// What changed from v2 (the best so far, 0.975x torch.compile): v2 holds the row in registers
//   (bf16 256 threads x 32 elements, fp32 512 x 16; 64 registers: 1024 threads per SM) and reads x
//   from DRAM once with no hint. v4 is the Triton kernel inductor generates for F.rms_norm
//   (.scratch/compile/compile_rmsnorm_bf16.py, triton_red_fused__fused_rms_norm_0: XBLOCK 1, two
//   loops over R0_BLOCK chunks, eviction_policy 'evict_last' in the first, 'evict_first' on x and
//   'evict_last' on the weight in the second), written out in CUDA: (1) x's pass-1 loads are
//   ld.global.L1::evict_last.L2::cache_hint with a createpolicy.fractional.L2::evict_last policy
//   (knob X1_HINT, norm_l2.cuh: Triton's PTX for evict_last), pass 2's ld.global.L1::evict_first
//   .L2::cache_hint with an evict-first policy (X2_HINT); (2) the DRAM sees one read of x: the
//   second is served by L1 (4 rows per SM at 2048 threads: 64 KiB bf16, 128 KiB fp32, within the
//   L1 if the driver gives this kernel, 64 bytes of shared memory, the small carveout) or L2
//   (132 SMs x 4 rows x 32 KiB = 17 MB of fp32 rows in flight, a third of the H200's L2);
//   (3) 32 registers (2048 threads per SM; knob SM_THREADS, 1536 = 40 registers on sm_80 where
//   bf16 spills at 32) and a short block life: many blocks per SM in different phases keep the
//   loads flowing where v2's 4 (bf16) or 2 (fp32) blocks per SM each stall through their reduction
//   and store phase; (4) 512 threads per row by default (`@block 512`, inductor's num_warps = 16
//   for r0 = 8192: R0_BLOCK 2048 or 8192, both 16 warps); `@rows_per_block R` splits the block
//   into R groups of @block / R threads, one row each (32 threads: a warp per row, no barrier);
//   (5) one barrier per row (per-warp partials in shared memory, every warp sums its group's);
//   (6) two pass-2 bodies chosen per row after the barrier: weight and y in x's 16-byte phase
//   (the bench shapes; no scalar fallback in the code) or the general one (x's vectors, then w
//   and y element by element). SASS (sm_90, NVRTC 13.0): pass 1 LDG.E.EL.128 through a memory
//   descriptor that carries the policy (desc[UR4], the plain accesses use another), pass 2
//   LDG.E.EF.128 (same form) and LDG.E.128.CONSTANT for w, y STG.E.128; 32 registers, 0 spills.
//   At 32 registers ptxas gives pass-1 vector 2 the registers of vector 0 (bf16 SASS: issued
//   after vector 0's FFMAs), so 3 of UNROLL = 4 loads leave together; at N = 8192 a 512-thread row
//   has 2 vectors per thread in bf16 (no effect) and 4 in fp32 (fp32 issues all 4 at 32 on sm_90).
// Why: torch.compile runs 32768 x 8192 at 247.7 us bf16 / 495.6 us fp32 (4.34 / 4.33 TB/s, at the
//   ~4.30 TB/s copy rate, H200, cold L2); v2 at 254.1 / 507.6 moves the same DRAM bytes. The
//   difference is how the bytes in flight are held: v2 holds each row's whole 16-32 KiB in
//   registers until its stores, so an SM holds few rows and each one's reduction and store phase
//   leaves DRAM idle for that block; the two-pass kernel frees the registers after pass 1 and
//   re-reads from cache, so more rows are in flight and the phases overlap across blocks.
// Predicted: bytes first. 32768 x 8192 bf16 moves 2 x 32768 x 8192 x 2 B + 16 KiB = 1.074 GB:
//   250 us at the 4.30 TB/s copy rate; fp32 2.147 GB: 499 us. Expect 246-252 us bf16 and
//   493-503 us fp32 (0.98-1.01x torch.compile: the same algorithm, the same hints; 2-3% over v2)
//   if pass 2 hits L1/L2 (DRAM read traffic ~1.0x of x in ncu); a pass-2 miss rate of 10% would
//   cost ~5% (the re-read goes to DRAM). X1_HINT=0 (no evict-last) within 1% at these sizes (17
//   MB of rows in flight fit L2 anyway); X2_HINT=2 (.cs) and Y_STORE=1 (.cs) within 1-2%.
// Measured (H200, 32768 x 8192, one process each: docs/runs/2026-11-30-h200-sweep_norm_s5.json,
//   -sweep_membound_s7.json): the first build (512 threads, 2048 per SM) ran 264.2 us bf16 and
//   527.5 fp32 (torch.compile 248.0 / 498.0, v2 256.4 / 509.9): slower than v2. The geometry decides
//   it, not the hints: bf16 256 threads 258.8 / 257.0 at 2048 per SM, 251.1 at 1536, 248.0 at 1024
//   (torch.compile 246.8: 0.995x); 128 threads 304; 512 threads at 1024 per SM 355. fp32 512 threads
//   at 1536 per SM 498.4 / 497.0 (torch.compile 498.0 / 495.7: 1.00x), 1024 per SM 509.0, 256
//   threads 554-615. So each dtype has its own block and register cap now (`@block_bf16 256`,
//   SM_THREADS_BF16 1024: 4 rows of 16 KiB an SM; fp32 512 threads at 1536: 3 rows of 32 KiB).
//   Torch.compile's own choice (its autotuner's best_config): XBLOCK 1, R0_BLOCK 2048-8192, 16 warps.
//   No hints (X1_HINT=0 X2_HINT=0) cost 1-4%, pass 2 without its evict-first 4% (268.4 vs 257.0);
//   st.global.cs on y 0-5%.
// Measured: BENCHMARKS.md, rmsnorm rows (full runs).
//
// Knobs (#ifndef macros, for sweeps; norm_l2.cuh lists them with their PTX): the geometry is the
// header's `@block` / `@rows_per_block` (the op passes them as BLOCK / ROWS_PER_BLOCK); X1_HINT
// (pass-1 x loads, default 1: L1::evict_last + L2 evict_last policy), X2_HINT (pass-2 x loads,
// default 1: L1::evict_first + L2 evict_first policy), W_HINT (weight: 0 .nc), Y_STORE (0 plain
// st.global, as Triton), UNROLL (pass-1 vectors in flight per thread, 4), UNROLL2 (pass-2
// vectors of x and of w per thread, 2; the general body takes 1), SM_THREADS (threads per SM the
// register cap allows: 2048, sm_80 1536), PASS1_PEEL (session 20, default 0: 1 issues pass 1's first
// step of vectors before the head/tail scalars; with 0, sm_90's bf16 SASS converts the head scalar
// before the loop's first LDG.E.EL.128 (analysis.load_order): a second DRAM round trip on a row with
// a head or tail; aligned rows load no scalar; measured in session 21's sweep peel20, bf16 32768 rows:
// 8192 249.2 / 249.9 us against 249.6 / 248.4, 8191 1197.3 / 1196.9 against 1195.6 / 1196.1, a tie,
// so it stays off: with 4 blocks an SM the other blocks hide the round trip). PARAM_SHIFT (session 21,
// default 1) and SHIFT_WORDS (default 1), norm_l2.cuh's: a row whose weight sits out of x's 16-byte
// phase (odd widths; bf16 N = 8191 puts 7 rows in 8 there, fp32 3 in 4) shifts the weight's 4-byte
// words into place and stores y 16 bytes at a time, where it went element by element (2- or 4-byte
// stores of y). Measured (H200, sweep odd21: docs/runs/2026-12-02-h200-sweep_odd21.json, 32768 x 8191):
// bf16 271.9 / 272.1 us against 1193.8 / 1195.3 (torch.compile 402.1 / 401.7), fp32 500.8 / 501.2
// against 1106.5 / 1106.5 (torch.compile 646.1 / 645.8); shifting two 16-byte loads instead
// (SHIFT_WORDS 0) 278.2 / 278.8 and 499.9 / 499.9; the aligned rows (8192 bf16) 248.4 / 249.2 against
// 248.0 / 249.1 without the new body. Predicted: within 5% of the 8192 rows' time, met for fp32 (500.8
// against ~497) and missed for bf16 (272 against ~249: 9%).
// Session 26, a whole-vector rows build (layernorm v5's: rmsnorm_vec_f32 / _bf16, kVecRows; no geometry, head /
//   tail scalars or body choice a row; sm_90 SASS bf16 848 -> 424 lines, 50 -> 38 registers, fp32 632 -> 328).
//   Predicted bf16 -0.5 to -1.5%, fp32 within 0.5%. Measured (sweep rms26, docs/runs/2026-12-02-h200-sweep_rms26.json,
//   one process, alternating): bf16 251.4 / 251.9 us against the general kernel's 250.1 / 249.7 (+0.7%: slower),
//   fp32 498.5 / 498.8 against 499.1 (a tie); `kernelab run --op rmsnorm` with it (f9d377e,
//   docs/runs/nvidia-h200-20261202T174243.json) bf16 252.3, paired 0.985x torch.compile (0.996x without it,
//   session 18). Wrong in sign: rmsnorm issues 60% of its slots (session 23's ncu), so the instructions were
//   not what it waits on; why the leaner build is slower is not measured. Kept as a knob, off: the header
//   value `@vec_kernel rmsnorm_vec` (a sweep's meta) turns it on.
// Session 33, the whole-vector build at torch.compile's geometry (bf16 512 threads, 2048 an SM), now the default on
//   whole-vector rows. What changed: the vec build has its own block (`@vec_block_bf16 512`), threads per SM
//   (VEC_SM_THREADS_BF16 2048: 32 registers) and pass-1 step (VEC_UNROLL_BF16 2); the general kernel keeps 256 at
//   1024 (its sm_90 SASS is unchanged). Why: ncu with the clocks left alone (docs/runs/ncu/2026-12-03-h200-rmsnorm-
//   bf16-clock-none.log) had v4 and torch.compile moving the same DRAM bytes (537 MB read, 511 MB written) with the
//   same L2 read misses, so pass 2's re-read was not the 0.6% gap; the geometry differed (torch.compile 4 rows an SM
//   of 512 threads at 93% occupancy, v4 4 rows of 256 at 47%). v4's general kernel at 512 / 2048 ran 260.5 us
//   (sweep geo33), issuing 72% of its slots: at 512 threads a bf16 row of 8192 is 2 vectors a thread, so the fixed
//   work a thread does a row (geometry, head / tail scalars, body choice, UNROLL 4's two predicated-off load
//   slots) counts double. The leanest build there removes it. Predicted: within 0.5% of torch.compile. Measured
//   (sweep geo33b, docs/runs/2026-12-03-h200-sweep_geo33b.json, one process, alternating): 248.1 / 247.3 us against
//   torch.compile 247.4 / 247.8 and the general kernel at 256 / 1024 248.4 / 248.4; UNROLL 4 there 248.8 / 247.9,
//   the general kernel at 512 / 2048 with UNROLL 2 255.9; ncu (the clocks left alone) 245.6 against 245.8, with
//   1.23x torch.compile's instructions (its kernel is specialised to N = 8192: no loop, no predicates). With it
//   the default (sweep geo33c, three rounds each): bf16 249.8 / 248.3 / 249.0 against the general kernel's 249.0 /
//   249.9 / 249.0 and torch.compile's 249.0 / 248.0; fp32 (the vec build at the general kernel's geometry) 499.2 /
//   498.8 / 498.9 against 498.3 / 499.5 / 498.9 (torch.compile 498.1 / 497.6): within the rounds' spread, so a
//   tie at the DRAM rate both reach (ncu: 88.7% of DRAM peak, both). `kernelab run --op rmsnorm` at 715ae81
//   (docs/runs/nvidia-h200-20261203T163234.json): paired against torch.compile bf16 0.999x [0.997, 1.001] "same"
//   (0.994x [0.993, 0.998] in session 32), fp32 0.998x [0.997, 1.000]. Measured in full runs: BENCHMARKS.md.
//
// @strategy rows
// @block 512
// @block_bf16 256
// @vec_kernel rmsnorm_vec
// @vec_block_bf16 512
// @rows_per_block 1
// @access_bytes 16
// Per-dtype geometry (session 5 sweep, below): `@block_bf16` / `@block_f32` (the op passes them as
// BLOCK_BF16 / BLOCK_F32; norm_l2.cuh defaults them to BLOCK) and the threads per SM each register cap allows.
#ifdef SM_THREADS  // a sweep's one value for both dtypes and both builds
#define SM_THREADS_BF16 SM_THREADS
#define SM_THREADS_F32 SM_THREADS
#define VEC_SM_THREADS_BF16 SM_THREADS
#define VEC_SM_THREADS_F32 SM_THREADS
#endif
#ifndef SM_THREADS_BF16
#define SM_THREADS_BF16 1024  // 64 registers: 4 x 256-thread rows per SM (2048: 257.0 us, 1536: 251.1, 1024: 248.0)
#endif
#ifndef SM_THREADS_F32
#define SM_THREADS_F32 1536  // 40 registers: 3 x 512-thread rows per SM (2048: 527.5 us, 1536: 497.0-498.4, 1024: 509.0)
#endif
// The whole-vector build's own geometry (session 33, sweep geo33b): `@vec_block_bf16` / `@vec_block_f32` (the op
// passes them as VEC_BLOCK_BF16 / VEC_BLOCK_F32 and launches the vec kernel with them; default the general
// kernel's block), its threads per SM and its pass-1 vectors a step. bf16 runs torch.compile's geometry there,
// 512 threads at 2048 an SM (32 registers), with UNROLL 2: a row of 8192 is then one step of exactly 2 vectors a
// thread. The general kernel at that geometry issued 72% of its slots and ran 260 us (UNROLL 4) / 256 (UNROLL 2).
#ifndef VEC_BLOCK_BF16
#define VEC_BLOCK_BF16 BLOCK_BF16
#endif
#ifndef VEC_BLOCK_F32
#define VEC_BLOCK_F32 BLOCK_F32
#endif
#ifndef VEC_SM_THREADS_BF16
#define VEC_SM_THREADS_BF16 2048  // with VEC_BLOCK_BF16 512: 4 rows an SM at 32 registers, torch.compile's geometry
#endif
#ifndef VEC_SM_THREADS_F32
#define VEC_SM_THREADS_F32 SM_THREADS_F32
#endif
#ifndef VEC_UNROLL_BF16
#define VEC_UNROLL_BF16 2  // 512 threads x 2 vectors x 8 = 8192: one step, no load slot predicated off
#endif
#ifndef VEC_UNROLL_F32
#define VEC_UNROLL_F32 UNROLL
#endif
// One flat token each for __launch_bounds__ (kernelab's signature reader ends it at its first ')').
#define RMS4_MIN_BLOCKS_BF16 (SM_THREADS_BF16 / BLOCK_BF16 > 0 ? SM_THREADS_BF16 / BLOCK_BF16 : 1)
#define RMS4_MIN_BLOCKS_F32 (SM_THREADS_F32 / BLOCK_F32 > 0 ? SM_THREADS_F32 / BLOCK_F32 : 1)
#define RMS4_VEC_MIN_BLOCKS_BF16 (VEC_SM_THREADS_BF16 / VEC_BLOCK_BF16 > 0 ? VEC_SM_THREADS_BF16 / VEC_BLOCK_BF16 : 1)
#define RMS4_VEC_MIN_BLOCKS_F32 (VEC_SM_THREADS_F32 / VEC_BLOCK_F32 > 0 ? VEC_SM_THREADS_F32 / VEC_BLOCK_F32 : 1)
#ifndef PASS1_PEEL
#define PASS1_PEEL 0
#endif
#include "norm_l2.cuh"

namespace rms4 {

// Pass 2 for one row: y = x * rstd * w, by norm_l2.cuh's Body. kAligned: w and y share x's 16-byte
// phase (vectors only, UNROLL2 a step). kShifted: y shares it, w does not (odd widths: bf16 N = 8191
// puts 7 rows in 8 here): w's vectors are shifted into x's phase, y still goes 16 bytes at a time.
// kScalar (y out of x's phase: the tests' mixed-alignment views): x's vectors are 16-byte loads,
// one a step, and w and y go element by element (layernorm v5's general body: per-array run-time
// flags cost registers).
template <typename T, l2tp::Body B, int G, bool kVecRows = false>
__device__ __forceinline__ void write_row(const T* __restrict__ xr, const T* __restrict__ w, T* __restrict__ yr,
                                          const rows::Geometry& geo, int g, float rstd, const l2tp::Policies& pol) {
  constexpr bool kVec = B != l2tp::Body::kScalar;
  constexpr int V = rows::Traits<T>::V, U2 = kVec ? UNROLL2 : 1;
  // The head and tail scalars first, re-read (L1/L2 hits): nothing of pass 1 but rstd stays live
  // into the vector loop (held across it, they cost 2 of the 32 registers and spilled).
  if (!kVecRows && g < geo.head) yr[g] = rows::from_float<T>(rows::to_float(xr[g]) * rstd * rows::to_float(w[g]));
  if (!kVecRows && g < geo.tail) {
    const int col = geo.head + geo.nvec * V + g;
    yr[col] = rows::from_float<T>(rows::to_float(xr[col]) * rstd * rows::to_float(w[col]));
  }
  // Pointers step G x U2 vectors a step, `rem` counts the thread's vectors left: vector u of a step
  // is at an immediate offset u x G x 16 B and exists if u x G < rem (no 64-bit index arithmetic
  // per load: at 32 registers that arithmetic spilled). kScalar steps w and y as element pointers.
  const uint4* px = reinterpret_cast<const uint4*>(xr + geo.head) + g;
  const l2tp::Shift sw = l2tp::shift_for(w + geo.head);  // kShifted only (dead code otherwise)
  const uint4* pwv = l2tp::param_vectors<B>(w + geo.head, sw) + g;
  const T* pw = w + geo.head + g * V;
  T* py = yr + geo.head + g * V;
  constexpr int STEP = G * U2;  // vectors a step
#pragma unroll 1  // UNROLL2 vectors per step is the knob: NVVM would unroll 4-16 steps more (64+ registers)
  for (int rem = geo.nvec - g; rem > 0; rem -= STEP, px += STEP, pwv += STEP, pw += STEP * V, py += STEP * V) {
    if constexpr (kVec) {
      uint4 raw[U2], wraw[U2];
#pragma unroll
      for (int u = 0; u < U2; ++u) {  // every load of the step before any store
        const bool in = u * G < rem;
        raw[u] = l2tp::ldx2(px + u * G, in, pol);
        wraw[u] = l2tp::ldp_body<B>(pwv + u * G, sw, in, pol);
      }
#pragma unroll
      for (int u = 0; u < U2; ++u)
        if (u * G < rem) l2tp::sty(py + u * G * V, l2tp::scale_vec<T>(raw[u], wraw[u], rstd), pol);
    } else {
      const uint4 raw = l2tp::ldx2(px, true, pol);  // rem > 0: this vector exists
#pragma unroll
      for (int e = 0; e < V; ++e) py[e] = rows::from_float<T>(l2tp::elem<T>(raw, e) * rstd * rows::to_float(pw[e]));
    }
  }
}

// kVecRows (the `@vec_kernel` build, session 26): every row is whole 16-byte vectors at aligned addresses, as
// are w and y (the op checks: rmsnorm/op.py whole_vectors), so no geometry, head / tail scalars or body choice.
// U: pass 1's vectors a step (UNROLL; the vec build's own VEC_UNROLL_*).
template <typename T, int BLK, bool kVecRows = false, int U = UNROLL>
__device__ __forceinline__ void rmsnorm_rows(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int M,
                                             int N, float eps) {
  static_assert(U >= 1, "VEC_UNROLL_BF16 / VEC_UNROLL_F32 must be >= 1");
  constexpr int V = rows::Traits<T>::V, G = BLK / ROWS_PER_BLOCK, NWG = G / 32;
  static_assert(l2tp::valid_block(BLK),
                "@block_bf16 / @block_f32 over @rows_per_block must be a power-of-two number of warps");
  __shared__ float slots[BLK / 32];
  const l2tp::Place pl = l2tp::place_for<G>(M);
  if (NWG == 1 && pl.row < 0) return;  // a warp per row: no barrier follows, the warp may leave
  // A group past the last row (G > 32) runs the barrier with an empty row.
  const bool live = pl.row >= 0;
  const int g = pl.g;
  const T* xr = x + (size_t)(live ? pl.row : 0) * N;
  T* yr = y + (size_t)(live ? pl.row : 0) * N;
  const rows::Geometry geo = !live ? rows::Geometry{0, 0, 0}
                             : kVecRows ? rows::Geometry{0, N / V, 0} : rows::geometry(xr, N);
  const l2tp::Policies pol;
  const uint4* xv = reinterpret_cast<const uint4*>(xr + geo.head);

  // Pass 1: the head/tail scalars and U vectors per step, one FFMA chain per vector slot. Vectors
  // past the row load as zeros and add nothing.
#if PASS1_PEEL  // the first step's vectors issued before the scalars (asm volatile keeps the order)
  const uint4* px = xv + g;
  uint4 raw[U];
#pragma unroll
  for (int u = 0; u < U; ++u) raw[u] = l2tp::ldx1(px + u * G, u * G < geo.nvec - g, pol);
#endif
  const float hv = kVecRows ? 0.0f : l2tp::ld_scalar_if<T>(xr + g, g < geo.head);
  const float tv = kVecRows ? 0.0f : l2tp::ld_scalar_if<T>(xr + geo.head + geo.nvec * V + g, g < geo.tail);
  float acc[U];
#pragma unroll
  for (int u = 0; u < U; ++u) acc[u] = 0.0f;
#if PASS1_PEEL
#pragma unroll 1
  for (int rem = geo.nvec - g; rem > 0;) {
#else
  const uint4* px = xv + g;
#pragma unroll 1  // UNROLL vectors per step is the knob: unrolled further, NVVM issued 16 steps' loads at once
  for (int rem = geo.nvec - g; rem > 0; rem -= G * U, px += G * U) {
    uint4 raw[U];
#pragma unroll
    for (int u = 0; u < U; ++u) raw[u] = l2tp::ldx1(px + u * G, u * G < rem, pol);
#endif
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float f[V];
      rows::unpack<T>(raw[u], f);
#pragma unroll
      for (int i = 0; i < V; ++i) acc[u] = fmaf(f[i], f[i], acc[u]);
    }
#if PASS1_PEEL  // the next step's vectors, if any
    rem -= G * U;
    px += G * U;
    if (rem > 0) {
#pragma unroll
      for (int u = 0; u < U; ++u) raw[u] = l2tp::ldx1(px + u * G, u * G < rem, pol);
    }
#endif
  }
#pragma unroll
  for (int s = 1; s < U; s *= 2)
#pragma unroll
    for (int u = 0; u + s < U; u += 2 * s) acc[u] += acc[u + s];
  float ss = rows::warp_sum(acc[0] + (hv * hv + tv * tv));
  if constexpr (NWG > 1) {  // the row's one barrier: every warp sums its group's per-warp partials
    const int lane = threadIdx.x & 31;
    if (lane == 0) slots[threadIdx.x >> 5] = ss;
    __syncthreads();
    ss = l2tp::lane_sum<NWG>(slots[pl.warp0 + (lane & (NWG - 1))]);
  }
  if (!live) return;
  const float rstd = rsqrtf(ss / static_cast<float>(N) + eps);

  // Pass 2, by the row's alignment (after the barrier: groups may take different bodies).
  if constexpr (kVecRows) {
    write_row<T, l2tp::Body::kAligned, G, true>(xr, w, yr, geo, g, rstd, pol);
  } else if (!l2tp::co_aligned(xr, yr)) {
    write_row<T, l2tp::Body::kScalar, G>(xr, w, yr, geo, g, rstd, pol);
  } else if (rows::aligned16(w + geo.head)) {
    write_row<T, l2tp::Body::kAligned, G>(xr, w, yr, geo, g, rstd, pol);
  } else {
    write_row<T, PARAM_SHIFT ? l2tp::Body::kShifted : l2tp::Body::kScalar, G>(xr, w, yr, geo, g, rstd, pol);
  }
}

}  // namespace rms4

// Parameters are written out in full: kernelab reads each kernel's C signature from the source
// to convert arguments (gpu/params.py), so they cannot hide in a macro.
extern "C" __global__ void __launch_bounds__(BLOCK_F32, RMS4_MIN_BLOCKS_F32) rmsnorm_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rms4::rmsnorm_rows<float, BLOCK_F32>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(BLOCK_BF16, RMS4_MIN_BLOCKS_BF16) rmsnorm_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M,
    int N, float eps) {
  rms4::rmsnorm_rows<__nv_bfloat16, BLOCK_BF16>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(VEC_BLOCK_F32, RMS4_VEC_MIN_BLOCKS_F32) rmsnorm_vec_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, float eps) {
  rms4::rmsnorm_rows<float, VEC_BLOCK_F32, true, VEC_UNROLL_F32>(x, w, y, M, N, eps);
}
extern "C" __global__ void __launch_bounds__(VEC_BLOCK_BF16, RMS4_VEC_MIN_BLOCKS_BF16) rmsnorm_vec_bf16(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int M,
    int N, float eps) {
  rms4::rmsnorm_rows<__nv_bfloat16, VEC_BLOCK_BF16, true, VEC_UNROLL_BF16>(x, w, y, M, N, eps);
}
