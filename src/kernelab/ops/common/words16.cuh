// words16.cuh: 16 bytes at an address that is only 2- or 4-byte aligned, read as the 4-byte words
// around them and funnel-shifted into place. Session 21: the norms' weight and bias and gelu_bias's
// bias, where a row of odd width puts them out of x's 16-byte phase. Reading element by element took
// 8 loads per bf16 vector; this takes 4, plus a 5th when the address is 2 bytes off a word. That 5th
// word holds the 16 bytes' last element, so it lies inside the allocation. Included as
// "../common/words16.cuh".
#pragma once
#include <cuda_runtime.h>

namespace kl {

// The 4-byte word at or below p, and how many bits past it p lies (0, 8, 16 or 24; 0 or 16 for bf16).
struct WordPhase {
  const unsigned* w;
  unsigned r8;
};
__device__ __forceinline__ WordPhase word_phase(const void* p) {
  const unsigned long long a = reinterpret_cast<unsigned long long>(p);
  return WordPhase{reinterpret_cast<const unsigned*>(a & ~3ull), static_cast<unsigned>(a & 3) * 8};
}

// The 16 bytes that start r8 / 8 bytes into the words c[0..4] (little-endian: element order).
__device__ __forceinline__ uint4 funnel_words(const unsigned (&c)[5], unsigned r8) {
  return make_uint4(__funnelshift_r(c[0], c[1], r8), __funnelshift_r(c[1], c[2], r8), __funnelshift_r(c[2], c[3], r8),
                    __funnelshift_r(c[3], c[4], r8));
}

// The 16 bytes that start b bytes (0 .. 15) into the 32 bytes lo:hi (element order), for elements of
// E bytes (b a multiple of E): words picked by selects on b / 4, then, for 2-byte elements, one funnel
// shift a word. With lo = hi = v it rotates v: element i of the result is element (i + b / E) mod
// (16 / E) of v (session 22: transpose's shifted gather).
template <unsigned E>
__device__ __forceinline__ uint4 bytes_at(const uint4 lo, const uint4 hi, const unsigned b) {
  const unsigned w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const unsigned q = b >> 2;
  unsigned c[5];
#pragma unroll
  for (int i = 0; i < 5; ++i) c[i] = q == 0 ? w[i] : q == 1 ? w[i + 1] : q == 2 ? w[i + 2] : w[i + 3];
  if constexpr (E >= 4) return make_uint4(c[0], c[1], c[2], c[3]);
  return funnel_words(c, (b & 3) * 8);
}

// The 16 bytes at p through the read-only path (__ldg: the compiler schedules these loads).
__device__ __forceinline__ uint4 ld16_words_nc(const void* p) {
  const WordPhase ph = word_phase(p);
  unsigned c[5];
#pragma unroll
  for (int i = 0; i < 4; ++i) c[i] = __ldg(ph.w + i);
  c[4] = ph.r8 ? __ldg(ph.w + 4) : 0u;  // only when p is off a word: then this word holds the last element
  return funnel_words(c, ph.r8);
}

}  // namespace kl
