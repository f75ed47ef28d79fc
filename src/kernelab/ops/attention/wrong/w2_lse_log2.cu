// w2_lse_log2: O is right; the log-sum-exp is written in base 2 (m log2(e) + log2(l)) instead of
// the natural log that FlashAttention returns and a backward pass consumes.
//
// What it shows: a checker that compares O alone passes this kernel on every case. The LSE of a
//   row is ~log(S) + a few, so base 2 is off by a factor 1.44 (1e-1..5 absolute) everywhere
//   except where the LSE is 0, far beyond the LSE's 1e-3 tolerance.
// The kernel: one warp per query row (grid (S, B*H)), each lane owning D/32 columns of O; keys in
//   order with a running max and sum in accurate fp32.
//
// @expect mismatch
// @block 32
// @block_m 1
// @smem_d64 0
// @smem_d128 0
#include <cuda_bf16.h>

#define NEG_INF __int_as_float(0xff800000u)

extern "C" __global__ void attention_bf16(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                                          const __nv_bfloat16* __restrict__ v, __nv_bfloat16* __restrict__ o,
                                          float* __restrict__ lse, int seqlen, int head_dim, int causal, float scale) {
  const int i = blockIdx.x, lane = threadIdx.x;
  const int per = head_dim / 32;  // columns per lane: 2 or 4
  const size_t head = (size_t)blockIdx.y * seqlen * head_dim;
  float qv[4] = {0.f, 0.f, 0.f, 0.f}, acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
  for (int c = 0; c < 4; ++c)
    if (c < per) qv[c] = __bfloat162float(q[head + (size_t)i * head_dim + lane + 32 * c]);
  float m = NEG_INF, l = 0.f;
  const int last = causal ? i : seqlen - 1;
  for (int j = 0; j <= last; ++j) {
    const size_t row = head + (size_t)j * head_dim;
    float part = 0.f;
#pragma unroll
    for (int c = 0; c < 4; ++c)
      if (c < per) part = fmaf(qv[c], __bfloat162float(k[row + lane + 32 * c]), part);
    for (int off = 16; off; off >>= 1) part += __shfl_xor_sync(0xffffffffu, part, off);
    const float sc = part * scale;
    const float m_new = fmaxf(m, sc);
    const float corr = expf(m - m_new);  // expf(-inf) = 0 on the first key
    const float p = expf(sc - m_new);
    l = l * corr + p;
#pragma unroll
    for (int c = 0; c < 4; ++c)
      if (c < per) acc[c] = fmaf(acc[c], corr, p * __bfloat162float(v[row + lane + 32 * c]));
    m = m_new;
  }
#pragma unroll
  for (int c = 0; c < 4; ++c)
    if (c < per) o[head + (size_t)i * head_dim + lane + 32 * c] = __float2bfloat16_rn(acc[c] / l);
  if (lane == 0) lse[(size_t)blockIdx.y * seqlen + i] = m * 1.4426950408889634f + log2f(l);  // BUG: base 2
}
