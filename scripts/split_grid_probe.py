"""softmax v14_split_grid, taken apart on the GPU: how many rows the side grid does, and each grid's
rate alone and together (why v14 gains 2.8% at 2048 x 131072 bf16 where 12 more SMs promise ~9%).

The side grid writes into its own NaN-filled output, so the rows it did are the rows of that output
that are not NaN. Timed with CUDA events, median of --reps launches (512 MiB rows: no L2 reuse).

Usage (GPU machine): PYTHONPATH=src python3 scripts/split_grid_probe.py [--m 2048 --n 131072 --dtype bfloat16]
    [--margin 128] [--side-grid packed_regs|online] [--pad-kib K] [--out F.json]
Without a GPU it says so and exits 2."""
from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=2048)
    ap.add_argument("--n", type=int, default=131072)
    ap.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float32"))
    ap.add_argument("--margin", type=int, default=128)
    ap.add_argument("--side-grid", default="packed_regs", choices=("packed_regs", "online"))
    ap.add_argument("--pad-kib", type=int, default=0, help="the side grid's unused shared memory (`@side_smem_kib`)")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--sides", default="", help="comma-separated side-grid sizes to time together with the main grid "
                    "(default: split_grids' count only)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    import torch

    if not torch.cuda.is_available():
        print("split_grid_probe: needs an NVIDIA GPU (sm_90+); torch sees none.", file=sys.stderr)
        return 2
    from kernelab.ops import discover, load_variant
    from kernelab.ops.softmax import op as so

    op = discover()["softmax"]
    v14 = op.variant("v14_split_grid")
    mod = load_variant(op, v14)
    m, n, dt = args.m, args.n, args.dtype
    v = dataclasses.replace(v14, meta={**v14.meta, "side_grid": args.side_grid, "side_margin": str(args.margin),
                                         "side_smem_kib": str(args.pad_kib)})
    g = so.split_launch(mod, v, m, n, dt)  # the launch's own geometry
    if g.side == 0:
        print(f"split_grid_probe: no side grid at {m} x {n} {dt} (margin {args.margin})", file=sys.stderr)
        return 2
    ka, pa, main, kb, pb, side = g.ka, g.pa, g.main, g.kb, g.pb, g.side
    fit_b = so.persistent_grid(kb, pb, 1 << 30)  # the side kernel alone on every SM
    per_sm_a = ka.max_active_blocks_per_sm(pa.block, pa.smem)
    tdt = getattr(torch, dt)
    x = torch.randn(m, n, device="cuda", dtype=tdt)
    ya, yb = torch.empty_like(x), torch.empty_like(x)
    work = so.dynamic_work(x.device)
    stream, fork, join = so._split_stream(x.device)
    caller = torch.cuda.current_stream()

    def launch_main(grid, total):
        ka(x, ya, m, n, work, total, grid=grid, block=pa.block, cluster=pa.cluster, shared_mem=pa.smem)

    def launch_side(grid, total, stop, on_side=True):
        kw = {"stream": stream} if on_side else {}
        kb(x, yb, m, n, work, total, stop, grid=grid, block=pb.block, cluster=pb.cluster, shared_mem=pb.smem, **kw)

    def both(g):  # split_grid_launch's fork and join, the side grid g clusters
        fork.record(caller)
        launch_main(main, main + g)
        stream.wait_event(fork)
        launch_side(g, main + g, m - args.margin)
        join.record(stream)
        caller.wait_event(join)

    units = f"clusters of {pb.cluster}" if pb.cluster else "blocks"  # the online side has no clusters
    configs = {
        f"main alone ({main} clusters of {pa.cluster})": lambda: launch_main(main, main),
        f"side alone ({side} {units})": lambda: launch_side(side, side, m, on_side=False),
        f"side alone ({fit_b} {units}: every SM)": lambda: launch_side(fit_b, fit_b, m, on_side=False),
    }
    for g in [side] + [int(k) for k in args.sides.split(",") if k]:
        configs[f"both ({main} + {g}, margin {args.margin})"] = lambda g=g: both(g)
    rows = []
    for label, fn in configs.items():
        times, side_rows = [], []
        for rep in range(args.reps + 2):
            ya.fill_(float("nan"))
            yb.fill_(float("nan"))
            torch.cuda.synchronize()
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            torch.cuda.synchronize()
            if rep >= 2:
                times.append(start.elapsed_time(stop) * 1e3)
                side_rows.append(int((~torch.isnan(yb[:, 0].float())).sum()))
        assert work.tolist() == [0, 0], f"{label}: counters left at {work.tolist()}"
        med = statistics.median(times)
        r = {"config": label, "median_us": round(med, 1), "min_us": round(min(times), 1),
             "side_rows": statistics.median(side_rows), "rows_per_us": round(m / med, 3)}
        rows.append(r)
        print(f"{label:48s} {med:9.1f} us  side rows {r['side_rows']:6.0f}  {r['rows_per_us']:.3f} rows/us", flush=True)
    result = {"device": torch.cuda.get_device_name(), "m": m, "n": n, "dtype": dt, "main": main, "side": side,
              "side_grid": args.side_grid, "pad_kib": args.pad_kib,
              "main_plan": str(pa), "side_plan": str(pb), "main_blocks_per_sm": per_sm_a, "side_fit_alone": fit_b,
              "rows": rows}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
