"""Probe (first device session): which way of launching through cuda.core costs least host time.

Exploratory, not a benchmark of record: host-side perf_counter over 2000 enqueues per method,
which is what "host launch overhead" means. Writes JSON to $OUT/probe_launch.json.
"""
import json, os, time
import numpy as np
import torch
from cuda.core import LaunchConfig, launch
from kernelab.gpu import load

SRC = 'extern "C" __global__ void tiny(float* x, unsigned long long n) { if (threadIdx.x < n) x[threadIdx.x] += 1.0f; }'
k = load(SRC).kernel("tiny")
x = torch.zeros(32, device="cuda")
cfg = LaunchConfig(grid=(1, 1, 1), block=(32, 1, 1), shmem_size=0)
s = torch.cuda.current_stream()


def per_call(fn, n=2000):
    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    dt = (time.perf_counter() - t) / n
    torch.cuda.synchronize()
    return dt * 1e6


import ctypes
from cuda.bindings import driver

handle = k._k.handle
func = handle
if isinstance(handle, driver.CUkernel):
    err, func = driver.cuKernelGetFunction(handle)
raw = torch._C._cuda_getCurrentRawStream(0)
cu_stream = driver.CUstream(raw)


def bindings_launch():
    driver.cuLaunchKernel(func, 1, 1, 1, 32, 1, 1, 0, cu_stream,
                          ((x.data_ptr(), 32), (ctypes.c_void_p, ctypes.c_uint64)), 0)


res = {
    "cuda.bindings cuLaunchKernel (packed tuple)": per_call(bindings_launch),
    "torch.add(out=)": per_call(lambda: torch.add(x, 1.0, out=x)),
    "x.add_(1)": per_call(lambda: x.add_(1.0)),
    "kernelab Kernel.__call__": per_call(lambda: k(x, 32, grid=1, block=32)),
    "cuda.core launch, torch stream each call": per_call(lambda: launch(torch.cuda.current_stream(), cfg, k._k, x.data_ptr(), np.uint64(32))),
    "cuda.core launch, cached stream": per_call(lambda: launch(s, cfg, k._k, x.data_ptr(), np.uint64(32))),
    "torch.cuda.current_stream()": per_call(lambda: torch.cuda.current_stream()),
    "convert_args only": per_call(lambda: k.convert_args((x, 32))),
}
for name, us in res.items():
    print(f"{name:45s} {us:7.2f} us/call")
out = os.environ.get("OUT", "/tmp")
json.dump(res, open(os.path.join(out, "probe_launch.json"), "w"), indent=1)
