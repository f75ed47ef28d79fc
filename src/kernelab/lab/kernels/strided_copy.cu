// Strided copy (seeds/003 "memory hierarchy"; seeds/004 §2.2, third layer): out[i*s] = in[i*s].
//
// Thread i moves element i * stride of each array. Stride 1: a warp's 32 loads cover 128
// consecutive bytes, one transaction (coalesced). Stride s: the 32 loads fall 4s bytes apart;
// from s = 8 every lane touches its own 32-byte sector and from s = 32 its own 128-byte line,
// so a warp's access splits into up to 32 transfers that each carry 4 useful bytes.
// Useful bytes are 8 per element (read 4, write 4) whatever the stride.
extern "C" __global__ void strided_copy(const float* __restrict__ in, float* __restrict__ out,
                                        unsigned long long n, unsigned int stride) {
  const unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) {
    const unsigned long long j = i * stride;
    out[j] = in[j];
  }
}
