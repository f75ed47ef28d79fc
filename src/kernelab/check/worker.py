"""Run tasks in child processes under a watchdog, so a crash, a hang or a leak is one outcome, not the end.

A task is an importable function ("package.module:function") and JSON-able arguments. Each
runs in a fresh `python -m kernelab.check._child` process:

    from kernelab.check.worker import Task, run_tasks
    outcomes = run_tasks([Task("kernelab.check.tasks:check_variant_task", kwargs={...}, id="v1 fp32",
                               timeout_s=30, gpu=True)], results_path="results.jsonl")

Outcomes (Outcome.status):
  ok      the task returned (a dict with "ok": False is a failure, see below);
  failed  the task returned {"ok": False, "reason": code, ...} (a CheckResult), or raised a
          Python exception (reason "compile_error" or "error", with the traceback);
  crash   the child hit a sticky CUDA error (illegal/misaligned address, device assert, trap:
          the text is in `detail`), or died without a result (signal, os._exit, sys.exit);
  hang    the task ran past `timeout_s` (timed from when the child starts the task, after its
          imports), or one of its steps past `step_timeout_s` (see note), and the watchdog
          killed the child's process group;
  leak    (gpu tasks) after the task and a gc, torch.cuda.memory_allocated() is more than
          `leak_bytes` above its value before the task, or the process's NVML memory grew
          by more than `process_leak_bytes`.
Each outcome is appended to `results_path` as one JSON line, flushed and fsynced as it
arrives, so a run killed half-way keeps everything it had; `resume=True` skips task ids
already in the file. Children report progress with `note(msg)`; a hang reports the last note.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

STATUSES = ("ok", "failed", "crash", "hang", "leak")
PROGRESS_ENV = "KERNELAB_WORKER_PROGRESS"
_START = "[task-start]"
_STEP = "[step]"
_TAIL = 4000  # characters of stdout/stderr kept in an outcome


def note(msg: str, step: bool = False) -> None:
    """Record a progress step (in a worker child; a no-op elsewhere). A hang's outcome names the last one.

    step=True also restarts the watchdog's clock when the task has a `step_timeout_s`: from then on
    each step gets that long from its note, and the set-up before the first step keeps `timeout_s`.
    """
    path = os.environ.get(PROGRESS_ENV)
    if not path:
        return
    with open(path, "a") as f:
        now = f"{time.time():.3f}"
        f.write((f"{now} {_STEP}\n" if step else "") + f"{now} {msg}\n")


@dataclass
class Task:
    target: str  # "package.module:function"
    args: list = field(default_factory=list)
    kwargs: dict = field(default_factory=dict)
    id: str = ""
    timeout_s: float = 60.0  # for the task itself, counted from when the child starts it
    startup_timeout_s: float = 180.0  # for the child's interpreter and imports (torch takes seconds)
    # per step, once the task marks one (note(msg, step=True)); None: timeout_s for the whole task.
    # For a task whose set-up (a CUDA context, a compile) is slow and variable but whose steps must
    # each be quick: a probe that expects to hang gives its steps seconds and its set-up a minute.
    step_timeout_s: float | None = None
    gpu: bool = False  # measure GPU memory around the task (leak check) and report it
    leak_bytes: int = 1 << 20
    process_leak_bytes: int = 256 << 20  # NVML per-process: module loads and lazy kernels add a few MiB
    sys_path: list = field(default_factory=list)  # prepended to the child's sys.path
    env: dict = field(default_factory=dict)  # added to the child's environment

    def __post_init__(self):
        if ":" not in self.target or not all(self.target.split(":", 1)):
            raise ValueError(f"task target {self.target!r} must be 'package.module:function'")
        if self.timeout_s <= 0 or self.startup_timeout_s <= 0 or (self.step_timeout_s is not None
                                                                    and self.step_timeout_s <= 0):
            raise ValueError("task timeouts must be positive")
        try:
            json.dumps([self.args, self.kwargs, self.env, self.sys_path])
        except (TypeError, ValueError) as e:
            raise ValueError(f"task {self.id or self.target}: arguments must be JSON-able ({e}); pass names, "
                             "numbers, lists and dicts (e.g. Case.to_dict()), not objects") from None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Outcome:
    id: str
    status: str  # one of STATUSES
    reason: str | None = None  # the failure's reason code (crash/hang/leak repeat the status)
    detail: str = ""
    result: object = None  # what the task returned (JSON)
    returncode: int | None = None
    wall_s: float = 0.0
    memory: dict | None = None
    last_note: str | None = None
    stderr_tail: str = ""
    task: dict | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Outcome":
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})


def _src_root() -> str:
    return str(Path(__file__).resolve().parents[2])  # .../src, which holds the kernelab package


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - _TAIL))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def _last_note(path: Path) -> str | None:
    try:
        lines = [l for l in path.read_text().splitlines() if l.strip()]
    except OSError:
        return None
    for line in reversed(lines):
        msg = line.split(" ", 1)[1] if " " in line else line
        if not msg.startswith("["):
            return msg
    return None


def _progress(path: Path) -> tuple[bool, int]:
    """(has the task started, how many steps has it marked) from the child's progress file."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return False, 0
    marks = [l.split(" ", 1)[1] if " " in l else l for l in lines]
    return _START in marks, marks.count(_STEP)


def _signal_name(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


def _kill_group(proc) -> None:
    """SIGKILL the child's own session (start_new_session=True): the child and anything it started."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_task(task: Task) -> Outcome:
    """Run one task in a child process and classify what happened. Never raises for the task's faults."""
    tmp = Path(tempfile.mkdtemp(prefix="kernelab-worker-"))
    (tmp / "task.json").write_text(json.dumps(task.to_dict()))
    progress, result_path = tmp / "progress", tmp / "result.json"
    env = {**os.environ, **{k: str(v) for k, v in task.env.items()}, PROGRESS_ENV: str(progress)}
    env["PYTHONPATH"] = os.pathsep.join([_src_root()] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.setdefault("PYTHONUNBUFFERED", "1")
    t0 = time.monotonic()
    with open(tmp / "stdout", "wb") as out, open(tmp / "stderr", "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "kernelab.check._child", str(tmp)], stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        started_at, hung, unkillable = None, False, False
        steps, step_at, in_step = 0, None, False  # steps marked so far; when the parent saw the last one
        try:
            while True:
                try:
                    proc.wait(timeout=0.05)
                    break
                except subprocess.TimeoutExpired:
                    pass
                now = time.monotonic()
                started, marked = _progress(progress)
                if started_at is None and started:
                    started_at = now
                if marked > steps:
                    steps, step_at = marked, now
                    in_step = task.step_timeout_s is not None
                if in_step:
                    deadline = step_at + task.step_timeout_s
                elif started_at is not None:
                    deadline = started_at + task.timeout_s
                else:
                    deadline = t0 + task.startup_timeout_s
                if now > deadline:
                    hung = True
                    _kill_group(proc)
                    try:
                        proc.wait(timeout=60)  # a GPU context with a spinning kernel can take a while to tear down
                    except subprocess.TimeoutExpired:
                        unkillable = True
                    break
        except BaseException:  # interrupted (Ctrl-C): take the child down with us, not leave it orphaned
            _kill_group(proc)
            raise
    wall = time.monotonic() - t0
    base = dict(id=task.id or task.target, returncode=proc.returncode, wall_s=wall, last_note=_last_note(progress),
                stderr_tail=_tail(tmp / "stderr"), task=task.to_dict())
    outcome = _classify(task, base, hung, started_at is not None, unkillable, result_path, in_step)
    _cleanup(tmp)
    return outcome


def _classify(task: Task, base: dict, hung: bool, started: bool, unkillable: bool, result_path: Path,
              in_step: bool = False) -> Outcome:
    if hung:
        limit = task.step_timeout_s if in_step else task.timeout_s if started else task.startup_timeout_s
        where = ("one step of the task" if in_step else "the task" if started
                 else "the child's start-up (imports, before the task began)")
        detail = (f"no result after {limit:g} s in {where}; the watchdog killed the child's process group"
                  + (" (it had not exited 60 s after SIGKILL)" if unkillable else "")
                  + (f". Last step: {base['last_note']}" if base["last_note"] else ""))
        return Outcome(status="hang", reason="hang", detail=detail, **base)
    if not result_path.is_file():
        rc = base["returncode"]
        how = f"was killed by {_signal_name(rc)}" if rc is not None and rc < 0 else f"exited with code {rc}"
        err = base["stderr_tail"].strip().splitlines()
        last = err[-1] if err else ""
        detail = f"the child {how} without a result" + (f": {last}" if last else "")
        if base["last_note"]:
            detail += f". Last step: {base['last_note']}"
        return Outcome(status="crash", reason="crash", detail=detail, **base)
    res = json.loads(result_path.read_text())
    memory = res.get("memory")
    if res["kind"] == "raised":
        text = f"{res['type']}: {res['message']}"
        if res.get("sticky"):
            return Outcome(status="crash", reason="crash", detail=text, memory=memory, **base)
        detail = text + "\n" + res.get("traceback", "")[-_TAIL:]
        return Outcome(status="failed", reason=res.get("reason") or "error", detail=detail, memory=memory, **base)
    value = res.get("value")
    status, reason, detail = "ok", None, ""
    if isinstance(value, dict) and "ok" in value:
        if not value["ok"]:
            reason = value.get("reason") or "error"
            status = reason if reason in ("crash", "hang", "leak") else "failed"
            detail = str(value.get("detail", ""))
        else:
            detail = str(value.get("detail", ""))
    if status == "ok" and memory:
        leak = leak_verdict(memory, task.leak_bytes, task.process_leak_bytes)
        if leak:
            status, reason, detail = "leak", "leak", leak
    return Outcome(status=status, reason=reason, detail=detail, result=value, memory=memory, **base)


def leak_verdict(memory: dict, leak_bytes: int, process_leak_bytes: int) -> str | None:
    """A sentence if GPU memory did not come back to its baseline, else None."""
    before, after = memory.get("before") or {}, memory.get("after") or {}
    lines = []
    if before.get("allocated") is not None and after.get("allocated") is not None:
        grew = after["allocated"] - before["allocated"]
        if grew > leak_bytes:
            lines.append(f"torch.cuda.memory_allocated() grew by {grew / 2**20:.2f} MiB over the task (limit "
                         f"{leak_bytes / 2**20:.2f} MiB): tensors outlived it")
    if before.get("process_used") is not None and after.get("process_used") is not None:
        grew = after["process_used"] - before["process_used"]
        if grew > process_leak_bytes:
            lines.append(f"the process's GPU memory (NVML) grew by {grew / 2**20:.1f} MiB (limit "
                         f"{process_leak_bytes / 2**20:.0f} MiB): memory allocated outside torch was not freed")
    return "; ".join(lines) or None


def _cleanup(tmp: Path) -> None:
    for p in tmp.iterdir():
        try:
            p.unlink()
        except OSError:
            pass
    try:
        tmp.rmdir()
    except OSError:
        pass


def append_jsonl(path, record: dict) -> None:
    """Append one JSON line and make it durable before returning."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record, default=str) + "\n"
    with open(path, "a+b") as f:
        f.seek(0, os.SEEK_END)
        if f.tell():
            f.seek(-1, os.SEEK_END)
            if f.read(1) != b"\n":  # a line cut short by a killed writer: start a new one
                line = "\n" + line
        f.write(line.encode())
        f.flush()
        os.fsync(f.fileno())


def read_results(path) -> list[dict]:
    """Every complete JSON line of a results file (a line cut short by a killed writer is skipped)."""
    path = Path(path)
    if not path.is_file():
        return []
    out = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def run_tasks(tasks, results_path=None, *, resume: bool = False, on_outcome=None) -> list[Outcome]:
    """Run tasks one after another, each in its own child; append each outcome to `results_path` as it arrives."""
    tasks = list(tasks)
    ids = [t.id or f"{t.target}#{i}" for i, t in enumerate(tasks)]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"task ids must be unique within a run (repeated: {dup})")
    done = {}
    if resume and results_path:
        done = {r["id"]: r for r in read_results(results_path) if "id" in r}
    outcomes = []
    for task_id, task in zip(ids, tasks):
        if task_id in done:
            outcomes.append(Outcome.from_dict(done[task_id]))
            continue
        task.id = task_id
        o = run_task(task)
        if results_path:
            append_jsonl(results_path, {**o.to_dict(), "time": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
        outcomes.append(o)
        if on_outcome is not None:
            on_outcome(o)
    return outcomes


# ---- the child side -------------------------------------------------------------------------

def _gpu_memory() -> dict:
    import gc

    import torch

    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    free, total = torch.cuda.mem_get_info()  # also creates the context before the baseline is read
    return {"allocated": int(torch.cuda.memory_allocated()), "reserved": int(torch.cuda.memory_reserved()),
            "device_used": int(total - free), "process_used": _nvml_process_used()}


def _nvml_process_used() -> int | None:
    """This process's GPU memory as NVML sees it (None where NVML cannot match the pid, e.g. in some containers)."""
    try:
        import pynvml

        pynvml.nvmlInit()
        used, found = 0, False
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h):
                if p.pid == os.getpid() and p.usedGpuMemory is not None:
                    used += int(p.usedGpuMemory)
                    found = True
        return used if found else None
    except Exception:  # NVML is an annotation here: missing or refusing, the torch numbers still decide
        return None


def _jsonable(value):
    if hasattr(value, "to_dict"):
        value = value.to_dict()
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return json.loads(json.dumps(value, default=str))


def _child_main(tmp: str) -> None:
    tmp_path = Path(tmp)
    spec = json.loads((tmp_path / "task.json").read_text())
    for p in reversed(spec.get("sys_path") or []):
        sys.path.insert(0, p)
    note("[child-start]")
    out: dict = {}
    sticky = False
    memory_before = None
    try:
        import importlib

        module_name, func_name = spec["target"].split(":", 1)
        fn = getattr(importlib.import_module(module_name), func_name)
        if spec.get("gpu"):
            memory_before = _gpu_memory()
        note(_START)
        value = fn(*spec.get("args", []), **spec.get("kwargs", {}))
        value = _jsonable(value)
        out = {"kind": "returned", "value": value}
        sticky = isinstance(value, dict) and value.get("reason") == "crash"
    except Exception as e:
        from ..gpu.errors import CompileError, is_sticky_message

        sticky = is_sticky_message(str(e))
        out = {"kind": "raised", "type": type(e).__name__, "message": str(e), "sticky": sticky,
               "reason": "compile_error" if isinstance(e, CompileError) else "error",
               "traceback": "".join(traceback.format_exception(type(e), e, e.__traceback__))}
    note("[task-end]")
    if spec.get("gpu") and memory_before is not None and not sticky:
        try:
            out["memory"] = {"before": memory_before, "after": _gpu_memory()}
        except Exception as e:  # a fault that surfaced only now is still a crash
            from ..gpu.errors import is_sticky_message

            if is_sticky_message(str(e)):
                out = {"kind": "raised", "type": type(e).__name__, "message": str(e), "sticky": True,
                       "reason": "crash", "traceback": traceback.format_exc()}
            else:
                raise
    part = tmp_path / "result.json.part"
    part.write_text(json.dumps(out))
    part.replace(tmp_path / "result.json")
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: after a sticky CUDA error, library destructors can abort or block.
    os._exit(0)
