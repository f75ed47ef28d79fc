// v0_naive: the seeds' kernel (seeds/000 §9). One element per thread, grid = ceil(n / 256).
//
// What changed: nothing; this is the baseline every later variant is measured against.
// Why it is slow: each thread issues one 4-byte (fp32) or 2-byte (bf16) load per input and
//   exits, so each warp has three memory instructions in its life and an SM keeps too few
//   bytes in flight to cover HBM latency (seeds/000 §9, reasons 3 and 4).
// Predicted: 80-92% of nominal bandwidth (seeds, on A100). ANCHORS.md saw 3.48 TB/s on the
//   H200 in fp32 at n = 2^28, 0.80x torch.add.
// Measured: BENCHMARKS.md, vector_add rows (generated from results JSON).
//
// @block 256
// @elems_per_thread 1
#include <cuda_bf16.h>

extern "C" __global__ void vector_add_f32(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// bf16 adds with __hadd, one rounding to nearest: the same result as torch.add, which adds
// in fp32 and rounds once (the fp32 sum of two bf16 values is exact for all but extreme exponents).
extern "C" __global__ void vector_add_bf16(const __nv_bfloat16* __restrict__ a,
                                           const __nv_bfloat16* __restrict__ b,
                                           __nv_bfloat16* __restrict__ c, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) c[i] = __hadd(a[i], b[i]);
}
