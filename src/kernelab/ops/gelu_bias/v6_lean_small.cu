// v6_lean_small: v5 plus a second, minimal kernel for tensors that fit in one wave of threads: one
// 16-byte vector a thread, no loop, no fallback, 32-bit indices, the loads issued ~10 instructions
// after the thread starts. The launcher (v6_lean_small.py) picks it when it applies; everything
// else runs v5's kernels, compiled in unchanged (#include below), on v5's geometry.
//
// What changed from v5: a lean entry point per dtype, gelu_bias_lean_{bf16,f32}(x, bias, y,
//   chunks) with x, bias, y as 16-byte vectors, on a grid of (ceil(chunks / LEAN_BLOCK), rows)
//   blocks of LEAN_BLOCK threads: thread (blockIdx.x x LEAN_BLOCK + threadIdx.x) of block row
//   blockIdx.y owns chunk c of row r, vector r x chunks + c. The launcher guarantees what v5
//   tests at run time: x, bias and y 16-byte aligned, rows a whole number of vectors, every
//   index below 2^32, rows <= 65535 (grid.y) and no more vectors than one wave of threads.
// Why: at 256 x 1024 bf16 in graph mode (1 MiB moved, L2-resident on replay) v5 runs 1.742 us a
//   launch, 1.101x torch.compile's 1.582 (paired: -2026-12-01-h200-h2h_small.json), and its fp32
//   kernel 1.774 against 1.602: a constant ~0.15 us in both dtypes, though fp32 moves twice the
//   bytes, so it is not the memory. Such a kernel is one wave (256 blocks of 128 on 132 SMs), and
//   its time is the launch plus one thread's life. In v5's sm_90 SASS (bf16) a thread runs ~90
//   instructions before its first load of x: four constant-bank loads in series (cols, blockDim.y,
//   the pointers, rows), two early exits, the alignment test and its branch (to 0x1140), the
//   64-bit n and istep, the INDEX32 test and a second branch (to 0x5e00), four predicated loads
//   with 64-bit LEA/LEA.HI.X addresses. At ~4-6 cycles an instruction where each waits on the
//   last (and an LDC that misses the constant cache, ~100 cycles: ncu showed imc_miss and
//   no_instruction stalls on the fp32 pair, NOTES session 6), that is ~200-400 cycles,
//   0.1-0.2 us at 1.98 GHz. The kernel is also 2680 instructions (43 KB of code: v5's element
//   loop, its 64-bit copy and the element-by-element fallback), and the aligned path jumps
//   twice, so a cold SM fetches code from three places. torch.compile's Triton kernel is
//   specialised on the shape and on 16-byte alignment, so it has none of this.
//   Here (sm_90 SASS) the path to the loads is 3 S2R, the constant loads of chunks and the two
//   pointers, one LEA, one test and exit, one IMAD and two IMAD.WIDE.U32: the second load is
//   instruction 15 (tests/cpu/test_gelu_lean.py holds it to 16), and the kernel is straight code.
// Predicted: 256 x 1024 bf16 (graph): 1.60-1.68 us (v5 1.742, torch.compile 1.582), i.e.
//   1.01-1.06x torch.compile's time, inside the 1.1x target; fp32 256 x 1024 1.62-1.70 us (v5
//   1.774, v3 1.756). Large tensors: v5's figures exactly (same kernels, same launch).
//   `@lean_vec_bytes 8` (a sweep knob): twice the threads (512 blocks of 128 at 256 x 1024 bf16, ~4
//   an SM), each with half the math (8 MUFU, not 16), so the SMs' schedulers have twice the warps to
//   hide a chain behind; it costs twice the loads and address math. If the 16-byte kernel's time is
//   the launch and the loads, 8 bytes ties it; if the math chain counts (~0.14 us an SM of issue at 8
//   warps), 8 bytes gains up to ~0.05 us.
// Measured: BENCHMARKS.md, gelu_bias rows (full runs). The sweep (H200, session 18, graph mode,
//   docs/runs/2026-12-01-h200-sweep_lean17.json, one run):
//   256 x 1024 bf16: v6 1.503 / 1.503 us (twice), v5 1.696 / 1.691, torch.compile 1.685 / 1.686:
//   v6 runs at 0.89x torch.compile's time (1.12x faster), past the prediction (1.01-1.06x): the
//   path v6 removes cost ~0.19 us, not 0.06-0.14. fp32: v6 1.598 / 1.598, v5 1.822, v3 1.765,
//   torch.compile 1.603 / 1.596: a tie (1.00x). `@lean_block` 64 loses (bf16 1.564, fp32 1.723:
//   twice the blocks), 256 ties 128 (1.499 / 1.640); 8-byte vectors: bf16 1.453 (128) / 1.461 (256),
//   3% under 16 bytes, fp32 1.642 (128) / 1.560 (256), either side of it: within the run's noise
//   at this size, so 16 bytes (and the 16-byte SASS claim) stays. 4096 x 8192 bf16: v6 34.92 us,
//   v5 34.91 (the same kernel). The full memory-bound run at b2c8471 (BENCHMARKS.md, membound)
//   paired v6 with torch.compile at 256 x 1024: bf16 1.102x [1.102, 1.103] faster, fp32 1.007x
//   [1.007, 1.007] same; 32768 x 8192 bf16 0.996x a same-bytes copy.
//
// Knobs (#ifndef macros): LEAN_BLOCK (threads a block of the lean kernel, from `@lean_block`: 128,
//   Triton's 4 warps for this shape), LEAN_VEC_BYTES (`@lean_vec_bytes`: 16, or 8: half the elements
//   a thread, twice the threads, so each thread's chain of GELU math is half as long; the sweep
//   tries it), plus v5's (BLOCK, ROWS, MIN_BLOCKS, PREFETCH, INDEX32_LIMIT).
//
// @lean_block 128
// @lean_vec_bytes 16
// @block 128
// @layout groups
// @grid oneshot
// @rows_per_thread 4
// @access_bytes 16 (loads of x and bias, stores of y, where aligned)
#include "v5_short_fit.cu"  // gelu_bias_bf16 / gelu_bias_f32: the general kernels, v5's

#ifndef LEAN_BLOCK
#define LEAN_BLOCK 128
#endif
#ifndef LEAN_VEC_BYTES
#define LEAN_VEC_BYTES 16
#endif
#if LEAN_VEC_BYTES == 16
#define LEAN_VEC uint4
#elif LEAN_VEC_BYTES == 8
#define LEAN_VEC uint2
#else
#error "LEAN_VEC_BYTES (`@lean_vec_bytes`) must be 16 or 8"
#endif

__device__ __forceinline__ uint2 ldg_nc(const uint2* p) {  // v5's ldg_nc, 8 bytes
  uint2 r;
  asm volatile("ld.global.nc.v2.u32 {%0, %1}, [%2];" : "=r"(r.x), "=r"(r.y) : "l"(p));
  return r;
}
__device__ __forceinline__ uint4 widen(uint4 v) { return v; }
__device__ __forceinline__ uint4 widen(uint2 v) { return make_uint4(v.x, v.y, 0u, 0u); }
__device__ __forceinline__ void narrow(uint4 v, uint4& out) { out = v; }
__device__ __forceinline__ void narrow(uint4 v, uint2& out) { out = make_uint2(v.x, v.y); }

// One vector a thread. Both loads are issued before either is used (v3's lesson; ldg_nc is v5's asm
// volatile ld.global.nc); ptxas issues bias's first, since its address does not wait for
// blockIdx.y. An 8-byte vector goes through the 16-byte math with its upper half zero: that half's
// results are never stored, so NVVM drops their math (the CPU test counts half the MUFU ops).
template <typename T>
__device__ __forceinline__ void gelu_bias_lean(const LEAN_VEC* __restrict__ x, const LEAN_VEC* __restrict__ bias,
                                               LEAN_VEC* __restrict__ y, unsigned chunks) {
  constexpr unsigned V = 16 / sizeof(T);
  const unsigned c = blockIdx.x * LEAN_BLOCK + threadIdx.x;
  if (c >= chunks) return;  // the row's last block may overhang; no barrier in this kernel
  const unsigned i = blockIdx.y * chunks + c;  // < 2^32: the launcher's condition
  const LEAN_VEC xr = ldg_nc(x + i);
  const LEAN_VEC br = ldg_nc(bias + c);
  float b[V];
  unpack<T>(widen(br), b);
  narrow(gelu_bias16_for<T>(widen(xr), b), y[i]);
}

extern "C" __global__ void __launch_bounds__(LEAN_BLOCK) gelu_bias_lean_bf16(const LEAN_VEC* __restrict__ x,
                                                                            const LEAN_VEC* __restrict__ bias,
                                                                            LEAN_VEC* __restrict__ y, unsigned chunks) {
  gelu_bias_lean<__nv_bfloat16>(x, bias, y, chunks);
}

extern "C" __global__ void __launch_bounds__(LEAN_BLOCK) gelu_bias_lean_f32(const LEAN_VEC* __restrict__ x,
                                                                           const LEAN_VEC* __restrict__ bias,
                                                                           LEAN_VEC* __restrict__ y, unsigned chunks) {
  gelu_bias_lean<float>(x, bias, y, chunks);
}
