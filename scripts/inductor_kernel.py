"""What torch.compile runs for an op's peer: the Triton kernels inductor generated, the config its
autotuner picked, each kernel's registers and shared memory, and the global loads and stores of its PTX.

Why: a peer that beats a kernelab variant by 1% is worth reading before guessing (layernorm fp32,
issue 7); ncu tells what it did, this tells what it is.

Usage (GPU machine): PYTHONPATH=src python3 scripts/inductor_kernel.py --op layernorm --shape 32768x8192 \
    --dtype float32 [--out DIR] [--sass]   (DIR: copies of the kernels' .py, .ptx and .best_config files;
    --sass: each kernel's SASS too)
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--op", required=True)
    ap.add_argument("--shape", required=True, help="e.g. 32768x8192")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--out", default=None)
    ap.add_argument("--sass", action="store_true", help="also print each kernel's SASS (cuobjdump -sass)")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="inductor_kernel_"))
    # Fresh caches, so the files found are this compile's and not an earlier process's.
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(work / "inductor")
    os.environ["TRITON_CACHE_DIR"] = str(work / "triton")
    import torch

    from kernelab.ops import Case, discover

    op = discover()[args.op]
    case = Case(tuple(int(s) for s in args.shape.split("x")), args.dtype)
    inputs = op.make_inputs(case, seed=0)
    peer = op.peers(case)["torch.compile"]
    peer(inputs)
    torch.cuda.synchronize()

    out = Path(args.out) if args.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    for p in sorted(glob.glob(str(work / "inductor" / "**" / "*.py"), recursive=True)):
        text = Path(p).read_text(errors="replace")
        if "@triton.jit" not in text or "def triton_" not in text:
            continue
        print(f"==== inductor kernel {Path(p).name}")
        start = "@triton_heuristics" if "@triton_heuristics" in text else "@triton"
        print(text[text.index(start):])
        if out:
            shutil.copy(p, out / Path(p).name)
    for p in sorted(glob.glob(str(work / "inductor" / "**" / "*.best_config"), recursive=True)):
        print(f"==== best config {Path(p).name}: {Path(p).read_text()}")
        if out:
            shutil.copy(p, out / Path(p).name)
    for p in sorted(glob.glob(str(work / "triton" / "**" / "*.json"), recursive=True)):
        meta = json.loads(Path(p).read_text())
        if not isinstance(meta, dict) or "name" not in meta:
            continue
        keys = ("name", "num_warps", "num_stages", "shared", "n_regs", "n_spills", "target")
        print(f"==== triton metadata {', '.join(f'{k}={meta.get(k)}' for k in keys if k in meta)}")
    for p in sorted(glob.glob(str(work / "triton" / "**" / "*.ptx"), recursive=True)):
        ptx = Path(p).read_text()
        print(f"==== ptx {Path(p).name}: global loads / stores, cache policies")
        for line in ptx.splitlines():
            if re.search(r"\b(ld|st)\.global|createpolicy|bar\.sync|\.reqntid|\.maxnreg|\.minnctapersm", line):
                print("   ", line.strip())
        if out:
            shutil.copy(p, out / Path(p).name)
    for p in sorted(glob.glob(str(work / "triton" / "**" / "*.cubin"), recursive=True)):
        try:
            from kernelab.analysis.sass import run_cuobjdump

            print(f"==== cuobjdump -res-usage {Path(p).name}")
            print(run_cuobjdump(Path(p).read_bytes(), "-res-usage"))
            if args.sass:
                print(f"==== cuobjdump -sass {Path(p).name}")
                print(run_cuobjdump(Path(p).read_bytes(), "-sass"))
        except Exception as e:  # no cuobjdump: the metadata above still has n_regs
            print(f"(cuobjdump: {e})")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
