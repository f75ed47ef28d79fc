"""How many SMs clusters of C blocks can use on this GPU (cuOccupancyMaxActiveClusters), for the
block shapes a wide-row softmax could take: 1024 threads with ~160 KiB of shared memory (one block
an SM), 512 x ~100 KiB (two an SM), 256 x 64 KiB (v12's bf16 blocks, two an SM). Session 9 found
clusters of 8 on 120 of the H200's 132 SMs; this asks whether clusters of 2 reach all of them.

Usage (GPU machine): PYTHONPATH=src python3 scripts/cluster_fit.py"""
import sys

from kernelab.gpu import Module, device_info, tensormap
from kernelab.gpu.compiler import compile_source

SRC = r'''
extern "C" __global__ void __launch_bounds__(1024, 1) k1024(float* p) { extern __shared__ float s[]; if (p) p[threadIdx.x] = s[threadIdx.x]; }
extern "C" __global__ void __launch_bounds__(512, 2) k512(float* p) { extern __shared__ float s[]; if (p) p[threadIdx.x] = s[threadIdx.x]; }
extern "C" __global__ void __launch_bounds__(256, 2) k256(float* p) { extern __shared__ float s[]; if (p) p[threadIdx.x] = s[threadIdx.x]; }
'''


def main() -> int:
    info = device_info()
    mod = Module(compile_source(SRC, name="cluster_fit.cu", arch=info.arch))
    print("SMs", info.sm_count)
    for name, threads, smem in (("k1024", 1024, 160 * 1024), ("k512", 512, 100 * 1024), ("k256", 256, 64 * 1024)):
        k = mod.kernel(name)
        per_sm = k.max_active_blocks_per_sm(threads, smem)
        for c in (1, 2, 4, 8):
            n = tensormap.max_active_clusters(k, threads, (c, 1, 1), smem)
            sms = None if n is None else n * c / per_sm
            print(f"{name:6} smem {smem // 1024:3} KiB  blocks/SM {per_sm}  cluster {c}: {n} clusters = {sms} SMs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
