"""compute-sanitizer over the library's kernels: memcheck, racecheck, initcheck, synccheck.

    from kernelab.check.sanitize import sanitize
    report = sanitize(["vector_add"])          # every honest variant, four tools
    report.ok                                   # every honest variant clean under every tool
    print(report.table())

Each (tool, variant) pair runs in its own child process under compute-sanitizer, since the
tool's summary counts a whole process: `python -m kernelab.check.sanitize --child ...` runs
the variant on the op's test cases (numel <= max_numel, seed 0, normal inputs), with
PYTORCH_NO_CUDA_MEMORY_CACHING=1 so every tensor is its own cudaMalloc and a write one
element past a tensor is outside an allocation (the caching allocator's 2 MiB blocks would
hide it). `--report-api-errors no` keeps the tool's own API noise out (cuGetProcAddress
probes, seen on the H200), and under memcheck `--destroy-on-device-error kernel` lets the
remaining cases run after a fault.

Verdict per run. Every error record the tool prints is attributed by kernel name:
  own       the record names one of the variant's kernels (extern "C" names: vector_add_f32);
  other     it names some other kernel (torch's own, e.g. at::native::...): reported as noise,
            not counted against the variant;
  unknown   no kernel can be read from it: counted against the verdict (a clean verdict must
            be a proven absence, not a parsing gap).
status: "errors" when own > 0; "clean" when the summary was read, the child ran every case, and
own == unknown == 0; otherwise "failed" (no summary, child died, timeout), with the log's tail.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
DEFAULT_MAX_NUMEL = 1 << 21  # every vector_add test case; instrumented kernels stay in milliseconds
_PREFIX = "========="
_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+errors?")
_RACE_SUMMARY = re.compile(r"RACECHECK SUMMARY:\s*(\d+)\s+hazards?\s+displayed\s*\((\d+)\s+errors?,\s*(\d+)\s+warnings?\)")
_NOT_RECORDS = ("COMPUTE-SANITIZER", "ERROR SUMMARY", "RACECHECK SUMMARY", "LEAK SUMMARY", "Process ID",
                "Target application returned", "Error: process didn't terminate", "Saved host backtrace")
# Lines that continue a record even when a log was re-indented (seen in pasted reports).
_DETAIL_LINES = ("at ", "by thread", "Address ", "and ", "Access at", "Saved host", "Host Frame", "Device Frame",
                 "Current Value", "Hazard", "Previous", "in block")
# "at vector_add_f32+0x70 in file.cu:12", "at 0x90 in Kernel(unsigned int*)", "at 0x250 in f.cu:41:kernel(int*)"
_AT = re.compile(r"\bat\s+(?:0x[0-9a-fA-F]+\s+in\s+)?(?:[^\s:]+\.cu[h]?:\d+:)?(?P<fn>[A-Za-z_][\w:<>,\s\*&()]*?)(?:\+0x[0-9a-fA-F]+|\s+in\s|\s*$)")


def find_compute_sanitizer() -> str | None:
    """KERNELAB_COMPUTE_SANITIZER, then PATH, then CUDA_HOME and /usr/local/cuda*/ (bin/ or compute-sanitizer/)."""
    env = os.environ.get("KERNELAB_COMPUTE_SANITIZER")
    if env:
        return env if os.path.isfile(env) and os.access(env, os.X_OK) else None
    on_path = shutil.which("compute-sanitizer")
    if on_path:
        return on_path
    roots = [os.environ[v] for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    roots += ["/usr/local/cuda"] + sorted(glob.glob("/usr/local/cuda-*"), reverse=True)
    for root in roots:
        for rel in ("bin/compute-sanitizer", "compute-sanitizer/compute-sanitizer"):
            p = os.path.join(root, rel)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
    return None


@dataclass
class Finding:
    kind: str  # the record's first line, e.g. "Invalid __global__ write of size 4 bytes"
    kernel: str | None  # the kernel it names (one of ours when own)
    attribution: str  # "own" | "other" | "unknown"
    text: str  # the whole record


def parse_sanitizer_output(text: str, kernels) -> dict:
    """Records, summary counts and attribution from compute-sanitizer's text output.

    Returns {"findings": [Finding], "summary_errors": int | None, "race_hazards": int | None,
    "race_errors": int | None, "race_warnings": int | None}.
    """
    kernels = [k for k in kernels if k]
    own_re = re.compile(r"(?<![\w])(" + "|".join(re.escape(k) for k in kernels) + r")(?![\w])") if kernels else None
    records: list[list[str]] = []
    summary_errors = race = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.startswith(_PREFIX):
            continue  # the program's own output
        body = line[len(_PREFIX):]
        stripped = body.strip()
        m = _ERROR_SUMMARY.search(stripped)
        if m:
            summary_errors = (summary_errors or 0) + int(m[1])
            continue
        m = _RACE_SUMMARY.search(stripped)
        if m:
            race = tuple(int(x) for x in m.groups())
            continue
        if not stripped:
            records.append([])  # a blank prefixed line ends a record
            continue
        continuation = body.startswith(("  ", "\t")) or stripped.startswith(_DETAIL_LINES)
        if continuation and records and records[-1]:
            records[-1].append(stripped)
        elif not stripped.startswith(_NOT_RECORDS):
            records.append([stripped])
    findings = []
    for rec in records:
        if not rec or rec[0].startswith(("Host Frame", "Device Frame")):
            continue
        whole = "\n".join(rec)
        hit = own_re.search(whole) if own_re else None
        if hit:
            findings.append(Finding(rec[0], hit[1], "own", whole))
            continue
        fn = None
        for l in rec:
            m = _AT.search(l)
            if m and m["fn"].strip():
                fn = m["fn"].strip()
                break
        findings.append(Finding(rec[0], fn, "other" if fn else "unknown", whole))
    return {"findings": findings, "summary_errors": summary_errors,
            "race_hazards": race[0] if race else None, "race_errors": race[1] if race else None,
            "race_warnings": race[2] if race else None}


@dataclass
class ToolRun:
    tool: str
    op: str
    variant: str
    wrong: bool
    status: str  # "clean" | "errors" | "failed"
    kernels: list[str] = field(default_factory=list)
    summary_errors: int | None = None
    race_hazards: int | None = None
    own_errors: int = 0
    other_errors: int = 0
    unknown_errors: int = 0
    findings: list[Finding] = field(default_factory=list)
    cases: list[str] = field(default_factory=list)
    child_errors: list[str] = field(default_factory=list)
    detail: str = ""
    returncode: int | None = None
    wall_s: float = 0.0
    log_tail: str = ""
    log_path: str | None = None
    command: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return self.status == "clean"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["findings"] = [asdict(f) for f in self.findings[:50]]
        return d


@dataclass
class SanitizeReport:
    sanitizer: str
    runs: list[ToolRun]

    @property
    def ok(self) -> bool:
        """Every honest (non-wrong) variant clean under every tool it ran."""
        return all(r.clean for r in self.runs if not r.wrong)

    def run(self, variant: str, tool: str) -> ToolRun:
        for r in self.runs:
            if tool == r.tool and variant in (r.variant, r.variant.split("_", 1)[0], f"{r.op}/{r.variant}"):
                return r
        raise KeyError(f"no {tool} run for {variant!r} in this report")

    def to_dict(self) -> dict:
        return {"sanitizer": self.sanitizer, "ok": self.ok, "runs": [r.to_dict() for r in self.runs]}

    def table(self) -> str:
        lines = ["| op | variant | tool | status | own errors | other (noise) | cases | detail |",
                 "|---|---|---|---|---|---|---|---|"]
        for r in self.runs:
            name = r.variant + (" (known wrong)" if r.wrong else "")
            lines.append(f"| {r.op} | {name} | {r.tool} | {r.status} | {r.own_errors} | {r.other_errors} | "
                         f"{len(r.cases)} | {r.detail.splitlines()[0][:100] if r.detail else ''} |")
        return "\n".join(lines)


def _command(sanitizer: str, tool: str, child_args: list[str]) -> list[str]:
    cmd = [sanitizer, "--tool", tool, "--report-api-errors", "no", "--print-limit", "1000"]
    if tool == "memcheck":  # precise memcheck errors destroy the context by default; keep the other cases running
        cmd += ["--destroy-on-device-error", "kernel"]
    return cmd + [sys.executable, "-m", "kernelab.check.sanitize", "--child"] + child_args


def _env() -> dict:
    env = dict(os.environ)
    env["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join([src] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def _verdict(run: ToolRun, parsed: dict, child: dict | None, timed_out: bool, timeout_s: float) -> None:
    run.findings = parsed["findings"]
    run.summary_errors = parsed["summary_errors"]
    run.race_hazards = parsed["race_hazards"]
    run.own_errors = sum(f.attribution == "own" for f in run.findings)
    run.other_errors = sum(f.attribution == "other" for f in run.findings)
    run.unknown_errors = sum(f.attribution == "unknown" for f in run.findings)
    if child:
        run.cases, run.child_errors = child.get("cases", []), child.get("errors", [])
    if run.own_errors:
        first = next(f for f in run.findings if f.attribution == "own")
        run.status = "errors"
        run.detail = f"{run.own_errors} error(s) in {', '.join(sorted({f.kernel for f in run.findings if f.attribution == 'own'}))}: " \
                     f"{first.kind}\n{first.text}"
        return
    total = run.summary_errors if run.tool != "racecheck" or run.summary_errors is not None else parsed["race_errors"]
    problems = []
    if timed_out:
        problems.append(f"timed out after {timeout_s:g} s")
    if total is None:
        problems.append("no summary line in the tool's output (did it run?)")
    if child is None:
        problems.append("the child wrote no result (it died or never started)")
    elif run.child_errors:
        problems.append(f"{len(run.child_errors)} case(s) raised: {run.child_errors[0]}")
    elif not run.cases:
        problems.append("no test case ran (none small enough, or none supported)")
    if total is not None and total > len(run.findings):
        run.unknown_errors += total - len(run.findings)  # counted by the tool but not printed or not parsed
    if run.unknown_errors:
        kinds = [f.kind for f in run.findings if f.attribution == "unknown"]
        problems.append(f"{run.unknown_errors} error(s) that name no kernel (cannot be ruled out as the variant's)"
                        + (f": {kinds[0]}" if kinds else ""))
    if problems:
        run.status, run.detail = "failed", "; ".join(problems)
        return
    run.status = "clean"
    run.detail = f"{len(run.cases)} cases clean"
    if run.other_errors:
        names = sorted({f.kernel for f in run.findings if f.attribution == "other"})
        run.detail += f"; {run.other_errors} record(s) in other kernels, not the variant's (noise): {', '.join(names)[:200]}"


def _run_one(sanitizer: str, tool: str, op_name: str, variant, kernels: list[str], ops_dir, max_numel: int,
             timeout_s: float, log_dir: Path | None) -> ToolRun:
    tmp = Path(tempfile.mkdtemp(prefix="kernelab-sanitize-"))
    out_json = tmp / "child.json"
    args = ["--out", str(out_json), "--op", op_name, "--variant", variant.name, "--max-numel", str(max_numel)]
    if ops_dir:
        args += ["--ops-dir", str(ops_dir)]
    cmd = _command(sanitizer, tool, args)
    run = ToolRun(tool=tool, op=op_name, variant=variant.name, wrong=variant.wrong, status="failed", kernels=kernels,
                  command=cmd)
    t0 = time.monotonic()
    timed_out = False
    log_file = (log_dir / f"{op_name}.{variant.name}.{tool}.log") if log_dir else tmp / "log"
    with open(log_file, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=_env(),
                                start_new_session=True)
        try:
            run.returncode = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # its own session: the tool and the Python child under it
            except ProcessLookupError:
                pass
            run.returncode = proc.wait()
    run.wall_s = time.monotonic() - t0
    text = log_file.read_text(errors="replace")
    run.log_tail = text[-3000:]
    run.log_path = str(log_file) if log_dir else None
    child = json.loads(out_json.read_text()) if out_json.is_file() else None
    _verdict(run, parse_sanitizer_output(text, kernels), child, timed_out, timeout_s)
    for p in tmp.iterdir():
        p.unlink()
    tmp.rmdir()
    return run


def sanitize(ops=None, *, variants=None, tools=TOOLS, include_wrong: bool = False, ops_dir=None, jobs: int = 4,
             timeout_s: float = 600.0, max_numel: int = DEFAULT_MAX_NUMEL, log_dir=None,
             sanitizer: str | None = None) -> SanitizeReport:
    """Run compute-sanitizer's `tools` over the variants of `ops` (default: every op).

    variants: names (or vN / wN prefixes) to restrict to; a wrong/ variant named here is run
    even without include_wrong. include_wrong: add every known-wrong kernel (they are expected
    to show errors and do not count against `report.ok`). jobs: child processes at a time
    (each is one Python + torch under the tool on the same GPU). log_dir: keep full logs.
    """
    from ..ops import discover

    sanitizer = sanitizer or find_compute_sanitizer()
    if not sanitizer:
        raise FileNotFoundError("compute-sanitizer not found on PATH, in $CUDA_HOME/bin or /usr/local/cuda*/bin. "
                                "Install the CUDA toolkit, or set KERNELAB_COMPUTE_SANITIZER=/path/to/compute-sanitizer.")
    unknown = [t for t in tools if t not in TOOLS]
    if unknown:
        raise ValueError(f"unknown sanitizer tool(s) {unknown}; choose from {', '.join(TOOLS)}")
    all_ops = discover(ops_dir)
    names = list(ops) if ops else list(all_ops)
    missing = [n for n in names if n not in all_ops]
    if missing:
        raise KeyError(f"no op(s) named {missing} (have: {', '.join(all_ops)})")
    jobs_list = []
    for op_name in names:
        op = all_ops[op_name]
        chosen = op.variants(include_wrong=True)
        if variants:
            wanted = set(variants)
            chosen = [v for v in chosen if v.name in wanted or v.name.split("_", 1)[0] in wanted or v.id in wanted]
        elif not include_wrong:
            chosen = [v for v in chosen if not v.wrong]
        for v in chosen:
            kernels = sorted({op.kernel_name(dt) for dt in v.dtypes(op)})
            for tool in tools:
                jobs_list.append((tool, op_name, v, kernels))
    if variants and not jobs_list:
        raise KeyError(f"no variant matches {list(variants)} in {', '.join(names)}")
    log_path = Path(log_dir) if log_dir else None
    if log_path:
        log_path.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(_run_one, sanitizer, tool, op_name, v, kernels, ops_dir, max_numel, timeout_s, log_path)
                   for tool, op_name, v, kernels in jobs_list]
        runs = [f.result() for f in futures]
    return SanitizeReport(sanitizer=sanitizer, runs=runs)


# ---- the child: runs one variant on small test cases, under the tool -------------------------

def _child(out: str, op_name: str, variant_name: str, ops_dir: str | None, max_numel: int) -> None:
    from ..gpu import synchronize
    from ..gpu.errors import is_sticky_message
    from ..ops import discover, run_variant

    op = discover(ops_dir)[op_name]
    v = op.variant(variant_name)
    record = {"op": op_name, "variant": v.name, "cases": [], "errors": [], "skipped": []}
    sticky = False
    for case in op.test_cases():
        if not 0 < case.numel <= max_numel:
            continue
        why = op.supports(v, case)
        if why:
            record["skipped"].append(f"{case.label}: {why}")
            continue
        try:
            inputs = op.make_inputs(case, 0, device="cuda", dist="normal")
            outputs = op.make_outputs(case, inputs)
            run_variant(op, v, case, inputs, outputs)
            synchronize()
            record["cases"].append(case.label)
        except Exception as e:  # recorded, and the verdict reads it; a sticky fault ends the run
            record["errors"].append(f"{case.label}: {type(e).__name__}: {e}")
            if is_sticky_message(str(e)):
                sticky = True
                break
    Path(out).write_text(json.dumps(record))
    sys.stdout.flush()
    if sticky:
        os._exit(0)  # skip teardown: after a context-destroying fault, library destructors can block
    # otherwise a normal exit: the tool's end-of-process handling (its summary) sees a normal teardown


def _main(argv=None) -> None:
    import argparse

    p = argparse.ArgumentParser(prog="python -m kernelab.check.sanitize",
                                description="Run compute-sanitizer over kernelab's library kernels.")
    p.add_argument("ops", nargs="*", help="op names (default: all)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    p.add_argument("--op", help=argparse.SUPPRESS)
    p.add_argument("--variant", action="append", help="variant name or vN/wN prefix (repeatable)")
    p.add_argument("--tool", action="append", choices=TOOLS, help="default: all four")
    p.add_argument("--include-wrong", action="store_true")
    p.add_argument("--ops-dir")
    p.add_argument("--max-numel", type=int, default=DEFAULT_MAX_NUMEL)
    p.add_argument("--jobs", type=int, default=4)
    p.add_argument("--log-dir")
    p.add_argument("--json", help="write the report here")
    a = p.parse_args(argv)
    if a.child:
        _child(a.out, a.op, a.variant[0], a.ops_dir, a.max_numel)
        return
    report = sanitize(a.ops or None, variants=a.variant, tools=tuple(a.tool or TOOLS), include_wrong=a.include_wrong,
                      ops_dir=a.ops_dir, jobs=a.jobs, max_numel=a.max_numel, log_dir=a.log_dir)
    print(report.table())
    if a.json:
        Path(a.json).write_text(json.dumps(report.to_dict(), indent=1))
    sys.exit(0 if report.ok else 1)


if __name__ == "__main__":
    _main()
