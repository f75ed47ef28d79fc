// Sticky errors (seeds/000 §6.1): a kernel that stores 4 TiB past its array, and a correct one.
//
// illegal_store: the address is unmapped, the kernel faults, and the CUDA context of the
//   process is lost: every later CUDA call fails with the same error. Run only in a child
//   process (kernelab.check.worker).
// fill: x[i] = v, to show that a process is (still, or again) healthy.
extern "C" __global__ void illegal_store(float* __restrict__ x, unsigned long long n) {
  const unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) x[i + (1ull << 40)] = 1.0f;
}

extern "C" __global__ void fill(float* __restrict__ x, float v, unsigned long long n) {
  const unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}
