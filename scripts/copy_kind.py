"""What torch's `out.copy_(m)` runs on the GPU: a copy-engine memcpy or an SM kernel (session 24, issue 7).

Every "fraction of a copy" target in issue 7 divides by the time of `out.copy_(m)` on contiguous
tensors. If that is a cudaMemcpyAsync serviced by the copy engines, no SM kernel shape can be expected
to match it exactly (session 8's best SM copy reached 0.986x of it). torch.profiler's CUDA activities
name it: "Memcpy DtoD (Device -> Device)" for a memcpy, the kernel's name otherwise.

Usage (GPU machine): PYTHONPATH=src python3 scripts/copy_kind.py [--out kinds.json]"""
import argparse
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile


def activities(fn) -> list[dict]:
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA], acc_events=True) as prof:
        fn()
        torch.cuda.synchronize()
    return [{"name": e.key, "device_time_us": e.device_time_total}
            for e in prof.key_averages() if e.device_time_total > 0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("copy_kind: needs a GPU", file=sys.stderr)
        return 2
    found = {}
    for dtype in (torch.float32, torch.bfloat16):
        m = torch.randn(16384, 16384, device="cuda").to(dtype)
        out = torch.empty_like(m)
        found[f"copy_ contiguous {dtype}"] = activities(lambda: out.copy_(m))
        found[f"copy_ of m.t() {dtype}"] = activities(lambda: out.copy_(m.t()))
        found[f"clone {dtype}"] = activities(lambda: m.clone())
    for what, acts in found.items():
        print(f"{what}:")
        for a in acts:
            print(f"    {a['device_time_us']:10.1f} us  {a['name']}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"schema": "kernelab.copy_kind/1", "device": torch.cuda.get_device_name(),
                       "torch": torch.__version__, "found": found}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
