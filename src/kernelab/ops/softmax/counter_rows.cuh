// counter_rows.cuh: v2's online row (two passes, the second an L2 hit) done by persistent blocks
// that take their rows from v12's `work` counter: v14_split_grid's "online" side grid, blocks of no
// cluster that fit wherever the main grid leaves room (sm_90+, where v14 runs; the code is any arch's).
// Requires v2_online.cu's online_row_at (included before this header) and row_handout.cuh.
#pragma once
#include "row_handout.cuh"  // finish_of

namespace softmax {
namespace crow {

// Thread 0 takes a row (one atomicAdd) at the start of each, while the taken indices are below
// `stop` (the row it got at `stop` or past it is still done); the block's barrier hands it to every
// thread. The slot is rewritten only after the row's block merge, a barrier every thread passes after
// reading it. The last of `clusters` blocks (both grids' count) resets the counters.
template <typename T, int THREADS, int U>
__device__ __forceinline__ void online_counter_rows(const T* __restrict__ x, T* __restrict__ y, int M, int N,
                                                    unsigned* __restrict__ work, unsigned clusters, unsigned stop) {
  __shared__ float part_m[THREADS / 32], part_s[THREADS / 32];
  __shared__ unsigned row_slot;
  handout::StopTaker taker{work, stop, (unsigned)M};  // thread 0's
#pragma unroll 1
  for (;;) {
    if (threadIdx.x == 0) row_slot = taker.take();
    __syncthreads();
    const unsigned r = row_slot;
    if (r >= (unsigned)M) break;
    online_row_at<T, THREADS, U, true>(x, y, N, (size_t)r, part_m, part_s);
  }
  if (threadIdx.x == 0) handout::finish_of(work, clusters);
}

}  // namespace crow
}  // namespace softmax
