// Shared-memory tiled SGEMM with and without the +1 padding (seeds/004 §3.3).
//
// tiled_nn: the seeds' matMulShared as printed: C = A B with A [M, K] and B [K, N] row-major,
//   16 x 16 tiles, As[ty][tx] and Bs[ty][tx] loaded row-wise, inner loop As[ty][i] * Bs[i][tx].
//   A warp of the 16 x 16 block is two rows ty = 2w, 2w + 1 with tx = 0..15. As[ty][i] is two
//   addresses (a broadcast each), Bs[i][tx] is 16 consecutive words: no read conflicts with or
//   without padding. (With PAD = 1 the stores of the two rows overlap one bank: 2-way.)
// tiled_tn: the same tiling for C = A Bᵀ with B stored [N, K] (nn.Linear's weight), so the tile
//   is Bs[n][k] and the inner loop reads Bs[tx][i]: 16 lanes down a column. With 16-float rows
//   those are 16 words 16 apart: 2 banks, an 8-way conflict; with 17-float rows, 16 banks.
// PAD (0 or 1) is the padding in floats per tile row.
#ifndef PAD
#define PAD 1
#endif
#define TILE 16

extern "C" __global__ void tiled_nn(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                    int M, int N, int K) {
  __shared__ float As[TILE][TILE + PAD];
  __shared__ float Bs[TILE][TILE + PAD];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int a_row = blockIdx.y * TILE + ty;
  const int b_col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  for (int k = 0; k < K; k += TILE) {
    As[ty][tx] = (a_row < M && k + tx < K) ? A[(size_t)a_row * K + k + tx] : 0.0f;
    Bs[ty][tx] = (k + ty < K && b_col < N) ? B[(size_t)(k + ty) * N + b_col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TILE; ++i) sum += As[ty][i] * Bs[i][tx];
    __syncthreads();
  }
  if (a_row < M && b_col < N) C[(size_t)a_row * N + b_col] = sum;
}

extern "C" __global__ void tiled_tn(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                    int M, int N, int K) {
  __shared__ float As[TILE][TILE + PAD];  // As[m][k]
  __shared__ float Bs[TILE][TILE + PAD];  // Bs[n][k]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;
  float sum = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    const int k = k0 + tx;
    As[ty][tx] = (m0 + ty < M && k < K) ? A[(size_t)(m0 + ty) * K + k] : 0.0f;
    Bs[ty][tx] = (n0 + ty < N && k < K) ? B[(size_t)(n0 + ty) * K + k] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TILE; ++i) sum += As[ty][i] * Bs[tx][i];
    __syncthreads();
  }
  if (m0 + ty < M && n0 + tx < N) C[(size_t)(m0 + ty) * N + n0 + tx] = sum;
}
