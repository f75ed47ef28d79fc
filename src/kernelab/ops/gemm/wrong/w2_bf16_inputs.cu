// w2_bf16_inputs: an fp32 GEMM that quietly multiplies bf16-rounded inputs ("fast enough math").
//
// The bug: every A and B element is rounded to bf16 (8 significant bits) before its product,
//   as a kernel feeding fp32 data to bf16 tensor cores would. Each product is then off by up
//   to ~2^-8 relative, and C by ~2e-3 (sigma, with unit-variance C): about 10x the fp32
//   tolerance at K = 4096 and 50x at K = 256, yet every number still looks plausible.
// @expect precision
// @dtypes float32
// @block 32 8
// @tile 8 32
#include <cuda_bf16.h>

__device__ __forceinline__ float to_bf16_and_back(float x) { return __bfloat162float(__float2bfloat16_rn(x)); }

extern "C" __global__ void gemm_f32(const float* __restrict__ a, const float* __restrict__ b,
                                    float* __restrict__ c, int M, int N, int K) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  const int m = blockIdx.y * blockDim.y + threadIdx.y;
  if (m >= M || n >= N) return;
  const float* arow = a + (size_t)m * K;
  const float* brow = b + (size_t)n * K;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc = fmaf(to_bf16_and_back(arow[k]), to_bf16_and_back(brow[k]), acc);
  c[(size_t)m * N + n] = acc;
}
