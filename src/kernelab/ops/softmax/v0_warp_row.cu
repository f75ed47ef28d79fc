// v0_warp_row: one warp per row, the row held in registers, for rows of up to 1024 elements.
//
// What changed: this is the first variant. Each warp owns a row: its 32 lanes load the row
//   with 16-byte loads (a warp reads 512 contiguous bytes per instruction), keep it in
//   registers as fp32 (E = 8, 16 or 32 elements per lane: rows of 256, 512 or 1024), reduce
//   (max, sum) pairs with warp shuffles only (no shared memory, no __syncthreads), and
//   write exp(x - max) / sum with 16-byte stores. Rows whose start is not 16-byte aligned
//   (N = 1000, x[1:]) peel up to 7 head and tail scalars (rows.cuh).
// Why: a softmax row must be seen whole before any output can be written; holding it in
//   registers makes the one read and the one write the only memory traffic: 2 * N * size
//   bytes per row, the minimum. A warp is the largest group that reduces without a barrier.
// Predicted: bytes first. 262144 x 1024 bf16 moves 2 * 2^28 * 2 B = 1.07 GB (read x,
//   write y); at the H200's copy rate (ANCHORS: 4.28 TB/s) that is 251 us. With 8 rows per
//   256-thread block and <= 64 registers (4 blocks, 32 rows in flight per SM = 64 KiB of
//   loads; ~25 KiB per SM covers HBM latency) this should run within 3% of the copy rate,
//   ~255-260 us: on par with torch.compile (256 us) and ~1.55x eager (402 us).
//   Only N <= 1024 (32 lanes x 32 elements); wider rows need more threads per row (v1).
// Measured: BENCHMARKS.md, softmax rows (generated from results JSON).
//
// @strategy warp
// @access_bytes 16
#include "softmax_common.cuh"

namespace softmax {

// Rows per block = blockDim.x / 32; the launch uses 256 threads (8 rows).
template <typename T, int E>
__device__ __forceinline__ void warp_rows(const T* __restrict__ x, T* __restrict__ y, int M, int N) {
  const int lane = threadIdx.x & 31;
  const int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (row >= M) return;  // the whole warp leaves together; this kernel has no block barrier
  const T* xr = x + (size_t)row * N;
  T* yr = y + (size_t)row * N;
  const rows::Geometry geo = rows::geometry(xr, N);
  const bool vec_out = ((reinterpret_cast<unsigned long long>(xr) ^ reinterpret_cast<unsigned long long>(yr)) & 15) == 0;

  rows::Slice<T, E, 32> sl;
  sl.load(xr, geo, lane, -INFINITY);
  const MaxSum mine = exp_in_place(sl);
  const MaxSum all = warp_merge(mine);
  store_scaled<T>(sl, yr, geo, lane, vec_out, mine, all);
}

}  // namespace softmax

#ifndef SOFTMAX_NO_ENTRY_POINTS  // v4_dispatch includes this file for its code alone
#include "warp_row_instances.cuh"  // E = 8, 16, 32 elements a lane; shared with v4_dispatch

// The names the op contract looks up (kernel_entry + dtype): the widest instance.
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::warp_rows<float, 32>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::warp_rows<__nv_bfloat16, 32>(x, y, M, N); }
#endif
