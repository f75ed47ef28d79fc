// v3_regblock2d: 2D register blocking: 128x128 block tiles, each thread computes an 8x8 patch of C.
//
// What changed from v2: a 256-thread block owns a 128x128 tile of C and walks K in steps of 8.
//   Per step it stages A[128 rows][8] and B[128 rows][8] in shared memory, stored transposed
//   (As[k][m], Bs[k][n]) so that the 8 values one thread needs at a given k are contiguous.
//   Thread t keeps a 8x8 patch of C in registers (rows 8*(t/16).., columns 8*(t%16)..); per k
//   it reads 8 A values and 8 B values from shared memory into registers and does 8*8 = 64
//   FMAs with them (an outer product). Shared-memory traffic per FMA falls from 2 loads (v2) to
//   16/64 = 0.25, and global traffic per FMA from 1/16 to 1/128 of an element per operand.
//   (1D blocking, one column of 8, is the midpoint: 9 loads per 8 FMAs; we go straight to 2D.)
// Why not faster yet: (1) global loads are scalar: 4 per operand per thread per step, each
//   warp instruction touching 4 rows x 32 bytes; (2) the transposed stores As[k][row] from a
//   warp hit the same bank 8 times (lanes with the same row, 8 different k, 128 floats apart);
//   (3) the reads Bs[k][8*tc..] of 16 lanes are 32 bytes apart: 2 wavefronts where 1 would do.
//   (The compiler already merges each thread's 8 contiguous shared reads into 2 LDS.128: the
//   SASS has 32 LDS.128 and 512 FFMA per 8-deep step.)
// Predicted: 22-30 TFLOP/s at 4096^3 (~0.5x cuBLAS; siboehm's 2D blocktiling reached 68.7% of
//   cuBLAS on an A6000, where cuBLAS runs closer to its FMA peak than on Hopper).
// Measured: BENCHMARKS.md, gemm rows.
//
// @dtypes float32
// @block 256
// @tile 128 128

#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8

extern "C" __global__ void __launch_bounds__(256) gemm_f32(const float* __restrict__ a, const float* __restrict__ b,
                                                           float* __restrict__ c, int M, int N, int K) {
  __shared__ float As[BK][BM];  // As[k][m] = A[m0 + m][k0 + k]
  __shared__ float Bs[BK][BN];  // Bs[k][n] = B[n0 + n][k0 + k]
  const int t = threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int tr = t / 16, tc = t % 16;  // this thread's 8x8 patch: rows tr*8.., columns tc*8..

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += BK) {
    // 128 rows x 8 k = 1024 elements per operand, 4 per thread: element e = t + 256*i sits at
    // row e/8, k e%8, so a warp reads 4 rows x 8 consecutive floats (32-byte pieces).
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int e = t + 256 * i, row = e / BK, kk = e % BK, k = k0 + kk;
      As[kk][row] = (m0 + row < M && k < K) ? a[(size_t)(m0 + row) * K + k] : 0.0f;
      Bs[kk][row] = (n0 + row < N && k < K) ? b[(size_t)(n0 + row) * K + k] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float ra[TM], rb[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) ra[i] = As[kk][tr * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) rb[j] = Bs[kk][tc * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + tr * TM + i;
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int n = n0 + tc * TN + j;
      if (n < N) c[(size_t)m * N + n] = acc[i][j];
    }
  }
}
