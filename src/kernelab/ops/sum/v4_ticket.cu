// v4_ticket: v3 in one launch: the last block to finish (counted with an integer ticket after a
// __threadfence) adds the partials itself, in a fixed order, instead of a second kernel.
//
// What changed from v3: (1) each block writes its partial and takes a ticket (one atom.inc with
//   acq_rel semantics on a 32-bit counter per block; knob FENCE=1: __threadfence + atomicInc);
//   the block that draws ticket gridDim.x - 1 knows
//   every other partial is visible, reads them through L2 (ld.global.cg) and sums them in a fixed
//   order (thread t adds partials t, t + BLOCK, ..., then the block tree), so the result does not
//   depend on which block came last: the same bits on every run for a given n; (2) the inc
//   (atomicInc's rule) wraps the counter back to 0 when the last ticket is drawn, so it is ready
//   for the next launch with no memset (the launch keeps one counter per device and stream); (3) the
//   grid is still v3's one-shot grid, with U = `@vectors_per_thread` (default 2 here, v3 8: small
//   inputs get more blocks; the sweep varies it and the block size).
// Why: at 2^18 bf16 (512 KiB, graph replay) v1 took 2.92 us and v3 3.23 us against
//   torch.compile's 2.61 (H200 full run): both launch two kernels (a pass and a finish) and in a
//   replayed graph each kernel node costs about 0.9-1 us on its own (ANCHORS). One node instead of
//   two is worth most of the 0.3-0.6 us gap; the ticket costs one L2 atomic per block and the last
//   block's extra read of a few KiB of partials (~0.3 us of L2 latency, once).
// Predicted: 2^18 bf16 in graph mode ~2.3-2.6 us (0.9-1.0x torch.compile; target <= 2.87 us);
//   2^18 fp32 ~2.5-2.8 us. 2^28 fp32 (1.07 GB) as v3: ~241 us = 4.45 TB/s (the ticket adds
//   < 1 us; U = 8 there keeps v3's 32768 partials, 128 KiB, read once by one block: ~2-3 us, so
//   the sweep keeps v3 as the bench-size variant unless this matches it).
// Sweep (docs/runs/2026-11-30-h200-sweep_membound_s3.json, one H200 process, graph replay): 2^18 bf16 2.78 us (torch.compile
//   2.74, v1 3.03, v3 3.29); fp32 2.81 (torch.compile 2.91). The classic __threadfence ticket
//   (FENCE 1) 3.05. At 2^28 with v3's grid it is slower than v3 (278.9 vs 236.9 us fp32): the last
//   block's serial pass over the partials shows there; v3 stays the choice for large inputs.
// Measured: BENCHMARKS.md, sum rows (generated from results JSON).
// Determinism: the grid depends only on n; the partials are added in a fixed order by whichever
//   block is last; the only atomic is the integer ticket, which decides who adds, not the order.
//
// Knobs (#ifndef macros): VECS (vectors per thread; from the header), X_LOAD (0 ld.global.nc,
// 1 ld.global), BLOCK (from the header), FENCE (0 acq_rel atomic, 1 __threadfence + atomicInc).
//
// @block 256
// @grid oneshot
// @vectors_per_thread 2
// @access_bytes 16 (loads of x; the only stores are one fp32 partial per block)
// @finish ticket
// @deterministic yes: the grid depends only on n and the last block adds the partials in a fixed order; the only atomic is an integer ticket.
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef VECS
#define VECS 2
#endif
#ifndef X_LOAD
#define X_LOAD 0
#endif

#include "reduce.cuh"  // to_f32, sum16, warp_sum, block_sum
#include "oneshot.cuh"  // load16 and v3's one-shot chunk


// Returns the old counter and stores old >= limit ? 0 : old + 1 (atomicInc's rule), so the last
// ticket (limit = gridDim.x - 1) resets the counter for the next launch.
// FENCE 0: one atom.inc with acq_rel semantics at GPU scope: release orders this thread's partial
//   before its ticket, acquire orders the last block's reads of the partials after it (no
//   separate fence; __threadfence is fence.sc.gpu, MEMBAR.SC.GPU in the SASS).
// FENCE 1: the classic pattern: __threadfence(); atomicInc(); __threadfence() in the last block.
#ifndef FENCE
#define FENCE 0
#endif
__device__ __forceinline__ unsigned draw_ticket(unsigned int* ticket, unsigned limit) {
#if FENCE == 0
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(ticket), "r"(limit) : "memory");
  return old;
#else
  __threadfence();  // the partial is visible device-wide before the ticket is drawn
  const unsigned old = atomicInc(ticket, limit);
  __threadfence();  // acquire side, for the last block's reads of the partials
  return old;
#endif
}

template <typename T>
__device__ __forceinline__ void ticket_sum(const T* __restrict__ x, float* __restrict__ partial,
                                           unsigned int* __restrict__ ticket, float* __restrict__ out,
                                           unsigned long long n) {
  const unsigned tid = threadIdx.x;
  float total = chunk_sum<T>(x, n, blockIdx.x);  // v3's one-shot chunk
  total = block_sum<BLOCK>(total);  // valid in thread 0
  if (gridDim.x == 1) {  // one block: its sum is the answer, no ticket
    if (tid == 0) out[0] = total;
    return;
  }

  __shared__ bool s_last;
  if (tid == 0) {
    partial[blockIdx.x] = total;
    s_last = draw_ticket(ticket, gridDim.x - 1) == gridDim.x - 1;
  }
  // Also: warp 0 is done reading block_sum's shared slots before they are reused below. The
  // barrier extends thread 0's acquire to the whole block (causality order is transitive).
  __syncthreads();
  if (!s_last) return;

  // Fixed order: thread t adds partials t, t + BLOCK, ... in 4 independent chains, then the tree.
  const unsigned count = gridDim.x;
  float a[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  unsigned i = tid;
  for (; i + 3 * BLOCK < count; i += 4 * BLOCK) {
#pragma unroll
    for (unsigned u = 0; u < 4; ++u) a[u] += __ldcg(partial + i + u * BLOCK);
  }
  for (; i < count; i += BLOCK) a[0] += __ldcg(partial + i);
  total = block_sum<BLOCK>((a[0] + a[1]) + (a[2] + a[3]));
  if (tid == 0) out[0] = total;
}

extern "C" __global__ void __launch_bounds__(BLOCK) sum_f32(const float* __restrict__ x, float* __restrict__ partial,
                                                            unsigned int* __restrict__ ticket, float* __restrict__ out,
                                                            unsigned long long n) {
  ticket_sum<float>(x, partial, ticket, out, n);
}

extern "C" __global__ void __launch_bounds__(BLOCK) sum_bf16(const __nv_bfloat16* __restrict__ x,
                                                             float* __restrict__ partial,
                                                             unsigned int* __restrict__ ticket, float* __restrict__ out,
                                                             unsigned long long n) {
  ticket_sum<__nv_bfloat16>(x, partial, ticket, out, n);
}
