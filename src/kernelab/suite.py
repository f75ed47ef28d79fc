"""The suite: op x variant x shape through check, then bench, then analysis -> Results.

    results = run_suite(Selection(ops=["vector_add"], quick=True))

With a GPU, every variant is first compiled into the disk cache in parallel; then one worker
subprocess (kernelab.suite_worker) runs the ops in turn and streams one row per candidate,
so a candidate that crashes the CUDA context or hangs loses only itself: the parent records
it and starts a fresh worker for the rest. Results.phases says where the wall time went. Without a GPU the
suite compiles every variant and reports resources, occupancy and predicted floors for a
default device (H200), and says that timing needs a GPU.
"""

from __future__ import annotations

import fnmatch
import time
from dataclasses import asdict, dataclass
from typing import Callable

from .ops.base import Case, OpSpec, Variant, discover
from .report.results import Results, Row

STATIC_DEVICE = "H200"


@dataclass
class Selection:
    ops: list[str] | None = None  # names or globs; None: all
    variants: list[str] | None = None  # names, numbers (v2) or globs; "peers" alone selects peers only
    dtypes: list[str] | None = None
    shapes: list[str] | None = None  # substrings or globs of case labels ("1048576", "4096x*")
    quick: bool = False
    ops_dir: str | None = None
    peers: bool = True
    arch: str | None = None  # static mode: the arch to compile for
    device: str = STATIC_DEVICE  # static mode: the device to predict for
    timeout_s: float = 180.0  # per candidate, before it is declared hung
    head_to_head: bool = True  # settle close calls and bench-size copy ratios by paired timing (head_to_head.py)

    def to_dict(self) -> dict:
        return asdict(self)


def _match(value: str, patterns: list[str] | None) -> bool:
    if not patterns:
        return True
    return any(value == p or fnmatch.fnmatch(value, p) or value.split("_", 1)[0] == p for p in patterns)


def select_ops(sel: Selection) -> list[OpSpec]:
    ops = discover(sel.ops_dir)
    chosen = [op for name, op in ops.items() if _match(name, sel.ops)]
    if sel.ops and not chosen:
        raise KeyError(f"no op matches {sel.ops}; known ops: {', '.join(ops)}")
    return chosen


def select_variants(op: OpSpec, sel: Selection) -> list[Variant]:
    if sel.variants == ["peers"]:
        return []
    return [v for v in op.variants() if _match(v.name, sel.variants)]


def select_cases(op: OpSpec, sel: Selection) -> list[Case]:
    cases = op.quick_cases() if sel.quick else op.bench_cases()
    out, seen = [], set()
    for c in cases:
        if c.label in seen:  # an op may list a shape twice (GEMM: 4096^3 is square and an LLM shape)
            continue
        seen.add(c.label)
        if sel.dtypes and c.dtype not in sel.dtypes:
            continue
        if sel.shapes and not any(s in c.label or fnmatch.fnmatch(c.label, s) for s in sel.shapes):
            continue
        out.append(c)
    return out


@dataclass
class Plan:
    op: OpSpec
    cases: list[Case]
    variants: list[Variant]

    @property
    def n_candidates(self) -> int:
        return len(self.cases) * (len(self.variants) + 4)  # peers: a few per case


def make_plan(sel: Selection) -> list[Plan]:
    plans, known = [], []
    for op in select_ops(sel):
        cases, variants = select_cases(op, sel), select_variants(op, sel)
        known += [v.name for v in op.variants()]
        if cases and (variants or sel.peers):
            plans.append(Plan(op, cases, variants))
    if sel.variants and sel.variants != ["peers"] and plans and not any(p.variants for p in plans):
        # a typo must not turn into a run of the peers alone
        raise KeyError(f"no variant matches {sel.variants}; the selected ops have: {', '.join(known)}")
    return plans


# ----------------------------------------------------------------------------- static mode

def static_rows(plan: Plan, sel: Selection, progress: Callable[[str], None] | None = None) -> list[Row]:
    """Compile each variant and predict: resources, occupancy and floors, with no GPU."""
    from . import analysis
    from .gpu import CompileError
    from .ops.build import compile_variant

    spec = analysis.spec_for(sel.device)
    rows: list[Row] = []
    for v in plan.variants:
        if progress:
            progress(f"{plan.op.name}/{v.name}")
        try:
            m = compile_variant(plan.op, v, arch=None if v.min_arch else (sel.arch or spec_arch(spec)))
        except CompileError as e:
            rows.append(Row(plan.op.name, v.name, "variant", {}, status="compile_error", reason="compile_error", detail=str(e)))
            continue
        resources = {k: r.to_dict() for k, r in m.resources.items()}
        # (kernel, block, dynamic smem) -> occupancy: each case's own kernel and block (@block_bf16, plans)
        occ_cache = {}
        for case in plan.cases:
            if case.dtype not in v.dtypes(plan.op):
                continue
            occ = {}
            launched = plan.op.static_kernel(v, case) if m.resources else None
            if launched:
                name, block = launched
                # a kernel the module does not name (a macro-built instance): the heaviest one, as a bound
                res = m.resources.get(name) or max(m.resources.values(), key=lambda r: (r.registers, r.shared_static))
                key = (res.name, block, plan.op.dynamic_smem(v, case))
                if key not in occ_cache:
                    occ = analysis.occupancy_for_kernel(res, spec.cc, block, key[2])
                    occ_cache[key] = {**occ.to_dict(), "block": block}
                occ = occ_cache[key]
            work = plan.op.work(case)
            floor = analysis.floor_seconds(work, spec)
            rows.append(Row(plan.op.name, v.name, "variant", case.to_dict(), status="static",
                            detail="timing needs a GPU", work=work.to_dict(),
                            metrics={"floor_s": floor, "predicted_for": spec_name(spec)},
                            resources=resources, occupancy=occ, binary_sha256=m.cubin_sha256))
    return rows


def spec_name(spec) -> str:
    return spec.name


def spec_arch(spec) -> str:
    major, minor = spec.cc
    return f"sm_{major}{minor}"


# ----------------------------------------------------------------------------- gpu mode

def run_suite(sel: Selection, results_dir: str | None = "results", progress=None,
              isolate: bool = True) -> Results:
    """Run the selection and return Results (also saved under `results_dir` when given)."""
    from .gpu import has_gpu

    t0 = time.perf_counter()
    plans = make_plan(sel)
    if not has_gpu():
        results = _static_results(plans, sel, progress)
    else:
        # Rows are appended to a JSON-lines file as they arrive, so a run killed midway keeps them.
        partial = None
        if results_dir:
            from pathlib import Path

            Path(results_dir).mkdir(parents=True, exist_ok=True)
            partial = Path(results_dir) / f"partial-{time.strftime('%Y%m%dT%H%M%S')}.jsonl"
        results = _gpu_results(plans, sel, progress, isolate, partial)
        if partial is not None and partial.exists():
            partial.unlink()  # the complete results file replaces it
    results.wall_s = time.perf_counter() - t0
    results.selection = sel.to_dict()
    if results_dir:
        results.path = results.save(results_dir)
    return results


def _environment() -> dict:
    import platform

    from .gpu import toolchain
    from .gpu.device import driver_cuda_version
    from .gpu.nvml import driver_version

    try:
        import torch

        tv, tc = torch.__version__, torch.version.cuda
    except Exception:
        tv, tc = None, None
    v = toolchain.nvrtc_version()
    return {"python": platform.python_version(), "torch": tv, "cuda_runtime": tc, "driver": driver_version(),
            "driver_cuda": driver_cuda_version(), "nvrtc": f"{v[0]}.{v[1]}" if v else None,
            "nvcc": toolchain.nvcc_version()}


def _compiler_info() -> dict:
    from .gpu import toolchain
    from .gpu.compiler import STD

    return {"name": "nvrtc", "version": toolchain.compiler_version("nvrtc"),
            "flags": ["-O3", "-lineinfo", f"-std={STD}", "-Xptxas -v"]}


def _static_results(plans: list[Plan], sel: Selection, progress) -> Results:
    from . import analysis

    spec = analysis.spec_for(sel.device)
    device = spec.to_dict()
    device.setdefault("arch", spec_arch(spec))
    res = Results(mode="static", device=device, environment=_environment(), compiler=_compiler_info())
    res.notes.append(f"No GPU: compiled every kernel and predicted floors for {spec_name(spec)}; timing needs a GPU.")
    for plan in plans:
        res.rows.extend(static_rows(plan, sel, progress))
    return res


def _gpu_results(plans: list[Plan], sel: Selection, progress, isolate: bool, partial=None) -> Results:
    from .gpu import device_info, nvml
    from .suite_worker import CandidateTask, run_in_process, run_isolated_tasks

    info = device_info()
    res = Results(mode="gpu", device=info.to_dict(), environment=_environment(), compiler=_compiler_info())
    res.clocks["before"] = nvml.sample(info.index).to_dict()
    t0 = time.perf_counter()
    res.ceilings = _ceilings(progress)
    res.phases["ceilings_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    res.phases["precompile"] = precompile(plans, progress)
    res.phases["precompile"]["wall_s"] = time.perf_counter() - t0
    tasks = []
    for plan in plans:
        items = []
        for case in plan.cases:
            items += [(case.to_dict(), "peer", p) for p in (_peer_names(plan.op, case) if sel.peers else [])]
            items += [(case.to_dict(), "variant", v.name) for v in plan.variants]
        tasks.append(CandidateTask(op=plan.op.name, ops_dir=sel.ops_dir, candidates=items,
                                   ceilings=res.ceilings, timeout_s=sel.timeout_s, quick=sel.quick))
    op_wall: dict[str, float] = {}

    def op_done(op: str, wall_s: float) -> None:  # as the worker measured it; start-ups add up
        op_wall[op] = op_wall.get(op, 0.0) + wall_s

    t0 = time.perf_counter()
    if isolate:  # one worker runs every op in turn; it is replaced only after a crash or hang
        rows, peaks = run_isolated_tasks(tasks, progress, on_row=_appender(partial), on_wall=op_done)
    else:
        rows, peaks = [], {}
        for task in tasks:
            t_op = time.perf_counter()
            r, peaks[task.op] = run_in_process(task, progress, on_row=_appender(partial))
            rows += r
            op_done(task.op, time.perf_counter() - t_op)
    res.phases["ops_s"] = time.perf_counter() - t0
    res.phases["per_op_s"] = op_wall
    res.phases["per_op_peak_gpu_memory_bytes"] = peaks
    for plan in plans:
        mine = [r for r in rows if r.op == plan.op.name]
        for label in dict.fromkeys(r.case.get("label") for r in mine):
            _relate_to_peers([r for r in mine if r.case.get("label") == label], plan.op.baselines)
        res.rows.extend(mine)
    if sel.head_to_head:
        t0 = time.perf_counter()
        res.phases["head_to_head"] = _head_to_head(res.rows, tasks, progress, isolate)
        res.phases["head_to_head"]["wall_s"] = time.perf_counter() - t0
    res.clocks["after"] = nvml.sample(info.index).to_dict()
    res.peak_gpu_memory_bytes = max(peaks.values(), default=0)
    return res


def _head_to_head(rows: list[Row], tasks: list, progress, isolate: bool) -> dict:
    """Time each case's best variant against its close peer and a same-bytes copy, interleaved
    (head_to_head.py), and fold the results into the variant rows. Returns counts for `phases`."""
    from dataclasses import replace

    from .head_to_head import fold, mode_key, plan_pairs
    from .suite_worker import run_in_process, run_isolated_tasks

    pairs = plan_pairs(rows)
    if not pairs:
        return {"pairs": 0, "folded": 0}
    if progress:
        progress(f"head to head: {len(pairs)} pairs")
    by_op = {t.op: t for t in tasks}
    pair_tasks = []
    for op in dict.fromkeys(p[0] for p in pairs):
        mine = [p for p in pairs if p[0] == op]
        pair_tasks.append(replace(by_op[op], candidates=[(case, "h2h", name) for _, case, name, _ in mine],
                                  modes={mode_key(case["label"], name): mode for _, case, name, mode in mine}))
    if isolate:
        pair_rows, _ = run_isolated_tasks(pair_tasks, progress)
    else:
        pair_rows = [r for t in pair_tasks for r in run_in_process(t, progress)[0]]
    return {"pairs": len(pairs), "folded": fold(rows, pair_rows),
            "failed": sum(r.status != "ok" for r in pair_rows)}


SLOWEST_COMPILES = 5  # compiles named in the results file's precompile phase


def precompile(plans: list[Plan], progress=None, workers: int | None = None) -> dict:
    """Compile every selected variant for this GPU into the disk cache, in parallel (NVRTC releases
    the GIL), so the worker only loads cubins. A kernel that does not compile is left for the worker
    to report as that candidate's compile_error. Returns counts (compiled, cached, failed), the compiler's
    seconds summed over threads, and the slowest compiles (variant id, seconds): the modules to slim
    when a cold start is slow."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    from .ops.build import compile_variant

    jobs = [(plan.op, v) for plan in plans for v in plan.variants]
    if progress:
        progress(f"compiling {len(jobs)} variants")

    def one(job) -> tuple[str, float, str]:
        op, variant = job
        try:
            m = compile_variant(op, variant)
        except Exception:  # a CompileError, an arch this toolchain lacks: the worker's row reports it
            return "failed", 0.0, variant.id
        return ("cached" if m.cache_hit else "compiled"), m.compile_seconds, variant.id

    with ThreadPoolExecutor(max_workers=workers or min(16, os.cpu_count() or 2)) as pool:
        outcomes = list(pool.map(one, jobs))
    kinds = [k for k, _, _ in outcomes]
    slowest = sorted(((vid, s) for k, s, vid in outcomes if k == "compiled"), key=lambda o: -o[1])[:SLOWEST_COMPILES]
    return {**{k: kinds.count(k) for k in ("compiled", "cached", "failed")},
            "compiler_s": sum(s for _, s, _ in outcomes), "slowest": [[vid, s] for vid, s in slowest]}


def _appender(path):
    """on_row callback appending each row to `path` as a JSON line (None: no file)."""
    if path is None:
        return None
    import json

    def append(row: Row) -> None:
        with open(path, "a") as f:
            f.write(json.dumps(row.to_dict(), default=str) + "\n")
    return append


def _peer_names(op: OpSpec, case: Case) -> list[str]:
    try:
        return list(op.peers(case).keys())
    except Exception:
        return []


def _ceilings(progress) -> dict:
    """The measured ceilings this run compares against (cached per device and driver)."""
    from . import analysis

    if progress:
        progress("ceilings (measured once per device and driver, then cached)")
    try:
        c = analysis.get_ceilings(quick=True)
    except Exception as e:  # ceilings annotate results; they never stop a run
        return {"error": f"{type(e).__name__}: {e}"}
    d = c.to_dict()
    copy = c.entries.get("copy")
    if copy is not None and copy.value:
        d["copy_bytes_per_s"] = copy.value
    return d


def _relate_to_peers(rows: list[Row], baselines: tuple[str, ...] = ()) -> None:
    """x_best_peer = best peer time / this time (> 1 means faster than every peer); the op's
    baselines (reference points such as transpose's `copy_(m.t())`) are in x_peers only."""
    peer_times = {r.name: r.metrics["time_s"] for r in rows if r.kind == "peer" and r.status == "ok"
                  and r.metrics.get("time_s")}
    rivals = {k: v for k, v in peer_times.items() if k not in baselines}
    if not peer_times:
        return
    best_name = min(rivals, key=rivals.get) if rivals else None
    for r in rows:
        t = r.metrics.get("time_s")
        if r.status == "ok" and t and r.kind == "variant":
            if best_name is not None:
                r.metrics["x_best_peer"] = peer_times[best_name] / t
                r.metrics["best_peer"] = best_name
            r.metrics["x_peers"] = {k: v / t for k, v in peer_times.items()}
