// v5_short_fit: v4 with a shorter GELU for bf16 outputs (a degree-5 fit, relative error 1.2e-5,
// in place of the 9-term one), cheaper row addressing, one group of 4 rows per thread.
//
// What changed from v4: (1) bf16: gelu_short() of gelu_erfc.cuh: Phi(-|v|) = t 2^(Q(t) - v^2
//   log2(e) / 2) with t = 1 / (|v| + 2.875) (one FADD; v2-v4: an FFMA with a register constant)
//   and Q of degree 5 (v2-v4: 9), then gelu = max(v, 0) - |v| Phi(-|v|) (FMNMX + FFMA; v2-v4:
//   FSETP, predicated FADD, FMUL); fp32 keeps gelu(), the 9-term fit. (2) Rows as v3's (thread rows
//   r, r + step, ...), taken R = ROWS at a time with the R 16-byte loads issued together (v4's
//   asm volatile ld.global.nc), the bias held as floats across all of them. (3) Addresses from
//   a 32-bit vector index (one IMAD.WIDE.U32 per pointer; v3/v4: 64-bit r x chunks, then
//   LEA/LEA.HI.X, 5-9 instructions), with a 64-bit copy of the loop for tensors of 2^32 or more
//   16-byte vectors; no 64-bit division (v4 divides rows by the band height in every thread).
//   (4) `@layout groups` (op.py), `@grid oneshot`: one group of R rows per thread (v4's one-shot
//   grid; the first build ran bf16 on v3's persistent grid, see Measured); a small tensor is
//   spread to one row per thread. 128-thread blocks (v3 measured 1.64 us at 256 x 1024 with 128, 1.80
//   with 256), MIN_BLOCKS 8: 1024 threads and 64 registers per SM, v4's.
// Why: bf16 at 32768 x 8192 ran 0.88x a copy (v3 284.8 us, 3.77 TB/s): bound by instruction
//   issue. At 0.97x a copy (4.16 TB/s) the H200 must finish 1.04e12 elements/s, and v3's row loop
//   spends 179 instructions per 16-byte vector (sm_90 SASS), 22.4 per element: 23.3e12/s, 70% of
//   the 33.4e12 thread-instructions/s the GPU issues (132 SMs x 4 x 32 x 1.98 GHz), where
//   memory-bound kernels stall. A bf16 result rounds to 8 bits (relative error up to 3.9e-3), so
//   the 9-term fit's 1.2e-7 buys nothing: the degree-5 fit's 1.2e-5 is 300x below that rounding
//   (gelu_erfc.cuh; tests/cpu checks the bound on 700k points and that the checker accepts it).
//   v4's fp32 win came from R = 4 loads in flight per thread (64 KiB per SM where v3 kept 32);
//   in bf16 v4 lost it to overhead (202 instructions per vector in its band loop: 64-bit
//   addresses per row, constants rematerialized at 64 registers; a 64-bit division and ~100
//   instructions of setup per thread), so v5 keeps v4's R and v3's loop.
// Predicted: bf16 row loop in the sm_90 SASS, per 16-byte vector (8 elements): v3 179 = math 152
//   (19 per element: 11 FFMA, 3 FMUL, 2 FADD, FSETP, 2 MUFU; the select is a predicated FADD)
//   + 8 unpack + 4 pack + 15 loop (LDG, STG, 64-bit addresses); v5 140 = math 120 (15: 7 FFMA,
//   2 FADD, 2 FMUL, 2 FMNMX, 2 MUFU) + 8 + 4 + 8 (the R = 4 loop: 561 for 4 vectors), -22%;
//   17.5 per element, 54% of issue at 0.97x a copy. MUFU (rcp, ex2): 2 per element either
//   way, 50% of its 16 per SM per clock. fp32 loop 84 per vector (v4 108).
//   32768 x 8192 bf16: 262-275 us (0.93-0.98x a copy, 1.04-1.09x v3, ~1.5x torch.compile);
//   fp32: v4's 502 us (same R, threads per SM and math).
//   256 x 1024 bf16 (graph): 256 blocks of 128 threads, one row each, as v3 with 128-thread
//   blocks (1.64 us) with fewer instructions per thread: 1.55-1.65 us (target <= 1.76).
// Measured (docs/runs/2026-11-30-h200-sweep_membound_s4.json, copy 501.9 us for 2.15 GB): bf16
//   32768 x 8192 on the persistent grid 274.4 us (0.91x a copy; R = 8 277.9, R = 1 + PREFETCH
//   276.5), on the one-shot grid 254.6 us = 0.99x a copy, 1.61x torch.compile (410.8), v3 284.6:
//   the one-shot grid is the default now. fp32 506.7 us (v4 500.5, torch.compile 501.9).
//   256 x 1024 bf16 in graph mode 1.7 us = 0.92x torch.compile (v3 0.85x).
// Measured: BENCHMARKS.md, gelu_bias rows (full runs).
//
// Knobs (#ifndef macros): ROWS (rows per thread taken together, from `@rows_per_thread`),
//   PREFETCH (1: the next group's loads are issued before this group's math; 0 by default. ptxas
//   keeps them early at R = 1 (SASS: 6-45 instructions into the loop) but sinks them below the
//   first vector's math at R = 2 with 64 registers, to shorten their live ranges),
//   MIN_BLOCKS (blocks per SM the register cap must allow; default 1024 / BLOCK), BLOCK (`@block`),
//   INDEX32_LIMIT (tests: 0 forces the 64-bit index loop), ODD_VEC (session 21, default 1 since the
//   H200 measured it in session 22: tensors whose rows are not 16-byte multiples, x and y in one phase,
//   run as 16-byte vectors over the flat index, gelu_bias_flat; 0 sends them element by element, 2-byte
//   loads and stores in bf16, as the norms did before session 21's fix).
// Measured, ODD_VEC (docs/runs/2026-12-02-h200-sweep_odd22.json, at 093b173, 32768 x 8191 bf16, one
//   process, each twice): v5 ODD_VEC 1 300.5 / 301.7 us, 0 1306.1 / 1306.1 (4.3x), torch.compile 462.1 /
//   461.7 (1.54x); at 8192 (the aligned path, same code) 257.6 / 256.8 against 257.1 / 256.6. Predicted
//   within 5% of the 8192 time; it is 17% over (84% of the copy rate against 98%), cause not measured.
//   Registers (NVRTC 13.0, default knobs): 64 for both kernels on sm_80/90/100/120, no spills.
//
// @block 128
// @layout groups
// @grid oneshot
// @rows_per_thread 4
// @access_bytes 16 (loads of x and bias, stores of y, where aligned)
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 128
#endif
#ifndef ROWS
#define ROWS 4
#endif
#ifndef PREFETCH
#define PREFETCH 0
#endif
// Index space of the 32-bit loop; a test sets 0 to run the 64-bit one on small tensors.
#ifndef INDEX32_LIMIT
#define INDEX32_LIMIT 0xffffffffull
#endif
// ODD_VEC (default 1, measured 4.3x at 32768 x 8191 bf16): 1 sends tensors that fail the aligned test
// but whose x and y share a 16-byte phase (odd widths: rows at every phase; offset views) through
// gelu_bias_flat below (16-byte vectors over the flat index) instead of the element-by-element path.
#ifndef ODD_VEC
#define ODD_VEC 1
#endif
// 1024 threads per SM by default (8 blocks of 128): a 64-register cap, v4's.
#ifndef MIN_BLOCKS
#define MIN_BLOCKS (1024 / BLOCK)
#endif

#include "../common/words16.cuh"  // kl::ld16_words_nc (ODD_VEC's bias)
#include "gelu_erfc.cuh"  // gelu_bias16_for: gelu_short (bf16) / gelu (fp32); vec16.cuh's unpack, pack

// ld.global.nc as asm volatile: NVVM keeps a thread's R loads together, ahead of the math (v4).
__device__ __forceinline__ uint4 ldg_nc(const uint4* p) {
  uint4 r;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  return r;
}

// The aligned path for one thread: vectors i, i + istep, i + 2 istep, ... below n (x, y as
// 16-byte vectors: row r's chunk is r x chunks + chunk, so istep = step x chunks), R at a time.
// I is the index type: 32-bit when every index the loop forms stays below 2^32 (then a row's
// address is one IMAD.WIDE.U32 per pointer), else 64-bit.
template <typename T, typename I>
__device__ __forceinline__ void vec_rows(const uint4* __restrict__ xv, uint4* __restrict__ yv, uint4 braw, I i,
                                         const I n, const I istep) {
  constexpr unsigned V = 16 / sizeof(T);
  constexpr unsigned R = ROWS;
  float b[V];
  uint4 cur[R];
  // Loads past the end are predicated off (those rows are not this thread's).
  auto load_group = [&](uint4 (&dst)[R], unsigned first) {
#pragma unroll
    for (unsigned u = 0; u < R; ++u) {
      const I k = i + (first + u) * istep;
      if (k < n) dst[u] = ldg_nc(xv + k);
    }
  };
  load_group(cur, 0);
  unpack<T>(braw, b);  // after x's loads are issued; kept in registers for all the thread's rows
  for (;;) {
    if (i + (R - 1) * istep < n) {  // a whole group: no per-row tests around the math
#if PREFETCH
      uint4 nxt[R];  // the next group, in flight during this group's math
      load_group(nxt, R);
#endif
#pragma unroll
      for (unsigned u = 0; u < R; ++u) yv[i + u * istep] = gelu_bias16_for<T>(cur[u], b);
      i += R * istep;
      if (i >= n) break;
#if PREFETCH
#pragma unroll
      for (unsigned u = 0; u < R; ++u) cur[u] = nxt[u];
#else
      load_group(cur, 0);
#endif
    } else {  // the thread's last, partial group
#pragma unroll
      for (unsigned u = 0; u < R; ++u)
        if (i + u * istep < n) yv[i + u * istep] = gelu_bias16_for<T>(cur[u], b);
      break;
    }
  }
}

#if ODD_VEC
// The bias at columns c .. c + V - 1 of a row of `cols` (cols >= 2 V), as floats: inside the row, the
// 4-byte words around them (4 LDG, a 5th when bias + c is 2 bytes off a word) funnel-shifted into place
// (the norms' session-21 form, norm_rows.cuh PARAM_WORDS); across the row's end, element by element.
template <typename T>
__device__ __forceinline__ void bias_at(float (&b)[16 / sizeof(T)], const T* __restrict__ bias, unsigned c,
                                        unsigned cols) {
  constexpr unsigned V = 16 / sizeof(T);
  if (c + V <= cols) {
    unpack<T>(kl::ld16_words_nc(bias + c), b);
  } else {
#pragma unroll
    for (unsigned k = 0; k < V; ++k) b[k] = to_f32(bias[c + k < cols ? c + k : c + k - cols]);
  }
}

// x and y share a 16-byte phase but the rows do not (cols x sizeof(T) not a multiple of 16, or x a view
// at an offset): the tensor as one flat array, a head of scalars to x's first 16-byte boundary, then
// vectors j = id, id + T, ... (T threads in the grid, R of a thread's vectors loaded together, as
// vec_rows does), then a tail of scalars. A vector's V elements start at column (head + j V) mod cols,
// stepped by (T V) mod cols rather than divided per vector; the bias comes from bias_at.
template <typename T>
__device__ __forceinline__ void gelu_bias_flat(const T* __restrict__ x, const T* __restrict__ bias, T* __restrict__ y,
                                               unsigned long long rows, unsigned cols) {
  constexpr unsigned V = 16 / sizeof(T), R = ROWS;
  const unsigned long long n = rows * cols;
  const unsigned long long tx = (unsigned long long)gridDim.x * blockDim.x;
  const unsigned long long id =
      (blockIdx.y * (unsigned long long)blockDim.y + threadIdx.y) * tx + blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned long long nt = tx * gridDim.y * blockDim.y;  // threads in the grid
  const unsigned mis = static_cast<unsigned>(reinterpret_cast<unsigned long long>(x) & 15);
  const unsigned long long head = mis ? min((unsigned long long)((16 - mis) / sizeof(T)), n) : 0ull;
  const unsigned long long nvec = (n - head) / V, tail0 = head + nvec * V;
  if (id < head) y[id] = from_f32<T>(gelu_for<T>(to_f32(x[id]) + to_f32(bias[id % cols])));
  if (id < n - tail0) {
    const unsigned long long e = tail0 + id;
    y[e] = from_f32<T>(gelu_for<T>(to_f32(x[e]) + to_f32(bias[e % cols])));
  }
  if (id >= nvec) return;
  const uint4* __restrict__ xv = reinterpret_cast<const uint4*>(x + head);
  uint4* __restrict__ yv = reinterpret_cast<uint4*>(y + head);
  unsigned c = static_cast<unsigned>((head + id * V) % cols);
  const unsigned dc = static_cast<unsigned>((nt * V) % cols);  // c + dc < 2 cols < 2^32: cols < 2^31
  for (unsigned long long j = id; j < nvec; j += R * nt) {
    uint4 cur[R];
#pragma unroll
    for (unsigned u = 0; u < R; ++u)
      if (j + u * nt < nvec) cur[u] = ldg_nc(xv + j + u * nt);
#pragma unroll
    for (unsigned u = 0; u < R; ++u) {
      if (j + u * nt < nvec) {
        float b[V];
        bias_at<T>(b, bias, c, cols);
        yv[j + u * nt] = gelu_bias16_for<T>(cur[u], b);
      }
      c += dc;
      if (c >= cols) c -= cols;
    }
  }
}
#endif

// A thread's rows are v3's: r, r + step, r + 2 step, ... (r = blockIdx.y x by + threadIdx.y,
// step = gridDim.y x by), taken R at a time: the R loads of a group are issued together (and,
// with PREFETCH, the next group's before this group's math). The launch picks gridDim.y: one
// group per thread (one-shot), a resident grid that loops (persistent), or a row per thread.
template <typename T>
__device__ __forceinline__ void gelu_bias_groups(const T* __restrict__ x, const T* __restrict__ bias,
                                                 T* __restrict__ y, unsigned long long rows, unsigned cols) {
  constexpr unsigned V = 16 / sizeof(T);
  const bool vec = ((reinterpret_cast<unsigned long long>(x) | reinterpret_cast<unsigned long long>(bias) |
                     reinterpret_cast<unsigned long long>(y) | (cols * sizeof(T))) & 15) == 0;
#if ODD_VEC
  // Before the early exits below: the flat path numbers every thread of the grid.
  if (!vec && ((reinterpret_cast<unsigned long long>(x) ^ reinterpret_cast<unsigned long long>(y)) & 15) == 0 &&
      cols >= 2 * V && cols < (1u << 31)) {
    gelu_bias_flat<T>(x, bias, y, rows, cols);
    return;
  }
#endif
  const unsigned chunks = (cols + V - 1) / V;  // 16-byte column chunks per row (the last may be partial)
  const unsigned chunk = blockIdx.x * blockDim.x + threadIdx.x;
  if (chunk >= chunks) return;  // no barrier in this kernel
  const unsigned long long r = blockIdx.y * (unsigned long long)blockDim.y + threadIdx.y;
  if (r >= rows) return;
  const unsigned step = gridDim.y * blockDim.y;  // < 2^26 (gridDim.y <= 65535, blockDim.y <= 1024)
  if (vec) {  // cols % V == 0 here, so every chunk is whole
    const uint4* __restrict__ xv = reinterpret_cast<const uint4*>(x);
    uint4* __restrict__ yv = reinterpret_cast<uint4*>(y);
    const uint4 braw = ldg_nc(reinterpret_cast<const uint4*>(bias) + chunk);
    const unsigned long long n = rows * chunks, istep = (unsigned long long)step * chunks;
    const unsigned long long i = r * chunks + chunk;
    // The largest index formed: below n + (2 R) x istep (the prefetch looks R rows ahead of a group).
    if (n + 2ull * ROWS * istep <= INDEX32_LIMIT)
      vec_rows<T, unsigned>(xv, yv, braw, (unsigned)i, (unsigned)n, (unsigned)istep);
    else
      vec_rows<T, unsigned long long>(xv, yv, braw, i, n, istep);
  } else {  // element by element: this thread's columns c0 .. c0 + V - 1 that exist
    float b[V];
    const unsigned c0 = chunk * V;
    bias_elems<T>(b, bias, c0, cols);
    for (unsigned long long ru = r; ru < rows; ru += step)
      row_elems<T>(x, y, b, ru, cols, c0, [](float v) { return gelu_for<T>(v); });
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS) gelu_bias_bf16(const __nv_bfloat16* __restrict__ x,
                                                                               const __nv_bfloat16* __restrict__ bias,
                                                                               __nv_bfloat16* __restrict__ y,
                                                                               unsigned long long rows, unsigned int cols) {
  gelu_bias_groups<__nv_bfloat16>(x, bias, y, rows, cols);
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS) gelu_bias_f32(const float* __restrict__ x,
                                                                              const float* __restrict__ bias,
                                                                              float* __restrict__ y,
                                                                              unsigned long long rows, unsigned int cols) {
  gelu_bias_groups<float>(x, bias, y, rows, cols);
}
