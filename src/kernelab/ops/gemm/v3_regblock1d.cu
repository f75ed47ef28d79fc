// v3_regblock1d: 1D register blocking: each thread computes a column of 8 C values (the step the
// issue's table puts before v3_regblock2d's 8x8 patches).
//
// What changed from v2: a 512-thread block owns a 64x64 tile of C and walks K in steps of 8,
//   staging A[64 rows][8] and B[64 rows][8] in shared memory transposed (As[k][m], Bs[k][n], as
//   v3_regblock2d does). Thread t computes rows 8*(t/64) .. +7 of column t%64: per k it reads one
//   B value into a register and reuses it for 8 FMAs with 8 A values, so shared-memory values
//   read per FMA fall from v2's 2 to 9/8 (the sm_90 SASS reads them as 3 instructions per k:
//   A's 8 contiguous values as 2 LDS.128, one LDS of B; 64 FFMA and 24 LDS per 8-deep step).
// Why not faster yet: 9 shared loads per 8 FMAs keep the LDS port busier than the FMA pipe
//   (v3_regblock2d's 8x8 outer product needs 16 per 64, 0.25 per FMA); the global loads are scalar.
// Predicted: bytes first: 64x64 tiles move 2 x 64 x 8 floats per 2 x 64 x 64 x 8 FLOPs = 16
//   FLOP/byte from L2 (v2 32x32: 8). Shared-memory bound: per SM 4 schedulers x 1 LDS / clk at
//   9/8 loads per FMA give at most ~0.45 of the FFMA peak; siboehm's 1D blocktiling reached 36%
//   of cuBLAS on an A6000. Predicted 11-16 TFLOP/s at 4096^3 (0.22-0.32x cuBLAS): between v2
//   (6.2) and v3_regblock2d (26.6).
// Measured (H200, docs/runs/nvidia-h200-20261130T131145.json, cuBLAS 50.7 TFLOP/s in the same run):
//   15.4 TFLOP/s at 4096^3 = 0.30x cuBLAS (2.5x v2, 0.58x v3_regblock2d), 14.9 at 2048^3, 12.7 at
//   1024^3: the top of the predicted 11-16.
// Measured: BENCHMARKS.md, gemm rows (generated from results JSON).
//
// @dtypes float32
// @block 512
// @tile 64 64

#define BM 64
#define BN 64
#define BK 8
#define TM 8

extern "C" __global__ void __launch_bounds__(512) gemm_f32(const float* __restrict__ a, const float* __restrict__ b,
                                                           float* __restrict__ c, int M, int N, int K) {
  __shared__ float As[BK][BM];  // As[k][m] = A[m0 + m][k0 + k]
  __shared__ float Bs[BK][BN];  // Bs[k][n] = B[n0 + n][k0 + k]
  const int t = threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int tr = t / BN, tc = t % BN;  // this thread's column of 8: rows tr*8.., column tc

  float acc[TM];
#pragma unroll
  for (int i = 0; i < TM; ++i) acc[i] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += BK) {
    // 64 rows x 8 k = 512 elements per operand, one per thread: element t sits at row t/8, k t%8,
    // so a warp reads 4 rows x 8 consecutive floats (32-byte pieces).
    const int row = t / BK, kk = t % BK, k = k0 + kk;
    As[kk][row] = (m0 + row < M && k < K) ? a[(size_t)(m0 + row) * K + k] : 0.0f;
    Bs[kk][row] = (n0 + row < N && k < K) ? b[(size_t)(n0 + row) * K + k] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int q = 0; q < BK; ++q) {
      const float bv = Bs[q][tc];  // one B value, reused TM times
#pragma unroll
      for (int i = 0; i < TM; ++i) acc[i] = fmaf(As[q][tr * TM + i], bv, acc[i]);
    }
    __syncthreads();
  }

  const int n = n0 + tc;
  if (n >= N) return;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + tr * TM + i;
    if (m < M) c[(size_t)m * N + n] = acc[i];
  }
}
