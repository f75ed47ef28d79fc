// Occupancy probe (seeds/003, first exercise): a kernel whose shared memory is all dynamic, so
// the launch decides how much each block takes (64 KiB in the seeds' worked example).
// It touches blockDim.x floats of it; registers stay few, so shared memory or the thread and
// block limits decide how many blocks an SM holds.
extern "C" __global__ void probe(float* __restrict__ out) {
  extern __shared__ float buf[];
  buf[threadIdx.x] = (float)threadIdx.x;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = buf[(threadIdx.x + 1) % blockDim.x];
}
