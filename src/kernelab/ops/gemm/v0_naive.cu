// v0_naive: one thread per element of C, the textbook triple loop. C = A · Bᵀ (B is [N, K]).
//
// What it does: thread (x, y) of a 32x8 block owns C[m][n] with n = 32*blockIdx.x + x and
//   m = 8*blockIdx.y + y, and walks k = 0..K-1 over A[m][k] * B[n][k], one fp32 FMA each.
// Count first (4096^3): 137 GFLOP; the bytes that must move are 201 MB (A, B, C once), so
//   the floor is arithmetic: 2.05 ms at 67 TFLOP/s. cuBLAS: 2.7 ms (51 TFLOP/s, ANCHORS.md).
// Why it is slow: in one warp the 32 lanes hold 32 different n, so each `B[n][k]` load touches
//   32 rows K*4 = 16 KB apart: 32 sectors for 32 useful floats (one 128-byte line would do).
//   The sectors stay in L1 for the next 7 k (8 floats per 32-byte sector), but L1 still serves
//   ~33 tag lookups (32 for B, 1 broadcast for A) per warp per 32 FMAs: about 1 FMA per clock
//   per SM against 128, and every operand is re-read K times from L1/L2 (2*M*N*K*4 bytes).
// Predicted: ~1% of the FMA peak, 0.4-0.8 TFLOP/s at 4096^3 (~0.01x cuBLAS; siboehm's naive
//   SGEMM ran at 1.3% of cuBLAS on an A6000).
// Measured: BENCHMARKS.md, gemm rows (generated from results JSON).
//
// @dtypes float32
// @block 32 8
// @tile 8 32

extern "C" __global__ void gemm_f32(const float* __restrict__ a, const float* __restrict__ b,
                                    float* __restrict__ c, int M, int N, int K) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  const int m = blockIdx.y * blockDim.y + threadIdx.y;
  if (m >= M || n >= N) return;
  const float* arow = a + (size_t)m * K;
  const float* brow = b + (size_t)n * K;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc = fmaf(arow[k], brow[k], acc);
  c[(size_t)m * N + n] = acc;
}
