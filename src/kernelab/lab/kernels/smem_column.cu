// Shared-memory bank conflicts, isolated (seeds/003 "memory hierarchy": column access conflicts,
// one column of padding fixes it).
//
// A block fills a 32 x (32 + PAD) float tile, then every warp reads it down columns, again and
// again: in one round, lane l reads row (l + r) mod 32 at 32 fixed columns. With PAD = 0 a row
// is 128 bytes, so element [row][c] is word 32 row + c, bank c for all 32 lanes: one bank, 32
// different words, a 32-way conflict (32 shared-memory wavefronts per read). With PAD = 1 it
// is word 33 row + c, bank (row + c) mod 32: 32 banks, no conflict.
// The row is read through a volatile pointer so that every element is its own 4-byte load
// (otherwise the compiler reads a whole unpadded row with 128-bit loads, another access
// pattern); the row changes every round so no read can be hoisted out of the loop. Each read
// is one LDS with an immediate offset and one FADD, so the shared-memory pipe, not
// instruction issue, sets the time.
#ifndef PAD
#define PAD 0
#endif

extern "C" __global__ void smem_column(float* __restrict__ out, int rounds) {
  __shared__ float tile[32][32 + PAD];
  for (int i = threadIdx.x; i < 32 * (32 + PAD); i += blockDim.x) (&tile[0][0])[i] = (float)(i & 7);
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int r = 0; r < rounds; ++r) {
    const volatile float* row = &tile[(lane + warp + r) & 31][0];
#pragma unroll
    for (int j = 0; j < 32; ++j) acc[j & 3] += row[(j * 5) & 31];
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
}
