// v0_naive: attention as three kernels over a materialised score matrix, for teaching and as
// a second reference.
//
// What it is: (1) `attention_bf16` writes S = scale * Q K^T (and -inf above the diagonal when
//   causal) to an fp32 workspace [B*H, S, S] that the launcher (v0_naive.py) allocates; (2)
//   `attention_softmax_f32` turns each row of S into P = softmax(S) in place and writes the
//   row's LSE = max + log(sum exp(s - max)); (3) `attention_pv_bf16` writes O = P V in bf16.
//   One thread per output element, fp32 everywhere, accurate expf/logf, no tiling.
// Why it is slow: every score crosses DRAM 6 times: written by (1), read three times and written
//   once by (2) (max, sum, normalise), read by (3): 24 bytes per score. At B4 H32 S4096 that is
//   52 GB, ~13 ms at 4 TB/s, against 1.1 TFLOP of work; and the dot products are un-tiled FMA
//   loops on CUDA cores that issue one 2-byte load per multiply-add (each K or V row is re-read
//   once per query row, through L1), ~15-20 ms each for (1) and (3) at one load per cycle per
//   SM quarter.
// Predicted: ~45 ms at B4 H32 S4096 D128 non-causal, ~25 TFLOP/s (2.5% of the bf16 tensor peak,
//   1/25 of SDPA); causal does the same work (it masks, it does not skip), so half the counted rate.
// Measured: BENCHMARKS.md, attention rows (generated from results JSON).
//
// @block 256
// @block_m 8
// @workspace scores_fp32
#include <cuda_bf16.h>

// NVRTC has no <math.h> INFINITY: -inf as its IEEE bit pattern.
#define NEG_INF __int_as_float(0xff800000u)

// (1) S[bh, i, j] = scale * q_i . k_j, -inf where causal hides key j from query i.
// Block (32, 8): threadIdx.x walks keys j (consecutive threads read consecutive K rows, which
// L1 serves: each row is 128/256 bytes), threadIdx.y walks queries i. Grid (ceil(S/32), ceil(S/8), B*H).
extern "C" __global__ void attention_bf16(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                                          float* __restrict__ scores, int seqlen, int head_dim, int causal,
                                          float scale) {
  const int j = blockIdx.x * 32 + threadIdx.x;
  const int i = blockIdx.y * 8 + threadIdx.y;
  if (i >= seqlen || j >= seqlen) return;
  const size_t bh = blockIdx.z;
  const __nv_bfloat16* qi = q + (bh * seqlen + i) * head_dim;
  const __nv_bfloat16* kj = k + (bh * seqlen + j) * head_dim;
  float acc = 0.f;
  for (int d = 0; d < head_dim; ++d) acc = fmaf(__bfloat162float(qi[d]), __bfloat162float(kj[d]), acc);
  scores[(bh * seqlen + i) * seqlen + j] = (causal && j > i) ? NEG_INF : acc * scale;
}

// (2) One block of 256 threads per row (grid B*H*S): max, then sum of exp, then P in place.
extern "C" __global__ void attention_softmax_f32(float* __restrict__ scores, float* __restrict__ lse, int seqlen) {
  __shared__ float red[32];
  float* row = scores + (size_t)blockIdx.x * seqlen;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  float m = NEG_INF;
  for (int j = threadIdx.x; j < seqlen; j += blockDim.x) m = fmaxf(m, row[j]);
  for (int off = 16; off; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  if (lane == 0) red[warp] = m;
  __syncthreads();
  m = red[0];
  for (int w = 1; w < blockDim.x / 32; ++w) m = fmaxf(m, red[w]);
  __syncthreads();  // everyone has read red[] before it is reused for the sum

  float l = 0.f;
  for (int j = threadIdx.x; j < seqlen; j += blockDim.x) l += expf(row[j] - m);
  for (int off = 16; off; off >>= 1) l += __shfl_xor_sync(0xffffffffu, l, off);
  if (lane == 0) red[warp] = l;
  __syncthreads();
  l = 0.f;
  for (int w = 0; w < blockDim.x / 32; ++w) l += red[w];

  // Every row has at least one visible key (key 0 is visible to every query), so m is finite and l >= 1.
  const float inv = 1.f / l;
  for (int j = threadIdx.x; j < seqlen; j += blockDim.x) row[j] = expf(row[j] - m) * inv;
  if (threadIdx.x == 0) lse[blockIdx.x] = m + logf(l);
}

// (3) O[bh, i, d] = sum_j P[bh, i, j] V[bh, j, d]. Block = head_dim threads (one per d, so a
// warp reads 64 contiguous bytes of a V row), grid (S, B*H); P[i, j] is the same address for
// the whole block (a broadcast).
extern "C" __global__ void attention_pv_bf16(const float* __restrict__ probs, const __nv_bfloat16* __restrict__ v,
                                             __nv_bfloat16* __restrict__ o, int seqlen, int head_dim) {
  const int i = blockIdx.x, d = threadIdx.x;
  const size_t bh = blockIdx.y;
  const float* p = probs + (bh * seqlen + i) * seqlen;
  const __nv_bfloat16* vh = v + bh * seqlen * head_dim;
  float acc = 0.f;
  for (int j = 0; j < seqlen; ++j) acc = fmaf(p[j], __bfloat162float(vh[(size_t)j * head_dim + d]), acc);
  o[(bh * seqlen + i) * head_dim + d] = __float2bfloat16_rn(acc);
}
