"""Session 31 probe: is softmax's gap to a copy at 2048 x 131072 a per-row cost or a fixed one (the pipeline's fill
and the last rows' tail)?

Why: v4 runs 2048 rows of 131072 on a few dozen persistent clusters (bf16: v12's clusters of 8 x 256 threads, three
an SM's worth, ~45 clusters; fp32: t128's clusters of 16 x 128), each taking rows from a counter with a two- or
three-stage ring. 2048 / 45 = 45.5 rows a cluster, so the last rows run while up to half the clusters have nothing
left, and the first row of each cluster is read before any y is written. Either costs a fixed ~half a row-time
(~3 us) each, independent of M; a copy (the driver's memcpy) has neither. The gap to 0.97x is 2.5 us (bf16) and
5 us (fp32): if T(M) = a + b M with b at the copy's per-row rate and a ~10 us above the copy's, the gap is the
fill and the tail, and what to change is the last rows' split, not the rows' inner loop (sessions 12-30 worked on
that).

What it does: times v4_dispatch and copy_ at M x 131072 for several M (bench protocol, L2 flushed, alternating
twice), fits T = a + b M over M >= 512 for each, and prints a, b and the ratio of b's (the marginal rate against a
copy's), plus T at M just below, at and above a multiple of the clusters in flight (a staircase there means the
rounds are in step). The launched kernel and its grid (clusters) are printed per dtype.

Predicted: b ratio (copy / v4) 0.975-0.99, a_v4 - a_copy 4-8 us (bf16) / 5-12 us (fp32); if the b ratio is ~0.96
(what T(2048) gives), the gap is per row and this lead is closed.

`--handout`: v4 built with each SB_HANDOUT (staged_rows.cuh: 0 as shipped; 1 the first S + 1 rows handed out
without atomics and the clusters counted in the counter's own word, no fence; 2 the word alone) at M = 512, 1024 and
2048, alternating with copy_ three times, each build checked at 2048 rows and at small M (fewer rows than clusters,
a row or two a cluster) with the counters back to 0 after every launch. Predicted: SB_HANDOUT 1 takes 1-3 us off a
(the first copies issued ~1-2 us sooner, the last cluster's fence gone), 2 about half of that.

`--small`: one row, then 1-16 rows a cluster (rounds in step). Measured: bf16 T(1) 9.9 us against copy_'s 4.0, and
each round of 30 rows ~3.7 us past T(30) = 12.7: the fixed part is one row's chain (load, sweep, exchange, stores)
past what the last reads overlap, not a handout or launch cost.

`--plans`: v4 with each of its wide-row entries forced (`@dispatch_only dynamic | dynamic_e32 | dynamic_t128`)
against v4 as shipped at M = 30 (one row a cluster: the chain) and 2048, alternating three times. Why: a share of 32
values a thread (e32: clusters of 16 x 256) halves each thread's sweep and stores, so the last row's chain (the
drain) should shorten, if the rows' rate holds (e32 bf16 ran 315 us in session 7, before SB_FAST_EXP and
SB_WARP_XCHG). Measured (docs/runs/2026-12-03-h200-probe_rows31_plans.log, us): bf16 M = 30 v4 12.7, e32 14.0, t128
15.8-15.9; M = 2048 v4 265.5-266.1, e32 295.3-295.9, t128 266.0-266.9 (copy_ 255.8-256.1); fp32 M = 30 v4 (t128
`_full`) 18.4-18.5, dynamic (clusters of 8) 16.6, e32 18.0; M = 2048 v4 523.1-524.7, dynamic 537.7-539.2, e32
530.6-530.9. Wrong: a smaller share lengthens the one-row chain (more blocks in the exchange), and the shortest
chain (fp32 in clusters of 8) has the slowest rows. v4's picks stand.

Usage (GPU machine): PYTHONPATH=src python3 scripts/probe_rows31.py [--dtype=bfloat16] [--once] [--handout | --small |
--plans]"""
import sys

import torch

from kernelab.gpu import Module, compile_file, default_arch, last_launched_kernel
from kernelab.ops import discover, load_variant
from kernelab.ops.base import Case
from kernelab.ops.softmax import op as sop

N = 131072
ROWS = (256, 512, 1024, 1536, 2048)
SMALL = (1, 1, 2, 3, 4, 8, 16)  # `--small`: rows in multiples of the clusters in flight (1: one row, the first entry)


def timed(fn) -> float:
    from kernelab.bench import bench

    return bench(fn, mode="cold", target_rel=0.01, max_wall_s=1.0, name="probe").median_s * 1e6


def fit(points: dict[int, list[float]]) -> tuple[float, float]:
    """Least squares T = a + b M over M >= 512 (`--small`: M > 1), each M's median of its samples."""
    ms = [m for m in points if (m > 1 if "--small" in sys.argv else m >= 512)]
    ts = [sorted(points[m])[len(points[m]) // 2] for m in ms]
    mx, mt = sum(ms) / len(ms), sum(ts) / len(ts)
    b = sum((m - mx) * (t - mt) for m, t in zip(ms, ts)) / sum((m - mx) ** 2 for m in ms)
    return mt - b * mx, b


def main() -> None:
    op = discover()["softmax"]
    v4 = op.variant("v4_dispatch")
    dtypes = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--dtype=")] or ["bfloat16", "float32"]
    rounds_timed = 1 if "--once" in sys.argv else 2
    for dt in dtypes:
        mod = load_variant(op, v4)
        kv4 = mod.kernel(op.kernel_name(dt))
        # The clusters in flight, from the launch's own plan (one row a cluster at a time).
        p = op.plan(v4, N, sop.rows.arch_cc(kv4), dt)
        xs = op.make_inputs(Case((8, N), dt), 0, "cuda")
        op.launch(kv4, v4, Case((8, N), dt), xs, op.make_outputs(Case((8, N), dt), xs))
        torch.cuda.synchronize()
        name = last_launched_kernel()
        grid = sop.persistent_grid(kv4.module.kernel(name), p, 1 << 30) if p.persistent else None
        print(f"{dt}: v4 launches {name}, block {p.block}, cluster {p.cluster}, grid {grid} (clusters in flight)",
              flush=True)
        rows = list(ROWS)
        if "--small" in sys.argv:  # one row, then 1-16 rows a cluster: rounds in step, no tail imbalance
            rows = [1] + [grid * k for k in SMALL[1:]]
        elif grid:  # just below, at and above a multiple of the clusters in flight near 2048
            k = 2048 // grid
            rows += [grid * k - 1, grid * k, grid * k + 1, grid * (k + 1)]
        rows = sorted(set(rows))
        cases = {m: Case((m, N), dt) for m in rows}
        data = {}
        for m, case in cases.items():
            x = op.make_inputs(case, 0, "cuda")
            data[m] = (x, op.make_outputs(case, x), torch.empty_like(x["x"]))
        samples = {"v4": {m: [] for m in rows}, "copy_": {m: [] for m in rows}}
        for rnd in range(rounds_timed):
            for m in rows:
                x, y, out = data[m]
                t_copy = timed(lambda: out.copy_(x["x"]))
                t_v4 = timed(lambda: op.launch(kv4, v4, cases[m], x, y))
                samples["copy_"][m].append(t_copy)
                samples["v4"][m].append(t_v4)
                print(f"{dt} round {rnd} M {m:5d}  copy_ {t_copy:7.1f} us  v4 {t_v4:7.1f} us  "
                      f"ratio {t_copy / t_v4:.4f}  v4 a row {t_v4 / m * 1e3:7.1f} ns", flush=True)
        x, y, _ = data[max(rows)]
        ok = torch.allclose(y["y"].float(), torch.softmax(x["x"].float(), -1),
                            rtol=1e-2 if dt == "bfloat16" else 1e-4, atol=1e-9)
        print(f"{dt}: v4's output at {max(rows)} rows {'ok' if ok else 'WRONG'}", flush=True)
        a_c, b_c = fit(samples["copy_"])
        a_v, b_v = fit(samples["v4"])
        print(f"{dt} fit over M >= 512: copy_ a {a_c:6.2f} us b {b_c * 1e3:7.2f} ns/row; v4 a {a_v:6.2f} us "
              f"b {b_v * 1e3:7.2f} ns/row; marginal ratio (b_copy / b_v4) {b_c / b_v:.4f}; "
              f"a_v4 - a_copy {a_v - a_c:5.2f} us", flush=True)


def handout() -> None:
    op = discover()["softmax"]
    v4 = op.variant("v4_dispatch")
    dtypes = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--dtype=")] or ["bfloat16", "float32"]
    builds = {}
    for h in (0, 1, 2):
        d = {**op.defines(v4), "SB_HANDOUT": h}
        builds[f"h{h}"] = Module(compile_file(v4.path, arch=default_arch(), defines=d), d)
    rows = (512, 1024, 2048)
    for dt in dtypes:
        kern = {b: mod.kernel(op.kernel_name(dt)) for b, mod in builds.items()}
        # Correctness first: small M (fewer rows than clusters; one or two a cluster) and 2048, counters after each.
        for b, k in kern.items():
            bad = []
            for m in (1, 7, 29, 31, 45, 61, 2048):
                case = Case((m, N), dt)
                x = op.make_inputs(case, m, "cuda")
                y = op.make_outputs(case, x)
                for _ in range(2):  # the second launch runs on the counters the first left
                    y["y"].fill_(float("nan"))
                    op.launch(k, v4, case, x, y)
                    torch.cuda.synchronize()
                    ok = torch.allclose(y["y"].float(), torch.softmax(x["x"].float(), -1),
                                        rtol=1e-2 if dt == "bfloat16" else 1e-4, atol=1e-9)
                    work = sop.dynamic_work(x["x"].device)
                    if not ok or work.any().item():
                        bad.append(f"M {m}: {'ok' if ok else 'WRONG'}, counters {work[:4].tolist()}")
            print(f"{dt} {b} ({last_launched_kernel()}): {'all ok' if not bad else '; '.join(bad)}", flush=True)
        data = {}
        for m in rows:
            case = Case((m, N), dt)
            x = op.make_inputs(case, 0, "cuda")
            data[m] = (case, x, op.make_outputs(case, x), torch.empty_like(x["x"]))
        samples = {b: {m: [] for m in rows} for b in ["copy_", *kern]}
        for rnd in range(3):
            for m in rows:
                case, x, y, out = data[m]
                t = {"copy_": timed(lambda: out.copy_(x["x"]))}
                for b, k in kern.items():
                    t[b] = timed(lambda k=k: op.launch(k, v4, case, x, y))
                for b, us in t.items():
                    samples[b][m].append(us)
                print(f"{dt} round {rnd} M {m:5d}  " + "  ".join(f"{b} {us:7.1f}" for b, us in t.items())
                      + "  ratios " + " ".join(f"{b} {t['copy_'] / t[b]:.4f}" for b in kern), flush=True)
        for b in samples:
            a, bb = fit(samples[b])
            med = sorted(samples[b][2048])[1]
            print(f"{dt} {b:6s} fit a {a:6.2f} us b {bb * 1e3:7.2f} ns/row; at 2048 median {med:7.1f} us", flush=True)


def plans() -> None:
    import dataclasses

    op = discover()["softmax"]
    v4 = op.variant("v4_dispatch")
    dtypes = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--dtype=")] or ["bfloat16", "float32"]
    cands = {"v4": v4, **{e: dataclasses.replace(v4, meta={**v4.meta, "dispatch_only": e})
                          for e in ("dynamic", "dynamic_e32", "dynamic_t128")}}
    for dt in dtypes:
        kern = {}
        for c, v in cands.items():
            try:
                kern[c] = load_variant(op, v).kernel(op.kernel_name(dt))
            except Exception as e:  # an entry that cannot take this dtype's rows: say so, time the rest
                print(f"{dt} {c}: not built ({type(e).__name__}: {str(e)[:200]})", flush=True)
        data = {}
        for m in (30, 2048):
            case = Case((m, N), dt)
            x = op.make_inputs(case, 0, "cuda")
            data[m] = (case, x, op.make_outputs(case, x), torch.empty_like(x["x"]))
        for c, k in list(kern.items()):
            case, x, y, _ = data[2048]
            y["y"].fill_(float("nan"))
            try:
                op.launch(k, cands[c], case, x, y)
                torch.cuda.synchronize()
            except Exception as e:
                print(f"{dt} {c}: launch failed ({type(e).__name__}: {str(e)[:200]})", flush=True)
                del kern[c]
                continue
            ok = torch.allclose(y["y"].float(), torch.softmax(x["x"].float(), -1),
                                rtol=1e-2 if dt == "bfloat16" else 1e-4, atol=1e-9)
            print(f"{dt} {c}: launches {last_launched_kernel()}, {'ok' if ok else 'WRONG'}", flush=True)
        for rnd in range(3):
            for m, (case, x, y, out) in data.items():
                t = {"copy_": timed(lambda: out.copy_(x["x"]))}
                for c, k in kern.items():
                    t[c] = timed(lambda k=k, c=c: op.launch(k, cands[c], case, x, y))
                print(f"{dt} round {rnd} M {m:5d}  " + "  ".join(f"{c} {us:7.1f}" for c, us in t.items())
                      + "  x copy " + " ".join(f"{c} {t['copy_'] / t[c]:.4f}" for c in kern), flush=True)


if __name__ == "__main__":
    handout() if "--handout" in sys.argv else plans() if "--plans" in sys.argv else main()
