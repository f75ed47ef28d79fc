// row_handout.cuh: rows handed out at run time, as softmax v12_dynamic_rows and v13_packed_regs take
// them (sm_90+). A cluster's leader (rank 0, thread 0) takes row indices from a global counter
// (work[0], one atomicAdd a row, rows in increasing order) and pushes each into every block of its
// cluster: slot j % R of `row` gets the cluster's j-th row, 4 bytes st.async-counted on the slot's
// mbarrier (C = 1: the leader writes its own block's slot; the caller's next block barrier publishes
// it). The last cluster to finish resets both counters (work[1] counts finished clusters), so every
// launch that completes leaves them zero for the next one on the stream (op.py's dynamic_work).
// How far ahead the leader hands rows out, and why a slot is never overwritten before it is read,
// is each caller's (the arm / hand / read schedule): see dynamic_rows (staged_rows.cuh) and v13.
#pragma once
#include "cluster_exchange.cuh"  // mbar_*, push_u32

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
namespace softmax {
namespace handout {

// The R slots (their mbarriers and indices: the caller's __shared__ arrays) of a cluster of C blocks.
template <int C, int R>
struct Slots {
  unsigned long long* bar;  // R mbarriers, count 1 (init)
  unsigned* row;            // R indices

  __device__ __forceinline__ void init() const {  // thread 0, before the caller's mbarrier_init fence
#pragma unroll
    for (int s = 0; s < R; ++s) cx::mbar_init(&bar[s], 1);
  }
  // The leader: row index r, taken for the cluster's j-th row, to every block of the cluster.
  __device__ __forceinline__ void hand(int j, unsigned r) const {
    if constexpr (C > 1) {
#pragma unroll 1
      for (unsigned b = 0; b < C; ++b) cx::push_u32(&row[j % R], &bar[j % R], b, r);
    } else {
      row[j % R] = r;
    }
  }
  // Thread 0 of each block: this block expects the j-th row's index (C > 1; a push may land first).
  __device__ __forceinline__ void arm(int j) const {
    if constexpr (C > 1) cx::mbar_expect(&bar[j % R], 4u);
  }
  // The j-th row's index, once pushed (C = 1: already written).
  __device__ __forceinline__ unsigned index_of(int j) const {
    if constexpr (C > 1) cx::mbar_wait(&bar[j % R], (j / R) & 1);
    return row[j % R];
  }
};

// A side grid's taker (v14): takes rows from work[0] while the indices it gets are below `stop`; the
// row it got at `stop` or past it is still its own, after which it hands out M (the loop's end).
struct StopTaker {
  unsigned* work;
  unsigned stop, M;
  bool taking = true;
  __device__ __forceinline__ unsigned take() {
    if (!taking) return M;
    const unsigned r = atomicAdd(&work[0], 1u);
    taking = r < stop;
    return r;
  }
};

// v12's handout with SB_HANDOUT (staged_rows.cuh, session 31): work[0] (rows taken) and work[1] (clusters done
// taking) read as one 8-byte word, so a claim (+1) and a cluster's "done" (+2^32) are atomics on one location:
// each leader's claims precede its own "done" in that location's order (same thread, same address), so the leader
// whose "done" finds clusters - 1 before it knows every claim of the launch has landed, with no fence (finish below
// fences: its two atomics are on two addresses). A cluster is done at its first claim at or past M (it never
// claims again: rows are taken in increasing order) or at once if its first row is already past M; the "done"
// add is issued there and its value read only at exit, so no warp waits on it in the loop. `base`: rows below it
// were handed out without the counter (cluster q took q, q + G, ... q + S G: the static head), so a claim c is
// row base + c. work must be 8-byte aligned (StreamCounters' slots are: 2 x 4 bytes each).
struct WordTaker {
  unsigned long long* word;  // &work[0]
  unsigned M, base;
  bool taking = true;
  unsigned long long done_old = 0ull;  // the "done" add's old value (read at exit)
  // The claim itself (its value is waited for where the row is handed: after the row's merge).
  __device__ __forceinline__ unsigned long long claim() const { return taking ? atomicAdd(word, 1ull) : 0ull; }
  __device__ __forceinline__ unsigned row_of(unsigned long long c) const { return taking ? base + (unsigned)c : M; }
  // After handing row r: the first r >= M makes this cluster done.
  __device__ __forceinline__ void after(unsigned r) {
    if (taking && r >= M) {
      taking = false;
      done_old = atomicAdd(word, 1ull << 32);
    }
  }
  // At exit: the last cluster done puts the word (both counters) back to 0.
  __device__ __forceinline__ void finish(unsigned clusters) const {
    if ((unsigned)(done_old >> 32) == clusters - 1) *word = 0ull;
  }
};

// The leader, at exit: counts its cluster finished; the last of `clusters` clusters to finish puts both
// counters back to 0. `clusters` counts every cluster that takes rows from `work`: the grid's own
// (gridDim.x / C, the overload below), or those of two grids sharing one counter (v14_split_grid).
__device__ __forceinline__ void finish_of(unsigned* __restrict__ work, unsigned clusters) {
  __threadfence();  // this cluster's takes before its count
  if (atomicAdd(&work[1], 1u) == clusters - 1) {  // the last cluster: every take is done
    work[0] = 0;
    work[1] = 0;
  }
}
template <int C>
__device__ __forceinline__ void finish(unsigned* __restrict__ work) {
  __threadfence();  // written out, not finish_of(work, gridDim.x / C): v12's and v13's SASS stay as measured
  const unsigned clusters = gridDim.x / C;
  if (atomicAdd(&work[1], 1u) == clusters - 1) {
    work[0] = 0;
    work[1] = 0;
  }
}

}  // namespace handout
}  // namespace softmax
#endif
