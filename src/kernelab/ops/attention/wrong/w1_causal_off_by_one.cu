// w1_causal_off_by_one: a correct-looking online-softmax kernel whose causal mask lets each query
// see one key too many (j <= i + 1 instead of j <= i).
//
// What it shows: the bug is invisible without causal test cases, and in them it is invisible at
//   S = 1 (there is no key i + 1) and in the last row (it is capped by S). Every other causal row
//   mixes in one future key: its weight is about 1/(i + 2), so O moves by ~1e-2..1 absolute, far
//   beyond the 1e-2 tolerance for small i; non-causal cases pass.
// The kernel: one warp per query row (grid (S, B*H)), each lane owning D/32 columns of O; keys in
//   order with a running max and sum (exp/log in accurate fp32), so apart from the mask it matches
//   the reference to fp32 rounding.
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
  const int last = causal ? min(seqlen - 1, i + 1) : seqlen - 1;  // BUG: i + 1 should be i
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
  if (lane == 0) lse[(size_t)blockIdx.y * seqlen + i] = m + logf(l);
}
