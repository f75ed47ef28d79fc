// The arch-compatibility probe (seeds/000 §7.3): y = 2 x + 1, compiled as SASS for several
// real architectures and as PTX for a virtual one, to see which the driver loads.
extern "C" __global__ void scale(const float* __restrict__ x, float* __restrict__ y, unsigned long long n) {
  const unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaf(2.0f, x[i], 1.0f);
}
