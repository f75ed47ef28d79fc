// v6_ticket_chunks: v5 with a persistent pass whose blocks take the next chunk from a counter (one
// atomicAdd a chunk, drawn one ahead), v3's chunks and partials unchanged: the same bits as v3 / v5.
//
// What changed from v5: (1) the pass grid is the GPU's resident blocks (SMs x blocks per SM from
//   the occupancy API, as `@grid persistent`), capped by the chunk count, instead of one block per
//   chunk; a chunk is exactly what one v3 / v5 block sums (BLOCK x VECS consecutive 16-byte
//   vectors, oneshot.cuh's chunk_sum, which now takes the chunk index), and chunk c's sum goes to
//   partial[c], as v3 block c's did; (2) block b sums chunk b first (no wait for a ticket), then
//   chunks gridDim.x + t for the tickets t it draws (atomicAdd on one unsigned per device and
//   stream), each drawn by thread 0 when the block starts its current chunk, so it comes back under
//   that chunk's loads; the block stops at the first chunk index >= chunks. When the grid covers
//   every chunk (small n) no block touches the counter; (3) the finish (v5's, still a programmatic
//   dependent launch on sm_90+) also sets the counter back to 0 after its griddepcontrol.wait, so
//   every launch finds it zeroed with no memset, in a replayed CUDA graph too (`@grid tickets`).
// Why: bytes first: 2^28 bf16 reads 536.9 MB (512 MiB): 122.0 us at the issue's 4.4 TB/s; v5 runs
//   121.7-122.4 us (4.39-4.41 TB/s), inside the run-to-run spread of the target. The same bytes as
//   a 16-byte copy (docs/runs/2026-12-01-h200-copy_patterns.json, scripts/copy_patterns.py, 32 KiB
//   chunks, 264 blocks): the next chunk taken from a counter, one ahead, 257.3 us; a one-shot grid
//   261.9 (1.8% slower); a persistent grid with a static chunk order (c, c + 264, ...) 268.6 (4.4%
//   slower). Taking chunks in address order as blocks free up keeps the in-flight bytes in one
//   compact front (v3's point against v2's static stride), and, we guess (the copy measured the
//   effect, not its cause), saves a one-shot grid's block retire and launch on every chunk (16384
//   blocks at 2^28 bf16). v6's chunks are the copy's size (256 threads x 8 x 16 B = 32 KiB, both
//   dtypes); its grid is not: 6 blocks of 256 threads an SM on the H200 (40 registers, sm_90), 792
//   in all, where the copy ran 264 of 512 (3x the chunks in flight; a sweep may want fewer).
// Determinism: chunk_sum depends only on (x, n, chunk) and the in-block order is v3's, so each
//   partial[c] has v3's bits whichever block took chunk c; the finish adds partial[0..chunks) in
//   v3's fixed order. The result is bit-identical to v3 and v5 on every run (tests/gpu/test_sum_v6.py).
//   The only atomic is the integer ticket: it picks which block sums a chunk, never an order of adds.
// Counter safety: a pass draws exactly `chunks` tickets (see ticket_chunks_sum), none when the grid
//   covers every chunk. A block draws no ticket after its first failing one, so its last atomic
//   precedes its exit; the finish zeroes the counter only after griddepcontrol.wait, which returns
//   once the whole pass grid has completed and its memory operations are visible (on sm_80 the
//   finish is a plain launch, stream-ordered after the pass); the next call's pass is a plain
//   launch, stream-ordered after this finish. So no pass block ever sees the reset, and every pass
//   starts from 0.
// Predicted: ~1-2% faster than v5 at 2^28 (the copy's 1.8%): bf16 ~119.5-121 us = 4.44-4.49 TB/s; fp32
//   (1.07 GB) ~236 us = 4.55 TB/s (v5 238.1). Small n (grid = chunks): v5's launches plus the
//   loop's test, within noise (2^18 graph ~2.7-2.9 us).
// Measured (H200, one process, docs/runs/2026-12-01-h200-sweep_membound_s9_tickets.json, each timed
//   twice, alternating with v5): 5% slower, so v5 stays the op's best. 2^28 bf16 126.1 / 125.7 us
//   against v5's 120.2 / 120.0 (4.47 TB/s) and v3's 121.5; 2^29 bf16 247.7 / 247.5 against 233.9 /
//   234.2; 2^28 fp32 247.0 / 247.1 against 234.2 / 234.0. 2^18 in graph mode (grid = chunks, no
//   ticket drawn) 2.9 us, v5 2.9 / 2.7. The copy's lesson does not carry over: v3's one-shot grid
//   already takes its chunks in address order, and this pass holds 792 blocks of 256 threads with
//   two barriers a chunk where v3's blocks retire after one; not investigated further (no profile).
//   Kept as the measured negative result.
// Measured: BENCHMARKS.md, sum rows (generated from results JSON), once a run includes v6.
//
// Knobs (#ifndef macros): VECS (vectors per thread; from the header), X_LOAD (0 ld.global.nc,
// 1 ld.global, 3 ld.global.nc.L1::no_allocate), FINISH_BLOCK.
//
// @block 256
// @grid tickets
// @vectors_per_thread 8
// @access_bytes 16 (loads of x; the only stores are one fp32 partial per chunk)
// @finish sum_finish
// @finish_block 1024
// @finish_pdl yes
// @deterministic yes: chunk c's partial has v3's bits whichever block sums it, and the finish adds the partials in a fixed order; the only atomic is an integer ticket that picks a block, not an order.
#include <cuda_bf16.h>

#include "oneshot_knobs.cuh"  // BLOCK, VECS, FINISH_BLOCK, X_LOAD (one set for v3, v5, v6)

#include "reduce.cuh"   // v2's to_f32, sum16, warp_sum, block_sum
#include "oneshot.cuh"  // chunk_sum (v3's chunk, by index), v3 / v5's finish, the PDL hooks

// The pass: block b sums chunk b, then the chunks its tickets name, writing chunk c's sum to
// partial[c]. `chunks` = ceil(n / (BLOCK x VECS x 16 / sizeof(T))), at least 1 (v3's grid).
//
// Tickets. Ticket t names chunk gridDim.x + t (chunks 0 .. gridDim.x - 1 are the blocks' first,
// taken without the counter). Every block draws one ticket per chunk it sums and stops at the
// first ticket >= chunks - gridDim.x, so the pass draws exactly chunks tickets: chunks -
// gridDim.x valid, one failing per block; the counter ends at `chunks` (op.py keeps chunks <=
// 2^31, so gridDim.x + t never wraps). With gridDim.x >= chunks the counter is not touched.
//
// Shared state. s_next (the next chunk) is written by thread 0 before block_sum's barrier and
// read by every thread after it; block_sum's warp slots are written before that barrier and read
// by warp 0 after it. The barrier at the end of the loop keeps the next chunk's writes of both
// behind those reads (one slot each suffices).
//
// PDL trigger at the start, as v5's. The finish may start once every pass block has executed
// launch_dependents (or exited). The grid is at most the resident blocks, so all of them are on
// the SMs from the start: triggering first lets the GPU process the finish's launch while the
// pass streams (off the critical path), and costs nothing: the finish's block (1024 threads) fits
// on an SM only once some pass blocks there have exited (on the H200, 6 resident 256-thread blocks
// leave 512 thread slots); there is no second wave of pass blocks whose slot it could take; and
// it sleeps in griddepcontrol.wait until the whole pass has completed. Triggering later (at a
// block's failing ticket) would only leave the finish less time to get ready. (In v5's one-shot
// grid the same placement lets the finish launch with the pass's last wave.)
template <typename T>
__device__ __forceinline__ void ticket_chunks_sum(const T* __restrict__ x, float* __restrict__ partial,
                                                  unsigned int* __restrict__ ctr, unsigned long long n,
                                                  unsigned int chunks) {
  pdl_launch_dependents();
  if (blockIdx.x >= chunks) return;  // op.py launches at most `chunks` blocks; never write past partial[chunks - 1]
  __shared__ unsigned s_next;
  const unsigned tid = threadIdx.x;
  const bool tickets = chunks > gridDim.x;  // the same in every block
  unsigned c = blockIdx.x;
  for (;;) {
    // Draw the next chunk's ticket first; its L2 round trip overlaps this chunk's loads (the
    // shared store that waits for it comes after chunk_sum).
    unsigned ticket = 0;
    if (tickets && tid == 0) ticket = atomicAdd(ctr, 1u);
    float total = chunk_sum<T>(x, n, c);  // v3 block c's loads and adds
    if (tickets && tid == 0) s_next = gridDim.x + ticket;
    total = block_sum<BLOCK>(total);  // v3's block tree; its barrier publishes s_next
    if (tid == 0) partial[c] = total;
    if (!tickets) return;
    c = s_next;
    if (c >= chunks) return;  // this block's failing ticket: no more atomics from it
    __syncthreads();          // every thread has read s_next, warp 0 its block_sum slots
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK) sum_f32(const float* __restrict__ x,
                                                            float* __restrict__ partial,
                                                            unsigned int* __restrict__ ctr,
                                                            unsigned long long n, unsigned int chunks) {
  ticket_chunks_sum<float>(x, partial, ctr, n, chunks);
}

extern "C" __global__ void __launch_bounds__(BLOCK) sum_bf16(const __nv_bfloat16* __restrict__ x,
                                                             float* __restrict__ partial,
                                                             unsigned int* __restrict__ ctr,
                                                             unsigned long long n, unsigned int chunks) {
  ticket_chunks_sum<__nv_bfloat16>(x, partial, ctr, n, chunks);
}

// v5's finish (launched by op.py with pdl=True on sm_90+), then the counter's reset. finish_sum
// starts with griddepcontrol.wait: every pass block has completed, its last atomicAdd included,
// before this store (on sm_80 the wait is compiled out and the launch is stream-ordered after the
// pass, which gives the same order).
extern "C" __global__ void __launch_bounds__(FINISH_BLOCK) sum_finish(const float* __restrict__ partial,
                                                                      float* __restrict__ out,
                                                                      unsigned int count,
                                                                      unsigned int* __restrict__ ctr) {
  finish_sum<FINISH_BLOCK, true>(partial, out, count);
  if (threadIdx.x == 0) *ctr = 0u;  // zero for the next launch on this stream: no memset, graph-safe
}
