"""Session 31 probe: how much of softmax v4's one-row time (T(1) = 9.9 us bf16 against copy_'s 4.0 for the same
256 KiB; probe_rows31 --small) is the launch of a cluster kernel with a large ring, before any row work?

What it does: times, with kernelab's bench protocol (L2 flushed, as every row of the issue-7 table), an empty kernel
launched as v4's wide rows are (bf16: 240 blocks of 256 threads in clusters of 8 with 64 KiB of dynamic shared
memory; fp32: 224 blocks of 128 in clusters of 16 with 96 KiB) and with each of those features taken away (no ring,
no cluster, one block), beside copy_ of one 256 KiB row and of 4 bytes.

Predicted: the cluster launch with the ring costs 1-2 us over a plain empty launch; if it is 4 us or more, most of
v4's fixed part (a_v4 - a_copy ~6-8 us) is the launch, which no kernel change removes.
Measured (docs/runs/2026-12-03-h200-probe_launch31.log, twice, identical to 0.01 us): empty 1 x 32 2.91 us, 240 x 256
2.94, with the 64 KiB ring 2.91, in clusters of 8 3.07, v4 bf16's whole configuration 3.07, v4 fp32's 3.07; copy_ of
4 bytes 3.42, of the 256 KiB row 3.78. The cluster launch costs 0.15 us, the ring nothing: the launch is not the
fixed part (predicted 1-2 us: wrong, it is a tenth of that). v4's one row (9.9 us) spends ~6 us past an empty
launch of its shape inside the kernel: the row's chain.

Usage (GPU machine): PYTHONPATH=src python3 scripts/probe_launch31.py"""
import torch

from kernelab.bench import bench
from kernelab.gpu import Module, compile_source, default_arch

SRC = r'''
extern "C" __global__ void empty_k(int* __restrict__ p) {
  if (blockIdx.x == 0x7fffffff) p[threadIdx.x] = 1;  // never true: keeps a parameter, does nothing
}
'''


def timed(fn) -> float:
    return bench(fn, mode="cold", target_rel=0.01, max_wall_s=1.0, name="probe").median_s * 1e6


def main() -> None:
    mod = Module(compile_source(SRC, name="probe_launch31.cu", arch=default_arch()), {})
    k = mod.kernel("empty_k")
    p = torch.zeros(1024, dtype=torch.int32, device="cuda")
    row = torch.randn(131072, device="cuda").to(torch.bfloat16)
    out = torch.empty_like(row)
    tiny = torch.zeros(1, dtype=torch.int32, device="cuda")
    tiny_out = torch.empty_like(tiny)
    runs = {
        "copy_ one bf16 row (256 KiB)": lambda: out.copy_(row),
        "copy_ 4 bytes": lambda: tiny_out.copy_(tiny),
        "empty, 1 block of 32": lambda: k(p, grid=1, block=32),
        "empty, 240 x 256": lambda: k(p, grid=240, block=256),
        "empty, 240 x 256, 64 KiB ring": lambda: k(p, grid=240, block=256, shared_mem=65536),
        "empty, 240 x 256, clusters of 8": lambda: k(p, grid=30, block=256, cluster=8),  # grid counts clusters
        "empty, 240 x 256, clusters of 8, 64 KiB (v4 bf16)": lambda: k(p, grid=30, block=256, cluster=8,
                                                                       shared_mem=65536),
        "empty, 224 x 128, clusters of 16, 96 KiB (v4 fp32)": lambda: k(p, grid=14, block=128, cluster=16,
                                                                        shared_mem=98304),
    }
    for rnd in range(2):
        for name, fn in runs.items():
            print(f"round {rnd}  {name:52s} {timed(fn):6.2f} us", flush=True)


if __name__ == "__main__":
    main()
