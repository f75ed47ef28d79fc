// v3_early_load: v2 with the first row's x loaded together with the bias, so the first load of x
// does not wait for the bias to arrive.
//
// What changed from v2: only the order of the loads in the aligned (16-byte) path. In v2's
//   sm_90 SASS the bias vector is unpacked (hoisted out of the row loop) before the loop's first
//   x load is issued, so every thread pays two dependent memory round trips before it can start
//   computing; here the first x load is issued right after the bias load, before either is
//   used (both LDG.E.128 back to back in the SASS). Geometry (@layout chunks), formula and the
//   element-by-element fallback are v2's.
// Why: at 256 x 1024 bf16 (graph mode, 1 MiB, L2-resident) each thread does one row: its life
//   is ~launch + load latency + ~0.2 us of GELU + store, and v2 spent 2.0 us per launch against
//   torch.compile's 1.6. The hoisted bias load adds one L2 round trip (~300-600 cycles,
//   0.15-0.3 us at 1.98 GHz) to that chain. At 32768 x 8192 each thread walks ~60 rows, so the
//   first load's order hardly matters there.
// Predicted: 256 x 1024 bf16 in graph mode ~1.7-1.8 us per launch (v2 2.0, torch.compile 1.6:
//   within the 1.1x target); 32768 x 8192 bf16 about v2's 286 us (3.75 TB/s; it is issue-bound
//   there), fp32 about v2's.
// Measured: BENCHMARKS.md (full runs); the H200 sweep (docs/runs/2026-11-30-h200-sweep_membound.json): 32768x8192 283.4 us = 1.45x torch.compile (v2 1.44x); 256x1024 in
//   graph mode 1.8 us = 0.86x (v2 0.80x), and 0.95x with 128-thread blocks. Full runs: BENCHMARKS.md.
// Block size (session 6): 128 threads, since v3 is the small-tensor variant. fp32 256 x 1024 in graph
//   mode with 128-thread blocks 1.711 / 1.722 / 1.724 / 1.738 us in four sweeps (-sweep_membound_s3,
//   -s4, -s4b, -s6_small.json) vs 1.777-1.792 at 256, the fastest fp32 variant there each time
//   (torch.compile 1.61-1.79); at 32768 x 8192 bf16 128 threads cost 0.5% (285.0 vs 283.6 us,
//   -sweep_gelu_block128.json), where v5 is the pick anyway.
//
// @block 128
// @layout chunks
// @access_bytes 16 (loads of x and bias, stores of y, where aligned)
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 128
#endif
// 2048 threads per SM (16 blocks of 128, or 8 of 256 when a sweep sets BLOCK 256): caps registers at
// 32 (no spills on sm_80..sm_120).
// Each thread has one row's 16-byte load in flight at a time (ptxas places each load just
// before its use even when several rows are loaded up front, seen in the SASS), so latency is
// hidden by warps: 64 warps x 512 B = 32 KB per SM, over the ~13 KB of reads that
// 2.2 TB/s (half of 4.4, reads) x ~0.8 us of latency / 132 SMs needs.
#define MIN_BLOCKS (2048 / BLOCK)

#include "gelu_erfc.cuh"  // v2's element math, unchanged

template <typename T>
__device__ __forceinline__ void gelu_bias_vec(const T* __restrict__ x, const T* __restrict__ bias, T* __restrict__ y,
                                              unsigned long long rows, unsigned cols) {
  constexpr unsigned V = 16 / sizeof(T);
  const unsigned chunks = (cols + V - 1) / V;  // 16-byte column chunks per row (the last may be partial)
  const unsigned chunk = blockIdx.x * blockDim.x + threadIdx.x;
  if (chunk >= chunks) return;  // no barrier in this kernel
  const unsigned long long row0 = blockIdx.y * (unsigned long long)blockDim.y + threadIdx.y;
  const unsigned long long step = (unsigned long long)gridDim.y * blockDim.y;
  const bool vec = ((reinterpret_cast<unsigned long long>(x) | reinterpret_cast<unsigned long long>(bias) |
                     reinterpret_cast<unsigned long long>(y) | (cols * sizeof(T))) & 15) == 0;
  float b[V];
  if (vec) {  // cols % V == 0 here, so every chunk is whole
    if (row0 >= rows) return;
    const uint4* __restrict__ xv = reinterpret_cast<const uint4*>(x) + chunk;  // row r: xv[r * chunks]
    uint4* __restrict__ yv = reinterpret_cast<uint4*>(y) + chunk;
    // Both first loads in flight before either is used (v2 waited for the bias, then loaded x).
    const uint4 braw = __ldg(reinterpret_cast<const uint4*>(bias) + chunk);
    uint4 cur = __ldg(xv + row0 * chunks);
    unpack<T>(braw, b);
    for (unsigned long long r = row0;;) {
      yv[r * chunks] = gelu_bias16<T>(cur, b);
      r += step;
      if (r >= rows) break;
      // Loading row r + step before computing row r was tried: ptxas sinks that load below the
      // store at the 32-register cap (and at 40), and sm_80 spilled; so one row at a time, as v2.
      cur = __ldg(xv + r * chunks);
    }
  } else {  // element by element: this thread's columns c0 .. c0 + V - 1 that exist
    const unsigned c0 = chunk * V;
    bias_elems<T>(b, bias, c0, cols);
    for (unsigned long long r = row0; r < rows; r += step) row_elems<T>(x, y, b, r, cols, c0, [](float v) { return gelu(v); });
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS) gelu_bias_bf16(const __nv_bfloat16* __restrict__ x,
                                                                   const __nv_bfloat16* __restrict__ bias,
                                                                   __nv_bfloat16* __restrict__ y,
                                                                   unsigned long long rows, unsigned int cols) {
  gelu_bias_vec<__nv_bfloat16>(x, bias, y, rows, cols);
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS) gelu_bias_f32(const float* __restrict__ x,
                                                                  const float* __restrict__ bias,
                                                                  float* __restrict__ y,
                                                                  unsigned long long rows, unsigned int cols) {
  gelu_bias_vec<float>(x, bias, y, rows, cols);
}
