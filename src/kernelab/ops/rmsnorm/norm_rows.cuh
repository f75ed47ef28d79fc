// norm_rows.cuh: what rmsnorm v2 and layernorm v2 share on top of ../softmax/rows.cuh.
//
// Two changes to how a row and its per-column parameters reach the registers, both read off
// the v1 SASS (NVRTC 13.0, sm_90) and the H200 runs:
//   1. x's 16-byte vectors are loaded with a selectable cache hint (X_LOAD). v1 uses __ldcs
//      (LDG.E.EF.128, evict-first); on the H200 the same hint cost vector_add 5% at 2^28
//      (persistent kernel with and without .cs, 790 vs 830 us, NOTES.md), and softmax v2,
//      whose first pass reads x with __ldg, moved 2 reads + 1 write at 0.97x the copy rate
//      where v1's one read + one write (with .cs) ran at 0.92x.
//   2. weight (and bias) vectors are loaded in one batch, all in flight together, instead of
//      v1's one load per stored vector: in v1 the compiler keeps each weight load after the
//      previous vector's store (it cannot prove y and w apart through the store lambdas), so
//      a block in its store phase waits K dependent L1/L2 round trips (4 for bf16, 8 for fp32
//      at N = 8192: ~1-3k cycles) holding its registers with no loads of x in flight.
//      PARAMS_EARLY = 1 issues them right after x's loads, so their latency hides under x's.
//
// A slice keeps x as raw 16-byte vectors (K = E / V of them per thread, 4 registers each: half
// the registers of fp32 values for bf16) and unpacks on use; unpacking bf16 is one shift or
// AND per element. Ownership is rows.cuh's (head scalars, vectors j = k * P + g, tail scalars);
// vectors a thread does not own read as zero bits (0.0f in both dtypes).
#pragma once
#include "../softmax/rows.cuh"
#include "ld_scalar_if.cuh"
#include "../common/words16.cuh"

// X_LOAD: how x's 16-byte vectors are read.
//   0: ld.global.nc (__ldg: read-only path, no eviction hint)  [default]
//   1: ld.global (no qualifiers)
//   2: ld.global.cs (__ldcs: evict-first, what v1 does)
//   3: ld.global.nc.L1::no_allocate (read-only path, not kept in L1)
#ifndef X_LOAD
#define X_LOAD 0
#endif
// PARAMS_EARLY: how many of the per-column parameter arrays are loaded with x, before the
//   reduction (their latency then hides under x's): 0 = none, 1 = weight, 2 = weight and bias
//   (layernorm). The others are loaded after the reduction, all vectors at once before the first
//   store (one exposed round trip). Layernorm's default is 1: with weight and bias both early,
//   x + w + b (48 registers in bf16 at 32 elements per thread) spill at the 64-register cap.
#ifndef PARAMS_EARLY
#define PARAMS_EARLY 1
#endif
// PARAM_WORDS (session 21): a bf16 parameter out of x's 16-byte phase (odd widths) is read as the
//   4-byte words around each vector, funnel-shifted into place (1, default), or element by element
//   (0, as before).
#ifndef PARAM_WORDS
#define PARAM_WORDS 1
#endif

namespace normrows {

__device__ __forceinline__ uint4 ldx(const uint4* p) {
#if X_LOAD == 0
  return __ldg(p);
#elif X_LOAD == 1
  uint4 r;
  asm("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  return r;
#elif X_LOAD == 2
  return __ldcs(p);
#elif X_LOAD == 3
  uint4 r;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p));
  return r;
#else
#error "X_LOAD must be 0 (ld.global.nc), 1 (ld.global), 2 (ld.global.cs) or 3 (ld.global.nc.L1::no_allocate)"
#endif
}

// A read-only 16-byte load in `asm volatile`, so NVVM keeps it in program order (it is neither
// sunk to its use nor merged with another). ptxas still schedules the SASS: in layernorm v2's
// sm_90 SASS the weight loads sit among x's, in rmsnorm v2's after the sum of squares (before
// the barrier); either way they are issued in one batch, not one per stored vector as in v1.
__device__ __forceinline__ uint4 ldg_pinned(const uint4* p) {
  uint4 r;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
  return r;
}

// Predicated loads in one `asm volatile` each, for a kernel that must keep all of a row's loads in
// one straight-line block (layernorm v4). With `owned ? __ldg(p) : 0` and sums under
// `if (owned)`, NVVM sank vector 1's load into the branch that uses it and ptxas issued it after
// vector 0's sum (layernorm v2's sm_90 SASS, NVRTC 13.0): two DRAM round trips per row instead of
// one. Here the predicate is tested inside the asm (setp + @p ld), so no branch exists to sink
// into, and the volatile asm keeps program order among the loads. Returns zeros where `pred` is false
// (the address is then never dereferenced). The outputs are early-clobber: the zeroing movs run
// before the load reads its address operand.
#define NORMROWS_LD_IF(QUAL)                                                                        \
  "{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %5, 0;\n\tmov.b32 %0, 0;\n\tmov.b32 %1, 0;\n\tmov.b32 %2, 0;\n\t" \
  "mov.b32 %3, 0;\n\t@q " QUAL ".v4.u32 {%0, %1, %2, %3}, [%4];\n}"
#if X_LOAD == 0
#define NORMROWS_X_QUAL "ld.global.nc"
#elif X_LOAD == 1
#define NORMROWS_X_QUAL "ld.global"
#elif X_LOAD == 2
#define NORMROWS_X_QUAL "ld.global.cs"
#else
#define NORMROWS_X_QUAL "ld.global.nc.L1::no_allocate"
#endif

// x's vector at p if pred, else zeros: X_LOAD's qualifier.
__device__ __forceinline__ uint4 ldx_if(const uint4* p, bool pred) {
  uint4 r;
  asm volatile(NORMROWS_LD_IF(NORMROWS_X_QUAL)
               : "=&r"(r.x), "=&r"(r.y), "=&r"(r.z), "=&r"(r.w)
               : "l"(p), "r"(static_cast<int>(pred)));
  return r;
}

// A read-only (weight, bias) vector at p if pred, else zeros: ld.global.nc.
__device__ __forceinline__ uint4 ldg_if(const uint4* p, bool pred) {
  uint4 r;
  asm volatile(NORMROWS_LD_IF("ld.global.nc")
               : "=&r"(r.x), "=&r"(r.y), "=&r"(r.z), "=&r"(r.w)
               : "l"(p), "r"(static_cast<int>(pred)));
  return r;
}

using normld::ld_scalar_if;  // one element if pred, else 0.0f (ld_scalar_if.cuh)

// x's row slice for thread g of P: K raw vectors plus the head and tail scalars (0 if not owned).
template <typename T, int E, int P>
struct RawSlice {
  static constexpr int V = rows::Traits<T>::V;
  static constexpr int K = E / V;
  static_assert(E % V == 0 && K >= 1, "E must be a whole number of 16-byte vectors");

  uint4 v[K];
  float h, t;

  __device__ __forceinline__ static bool owns(int k, int g, const rows::Geometry& geo) { return k * P + g < geo.nvec; }

  __device__ __forceinline__ void load(const T* row, const rows::Geometry& geo, int g) {
    const uint4* base = reinterpret_cast<const uint4*>(row + geo.head);
#pragma unroll
    for (int k = 0; k < K; ++k)  // every load issued before any use: K x 16 B in flight per thread
      v[k] = owns(k, g, geo) ? ldx(base + k * P + g) : make_uint4(0u, 0u, 0u, 0u);
    h = g < geo.head ? rows::to_float(row[g]) : 0.0f;
    t = g < geo.tail ? rows::to_float(row[geo.head + geo.nvec * V + g]) : 0.0f;
  }

  // As load(), but every load (K vectors, head, tail) predicated inside its own `asm volatile`
  // (ldx_if / ld_scalar_if): one straight-line block of loads, all issued before any is used.
  __device__ __forceinline__ void load_pinned(const T* row, const rows::Geometry& geo, int g) {
    const uint4* base = reinterpret_cast<const uint4*>(row + geo.head);
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = ldx_if(base + k * P + g, owns(k, g, geo));
    h = ld_scalar_if<T>(row + g, g < geo.head);
    t = ld_scalar_if<T>(row + geo.head + geo.nvec * V + g, g < geo.tail);
  }

  // Vector k as V floats. FORM 0 is rows.cuh's unpack (bf16: shift / AND); forms 1 and 2 do the
  // same with PRMT byte permutes under different selectors. A kernel that unpacks a vector in
  // two passes uses a different form in each: with the same expression twice the compiler keeps
  // the first pass's 32 unpacked floats alive instead of the 16 raw registers (rmsnorm bf16:
  // 64 registers and a 4-byte spill on sm_120, NVRTC 13.0).
  template <int FORM = 0>
  __device__ __forceinline__ void get(int k, float* f) const {
    if constexpr (FORM == 0 || sizeof(T) == 4) {
      rows::unpack<T>(v[k], f);
    } else {
      // bf16 pair w = (hi << 16) | lo: element 2i is lo << 16, element 2i + 1 is w & 0xffff0000.
      // PRMT selector nibbles pick bytes of (w, 0): 4/5 are zero bytes, 0-3 are w's bytes.
      constexpr unsigned LO = FORM == 1 ? 0x1044u : 0x1054u, HI = FORM == 1 ? 0x3244u : 0x3254u;
      const unsigned w[4] = {v[k].x, v[k].y, v[k].z, v[k].w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        f[2 * i] = __uint_as_float(__byte_perm(w[i], 0u, LO));
        f[2 * i + 1] = __uint_as_float(__byte_perm(w[i], 0u, HI));
      }
    }
  }
};

// A per-column parameter (weight, bias) at the slice's vector columns. With `vec` (the array
// has x's row alignment) the K vectors are loaded in one batch through the read-only path (they
// are reused by every row: L1/L2 hits); otherwise get() falls back to scalar loads.
template <typename T, int E, int P>
struct ParamSlice {
  static constexpr int V = rows::Traits<T>::V;
  static constexpr int K = E / V;

  uint4 v[K];

  __device__ __forceinline__ void load(const T* __restrict__ p, const rows::Geometry& geo, int g, bool vec) {
    const uint4* base = reinterpret_cast<const uint4*>(p + geo.head);
#pragma unroll
    for (int k = 0; k < K; ++k)
      v[k] = vec && RawSlice<T, E, P>::owns(k, g, geo) ? ldg_pinned(base + k * P + g) : make_uint4(0u, 0u, 0u, 0u);
  }

  __device__ __forceinline__ void get(const T* __restrict__ p, const rows::Geometry& geo, int g, bool vec, int k,
                                      float* f) const {
    if (vec) {
      rows::unpack<T>(v[k], f);
    } else if constexpr (sizeof(T) == 2 && PARAM_WORDS) {
      // bf16 out of x's phase: the 4-byte words around the vector, funnel-shifted (4-5 loads, where
      // element by element is 8; session 21).
      rows::unpack<T>(kl::ld16_words_nc(p + geo.head + (k * P + g) * V), f);
    } else {
      const int col = geo.head + (k * P + g) * V;
#pragma unroll
      for (int i = 0; i < V; ++i) f[i] = rows::to_float(p[col + i]);
    }
  }
};

// y's and x's rows share their 16-byte phase: y's vectors can be stored 16 bytes wide.
template <typename T>
__device__ __forceinline__ bool co_aligned(const T* a, const T* b) {
  return ((reinterpret_cast<unsigned long long>(a) ^ reinterpret_cast<unsigned long long>(b)) & 15) == 0;
}

}  // namespace normrows
