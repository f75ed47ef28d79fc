// Warp divergence (seeds/000 §8.2): one kernel, four branch patterns chosen at run time.
//
// Each thread runs path f or path g: `iters` dependent FMAs each, the same count, different
// constants, so T(f) ~ T(g). The pattern comes from `mode` at run time so the compiler cannot
// specialise the branch away:
//   0: every thread takes f            (no branch divergence)
//   1: every thread takes g            (no branch divergence)
//   2: even lanes f, odd lanes g       (every warp diverges: it runs f for 16 lanes, then g for
//                                       the other 16: T(f) + T(g), half the lanes idle each time)
//   3: even warps f, odd warps g       (the branch follows warp boundaries: no warp diverges)
extern "C" __global__ void branchy(float* __restrict__ out, int iters, int mode) {
  const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
  bool take_f;
  if (mode == 0) take_f = true;
  else if (mode == 1) take_f = false;
  else if (mode == 2) take_f = (threadIdx.x & 1u) == 0u;
  else take_f = ((threadIdx.x >> 5) & 1u) == 0u;
  float x = (float)(tid & 1023u) * 1e-3f;
  if (take_f) {
#pragma unroll 1
    for (int i = 0; i < iters; ++i) x = fmaf(x, 0.999f, 0.5f);
  } else {
#pragma unroll 1
    for (int i = 0; i < iters; ++i) x = fmaf(x, x, -0.25f);
  }
  out[tid] = x;
}
