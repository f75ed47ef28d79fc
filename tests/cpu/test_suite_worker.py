"""Crash and hang containment of the suite's worker processes, and the suite's static mode.

run_isolated_tasks starts `PYTHON -m kernelab.suite_worker OUT.jsonl`, writes the tasks on
its stdin and reads JSON lines from OUT.jsonl. The real worker needs a GPU, so these tests
pass `python=` a fake interpreter that speaks the same protocol and misbehaves on request:
a candidate named "crashes" kills its worker (exit 1, with a CUDA-like message on stderr), one
named "hangs" sleeps until it is killed. Everything else gets an "ok" row whose detail names
the worker's pid, so a test can tell which worker ran it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kernelab.report.results import SCHEMA, load
from kernelab.suite import Selection, make_plan, run_suite, select_cases, select_ops, select_variants
from kernelab.suite_worker import CandidateTask, run_isolated, run_isolated_tasks

FAKE_WORKER = r'''#!{python}
"""A stand-in for `python -m kernelab.suite_worker OUT.jsonl` (tests/cpu/test_suite_worker.py)."""
import json, os, sys, time

assert sys.argv[1:3] == ["-m", "kernelab.suite_worker"], sys.argv
log = os.environ.get("FAKE_WORKER_LOG")
if log:  # one line per worker started
    with open(log, "a") as f:
        f.write(json.dumps({{"pid": os.getpid(), "pythonpath": os.environ.get("PYTHONPATH", "")}}) + "\n")
with open(sys.argv[3], "a") as out:
    def emit(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()
    emit({{"ready": 0.25}})  # the worker's start-up seconds (the real one imports torch and inits CUDA)
    for line in sys.stdin:
        if not line.strip():
            continue
        task = json.loads(line)
        t_task, peak = time.perf_counter(), 0
        for case, kind, name in task["candidates"]:
            emit({{"start": [case, kind, name], "op": task["op"]}})
            if name.startswith("crashes") or name in os.environ.get("FAKE_CRASH", "").split(","):
                sys.stderr.write("kernelab.gpu.errors.KernelFault: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory "
                                 "access was encountered (sticky: the context is gone)\n")
                sys.stderr.flush()
                sys.exit(1)
            if name.startswith("hangs"):
                time.sleep(120)
            if name.startswith("faults_in_check"):  # the real worker: a row for the fault, then it quits
                row = {{"op": task["op"], "name": name, "kind": kind, "case": case, "status": "crash",
                        "reason": "crash", "detail": f"pid {{os.getpid()}} illegal address"}}
                emit({{"row": row, "peak_mem": peak}})
                emit({{"restart": task["op"]}})
                os._exit(3)
            # like torch.cuda.max_memory_allocated over the op's task (suite cases: 12 B per element)
            peak = max(peak, case.get("mem", 12 * case["shape"][0]))
            row = {{"op": task["op"], "name": name, "kind": kind, "case": case, "status": "ok",
                    "detail": f"pid {{os.getpid()}}", "metrics": {{"time_s": 1e-3}}, "timings": {{"total_s": 0.01}}}}
            emit({{"row": row, "peak_mem": peak}})
        emit({{"done": task["op"], "peak_mem": peak, "wall_s": time.perf_counter() - t_task}})
    emit({{"exit": True}})
'''

CANNOT_START = r'''#!{python}
import sys
sys.stderr.write("ModuleNotFoundError: No module named 'kernelab'\n")
sys.exit(1)
'''


def _script(path: Path, text: str) -> str:
    path.write_text(text.format(python=sys.executable))
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def fake(tmp_path, monkeypatch):
    log = tmp_path / "workers.jsonl"
    monkeypatch.setenv("FAKE_WORKER_LOG", str(log))
    python = _script(tmp_path / "fake_python", FAKE_WORKER)

    def workers() -> list[dict]:
        return [json.loads(l) for l in log.read_text().splitlines()] if log.exists() else []

    return python, workers


def case(n: int, mem: int | None = None) -> dict:
    return {"shape": [n], "dtype": "float32", "label": f"{n} float32", "mem": n * 12 if mem is None else mem}


def task(op: str, *names: str, n: int = 1024, timeout_s: float = 30.0) -> CandidateTask:
    return CandidateTask(op=op, candidates=[(case(n), "variant", nm) for nm in names], timeout_s=timeout_s)


def pid(row) -> int:
    return int(row.detail.split()[1])


class Recorder:
    def __init__(self):
        self.rows, self.done, self.progress, self.wall = [], [], [], []

    def on_row(self, row):
        self.rows.append(row)

    def on_done(self, op, peak):
        self.done.append((op, peak))

    def on_progress(self, msg):
        self.progress.append(msg)

    def on_wall(self, op, wall_s):
        self.wall.append((op, wall_s))

    def run(self, tasks, python):
        return run_isolated_tasks(tasks, self.on_progress, on_row=self.on_row, python=python, on_done=self.on_done,
                                  on_wall=self.on_wall)


# ------------------------------------------------------------------------- the happy path

def test_one_worker_runs_every_op_in_order(fake):
    python, workers = fake
    rec = Recorder()
    rows, peaks = rec.run([task("alpha", "v0", "v1", n=1000), task("beta", "v0", n=5000)], python)
    assert [(r.op, r.name, r.status) for r in rows] == [("alpha", "v0", "ok"), ("alpha", "v1", "ok"), ("beta", "v0", "ok")]
    assert len(workers()) == 1 and {pid(r) for r in rows} == {workers()[0]["pid"]}
    assert rec.rows == rows  # on_row saw each row as it arrived
    assert rec.done == [("alpha", 12_000), ("beta", 60_000)] and peaks == {"alpha": 12_000, "beta": 60_000}
    # on_wall: the worker's start-up once, then each op's wall time as the worker measured it
    assert [op for op, _ in rec.wall] == ["(worker start-up)", "alpha", "beta"]
    assert rec.wall[0][1] == 0.25 and all(0 <= s < 5 for _, s in rec.wall[1:])
    # progress: a description per started candidate, then None (advance) per row
    assert rec.progress == ["alpha 1000 float32: v0", None, "alpha 1000 float32: v1", None, "beta 5000 float32: v0", None]
    # the worker imports kernelab from this tree's src/
    assert workers()[0]["pythonpath"].split(os.pathsep)[0] == str(Path(__file__).resolve().parents[2] / "src")


def test_run_isolated_single_task_returns_its_peak(fake):
    python, _ = fake
    rows, peak = run_isolated(task("alpha", "v0", n=100), python=python)
    assert [r.name for r in rows] == ["v0"] and peak == 1200


# ---------------------------------------------------------------------------------- crash

def test_crash_costs_only_the_candidate_in_flight(fake):
    python, workers = fake
    rec = Recorder()
    t0 = time.monotonic()
    rows, peaks = rec.run([task("alpha", "v0", "crashes", "v2", n=1000), task("beta", "v0", "v1", n=2000)], python)
    assert time.monotonic() - t0 < 10
    assert [(r.op, r.name, r.status) for r in rows] == [
        ("alpha", "v0", "ok"), ("alpha", "crashes", "crash"), ("alpha", "v2", "ok"), ("beta", "v0", "ok"), ("beta", "v1", "ok")]
    crash = rows[1]
    assert crash.reason == "crash" and crash.kind == "variant"
    assert "exit 1" in crash.detail and "CUDA_ERROR_ILLEGAL_ADDRESS" in crash.detail  # the worker's stderr tail
    # The row before the crash is kept; a fresh worker ran the rest of alpha and all of beta.
    first, second = (w["pid"] for w in workers())
    assert len(workers()) == 2 and pid(rows[0]) == first
    assert {pid(r) for r in rows[2:]} == {second}
    assert rec.rows == rows
    assert rec.done == [("alpha", 12_000), ("beta", 24_000)] and peaks == {"alpha": 12_000, "beta": 24_000}
    # two workers started; alpha's wall comes in two parts: the crashed worker's share, then the fresh one's
    assert [op for op, _ in rec.wall] == ["(worker start-up)", "alpha", "(worker start-up)", "alpha", "beta"]


def test_two_crashes_in_one_op(fake):
    python, workers = fake
    rows, _ = Recorder().run([task("alpha", "crashes_a", "v1", "crashes_b", "v3")], python)
    assert [(r.name, r.status) for r in rows] == [("crashes_a", "crash"), ("v1", "ok"), ("crashes_b", "crash"), ("v3", "ok")]
    assert len(workers()) == 3



@pytest.mark.parametrize("victim", ["crashes", "hangs"])
def test_crash_and_hang_rows_carry_the_case(fake, victim):
    python, _ = fake
    rows, _ = run_isolated_tasks([task("alpha", "v0", victim, n=1000, timeout_s=1.0)], python=python)
    bad = rows[1]
    assert bad.name == victim and bad.status == {"crashes": "crash", "hangs": "hang"}[victim]
    assert bad.case == case(1000)
    assert bad.key == ("alpha", victim, "1000 float32")  # how compare and reports index rows
    # What suite._gpu_results does with the rows of one op: group them by case label.
    assert list(dict.fromkeys(r.case.get("label") for r in rows)) == ["1000 float32"]


def test_on_done_after_a_crash_on_an_ops_last_candidate(fake):
    python, _ = fake
    rec = Recorder()
    rows, peaks = rec.run([task("alpha", "v0", "crashes", n=1000), task("beta", "v0", n=2000)], python)
    assert [(r.name, r.status) for r in rows] == [("v0", "ok"), ("crashes", "crash"), ("v0", "ok")]
    assert peaks == {"alpha": 12_000, "beta": 24_000}
    assert [op for op, _ in rec.done] == ["alpha", "beta"]


def test_a_worker_that_cannot_start(tmp_path):
    """Every candidate is recorded with the reason, and the run still ends."""
    python = _script(tmp_path / "broken_python", CANNOT_START)
    rows, peaks = run_isolated_tasks([task("alpha", "v0", "v1"), task("beta", "v0")], python=python)
    assert [(r.op, r.name, r.status) for r in rows] == [("alpha", "v0", "crash"), ("alpha", "v1", "crash"),
                                                         ("beta", "v0", "crash")]
    assert all("No module named 'kernelab'" in r.detail for r in rows)
    assert peaks == {}


# ----------------------------------------------------------------------------------- hang

def test_hang_is_killed_and_recorded(fake):
    python, workers = fake
    rec = Recorder()
    t0 = time.monotonic()
    rows, peaks = rec.run([task("alpha", "v0", "hangs", "v2", timeout_s=1.0), task("beta", "v0", timeout_s=1.0)], python)
    wall = time.monotonic() - t0
    assert 1.0 <= wall < 6  # the 1 s timeout, not the fake's 120 s sleep
    assert [(r.op, r.name, r.status) for r in rows] == [
        ("alpha", "v0", "ok"), ("alpha", "hangs", "hang"), ("alpha", "v2", "ok"), ("beta", "v0", "ok")]
    assert rows[1].reason == "hang" and "no result within 1 s" in rows[1].detail and "killed" in rows[1].detail
    first, second = (w["pid"] for w in workers())
    assert pid(rows[0]) == first and {pid(r) for r in rows[2:]} == {second}
    with pytest.raises(ProcessLookupError):  # the hung worker is gone, not left sleeping
        os.kill(first, 0)
    assert [op for op, _ in rec.done] == ["alpha", "beta"] and peaks == {"alpha": 12_288, "beta": 12_288}


# ------------------------------------------------------------------------------------ race

def test_a_worker_that_exits_between_read_and_poll_is_not_a_crash(fake, monkeypatch):
    """Deterministic version of the race: poll() waits for the worker to finish first, as if the
    parent had been descheduled right after reading the file."""
    python, _ = fake

    class ExitsBeforePoll(subprocess.Popen):
        def poll(self):
            self.wait()
            return super().poll()

    monkeypatch.setattr(subprocess, "Popen", ExitsBeforePoll)
    rows, _ = run_isolated_tasks([task("alpha", "v0", "v1")], python=python)
    assert [(r.name, r.status) for r in rows] == [("v0", "ok"), ("v1", "ok")]


# ---------------------------------------------------------------------------- the suite

@pytest.fixture
def no_gpu(monkeypatch):
    """Hide any GPU from the suite (as in test_cli.py): has_gpu everywhere it is bound, and torch."""
    import torch

    import kernelab.gpu as gpu
    import kernelab.gpu.device as device
    import kernelab.gpu.environment as environment
    import kernelab.gpu.module as module
    import kernelab.gpu.nvml as nvml
    import kernelab.gpu.ptx as ptx

    for mod in (gpu, device, environment, module, ptx):
        monkeypatch.setattr(mod, "has_gpu", lambda: False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(device, "driver_cuda_version", lambda: None)
    monkeypatch.setattr(nvml, "driver_version", lambda: None)


def test_run_suite_static(no_gpu, tmp_path):
    messages = []
    res = run_suite(Selection(ops=["vector_add"], quick=True), results_dir=str(tmp_path), progress=messages.append)
    assert res.mode == "static" and res.schema == SCHEMA
    assert res.device["name"] == "H200" and res.device["arch"] == "sm_90"
    op = select_ops(Selection(ops=["vector_add"]))[0]
    every = [v.name for v in op.variants()]
    assert len(res.rows) == len(every) * 2  # each variant x the largest case of each of 2 dtypes
    assert all(r.status == "static" and r.metrics["floor_s"] > 0 and r.resources for r in res.rows)
    assert any("timing needs a GPU" in n for n in res.notes)
    assert res.selection["quick"] is True and res.selection["ops"] == ["vector_add"]
    assert res.wall_s > 0 and res.peak_gpu_memory_bytes is None
    assert messages == [f"vector_add/{v}" for v in every]  # one progress message per variant compiled
    assert res.path.parent == tmp_path and res.path.suffix == ".json"
    back = load(res.path)
    assert back.to_dict()["rows"] == res.to_dict()["rows"] and back.mode == "static"


def test_run_suite_without_results_dir_writes_nothing(no_gpu, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = run_suite(Selection(ops=["vector_add"], variants=["v0"], quick=True), results_dir=None)
    assert len(res.rows) == 2 and getattr(res, "path", None) is None
    assert list(tmp_path.iterdir()) == []


def _names(items) -> list[str]:
    return [x.name for x in items]


def test_selection_ops():
    assert _names(select_ops(Selection(ops=["vector_add"]))) == ["vector_add"]
    assert _names(select_ops(Selection(ops=["vector_*"]))) == ["vector_add"]
    every = _names(select_ops(Selection()))
    assert "vector_add" in every and "gemm" in every and len(every) >= 5
    with pytest.raises(KeyError, match="known ops: .*vector_add"):
        select_ops(Selection(ops=["nope"]))


def test_selection_variants():
    (op,) = select_ops(Selection(ops=["vector_add"]))
    every = _names(op.variants())
    assert every[:4] == ["v0_naive", "v1_vec16", "v2_persistent", "v3_ticket"]
    assert _names(select_variants(op, Selection())) == every
    assert _names(select_variants(op, Selection(variants=["v1"]))) == ["v1_vec16"]  # the vN prefix
    assert _names(select_variants(op, Selection(variants=["v1_vec16", "v3"]))) == ["v1_vec16", "v3_ticket"]
    assert _names(select_variants(op, Selection(variants=["v2_p*"]))) == ["v2_persistent"]  # a glob
    assert _names(select_variants(op, Selection(variants=["v[0-1]*"]))) == ["v0_naive", "v1_vec16"]
    assert _names(select_variants(op, Selection(variants=["v"]))) == []  # a prefix is a whole vN, not a letter
    assert _names(select_variants(op, Selection(variants=["peers"]))) == []  # peers only
    assert all(not v.wrong for v in select_variants(op, Selection()))  # known-wrong kernels never run


def test_selection_cases():
    (op,) = select_ops(Selection(ops=["vector_add"]))
    labels = lambda sel: [c.label for c in select_cases(op, sel)]  # noqa: E731
    assert len(labels(Selection())) == 6
    assert labels(Selection(quick=True)) == ["268435456 float32", "268435456 bfloat16"]
    assert labels(Selection(dtypes=["bfloat16"])) == ["1048576 bfloat16", "16777216 bfloat16", "268435456 bfloat16"]
    assert labels(Selection(shapes=["16777216"])) == ["16777216 float32", "16777216 bfloat16"]  # substring
    assert labels(Selection(shapes=["2684*32"])) == ["268435456 float32"]  # glob
    assert labels(Selection(shapes=["nomatch"])) == []


def test_make_plan():
    (plan,) = make_plan(Selection(ops=["vector_add"], variants=["v1"], dtypes=["float32"]))
    assert plan.op.name == "vector_add" and _names(plan.variants) == ["v1_vec16"] and len(plan.cases) == 3
    assert plan.n_candidates == 3 * (1 + 4)
    (peers_only,) = make_plan(Selection(ops=["vector_add"], variants=["peers"]))
    assert peers_only.variants == [] and len(peers_only.cases) == 6
    assert make_plan(Selection(ops=["vector_add"], variants=["peers"], peers=False)) == []  # nothing to run
    assert make_plan(Selection(ops=["vector_add"], shapes=["nomatch"])) == []


# ----------------------------------------------------------- the suite's GPU-mode plumbing

class _FakeDevice:
    index = 0

    def to_dict(self):
        return {"name": "Fake GPU", "arch": "sm_90"}


@pytest.fixture
def gpu_mode_with_fake_worker(fake, monkeypatch):
    """run_suite's GPU path with everything that needs a GPU replaced: the device, its clocks,
    the ceilings, the precompile step, and the worker (the fake interpreter above)."""
    import kernelab.gpu as gpu
    import kernelab.gpu.nvml as nvml
    import kernelab.suite as suite
    import kernelab.suite_worker as suite_worker

    python, workers = fake
    real = suite_worker.run_isolated_tasks
    monkeypatch.setattr(gpu, "has_gpu", lambda: True)
    monkeypatch.setattr(gpu, "device_info", lambda index=None: _FakeDevice())
    monkeypatch.setattr(nvml, "sample", lambda index=0: nvml.ClockSample())
    monkeypatch.setattr(suite, "_ceilings", lambda progress: {})
    monkeypatch.setattr(suite, "precompile", lambda plans, progress=None: {"compiled": 0, "cached": 0, "failed": 0})
    monkeypatch.setattr(suite_worker, "run_isolated_tasks",
                        lambda tasks, progress=None, on_row=None, **kw: real(tasks, progress, on_row, python, **kw))
    return workers


def test_gpu_mode_plumbing(gpu_mode_with_fake_worker, tmp_path):
    res = run_suite(Selection(ops=["vector_add"], quick=True, peers=False), results_dir=str(tmp_path))
    assert res.mode == "gpu" and res.device["name"] == "Fake GPU"
    every = [v.name for v in select_ops(Selection(ops=["vector_add"]))[0].variants()]
    assert [(r.name, r.case["label"]) for r in res.rows] == [
        (v, c) for c in ("268435456 float32", "268435456 bfloat16") for v in every]
    assert all(r.status == "ok" for r in res.rows) and len(gpu_mode_with_fake_worker()) == 1
    assert res.phases["per_op_peak_gpu_memory_bytes"] == {"vector_add": 12 * 2**28} == {"vector_add": res.peak_gpu_memory_bytes}
    per_op = res.phases["per_op_s"]
    assert set(per_op) == {"(worker start-up)", "vector_add"} and per_op["(worker start-up)"] == 0.25
    assert 0 < per_op["vector_add"] <= res.phases["ops_s"]
    assert res.path.is_file() and not list(tmp_path.glob("partial-*.jsonl"))  # the partial rows file is replaced


def test_gpu_mode_survives_a_crash(gpu_mode_with_fake_worker, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_CRASH", "v1_vec16")
    res = run_suite(Selection(ops=["vector_add"], quick=True, peers=False), results_dir=str(tmp_path))
    assert [(r.name, r.status) for r in res.rows if r.name == "v1_vec16"] == [("v1_vec16", "crash")] * 2
    assert sum(r.status == "ok" for r in res.rows) == len(res.rows) - 2 and res.path.is_file()


def test_a_fault_the_check_reports_restarts_the_worker_without_blaming_the_next(fake):
    """The real worker writes the crash row itself (the check caught the sticky fault), says
    'restart' and quits: the parent keeps that row and gives the rest to a fresh worker."""
    python, workers = fake
    rec = Recorder()
    rows, peaks = rec.run([task("alpha", "v0", "faults_in_check", "v2"), task("beta", "faults_in_check_b")], python)
    assert [(r.op, r.name, r.status) for r in rows] == [
        ("alpha", "v0", "ok"), ("alpha", "faults_in_check", "crash"), ("alpha", "v2", "ok"),
        ("beta", "faults_in_check_b", "crash")]
    assert "illegal address" in rows[1].detail and pid(rows[1]) == pid(rows[0]) != pid(rows[2])
    assert len(workers()) == 2  # a fresh one after the first fault; the second fault left nothing to run
    assert [op for op, _ in rec.done] == ["alpha", "beta"]


def test_a_case_keeps_one_timing_mode_once_a_candidate_went_to_graph_mode():
    from kernelab.suite_worker import CaseModes

    modes = CaseModes()
    a, b = ("sum", "268435456 bfloat16"), ("sum", "262144 bfloat16")
    assert modes.after_cold(a, False) is None  # torch eager: cold
    assert modes.after_cold(a, True) == "launch-bound"  # torch.compile: host-bound, graph
    assert modes.after_cold(a, False) == "case"  # our variant follows the case into graph mode
    assert modes.after_cold(b, False) is None  # another case is not affected
    modes.forget()
    assert modes.after_cold(a, False) is None


def test_precompile_counts_and_names_the_slowest_compiles(monkeypatch):
    """Compile times per variant (a fake compiler): cached and failed ones are counted, not ranked."""
    import kernelab.ops.build as build
    from kernelab.cli import _phases_line
    from kernelab.suite import SLOWEST_COMPILES, precompile

    plans = make_plan(Selection(ops=["softmax", "sum"]))
    variants = [v for p in plans for v in p.variants]
    assert len(variants) > SLOWEST_COMPILES + 2
    seconds = {v.id: 0.1 * i for i, v in enumerate(variants)}
    cached, broken = variants[-1].id, variants[-2].id  # the two slowest by the table, but not compiled now

    class Module:
        def __init__(self, vid):
            self.cache_hit, self.compile_seconds = vid == cached, seconds[vid]

    def fake_compile(op, variant):
        if variant.id == broken:
            raise RuntimeError("does not compile")
        return Module(variant.id)
    monkeypatch.setattr(build, "compile_variant", fake_compile)
    out = precompile(plans, workers=2)
    assert (out["compiled"], out["cached"], out["failed"]) == (len(variants) - 2, 1, 1)
    expect = sorted((vid for vid in seconds if vid not in (cached, broken)), key=lambda vid: -seconds[vid])
    assert [vid for vid, _ in out["slowest"]] == expect[:SLOWEST_COMPILES]
    assert out["compiler_s"] == pytest.approx(sum(seconds.values()) - seconds[broken])
    line = _phases_line({"precompile": {**out, "wall_s": 3.0}})
    assert f"slowest {expect[0]} " in line and expect[3] not in line  # three named on the console


def test_run_suite_static_occupancy_uses_each_dtypes_block(no_gpu, tmp_path):
    """transpose v4 runs fp32 at `@block_f32 512` and bf16 at `@block 256`: each row's occupancy is its own
    dtype kernel's at its own block (it was one block, the worst kernel's, for every row)."""
    res = run_suite(Selection(ops=["transpose"], variants=["v4"], quick=True), results_dir=None)
    by_dtype = {r.case["dtype"]: r.occupancy for r in res.rows}
    assert by_dtype["float32"]["block"] == 512 and by_dtype["bfloat16"]["block"] == 256
    # 32 registers at 512 threads: 4 blocks an SM (2048 threads); bf16 at 256 with 64 registers: 4 blocks.
    assert by_dtype["float32"]["blocks_per_sm"] * 512 == 2048, by_dtype["float32"]


def test_cli_kernel_blocks_follow_the_kernel_name_suffix():
    from kernelab.cli import _kernel_blocks

    op = select_ops(Selection(ops=["transpose"]))[0]
    v4 = op.variant("v4_grouped_order")

    class Compiled:
        def kernel_names(self):
            return ["transpose_f32", "transpose_bf16", "transpose_shifted_f32", "transpose_shifted_bf16", "helper"]

    blocks = _kernel_blocks(Compiled(), v4, 128)
    assert blocks == {"transpose_f32": 512, "transpose_bf16": 256, "transpose_shifted_f32": 512,
                      "transpose_shifted_bf16": 256, "helper": 256}


def test_run_suite_static_occupancy_follows_the_plan_and_the_vec_kernel(no_gpu, tmp_path):
    """layernorm v4 has no `@block` (its plan picks a block_t<N> instance per width): its static rows carry the
    occupancy of the instance the bench shape launches (bf16 256 threads, fp32 512), where they had none; v5's
    rows carry its whole-vector build's (layernorm_vec_*, `@vec_kernel`)."""
    res = run_suite(Selection(ops=["layernorm"], variants=["v4", "v5"], quick=True), results_dir=None)
    occ = {(r.name, r.case["dtype"]): r.occupancy for r in res.rows if list(r.case.get("shape", ())) == [32768, 8192]}
    assert occ[("v4_pinned_onebar", "bfloat16")]["block"] == 256
    assert occ[("v4_pinned_onebar", "float32")]["block"] == 512
    assert occ[("v4_pinned_onebar", "bfloat16")]["blocks_per_sm"] >= 4  # 64 registers at most: 1024 threads an SM
    assert occ[("v5_l2_two_pass", "bfloat16")]["block"] == 256 and occ[("v5_l2_two_pass", "float32")]["block"] == 512
    assert occ[("v5_l2_two_pass", "bfloat16")]["blocks_per_sm"] == 6  # 37-38 registers: six 256-thread rows an SM


def test_static_kernel_names_the_launched_kernel_and_block():
    from kernelab.ops.base import Case

    ln = select_ops(Selection(ops=["layernorm"]))[0]
    v4, v5 = ln.variant("v4_pinned_onebar"), ln.variant("v5_l2_two_pass")
    assert ln.static_kernel(v4, Case((32768, 8192), "bfloat16")) == ("layernorm_block_t256_bf16", 256)
    assert ln.static_kernel(v4, Case((32768, 8192), "float32")) == ("layernorm_block_t512_f32", 512)
    assert ln.static_kernel(v5, Case((32768, 8192), "bfloat16")) == ("layernorm_vec_bf16", 256)
    assert ln.static_kernel(v5, Case((32768, 8192), "float32")) == ("layernorm_vec_f32", 512)
    assert ln.static_kernel(v5, Case((5, 1000), "float32", offset=1)) == ("layernorm_f32", 512)
    assert ln.static_kernel(v5, Case((5, 1000), "bfloat16", layout="misaligned_params")) == ("layernorm_bf16", 256)
    assert ln.static_kernel(v5, Case((5, 1001), "bfloat16")) == ("layernorm_bf16", 256)
    tr = select_ops(Selection(ops=["transpose"]))[0]
    assert tr.static_kernel(tr.variant("v4_grouped_order"), Case((16384, 16384), "float32")) == ("transpose_f32", 512)


def test_cli_kernel_blocks_take_threads_and_instance_names():
    """`kernelab inspect --op`: softmax headers give `@threads` (v13: 1024), not `@block`, and instances named
    *_t<N>_<dtype> carry their own block (they were all inspected at the default, 256)."""
    from kernelab.cli import _kernel_blocks

    sm = select_ops(Selection(ops=["softmax"]))[0]
    ln = select_ops(Selection(ops=["layernorm"]))[0]

    class Compiled:
        def __init__(self, names):
            self.names = names

        def kernel_names(self):
            return self.names

    assert _kernel_blocks(Compiled(["softmax_f32", "softmax_bf16", "helper"]), sm.variant("v13_packed_regs"), 256) \
        == {"softmax_f32": 1024, "softmax_bf16": 1024, "helper": 1024}
    names = ["layernorm_block_t1024_bf16", "layernorm_block_t64_f32", "layernorm_stream_t512_f32", "layernorm_bf16"]
    assert _kernel_blocks(Compiled(names), ln.variant("v4_pinned_onebar"), 256) == {
        "layernorm_block_t1024_bf16": 1024, "layernorm_block_t64_f32": 64, "layernorm_stream_t512_f32": 512,
        "layernorm_bf16": 256}
