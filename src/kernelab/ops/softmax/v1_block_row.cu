// v1_block_row: one block per row, the row held in the registers of the whole block, for
// rows of up to 32768 elements.
//
// What changed from v0: a row is spread over THREADS = 64..1024 threads (32 elements each)
//   instead of one warp, so rows up to 1024 x 32 = 32768 elements stay on chip. The
//   (max, sum) pairs are merged across warps through shared memory with one __syncthreads
//   (each warp publishes its pair, then every warp merges all pairs itself).
// Why: v0's warp holds at most 1024 elements in 32 registers a lane; a wider row must be
//   re-read (3 passes over memory in the classic kernel, 2 in v2) unless more threads hold it.
// Predicted: bytes first. 32768 x 8192 bf16 moves 2 * 2^28 * 2 B = 1.07 GB: 251 us at the copy
//   rate (4.28 TB/s). 256 threads x 32 elements per row, <= 64 registers (4 blocks = 64 KiB of
//   loads in flight per SM): ~255-265 us, i.e. 2.3-2.4x torch.compile (611 us) and ~3.9x
//   eager (1002 us). At 8192 x 32768 bf16 the 1024-thread block leaves one block per SM and
//   stalls memory at each row's barrier: predicted ~0.85-0.9x copy rate (~290 us), which v3's
//   cluster of smaller blocks recovers.
// Measured: BENCHMARKS.md, softmax rows (generated from results JSON).
//
// @strategy block
// @access_bytes 16
#include "softmax_common.cuh"

namespace softmax {

// grid = M blocks, one row each; E elements per thread.
template <typename T, int THREADS, int E>
__device__ __forceinline__ void block_row(const T* __restrict__ x, T* __restrict__ y, int N) {
  __shared__ float part_m[THREADS / 32], part_s[THREADS / 32];
  const int row = blockIdx.x;
  const T* xr = x + (size_t)row * N;
  T* yr = y + (size_t)row * N;
  const rows::Geometry geo = rows::geometry(xr, N);
  const bool vec_out = ((reinterpret_cast<unsigned long long>(xr) ^ reinterpret_cast<unsigned long long>(yr)) & 15) == 0;

  rows::Slice<T, E, THREADS> sl;
  sl.load(xr, geo, threadIdx.x, -INFINITY);
  const MaxSum mine = exp_in_place(sl);
  const MaxSum all = block_merge<THREADS>(mine, part_m, part_s);
  store_scaled<T>(sl, yr, geo, threadIdx.x, vec_out, mine, all);
}

}  // namespace softmax

#ifndef SOFTMAX_NO_ENTRY_POINTS  // v4_dispatch includes this file for its code alone
#include "block_row_instances.cuh"  // blocks of 64-1024 threads; shared with v4_dispatch

// The names the op contract looks up: the widest instance.
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::block_row<float, 1024, 32>(x, y, N); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::block_row<__nv_bfloat16, 1024, 32>(x, y, N); }
#endif
