"""Nsight Compute, side by side: one launch of each target (kernelab variants and the op's peers)
on one case, profiled with the same sections, and a table of the numbers that explain a gap
(issue rate, eligible warps, stall reasons per issued instruction, memory throughput).

Why a script and not `kernelab run`: ncu replays a kernel ~20-40 times with its counters, so it
times nothing; it answers "where do the cycles go" once `kernelab run` has said "how far from the
peer". One ncu process per target: ncu wraps a whole process.

Usage (GPU machine with ncu; ~15-30 s per target):
    PYTHONPATH=src python3 scripts/ncu_compare.py --op gemm --shape 4096,4096,4096 --dtype float32 \\
        --targets v9_sgemm_tuned,cublas --kernel cublas=gemm --out $OUT
    --kernel NAME=REGEX   the kernel of target NAME (default: the op's kernel for variants; a peer
                          needs one, e.g. cublas=gemm, sdpa[flash]=flash)
    --params causal=1     case parameters (attention)
    A target VARIANT[K=V;K2=V2] is the variant built with those #ifndef macros (a sweep's knobs), e.g.
    --targets "v5_l2_two_pass[SM_THREADS=1024;X2_AHEAD=4],torch.compile". A key with a leading @ overrides
    the variant's header value instead (`v5_l2_two_pass[@block=256;SM_THREADS=1024]`): the op's launch
    geometry and its macros both follow it.
Writes $OUT/ncu_<target>.txt (ncu's own report) and prints the table last.
    --source N            also sample stalls per SASS instruction (SourceCounters): writes
                          $OUT/ncu_<target>_sass.csv (ncu's source page) and prints each target's N
                          instructions with the most stall samples, with their top reasons

The child side (`--child`) builds the inputs, calls the target three times (warm-up: the cubin load,
torch.compile's autotuning), then once more between cudaProfilerStart and Stop: ncu profiles the
first matching launch of that call (--profile-from-start off --launch-count 1).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

SECTIONS = ("SpeedOfLight", "ComputeWorkloadAnalysis", "SchedulerStats", "WarpStateStats", "MemoryWorkloadAnalysis",
            "LaunchStats", "Occupancy")
# Stall reasons, as cycles a warp spends stalled per instruction it issues (sum ~ Warp Cycles Per
# Issued Instruction): the metric family ncu's WarpStateStats section charts.
STALLS = "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio"
# Section lines worth a row in the table, in this order.
ROWS = ("Duration", "Executed Ipc Active", "Issue Slots Busy", "Issued Warp Per Scheduler", "No Eligible",
        "Active Warps Per Scheduler", "Eligible Warps Per Scheduler", "Warp Cycles Per Issued Instruction",
        "Registers Per Thread", "Achieved Occupancy", "Memory Throughput", "DRAM Throughput", "L1/TEX Hit Rate",
        "L2 Hit Rate", "Mem Busy", "Mem Pipes Busy")

_LINE = re.compile(r"^\s{2,}(\S.*?)\s{2,}(\S+)?\s+([-+]?[\d,]*\.?\d+(?:[eE][-+]?\d+)?)\s*$")
_BYTES = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12}
_STALL = re.compile(r"smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio")


def parse_report(text: str) -> dict[str, float]:
    """{metric: value} of the first profiled kernel in an ncu text report: section lines
    ("Executed Ipc Active   inst/cycle   1.64") by name, stall metrics as "stall:<reason>"."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        name, value = m[1].strip(), float(m[3].replace(",", ""))
        value *= _BYTES.get(m[2] or "", 1)  # ncu scales byte counts to its own unit: report bytes
        s = _STALL.fullmatch(name)
        key = f"stall:{s[1]}" if s else name
        out.setdefault(key, value)  # the first kernel's value wins
    return out


def table(reports: dict[str, dict[str, float]], top_stalls: int = 8, extra: tuple = ()) -> str:
    """Metric rows x target columns (ROWS, then `extra` metrics by name); the stall reasons that matter
    most in any target, largest first."""
    names = list(reports)
    rows = [r for r in (*ROWS, *extra) if any(r in rep for rep in reports.values())]
    stalls = sorted({k for rep in reports.values() for k in rep if k.startswith("stall:")},
                    key=lambda k: -max(rep.get(k, 0.0) for rep in reports.values()))[:top_stalls]
    width = max([len(r) for r in rows + stalls] + [10])
    # Names longer than a column (a target with knobs) head their column as [k], spelled out above the table.
    long = any(len(n) > 18 for n in names)
    heads = [f"[{k + 1}]" if long else n for k, n in enumerate(names)]
    lines = [f"[{k + 1}] {n}" for k, n in enumerate(names)] if long else []
    lines.append(f"{'':{width}}  " + "  ".join(f"{h:>18}" for h in heads))
    for r in rows + stalls:
        cells = [f"{reports[n][r]:>18.4g}" if r in reports[n] else f"{'-':>18}" for n in names]
        lines.append(f"{r:{width}}  " + "  ".join(cells))
    return "\n".join(lines)


def ncu_command(ncu: str, target: str, kernel_regex: str, args, export: Path | None = None) -> list[str]:
    # --profile-from-start off: only launches between the child's cudaProfilerStart and Stop count, so
    # the warm-up call (and torch.compile's autotuning launches, which match a peer's regex) are skipped.
    # export: write a report file (ncu -o) instead of printing, for --source's two pages.
    # --clock-control none: ncu's default locks the SM clock to base (~1.5 GHz on the H200) for the
    # profiled launch; the device rules say leave the clocks alone, and the numbers then match the timed runs'
    # boost clocks (sessions before 33 ran with the default: their durations are ~17% long).
    cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--launch-count", "1",
           "--kernel-name", f"regex:{kernel_regex}"]
    if export is not None:
        cmd += ["--force-overwrite", "--export", str(export)]
    for s in (*SECTIONS, *(("SourceCounters",) if export is not None else ())):
        cmd += ["--section", s]
    cmd += ["--metrics", ",".join([STALLS, *getattr(args, "metrics", [])])]
    cmd += [sys.executable, str(Path(__file__).resolve()), "--child", "--op", args.op, "--shape", args.shape,
            "--dtype", args.dtype, "--targets", target] + (["--params", args.params] if args.params else [])
    return cmd


_KNOBS = re.compile(r"^([\w.]+)\[([^\]]*)\]$")


def split_target(target: str) -> tuple[str, dict]:
    """'v5[SM_THREADS=1024;X2_AHEAD=4]' -> ('v5', {'SM_THREADS': 1024, 'X2_AHEAD': 4}); a bare name -> (name, {})."""
    m = _KNOBS.match(target)
    if not m:
        return target, {}
    pairs = (kv.split("=", 1) for kv in m[2].split(";") if kv)
    return m[1], {k.strip(): _value(v.strip()) for k, v in pairs}


def split_knobs(knobs: dict) -> tuple[dict, dict]:
    """A target's knobs as (header values, macros): '@block' -> header 'block' (as text, the way a
    header holds it), the rest macros."""
    header = {k[1:]: str(v) for k, v in knobs.items() if k.startswith("@")}
    return header, {k: v for k, v in knobs.items() if not k.startswith("@")}


def variant_kernel_regex(op, name: str, dtype: str) -> str:
    """The kernels a variant's module holds for this dtype, as one regex: the op's entry name
    (`softmax_bf16`) is not what templated variants launch (`softmax_warp_row_bf16_...`), so the
    names come from the compiled module (NVRTC, cached). A variant with several kernels (sum's
    finish pass) matches all of them; ncu profiles the first of them in the profiled call."""
    from kernelab.check.inputs import DTYPES
    from kernelab.ops import compile_variant

    names = sorted(compile_variant(op, op.variant(name)).resources)
    suffix = DTYPES[dtype]
    mine = [n for n in names if suffix in n] or names
    return "|".join(re.escape(n) for n in mine) or re.escape(op.kernel_name(dtype))


def source_rows(csv_text: str) -> tuple[list[str], list[dict[str, str]]]:
    """ncu's source page (--page source --csv --print-source sass) as (columns, rows): one row per
    SASS instruction. Lines before the CSV header (ncu's own notes) are skipped."""
    import csv
    import io

    lines = csv_text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"Address"') or ln.startswith("Address")), None)
    if start is None:
        return [], []
    reader = csv.DictReader(io.StringIO("\n".join(lines[start:])))
    return list(reader.fieldnames or []), list(reader)


def _num(v: str) -> float:
    try:
        return float(str(v).replace(",", ""))
    except ValueError:
        return 0.0


def top_stalled(csv_text: str, n: int) -> str:
    """The n SASS instructions with the most stall samples in a source page, each with its share of
    all samples and its three largest stall-reason columns."""
    cols, rows = source_rows(csv_text)
    total_col = next((c for c in cols if c.startswith("Warp Stall Sampling (All")), None)
    if not rows or total_col is None:
        return "(no per-instruction stall samples in the source page)"
    reasons = [c for c in cols if c != total_col and any(k in c.lower() for k in ("stall", "scoreboard", "barrier"))]
    total = sum(_num(r[total_col]) for r in rows) or 1.0
    src = next((c for c in cols if c == "Source"), cols[1] if len(cols) > 1 else cols[0])
    out = [f"{len(rows)} instructions, {total:.0f} samples; top {n} by samples:"]
    for r in sorted(rows, key=lambda r: -_num(r[total_col]))[:n]:
        why = sorted(((c, _num(r[c])) for c in reasons), key=lambda cv: -cv[1])[:3]
        whys = ", ".join(f"{c}={v:.0f}" for c, v in why if v > 0)
        share = 100 * _num(r[total_col]) / total
        out.append(f"  {r.get('Address', '?'):>8} {share:5.1f}%  {r[src].strip()[:60]:60}  {whys}")
    return "\n".join(out)


def _case(args):
    from kernelab.ops import Case

    pairs = (p.split("=", 1) for p in args.params.split(",") if p)
    params = tuple((k, _value(v)) for k, v in pairs)
    return Case(tuple(int(x) for x in args.shape.split(",")), args.dtype, params=params)


def _value(v: str):
    return {"true": True, "false": False}.get(v.lower(), int(v) if v.lstrip("-").isdigit() else v)


def child(args) -> int:
    import torch

    from kernelab.ops import discover, run_variant

    op = discover()[args.op]
    case = _case(args)
    inputs = op.make_inputs(case, seed=0)
    target, knobs = split_target(args.targets)
    header, knobs = split_knobs(knobs)
    if target in {v.name for v in op.variants()} and (knobs or header):
        import dataclasses

        from kernelab.gpu import compile_file
        from kernelab.gpu.module import Module
        from kernelab.ops.build import launch_variant, target_arch

        v = op.variant(target)
        v = dataclasses.replace(v, meta={**v.meta, **header})  # the launch geometry reads these too
        defines = {**op.defines(v), **knobs}
        module = Module(compile_file(v.path, arch=target_arch(v).sm, defines=defines), defines)
        kernel = module.kernel(op.kernel_name(case.dtype))
        outputs = op.make_outputs(case, inputs)
        call = lambda: launch_variant(op, kernel, v, case, inputs, outputs)  # noqa: E731
    elif target in {v.name for v in op.variants()}:
        outputs = op.make_outputs(case, inputs)
        call = lambda: run_variant(op, op.variant(target), case, inputs, outputs)  # noqa: E731
    else:
        peers = op.peers(case)
        if target not in peers:
            print(f"{target} is neither a variant nor a peer of {args.op} (peers: {', '.join(peers)})", file=sys.stderr)
            return 2
        fn = peers[target]
        call = lambda: fn(inputs)  # noqa: E731
    for _ in range(3):  # warm-up: the cubin load, torch.compile's compile and autotuning
        call()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()  # ncu profiles the first matching launch from here
    call()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--op", required=True)
    p.add_argument("--shape", required=True, help="comma-separated, e.g. 4096,4096,4096")
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--targets", required=True, help="comma-separated variant and peer names")
    p.add_argument("--kernel", action="append", default=[], help="NAME=REGEX: the kernel to profile for NAME")
    p.add_argument("--params", default="", help="case parameters, e.g. causal=true")
    p.add_argument("--out", default=".", help="folder for the ncu reports")
    p.add_argument("--metrics", type=lambda x: [m for m in x.split(",") if m], default=[],
                   help="more ncu metrics, comma-separated (each gets a row), e.g. dram__bytes_read.sum")
    p.add_argument("--source", type=int, default=0, metavar="N",
                   help="also sample stalls per SASS instruction and print each target's N most stalled")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        return child(args)

    from kernelab.ops import discover

    ncu = shutil.which("ncu")
    if not ncu:
        print("ncu not found on PATH (Nsight Compute ships with the CUDA toolkit)", file=sys.stderr)
        return 2
    op = discover()[args.op]
    regex = dict(k.split("=", 1) for k in args.kernel)
    variants = {v.name for v in op.variants()}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    reports, sources = {}, {}
    for target in [t for t in args.targets.split(",") if t]:
        if target not in regex and split_target(target)[0] not in variants:
            print(f"{target}: a peer needs --kernel {target}=REGEX (its kernel's name is not kernelab's)",
                  file=sys.stderr)
            return 2
        kernel = regex.get(target) or variant_kernel_regex(op, split_target(target)[0], args.dtype)
        stem = out / f"ncu_{re.sub(r'[^A-Za-z0-9_.-]', '_', target)}"
        export = stem.with_suffix(".ncu-rep") if args.source else None
        r = subprocess.run(ncu_command(ncu, target, kernel, args, export), capture_output=True, text=True)
        text = r.stdout + r.stderr
        if export is not None:  # the details page and the SASS page, both read from the one report
            text += subprocess.run([ncu, "--import", str(export), "--page", "details"], capture_output=True,
                                   text=True).stdout
            sass = subprocess.run([ncu, "--import", str(export), "--page", "source", "--csv", "--print-source",
                                   "sass"], capture_output=True, text=True)
            stem.with_name(stem.name + "_sass.csv").write_text(sass.stdout + sass.stderr)
            sources[target] = top_stalled(sass.stdout, args.source)
        stem.with_suffix(".txt").write_text(text)
        reports[target] = parse_report(text)
        if not reports[target]:
            print(f"{target}: ncu reported nothing (rc {r.returncode}); its output: {out}", file=sys.stderr)
    for target, text in sources.items():
        print(f"== {target}: stall samples per SASS instruction\n{text}\n")
    print(table(reports, extra=tuple(args.metrics)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
