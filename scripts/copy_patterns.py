"""How the order in which a kernel walks memory sets its copy rate on this GPU (session 8, issue 7).

A 16-byte copy of 512 MiB -> 512 MiB (the bytes of softmax 2048 x 131072 bf16), cold L2, timed by
kernelab.bench beside torch's copy_:
  - persistent grid-stride (block b copies chunks b, b + G, ...) on G blocks: 264 (2 an SM), 240
    (clusters of 8 blocks place 30: 120 SMs), 132, 120;
  - rows: block b copies whole 256 KiB rows b, b + G, ... (a wide-row softmax's static order);
  - dynamic: each block takes the next 32 KiB chunk from a counter (one atomicAdd, one ahead), or
    the next 8 chunks;
  - one-shot: a block per chunk, dispatched in address order;
  - one 1024-thread block an SM (grid-stride, 4 vectors a thread in flight) on 132, 120, 96 SMs:
    how much the SM count alone matters (clusters of 4 SMs place on 120 of the H200's 132).
Usage (GPU machine): PYTHONPATH=src python3 scripts/copy_patterns.py --out results.json"""
import argparse
import json
import sys

import torch

import kernelab
from kernelab.gpu import Module, device_info

SRC = r'''
__device__ __forceinline__ void copy_chunk(const uint4* __restrict__ x, uint4* __restrict__ y, long long c, long long n) {
  const long long i0 = c * blockDim.x * 4 + threadIdx.x;
  uint4 r[4];
#pragma unroll
  for (int u = 0; u < 4; ++u) r[u] = i0 + u * blockDim.x < n ? x[i0 + u * blockDim.x] : make_uint4(0, 0, 0, 0);
#pragma unroll
  for (int u = 0; u < 4; ++u) if (i0 + u * blockDim.x < n) y[i0 + u * blockDim.x] = r[u];
}
extern "C" __global__ void __launch_bounds__(512, 4) static_chunks(const uint4* __restrict__ x, uint4* __restrict__ y, long long n, long long chunks, unsigned* ctr) {
  for (long long c = blockIdx.x; c < chunks; c += gridDim.x) copy_chunk(x, y, c, n);
}
extern "C" __global__ void __launch_bounds__(512, 4) static_rows(const uint4* __restrict__ x, uint4* __restrict__ y, long long n, long long chunks, unsigned* ctr) {
  const long long per_row = 8;  // 8 chunks of 32 KiB: a 256 KiB row
  for (long long r = blockIdx.x; r * per_row < chunks; r += gridDim.x)
    for (long long c = r * per_row; c < (r + 1) * per_row && c < chunks; ++c) copy_chunk(x, y, c, n);
}
template <unsigned K>
__device__ __forceinline__ void dynamic_body(const uint4* __restrict__ x, uint4* __restrict__ y, long long n, long long chunks, unsigned* ctr) {
  __shared__ unsigned next[2];
  if (threadIdx.x == 0) next[0] = atomicAdd(ctr, K);
  __syncthreads();
  for (int k = 0;; ++k) {
    const unsigned c = next[k & 1];
    if (c >= chunks) break;
    if (threadIdx.x == 0) next[(k + 1) & 1] = atomicAdd(ctr, K);
    for (unsigned j = c; j < c + K && j < chunks; ++j) copy_chunk(x, y, j, n);
    __syncthreads();
  }
}
extern "C" __global__ void __launch_bounds__(512, 4) dynamic_1(const uint4* __restrict__ x, uint4* __restrict__ y, long long n, long long chunks, unsigned* ctr) { dynamic_body<1>(x, y, n, chunks, ctr); }
extern "C" __global__ void __launch_bounds__(512, 4) dynamic_8(const uint4* __restrict__ x, uint4* __restrict__ y, long long n, long long chunks, unsigned* ctr) { dynamic_body<8>(x, y, n, chunks, ctr); }
extern "C" __global__ void __launch_bounds__(1024, 1) per_sm(const uint4* __restrict__ x, uint4* __restrict__ y, long long n, long long chunks, unsigned* ctr) {
  const long long stride = (long long)gridDim.x * blockDim.x * 4;
  for (long long i = (long long)blockIdx.x * blockDim.x * 4 + threadIdx.x; i < n; i += stride) {
    uint4 r[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) r[u] = i + u * blockDim.x < n ? x[i + u * blockDim.x] : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int u = 0; u < 4; ++u) if (i + u * blockDim.x < n) y[i + u * blockDim.x] = r[u];
  }
}
extern "C" __global__ void __launch_bounds__(512, 4) oneshot(const uint4* __restrict__ x, uint4* __restrict__ y, long long n, long long chunks, unsigned* ctr) {
  copy_chunk(x, y, blockIdx.x, n);
}
'''


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("copy_patterns: timing needs a GPU", file=sys.stderr)
        return 2
    m = Module(kernelab.compile_source(SRC, name="copy_patterns"))
    nbytes = 2048 * 131072 * 2
    x = torch.randn(nbytes // 4, device="cuda")
    y = torch.empty_like(x)
    ctr = torch.zeros(1, dtype=torch.int32, device="cuda")
    nv = nbytes // 16
    chunks = -(-nv // (512 * 4))
    rows = []

    def timed(name, fn, **info):
        r = kernelab.bench.bench(fn, name=name)
        rows.append({"name": name, "median_s": r.median_s, "p10_s": r.stats.p10, "p90_s": r.stats.p90,
                     "tbps": 2 * nbytes / r.median_s / 1e12, **info})
        print(f"{name:34s} {r.median_s * 1e6:8.1f} us  {2 * nbytes / r.median_s / 1e12:5.2f} TB/s", flush=True)

    def launch(kernel, grid, block=512):
        def f():
            ctr.zero_()  # every kernel gets the same memset, used or not
            kernel(x, y, nv, chunks, ctr, grid=grid, block=block)
        return f

    timed("torch copy_", lambda: y.copy_(x))
    timed("oneshot", launch(m.kernel("oneshot"), chunks), grid=chunks)
    for g in (264, 240, 132, 120):
        timed(f"static chunks, grid {g}", launch(m.kernel("static_chunks"), g), grid=g)
        timed(f"static rows, grid {g}", launch(m.kernel("static_rows"), g), grid=g)
        timed(f"dynamic 1 chunk, grid {g}", launch(m.kernel("dynamic_1"), g), grid=g)
        timed(f"dynamic 8 chunks, grid {g}", launch(m.kernel("dynamic_8"), g), grid=g)
    for g in (132, 120, 96):
        timed(f"one 1024-thread block an SM, {g} SMs", launch(m.kernel("per_sm"), g, 1024), grid=g)
    launch(m.kernel("dynamic_1"), 264)()
    torch.cuda.synchronize()
    exact = bool(torch.equal(x, y))
    timed("torch copy_ again", lambda: y.copy_(x))
    info = device_info()
    with open(args.out, "w") as f:
        json.dump({"schema": "kernelab.copy_patterns/1", "device": info.name, "sms": info.sm_count, "bytes_moved": 2 * nbytes,
                   "dynamic_copy_exact": exact, "rows": rows}, f, indent=1)
    print(f"dynamic copy exact: {exact}; wrote {args.out}")
    return 0 if exact else 1


if __name__ == "__main__":
    sys.exit(main())
