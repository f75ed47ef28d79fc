"""Session 29 probe: which of v12's row shapes gain from the `_full` form at fp32 2048 x 131072 (staged_rows.cuh's
dynamic_rows with its block, ring depth and FULL as template arguments, built here outside v4 as probe instances).

t128's `_full` kernel (128 threads x 64 values, 3 stages, 8 warps an SM) ran 520.5 us against e32's 526.5 (256 x 32,
2 stages, 24 warps an SM; sweep t128_29b), while e32 at 3 stages (16 warps) ran 537 in session 27 and e32's own
`_full` gained nothing at 2 stages (full28). This times, in one process and alternating twice, v4 as shipped and:
e32 at 3 stages general and `_full`, e32 at 2 stages `_full`, t128 at 3 and 2 stages `_full`, with kernelab's bench
protocol, L2 flushed before each launch (`--warm`: the protocol's hot mode, L2 not flushed; the first run timed 20
plain launches so, and every shape came out within 1% of 528 us: a warm L2 hides the differences the cold sweeps
see).
`--widths`: e32 at 2 against 3 stages at other widths and misaligned rows (the first runs' lead; 3 stages lost or
tied everywhere but aligned 131072: NOTES.md, session 29).
Each output is checked against torch.softmax. Usage (GPU machine): PYTHONPATH=src python3 scripts/probe_full29.py"""
import sys
from pathlib import Path

import torch

from kernelab.gpu import Module, compile_source, default_arch, tensormap
from kernelab.ops import discover, load_variant
from kernelab.ops.base import Case
from kernelab.ops.softmax import op as sop

SOFTMAX_DIR = Path(sop.__file__).parent
# (name, threads, elems, stages, full)
SHAPES = [("e32_s2", 256, 32, 2, False), ("e32_s3", 256, 32, 3, False), ("e32_s3_full", 256, 32, 3, True),
          ("e32_s2_full", 256, 32, 2, True),
          ("t128_s3_full", 128, 64, 3, True), ("t128_s2_full", 128, 64, 2, True)]


def source() -> str:
    lines = ['#include "staged_rows.cuh"']
    for name, threads, elems, stages, full in SHAPES:
        lines.append(f'extern "C" __global__ void __launch_bounds__({threads}, 1) probe_{name}(const float* '
                     f"__restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) {{ "
                     f"softmax::staged::dynamic_rows<float, 16, {elems}, {threads}, {stages}, "
                     f"{'true' if full else 'false'}>(x, y, M, N, work); }}")
    return "\n".join(lines) + "\n"


def timed(fn, warm: bool | None = None) -> float:
    """Median microseconds of fn by kernelab's bench protocol: L2 flushed before each sample ("cold"), or not
    ("hot": `--warm`, or warm=True)."""
    from kernelab.bench import bench

    warm = "--warm" in sys.argv if warm is None else warm
    return bench(fn, mode="hot" if warm else "cold", target_rel=0.01, max_wall_s=1.0, name="probe").median_s * 1e6


def widths(op, mod) -> None:
    """`--widths`: e32 at 2 stages (v4's clusters there) against 3, general kernels, at fp32 widths e32 takes and at
    misaligned rows of 131072 (x one element in), ~1 GiB each way, alternating twice."""
    work = sop.dynamic_work(torch.device("cuda", torch.cuda.current_device()))
    for n, offset in ((115712, 0), (122880, 0), (131072, 1), (131072, 0)):
        m = 2**28 // n
        case = Case((m, n), "float32", offset=offset)
        x = op.make_inputs(case, 0, "cuda")
        y = op.make_outputs(case, x)
        ref = torch.softmax(x["x"].double(), -1).float()
        for rnd in range(2):
            for name, stages in (("e32_s2", 2), ("e32_s3", 3)):
                k = mod.kernel(f"probe_{name}")
                smem = stages * 16 * -(-n * 4 // (16 * 16))
                fit = tensormap.max_active_clusters(k, 256, (16, 1, 1), smem)

                def fn(k=k, smem=smem, fit=fit, x=x, y=y):
                    k(x["x"], y["y"], m, n, work, grid=min(fit, m), block=256, cluster=16, shared_mem=smem)
                y["y"].fill_(float("nan"))
                us = timed(fn)
                ok = torch.allclose(y["y"], ref, rtol=1e-4, atol=1e-6) and work.tolist() == [0, 0]
                print(f"{m}x{n} offset {offset} round {rnd}  {name:8s} ({fit} clusters) {us:7.1f} us  "
                      f"{'ok' if ok else 'WRONG'}", flush=True)
        del x, y, ref


def main() -> None:
    op = discover()["softmax"]
    v4 = op.variant("v4_dispatch")
    defines = sop.bulk_defines(*sop.DISPATCH_BULK)
    mod = Module(compile_source(source(), name="probe_full29.cu", arch=default_arch(), defines=defines,
                                include_dirs=[SOFTMAX_DIR]), defines)
    if "--widths" in sys.argv:
        return widths(op, mod)
    m, n = 2048, 131072
    case = Case((m, n), "float32")
    x = op.make_inputs(case, 0, "cuda")
    y = op.make_outputs(case, x)
    ref = torch.softmax(x["x"], -1)
    work = sop.dynamic_work(x["x"].device)
    kv4 = load_variant(op, v4).kernel(op.kernel_name("float32"))
    runs = {"v4": lambda: op.launch(kv4, v4, case, x, y)}
    for name, threads, elems, stages, _ in SHAPES[1:]:  # (e32_s2 is v4's e32 instance: --widths times it)
        k = mod.kernel(f"probe_{name}")
        smem = stages * n * 4 // 16
        fit = tensormap.max_active_clusters(k, threads, (16, 1, 1), smem)
        r = mod.compiled.resources[f"probe_{name}"]
        print(f"probe_{name}: {threads} threads, {elems} values, {stages} stages, ring {smem} B, {fit} clusters fit, "
              f"{r.registers} registers, {r.spill_stores} spill stores", flush=True)
        runs[name] = (lambda k=k, threads=threads, smem=smem, fit=fit:
                      k(x["x"], y["y"], m, n, work, grid=min(fit, m), block=threads, cluster=16, shared_mem=smem))
    for rnd in range(2):
        for name, fn in runs.items():
            y["y"].fill_(float("nan"))
            us = timed(fn)
            ok = torch.allclose(y["y"], ref, rtol=1e-4, atol=1e-6) and work.tolist() == [0, 0]
            print(f"round {rnd}  {name:14s} {us:7.1f} us  {'ok' if ok else 'WRONG'}", flush=True)


if __name__ == "__main__":
    main()
