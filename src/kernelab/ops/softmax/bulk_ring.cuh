// bulk_ring.cuh: what softmax v7_bulk_smem, v8_sm_rows and v9_grid_groups share about a row split
// over C blocks and staged in shared memory: a block's share of a row (its 16-byte vectors) and the
// sweep that reads a staged share with 4 LDS.128 in flight per step.
#pragma once
#include "softmax_common.cuh"

namespace softmax {
namespace ring {

// A block's share of a row: vectors [v0, v0 + cnt) of the row's 16-byte vectors (rows.cuh's
// head / vectors / tail split), cv = ceil(nvec / C) per rank (the last ranks may get fewer or none).
struct Chunk {
  rows::Geometry geo;
  int v0, cnt;
};
template <typename T, int C>
__device__ __forceinline__ Chunk chunk_of(const T* xr, int n, int rank) {
  const rows::Geometry geo = rows::geometry(xr, n);
  const int cv = (geo.nvec + C - 1) / C;
  const int v0 = rank * cv;
  return Chunk{geo, v0, max(0, min(cv, geo.nvec - v0))};
}

// f(raw vector, j) for j = threadIdx.x, + THREADS, ... < cnt, 4 LDS.128 in flight per step.
template <int THREADS, typename F>
__device__ __forceinline__ void sweep(const uint4* stage, int cnt, F&& f) {
  constexpr int U = 4;
  int j = threadIdx.x;
  for (; j + (U - 1) * THREADS < cnt; j += U * THREADS) {
    uint4 r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) r[u] = stage[j + u * THREADS];
#pragma unroll
    for (int u = 0; u < U; ++u) f(r[u], j + u * THREADS);
  }
  for (; j < cnt; j += THREADS) f(stage[j], j);
}

}  // namespace ring
}  // namespace softmax
