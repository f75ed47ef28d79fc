"""Which side of transpose v4's memory pattern costs its ~4% against a copy (session 23, issue 7).

transpose v4 (16384^2 fp32, 64 x 64 tiles, column-major tile order: row tile fastest) runs 0.96x a
same-bytes copy. Its reads take 256 B from each of a tile's 64 rows of m, its writes 256 B to each
of 64 rows of out. Four copies of 1 GiB -> 1 GiB that move 16 bytes a thread and no shared memory
separate the sides, each in v4's block order (block t: row tile t mod 256, column tile t / 256):
  - tiles_to_tiles: reads m's tile (r, c) and writes out's tile (c, r), both as v4 (the data is not
    transposed: only the addresses are v4's);
  - tiles_to_rows: reads as v4, writes the tile's 16 KiB to out at t x 16 KiB (a stream);
  - rows_to_tiles: reads 16 KiB at t x 16 KiB (a stream), writes as v4;
  - rows_to_rows: both streams, in the same blocks (the copy floor of this kernel shape);
beside torch's copy_ and v4 itself. If tiles_to_tiles runs v4's time, the shared-memory transpose
costs nothing and the gap is the address pattern; tiles_to_rows against rows_to_tiles says which side.

Measured (H200, session 23, docs/runs/2026-12-02-h200-transpose_sides.json, twice each, us): torch copy_
504.4-504.7, v4 524.7-524.9, tiles_to_tiles 519.7-520.0, tiles_to_rows 519.7-520.1, rows_to_tiles
521.1-521.4, rows_to_rows 524.6-524.7. The streams alone, in v4's kernel shape (a block a 16 KiB tile, 4
loads then 4 stores a thread, 65536 blocks), run v4's time: the gap to copy_ is the kernel's shape, not
v4's addresses (predicted the opposite: the write side's DRAM pages).

Follow-up (--follow-up, written in session 23): the same streams in persistent blocks that keep the
next tile's loads in flight while they store the current one (4 and 8 blocks an SM), and in one-shot
blocks of two tiles. Predicted: the persistent streams at copy_'s time (~505 us) if the block life cycle
is the cost; v4's addresses in that shape within 1% of them. Measured (H200, session 24,
docs/runs/2026-12-02-h200-transpose_sides_followup.json, twice each, us): copy_ 504.8-505.1, v4
525.2-525.4, tiles_to_tiles 519.4-519.5, rows_to_rows 527.2-527.5; persistent: streams 558.4-560.6 at
both grids, v4's addresses 535.8-536.4 at 4 blocks an SM and 558.5-558.6 at 8; two tiles a block:
streams 524.4-524.6, v4's addresses 522.1-522.3. Wrong: no shape reaches copy_, the persistent ones
lose 2-7%. And copy_ is not an SM kernel to match: torch.profiler names it "Memcpy DtoD (Device ->
Device)" (scripts/copy_kind.py, docs/runs/2026-12-02-h200-copy_kind.json), the driver's memcpy, while
copy_(m.t()) is ATen's elementwise kernel. The best SM shape here, 16-byte copies at v4's addresses in
v4's shape, runs 0.972x copy_; v4 0.961x.

Usage (GPU machine): PYTHONPATH=src python3 scripts/transpose_sides.py --out results.json [--follow-up]"""
import argparse
import json
import sys

import torch

import kernelab
from kernelab.gpu import Module, device_info

N = 16384      # the matrix is N x N fp32
T = 64         # tile rows and columns
TILES = N // T  # per side

SRC = r'''
// 256 threads, a 64 x 64 fp32 tile: 64 rows of 16 chunks of 16 bytes, 4 chunks a thread.
#define N 16384
#define T 64
#define TILES (N / T)
__device__ __forceinline__ long long tile_chunk(int r, int c, int k) {  // chunk k of tile (r, c), in uint4s
  const int row = k >> 4, col = k & 15;
  return ((long long)(r * T + row) * N + (long long)c * T) / 4 + col;
}
__device__ __forceinline__ long long linear_chunk(long long t, int k) { return t * (T * T / 4) + k; }
template <bool TILE_IN, bool TILE_OUT>
__device__ __forceinline__ void body(const uint4* __restrict__ m, uint4* __restrict__ out) {
  const long long t = blockIdx.x;
  const int r = (int)(t % TILES), c = (int)(t / TILES);  // v4's column-major order: row tile fastest
  uint4 v[4];
#pragma unroll
  for (int u = 0; u < 4; ++u) {
    const int k = threadIdx.x + u * 256;
    v[u] = m[TILE_IN ? tile_chunk(r, c, k) : linear_chunk(t, k)];
  }
#pragma unroll
  for (int u = 0; u < 4; ++u) {
    const int k = threadIdx.x + u * 256;
    out[TILE_OUT ? tile_chunk(c, r, k) : linear_chunk(t, k)] = v[u];
  }
}
extern "C" __global__ void __launch_bounds__(256) tiles_to_tiles(const uint4* m, uint4* out) {
  body<true, true>(m, out); }
extern "C" __global__ void __launch_bounds__(256) tiles_to_rows(const uint4* m, uint4* out) {
  body<true, false>(m, out); }
extern "C" __global__ void __launch_bounds__(256) rows_to_tiles(const uint4* m, uint4* out) {
  body<false, true>(m, out); }
extern "C" __global__ void __launch_bounds__(256) rows_to_rows(const uint4* m, uint4* out) {
  body<false, false>(m, out); }
// Session 23's follow-up (unmeasured when written): the same copies in other kernel shapes. Persistent
// blocks (grid G, tiles t = blockIdx.x, + G, ...) that issue the next tile's 4 loads before storing the
// current tile's 4 (8 uint4 live a thread), and one-shot blocks of two tiles (8 loads, then 8 stores).
template <bool TILE>
__device__ __forceinline__ long long in_chunk(long long t, int k) {
  return TILE ? tile_chunk((int)(t % TILES), (int)(t / TILES), k) : linear_chunk(t, k);
}
template <bool TILE>
__device__ __forceinline__ long long out_chunk(long long t, int k) {
  return TILE ? tile_chunk((int)(t / TILES), (int)(t % TILES), k) : linear_chunk(t, k);
}
template <bool TILE>
__device__ __forceinline__ void persistent(const uint4* __restrict__ m, uint4* __restrict__ out) {
  const long long tiles = (long long)TILES * TILES;
  long long t = blockIdx.x;
  uint4 cur[4], nxt[4];
#pragma unroll
  for (int u = 0; u < 4; ++u) cur[u] = t < tiles ? m[in_chunk<TILE>(t, threadIdx.x + u * 256)] : make_uint4(0, 0, 0, 0);
  for (; t < tiles; t += gridDim.x) {
    const long long n = t + gridDim.x;
#pragma unroll
    for (int u = 0; u < 4; ++u)
      nxt[u] = n < tiles ? m[in_chunk<TILE>(n, threadIdx.x + u * 256)] : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int u = 0; u < 4; ++u) out[out_chunk<TILE>(t, threadIdx.x + u * 256)] = cur[u];
#pragma unroll
    for (int u = 0; u < 4; ++u) cur[u] = nxt[u];
  }
}
template <bool TILE>
__device__ __forceinline__ void two_tiles(const uint4* __restrict__ m, uint4* __restrict__ out) {
  const long long t0 = 2LL * blockIdx.x;  // tiles t0, t0 + 1: neighbours in v4's order
  uint4 v[8];
#pragma unroll
  for (int u = 0; u < 8; ++u) v[u] = m[in_chunk<TILE>(t0 + (u >> 2), threadIdx.x + (u & 3) * 256)];
#pragma unroll
  for (int u = 0; u < 8; ++u) out[out_chunk<TILE>(t0 + (u >> 2), threadIdx.x + (u & 3) * 256)] = v[u];
}
extern "C" __global__ void __launch_bounds__(256) rows_persistent(const uint4* m, uint4* out) {
  persistent<false>(m, out); }
extern "C" __global__ void __launch_bounds__(256) tiles_persistent(const uint4* m, uint4* out) {
  persistent<true>(m, out); }
extern "C" __global__ void __launch_bounds__(256) rows_two_tiles(const uint4* m, uint4* out) {
  two_tiles<false>(m, out); }
extern "C" __global__ void __launch_bounds__(256) tiles_two_tiles(const uint4* m, uint4* out) {
  two_tiles<true>(m, out); }
'''
KERNELS = ("tiles_to_tiles", "tiles_to_rows", "rows_to_tiles", "rows_to_rows")
# The follow-up shapes (--follow-up): persistent grids of 4 and 8 blocks an SM, two-tile one-shot grids
FOLLOW_UP = ("rows_persistent", "tiles_persistent", "rows_two_tiles", "tiles_two_tiles")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--follow-up", action="store_true",
                    help="also the persistent and two-tile shapes (session 23's next step)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("transpose_sides: timing needs a GPU", file=sys.stderr)
        return 2
    from kernelab.ops import discover, run_variant

    mod = Module(kernelab.compile_source(SRC, name="transpose_sides"))
    m = torch.randn(N, N, device="cuda")
    out = torch.empty_like(m)
    nbytes = 2 * m.numel() * 4
    rows = []

    def timed(name, fn):
        r = kernelab.bench.bench(fn, name=name)
        rows.append({"name": name, "median_s": r.median_s, "p10_s": r.stats.p10, "p90_s": r.stats.p90,
                     "tbps": nbytes / r.median_s / 1e12})
        print(f"{name:22s} {r.median_s * 1e6:8.1f} us  {nbytes / r.median_s / 1e12:5.2f} TB/s", flush=True)

    op = discover()["transpose"]
    v4 = op.variant("v4_grouped_order")
    case = next(c for c in op.bench_cases() if c.shape == (N, N) and c.dtype == "float32")
    inputs = op.make_inputs(case, seed=0)
    outputs = op.make_outputs(case, inputs)
    for rep in ("", " again"):
        timed("torch copy_" + rep, lambda: out.copy_(m))
        timed("v4_grouped_order" + rep, lambda: run_variant(op, v4, case, inputs, outputs))
        for k in KERNELS:
            kern = mod.kernel(k)
            timed(k + rep, lambda kern=kern: kern(m, out, grid=TILES * TILES, block=256))
        if args.follow_up:
            sms = device_info().sm_count
            for k in FOLLOW_UP:
                kern = mod.kernel(k)
                grids = (sms * 4, sms * 8) if "persistent" in k else (TILES * TILES // 2,)
                for g in grids:
                    timed(f"{k} grid {g}{rep}", lambda kern=kern, g=g: kern(m, out, grid=g, block=256))
    # tiles_to_tiles moves every 16-byte chunk somewhere once: out holds m's chunks, permuted.
    mod.kernel("tiles_to_tiles")(m, out, grid=TILES * TILES, block=256)
    torch.cuda.synchronize()
    same_bytes = bool(torch.equal(m.flatten().sort().values, out.flatten().sort().values))
    info = device_info()
    with open(args.out, "w") as f:
        json.dump({"schema": "kernelab.transpose_sides/1", "device": info.name, "sms": info.sm_count,
                   "bytes_moved": nbytes, "tiles_to_tiles_moves_every_chunk": same_bytes, "rows": rows}, f, indent=1)
    print(f"tiles_to_tiles moves every chunk once: {same_bytes}; wrote {args.out}")
    return 0 if same_bytes else 1


if __name__ == "__main__":
    sys.exit(main())
