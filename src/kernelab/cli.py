"""kernelab: compile, check, time and explain CUDA kernels.

A thin command line over suite, bench, check and analysis. Every command takes --json and
then prints one JSON document on stdout instead of tables.
"""

from __future__ import annotations

import json
import re
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


def _kernel_blocks(compiled, variant, default: int) -> dict[str, int]:
    """Threads a block for each kernel of a variant's module: an instance named `*_t<N>_<dtype>` (rmsnorm's
    block_t256, softmax's online_t512) its N; a kernel named `*_bf16` / `*_f32` that dtype's block from the
    header (Variant.block_for: `@block` or `@threads`, `@block_bf16` / `@block_f32` where it has them); any
    other the header's `@block` / `@threads`, or `default`."""
    from .check.inputs import DTYPES

    by_suffix = {f"_{sfx}": dtype for dtype, sfx in DTYPES.items()}
    plain = variant.meta_int("block", variant.meta_int("threads", default))
    out = {}
    for name in compiled.kernel_names():
        own = re.search(r"_t(\d+)_(?:" + "|".join(DTYPES.values()) + r")$", name)
        dtype = next((dt for sfx, dt in by_suffix.items() if name.endswith(sfx)), None)
        if own:
            out[name] = int(own.group(1))
        elif dtype:
            out[name] = variant.block_for(dtype) or default
        else:
            out[name] = plain
    return out


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
    head_to_head: bool = typer.Option(True, "--head-to-head/--no-head-to-head",
                                      help="Re-time close calls (best variant vs peer within 12%) and bench-size "
                                           "memory-bound cases vs a same-bytes copy, interleaved and paired."),
) -> None:
    """The main job: every op x variant x shape through check, bench and analysis, beside the peers."""
    from .gpu import has_gpu
    from .suite import Selection, make_plan, run_suite

    sel = Selection(ops=op, variants=variant, dtypes=dtype, shapes=shape, quick=quick,
                    ops_dir=str(ops_dir) if ops_dir else None, peers=peers, device=device,
                    head_to_head=head_to_head)
    try:
        plans = make_plan(sel)
    except (KeyError, FileNotFoundError, TypeError) as e:
        _fail(str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e))  # str(KeyError) adds quotes
    if not plans:
        _fail("nothing selected: check --op/--variant/--dtype/--shape")
    con = _console()
    gpu = has_gpu()
    if not gpu and not as_json:
        con.print(f"[yellow]No GPU here:[/yellow] compiling every kernel and predicting floors for {device}. "
                  "Timing needs a GPU.")
    total = sum(len(p.variants) for p in plans) if not gpu else sum(p.n_candidates for p in plans)
    results = _with_progress(lambda cb: run_suite(sel, results_dir=str(results_dir), progress=cb, isolate=isolate),
                             total, enabled=not as_json)
    path = results.path
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
    if results.phases:
        con.print("where the time went: " + _phases_line(results.phases))
    if failed:
        con.print(f"[red]{len(failed)} candidate(s) failed[/red]: " + ", ".join(f"{r.op}/{r.name} ({r.reason})" for r in failed[:8]))


def _phases_line(phases: dict) -> str:
    parts = []
    if "ceilings_s" in phases:
        parts.append(f"ceilings {phases['ceilings_s']:.0f} s")
    pre = phases.get("precompile") or {}
    if pre:
        slow = ", ".join(f"{vid} {s:.0f} s" for vid, s in (pre.get("slowest") or [])[:3])
        counts = f"{pre.get('compiled', 0)} compiled, {pre.get('cached', 0)} cached"
        parts.append(f"compile {pre.get('wall_s', 0):.0f} s ({counts}" + (f"; slowest {slow}" if slow else "") + ")")
    per_op = phases.get("per_op_s") or {}
    if per_op:
        parts.append("ops " + ", ".join(f"{k} {v:.0f} s" for k, v in per_op.items()))
    h2h = phases.get("head_to_head") or {}
    if h2h.get("pairs"):
        parts.append(f"head to head {h2h.get('wall_s', 0):.0f} s ({h2h['pairs']} pairs)")
    return "; ".join(parts)


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
    target: Optional[str] = typer.Argument(None, help="A .cu file, or a cubin / fatbin / executable."),
    op: Optional[str] = typer.Option(None, "--op", help="Every variant of one library op."),
    all_ops: bool = typer.Option(False, "--all", help="Every variant of every library op."),
    arch: Optional[str] = typer.Option(None, "--arch", help="Compile target (default: this GPU, else sm_90)."),
    threads: int = typer.Option(256, "--threads", help="Block size for occupancy (library variants use their @block)."),
    dynamic_smem: int = typer.Option(0, "--dynamic-smem", help="Dynamic shared memory per block, bytes."),
    gpu: List[str] = typer.Option([], "--gpu", help="For binaries: GPUs to judge (default: the device table)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Registers, spills, shared memory, occupancy and SASS mix per kernel; for a binary, its SASS/PTX
    and where it runs. Needs no GPU."""
    from .analysis import DEVICES, inspect_module, list_fatbin, will_it_run
    from .gpu import KernelabError, compile_file

    out = []
    try:
        if all_ops or op:
            from .ops import compile_variant, discover

            ops = discover()
            if op and op not in ops:
                _fail(f"no op {op!r}; known: {', '.join(ops)}")
            for o in ([ops[op]] if op else ops.values()):
                for v in o.variants():
                    try:
                        compiled = compile_variant(o, v, arch=arch)
                    except ValueError as e:  # an sm_90a-only variant asked for another arch
                        out.append({"variant": v.id, "skipped": str(e)})
                        continue
                    for r in inspect_module(compiled, threads=_kernel_blocks(compiled, v, threads),
                                            dynamic_smem=dynamic_smem):
                        out.append({"variant": v.id, **r.to_dict()})
        elif target and target.endswith((".cu", ".cuh")):
            out = [r.to_dict() for r in inspect_module(compile_file(target, arch=arch), threads=threads,
                                                       dynamic_smem=dynamic_smem)]
        elif target:
            if not Path(target).is_file():
                _fail(f"no such file: {target}")
            listing = list_fatbin(target)
            res = {"binary": listing.to_dict(),
                   "verdicts": {g: will_it_run(listing, g).to_dict() for g in (gpu or list(DEVICES))}}
            if as_json:
                _emit_json(res)
                return
            print(f"{target}: SASS {', '.join(listing.sass) or 'none'}; PTX {', '.join(listing.ptx) or 'none'}")
            for g, v in res["verdicts"].items():
                print(f"  {g:16s} {v['how']:4s} {v['reason']}")
            return
        else:
            _fail("give a .cu file, a binary, --op NAME or --all")
    except KernelabError as e:
        _fail(str(e))
    if as_json:
        _emit_json(out)
        return
    for r in out:
        if "skipped" in r:
            print(f"{r['variant']}: skipped ({r['skipped']})")
            continue
        res, mix = r["resources"], r["mix"]
        print(f"{r.get('variant', '')} {r['name']} [{r['arch']}]".strip() + f": {res['registers']} regs, "
              f"{res['spill_stores'] + res['spill_loads']} B spills, {res['shared_static']} B smem, {res['barriers']} barriers")
        occ = r.get("occupancy") or {}
        if occ:
            print(f"  occupancy: {occ.get('blocks_per_sm')} blocks/SM of {occ.get('threads')} threads, "
                  f"{(occ.get('occupancy') or 0) * 100:.0f}%, limited by {occ.get('limiter')}")
        if mix:
            print(f"  SASS: {mix['total']} instr; LDG {mix['ldg']} (widest {mix['widest_load_bits']}-bit), STG {mix['stg']}, "
                  f"LDS/STS {mix['lds']}/{mix['sts']}, LDL/STL {mix['ldl']}/{mix['stl']}, tensor {mix['tensor_core']}, "
                  f"BAR {mix['bar']}, SHFL {mix['shfl']}")
        for n in r.get("notes", []):
            print(f"  - {n}")


# ----------------------------------------------------------------------------- occupancy

def _default_cc() -> str:
    from .gpu import default_arch

    a = default_arch()
    return f"{a.major}.{a.minor}"


@app.command()
def occupancy(
    threads: int = typer.Option(256, "--threads", help="Threads per block."),
    regs: int = typer.Option(32, "--regs", help="Registers per thread (ptxas 'Used N registers')."),
    smem: int = typer.Option(0, "--smem", help="Shared memory per block in bytes, static + dynamic."),
    cc: Optional[str] = typer.Option(None, "--cc", help="Compute capability, e.g. 9.0 (default: this GPU, else 9.0)."),
    carveout: Optional[int] = typer.Option(None, "--carveout", help="Shared-memory carve-out preference, percent."),
    barriers: int = typer.Option(1, "--barriers", help="Named barriers per block (ptxas 'used N barriers')."),
    what_if: bool = typer.Option(False, "--what-if", help="Sweep block size, registers and shared memory."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """The CUDA occupancy calculator: blocks per SM, occupancy and the binding limit."""
    from .analysis import AnalysisError
    from .analysis import occupancy as occ_fn
    from .analysis import what_if as sweep

    cc = cc or _default_cc()
    try:
        o = occ_fn(cc, threads, regs, smem, carveout, barriers=barriers)
        w = sweep(cc, threads, regs, smem, carveout, barriers=barriers) if what_if else None
    except (AnalysisError, ValueError, KeyError) as e:
        _fail(str(e))
    if as_json:
        _emit_json(w.to_dict() if w else o.to_dict())
        return
    print(f"cc {cc}, {threads} threads, {regs} registers, {smem} B shared memory: {o.summary()}")
    print("blocks per SM allowed by: " + ", ".join(f"{k} {'-' if v is None else v}" for k, v in o.block_limits.items()))
    if o.carveout_bytes is not None:
        print(f"shared memory per block allocated {o.smem_alloc_per_block} B; carve-out {o.carveout_bytes // 1024} KiB")
    if w:
        from rich.table import Table

        con = _console()
        for title, items, attr in (("threads", w.by_block_size, "threads"), ("registers", w.by_registers, "regs_per_thread"),
                                   ("shared memory (B)", w.by_shared_memory, "smem_per_block")):
            t = Table(title=f"what if: {title}")
            for col in (title, "blocks/SM", "warps", "occupancy", "limiter"):
                t.add_column(col)
            for x in items:
                mark = " *" if getattr(x, attr) == getattr(o, attr) else ""
                t.add_row(f"{getattr(x, attr)}{mark}", str(x.blocks_per_sm), str(x.active_warps), f"{x.percent:.1f}%", x.limiter)
            con.print(t)


# ------------------------------------------------------------------------------ ceilings

@app.command()
def ceilings(
    refresh: bool = typer.Option(False, "--refresh", help="Measure again even if cached."),
    quick: bool = typer.Option(False, "--quick", help="Fewer samples (a sanity check)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Measure (or show the cached) copy, read, write and cuBLAS GEMM ceilings of this GPU."""
    from .analysis import get_ceilings, spec_for
    from .gpu import has_gpu

    if not has_gpu():
        spec = spec_for(None)
        msg = f"no GPU here: ceilings are measured on one. Nominal figures for {spec.name} follow."
        if as_json:
            _emit_json({"error": msg, "nominal": spec.to_dict()})
            return
        print(msg)
        for k, v in spec.to_dict().items():
            print(f"  {k}: {v}")
        return
    m = get_ceilings(refresh=refresh, quick=quick)
    if as_json:
        _emit_json(m.to_dict())
        return
    print(f"{m.device} (cc {m.cc[0]}.{m.cc[1]}, driver {m.driver}), measured {m.measured_at}{' (quick)' if m.quick else ''}")
    for r in m.rows():
        if r["value"] is None:
            print(f"  {r['name']:10s} skipped: {r['skipped']}")
        else:
            pct = f" ({r['percent_of_nominal']:.0f}% of {r['nominal']:.2f})" if r["percent_of_nominal"] else ""
            print(f"  {r['name']:10s} {r['value']:8.2f} {r['unit']}{pct}  {r['what']}")


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
    section: Optional[str] = typer.Option(None, "--section", help="Name of the BENCHMARKS.md section (several can coexist)."),
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
        written.append(update_benchmarks_md(benchmarks, results, str(results_file), section))
    for p in written:
        print(p)


# ------------------------------------------------------------------------------ sanitize

@app.command()
def sanitize(
    op: Optional[List[str]] = typer.Option(None, "--op", help="Ops to run (default: all)."),
    variant: Optional[List[str]] = typer.Option(None, "--variant", help="Variant name or vN/wN prefix."),
    tool: Optional[List[str]] = typer.Option(None, "--tool", help="memcheck, racecheck, initcheck, synccheck (default: all)."),
    include_wrong: bool = typer.Option(False, "--include-wrong", help="Also run the known-wrong kernels (their findings are expected)."),
    jobs: int = typer.Option(4, "--jobs", help="Sanitizer processes at once."),
    log_dir: Optional[Path] = typer.Option(None, "--log-dir", help="Keep every tool log here."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Run compute-sanitizer over the library kernels; exit 1 unless every honest variant is clean."""
    from .check.sanitize import TOOLS, find_compute_sanitizer
    from .check.sanitize import sanitize as run_sanitizer

    if not find_compute_sanitizer():
        _fail("compute-sanitizer not found: it ships with the CUDA toolkit (put its bin/ on PATH)")
    report = run_sanitizer(op or None, variants=variant or None, tools=tuple(tool or TOOLS),
                           include_wrong=include_wrong, jobs=jobs, log_dir=log_dir)
    if as_json:
        _emit_json(report.to_dict())
    else:
        print(report.table())
    raise typer.Exit(0 if report.ok else 1)


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


@lab_app.command("report")
def lab_report(
    lab_json: Path = typer.Argument(..., help="Output of `kernelab lab run --all --json`."),
    benchmarks: Optional[Path] = typer.Option(None, "--benchmarks", help="Also write the table into this BENCHMARKS.md section."),
    section: str = typer.Option("lab", "--section", help="Name of the BENCHMARKS.md section."),
) -> None:
    """The claims table (Markdown) from stored experiment results."""
    from .lab.report import claims_markdown, load_lab_results, update_claims_section

    try:
        results = load_lab_results(lab_json)
    except (FileNotFoundError, ValueError) as e:
        _fail(str(e))
    print(claims_markdown(results))
    if benchmarks:
        print(update_claims_section(benchmarks, results, str(lab_json), section))


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
