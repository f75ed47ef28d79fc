// v2_smem_tiled: the seeds' shared-memory tiled kernel (seeds/004 §3.3): 16x16 tiles, +1 padding.
//
// What changed from v1: a 16x16 block stages a 16x16 tile of A and of B in shared memory per
//   step of 16 along K (both loaded coalesced along K: 16 lanes read 64 contiguous bytes), then
//   each thread does 16 FMAs for its C[m][n] out of shared memory. Every element fetched from
//   global memory is now used 16 times instead of once: L2->SM traffic falls 16x, to
//   2*M*N*K*4/16 = 34 GB at 4096^3. As in the seeds, out-of-range rows and columns load zeros,
//   two __syncthreads() fence each tile, and each shared row has 17 floats.
// The +1 padding, in this layout: Bs holds B as Bs[n][k] (B is [N, K]), and the inner loop
//   reads Bs[tx][i]: 16 lanes reading down a column. With 16-float rows those addresses are
//   16 words apart, i.e. 2 banks for 16 lanes: an 8-way bank conflict on every read. With 17
//   floats they land in 16 different banks: conflict-free. (As[ty][i] is a broadcast.)
// Why still slow: 2 shared loads per FMA. Shared memory serves one 128-byte wavefront per
//   clock per SM, so at best 16 FMAs per clock per SM (12.5% of 128).
// Predicted: 5-8 TFLOP/s at 4096^3 (~0.13x cuBLAS; siboehm's smem-tiled SGEMM: 12.8%).
// Measured: BENCHMARKS.md, gemm rows.
//
// @dtypes float32
// @block 16 16
// @tile 16 16

#define TILE 16

extern "C" __global__ void gemm_f32(const float* __restrict__ a, const float* __restrict__ b,
                                    float* __restrict__ c, int M, int N, int K) {
  __shared__ float As[TILE][TILE + 1];  // As[m][k] = A[m0 + m][k0 + k]
  __shared__ float Bs[TILE][TILE + 1];  // Bs[n][k] = B[n0 + n][k0 + k]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;
  const int m = m0 + ty, n = n0 + tx;  // this thread's C element
  float sum = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    // Thread (ty, tx) loads A[m0 + ty][k0 + tx] and B[n0 + ty][k0 + tx]: rows along ty, K along tx.
    const int k = k0 + tx;
    As[ty][tx] = (m0 + ty < M && k < K) ? a[(size_t)(m0 + ty) * K + k] : 0.0f;
    Bs[ty][tx] = (n0 + ty < N && k < K) ? b[(size_t)(n0 + ty) * K + k] : 0.0f;
    __syncthreads();  // the whole tile is in shared memory
#pragma unroll
    for (int i = 0; i < TILE; ++i) sum = fmaf(As[ty][i], Bs[tx][i], sum);
    __syncthreads();  // everyone is done reading before the next tile overwrites it
  }
  if (m < M && n < N) c[(size_t)m * N + n] = sum;
}
