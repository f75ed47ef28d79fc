// Launch overhead (seeds/000 §5, §9.5 (2); seeds/003; seeds/004 §4.3): a kernel that does
// almost nothing, so what is measured is the cost of launching it.
extern "C" __global__ void touch(float* __restrict__ x) {
  if (blockIdx.x == 0 && threadIdx.x == 0) x[0] += 1.0f;
}
