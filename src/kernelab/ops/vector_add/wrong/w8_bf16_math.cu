// w8_bf16_math: the fp32 op computed in bf16: inputs rounded to bf16, added, rounded again.
//
// The downgrade: bf16 keeps 8 bits of mantissa, so each result is off by up to ~2^-8
//   relative, and by far more where a + b cancels. Generated kernels do this to halve the
//   bytes or use packed bf16 math; the output dtype still says float32.
// Caught by: the fp32 tolerance (rtol 1.3e-6, ~3000x below the bf16 error), and classified as
//   precision because the output equals, within bf16 tolerance, the reference computed from
//   inputs rounded to bf16.
//
// @expect precision
// @dtypes float32
// @block 256
// @elems_per_thread 1
#include <cuda_bf16.h>

extern "C" __global__ void vector_add_f32(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) c[i] = __bfloat162float(__hadd(__float2bfloat16(a[i]), __float2bfloat16(b[i])));
}
