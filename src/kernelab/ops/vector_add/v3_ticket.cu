// v3_ticket: persistent and vectorised like v2, but chunks are handed out in order by an atomic ticket.
//
// What changed from v2: v2's static grid stride measured 0.94x torch.add at n = 2^28 on the H200
//   (2026-11-30), 6% under a one-shot grid (v1, 1.00x). With a static stride each block walks its
//   own arithmetic sequence and the blocks drift apart, so at any moment the grid touches memory
//   all over the array; one-shot blocks are dispatched in order and sweep it front to back. A block
//   here takes the next chunk of 4 x 256 vectors from a global counter (one atomicAdd per 16 KiB per
//   array in fp32), and fetches its next ticket while the current chunk's loads are in flight.
// Evidence that order is what matters: a block-contiguous split (each block one far-apart range)
//   measured 0.80x in fp32, a stride-1 loop (U = 1) 0.95x, the U = 4 stride 0.94x, streaming
//   cache hints 0.89x (`kernelab run --ops-dir` on scratch copies, same run, NOTES.md).
// Predicted: within 2% of torch.add at 2^28. Measured (H200, 2026-11-30, one run): 0.98x fp32,
//   0.97x bf16 (NOTES.md); BENCHMARKS.md has the suite's figures.
// Cost: a counter (torch.zeros(1)) per launch, an extra tiny kernel: no use for small n.
//
// @block 256
// @bytes_per_thread 16
// @grid persistent
#include <cuda_bf16.h>

template <typename T>
__device__ __forceinline__ T add1(T x, T y) { return x + y; }
template <>
__device__ __forceinline__ __nv_bfloat16 add1(__nv_bfloat16 x, __nv_bfloat16 y) { return __hadd(x, y); }

template <typename T>
__device__ __forceinline__ uint4 add_vec(uint4 x, uint4 y) {
  uint4 r;
  if constexpr (sizeof(T) == 4) {
    const float* fx = reinterpret_cast<const float*>(&x);
    const float* fy = reinterpret_cast<const float*>(&y);
    float* fr = reinterpret_cast<float*>(&r);
#pragma unroll
    for (int k = 0; k < 4; ++k) fr[k] = fx[k] + fy[k];
  } else {
    const __nv_bfloat162* hx = reinterpret_cast<const __nv_bfloat162*>(&x);
    const __nv_bfloat162* hy = reinterpret_cast<const __nv_bfloat162*>(&y);
    __nv_bfloat162* hr = reinterpret_cast<__nv_bfloat162*>(&r);
#pragma unroll
    for (int k = 0; k < 4; ++k) hr[k] = __hadd2(hx[k], hy[k]);
  }
  return r;
}

template <typename T>
__device__ __forceinline__ void persistent_add(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
                                               unsigned long long n, unsigned long long* __restrict__ counter) {
  constexpr unsigned V = 16 / sizeof(T);  // elements per vector
  constexpr unsigned U = 4;               // vectors in flight per thread
  const unsigned long long tid = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  const unsigned long long mis = reinterpret_cast<unsigned long long>(a) & 15;
  const bool coaligned = ((reinterpret_cast<unsigned long long>(b) & 15) == mis) &&
                         ((reinterpret_cast<unsigned long long>(c) & 15) == mis) && (mis % sizeof(T) == 0);
  if (!coaligned) {
    for (unsigned long long i = tid; i < n; i += stride) c[i] = add1(a[i], b[i]);
    return;
  }
  const unsigned long long head = mis ? min((unsigned long long)((16 - mis) / sizeof(T)), n) : 0;
  if (tid < head) c[tid] = add1(a[tid], b[tid]);
  const unsigned long long nvec = (n - head) / V;
  const uint4* va = reinterpret_cast<const uint4*>(a + head);
  const uint4* vb = reinterpret_cast<const uint4*>(b + head);
  uint4* vc = reinterpret_cast<uint4*>(c + head);

  // Chunks of U x blockDim vectors are handed out in increasing order by an atomic ticket, so
  // the blocks sweep memory front to back together, as a one-shot grid does; the next ticket is
  // fetched while the current chunk's loads are in flight.
  __shared__ unsigned long long ticket[2];
  const unsigned long long chunk = (unsigned long long)U * blockDim.x;
  if (threadIdx.x == 0) ticket[0] = atomicAdd(counter, 1ull);
  __syncthreads();
  int cur = 0;
  while (true) {
    const unsigned long long base = ticket[cur] * chunk;
    if (base >= nvec) break;
    if (threadIdx.x == 0) ticket[cur ^ 1] = atomicAdd(counter, 1ull);
    uint4 x[U], y[U];
#pragma unroll
    for (unsigned u = 0; u < U; ++u) {
      const unsigned long long i = base + u * blockDim.x + threadIdx.x;
      if (i < nvec) { x[u] = va[i]; y[u] = vb[i]; }
    }
#pragma unroll
    for (unsigned u = 0; u < U; ++u) {
      const unsigned long long i = base + u * blockDim.x + threadIdx.x;
      if (i < nvec) vc[i] = add_vec<T>(x[u], y[u]);
    }
    __syncthreads();
    cur ^= 1;
  }

  const unsigned long long tail = head + nvec * V;
  if (tid < n - tail) c[tail + tid] = add1(a[tail + tid], b[tail + tid]);
}

extern "C" __global__ void vector_add_f32(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, unsigned long long n,
                                          unsigned long long* __restrict__ counter) {
  persistent_add<float>(a, b, c, n, counter);
}

extern "C" __global__ void vector_add_bf16(const __nv_bfloat16* __restrict__ a,
                                           const __nv_bfloat16* __restrict__ b,
                                           __nv_bfloat16* __restrict__ c, unsigned long long n,
                                           unsigned long long* __restrict__ counter) {
  persistent_add<__nv_bfloat16>(a, b, c, n, counter);
}
