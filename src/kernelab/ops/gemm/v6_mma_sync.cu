// v6_mma_sync: bf16 tensor cores through mma.sync (sm_80+): ldmatrix, swizzled shared memory,
// and a 3-stage cp.async pipeline. bf16 in, fp32 accumulation, bf16 out.
//
// What changed (from the fp32 kernels): the math moves to the tensor cores. A warp issues
//   mma.sync.m16n8k16 (HMMA): a 16x16 piece of A times a 16x8 piece of Bᵀ, 4096 FLOPs per
//   instruction where an FFMA does 64. The block tile is 128x128 over k-blocks of 64; 8 warps
//   own 64x32 sub-tiles (2 x 4), i.e. 4 x 4 HMMA tiles each, 64 fp32 accumulators per thread.
//   - ldmatrix.x4 loads the four 8x8 bf16 matrices of one HMMA operand fragment from shared
//     memory in one instruction, already in the register layout mma expects (for B too: B is
//     stored [N, K], which is exactly mma's "col" operand, so no .trans is needed).
//   - Shared rows are 64 bf16 = 128 bytes = 8 chunks of 16 bytes; chunk c of row r is stored at
//     chunk c ^ (r % 8). ldmatrix reads one chunk from each of 8 consecutive rows: unswizzled
//     that is 8 times the same 4 banks (8-way conflict); swizzled, 8 different chunks.
//   - cp.async (16 bytes per thread, no registers involved) fills stage s+2 while the warps
//     compute on stage s: 3 stages x 32 KB = 96 KB, two blocks per SM. Rows or chunks outside
//     A, B are zero-filled by cp.async itself (src-size 0), so M, N, K tails need no special
//     path, except that a chunk is 8 bf16: K % 8 == 0 and 16-byte aligned A, B (supports()).
// Count (4096^3 bf16): 137 GFLOP, 101 MB; floor 139 us at ~990 TFLOP/s. cuBLAS: 213 us (646).
// Predicted: 380-480 TFLOP/s at 4096^3 (0.6-0.75x cuBLAS): mma.sync cannot reach Hopper's
//   wgmma rate (it is issued per warp from registers, and the operands go through the register
//   file), which is v7's point.
// Measured: BENCHMARKS.md, gemm rows.
//
// @dtypes bfloat16
// @block 256
// @tile 128 128
// @smem 98304
// @k_multiple 8
// @align 16
#include <cuda_bf16.h>

#define BM 128
#define BN 128
#define BK 64
#define STAGES 3
#define TILE_BYTES (BM * BK * 2)             // 16 KB: one operand's tile of one stage (BM == BN)
#define STAGE_BYTES (2 * TILE_BYTES)         // A then B

typedef unsigned int u32;

// Byte offset of 16-byte chunk `chunk` (0..7) of row `row` in a [rows][64 bf16] swizzled tile.
__device__ __forceinline__ u32 swz(int row, int chunk) { return row * 128 + ((chunk ^ (row & 7)) << 4); }

__device__ __forceinline__ void cp_async16(u32 dst, const void* src, u32 src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

__device__ __forceinline__ void ldmatrix_x4(u32 addr, u32& r0, u32& r1, u32& r2, u32& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

// d += a * b for one 16x8x16 tile; a: 4 regs (8 bf16), b: 2 regs (4 bf16), d: 4 fp32.
__device__ __forceinline__ void mma_16816(float* d, const u32* a, const u32* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// One stage: rows r0.. of a [rows, K] operand, columns k0..k0+63, into a swizzled [128][64]
// tile. 1024 chunks of 16 bytes, 4 per thread; chunk id = t + 256*i is row id/8, chunk id%8, so
// a warp reads 4 whole 128-byte row pieces. Chunks past the edges are zero-filled.
__device__ __forceinline__ void load_tile(u32 dst, const __nv_bfloat16* __restrict__ p, int rows, int K, int r0,
                                          int k0, int t) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int id = t + 256 * i, row = id / 8, chunk = id % 8;
    const int r = r0 + row, k = k0 + chunk * 8;
    const bool ok = r < rows && k < K;  // K % 8 == 0: a chunk is wholly inside or wholly outside
    const __nv_bfloat16* src = ok ? p + (size_t)r * K + k : p;
    cp_async16(dst + swz(row, chunk), src, ok ? 16u : 0u);
  }
}

__device__ __forceinline__ void store_pair(__nv_bfloat16* __restrict__ c, int M, int N, int row, int col, float x,
                                           float y, bool pairs) {
  if (row >= M) return;
  __nv_bfloat16* p = c + (size_t)row * N + col;
  if (pairs) {  // N even: (row, col) with col even is 4-byte aligned
    if (col < N) *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(x, y);
  } else {
    if (col < N) p[0] = __float2bfloat16_rn(x);
    if (col + 1 < N) p[1] = __float2bfloat16_rn(y);
  }
}

extern "C" __global__ void __launch_bounds__(256, 2) gemm_bf16(const __nv_bfloat16* __restrict__ a,
                                                               const __nv_bfloat16* __restrict__ b,
                                                               __nv_bfloat16* __restrict__ c, int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem[];
  const u32 base = (u32)__cvta_generic_to_shared(smem);
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int wm = (warp / 4) * 64, wn = (warp % 4) * 32;  // the warp's 64x32 sub-tile
  const int ktiles = (K + BK - 1) / BK;

  float acc[4][4][4];  // [m16 tile][n8 tile][fragment]
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

  // Prologue: stages 0 .. STAGES-2 in flight. Every iteration commits one group (possibly
  // empty), so "wait until at most STAGES-2 groups are pending" always means "tile kt landed".
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ktiles) {
      load_tile(base + s * STAGE_BYTES, a, M, K, m0, s * BK, t);
      load_tile(base + s * STAGE_BYTES + TILE_BYTES, b, N, K, n0, s * BK, t);
    }
    cp_async_commit();
  }

  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<STAGES - 2>();  // this thread's copies of tile kt are done...
    __syncthreads();              // ...and everyone's; and everyone finished computing tile kt-1
    {
      const int nt = kt + STAGES - 1;  // refill the stage that tile kt-1 used
      if (nt < ktiles) {
        const u32 s = base + (nt % STAGES) * STAGE_BYTES;
        load_tile(s, a, M, K, m0, nt * BK, t);
        load_tile(s + TILE_BYTES, b, N, K, n0, nt * BK, t);
      }
      cp_async_commit();
    }
    const u32 sa = base + (kt % STAGES) * STAGE_BYTES, sb = sa + TILE_BYTES;
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      u32 af[4][4], bf[4][2];
      // A fragment of m16 tile i: lanes 0-15 point at rows 0-15 of chunk 2kk (k 0-7 of this
      // k16 step), lanes 16-31 at the same rows of chunk 2kk+1 (k 8-15): matrices a0..a3.
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int row = wm + i * 16 + (lane % 16);
        ldmatrix_x4(sa + swz(row, kk * 2 + lane / 16), af[i][0], af[i][1], af[i][2], af[i][3]);
      }
      // B fragments of two n8 tiles per ldmatrix.x4: lanes 8q..8q+7 point at rows (q/2)*8 + 0..7
      // of chunk 2kk + q%2, giving b0, b1 of tile 2j and b0, b1 of tile 2j+1.
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const int q = lane / 8;
        const int row = wn + j * 16 + (q / 2) * 8 + (lane % 8);
        ldmatrix_x4(sb + swz(row, kk * 2 + q % 2), bf[2 * j][0], bf[2 * j][1], bf[2 * j + 1][0], bf[2 * j + 1][1]);
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) mma_16816(acc[i][j], af[i], bf[j]);
    }
  }
  cp_async_wait<0>();  // only empty groups remain; leave nothing in flight

  // Accumulator fragment of a 16x8 tile: d0, d1 at (lane/4, 2*(lane%4) + 0/1), d2, d3 eight rows down.
  const bool pairs = (N % 2 == 0) && (reinterpret_cast<size_t>(c) % 4 == 0);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int row = m0 + wm + i * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int col = n0 + wn + j * 8 + (lane % 4) * 2;
      store_pair(c, M, N, row, col, acc[i][j][0], acc[i][j][1], pairs);
      store_pair(c, M, N, row + 8, col, acc[i][j][2], acc[i][j][3], pairs);
    }
  }
}
