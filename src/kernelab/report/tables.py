"""Tables from results: CSV, Markdown, and the terminal table `kernelab run` prints.

Every figure here is read from a Results object (and so from a results JSON file); nothing
is computed from constants.
"""

from __future__ import annotations

import csv
import io

from .results import Results, Row

COLUMNS = ["op", "name", "kind", "case", "status", "time_us", "rate", "pct_ceiling", "x_best_peer",
           "registers", "occupancy", "verdict"]


def _fmt_time(row: Row) -> str:
    t = row.metrics.get("time_s")
    if t is None:
        floor = row.metrics.get("floor_s")
        return f"(floor {floor * 1e6:.1f})" if floor else ""
    return f"{t * 1e6:.1f}"


def _rate(row: Row) -> str:
    m = row.metrics
    if m.get("tflops") is not None and row.work.get("flops", 0) and m.get("bound") == "compute":
        return f"{m['tflops']:.1f} TFLOP/s"
    if m.get("gbps") is not None:
        return f"{m['gbps']:.0f} GB/s"
    if m.get("tflops") is not None:
        return f"{m['tflops']:.1f} TFLOP/s"
    return ""


def _pct(x) -> str:
    return f"{x:.0f}%" if x is not None else ""


def _ratio(x) -> str:
    return f"{x:.2f}x" if x is not None else ""


def _registers(row: Row) -> str:
    regs = sorted({r.get("registers") for r in row.resources.values() if r.get("registers") is not None})
    return "/".join(str(r) for r in regs)


def _occupancy(row: Row) -> str:
    occ = row.occupancy.get("occupancy")
    return f"{occ * 100:.0f}%" if occ is not None else ""


def verdict(row: Row) -> str:
    if row.status != "ok":
        return f"{row.status}: {row.reason}" if row.reason else row.status
    notes = []
    if row.metrics.get("launch_bound"):
        notes.append("launch-bound (graph)")
    if row.metrics.get("throttled"):
        notes.append("throttled samples")
    from ..head_to_head import format_paired  # here: head_to_head imports report.results

    for rival, paired in (row.metrics.get("paired") or {}).items():
        notes.append(f"paired vs {rival}: {format_paired(paired)}")
    return "ok" + (f" ({', '.join(notes)})" if notes else "")


def row_cells(row: Row) -> list[str]:
    return [row.op, row.name, row.kind, row.case.get("label", ""), row.status, _fmt_time(row), _rate(row),
            _pct(row.metrics.get("pct_ceiling")), _ratio(row.metrics.get("x_best_peer")), _registers(row),
            _occupancy(row), verdict(row)]


def to_csv(results: Results) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["op", "name", "kind", "case", "dtype", "status", "reason", "time_s", "median_s", "p10_s", "p90_s",
                "stdrel", "n", "gbps", "tflops", "pct_ceiling", "pct_nominal", "floor_s", "x_best_peer",
                "best_peer", "mode", "registers", "occupancy", "binary_sha256"])
    for r in results.rows:
        st = (r.measurement or {}).get("stats", {})
        w.writerow([r.op, r.name, r.kind, r.case.get("label", ""), r.case.get("dtype", ""), r.status, r.reason or "",
                    r.metrics.get("time_s"), st.get("median"), st.get("p10"), st.get("p90"), st.get("stdrel"),
                    st.get("n"), r.metrics.get("gbps"), r.metrics.get("tflops"), r.metrics.get("pct_ceiling"),
                    r.metrics.get("pct_nominal"), r.metrics.get("floor_s"), r.metrics.get("x_best_peer"),
                    r.metrics.get("best_peer"), (r.measurement or {}).get("mode"), _registers(r),
                    r.occupancy.get("occupancy"), r.binary_sha256 or ""])
    return buf.getvalue()


def header_lines(results: Results) -> list[str]:
    dev = results.device
    env = results.environment
    git = results.git or {}
    commit = (git.get("commit") or "unknown")[:10] + (" (dirty)" if git.get("dirty") else "")
    lines = [
        f"- device: {dev.get('name', '?')} ({dev.get('arch', '')}, {dev.get('sm_count', '?')} SMs)"
        + ("" if results.mode == "gpu" else " — static analysis only, no GPU timing"),
        f"- driver: {env.get('driver', 'n/a')}, torch {env.get('torch', '?')}, CUDA runtime {env.get('cuda_runtime', '?')}, "
        f"compiler {results.compiler.get('version', '?')}",
        f"- date: {results.created}, commit {commit}",
    ]
    if results.wall_s is not None:
        lines.append(f"- wall time: {results.wall_s:.0f} s" + (
            f", peak GPU memory {results.peak_gpu_memory_bytes / 2**30:.2f} GiB" if results.peak_gpu_memory_bytes else ""))
    cp = (results.ceilings or {}).get("copy_bytes_per_s")
    if cp:
        lines.append(f"- measured copy ceiling in this run: {cp / 1e12:.2f} TB/s")
    return lines


def to_markdown(results: Results, title: str | None = "kernelab results") -> str:
    out = []
    if title:
        out.append(f"## {title}\n")
    out += header_lines(results)
    out.append("")
    heads = ["op", "variant / peer", "kind", "case", "status", "time (us)", "rate", "% ceiling", "x best peer",
             "regs", "occupancy", "verdict"]
    out.append("| " + " | ".join(heads) + " |")
    out.append("|" + "---|" * len(heads))
    for r in results.rows:
        out.append("| " + " | ".join(c.replace("|", "/") for c in row_cells(r)) + " |")
    return "\n".join(out) + "\n"


_DT = {"float32": "f32", "bfloat16": "bf16", "float16": "f16", "float64": "f64"}


def short_label(case: dict) -> str:
    """'268435456 float32' -> '2^28 f32': case labels that fit a terminal column."""
    def dim(n: int) -> str:
        return f"2^{n.bit_length() - 1}" if n >= 1024 and n & (n - 1) == 0 else str(n)

    shape = case.get("shape")
    if shape is None:
        return case.get("label", "")
    text = "x".join(dim(int(d)) for d in shape) or "scalar"
    text += " " + _DT.get(case.get("dtype", ""), case.get("dtype", ""))
    extra = [f"+{case['offset']}" if case.get("offset") else ""]
    extra += [k if v is True else f"{k}={v}" for k, v in (case.get("params") or {}).items() if v is not False]
    extra = [e for e in extra if e]
    return text + (f" ({', '.join(extra)})" if extra else "")


def rich_table(results: Results):
    """The table `kernelab run` prints: timed rows with a GPU, kernels and floors without."""
    from rich.table import Table

    if results.mode == "static":
        return _static_tables(results)
    t = Table(title=f"kernelab — {results.device.get('name', '?')}", show_lines=False, pad_edge=False)
    for h, justify in (("op", "left"), ("variant/peer", "left"), ("case", "left"), ("µs", "right"),
                       ("rate", "right"), ("%ceil", "right"), ("×peer", "right"), ("regs", "right"),
                       ("occ", "right"), ("verdict", "left")):
        t.add_column(h, justify=justify, no_wrap=h not in ("verdict", "case"))
    for r in results.rows:
        c = row_cells(r)
        style = None if r.status == "ok" else ("yellow" if r.status == "skipped" else "red")
        name = c[1] if r.kind == "variant" else f"[dim]{c[1]}[/dim]"
        t.add_row(c[0], name, short_label(r.case), c[5], c[6], c[7], c[8], c[9], c[10], c[11], style=style)
    return t


def _static_tables(results: Results):
    """No GPU: one row per kernel (resources, occupancy) and one per case (the predicted floor)."""
    from rich.console import Group
    from rich.table import Table

    k = Table(title=f"kernels, compiled for {results.device.get('arch', '?')} "
                    f"(occupancy on {results.device.get('name', '?')})", pad_edge=False)
    for h in ("op", "variant", "regs", "spills", "smem B", "occupancy", "limited by"):
        k.add_column(h, justify="left" if h in ("op", "variant", "limited by") else "right")
    seen = set()
    floors: dict = {}
    for r in results.rows:
        if r.status == "compile_error":
            k.add_row(r.op, r.name, "", "", "", "", "[red]compile error[/red]")
            continue
        if (r.op, r.name) not in seen:
            seen.add((r.op, r.name))
            res = list(r.resources.values())
            regs = "/".join(str(x) for x in sorted({x.get("registers") for x in res}))
            spills = sum(x.get("spill_stores", 0) + x.get("spill_loads", 0) for x in res)
            smem = max((x.get("shared_static", 0) for x in res), default=0)
            occ = r.occupancy.get("occupancy")
            k.add_row(r.op, r.name, regs, str(spills), str(smem), f"{occ * 100:.0f}%" if occ is not None else "",
                      r.occupancy.get("limiter", "") or "")
        key = (r.op, r.case.get("label"))
        if r.metrics.get("floor_s") and key not in floors:
            floors[key] = r
    f = Table(title=f"predicted floors on {results.device.get('name', '?')}: max(bytes / bandwidth, FLOPs / peak)",
              pad_edge=False)
    for h in ("op", "case", "MB moved", "GFLOP", "floor µs"):
        f.add_column(h, justify="left" if h in ("op", "case") else "right")
    for (op, _), r in floors.items():
        f.add_row(op, short_label(r.case), f"{r.work.get('bytes', 0) / 1e6:.1f}", f"{r.work.get('flops', 0) / 1e9:.2f}",
                  f"{r.metrics['floor_s'] * 1e6:.1f}")
    return Group(k, f)
