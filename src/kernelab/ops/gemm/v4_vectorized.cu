// v4_vectorized: v3 with 16-byte accesses: float4 global loads, float4 shared reads and C stores.
//
// What changed from v3: each thread fetches one float4 (4 consecutive k) of A and one of B per
//   step instead of 4 scalars each (LDG.E.128: a warp reads 16 rows x 32 bytes in one
//   instruction), scatters it transposed into shared memory, reads its 8 A and 8 B values per
//   k as 2 + 2 float4 (LDS.128; v3 got the same from the compiler, here it is guaranteed), and
//   stores C as float4. Per step of 8 k a thread issues 2 LDG.128 + 8 STS + 32 LDS.128 for 512
//   FFMAs (v3: 8 LDG.32 + 8 STS + 32 LDS.128): a quarter of the global load instructions and
//   of the L1 tag lookups. A modest step: the FFMAs were already ~90% of the issued work.
// Alignment: a float4 load needs a 16-byte address, so every row of A and B must start on one:
//   K % 4 == 0 and 16-byte-aligned bases. The kernel checks once (a uniform branch) and
//   otherwise loads the same float4 as 4 guarded scalars: any shape and any view stays correct.
// Still missing (v5): the transposed stores collide 2-way (lanes t and t^1 share a row), the
//   16 lanes reading Bs[k][8*tc..] span 512 bytes (2 wavefronts per float4), and loads, stores
//   and math of one step still run in sequence around two __syncthreads().
// Predicted: 26-34 TFLOP/s at 4096^3, +5-15% on v3 (~0.6x cuBLAS; siboehm: 2D 68.7% -> vectorised 78.4%).
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

// One float4 of row `row`, columns k..k+3 of a [rows, K] matrix; zeros outside it.
__device__ __forceinline__ float4 load4(const float* __restrict__ p, int rows, int K, int row, int k, bool vec) {
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
  if (row >= rows) return v;
  const float* q = p + (size_t)row * K + k;
  if (vec) {
    if (k < K) v = *reinterpret_cast<const float4*>(q);  // K % 4 == 0: k < K means k + 3 < K
  } else {
    if (k + 0 < K) v.x = q[0];
    if (k + 1 < K) v.y = q[1];
    if (k + 2 < K) v.z = q[2];
    if (k + 3 < K) v.w = q[3];
  }
  return v;
}

extern "C" __global__ void __launch_bounds__(256) gemm_f32(const float* __restrict__ a, const float* __restrict__ b,
                                                           float* __restrict__ c, int M, int N, int K) {
  __shared__ __align__(16) float As[BK][BM];  // As[k][m] = A[m0 + m][k0 + k]
  __shared__ __align__(16) float Bs[BK][BN];  // Bs[k][n] = B[n0 + n][k0 + k]
  const int t = threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int tr = t / 16, tc = t % 16;
  const bool vec = (K % 4 == 0) && ((reinterpret_cast<size_t>(a) | reinterpret_cast<size_t>(b)) % 16 == 0);
  const int lrow = t / 2, lk = (t % 2) * 4;  // the float4 this thread loads: row t/2, k 0..3 or 4..7

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += BK) {
    const float4 va = load4(a, M, K, m0 + lrow, k0 + lk, vec);
    const float4 vb = load4(b, N, K, n0 + lrow, k0 + lk, vec);
    As[lk + 0][lrow] = va.x; As[lk + 1][lrow] = va.y; As[lk + 2][lrow] = va.z; As[lk + 3][lrow] = va.w;
    Bs[lk + 0][lrow] = vb.x; Bs[lk + 1][lrow] = vb.y; Bs[lk + 2][lrow] = vb.z; Bs[lk + 3][lrow] = vb.w;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      const float4 a0 = *reinterpret_cast<const float4*>(&As[kk][tr * TM]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[kk][tr * TM + 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Bs[kk][tc * TN]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Bs[kk][tc * TN + 4]);
      const float ra[TM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float rb[TN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    }
    __syncthreads();
  }

  const bool vec_c = (N % 4 == 0) && (reinterpret_cast<size_t>(c) % 16 == 0);
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + tr * TM + i;
    if (m >= M) continue;
    float* crow = c + (size_t)m * N;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const int n = n0 + tc * TN + j;
      if (vec_c) {
        if (n < N) *reinterpret_cast<float4*>(crow + n) = make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      } else {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj)
          if (n + jj < N) crow[n + jj] = acc[i][j + jj];
      }
    }
  }
}
