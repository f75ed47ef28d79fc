// v3_oneshot: v2's 16-byte loads on a one-shot grid (one chunk per block, blocks dispatched in
// address order) instead of a persistent grid-stride loop, and a vectorised second pass.
//
// What changed from v2: (1) the grid is sized by the data: block b sums vectors
//   [b x 256 x U, (b + 1) x 256 x U) (U = `@vectors_per_thread`, macro VECS; all U loads of a
//   thread issued before the first add, U x 16 B in flight per thread) and exits; v2 ran
//   SMs x resident blocks that each strode over the whole array; (2) the second pass
//   (`sum_finish`, one block of 1024 threads, fixed order) reads the partials as float4 with 4
//   loads in flight per thread, since there are now thousands of them (2^28 fp32 at U = 8:
//   32768 partials, 128 KiB, one L2 round trip) where v2 had ~1000.
// Why: on the H200 the same change measured +6% for vector_add at 2^28 (one-shot 16-byte kernel
//   737 us vs persistent grid stride 790 us fp32, 371 vs 396 us bf16; NOTES.md): a one-shot
//   grid's blocks are dispatched in order and sweep memory front to back, while a static
//   stride's blocks drift apart and spread the grid's accesses over the array. v2 bf16 ran at
//   4.00 TB/s (134.2 us), 0.91x torch.compile's one-pass Triton reduction (121.8 us, 4.41 TB/s).
// Determinism: no atomics; each block adds its U vectors in a fixed tree, the block tree is
//   fixed, and the second pass adds the partials in a fixed order; the grid depends only on n,
//   so a given input gives the same bits on every run (and on every GPU).
// Predicted: bytes first. 2^28 fp32 reads 1.07 GB: 244 us at the 4.4 TB/s target; bf16 0.54 GB:
//   122 us. Expect ~240-246 us fp32 (4.37-4.47 TB/s) and ~121-125 us bf16 (1.0x torch.compile),
//   the second pass adding ~2-3 us (one launch gap plus one L2 round trip). At 2^18 it is
//   launch-bound like v2.
// Measured: BENCHMARKS.md (full runs); the H200 sweep (docs/runs/2026-11-30-h200-sweep_membound.json): fp32 241.2 us = 4.45 TB/s (0.997x torch.compile; v2 4.42),
//   bf16 124.4 us = 1.00x torch.compile (v2 0.99x); U = 4, 8, 16 within 1%. Session 4
//   (docs/runs/2026-11-30-h200-sweep_membound_s4.json): X_LOAD 3 (L1::no_allocate) 239.3 vs
//   240.4 us fp32, 123.2 vs 124.1 bf16 cold, 121.4 vs 122.3 in graph mode (torch.compile 121.9):
//   ~0.7% in all three, the default since. Full runs: BENCHMARKS.md, sum rows.
//
// Knobs (#ifndef macros): VECS (vectors per thread; from the header), X_LOAD (0 ld.global.nc,
// 1 ld.global, 3 ld.global.nc.L1::no_allocate), FINISH_BLOCK.
//
// @block 256
// @grid oneshot
// @vectors_per_thread 8
// @access_bytes 16 (loads of x; the only stores are one fp32 partial per block)
// @finish sum_finish
// @finish_block 1024
// @deterministic yes: the grid depends only on n, every block and the second pass add in a fixed order; no float atomics.
#include <cuda_bf16.h>

#include "oneshot_knobs.cuh"  // BLOCK, VECS, FINISH_BLOCK, X_LOAD (one set for v3, v5, v6)

#include "reduce.cuh"  // v2's to_f32, sum16, warp_sum, block_sum
#include "oneshot.cuh"  // load16, the block's chunk (shared with v4), the pass and the finish (with v5)

extern "C" __global__ void __launch_bounds__(BLOCK) sum_f32(const float* __restrict__ x,
                                                            float* __restrict__ partial,
                                                            unsigned long long n) {
  oneshot_sum<float, false>(x, partial, n);
}

extern "C" __global__ void __launch_bounds__(BLOCK) sum_bf16(const __nv_bfloat16* __restrict__ x,
                                                             float* __restrict__ partial,
                                                             unsigned long long n) {
  oneshot_sum<__nv_bfloat16, false>(x, partial, n);
}

// Second pass: one block of FINISH_BLOCK threads sums `count` partials (oneshot.cuh's finish_sum).
extern "C" __global__ void __launch_bounds__(FINISH_BLOCK) sum_finish(const float* __restrict__ partial,
                                                                      float* __restrict__ out,
                                                                      unsigned int count) {
  finish_sum<FINISH_BLOCK, false>(partial, out, count);
}
