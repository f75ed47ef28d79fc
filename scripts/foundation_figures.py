"""Issue 2 §5 figures, in one run: compile time, cache hit, launch overhead, vector_add bandwidth.

    PYTHONPATH=src python3 scripts/foundation_figures.py [--out DIR]

- cold NVRTC compile time of every library kernel file (cache bypassed; the process is warm),
- a warm cache hit (the same call again),
- host launch overhead of a kernelab launch against torch.add on a tiny tensor (median host
  time of one call, from kernelab.bench's Measurement.host_enqueue_s),
- vector_add v0/v1/v2 and torch.add at n = 2^28, fp32 and bf16, cold L2, through kernelab.bench.
Writes foundation.json under --out (default $OUT or .) and prints a table last.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import torch

from kernelab.bench import bench
from kernelab.gpu import device_info, load
from kernelab.ops import compile_variant, discover, run_variant


def compile_times() -> dict:
    out = {}
    for op in discover().values():
        for v in op.variants():
            try:
                cold = compile_variant(op, v, use_cache=False)
                compile_variant(op, v)  # store
                warm = compile_variant(op, v)
            except Exception as e:  # report, do not stop: the other figures still matter
                out[v.id] = {"error": str(e)[:200]}
                continue
            out[v.id] = {"cold_s": cold.compile_seconds, "warm_s": warm.compile_seconds, "hit": warm.cache_hit,
                         "kernels": len(cold.resources)}
    return out


TINY = 'extern "C" __global__ void tiny(float* x, unsigned long long n) { if (threadIdx.x < n) x[threadIdx.x] += 1.0f; }'


def launch_overhead() -> dict:
    k = load(TINY).kernel("tiny")
    x = torch.zeros(32, device="cuda")
    ours = bench(lambda: k(x, 32, grid=1, block=32), mode="hot", name="kernelab tiny launch")
    theirs = bench(lambda: torch.add(x, 1.0, out=x), mode="hot", name="torch.add tiny")
    return {"kernelab_host_s": ours.host_enqueue_s, "torch_add_host_s": theirs.host_enqueue_s,
            "ratio": ours.host_enqueue_s / theirs.host_enqueue_s,
            "kernelab": ours.to_dict(), "torch_add": theirs.to_dict()}


def bandwidth() -> dict:
    op = discover()["vector_add"]
    out = {}
    for case in [c for c in op.bench_cases() if c.shape == (1 << 28,)]:
        inputs = op.make_inputs(case, 0, "cuda")
        outputs = op.make_outputs(case, inputs)
        work = op.work(case)
        rows = {}
        t = bench(lambda: torch.add(inputs["a"], inputs["b"], out=outputs["c"]), name="torch.add")
        rows["torch.add"] = t
        for v in op.variants():
            rows[v.name] = bench(lambda v=v: run_variant(op, v, case, inputs, outputs), name=v.name)
        base = rows["torch.add"].median_s
        out[case.dtype] = {name: {"median_s": m.median_s, "tb_s": work.bytes / m.median_s / 1e12,
                                  "x_torch_add": base / m.median_s, "n": m.stats.n, "stdrel": m.stats.stdrel}
                           for name, m in rows.items()}
        del inputs, outputs
        torch.cuda.empty_cache()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()
    info = device_info()
    res = {"device": info.to_dict(), "torch": torch.__version__}
    res["compile"] = compile_times()
    res["launch"] = launch_overhead()
    res["bandwidth"] = bandwidth()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    path = Path(args.out) / "foundation.json"
    path.write_text(json.dumps(res, indent=1, default=str))

    colds = [v["cold_s"] for v in res["compile"].values() if "cold_s" in v]
    warms = [v["warm_s"] for v in res["compile"].values() if "warm_s" in v]
    print(f"\n== issue 2 figures on {info.name} ({path})")
    print(f"cold NVRTC compile per file: median {statistics.median(colds) * 1e3:.0f} ms, max {max(colds) * 1e3:.0f} ms "
          f"over {len(colds)} files (target < 300 ms)")
    print(f"warm cache hit: median {statistics.median(warms) * 1e3:.2f} ms, max {max(warms) * 1e3:.2f} ms (target < 10 ms)")
    L = res["launch"]
    print(f"host launch overhead: kernelab {L['kernelab_host_s'] * 1e6:.2f} us vs torch.add {L['torch_add_host_s'] * 1e6:.2f} us"
          f" = {L['ratio']:.2f}x (target <= 1.2x)")
    for dt, rows in res["bandwidth"].items():
        print(f"n = 2^28 {dt}: " + ", ".join(f"{k} {v['tb_s']:.2f} TB/s ({v['x_torch_add']:.3f}x)" for k, v in rows.items()))
    errs = {k: v["error"] for k, v in res["compile"].items() if "error" in v}
    for k, e in errs.items():
        print(f"compile error {k}: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
