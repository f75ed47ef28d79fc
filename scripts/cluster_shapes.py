"""Softmax v12_dynamic_rows in clusters of any size, not just powers of two (session 9, issue 7).

v12's clusters of 8 blocks (256 threads, 64 values a thread, a 2-stage ring, 2 blocks an SM) place
only 30 at once on an H200: 240 of 264 block slots (scripts/cluster_placement.py). A cluster of
C = 10, 11 or 12 also holds a 131072-wide bf16 row in registers (ceil(16384 / C) 16-byte vectors a
block <= 8 x 256) and may fill more slots. For each C this asks the driver how many clusters fit
(cuOccupancyMaxActiveClusters), checks the output against torch.softmax, and times the kernel at
2048 x 131072 (cold L2, kernelab.bench) beside torch's copy_ of the same bytes, bf16 and fp32 (fp32
with 64 values: C >= 8; with 32 values, v4_dispatch's clusters of 16: C = 16).
Usage (GPU machine): PYTHONPATH=src python3 scripts/cluster_shapes.py --out results.json"""
import argparse
import json
import sys
from pathlib import Path

import torch

import kernelab
from kernelab.gpu import Module, device_info, tensormap
from kernelab.ops.softmax import op as sop

M, N = 2048, 131072
SHAPES = {  # (dtype, values a thread) -> cluster sizes
    ("bfloat16", 64): (8, 10, 11, 12, 16),
    ("float32", 64): (8, 10, 11, 12, 16),
    ("float32", 32): (16,),
}
CT = {"bfloat16": "__nv_bfloat16", "float32": "float"}


def source() -> str:
    lines = ['#define SOFTMAX_NO_ENTRY_POINTS', '#include "v12_dynamic_rows.cu"']
    for (dt, e), cs in SHAPES.items():
        t = CT[dt]
        for c in cs:
            lines.append(f'extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_BLOCKS_PER_SM) '
                         f'probe_e{e}_c{c}_{dt}(const {t}* __restrict__ x, {t}* __restrict__ y, int M, int N, '
                         f'unsigned* __restrict__ work) {{ softmax::staged::dynamic_rows<{t}, {c}, {e}>(x, y, M, N, work); }}')
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--dry-run", action="store_true", help="compile for sm_90 only (no GPU needed)")
    args = ap.parse_args()
    folder = Path(sop.__file__).resolve().parent
    defines = sop.bulk_defines(*sop.DISPATCH_BULK)  # v4_dispatch's v12 build: 2 stages, 256 threads, 64 values
    if args.dry_run:
        cm = kernelab.compile_source(source(), name="cluster_shapes", arch="sm_90", include_dirs=[folder], defines=defines)
        for name, res in sorted(cm.resources.items()):
            print(name, res)
        return 0
    if not torch.cuda.is_available():
        print("cluster_shapes: timing needs a GPU", file=sys.stderr)
        return 2
    mod = Module(kernelab.compile_source(source(), name="cluster_shapes", include_dirs=[folder], defines=defines), defines)
    info = device_info()
    rows = []
    for (dt, e), cs in SHAPES.items():
        dtype = getattr(torch, dt)
        x = torch.randn(M, N, device="cuda", dtype=dtype)
        y = torch.empty_like(x)
        ref = torch.softmax(x.float(), dim=-1)
        work = torch.zeros(2, dtype=torch.int32, device="cuda")
        copy = kernelab.bench.bench(lambda: y.copy_(x), name="copy_")
        nbytes = 2 * x.numel() * x.element_size()
        print(f"{dt} copy_ {copy.median_s * 1e6:.1f} us", flush=True)
        rows.append({"dtype": dt, "name": "torch copy_", "median_s": copy.median_s})
        for c in cs:
            k = mod.kernel(f"probe_e{e}_c{c}_{dt}")
            smem = defines["SB_STAGES"] * sop.bulk_stage_bytes(N, c, dt)
            fit = tensormap.max_active_clusters(k, 256, (c, 1, 1), smem)
            per_sm = k.max_active_blocks_per_sm(256, smem)
            row = {"dtype": dt, "elems": e, "cluster": c, "smem": smem, "clusters": fit, "blocks": (fit or 0) * c,
                   "blocks_per_sm": per_sm, "registers": k.attributes.num_regs}
            if not fit:
                print(f"{dt} e{e} c{c}: does not fit ({row})", flush=True)
                rows.append(row)
                continue

            def launch(k=k, fit=fit, c=c, smem=smem):
                k(x, y, M, N, work, grid=min(M, fit) * c, block=256, cluster=c, shared_mem=smem)
            y.zero_()
            launch()
            torch.cuda.synchronize()
            err = (y.float() - ref).abs().max().item()
            left = work.tolist()
            ok = err < (2e-2 if dt == "bfloat16" else 1e-5) and left == [0, 0]
            r = kernelab.bench.bench(launch, name=f"c{c}")
            row.update(max_abs_err=err, work_left=left, ok=ok, median_s=r.median_s, p10_s=r.stats.p10,
                       p90_s=r.stats.p90, x_copy=copy.median_s / r.median_s)
            rows.append(row)
            print(f"{dt} e{e} c{c:2d}: {fit:3d} clusters ({fit * c} blocks, {per_sm}/SM) {r.median_s * 1e6:7.1f} us "
                  f"{nbytes / r.median_s / 1e12:5.2f} TB/s {copy.median_s / r.median_s:.3f}x copy "
                  f"err {err:.2e} {'ok' if ok else 'WRONG'}", flush=True)
        del x, y, ref
    with open(args.out, "w") as f:
        json.dump({"schema": "kernelab.cluster_shapes/1", "device": info.name, "sms": info.sm_count, "M": M, "N": N,
                   "defines": defines, "rows": rows}, f, indent=1)
    bad = [r for r in rows if r.get("ok") is False]
    print(f"wrote {args.out}; {len(bad)} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
