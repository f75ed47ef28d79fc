"""The isolation worker with plain Python children: results, exceptions, deaths, hangs, JSON lines.

The task functions below run in the child (the worker imports this file by name, with this
folder on the child's sys.path); the tests run in the parent.
"""

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from kernelab.check.worker import Outcome, Task, leak_verdict, note, read_results, run_task, run_tasks

HERE = str(Path(__file__).resolve().parent)
MOD = Path(__file__).stem


# ---- tasks (run in the child) ---------------------------------------------------------------

def task_double(x):
    note("doubling")
    return {"value": 2 * x}


def task_result(ok, reason=None):
    return {"ok": ok, "reason": reason, "detail": f"reported {reason}"}


def task_raise():
    raise KeyError("no such variant 'v9'")


def task_sticky():
    raise RuntimeError("CUDA error: an illegal memory access was encountered")


def task_os_exit():
    os._exit(3)


def task_sys_exit():
    sys.exit("fatal: the candidate gave up")


def task_segfault():
    os.kill(os.getpid(), signal.SIGSEGV)


def task_hang(pid_file=None):
    if pid_file:  # a grandchild that must die with the child's process group
        import subprocess

        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        Path(pid_file).write_text(str(p.pid))
    note("waiting for a flag nobody sets")
    time.sleep(600)


def task_object():
    return {"path": Path("/tmp")}  # not JSON: sent as its string form


# ---- tests (run in the parent) ---------------------------------------------------------------

def _task(name, *args, timeout_s=30.0, **kw):
    return Task(f"{MOD}:{name}", args=list(args), kwargs=kw, id=name, timeout_s=timeout_s, sys_path=[HERE])


def test_ok_task_returns_its_value():
    o = run_task(_task("task_double", 21))
    assert o.status == "ok" and o.result == {"value": 42} and o.returncode == 0
    assert o.last_note == "doubling"


def test_a_failed_result_keeps_its_reason():
    o = run_task(_task("task_result", False, "mismatch"))
    assert o.status == "failed" and o.reason == "mismatch" and o.detail == "reported mismatch"
    assert run_task(_task("task_result", True)).status == "ok"
    assert run_task(_task("task_result", False, "crash")).status == "crash"


def test_exception_is_a_failure_with_traceback():
    o = run_task(_task("task_raise"))
    assert o.status == "failed" and o.reason == "error"
    assert "KeyError" in o.detail and "no such variant" in o.detail and "task_raise" in o.detail


def test_sticky_cuda_error_text_is_a_crash():
    o = run_task(_task("task_sticky"))
    assert o.status == "crash" and o.reason == "crash" and "illegal memory access" in o.detail


@pytest.mark.parametrize("name,expect", [("task_os_exit", "exited with code 3"),
                                         ("task_sys_exit", "fatal: the candidate gave up"),
                                         ("task_segfault", "killed by SIGSEGV")])
def test_a_dying_child_is_a_crash(name, expect):
    o = run_task(_task(name))
    assert o.status == "crash" and expect in o.detail, o.detail


def test_hang_is_killed_at_the_timeout_with_its_process_group(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    t0 = time.monotonic()
    o = run_task(_task("task_hang", timeout_s=1.5, pid_file=str(pid_file)))
    took = time.monotonic() - t0
    assert o.status == "hang" and o.reason == "hang"
    assert "no result after 1.5 s" in o.detail and "waiting for a flag nobody sets" in o.detail
    assert 1.5 <= took < 20
    grandchild = int(pid_file.read_text())
    for _ in range(100):  # reaped by init once killed; give it a moment
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the hung task's grandchild {grandchild} survived the watchdog")


def test_a_hang_during_start_up_is_reported_as_such(tmp_path):
    (tmp_path / "slow_import.py").write_text("import time\ntime.sleep(600)\ndef f():\n    return 1\n")
    task = Task("slow_import:f", id="slow", timeout_s=30, startup_timeout_s=1.0, sys_path=[str(tmp_path)])
    o = run_task(task)
    assert o.status == "hang" and "start-up" in o.detail


def test_non_json_results_are_stringified():
    o = run_task(_task("task_object"))
    assert o.status == "ok" and o.result == {"path": "/tmp"}


def test_run_tasks_appends_json_lines_as_outcomes_arrive_and_goes_on(tmp_path):
    results = tmp_path / "out" / "results.jsonl"
    seen = []
    tasks = [_task("task_double", 1), _task("task_hang", timeout_s=1.0), _task("task_os_exit"),
             Task(f"{MOD}:task_double", args=[2], id="again", sys_path=[HERE])]

    def on_outcome(o):
        seen.append((o.id, o.status, len(read_results(results))))

    outcomes = run_tasks(tasks, results, on_outcome=on_outcome)
    assert [o.status for o in outcomes] == ["ok", "hang", "crash", "ok"]
    # each line was on disk before the next task started
    assert seen == [("task_double", "ok", 1), ("task_hang", "hang", 2), ("task_os_exit", "crash", 3), ("again", "ok", 4)]
    lines = read_results(results)
    assert [l["id"] for l in lines] == ["task_double", "task_hang", "task_os_exit", "again"]
    assert lines[1]["status"] == "hang" and lines[3]["result"] == {"value": 4} and "time" in lines[0]
    assert Outcome.from_dict(lines[2]).status == "crash"


def test_resume_skips_what_the_file_already_has(tmp_path):
    results = tmp_path / "r.jsonl"
    run_tasks([_task("task_double", 1)], results)
    with open(results, "a") as f:
        f.write('{"id": "cut short by a kil')  # a writer killed mid-line
    outcomes = run_tasks([_task("task_double", 1), Task(f"{MOD}:task_double", args=[5], id="new", sys_path=[HERE])],
                         results, resume=True)
    assert [o.result for o in outcomes] == [{"value": 2}, {"value": 10}]
    assert [r["id"] for r in read_results(results)] == ["task_double", "new"]


def test_task_validation():
    with pytest.raises(ValueError, match="package.module:function"):
        Task("no_colon")
    with pytest.raises(ValueError, match="JSON-able"):
        Task("m:f", args=[object()])
    with pytest.raises(ValueError, match="unique"):
        run_tasks([_task("task_double", 1), _task("task_double", 2)])


def test_leak_verdict():
    base = {"allocated": 0, "process_used": 600 << 20}
    assert leak_verdict({"before": base, "after": base}, 1 << 20, 256 << 20) is None
    grown = {"allocated": 64 << 20, "process_used": 600 << 20}
    msg = leak_verdict({"before": base, "after": grown}, 1 << 20, 256 << 20)
    assert "grew by 64.00 MiB" in msg and "tensors outlived" in msg
    nvml = {"allocated": 0, "process_used": 1000 << 20}
    assert "NVML" in leak_verdict({"before": base, "after": nvml}, 1 << 20, 256 << 20)
    assert leak_verdict({"before": {"allocated": 0, "process_used": None},
                         "after": {"allocated": 0, "process_used": None}}, 0, 0) is None


def test_note_is_silent_outside_a_worker(monkeypatch):
    monkeypatch.delenv("KERNELAB_WORKER_PROGRESS", raising=False)
    note("nothing happens")


def test_outcome_json_round_trip():
    o = Outcome(id="x", status="leak", reason="leak", detail="d", memory={"before": {}, "after": {}})
    assert Outcome.from_dict(json.loads(json.dumps(o.to_dict()))) == o


def task_slow_setup_then_steps(setup_s, step_s, steps):
    time.sleep(setup_s)  # a CUDA context or a compile: slow, and not a step
    for i in range(steps):
        note(f"step {i}", step=True)
        time.sleep(step_s)
    return {"value": steps}


def test_step_timeout_leaves_the_set_up_its_own_limit():
    """Set-up 1.5 s, steps 0.1 s, step limit 1 s: the set-up is timed by timeout_s, each step by its own."""
    task = Task(f"{MOD}:task_slow_setup_then_steps", args=[1.5, 0.1, 3], id="steps", timeout_s=30,
                step_timeout_s=1.0, sys_path=[HERE])
    o = run_task(task)
    assert o.status == "ok" and o.result == {"value": 3}, o.detail
    # the whole task (1.8 s) runs past step_timeout_s: without steps it would hang at timeout_s only
    assert o.wall_s > 1.8


def test_a_step_past_its_limit_is_a_hang_naming_the_step():
    task = Task(f"{MOD}:task_slow_setup_then_steps", args=[0.0, 600, 2], id="steps", timeout_s=30,
                step_timeout_s=1.0, sys_path=[HERE])
    t0 = time.monotonic()
    o = run_task(task)
    assert o.status == "hang" and "no result after 1 s in one step of the task" in o.detail, o.detail
    assert "Last step: step 0" in o.detail and time.monotonic() - t0 < 20


def test_steps_do_not_extend_a_task_without_a_step_timeout():
    task = Task(f"{MOD}:task_slow_setup_then_steps", args=[0.0, 1.0, 600], id="steps", timeout_s=1.5,
                sys_path=[HERE])
    o = run_task(task)
    assert o.status == "hang" and "no result after 1.5 s in the task" in o.detail, o.detail


def test_step_timeout_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        Task(f"{MOD}:task_double", step_timeout_s=0)
