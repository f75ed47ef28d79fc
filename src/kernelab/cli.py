"""kernelab: compile, check, time and explain CUDA kernels.

A thin command line over suite, bench, check and analysis. Every command takes --json and
then prints one JSON document on stdout instead of tables.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__, pretty_exceptions_enable=False)
lab_app = typer.Typer(no_args_is_help=True, help="Experiments that measure the seeds' claims on your GPU.")
app.add_typer(lab_app, name="lab")


def _console():
    from rich.console import Console

    return Console(stderr=False, highlight=False)


def _emit_json(obj) -> None:
    from .report.results import _json_default

    sys.stdout.write(json.dumps(obj, indent=1, default=_json_default) + "\n")


def _fail(message: str, code: int = 2) -> None:
    from rich.console import Console

    Console(stderr=True).print(f"[red]error:[/red] {message}")
    raise typer.Exit(code)


# ----------------------------------------------------------------------------------- run

@app.command()
def run(
    op: Optional[List[str]] = typer.Option(None, "--op", help="Op name or glob; repeatable."),
    variant: Optional[List[str]] = typer.Option(None, "--variant", help="Variant (v2, v2_persistent, glob); 'peers' for peers only."),
    dtype: Optional[List[str]] = typer.Option(None, "--dtype", help="float32, bfloat16, ...; repeatable."),
    shape: Optional[List[str]] = typer.Option(None, "--shape", help="Substring or glob of a case label, e.g. 4096x4096."),
    quick: bool = typer.Option(False, "--quick", help="One or two bench shapes per op."),
    as_json: bool = typer.Option(False, "--json", help="Print the results JSON instead of tables."),
    ops_dir: Optional[Path] = typer.Option(None, "--ops-dir", help="Run your own op folders (the op contract)."),
    results_dir: Path = typer.Option(Path("results"), "--results-dir", help="Where results/<device>-<time>.json goes."),
    peers: bool = typer.Option(True, "--peers/--no-peers", help="Time torch eager / torch.compile / cuBLAS too."),
    isolate: bool = typer.Option(True, "--isolate/--no-isolate", help="Run candidates in worker processes (crash/hang containment)."),
    device: str = typer.Option("H200", "--device", help="Without a GPU: the device to predict for."),
) -> None:
    """The main job: every op x variant x shape through check, bench and analysis, beside the peers."""
    from .gpu import has_gpu
    from .suite import Selection, make_plan, run_suite

    sel = Selection(ops=op, variants=variant, dtypes=dtype, shapes=shape, quick=quick,
                    ops_dir=str(ops_dir) if ops_dir else None, peers=peers, device=device)
    try:
        plans = make_plan(sel)
    except (KeyError, FileNotFoundError, TypeError) as e:
        _fail(str(e))
    if not plans:
        _fail("nothing selected: check --op/--variant/--dtype/--shape")
    con = _console()
    gpu = has_gpu()
    if not gpu and not as_json:
        con.print(f"[yellow]No GPU here:[/yellow] compiling every kernel and predicting floors for {device}. "
                  "Timing needs a GPU.")
    total = sum(len(p.variants) for p in plans) if not gpu else sum(p.n_candidates for p in plans)
    results = _with_progress(lambda cb: run_suite(sel, results_dir=None, progress=cb, isolate=isolate),
                             total, enabled=not as_json)
    path = results.save(results_dir)
    from .report import write_reports

    written = write_reports(results, path)
    if as_json:
        _emit_json(results.to_dict())
        return
    from .report.tables import rich_table

    con.print(rich_table(results))
    for note in results.notes:
        con.print(f"[yellow]{note}[/yellow]")
    failed = [r for r in results.rows if r.status in ("failed", "crash", "hang", "leak", "compile_error")]
    con.print(f"results: {path}  (+ {', '.join(p.suffix for p in written)})  wall {results.wall_s:.0f} s"
              + (f", peak GPU memory {results.peak_gpu_memory_bytes / 2**30:.2f} GiB" if results.peak_gpu_memory_bytes else ""))
    if failed:
        con.print(f"[red]{len(failed)} candidate(s) failed[/red]: " + ", ".join(f"{r.op}/{r.name} ({r.reason})" for r in failed[:8]))


def _with_progress(work, total: int, enabled: bool):
    if not enabled:
        return work(None)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  transient=True) as prog:
        task = prog.add_task("starting", total=max(total, 1))

        def cb(msg):
            if msg is None:
                prog.advance(task)
            else:
                prog.update(task, description=str(msg)[:70])
                if "/" in str(msg) and " " not in str(msg):  # static mode: one message per variant
                    prog.advance(task)
        return work(cb)


# ------------------------------------------------------------------------------- inspect

@app.command()
def inspect(
    file: Optional[Path] = typer.Argument(None, help="A .cu file to inspect."),
    op: Optional[str] = typer.Option(None, "--op", help="Inspect every variant of a library op."),
    all_: bool = typer.Option(False, "--all", help="Every library kernel."),
    arch: Optional[str] = typer.Option(None, "--arch", help="Compile target (default: this GPU, else sm_90)."),
    threads: Optional[int] = typer.Option(None, "--threads", help="Block size for occupancy (default: the variant's @block)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Resources, occupancy, SASS instruction mix and arch compatibility, with no GPU needed."""
    from .inspect import inspect_file, inspect_ops

    if file is None and not op and not all_:
        _fail("give a .cu file, --op NAME or --all")
    try:
        reports = inspect_file(file, arch=arch, threads=threads) if file else inspect_ops(None if all_ else op, arch=arch, threads=threads)
    except Exception as e:
        from .gpu import KernelabError

        if isinstance(e, (KernelabError, KeyError, FileNotFoundError)):
            _fail(str(e))
        raise
    if as_json:
        _emit_json([r.to_dict() for r in reports])
        return
    from .inspect import render

    render(_console(), reports)


# ----------------------------------------------------------------------------- occupancy

@app.command()
def occupancy(
    cc: str = typer.Option("9.0", "--cc", help="Compute capability, e.g. 9.0."),
    threads: int = typer.Option(..., "--threads", help="Threads per block."),
    regs: int = typer.Option(..., "--regs", help="Registers per thread."),
    smem: int = typer.Option(0, "--smem", help="Shared memory per block, bytes (static + dynamic)."),
    what_if: bool = typer.Option(False, "--what-if", help="Also sweep block size, registers and shared memory."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """The CUDA occupancy calculator: blocks per SM, occupancy and the binding limit."""
    from . import analysis

    try:
        major, minor = (int(x) for x in cc.split("."))
        occ = analysis.occupancy((major, minor), threads, regs, smem)
    except (ValueError, KeyError) as e:
        _fail(str(e))
    table = analysis.what_if((major, minor), threads, regs, smem) if what_if else None
    if as_json:
        d = occ.to_dict()
        if table is not None:
            d["what_if"] = [t.to_dict() if hasattr(t, "to_dict") else t for t in table]
        _emit_json(d)
        return
    con = _console()
    con.print(f"cc {cc}, {threads} threads, {regs} registers, {smem} B shared memory per block:")
    con.print(f"  {occ.blocks_per_sm} blocks/SM, {occ.active_warps} warps, occupancy {occ.occupancy * 100:.1f}%, "
              f"limited by {occ.limiter}")
    if table is not None:
        from rich.table import Table

        t = Table("threads", "regs", "smem", "blocks/SM", "occupancy", "limiter")
        for row in table:
            r = row.to_dict() if hasattr(row, "to_dict") else row
            t.add_row(str(r["threads"]), str(r["regs"]), str(r["smem"]), str(r["blocks_per_sm"]),
                      f"{r['occupancy'] * 100:.0f}%", r["limiter"])
        con.print(t)


# ------------------------------------------------------------------------------ ceilings

@app.command()
def ceilings(
    refresh: bool = typer.Option(False, "--refresh", help="Measure again even if cached."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Measure the device's ceilings (copy, read, write, cuBLAS GEMM per dtype); cached per device and driver."""
    from . import analysis
    from .gpu import has_gpu

    if not has_gpu():
        spec = analysis.spec_for(None)
        msg = "no GPU: ceilings must be measured on one; nominal figures for the default device follow"
        if as_json:
            _emit_json({"error": msg, "nominal": spec.to_dict()})
            return
        _console().print(f"[yellow]{msg}[/yellow]")
        _console().print(spec.to_dict())
        return
    c = analysis.measured_ceilings(refresh=refresh, quick=False)
    if as_json:
        _emit_json(c)
        return
    from rich.table import Table

    t = Table("ceiling", "value")
    for k, v in c.items():
        t.add_row(k, f"{v:.4g}" if isinstance(v, float) else str(v))
    _console().print(t)


# ------------------------------------------------------------------------------- compare

@app.command()
def compare(
    a: Path = typer.Argument(..., help="Baseline results JSON."),
    b: Path = typer.Argument(..., help="New results JSON."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Row by row: faster, slower, same or unclear, with the noise of both runs taken into account."""
    from .report.compare import compare_results
    from .report.results import load

    try:
        ra, rb = load(a), load(b)
    except (FileNotFoundError, ValueError) as e:
        _fail(str(e))
    rows = compare_results(ra, rb)
    if as_json:
        _emit_json(rows)
        return
    from rich.table import Table

    t = Table("op", "name", "case", "A µs", "B µs", "B/A", "verdict")
    colors = {"faster": "green", "slower": "red", "same": "", "unclear": "yellow"}
    for r in rows:
        t.add_row(r["op"], r["name"], r["case"], _us(r.get("a_s")), _us(r.get("b_s")),
                  f"{r['ratio']:.3f}" if r.get("ratio") else "", f"[{colors.get(r['verdict'], '')}]{r['verdict']}[/]"
                  if colors.get(r["verdict"]) else r["verdict"])
    _console().print(t)


def _us(x) -> str:
    return f"{x * 1e6:.1f}" if x else ""


# -------------------------------------------------------------------------------- doctor

@app.command()
def doctor(as_json: bool = typer.Option(False, "--json")) -> None:
    """The CUDA environment, diagnosed: GPU, driver vs runtime vs compilers, libraries, clocks."""
    from .doctor import diagnose, exit_code
    from .gpu.environment import probe

    env = probe()
    findings = diagnose(env)
    if as_json:
        _emit_json({"environment": env.to_dict(), "findings": [f.to_dict() for f in findings]})
        raise typer.Exit(exit_code(findings))
    con = _console()
    con.print(f"python {env.python} on {env.platform}; torch {env.torch} (CUDA {env.torch_cuda}); "
              f"cuda-core {env.cuda_core}; NVRTC {env.nvrtc}; nvcc {env.nvcc or 'none'}")
    marks = {"ok": "[green]ok   [/green]", "info": "[blue]info [/blue]", "warn": "[yellow]warn [/yellow]",
             "error": "[red]error[/red]"}
    for f in findings:
        con.print(f"{marks[f.level]} {f.topic:10s} {f.message}" + (f"\n      fix: {f.fix}" if f.fix and f.level != "ok" else ""))
    raise typer.Exit(exit_code(findings))


# -------------------------------------------------------------------------------- report

@app.command()
def report(
    results_file: Path = typer.Argument(..., help="A results JSON written by `kernelab run`."),
    benchmarks: Optional[Path] = typer.Option(None, "--benchmarks", help="Also regenerate this BENCHMARKS.md section."),
) -> None:
    """Regenerate Markdown, CSV and plots (and BENCHMARKS.md between its markers) from a results file."""
    from .report import write_reports
    from .report.benchmarks import update_benchmarks_md
    from .report.results import load

    try:
        results = load(results_file)
    except (FileNotFoundError, ValueError) as e:
        _fail(str(e))
    written = write_reports(results, results_file)
    if benchmarks:
        written.append(update_benchmarks_md(benchmarks, results, str(results_file)))
    for p in written:
        print(p)


# ------------------------------------------------------------------------------ sanitize

@app.command()
def sanitize(
    op: Optional[List[str]] = typer.Option(None, "--op", help="Ops to run (default: all)."),
    tool: Optional[List[str]] = typer.Option(None, "--tool", help="memcheck, racecheck, initcheck, synccheck."),
    wrong: bool = typer.Option(False, "--wrong", help="Also run the known-wrong kernels (their findings are expected)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Run compute-sanitizer over the library kernels."""
    from .check.sanitize import run_sanitizer

    report = run_sanitizer(ops=op, tools=tool, include_wrong=wrong)
    data = report.to_dict() if hasattr(report, "to_dict") else report
    if as_json:
        _emit_json(data)
    else:
        from .check.sanitize import render

        render(_console(), report)
    raise typer.Exit(0 if getattr(report, "clean", True) else 1)


# ------------------------------------------------------------------------------------- lab

@lab_app.command("list")
def lab_list(as_json: bool = typer.Option(False, "--json")) -> None:
    """The experiments, with the claim each one tests."""
    from .lab import load_all

    exps = load_all()
    if as_json:
        _emit_json([{"name": e.name, "title": e.title, "claim": e.claim, "source": e.source} for e in exps.values()])
        return
    from rich.table import Table

    t = Table("name", "source", "claim")
    for e in exps.values():
        t.add_row(e.name, e.source, e.claim)
    _console().print(t)


@lab_app.command("run")
def lab_run(
    names: Optional[List[str]] = typer.Argument(None, help="Experiment names (see `kernelab lab list`)."),
    all_: bool = typer.Option(False, "--all", help="Every experiment."),
    quick: bool = typer.Option(False, "--quick", help="Smaller sizes and fewer samples."),
    as_json: bool = typer.Option(False, "--json"),
    results_dir: Path = typer.Option(Path("results/lab"), "--results-dir"),
) -> None:
    """Run experiments: the claim, what was measured (live), and a verdict."""
    from .lab import load_all, save

    exps = load_all()
    chosen = list(exps) if all_ else (names or [])
    if not chosen:
        _fail("name an experiment or pass --all (see `kernelab lab list`)")
    unknown = [n for n in chosen if n not in exps]
    if unknown:
        _fail(f"unknown experiment(s) {', '.join(unknown)}; known: {', '.join(exps)}")
    con = _console()
    outputs = []
    for name in chosen:
        e = exps[name]
        if not as_json:
            con.rule(f"{e.name}: {e.title}")
            con.print(f"[bold]claim[/bold] ({e.source}): {e.claim}")
        log = (lambda m: None) if as_json else (lambda m: con.print(f"  {m}"))
        try:
            result = e.run(quick=quick, log=log)
        except Exception as ex:  # one broken experiment must not stop the others
            result = {"name": name, "claim": e.claim, "source": e.source,
                      "verdict": {"status": "error", "summary": f"{type(ex).__name__}: {ex}"}}
        else:
            result["path"] = str(save(result, results_dir))
        outputs.append(result)
        if not as_json:
            v = result["verdict"]
            color = {"holds": "green", "differs": "yellow"}.get(v["status"], "red")
            con.print(f"[bold {color}]verdict: {v['summary']}[/bold {color}]")
    if as_json:
        _emit_json(outputs)
        return
    from rich.table import Table

    t = Table("experiment", "source", "verdict")
    for r in outputs:
        t.add_row(r["name"], r.get("source", ""), r["verdict"]["summary"])
    con.print(t)


# ------------------------------------------------------------------------------------ misc

@app.command()
def version() -> None:
    """Print kernelab's version."""
    from . import __version__

    print(__version__)


@app.command("cache-clear")
def cache_clear() -> None:
    """Delete every cached cubin."""
    from .gpu import cache

    print(f"removed {cache.clear()} files from {cache.cache_dir()}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
