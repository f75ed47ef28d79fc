// norm_l2.cuh: what rmsnorm v4_l2_two_pass and layernorm v5_l2_two_pass share: torch.compile's
// looped two-pass row (pass 1 reads x with an L2 evict-last policy and reduces, pass 2 re-reads x
// from L1/L2 with evict-first and writes y), on top of ../softmax/rows.cuh's row geometry.
//
// Geometry (the op's `@strategy rows`: the contract kernel launched with `@block` threads and
// grid = ceil(M / `@rows_per_block`); RowNorm.defines passes both as the macros BLOCK and
// ROWS_PER_BLOCK, so a sweep that overrides the header recompiles to match): the block is
// ROWS_PER_BLOCK groups of G = BLOCK / ROWS_PER_BLOCK threads (a whole number of warps, a power of
// two), one row per group. Thread g of a group owns rows.cuh's head scalar g, tail scalar g and the
// 16-byte vectors j = g + i * G, i = 0, 1, ... (a warp's access is 512 contiguous bytes); it walks
// them UNROLL at a time in pass 1 and UNROLL2 at a time in pass 2, every load of a step issued
// before any is used (the step loops are `#pragma unroll 1`: NVVM unrolled them 4-16 times more,
// 64+ registers). Nothing of the row stays in registers between the passes (pass 2 re-reads even
// the head and tail scalars): registers per thread stay low (32: 2048 threads per SM), and the row
// (16 KiB bf16, 32 KiB fp32 at N = 8192) waits in L1/L2 for pass 2.
//
// Knobs (#ifndef macros; defaults are torch.compile's choices where they are known):
//   X1_HINT  pass 1's x loads:  0 ld.global.nc (rmsnorm v2's, no eviction hint)
//                               1 ld.global.L1::evict_last.L2::cache_hint, policy createpolicy
//                                 .fractional.L2::evict_last 1.0 (what Triton emits for
//                                 eviction_policy='evict_last')  [default]
//                               2 ld.global.nc.L1::no_allocate.L2::cache_hint, the same policy
//                                 (the row kept in L2 only; pass 2 hits L2, not L1)
//                               3 ld.global.nc.L2::cache_hint, the same policy (v2's read-only
//                                 path plus the L2 policy only; the qualifier form
//                                 ld.global.L2::evict_last exists for 32-byte loads only: ptxas
//                                 refuses it on .v4.u32)
//   X2_HINT  pass 2's x loads:  0 ld.global.nc
//                               1 ld.global.L1::evict_first.L2::cache_hint, policy
//                                 createpolicy.fractional.L2::evict_first 1.0 (Triton's
//                                 'evict_first')  [default]
//                               2 ld.global.cs (__ldcs)
//                               3 ld.global.lu (__ldlu: last use)
//   W_HINT   weight/bias loads: 0 ld.global.nc (__ldg)  [default]
//                               1 ld.global.nc.L2::cache_hint with the evict-last policy (Triton's)
//   Y_STORE  y's stores:        0 st.global (Triton's: no hint)  [default]
//                               1 st.global.cs (__stcs: streaming)
//                               2 st.global.L2::cache_hint with the evict-first policy
//   UNROLL   pass-1 vectors in flight per thread per step (default 4: at 512 threads one step
//            covers an N = 8192 row in both dtypes: bf16 2 vectors per thread, fp32 4)
//   UNROLL2  pass-2 vectors of x (and of each parameter) per thread per step (default 2; layernorm
//            v5 sets 1: three arrays of 2 spill); the general (misaligned) bodies take 1
//   PARAM_SHIFT  1: a row whose weight/bias are out of x's 16-byte phase (y in it) shifts aligned
//            parameter vectors into place and stores y 16 bytes at a time  [default]; 0: that row
//            goes element by element (w, b and y), as before session 21
//   SHIFT_WORDS  how kShifted reads a parameter vector: 1 the 4-byte words around it  [default];
//            0 the two aligned 16-byte vectors around it (spills in layernorm v5)
//   SM_THREADS  threads per SM the register cap must allow: __launch_bounds__ min blocks =
//            SM_THREADS / BLOCK (2048: 32 registers, 1536: 40); the variants define it and their
//            launch bounds (rmsnorm v4 per dtype)
// SASS (sm_90): the L1 hints are the opcode's .EL / .EF suffix; the L2 policy rides in the memory
// descriptor (desc[URx], built from the createpolicy constant), not in the opcode.
// Every load is one predicated `asm volatile` (setp + @p ld inside the asm, zeros when the
// predicate is false), as in norm_rows.cuh: no branch for NVVM to sink a load into, and program
// order kept, so a step's loads leave together (layernorm v4's lesson, its header (2)).
#pragma once
#include "../softmax/rows.cuh"
#include "ld_scalar_if.cuh"
#include "../common/words16.cuh"

#ifndef BLOCK
#error "BLOCK (threads per block) is the header's @block: RowNorm.defines passes it"
#endif
// Per-dtype geometry (`@block_bf16` / `@block_f32`; RowNorm.defines passes them as BLOCK_BF16 /
// BLOCK_F32): default BLOCK. The kernels size their rows with them (rmsnorm v4, layernorm v5).
#ifndef BLOCK_BF16
#define BLOCK_BF16 BLOCK
#endif
#ifndef BLOCK_F32
#define BLOCK_F32 BLOCK
#endif
#ifndef ROWS_PER_BLOCK
#define ROWS_PER_BLOCK 1
#endif
#ifndef X1_HINT
#define X1_HINT 1
#endif
#ifndef X2_HINT
#define X2_HINT 1
#endif
#ifndef W_HINT
#define W_HINT 0
#endif
#ifndef Y_STORE
#define Y_STORE 0
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef UNROLL2
#define UNROLL2 2
#endif
#ifndef SHIFT_WORDS
#define SHIFT_WORDS 1
#endif
#ifndef PARAM_SHIFT
#define PARAM_SHIFT 1  // 0: rows whose parameters are out of x's phase take the element-by-element body
#endif

namespace l2tp {

// A block of blk threads splits into ROWS_PER_BLOCK rows of a power-of-two number of warps. Each
// kernel sizes its rows with its own dtype's block (BLOCK_BF16 / BLOCK_F32) and checks it here; no
// BLOCK-wide threads-a-row constant is kept, since with per-dtype blocks it is the other dtype's.
__host__ __device__ constexpr bool valid_block(int blk) {
  return blk % 32 == 0 && blk <= 1024 && blk % ROWS_PER_BLOCK == 0 && (blk / ROWS_PER_BLOCK) % 32 == 0 &&
         ((blk / ROWS_PER_BLOCK / 32) & (blk / ROWS_PER_BLOCK / 32 - 1)) == 0;
}
static_assert(valid_block(BLOCK),
              "@block / @rows_per_block must be a power-of-two number of warps (32, 64, ..., 1024 threads per row)");
static_assert(UNROLL >= 1 && UNROLL2 >= 1, "UNROLL and UNROLL2 must be >= 1");

// ---- cache policies (sm_80+): one createpolicy per thread, the same 64-bit value in every thread.
__device__ __forceinline__ unsigned long long policy_evict_last() {
  unsigned long long p;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ unsigned long long policy_evict_first() {
  unsigned long long p;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}

// A predicated 16-byte load: zeros where pred is false (the address is then never read). The
// outputs are early-clobber: the zeroing movs run before the load reads its operands.
#define L2TP_LD_BODY(QUAL, TAIL)                                                                           \
  "{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %5, 0;\n\tmov.b32 %0, 0;\n\tmov.b32 %1, 0;\n\tmov.b32 %2, 0;\n\t" \
  "mov.b32 %3, 0;\n\t@q " QUAL ".v4.u32 {%0, %1, %2, %3}, [%4]" TAIL ";\n}"

#define L2TP_DEF_LD(NAME, QUAL)                                                        \
  __device__ __forceinline__ uint4 NAME(const uint4* p, bool pred) {                   \
    uint4 r;                                                                           \
    asm volatile(L2TP_LD_BODY(QUAL, "")                                                \
                 : "=&r"(r.x), "=&r"(r.y), "=&r"(r.z), "=&r"(r.w)                      \
                 : "l"(p), "r"(static_cast<int>(pred)));                               \
    return r;                                                                          \
  }
#define L2TP_DEF_LD_POL(NAME, QUAL)                                                           \
  __device__ __forceinline__ uint4 NAME(const uint4* p, bool pred, unsigned long long pol) {  \
    uint4 r;                                                                                  \
    asm volatile(L2TP_LD_BODY(QUAL, ", %6")                                                   \
                 : "=&r"(r.x), "=&r"(r.y), "=&r"(r.z), "=&r"(r.w)                             \
                 : "l"(p), "r"(static_cast<int>(pred)), "l"(pol));                            \
    return r;                                                                                 \
  }
L2TP_DEF_LD(ld_nc_if, "ld.global.nc")
L2TP_DEF_LD(ld_cs_if, "ld.global.cs")
L2TP_DEF_LD(ld_lu_if, "ld.global.lu")
L2TP_DEF_LD_POL(ld_last_pol_if, "ld.global.L1::evict_last.L2::cache_hint")
L2TP_DEF_LD_POL(ld_l2only_pol_if, "ld.global.nc.L1::no_allocate.L2::cache_hint")
L2TP_DEF_LD_POL(ld_first_pol_if, "ld.global.L1::evict_first.L2::cache_hint")
L2TP_DEF_LD_POL(ld_nc_pol_if, "ld.global.nc.L2::cache_hint")

// The policies a kernel needs, created once per thread (uniform values; ptxas may keep them in
// uniform registers).
struct Policies {
  unsigned long long last, first;
  __device__ __forceinline__ Policies() {
#if X1_HINT >= 1 || W_HINT == 1
    last = policy_evict_last();
#else
    last = 0;
#endif
#if X2_HINT == 1 || Y_STORE == 2
    first = policy_evict_first();
#else
    first = 0;
#endif
  }
};

// Pass 1's load of x's vector at p (zeros if !pred).
__device__ __forceinline__ uint4 ldx1(const uint4* p, bool pred, const Policies& pol) {
#if X1_HINT == 0
  return ld_nc_if(p, pred);
#elif X1_HINT == 1
  return ld_last_pol_if(p, pred, pol.last);
#elif X1_HINT == 2
  return ld_l2only_pol_if(p, pred, pol.last);
#elif X1_HINT == 3
  return ld_nc_pol_if(p, pred, pol.last);
#else
#error "X1_HINT must be 0 (.nc), 1 (L1::evict_last + L2 evict_last policy), 2 (.nc.L1::no_allocate + policy) or 3 (.nc + policy)"
#endif
}

// Pass 2's load of x's vector at p (zeros if !pred).
__device__ __forceinline__ uint4 ldx2(const uint4* p, bool pred, const Policies& pol) {
#if X2_HINT == 0
  return ld_nc_if(p, pred);
#elif X2_HINT == 1
  return ld_first_pol_if(p, pred, pol.first);
#elif X2_HINT == 2
  return ld_cs_if(p, pred);
#elif X2_HINT == 3
  return ld_lu_if(p, pred);
#else
#error "X2_HINT must be 0 (.nc), 1 (L1::evict_first + L2 evict_first policy), 2 (.cs) or 3 (.lu)"
#endif
}

// A parameter (weight, bias) vector at p (zeros if !pred).
__device__ __forceinline__ uint4 ldp(const uint4* p, bool pred, const Policies& pol) {
#if W_HINT == 0
  return ld_nc_if(p, pred);
#elif W_HINT == 1
  return ld_nc_pol_if(p, pred, pol.last);
#else
#error "W_HINT must be 0 (.nc) or 1 (.nc + L2 evict_last policy)"
#endif
}

// y's 16-byte store. `asm volatile` with a memory clobber (rows.cuh's st_global_16: NVVM split a
// plain uint4 store into four when a scalar fallback sat in the other branch).
__device__ __forceinline__ void sty(void* p, const uint4& v, const Policies& pol) {
#if Y_STORE == 0
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
#elif Y_STORE == 1
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
#elif Y_STORE == 2
  asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w), "l"(pol.first)
               : "memory");
#else
#error "Y_STORE must be 0 (st.global), 1 (.cs) or 2 (L2 evict_first policy)"
#endif
}

using normld::ld_scalar_if;  // one element if pred, else 0.0f (ld_scalar_if.cuh)

// ---- parameters out of x's 16-byte phase (session 21) ---------------------------------------------
// A row whose width is not a multiple of 16 bytes (bf16 N = 8191: rows start at 8 phases) puts its
// vectors at x's phase; y shares it (same offsets) but the weight and bias, read from column `head`,
// sit s = (p + head * sizeof(T)) mod 16 bytes past a 16-byte boundary. The element-by-element body
// this replaces stored y 2 bytes at a time (8 STG.U16 per vector): rmsnorm v4 bf16 32768 x 8191 ran
// 1196 us, torch.compile 404 (H200, docs/runs/2026-12-02-h200-sweep_peel20.json). Here a parameter
// vector is read as the 4-byte words around it (SHIFT_WORDS 1, the default: 4 loads, a 5th when it
// is 2 bytes off a word) and funnel-shifted by s mod 4 bytes (../common/words16.cuh). SHIFT_WORDS 0
// reads the two aligned 16-byte vectors around it instead (L1 hits; the second shares a 16-byte
// block with needed bytes, so it is inside the allocation) and shifts by s: output word i is
// funnelshift(c[i + q], c[i + q + 1], 8 r), q = s / 4, r = s % 4, the word picks selects on q
// (uniform per row: 15 SEL and 4 SHF per vector); it spills in layernorm v5 and was 2% slower in
// rmsnorm bf16 (sweep odd21).
struct Shift {
  const uint4* base;  // the aligned vector below the parameter's column `head`
  int q, r8;          // s / 4 words and (s % 4) x 8 bits
};
template <typename T>
__device__ __forceinline__ Shift shift_for(const T* p) {
  const unsigned long long a = reinterpret_cast<unsigned long long>(p);
#if SHIFT_WORDS
  const int s = static_cast<int>(a & 3);
#else
  const int s = static_cast<int>(a & 15);
#endif
  return Shift{reinterpret_cast<const uint4*>(a - s), s >> 2, (s & 3) * 8};
}
// Word k + q of c[0..7] (k + q <= 7).
__device__ __forceinline__ unsigned word_at(const unsigned* c, int k, int q) {
  return q == 0 ? c[k] : q == 1 ? c[k + 1] : q == 2 ? c[k + 2] : c[k + 3];
}
// Bytes s..s+15 of the 32 bytes lo|hi (little-endian: element order).
__device__ __forceinline__ uint4 funnel16(const uint4& lo, const uint4& hi, int q, int r8) {
  const unsigned c[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  unsigned d[5];
#pragma unroll
  for (int k = 0; k < 5; ++k) d[k] = word_at(c, k, q);
  return kl::funnel_words(d, r8);
}

// Pass 2's bodies: kAligned, every array in x's phase (vectors only); kShifted, y in x's phase, the
// parameters not (their vectors shifted, y stored 16 bytes at a time); kScalar, y out of x's phase
// (x's vectors, then parameters and y element by element; PARAM_SHIFT=0 sends kShifted rows here too).
enum class Body { kAligned, kShifted, kScalar };

// A parameter's vector at p (aligned: p is the vector; shifted: p is the aligned vector below it and
// sh says by how much), zeros if !pred.
template <Body B>
__device__ __forceinline__ uint4 ldp_body(const uint4* p, const Shift& sh, bool pred, const Policies& pol) {
  if constexpr (B == Body::kShifted) {
#if SHIFT_WORDS
    // ld_scalar_if's predicated 4-byte load (the bits of the word, as a float): in program order
    // with the step's other loads.
    const float* w = reinterpret_cast<const float*>(p);
    unsigned c[5];
#pragma unroll
    for (int k = 0; k < 4; ++k) c[k] = __float_as_uint(ld_scalar_if<float>(w + k, pred));
    c[4] = __float_as_uint(ld_scalar_if<float>(w + 4, pred && sh.r8 != 0));
    return kl::funnel_words(c, sh.r8);
#else
    return funnel16(ldp(p, pred, pol), ldp(p + 1, pred, pol), sh.q, sh.r8);
#endif
  } else {
    return ldp(p, pred, pol);
  }
}
// The vector pointer a body steps for parameter array p from column `head` on.
template <Body B, typename T>
__device__ __forceinline__ const uint4* param_vectors(const T* p, const Shift& sh) {
  return B == Body::kShifted ? sh.base : reinterpret_cast<const uint4*>(p);
}

// The group's row: thread index g in the group, the row (or -1 past M), warp index of the group's
// first warp in the block.
struct Place {
  int g, row, warp0;
};
// GG threads per row (the kernel's own dtype's block over ROWS_PER_BLOCK).
template <int GG>
__device__ __forceinline__ Place place_for(int M) {
  const int r = threadIdx.x / GG;
  const int row = blockIdx.x * ROWS_PER_BLOCK + r;
  return Place{static_cast<int>(threadIdx.x % GG), row < M ? row : -1, r * (GG / 32)};
}

// Sum over lanes in groups of W lanes (W a power of two, <= 32): xor butterflies. Every lane of a
// group ends with the same bits.
template <int W>
__device__ __forceinline__ float lane_sum(float v) {
#pragma unroll
  for (int o = W / 2; o > 0; o >>= 1) v += __shfl_xor_sync(rows::FULL_MASK, v, o);
  return v;
}

// Vectors thread g owns in a row of nvec vectors: g, g + GG, ... < nvec, for rows of GG threads.
template <int GG>
__device__ __forceinline__ int owned_vectors(int g, int nvec) { return g < nvec ? (nvec - 1 - g) / GG + 1 : 0; }

// This row (g, geo) and the other rows' parameters share x's 16-byte phase: the fast body.
template <typename T>
__device__ __forceinline__ bool co_aligned(const T* a, const T* b) {
  return ((reinterpret_cast<unsigned long long>(a) ^ reinterpret_cast<unsigned long long>(b)) & 15) == 0;
}

// x * rstd * w for one 16-byte vector of each, word by word (a bf16 pair unpacked, scaled and
// repacked before the next word is touched, so a vector's 8 floats and 8 weights are never all
// live at once): the pass-2 body of the aligned rows. Same arithmetic as unpack / pack.
template <typename T>
__device__ __forceinline__ uint4 scale_vec(const uint4& x, const uint4& w, float rstd);
template <>
__device__ __forceinline__ uint4 scale_vec<float>(const uint4& x, const uint4& w, float rstd) {
  const unsigned a[4] = {x.x, x.y, x.z, x.w}, b[4] = {w.x, w.y, w.z, w.w};
  unsigned o[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) o[i] = __float_as_uint(__uint_as_float(a[i]) * rstd * __uint_as_float(b[i]));
  return make_uint4(o[0], o[1], o[2], o[3]);
}
template <>
__device__ __forceinline__ uint4 scale_vec<__nv_bfloat16>(const uint4& x, const uint4& w, float rstd) {
  const unsigned a[4] = {x.x, x.y, x.z, x.w}, b[4] = {w.x, w.y, w.z, w.w};
  unsigned o[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float lo = __uint_as_float(a[i] << 16) * rstd * __uint_as_float(b[i] << 16);
    const float hi = __uint_as_float(a[i] & 0xffff0000u) * rstd * __uint_as_float(b[i] & 0xffff0000u);
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);  // .x = lo (the low half)
    o[i] = *reinterpret_cast<const unsigned*>(&h);
  }
  return make_uint4(o[0], o[1], o[2], o[3]);
}

// Element e (a compile-time index after unrolling) of a raw 16-byte vector, as a float (the
// general bodies' element-by-element form).
template <typename T>
__device__ __forceinline__ float elem(const uint4& r, int e) {
  const unsigned w[4] = {r.x, r.y, r.z, r.w};
  if constexpr (sizeof(T) == 4) {
    return __uint_as_float(w[e]);
  } else {
    return __uint_as_float((e & 1) ? (w[e >> 1] & 0xffff0000u) : (w[e >> 1] << 16));
  }
}

}  // namespace l2tp
