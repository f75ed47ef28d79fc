// v5_pdl_finish: v3 with its second pass launched as a programmatic dependent launch (PDL, sm_90+):
// the finish kernel is scheduled while the pass's last blocks still run, and waits on chip for the
// pass to complete instead of waiting in the stream for a launch.
//
// What changed from v4 (which folded v3's finish into the pass with a ticket, and lost at 2^28:
//   the last block's pass over the partials): v5 keeps v3's two kernels (oneshot.cuh's pass and
//   finish, with PDL = true) and removes the launch gap between them instead: (1) each pass
//   block starts with `griddepcontrol.launch_dependents`, so once every block of the pass has
//   started (the last wave is on the SMs) the GPU may schedule the finish; (2) the finish starts
//   with `griddepcontrol.wait`, which returns when the pass has completed and its partials are visible;
//   (3) op.py launches the finish with pdl=True (LaunchConfig programmatic_stream_serialization) on
//   sm_90+; on older GPUs both instructions are compiled out and the launch is v3's.
// Why: sum bf16 2^28 (0.54 GB) cold runs 123.2-123.6 us in every full run (4.35 TB/s; the issue asks
//   4.4 = 122.0 us), and 2^29 (the bytes of fp32 2^28) 239.9 us: ~6.5 us a call is fixed cost, not
//   bandwidth (docs/runs/2026-11-30-h200-sweep_membound_s7_sum.json). Part of it is the gap between
//   the pass and the finish: the finish's launch is processed only after the pass has drained.
// Predicted: bytes first: 2^28 bf16 reads 536.9 MB, 122.0 us at 4.4 TB/s. The launch gap of a
//   dependent kernel on the H200 is ~1-2 us (ANCHORS: ~0.9-1 us a graph kernel node); expect
//   121.5-122.5 us bf16 (4.38-4.42 TB/s) and fp32 237.5-238.5 (v3 239.0); small inputs in graph
//   mode gain the same ~1 us where a call is ~3 us.
// Sweep (docs/runs/2026-11-30-h200-sweep_membound_s8_pdl.json, one H200 process, cold unless said):
//   2^28 bf16 121.7 us = 4.41 TB/s (v3 123.5 / 123.7 before and after it, torch.compile 124.6);
//   2^29 bf16 237.9 (v3 239.8); 2^28 fp32 238.1 = 4.51 TB/s (v3 239.6 / 239.4); graph mode 2^18
//   bf16 2.9 us (v3 3.3, v4 2.7, torch.compile 2.8), fp32 2.7 (v3 3.3, torch.compile 2.9): ~1.8 us
//   saved cold, ~0.5 in a graph. The registered sum (best_variant) since.
// Measured: BENCHMARKS.md, sum rows (generated from results JSON).
// Determinism: v3's: the grid depends only on n and the finish adds the partials in a fixed order.
//
// @block 256
// @grid oneshot
// @vectors_per_thread 8
// @access_bytes 16 (loads of x; the only stores are one fp32 partial per block)
// @finish sum_finish
// @finish_block 1024
// @finish_pdl yes
// @deterministic yes: the grid depends only on n, every block and the second pass add in a fixed order; no float atomics.
#include <cuda_bf16.h>

#include "oneshot_knobs.cuh"  // BLOCK, VECS, FINISH_BLOCK, X_LOAD (one set for v3, v5, v6)

#include "reduce.cuh"   // v2's to_f32, sum16, warp_sum, block_sum
#include "oneshot.cuh"  // v3's pass and finish, here with the PDL hooks

extern "C" __global__ void __launch_bounds__(BLOCK) sum_f32(const float* __restrict__ x,
                                                            float* __restrict__ partial,
                                                            unsigned long long n) {
  oneshot_sum<float, true>(x, partial, n);
}

extern "C" __global__ void __launch_bounds__(BLOCK) sum_bf16(const __nv_bfloat16* __restrict__ x,
                                                             float* __restrict__ partial,
                                                             unsigned long long n) {
  oneshot_sum<__nv_bfloat16, true>(x, partial, n);
}

// Launched by op.py with pdl=True on sm_90+ (a plain launch elsewhere: the wait returns at once).
extern "C" __global__ void __launch_bounds__(FINISH_BLOCK) sum_finish(const float* __restrict__ partial,
                                                                      float* __restrict__ out,
                                                                      unsigned int count) {
  finish_sum<FINISH_BLOCK, true>(partial, out, count);
}
