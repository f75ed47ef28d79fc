// Memory latency by pointer chasing (seeds/000 §9.5 (3): ~600 ns HBM latency; seeds/003 table).
//
// One thread follows a chain of indices through a buffer far larger than L2: each load's
// address is the previous load's value, so loads cannot overlap and the kernel's time is
// steps x the latency of one load from memory (the chain visits each 128-byte line once,
// in random order, so neither the caches nor a prefetcher help).
extern "C" __global__ void pointer_chase(const unsigned long long* __restrict__ next, unsigned long long start,
                                         int steps, unsigned long long* __restrict__ out) {
  unsigned long long p = start;
  for (int s = 0; s < steps; ++s) p = next[p];
  out[0] = p;
}
