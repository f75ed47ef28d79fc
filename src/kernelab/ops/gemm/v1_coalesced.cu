// v1_coalesced: global-memory coalescing. One warp per element of C, its 32 lanes splitting K.
//
// What changed from v0: in this layout both A[m][:] and B[n][:] run along K, so no mapping of
//   lanes to (m, n) makes a warp's loads contiguous; mapping lanes to k does. Lane l reads
//   A[m][k0 + l] and B[n][k0 + l]: one 128-byte line per load instruction instead of v0's 32
//   sectors. Each lane keeps a partial sum over k = l, l+32, ...; five butterfly shuffles
//   (__shfl_xor_sync) add the 32 partials, and lane 0 stores C[m][n]. A block's 8 warps take 8
//   neighbouring n of one row m, so A[m][:] is fetched once into L1 and read 8 times.
// Why faster: L1 work per 32 FMAs drops from ~33 tag lookups to 2 (one A line, one B line), so
//   L1 stops being the limit. What limits now is traffic: every warp streams a whole B row
//   (K*4 bytes) for one output, so B crosses L2->SM M times: M*N*K*4 = 275 GB at 4096^3, at
//   roughly 5-10 TB/s of L2 bandwidth = 30-55 ms. (The shuffles add 5 steps per K/32 FMAs.)
// Predicted: 2.5-4.5 TFLOP/s at 4096^3, ~6x v0 (~0.06x cuBLAS). Same math per element as v0
//   but summed as 32 strided partial sums plus a tree: slightly smaller rounding error.
// Measured: BENCHMARKS.md, gemm rows.
//
// @dtypes float32
// @block 256
// @tile 1 8

extern "C" __global__ void gemm_f32(const float* __restrict__ a, const float* __restrict__ b,
                                    float* __restrict__ c, int M, int N, int K) {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;  // 8 warps: n = 8*blockIdx.x + warp
  const int m = blockIdx.y;
  const int n = blockIdx.x * 8 + warp;
  if (m >= M || n >= N) return;  // whole warps leave together: the shuffles below stay full-warp
  const float* arow = a + (size_t)m * K;
  const float* brow = b + (size_t)n * K;
  float acc = 0.0f;
  for (int k = lane; k < K; k += 32) acc = fmaf(arow[k], brow[k], acc);
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, offset);
  if (lane == 0) c[(size_t)m * N + n] = acc;
}
