// w1_no_k_tail: v2's tiled kernel without the K guard on its tile loads.
//
// The bug: it assumes K is a multiple of the 16-wide tile. With K = 45 the last tile reads
//   A[m][45..47], which is really A[m+1][0..2] (the next row), and B likewise, so every C
//   element picks up three wrong products; at the last row it reads past the end of A or B.
//   M and N are still guarded, so the sizes the checker is most likely to try first (powers
//   of two) all pass: only a K tail (17x31x45, 127x129x65, 16x130x1001) exposes it.
// @expect mismatch
// @dtypes float32
// @block 16 16
// @tile 16 16

#define TILE 16

extern "C" __global__ void gemm_f32(const float* __restrict__ a, const float* __restrict__ b,
                                    float* __restrict__ c, int M, int N, int K) {
  __shared__ float As[TILE][TILE + 1];
  __shared__ float Bs[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;
  float sum = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[ty][tx] = (m0 + ty < M) ? a[(size_t)(m0 + ty) * K + k0 + tx] : 0.0f;  // no k < K check
    Bs[ty][tx] = (n0 + ty < N) ? b[(size_t)(n0 + ty) * K + k0 + tx] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TILE; ++i) sum = fmaf(As[ty][i], Bs[tx][i], sum);
    __syncthreads();
  }
  const int m = m0 + ty, n = n0 + tx;
  if (m < M && n < N) c[(size_t)m * N + n] = sum;
}
