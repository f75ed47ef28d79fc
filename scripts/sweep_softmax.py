"""Issue 7 softmax sweep: v6_packed_rows (v0/v1 with plain read-only loads, bf16 rows kept packed
for twice the rows an SM, small warp-row blocks, a predicate-free kernel for full rows) and
v5_persistent (persistent warps / blocks / clusters that load the next row during the current
one's reduction) with their knobs, against v0-v4 and torch eager / torch.compile, at the bench
shapes, in one process on one GPU.

v7_bulk_smem (rows past 32768 staged in shared memory by cp.async.bulk, 2-3 rows in flight per
block; persistent clusters of C = 1..16 blocks): its default at 4096 x 65536 and 2048 x 131072,
and its knobs at 2048 x 131072 bf16 / fp32: SB_STORE=1 (y written back into the stage and stored
by a bulk copy), SB_STORE=2 (st.global.cs), stages=4, blocks_per_sm=2, threads=256 / 1024,
min_cluster=8 (bf16) / 16 (fp32).

v6's knob rows (at 32768 x 8192 and 262144 x 1024 bf16, where v6 is meant to beat v1 / v0):
  PK_LOAD=1        the evict-first hint v0/v1 load with (__ldcs): what the hint alone costs;
  PK_LOAD=2        ld.global.nc with an L2 256-byte prefetch hint;
  PK_KEEP_EXP=1    fp32 exps kept (v0/v1's registers, one EX2 an element instead of two);
  lanes_per_row=16 two rows a warp (1024 wide);  warps_per_block=8  v0's 256-thread blocks;
  block_elems=64   128 threads x 64 elements a row (8192 wide).

Cases: bf16 32768 x 8192, 262144 x 1024, 8192 x 32768, 4096 x 65536, 2048 x 131072 and fp32
32768 x 8192, 2048 x 131072 (each 1.07 GB bf16 / 2.15 GB fp32 moved: read x + write y).
Every kernelab candidate is checked against the float64 reference first (kernelab.check.
check_callable, one seed, normal inputs) on a case with the bench width and fewer rows, but
enough that each persistent warp / block / cluster loops over >= 3 rows (the double-buffered
exchange of v5 is exercised); the outputs its timed launches left at the bench shape are
verified again on 256 spread rows. Timing: kernelab.bench.bench, cold L2.

Usage (GPU machine, < 120 s on an H200, < 12 GiB of GPU memory):
    PYTHONPATH=src python3 scripts/sweep_softmax.py --out $OUT/sweep_softmax.json
    ... --quick       peers, v4, v5's, v6's (and at 131072 v7's) defaults only  ... --cases 0,1   only these
    ... --budget 105  past this many seconds, only the --quick candidates still run (so the
                      peers, v4 and the v5/v6 defaults are measured at every shape whatever happens)
    Cases: 0 bf16 32768 x 8192, 1 bf16 262144 x 1024, 2 bf16 8192 x 32768, 3 bf16 4096 x 65536,
    4 bf16 2048 x 131072, 5 fp32 32768 x 8192, 6 fp32 2048 x 131072 (v6's knobs: --cases 0,1).
Without a GPU, --dry-run compiles every candidate for --arch (default sm_90), replays its
launches against the parsed kernel signatures, and prints the instance, registers and spills.
Results: JSON at --out (rows with the Measurement, check, plan, resources); a table last.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from kernelab.check.inputs import DTYPES  # noqa: E402  (no torch, no CUDA at import)
from kernelab.ops import Case, discover  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The parallel cubin precompile, resource rows and the skip signal are sweep_membound's.
from sweep_membound import _Skip, measure_copy_ceiling, precompile, resources_of  # noqa: E402

BF16, F32 = "bfloat16", "float32"
V6 = "v6_packed_rows"
V7 = "v7_bulk_smem"


@dataclasses.dataclass
class Candidate:
    label: str
    kind: str  # "peer" | "existing" | "new"
    variant: str | None = None
    meta: dict = dataclasses.field(default_factory=dict)  # header values overridden (v5's `threads`)
    defines: dict = dataclasses.field(default_factory=dict)  # extra #ifndef macros (v6's PK_LOAD, ...)
    quick: bool = False


@dataclasses.dataclass
class Sweep:
    case: Case
    check_case: Case  # same width, fewer rows (same kernel instance; >= 3 rows per persistent unit)
    candidates: list


def _cands(n: int, dtype: str = BF16) -> list:
    out = [Candidate("torch", "peer", quick=True), Candidate("torch.compile", "peer", quick=True)]
    # Each existing variant where it is a real option (v1 at N = 1024 would be 64-thread blocks,
    # v3 at N <= 8192 a half-empty cluster of 2).
    if n <= 1024:
        out.append(Candidate("v0_warp_row", "existing", "v0_warp_row"))
    if 1024 < n <= 32768:
        out.append(Candidate("v1_block_row", "existing", "v1_block_row"))
    out.append(Candidate("v2_online", "existing", "v2_online"))
    if n > 8192:
        out.append(Candidate("v3_cluster", "existing", "v3_cluster"))
    out.append(Candidate("v4_dispatch", "existing", "v4_dispatch", quick=True))
    if n <= 32768:  # v6 holds rows up to 32768 (1024 threads x 32)
        out.append(Candidate("v6_packed_rows (default)", "new", V6, quick=True))
    if n in (1024, 8192) and dtype == BF16:  # v6's knobs, at the two shapes it targets
        out += [Candidate("v6 PK_LOAD=1 (evict-first, v0/v1's)", "new", V6, defines={"PK_LOAD": 1}),
                Candidate("v6 PK_KEEP_EXP=1 (fp32 exps kept)", "new", V6, defines={"PK_KEEP_EXP": 1})]
    if n == 1024 and dtype == BF16:
        out += [Candidate("v6 lanes_per_row=16 (2 rows/warp)", "new", V6, meta={"lanes_per_row": "16"}),
                Candidate("v6 warps_per_block=8 (v0's blocks)", "new", V6, meta={"warps_per_block": "8"})]
    if n == 8192 and dtype == BF16:
        out += [Candidate("v6 block_elems=64 (128 thr/row)", "new", V6, meta={"block_elems": "64"}),
                Candidate("v6 PK_LOAD=2 (L2::256B prefetch)", "new", V6, defines={"PK_LOAD": 2})]
    out.append(Candidate("v5_persistent (default)", "new", "v5_persistent", quick=True))
    if n > 16384:  # cluster widths: the other block size (the default takes the smaller cluster)
        for t in (256, 512):
            out.append(Candidate(f"v5_persistent threads={t}", "new", "v5_persistent", meta={"threads": str(t)}))
    if n > 1024:  # 64 elements per thread: half the threads, 8 (bf16) / 16 (fp32) 16-byte loads each
        out.append(Candidate("v5_persistent elems=64", "new", "v5_persistent", meta={"elems": "64"}))
    if n > 32768:  # v7: rows staged in shared memory by bulk async copies (defaults: 3 stages, 512 threads)
        out.append(Candidate("v7_bulk_smem (default)", "new", V7, quick=n == 131072))
    if n == 131072:  # v7's knobs, at the shape it targets (C follows: the smallest whose stages fit)
        wide = "16" if dtype == F32 else "8"
        out += [Candidate("v7 SB_STORE=1 (bulk store from smem)", "new", V7, defines={"SB_STORE": 1}),
                Candidate("v7 SB_STORE=2 (st.global.cs)", "new", V7, defines={"SB_STORE": 2}),
                Candidate("v7 stages=4 (smaller chunks)", "new", V7, meta={"stages": "4"}),
                Candidate("v7 blocks_per_sm=2", "new", V7, meta={"blocks_per_sm": "2"}),
                Candidate("v7 threads=256", "new", V7, meta={"threads": "256"}),
                Candidate("v7 threads=1024", "new", V7, meta={"threads": "1024"}),
                Candidate(f"v7 min_cluster={wide}", "new", V7, meta={"min_cluster": wide})]
    return out


def sweeps() -> list:
    shapes = [((32768, 8192), BF16, 4099), ((262144, 1024), BF16, 16411), ((8192, 32768), BF16, 1031),
              ((4096, 65536), BF16, 523), ((2048, 131072), BF16, 263),
              ((32768, 8192), F32, 4099), ((2048, 131072), F32, 263)]
    op = discover()["softmax"]
    out = []
    for s, dt, rows in shapes:
        cands, plans = [], set()
        for c in _cands(s[1], dt):  # a knob that lands on the default's instance is not timed twice
            if c.variant == "v5_persistent":
                p = op.plan(variant_for(op, c), s[1], (9, 0), dt)
                if p is not None and p.name in plans:
                    continue
                plans.add(p.name if p is not None else None)
            cands.append(c)
        out.append(Sweep(Case(s, dt), Case((rows, s[1]), dt), cands))
    return out


# ---- building candidates -----------------------------------------------------------------------

def variant_for(op, cand: Candidate):
    v = op.variant(cand.variant)
    return dataclasses.replace(v, meta={**v.meta, **cand.meta}) if cand.meta else v


def compile_args(op, cand: Candidate, arch):
    """(path, arch, defines) exactly as the run compiles it (the cache key must match): the op's
    macros for the variant's header values (v6's knobs), then the candidate's own."""
    from kernelab.ops.build import target_arch

    v = variant_for(op, cand)
    return str(v.path), target_arch(v, arch).sm, {**op.defines(v), **cand.defines}


class _AlignedTensor:
    """Stands in for x and y in packed_full: the sweep's cases start 16-byte aligned (offset 0)."""

    @staticmethod
    def data_ptr() -> int:
        return 0


def instance(op, v, case, cc) -> tuple:
    """(plan, kernel name) a launch of `v` on `case` takes on a GPU of compute capability cc
    (v6: its `_full` kernel when the row is exactly the instance's width, as op.launch picks)."""
    from kernelab.ops.softmax.op import packed_full

    assert case.offset == 0, "the sweep's cases are aligned (instance() assumes it)"
    p = op.plan(v, case.shape[1], cc, case.dtype)
    if p is None:
        return None, None
    if p.name is None:
        return p, op.kernel_name(case.dtype)
    name = p.name + ("_full" if packed_full(p, case.shape[1], _AlignedTensor, _AlignedTensor) else "")
    return p, f"{name}_{DTYPES[case.dtype]}"


# ---- checks -------------------------------------------------------------------------------------

def verify_timed_outputs(op, case, inputs, outputs, rows: int = 256):
    """`rows` spread rows of what the timed launches left (a float64 reference of the whole
    2048 x 131072 output would take 2 GiB)."""
    import torch

    from kernelab.check import compare_outputs, tolerance

    m = case.shape[0]
    y = outputs["y"]
    idx = torch.linspace(0, m - 1, min(rows, m), device=y.device).long().unique()
    sub_case = Case((len(idx), case.shape[1]), case.dtype)
    ref = op.reference(sub_case, {"x": inputs["x"].index_select(0, idx).contiguous()})["y"]
    rtol, atol = tolerance(op, y.dtype)
    cmp = compare_outputs(y.index_select(0, idx), ref, rtol, atol, nan_ok=True, name="y")
    return cmp.ok, (f"{len(idx)} rows of {m} within tolerance" if cmp.ok else cmp.summary())


# ---- the run ------------------------------------------------------------------------------------

def run(args) -> int:
    import torch

    from kernelab.bench import bench
    from kernelab.check import check_callable
    from kernelab.gpu import KernelFault, Module, compile_file, default_arch, device_info
    from kernelab.gpu.errors import is_sticky_message
    from kernelab.ops import load_variant, run_variant

    t_start = time.perf_counter()
    op = discover()["softmax"]
    plan = [sw for i, sw in enumerate(sweeps()) if args.cases is None or i in args.cases]
    for sw in plan:
        sw.candidates = [c for c in sw.candidates if c.quick or not args.quick]
    arch = default_arch()
    cc = torch.cuda.get_device_capability()

    jobs = [compile_args(op, c, arch) for sw in plan for c in sw.candidates if c.kind != "peer"]
    pre_s = precompile(jobs, args.workers) if args.workers > 1 else 0.0
    builds = {(p, a, tuple(sorted(d.items()))) for p, a, d in jobs}
    print(f"precompiled {len(builds)} builds of {len(set(j[0] for j in jobs))} modules in {pre_s:.1f} s", flush=True)

    info = device_info()
    results = {"schema": "kernelab.sweep_softmax/1", "device": info.name, "arch": arch.sm, "torch": torch.__version__,
               "quick": args.quick, "max_wall_s": args.max_wall, "precompile_s": pre_s, "rows": []}
    measure_copy_ceiling(results, args.max_wall)

    for sw in plan:
        case = sw.case
        work = op.work(case)
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        inputs = op.make_inputs(case, 0, "cuda")
        peers = op.peers(case)
        case_rows = []
        print(f"\n== softmax {case.label} ({work.bytes / 1e9:.2f} GB moved)", flush=True)
        for c in sw.candidates:
            row = {"op": "softmax", "case": case.to_dict(), "candidate": c.label, "kind": c.kind, "mode": "cold",
                   "variant": c.variant, "meta": c.meta, "defines": c.defines, "status": "ok"}
            t0 = time.perf_counter()
            outputs = fn = None
            try:
                if not c.quick and time.perf_counter() - t_start > args.budget:
                    raise _Skip(f"time budget: {args.budget:.0f} s spent (--budget); quick candidates only from here")
                if c.kind == "peer":
                    peer = peers[c.label]
                    peer(inputs)  # torch.compile compiles here, outside the timing
                    torch.cuda.synchronize()

                    def fn(peer=peer):
                        peer(inputs)
                else:
                    v = variant_for(op, c)
                    why = op.supports(v, case)
                    if why:
                        raise _Skip(f"unsupported: {why}")
                    p, kname = instance(op, v, case, cc)
                    row["plan"] = str(p)
                    row["kernels"] = [kname]
                    if not c.meta and not c.defines:
                        module = load_variant(op, v)

                        def runner_for(cs, v=v):
                            return lambda i, o: run_variant(op, v, cs, i, o)
                    else:  # the knob's own build (v5's meta knobs: the default's module, a cache hit)
                        path, tarch, defines = compile_args(op, c, arch)
                        compiled = compile_file(path, arch=tarch, defines=defines)
                        module = Module(compiled, defines)
                        row["compile_cache_hit"] = compiled.cache_hit

                        def runner_for(cs, v=v, module=module):
                            k = module.kernel(op.kernel_name(cs.dtype))
                            return lambda i, o: op.launch(k, v, cs, i, o)
                    row["resources"] = resources_of(module.compiled, [kname])
                    if p is not None and p.persistent:
                        from kernelab.ops.softmax.op import persistent_grid

                        row["grid"] = persistent_grid(module.kernel(kname), p, case.shape[0])
                    r = check_callable(runner_for(sw.check_case), op, sw.check_case, seeds=(0,), dists=("normal",),
                                       name=c.label)
                    row["check"] = {"ok": r.ok, "reason": r.reason, "case": sw.check_case.label,
                                    "detail": r.detail[:500], "max_abs": r.max_abs, "max_rel": r.max_rel}
                    if not r.ok:
                        row["status"] = f"failed check: {r.reason}"
                        raise _Skip(r.detail[:300])
                    outputs = op.make_outputs(case, inputs)
                    launch = runner_for(case)

                    def fn(launch=launch, outputs=outputs):
                        launch(inputs, outputs)
                m = bench(fn, mode="cold", target_rel=0.01, max_wall_s=args.max_wall, name=f"softmax/{c.label}")
                torch.cuda.synchronize()
                row["median_s"] = m.median_s
                row["gbps"] = work.bytes / m.median_s / 1e9
                row["measurement"] = m.to_dict()
                if outputs is not None:
                    ok, detail = verify_timed_outputs(op, case, inputs, outputs)
                    row["verify_after_timing"] = {"ok": ok, "detail": detail[:500]}
                    if not ok:
                        row["status"] = "failed: timed outputs wrong"
            except _Skip as e:
                if row["status"] == "ok":
                    row["status"] = "skipped"
                row["detail"] = str(e)
            except Exception as e:  # one candidate's failure must not lose the others
                row["status"] = f"error: {type(e).__name__}"
                row["detail"] = "".join(traceback.format_exception_only(type(e), e))[-800:]
                if isinstance(e, KernelFault) or is_sticky_message(str(e)):
                    row["detail"] += " (CUDA context lost: the remaining rows are skipped)"
                    case_rows.append(row)
                    results["rows"].extend(case_rows)
                    return _finish(results, args, t_start, code=1)
            fn = launch = outputs = None  # release this candidate's output before the next one allocates
            row["wall_s"] = time.perf_counter() - t0
            case_rows.append(row)
            us = f"{row['median_s'] * 1e6:9.1f} us" if "median_s" in row else f"{row['status']}: {row.get('detail', '')[:120]}"
            print(f"  {c.label:34s} {us}  ({row['wall_s']:.1f} s)", flush=True)
        peer_times = {r["candidate"]: r["median_s"] for r in case_rows if r["kind"] == "peer" and "median_s" in r}
        for r in case_rows:
            if "median_s" in r:
                for name, t in peer_times.items():
                    r[f"x_{name}"] = t / r["median_s"]
            r["peak_mem_gib"] = torch.cuda.max_memory_allocated() / 2**30
        results["rows"].extend(case_rows)
        del inputs, peers
    return _finish(results, args, t_start)


def _finish(results, args, t_start, code: int = 0) -> int:
    results["wall_s"] = time.perf_counter() - t_start
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1, default=str))
    print_table(results)
    print(f"\nwrote {out} ({results['wall_s']:.0f} s wall)")
    return code


def print_table(results) -> None:
    ceiling = results.get("copy_ceiling_bps")
    print(f"\n{'shape':24s} {'candidate':30s} {'us':>8s} {'GB/s':>6s} {'%copy':>6s} {'xcomp':>6s} {'xeager':>6s}  instance / notes")
    last = None
    rows = results["rows"]
    for r in rows:
        key = r["case"]["label"]
        if key != last and last is not None:
            _best_line(rows, last, ceiling)
        last = key
        us = f"{r['median_s'] * 1e6:8.1f}" if "median_s" in r else " " * 8
        gbps = f"{r['gbps']:6.0f}" if "gbps" in r else " " * 6
        pct = f"{100 * r['gbps'] * 1e9 / ceiling:5.1f}%" if ceiling and "gbps" in r else " " * 6
        xc = f"{r['x_torch.compile']:5.2f}x" if r.get("x_torch.compile") else " " * 6
        xe = f"{r['x_torch']:5.2f}x" if r.get("x_torch") else " " * 6
        notes = [] if r["status"] == "ok" else [r["status"]]
        for k, res in (r.get("resources") or {}).items():
            spill = f" SPILL {res['spill_stores']}" if res["spill_stores"] else ""
            notes.append(f"{k} {res['registers']}r{spill}")
        if r.get("grid"):
            notes.append(f"grid {r['grid']}")
        print(f"{key:24s} {r['candidate']:30s} {us} {gbps} {pct} {xc} {xe}  {'; '.join(notes)}")
    if last is not None:
        _best_line(rows, last, ceiling)


def _best_line(rows, key, ceiling) -> None:
    mine = [r for r in rows if r["case"]["label"] == key and r["kind"] != "peer" and r["status"] == "ok" and "median_s" in r]
    if mine:
        b = min(mine, key=lambda r: r["median_s"])
        pct = f", {100 * b['gbps'] * 1e9 / ceiling:.1f}% of copy" if ceiling else ""
        xc = f", {b['x_torch.compile']:.2f}x torch.compile" if b.get("x_torch.compile") else ""
        print(f"{'':24s} -> fastest kernelab: {b['candidate']} ({b['median_s'] * 1e6:.1f} us{pct}{xc})")
    print()


# ---- --dry-run: no GPU ---------------------------------------------------------------------------

class _FakeKernel:
    """Stands in for a loaded kernel: checks the launch against the C signature kernelab parses
    from the source (what Module.kernel would accept) and records it."""

    def __init__(self, module, name):
        if name not in module.signatures:
            raise KeyError(f"{name} is not a launchable kernel of {module.path.name}")
        self.module, self.name, self.params = module, name, module.signatures[name]

    def __call__(self, *args, grid, block, cluster=None, **kw):
        if len(args) != len(self.params):
            raise TypeError(f"{self.name} takes {len(self.params)} arguments, got {len(args)}")
        self.module.calls.append((self.name, grid, block, cluster))


class _FakeModule:
    def __init__(self, path, defines, arch):
        from types import SimpleNamespace

        from kernelab.gpu import parse_signatures

        self.path = Path(path)
        self.signatures = parse_signatures(self.path.read_text(), defines, [self.path.parent])
        self.compiled = SimpleNamespace(arch=arch)  # the plan asks which arch the module is for
        self.calls = []

    def kernel(self, name):
        return _FakeKernel(self, name)


def dry_run(args) -> int:
    """Compile every kernelab candidate for --arch; replay its launch on a 4-row CPU case against
    the parsed signatures (persistent grids: a stand-in of 132 SMs x 2 blocks); print instances."""
    from kernelab.gpu import Arch, compile_file
    from kernelab.ops.softmax import op as softmax_op

    op = discover()["softmax"]
    cc = Arch.parse(args.arch).cc
    total, bad, seen = 0.0, 0, {}
    saved = softmax_op.persistent_grid
    softmax_op.persistent_grid = lambda kernel, p, m: min(m if p.cluster else p.grid(m), 264 // (p.cluster or 1))
    try:
        for i, sw in enumerate(sweeps()):
            if args.cases is not None and i not in args.cases:
                continue
            for c in sw.candidates:
                if c.kind == "peer" or (args.quick and not c.quick):
                    continue
                v = variant_for(op, c)
                path, tarch, defines = compile_args(op, c, args.arch)
                key = (path, tarch, tuple(sorted(defines.items())))
                if key not in seen:
                    t0 = time.perf_counter()
                    seen[key] = compile_file(path, arch=tarch, defines=defines)
                    total += time.perf_counter() - t0
                m = seen[key]
                problems = []
                why = op.supports(v, sw.case)
                if why:
                    print(f"{sw.case.label:24s} {c.label:30s} skipped: {why}")
                    continue
                p, kname = instance(op, v, sw.case, cc)
                if kname not in m.resources:
                    problems.append(f"plans {kname}, which {Path(path).name} does not compile for {tarch}")
                fake = _FakeModule(path, defines, tarch)
                small = Case((4, sw.case.shape[1]), sw.case.dtype)
                try:
                    inputs = op.make_inputs(small, 0, "cpu")
                    outputs = op.make_outputs(small, inputs)
                    op.launch(fake.kernel(op.kernel_name(small.dtype)), v, small, inputs, outputs)
                    launched = [(n, g, b, cl) for n, g, b, cl in fake.calls]
                    problems += [f"launches {n}, not compiled" for n, *_ in launched if n not in m.resources]
                    problems += [f"launches {n} with cluster {cl}, plan says {p.cluster}" for n, _, _, cl in launched
                                 if cl != p.cluster]
                except Exception as e:
                    problems.append(f"launch replay on {small.label}: {type(e).__name__}: {e}")
                res = resources_of(m, [kname]).get(kname)
                desc = (f"{kname} {res['registers']}r spill {res['spill_stores']}/{res['spill_loads']} "
                        f"smem {res['shared_static']} B" if res else kname)
                print(f"{sw.case.label:24s} {c.label:30s} {p} -> {desc}")
                if res and (res["spill_stores"] or res["spill_loads"]):
                    problems.append("spills")
                for pr in problems:
                    bad += 1
                    print(f"  ^ {pr}")
    finally:
        softmax_op.persistent_grid = saved
    print(f"compiled {len(seen)} modules for {args.arch} in {total:.1f} s; {bad} problem(s)")
    return 1 if bad else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "sweep_softmax.json"))
    ap.add_argument("--quick", action="store_true", help="peers, v4 and v5's default only")
    ap.add_argument("--cases", default=None, help="comma-separated indices into the case list (0..6)")
    ap.add_argument("--max-wall", type=float, default=0.8, help="bench max_wall_s per candidate")
    ap.add_argument("--budget", type=float, default=105.0,
                    help="seconds after which only --quick candidates (peers, v4, v5 default) still run")
    ap.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 1), help="parallel NVRTC compiles")
    ap.add_argument("--dry-run", action="store_true", help="no GPU: compile the candidates for --arch, print them")
    ap.add_argument("--arch", default="sm_90", help="--dry-run's target")
    args = ap.parse_args(argv)
    if args.cases is not None:
        args.cases = {int(x) for x in args.cases.split(",") if x.strip()}
        if not args.cases <= set(range(len(sweeps()))):
            ap.error(f"--cases takes indices 0..{len(sweeps()) - 1}")
    return dry_run(args) if args.dry_run else run(args)


if __name__ == "__main__":
    sys.exit(main())
