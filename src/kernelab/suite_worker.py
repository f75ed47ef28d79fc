"""Run one case's candidates (peers and variants) and stream a row per candidate.

The parent (suite.py) starts `python -m kernelab.suite_worker RESULTS.jsonl`, writes
one task per line on its stdin, and reads rows from the JSON-lines file as they are
appended. A candidate that faults (sticky CUDA error) or hangs takes the worker down with
it; the parent marks that candidate crash/hang, starts a fresh worker and resends the
candidates not yet reported. Rows already written are never lost.

Per candidate: supports? -> compile/load -> check (correctness and integrity) -> bench
(cold; graph mode when launch-bound) -> re-verify the timed outputs -> metrics.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .head_to_head import mode_key
from .report.results import Row


@dataclass
class CandidateTask:
    """Candidates of one op, each (case, kind, name): kind "peer" (torch, torch.compile) or "variant"."""

    op: str
    candidates: list[tuple[dict, str, str]]
    ops_dir: str | None = None
    ceilings: dict = field(default_factory=dict)
    timeout_s: float = 180.0
    seed: int = 1234
    quick: bool = False  # a 1% / 1.5 s timing budget instead of 0.5% / 3 s
    modes: dict = field(default_factory=dict)  # kind "h2h": "label|pair name" -> the variant's timing mode

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, s: str) -> "CandidateTask":
        d = json.loads(s)
        d["candidates"] = [tuple(c) for c in d["candidates"]]
        return cls(**d)


def _case_from_dict(d: dict):
    from .ops.base import Case

    return Case(shape=tuple(d["shape"]), dtype=d["dtype"], offset=d.get("offset", 0),
                layout=d.get("layout", "contiguous"), params=tuple(sorted(d.get("params", {}).items())))


# ----------------------------------------------------------------------------- in the worker

_PEERS: dict = {}  # (op, case label) -> the op's peers, built once per case: torch.compile traces once


def case_peers(op, case) -> dict:
    key = (op.name, case.label)
    if key not in _PEERS:
        _PEERS[key] = op.peers(case)
    return _PEERS[key]


def forget_peers() -> None:
    _PEERS.clear()
    CASE_MODES.forget()


class CaseModes:
    """One timing mode per case, so that "x best peer" compares like with like.

    A candidate is timed cold first and replayed as a CUDA graph when the cold samples are
    launch-bound (its host enqueue reaches its GPU time). Mixed modes skew the ratio: graph replay
    also hides the gap before each of a candidate's kernels, so at sum 2^28 bf16 torch.compile
    (launch-bound, ~80-170 us of host enqueue for 122 us of GPU time) ran in graph mode and our v3
    cold, and the ratio read 0.98x where cold against cold gave 0.99-1.00x. Peers are measured
    before a case's variants, so once a candidate of a case went to graph mode, every later one of
    that case is timed in graph mode too (and says why)."""

    def __init__(self):
        self._graph: set = set()

    def after_cold(self, key, launch_bound: bool) -> str | None:
        """None: keep the cold measurement; else why to re-time in graph mode."""
        if launch_bound:
            self._graph.add(key)
            return "launch-bound"
        if key in self._graph:
            return "case"  # an earlier candidate of this case was launch-bound
        return None

    def forget(self) -> None:
        self._graph.clear()


CASE_MODES = CaseModes()


def measure_candidate(op, case, kind: str, name: str, ceilings: dict, seed: int, quick: bool = False,
                      mode: str = "cold") -> Row:
    """Everything for one candidate on one case; returns its Row (never raises for candidate faults
    that leave the context usable; sticky faults propagate and kill the worker, by design).
    row.timings has the wall seconds of each phase (setup: compile/load, or a peer's first call,
    which is where torch.compile compiles)."""
    t0 = time.perf_counter()
    if kind == "h2h":  # a pair of candidates timed interleaved (head_to_head.py)
        from .head_to_head import measure_pair

        row = measure_pair(op, case, name, mode, seed, quick, case_peers(op, case))
    else:
        row = _measure(op, case, kind, name, ceilings, seed, quick)
    row.timings["total_s"] = time.perf_counter() - t0
    return row


def _measure(op, case, kind: str, name: str, ceilings: dict, seed: int, quick: bool) -> Row:
    from .gpu import CompileError
    from .ops.build import load_variant, run_variant

    t0 = time.perf_counter()
    row = Row(op.name, name, kind, case.to_dict())
    work = op.work(case)
    row.work = work.to_dict()
    if kind == "variant":
        variant = op.variant(name)
        reason = op.supports(variant, case)
        if reason:
            row.status, row.reason, row.detail = "skipped", "unsupported", reason
            return row
        try:
            module = load_variant(op, variant)
        except CompileError as e:
            row.status, row.reason, row.detail = "compile_error", "compile_error", str(e)
            return row
        row.binary_sha256 = module.compiled.cubin_sha256
        row.resources = {k: r.to_dict() for k, r in module.compiled.resources.items()}

        def run(inputs, outputs):
            run_variant(op, variant, case, inputs, outputs)
    else:
        from .ops.base import PeerUnavailable

        peer = case_peers(op, case)[name]
        try:  # a peer that cannot run here (an SDPA backend not built for this GPU) is skipped, not failed
            produced = set(peer(op.make_inputs(case, seed + 7, "cuda")))
        except PeerUnavailable as e:
            row.status, row.reason, row.detail = "skipped", "unavailable", str(e)
            return row
        op = _OutputsSubset(op, produced)  # a peer is checked on the outputs it makes (SDPA: no LSE)

        def run(inputs, outputs):
            got = peer(inputs)
            for k, v in got.items():
                outputs[k].copy_(v)

    row.timings["setup_s"] = time.perf_counter() - t0
    # 1. correctness and integrity: a candidate that fails is never timed.
    from .check import check_callable

    # At bench sizes the check guards the timing: one seed of normal inputs, run before and after the
    # reference with two poisons, repeated calls, stream order. The exhaustive checks (every declared
    # distribution, several seeds, edge shapes, misaligned views) run on the op's test shapes in
    # `pytest -m gpu`; repeating them at 357 bench shapes would double a full run (~0.4 s a trial).
    chk = check_callable(run, op, case, name=f"{op.name}/{name}", seeds=(0,), dists=("normal",))
    row.check = {k: v for k, v in chk.to_dict().items() if k in ("ok", "reason", "trials", "checks", "wall_s", "max_abs", "max_rel")}
    row.timings["check_s"] = chk.wall_s
    if not chk.ok:
        # A sticky fault the check caught is a crash: the worker's CUDA context is gone with it.
        row.status = "crash" if chk.reason == "crash" else "failed"
        row.reason, row.detail = chk.reason, chk.detail
        return row

    # 2. timing.
    _time_candidate(op, case, kind, name, run, row, ceilings, seed, quick)
    if row.status == "ok" and kind == "variant":
        _occupancy(op, load_variant(op, op.variant(name)), op.variant(name), case, row)
    return row


class _OutputsSubset:
    """`op`, restricted to some of its outputs (for peers that compute only some of them)."""

    def __init__(self, op, keys: set):
        self._op, self._keys = op, keys

    def __getattr__(self, name):
        return getattr(self._op, name)

    def make_outputs(self, case, inputs):
        return {k: v for k, v in self._op.make_outputs(case, inputs).items() if k in self._keys}

    def reference(self, case, inputs):
        return {k: v for k, v in self._op.reference(case, inputs).items() if k in self._keys}


def _time_candidate(op, case, kind, name, run, row: Row, ceilings: dict, seed: int, quick: bool = False) -> None:
    import torch

    from . import analysis
    from .bench import ImpossibleResult, bench
    from .check import verify_outputs

    inputs = op.make_inputs(case, seed, "cuda")
    outputs = op.make_outputs(case, inputs)
    if kind == "variant":
        def fn():
            run(inputs, outputs)
    else:
        peer = case_peers(op, case)[name]

        def fn():
            peer(inputs)
    spec = analysis.spec_for(None)
    work = op.work(case)
    floor = analysis.floor_seconds(work, spec)
    # quick: 1% and 1.5 s per candidate; full: the protocol's 0.5%, capped at 3 s of sampling (a naive
    # kernel of 0.3 s per call stops on the cap with ~10 samples).
    budget = dict(target_rel=0.01, max_wall_s=1.5) if quick else dict(max_wall_s=3.0)
    t0 = time.perf_counter()
    # The floor is the nominal one (datasheet peaks): a median under it is physically impossible.
    floor_s = floor * 0.98 if floor else None
    try:
        m = bench(fn, mode="cold", floor_s=floor_s, name=f"{op.name}/{name}", **budget)
        graph_why = CASE_MODES.after_cold((op.name, case.label), bool(m.launch_bound))
        if graph_why:
            # Graph replays run back to back with the data left in L2: when the working set fits in
            # L2 the DRAM floor does not bound them (vector_add 2^20 fp32, 12 MiB, replayed in 2.5 us
            # against a 2.56 us DRAM floor on the H200), so it is checked only for bigger ones.
            hot_floor = floor_s if work.bytes > spec.l2_bytes else None
            m = bench(fn, mode="graph", floor_s=hot_floor, name=f"{op.name}/{name}", **budget)
    except ImpossibleResult as e:
        row.status, row.reason, row.detail = "failed", "impossible_time", str(e)
        return
    torch.cuda.synchronize()
    row.timings["bench_s"] = time.perf_counter() - t0
    # 3. re-verify what the timed iterations left behind (variants write `outputs`).
    if kind == "variant":
        t0 = time.perf_counter()
        after = verify_outputs(op, case, inputs, outputs)
        row.timings["verify_s"] = time.perf_counter() - t0
        if not after.ok:
            row.status, row.reason = "failed", after.reason or "mismatch"
            row.detail = f"the outputs of the timed iterations are wrong: {after.detail}"
            return
    row.measurement = m.to_dict()
    t = m.median_s
    row.metrics = result_metrics(work, t, spec, ceilings)
    row.metrics["time_s"] = t
    row.metrics["floor_s"] = floor
    row.metrics["launch_bound"] = bool(getattr(m, "launch_bound", False))
    row.metrics["throttled"] = bool(getattr(m, "throttled", False))
    row.metrics["mode"] = m.mode
    if graph_why:
        row.metrics["graph_why"] = graph_why
    row.metrics["peak_mem"] = int(torch.cuda.max_memory_allocated())


def result_metrics(work, seconds: float, spec, ceilings: dict) -> dict:
    """Rates, % of the measured ceiling and % of nominal for one timed result."""
    from . import analysis

    measured = None
    if ceilings and "entries" in ceilings:
        try:
            measured = analysis.roofline_ceilings(ceilings)
        except Exception:
            measured = None
    p = analysis.place(work, seconds, spec, measured)
    bound = p.measured or p.nominal
    return {
        "gbps": p.achieved_bandwidth / 1e9, "tflops": p.achieved_flops / 1e12 if p.flops else None,
        "pct_ceiling": p.measured.percent if p.measured else None, "pct_nominal": p.nominal.percent,
        "bound": bound.bound, "intensity": p.intensity,
    }


def _occupancy(op, module, variant, case, row: Row) -> None:
    from . import analysis

    launched = op.static_kernel(variant, case)  # the case's own kernel and block (@block_bf16, a plan's instance)
    if launched is None or launched[0] not in module.signatures:
        return
    kernel, block = module.kernel(launched[0]), launched[1]
    r = kernel.resources
    dev = analysis.spec_for(None)
    try:
        o = analysis.occupancy_for_kernel(r, dev.cc, block, op.dynamic_smem(variant, case))
        row.occupancy = o.to_dict()
        row.occupancy["block"] = block
        row.occupancy["api_blocks_per_sm"] = kernel.max_active_blocks_per_sm(block, op.dynamic_smem(variant, case))
    except Exception as e:  # occupancy annotates; it never fails a row
        row.occupancy = {"error": str(e)}


def run_task_in_worker(task: CandidateTask, out, exit_on_crash: bool = True) -> int:
    """Measure each candidate of `task`, writing a JSON line per row to `out`. Returns peak memory.
    When the task ends its tensors, compiled peers and cached blocks are released, so the next op
    starts from an empty allocator (a worker runs many ops: one start-up, one torch.compile import)."""
    import gc

    import torch

    from .ops.base import discover

    t_task = time.perf_counter()
    op = discover(task.ops_dir)[task.op]
    peak = 0
    for case_dict, kind, name in task.candidates:
        case = _case_from_dict(case_dict)
        out.write(json.dumps({"start": [case_dict, kind, name], "op": task.op}) + "\n")
        out.flush()
        torch.cuda.reset_peak_memory_stats()
        try:
            row = measure_candidate(op, case, kind, name, task.ceilings, task.seed, task.quick,
                                    task.modes.get(mode_key(case.label, name), "cold"))
        except Exception as e:
            from .gpu.errors import is_sticky_message

            if is_sticky_message(str(e)):
                raise  # the context is gone: let the worker die, the parent records a crash
            row = Row(op.name, name, kind, case.to_dict(), status="failed", reason="exception",
                      detail=f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=4)}")
        if row.status == "crash" and exit_on_crash:  # the context is unusable: report, hand over to a fresh worker
            out.write(json.dumps({"row": row.to_dict(), "peak_mem": peak}, default=str) + "\n")
            out.write(json.dumps({"restart": task.op}) + "\n")
            out.flush()
            os._exit(3)
        peak = max(peak, int(torch.cuda.max_memory_allocated()))
        out.write(json.dumps({"row": row.to_dict(), "peak_mem": peak}, default=str) + "\n")
        out.flush()
        torch.cuda.empty_cache()
    forget_peers()
    gc.collect()
    torch.cuda.empty_cache()
    out.write(json.dumps({"done": task.op, "peak_mem": peak, "wall_s": time.perf_counter() - t_task}) + "\n")
    out.flush()
    return peak


def main() -> None:  # python -m kernelab.suite_worker OUT.jsonl ; tasks on stdin, one JSON line each
    path = sys.argv[1]
    t0 = time.perf_counter()
    import torch

    torch.cuda.init()
    with open(path, "a") as out:
        out.write(json.dumps({"ready": time.perf_counter() - t0}) + "\n")
        out.flush()
        for line in sys.stdin:
            if line.strip():
                run_task_in_worker(CandidateTask.from_json(line), out)
        out.write(json.dumps({"exit": True}) + "\n")


# ----------------------------------------------------------------------------- in the parent

def _key(op: str, item) -> tuple[str, str, str, str]:
    case, kind, name = item
    return (op, case.get("label", ""), kind, name)


def _drop(remaining: list, key: tuple) -> None:
    """Remove the first (op, candidate) of `remaining` with this key, in place."""
    for i, (op, cand) in enumerate(remaining):
        if _key(op, cand) == key:
            del remaining[i]
            return


def run_in_process(task: CandidateTask, progress=None, on_row=None) -> tuple[list[Row], int]:
    """No isolation (tests, debugging): a crash here ends the process."""
    import io

    buf = io.StringIO()
    peak = run_task_in_worker(task, buf, exit_on_crash=False)
    rows = [Row.from_dict(json.loads(l)["row"]) for l in buf.getvalue().splitlines() if '"row"' in l]
    for r in rows:
        if on_row:
            on_row(r)
    return rows, peak


def run_isolated(task: CandidateTask, progress=None, on_row=None, python: str | None = None) -> tuple[list[Row], int]:
    """One task in worker subprocesses; see run_isolated_tasks."""
    rows, peaks = run_isolated_tasks([task], progress, on_row, python)
    return rows, peaks.get(task.op, 0)


def run_isolated_tasks(tasks: list[CandidateTask], progress=None, on_row=None, python: str | None = None,
                       on_done=None, on_wall=None) -> tuple[list[Row], dict[str, int]]:
    """Run `tasks` (one per op) in one worker subprocess, in order; a crash or hang costs only the
    candidate in flight: the worker is killed, the candidate recorded as crash/hang, and a fresh
    worker gets the candidates not yet reported. `on_row(row)` is called as each row arrives (the
    suite appends it to a JSON-lines file); `on_done(op, peak_bytes)` when an op's task ends;
    `on_wall(op, wall_s)` with the worker's own wall time for that op (and `on_wall("(worker
    start-up)", s)` when a worker is ready).
    Returns the rows and each op's peak GPU memory."""
    rows: list[Row] = []
    peaks: dict[str, int] = {}
    by_op = {t.op: t for t in tasks}
    remaining = [(t.op, c) for t in tasks for c in t.candidates]
    timeout_s = max((t.timeout_s for t in tasks), default=180.0)
    with tempfile.TemporaryDirectory(prefix="kernelab-suite-") as tmp:
        attempt = 0
        while remaining:
            attempt += 1
            path = Path(tmp) / f"rows-{attempt}.jsonl"
            path.touch()
            groups: list[CandidateTask] = []  # consecutive candidates of one op form one task
            for op, cand in remaining:
                if not groups or groups[-1].op != op:
                    groups.append(CandidateTask(**{**asdict(by_op[op]), "candidates": []}))
                groups[-1].candidates.append(cand)
            env = {**os.environ, "PYTHONUNBUFFERED": "1"}
            src = str(Path(__file__).resolve().parents[1])
            env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
            stderr = open(Path(tmp) / f"stderr-{attempt}.txt", "w+")
            proc = subprocess.Popen([python or sys.executable, "-m", "kernelab.suite_worker", str(path)],
                                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr, text=True, env=env)
            proc.stdin.write("".join(g.to_json() + "\n" for g in groups))
            proc.stdin.close()
            in_flight, deadline, done, offset = None, time.monotonic() + timeout_s + 60, False, 0
            op_t0: dict[str, float] = {}  # when this worker started each op (for the wall of a crashed one)
            restart = None  # the op whose worker quit after a sticky fault

            def worker_left(op: str) -> None:
                """This worker ends inside `op`: report its share of the op's wall time (a fresh worker
                reports the rest), and the op's end if nothing of it is left (no worker will say "done")."""
                if op in op_t0 and on_wall:
                    on_wall(op, time.monotonic() - op_t0.pop(op))
                if on_done and not any(o == op for o, _ in remaining):
                    on_done(op, peaks.get(op, 0))
            while not done:
                # Poll before reading: a worker that writes its last lines and exits between a read and
                # a poll would otherwise look like a crash and lose them.
                exited = proc.poll() is not None
                with open(path) as f:
                    f.seek(offset)
                    chunk = f.read()
                lines = chunk.split("\n")
                complete, partial = lines[:-1], lines[-1]
                offset += len(chunk) - len(partial)
                for line in complete:
                    if not line.strip():
                        continue
                    msg = json.loads(line)
                    if "start" in msg:
                        op_t0.setdefault(msg["op"], time.monotonic())
                        in_flight = _key(msg["op"], msg["start"])
                        deadline = time.monotonic() + timeout_s
                        if progress:
                            progress(f"{msg['op']} {msg['start'][0].get('label', '')}: {msg['start'][2]}")
                    elif "row" in msg:
                        row = Row.from_dict(msg["row"])
                        rows.append(row)
                        if on_row:
                            on_row(row)
                        peaks[row.op] = max(peaks.get(row.op, 0), msg.get("peak_mem", 0))
                        key = (row.op, row.case.get("label"), row.kind, row.name)
                        _drop(remaining, key)
                        in_flight = None
                        if progress:
                            progress(None)
                    elif "done" in msg:
                        op_t0.pop(msg["done"], None)
                        peaks[msg["done"]] = max(peaks.get(msg["done"], 0), msg.get("peak_mem", 0))
                        if on_done:
                            on_done(msg["done"], peaks[msg["done"]])
                        if on_wall:
                            on_wall(msg["done"], msg.get("wall_s", 0.0))
                        deadline = time.monotonic() + timeout_s + 60  # the next op's first candidate may compile
                    elif "ready" in msg:
                        if on_wall:
                            on_wall("(worker start-up)", msg["ready"])
                    elif msg.get("exit"):
                        done = True
                    elif "restart" in msg:  # the worker reported a sticky fault as a row and quit
                        restart = msg["restart"]
                if done:
                    break
                if restart:
                    worker_left(restart)
                    proc.wait()
                    break
                if exited or time.monotonic() > deadline:
                    hung = proc.poll() is None
                    if hung:
                        proc.kill()
                    proc.wait()
                    stderr.seek(0)
                    tail = stderr.read()[-2000:]
                    victim = in_flight or (_key(*remaining[0]) if remaining else None)
                    if victim is None:
                        break
                    status = "hang" if hung else "crash"
                    detail = (f"no result within {timeout_s:.0f} s; the worker was killed" if hung
                              else f"the worker died (exit {proc.returncode}): {tail.strip()[-800:]}")
                    case_dict = next(c[0] for op, c in remaining if _key(op, c) == victim)
                    rows.append(Row(victim[0], victim[3], victim[2], case_dict, status=status, reason=status,
                                    detail=detail))
                    if on_row:
                        on_row(rows[-1])
                    _drop(remaining, victim)
                    worker_left(victim[0])
                    if progress:
                        progress(None)
                    break
                time.sleep(0.05)
            if proc.poll() is None:
                proc.wait(timeout=60)
            stderr.close()
    return rows, peaks


if __name__ == "__main__":
    main()
