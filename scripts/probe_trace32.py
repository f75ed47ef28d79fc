"""Session 32 probe: where softmax v4's fixed ~8 us at 2048 x 131072 goes, stamped inside the kernel.

Why: session 31 (scripts/probe_rows31.py) fitted v4's time at M x 131072 as a + b M. The rows run at 0.984x (bf16) /
0.975x (fp32) a copy's rate, and a is 7.85 / 5.75 us above the copy's. Neither the row handout, nor the cluster launch,
nor a smaller share is that fixed part. What is left to look at is the pipeline's fill (every cluster's first S rows
are read before any y is written, and no stage is refilled until its row has been swept) and its drain (after the last
reads, each cluster still sweeps, exchanges and stores its staged rows one after another).

What it does: builds v4_dispatch with SB_TRACE=1 (staged_rows.cuh: every block's thread 0 stamps %globaltimer at
entry, after the barrier init, after its first stages are issued, at exit, and for each row when its stage has landed,
when every warp has read it, and when its stores are issued) and launches the wide-row kernel itself, as op.launch
would, with a `work` buffer large enough for the stamps. Each traced launch follows an L2 flush. Per dtype and M (the
clusters in flight, i.e. one row a cluster; and 2048) it prints:
- the fill: when blocks enter, finish the init, issue the first stages, and when each cluster's first row has landed;
- each row's chain, as medians over the clusters' rows: wait (the previous row issued -> this stage landed: > 0 means
  the data was late), sweep (landed -> read by every warp), exchange and stores (read -> stores issued);
- the drain: the last stage landed, the last stores issued and the last exit, against the span of all stamps;
- rows landed and rows issued per 4 us over the launch (the first and last bins against the steady mean).
It also times the trace build against the shipped one (bench protocol) so the stamps' own cost is known.

Predicted (before the run): the steady interval a cluster ~3.7 us (bf16: 30 clusters, 125.7 ns a row), most rows' wait
~0 (the data is in before the previous row is done: the rows are chain-bound); sweep ~1.5 us and exchange + stores
~1.5-2 us; the first rows land 2-4 us after entry (all S stages of every cluster are in flight together), and the
drain (last stage landed -> last exit) 4-6 us, of which the stores' bandwidth accounts for ~1-2.

`--fill`: v4 built four ways, SB_HANDOUT 0 / 1 (1: the first S + 1 rows handed out with no atomics) x SB_FILL 0 / 1
(staged_rows.cuh; 1: stage 0 issued alone, the others once it has landed), each checked (M = 1 .. 2048, twice, the
counters back to 0), timed at 2048 rows alternating with copy_ three times, and traced once. Predicted (from the
first run's stamps): SB_FILL=1 -1 to -2 us (bf16) / -2 to -3 us (fp32), the first rows landing ~2 us sooner;
SB_HANDOUT=1 the first stages issued ~1.5 us (bf16) / ~3 us (fp32) sooner; both together additive.

Measured (H200, docs/runs/2026-12-03-h200-probe_trace32{,_fill}.log; NOTES session 32): bf16's rows between fill and
drain come at copy_'s rate (8.07 rows/us both); the first rows land ~6 us after entry (bf16; fp32 ~7.4), the stages
of every cluster landing together; steady rows wait 0.2 us for their stage, sweep 1.3 us, exchange and store 2.0; the
last exit comes ~3 us after the last stage lands. `--fill`: the knobs start the reads up to 2 us sooner and the end
does not move (bf16 264.2 / 264.2 / 265.3 us against 263.8 shipped; fp32 531.0 / 520.8 / 543.4 against 521.8).

Usage (GPU machine): PYTHONPATH=src python3 scripts/probe_trace32.py [--dtype=bfloat16] [--launches=3] [--fill]
"""
import statistics
import sys

import numpy as np
import torch

from kernelab.bench.flush import L2Flusher
from kernelab.gpu import Module, compile_file, default_arch
from kernelab.ops import discover, load_variant
from kernelab.ops.base import Case
from kernelab.ops.softmax.trace import HEAD, ROWS, TracedWide

N = 131072


def timed(fn) -> float:
    from kernelab.bench import bench

    return bench(fn, mode="cold", target_rel=0.01, max_wall_s=1.0, name="probe").median_s * 1e6


def med(v):
    return statistics.median(v) if v else float("nan")


def describe(rec: np.ndarray, C: int, span_event_us: float) -> list[str]:
    """The summary of one traced launch; rec is [blocks, STRIDE] int64 (ns)."""
    t0 = rec[:, 0].min()
    us = lambda v: (v - t0) / 1e3  # noqa: E731
    clusters = rec.shape[0] // C
    out = []
    ent, ini, iss, ext = (us(rec[:, w]) for w in range(4))
    out.append(f"  fill: entry max {ent.max():5.2f} us, init done med {med(list(ini)):5.2f} max {ini.max():5.2f}, "
               f"first stages issued med {med(list(iss)):5.2f} max {iss.max():5.2f}")
    per_cluster = rec[:, 5].reshape(clusters, C)
    if (per_cluster != per_cluster[:, :1]).any():
        out.append("  WARNING: blocks of one cluster disagree on their row count")
    land, read, done = [], [], []  # per cluster: list over rows of the cluster's latest stamp
    for q in range(clusters):
        b = rec[q * C:(q + 1) * C]
        n = int(min(b[:, 5].min(), ROWS))
        land.append([us(b[:, HEAD + 4 * i].max()) for i in range(n)])
        read.append([us(b[:, HEAD + 4 * i + 1].max()) for i in range(n)])
        done.append([us(b[:, HEAD + 4 * i + 2].max()) for i in range(n)])
    firsts = [lv[0] for lv in land if lv]
    out.append(f"  first row landed: min {min(firsts):5.2f} med {med(firsts):5.2f} max {max(firsts):5.2f} us")
    waits, sweeps, tails, ivals = [], [], [], []
    for lv, rv, dv in zip(land, read, done):
        for i in range(len(lv)):
            sweeps.append(rv[i] - lv[i])
            tails.append(dv[i] - rv[i])
            if i:
                waits.append(lv[i] - dv[i - 1])
                ivals.append(dv[i] - dv[i - 1])
    late = sum(w > 0.2 for w in waits)
    out.append(f"  chain (medians over cluster rows): wait {med(waits):5.2f} us ({late} of {len(waits)} > 0.2 us), "
               f"sweep {med(sweeps):5.2f}, exchange + stores issued {med(tails):5.2f}; interval {med(ivals):5.2f} us")
    if any(len(lv) > 1 for lv in land):
        lw = [lv[-1] - dv[-2] for lv, dv in zip(land, done) if len(lv) > 1]
        ls = [rv[-1] - lv[-1] for lv, rv in zip(land, read) if lv]
        lt = [dv[-1] - rv[-1] for rv, dv in zip(read, done) if rv]
        out.append(f"  last rows (medians): wait {med(lw):5.2f}, sweep {med(ls):5.2f}, "
                   f"exchange + stores {med(lt):5.2f} us")
    all_land = [x for lv in land for x in lv]
    all_done = [x for dv in done for x in dv]
    out.append(f"  drain: last landed {max(all_land):7.2f}, last issued {max(all_done):7.2f}, "
               f"last exit {ext.max():7.2f} (exits from {ext.min():7.2f}); "
               f"stamps span {ext.max():7.2f} us, events {span_event_us:7.2f} us")
    diffs = np.diff(np.sort(rec[:, :4].ravel()))
    out.append(f"  globaltimer step: smallest nonzero difference {diffs[diffs > 0].min()} ns")
    if len(all_land) > 60:
        bins = np.arange(0, ext.max() + 4, 4.0)
        hl, _ = np.histogram(all_land, bins)
        hd, _ = np.histogram(all_done, bins)
        steady = slice(len(bins) // 4, 3 * len(bins) // 4)
        out.append(f"  per 4 us: landed {' '.join(map(str, hl[:5]))} .. {' '.join(map(str, hl[-5:]))} "
                   f"(steady mean {hl[steady].mean():5.2f}); issued {' '.join(map(str, hd[:5]))} .. "
                   f"{' '.join(map(str, hd[-5:]))} (steady mean {hd[steady].mean():5.2f})")
    return out


def traced_launch(w: TracedWide, flusher, x, y, m: int) -> tuple[np.ndarray, float]:
    """One launch of w after an L2 flush: its records [blocks, STRIDE] and its event time in us."""
    w.reset()
    flusher.flush()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    w(x, y, m)
    e1.record()
    torch.cuda.synchronize()
    return w.records(m), e0.elapsed_time(e1) * 1e3


def softmax_ok(x, y, dt: str) -> bool:
    return torch.allclose(y.float(), torch.softmax(x.float(), -1), rtol=1e-2 if dt == "bfloat16" else 1e-4, atol=1e-9)


def fill() -> None:
    """`--fill`: v4 built with SB_HANDOUT 0 / 1 and SB_FILL 0 / 1 (four builds), each checked, timed at 2048 rows
    alternating with copy_ three times, and one traced launch of each (the same build with SB_TRACE=1)."""
    op = discover()["softmax"]
    v4 = op.variant("v4_dispatch")
    dtypes = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--dtype=")] or ["bfloat16", "float32"]
    flusher = L2Flusher.for_device(torch.cuda.current_device(), "memset_read")
    combos = {"shipped": (0, 0), "handout1": (1, 0), "fill1": (0, 1), "both": (1, 1)}
    mods = {}
    for c, (h, f) in combos.items():
        for t in (0, 1):
            d = {**op.defines(v4), "SB_HANDOUT": h, "SB_FILL": f, "SB_TRACE": t}
            mods[c, t] = Module(compile_file(v4.path, arch=default_arch(), defines=d), d)
    for dt in dtypes:
        runs = {c: TracedWide(op, v4, mods[c, 0], dt) for c in combos}
        traces = {c: TracedWide(op, v4, mods[c, 1], dt) for c in combos}
        print(f"{dt}: {runs['shipped'].name}, grid {runs['shipped'].grid} clusters", flush=True)
        for c, w in runs.items():  # correctness: fewer rows than clusters, one or two a cluster, 2048; twice each
            bad = []
            for m in (1, 7, 29, 31, 45, 2048):
                case = Case((m, N), dt)
                x = op.make_inputs(case, m, "cuda")["x"]
                y = torch.full_like(x, float("nan"))
                for _ in range(2):
                    w(x, y, m)
                    torch.cuda.synchronize()
                    if not softmax_ok(x, y, dt) or w.work[:2].any().item():
                        verdict = "ok" if softmax_ok(x, y, dt) else "WRONG"
                        bad.append(f"M {m}: {verdict}, counters {w.work[:2].tolist()}")
            print(f"{dt} {c}: {'all ok' if not bad else '; '.join(bad)}", flush=True)
        case = Case((2048, N), dt)
        x = op.make_inputs(case, 0, "cuda")["x"]
        y, out = torch.empty_like(x), torch.empty_like(x)
        samples = {c: [] for c in ["copy_", *runs]}
        for rnd in range(3):
            t = {"copy_": timed(lambda: out.copy_(x))}
            for c, w in runs.items():
                t[c] = timed(lambda w=w: w(x, y, 2048))
            for c, us in t.items():
                samples[c].append(us)
            print(f"{dt} round {rnd}  " + "  ".join(f"{c} {us:6.1f}" for c, us in t.items())
                  + "  x copy " + " ".join(f"{c} {t['copy_'] / t[c]:.4f}" for c in runs), flush=True)
        print(f"{dt} medians: " + "  ".join(f"{c} {sorted(v)[1]:6.1f}" for c, v in samples.items()), flush=True)
        for c, w in traces.items():
            rec, ev = traced_launch(w, flusher, x, y, 2048)
            print(f"{dt} {c} traced at 2048: output {'ok' if softmax_ok(x, y, dt) else 'WRONG'}", flush=True)
            for line in describe(rec, w.C, ev):
                print(line, flush=True)


def main() -> None:
    """The shipped v4 with SB_TRACE=1: its cost against the shipped build, then traced launches at one row a
    cluster and at 2048 rows."""
    op = discover()["softmax"]
    v4 = op.variant("v4_dispatch")
    dtypes = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--dtype=")] or ["bfloat16", "float32"]
    launches = int(next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--launches=")), 3))
    d = {**op.defines(v4), "SB_TRACE": 1}
    traced = Module(compile_file(v4.path, arch=default_arch(), defines=d), d)
    shipped = load_variant(op, v4)
    flusher = L2Flusher.for_device(torch.cuda.current_device(), "memset_read")
    for dt in dtypes:
        w = TracedWide(op, v4, traced, dt)
        print(f"{dt}: {w.name}, block {w.p.block}, cluster {w.C}, grid {w.grid} clusters, ring {w.p.smem} B",
              flush=True)
        case = Case((2048, N), dt)
        x = op.make_inputs(case, 0, "cuda")
        y = op.make_outputs(case, x)
        kship = shipped.kernel(op.kernel_name(dt))
        t_ship = timed(lambda: op.launch(kship, v4, case, x, y))
        t_trace = timed(lambda: w(x["x"], y["y"], 2048))
        print(f"{dt}: shipped {t_ship:7.1f} us, trace build {t_trace:7.1f} us (bench, cold L2)", flush=True)
        for m in (w.grid, 2048):
            xm = op.make_inputs(Case((m, N), dt), 1, "cuda")["x"]
            ym = torch.empty_like(xm)
            for rep in range(launches):
                rec, ev = traced_launch(w, flusher, xm, ym, m)
                print(f"{dt} M {m} launch {rep}: output {'ok' if softmax_ok(xm, ym, dt) else 'WRONG'}, counters "
                      f"{w.work[:4].tolist()}, rows stamped {int(rec[:, 5].sum()) // w.C}", flush=True)
                for line in describe(rec, w.C, ev):
                    print(line, flush=True)


if __name__ == "__main__":
    fill() if "--fill" in sys.argv else main()
