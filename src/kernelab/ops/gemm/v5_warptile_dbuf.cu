// v5_warptile_dbuf: warp tiling and double buffering (the CUTLASS SIMT SGEMM shape, 128x128x8).
//
// What changed from v4, three things that together keep the FMA pipes fed:
//   1. Warp tiling. The 8 warps own 64x32 sub-tiles of the 128x128 block tile (2 x 4 warps),
//      and within a warp lane (lm = lane/4, ln = lane%4) owns rows {lm*4.., 32+lm*4..} and
//      columns {ln*4.., 16+ln*4..}: an 8x8 patch made of four 4x4 pieces. Its shared reads per k
//      are 2 float4 of A and 2 of B whose addresses differ across the warp only in lm (8 x 16 B,
//      one contiguous 128-byte row) or ln (4 x 16 B): no bank conflicts, all broadcasts; v4's
//      B reads spanned 512 bytes. The C stores become 64-byte row pieces too.
//   2. Padded, conflict-free transposed stores: shared rows are 128 + 4 floats (528 bytes, still
//      16-byte aligned), so the 2 lanes per row that v4 sent to one bank now hit banks 16 apart.
//   3. Double buffering. Two shared stages: while the block computes on one (8 k-steps of
//      64 FMAs per thread), the float4s of the next tile are already in flight into registers,
//      and land in the other stage afterwards: one __syncthreads() per tile instead of two, and
//      the global-load latency (~600 ns) hides behind 512 FMAs. The per-k fragments are double
//      buffered in registers as well (load k+1 while multiplying k).
// Budget: 64 accumulators + 32 fragment + 8 prefetch registers; __launch_bounds__(256, 2) caps
//   a thread at 128 registers so two blocks (16 warps) share an SM: 34 KB of shared memory.
// Predicted: 42-48 TFLOP/s at 4096^3, 0.85-0.95x cuBLAS (siboehm's warptiled SGEMM: 93.7% of
//   cuBLAS on an A6000). The floor is 67 TFLOP/s; cuBLAS itself is at 76% of it.
// Measured: BENCHMARKS.md, gemm rows.
//
// @dtypes float32
// @block 256
// @tile 128 128

#define BM 128
#define BN 128
#define BK 8
#define PAD 4  // floats per shared row: row k+4 starts 4*132 = 528 = 16 (mod 32) banks after row k (see 2.)
#define LDS (BM + PAD)

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

// Writes a float4 of 4 consecutive k of one row into column `row` of a transposed stage.
__device__ __forceinline__ void store_t(float (*s)[LDS], int row, int k, float4 v) {
  s[k + 0][row] = v.x;
  s[k + 1][row] = v.y;
  s[k + 2][row] = v.z;
  s[k + 3][row] = v.w;
}

extern "C" __global__ void __launch_bounds__(256, 2) gemm_f32(const float* __restrict__ a, const float* __restrict__ b,
                                                              float* __restrict__ c, int M, int N, int K) {
  __shared__ __align__(16) float As[2][BK][LDS];  // As[stage][k][m] = A[m0 + m][k0 + k]
  __shared__ __align__(16) float Bs[2][BK][LDS];  // Bs[stage][k][n] = B[n0 + n][k0 + k]
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int wm = (warp / 4) * 64, wn = (warp % 4) * 32;  // the warp's 64x32 sub-tile
  const int lm = (lane / 4) * 4, ln = (lane % 4) * 4;    // the lane's 4x4 pieces inside it
  const bool vec = (K % 4 == 0) && ((reinterpret_cast<size_t>(a) | reinterpret_cast<size_t>(b)) % 16 == 0);
  const int lrow = t / 2, lk = (t % 2) * 4;  // the float4 this thread fetches per tile and operand

  float acc[8][8];  // acc[i][j]: row wm + (i/4)*32 + lm + i%4, column wn + (j/4)*16 + ln + j%4
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  const int tiles = (K + BK - 1) / BK;
  float4 pa = load4(a, M, K, m0 + lrow, lk, vec);
  float4 pb = load4(b, N, K, n0 + lrow, lk, vec);
  store_t(As[0], lrow, lk, pa);
  store_t(Bs[0], lrow, lk, pb);
  __syncthreads();

  for (int kt = 0; kt < tiles; ++kt) {
    const int cur = kt & 1;
    const bool more = kt + 1 < tiles;
    if (more) {  // next tile's loads go out now and complete while we compute
      pa = load4(a, M, K, m0 + lrow, (kt + 1) * BK + lk, vec);
      pb = load4(b, N, K, n0 + lrow, (kt + 1) * BK + lk, vec);
    }
    float ra[2][8], rb[2][8];
#define LOAD_FRAGS(buf, kk)                                                        \
    {                                                                              \
      const float4 x0 = *reinterpret_cast<const float4*>(&As[cur][kk][wm + lm]);      \
      const float4 x1 = *reinterpret_cast<const float4*>(&As[cur][kk][wm + 32 + lm]); \
      const float4 y0 = *reinterpret_cast<const float4*>(&Bs[cur][kk][wn + ln]);      \
      const float4 y1 = *reinterpret_cast<const float4*>(&Bs[cur][kk][wn + 16 + ln]); \
      ra[buf][0] = x0.x; ra[buf][1] = x0.y; ra[buf][2] = x0.z; ra[buf][3] = x0.w;  \
      ra[buf][4] = x1.x; ra[buf][5] = x1.y; ra[buf][6] = x1.z; ra[buf][7] = x1.w;  \
      rb[buf][0] = y0.x; rb[buf][1] = y0.y; rb[buf][2] = y0.z; rb[buf][3] = y0.w;  \
      rb[buf][4] = y1.x; rb[buf][5] = y1.y; rb[buf][6] = y1.z; rb[buf][7] = y1.w;  \
    }
    LOAD_FRAGS(0, 0)
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      if (kk + 1 < BK) LOAD_FRAGS((kk + 1) & 1, kk + 1)
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(ra[kk & 1][i], rb[kk & 1][j], acc[i][j]);
    }
#undef LOAD_FRAGS
    if (more) {  // the other stage was last read in iteration kt-1, before its closing barrier
      store_t(As[cur ^ 1], lrow, lk, pa);
      store_t(Bs[cur ^ 1], lrow, lk, pb);
    }
    __syncthreads();
  }

  const bool vec_c = (N % 4 == 0) && (reinterpret_cast<size_t>(c) % 16 == 0);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int m = m0 + wm + (i / 4) * 32 + lm + i % 4;
    if (m >= M) continue;
    float* crow = c + (size_t)m * N;
#pragma unroll
    for (int jp = 0; jp < 2; ++jp) {
      const int n = n0 + wn + jp * 16 + ln;
      const int j = jp * 4;
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
