"""Checks as worker tasks: run a variant's check in a child process, so a crash or hang is contained.

    from kernelab.check.tasks import check_isolated
    r = check_isolated("vector_add", "w9_illegal_address", case, timeout_s=10)
    r.reason  # "crash", with the CUDA error text in r.detail
"""

from __future__ import annotations

from .result import CheckResult, failure
from .worker import Outcome, Task, run_tasks


def case_from_dict(d: dict):
    """The inverse of Case.to_dict()."""
    from ..ops.base import Case

    params = d.get("params") or {}
    return Case(shape=tuple(d["shape"]), dtype=d["dtype"], offset=int(d.get("offset", 0)),
                layout=d.get("layout", "contiguous"), params=tuple(sorted(params.items())) if isinstance(params, dict)
                else tuple(tuple(p) for p in params))


def check_variant_task(op: str, variant: str, case: dict, seeds=(0, 1, 2), dists=None, ops_dir: str | None = None,
                       options: dict | None = None) -> dict:
    """Worker entry point: check_variant on names and a Case dict; returns CheckResult.to_dict()."""
    from ..ops import discover
    from .harness import check_variant

    ops = discover(ops_dir)
    if op not in ops:
        raise KeyError(f"no op named {op!r} (have: {', '.join(ops)})")
    result = check_variant(ops[op], ops[op].variant(variant), case_from_dict(case), seeds=tuple(seeds), dists=dists,
                           **(options or {}))
    return result.to_dict()


def check_task(op: str, variant: str, case, *, seeds=(0, 1, 2), dists=None, ops_dir=None, timeout_s: float = 60.0,
               task_id: str | None = None, **options) -> Task:
    """A worker Task that checks `variant` of `op` on `case` (a Case or its dict)."""
    case_d = case if isinstance(case, dict) else case.to_dict()
    return Task("kernelab.check.tasks:check_variant_task",
                kwargs=dict(op=op, variant=variant, case=case_d, seeds=list(seeds),
                            dists=list(dists) if dists else None, ops_dir=str(ops_dir) if ops_dir else None,
                            options=options or None),
                id=task_id or f"{op}/{variant} {case_d.get('label', case_d['shape'])}", timeout_s=timeout_s, gpu=True)


def result_from_outcome(o: Outcome, case: dict | None = None) -> CheckResult:
    """A worker outcome as a CheckResult: the child's own result, or crash / hang / leak / error."""
    name = (o.task or {}).get("kwargs", {}).get("op", "") + "/" + (o.task or {}).get("kwargs", {}).get("variant", "")
    if isinstance(o.result, dict) and "ok" in o.result and o.status in ("ok", "failed", "crash"):
        r = CheckResult.from_dict(o.result)
        if o.status == "crash" and r.reason != "crash":
            return failure("crash", o.detail, name=r.name, case=r.case)
        return r
    if o.status == "leak":
        r = CheckResult.from_dict(o.result) if isinstance(o.result, dict) and "ok" in o.result else None
        return failure("leak", o.detail, name=r.name if r else name, case=r.case if r else case)
    reason = o.reason if o.reason in ("crash", "hang", "compile_error") else "error"
    return failure(reason, o.detail, name=name, case=case)


def check_isolated(op: str, variant: str, case, *, seeds=(0, 1, 2), dists=None, ops_dir=None,
                   timeout_s: float = 60.0, results_path=None, **options) -> CheckResult:
    """check_variant in a worker child under a watchdog: a crash, hang or leak comes back as a CheckResult."""
    task = check_task(op, variant, case, seeds=seeds, dists=dists, ops_dir=ops_dir, timeout_s=timeout_s, **options)
    (outcome,) = run_tasks([task], results_path)
    return result_from_outcome(outcome, task.kwargs["case"])
