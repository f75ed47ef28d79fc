"""Issue 9 sweep: the attention kernels' tuning knobs (src/kernelab/ops/attention/tuning.py) against
torch SDPA, at B4 H32 S4096 D128 bf16, causal and not, on one H200.

For each configuration in tuning.SWEEP (in its priority order, until the time budget runs out):
  1. build: every configuration is compiled first, in parallel processes, through the on-disk cubin
     cache (NVRTC; v2 for sm_90a, v1 for sm_90), with the knobs and the EXPECT_* geometry macros
     the kernels static_assert against (a wrong geometry fails here, not on the GPU);
  2. check, before any timing: O and LSE against SDPA's math backend in fp32 (LSE: logsumexp of
     the fp32 scores), op tolerances (O 1e-2, LSE 1e-3), outputs poisoned with NaN first, at
     D = 64 and 128, S = 17, 333 and 1000 (tails for every tile width), causal and not, B x H odd;
  3. time: kernelab.bench.bench(mode="cold", target_rel=0.01, max_wall_s=1.5) at the bench case,
     non-causal and causal; then one head of the timed outputs (the first, and the last) is checked
     against the fp32 math reference at full size.
SDPA's default choice and its FLASH_ATTENTION backend are timed the same way in the same process
(at the start, and again at the end when time is left: the drift between the two is the noise
floor of the ratios).

The GPU work runs in a child process that reports one JSON line per step; a configuration that
crashes the CUDA context or hangs (no report for --stall-s seconds) is recorded as such, the child
is replaced, and the sweep goes on with the next configuration.

Usage (GPU machine; < 120 s on an H200 with the default budget):
    PYTHONPATH=src python3 scripts/sweep_attention.py --out $OUT/sweep_attention.json
    ... --configs v2,v2+order       only these (names from tuning.SWEEP)
    ... --budget-s 105              wall-clock budget for the whole sweep (the default)
Without a GPU: --dry-run builds every configuration and prints registers, spills and geometry.
Output: JSON at --out (configs, compile resources, checks, full Measurements, the baselines) and a
table with TFLOP/s and the ratio to SDPA's default and to its FlashAttention-2 backend.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from kernelab.ops.attention import tuning  # noqa: E402  (no torch, no CUDA at import)

BENCH_SHAPE = (4, 32, 4096, 128)
# (B, H, S, D): S = 17 is inside one tile of every width; 333 leaves a tail for widths 32..192
# (333 = 2 x 128 + 77 = 176 + 157 = 10 x 32 + 13); 1000 walks many tiles, so every mbarrier
# phase and ring slot wraps several times. B x H = 6 exercises the head strides with odd counts.
CHECK_SHAPES = ((2, 3, 17, 128), (2, 3, 333, 128), (1, 2, 1000, 128), (2, 3, 17, 64), (2, 3, 333, 64))
STALL_S = 25.0  # no report from the child for this long: it is hung (a legitimate step takes < 5 s)
PER_CONFIG_S = 6.0  # a configuration is not started with less than this left (check + 2 timings)
SDPA_END_S = 12.0  # time left needed to re-time the four SDPA baselines at the end


def arch_for(variant: str) -> str:
    return "sm_90a" if variant in (tuning.V2, tuning.V3) else "sm_90"


def kernel_path(variant: str) -> Path:
    return ROOT / "src" / "kernelab" / "ops" / "attention" / f"{variant}.cu"


# ---- build (parent side, CPU only) ----------------------------------------------------------

def build(name: str, with_sass: bool = True) -> dict:
    """Compile one configuration (in a pool process): resources and ptxas warnings, and with
    `with_sass` the SASS counts and, for v2, where the softmax's exps sit (cuobjdump, ~1 s each)."""
    from kernelab.gpu import compile_file

    cfg = tuning.sweep_configs([name])[0]
    arch = arch_for(cfg.variant)
    out = {"arch": arch, "error": None}
    why = tuning.problems(cfg.variant, cfg.overrides)
    if why:
        out["error"] = "; ".join(why)
        return out
    t0 = time.perf_counter()
    try:
        m = compile_file(kernel_path(cfg.variant), arch=arch, defines=cfg.defines)
    except Exception as e:  # CompileError carries the compiler log
        out["error"] = f"{type(e).__name__}: {e}"[-4000:]
        return out
    r = m.resources.get("attention_bf16")
    out.update(seconds=round(time.perf_counter() - t0, 3), cache_hit=m.cache_hit,
               registers=r.registers if r else None, spills=r.spills if r else None,
               stack=r.stack_frame if r else None,
               warnings=sorted(set(re.findall(r"\(C75\d\d\)[^\n]*", m.log))))
    if not with_sass:
        return out
    try:
        from kernelab.analysis.sass import disassemble, parse_sass

        text = disassemble(m.cubin)
        mix = {f.name: f.mix for f in parse_sass(text)}["attention_bf16"]
        out["sass"] = {"hgmma": mix.hgmma, "hmma": mix.hmma, "ldl": mix.ldl, "stl": mix.stl, "ldsm": mix.ldsm}
        out["sass"]["utmaldg"] = text.count("UTMALDG")
        if cfg.variant in (tuning.V2, tuning.V3):
            out["sass"]["exps_before_pv_wait"] = exps_between_waits(text)
    except Exception as e:  # no cuobjdump on the GPU machine: the resources above still tell spills
        out["sass"] = {"error": str(e)[:300]}
    return out


_INS = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")


def exps_between_waits(sass: str) -> list[int]:
    """For each `wgmma.wait_group 1` (S ready, P V in flight) in a v2 listing, how many MUFU.EX2
    come before the next wgmma wait (P V done): the exps that can overlap P V. One entry per key
    loop (D = 64, D = 128); BLOCK_N / 2 + 2 when the softmax runs under P V, 0 when ptxas hoisted
    the wait above it (the defaults under NVRTC 13.0)."""
    ops = [(m[1], m[2].strip()) for m in map(_INS.match, sass.splitlines()) if m]
    counts = []
    for i, (op, args) in enumerate(ops):
        if op.startswith("WARPGROUP.DEPBAR") and args.endswith("0x1"):
            n = 0
            for op2, _ in ops[i + 1:]:
                if op2.startswith("WARPGROUP.DEPBAR"):
                    break
                n += op2.startswith("MUFU.EX2")
            counts.append(n)
    return counts


def build_all(configs, jobs: int, with_sass: bool = True) -> dict[str, dict]:
    names = [c.name for c in configs]
    if jobs <= 1:
        return {n: build(n, with_sass) for n in names}
    import multiprocessing as mp

    # fork: this process has not touched CUDA (NVRTC needs no driver), and forked children skip
    # the interpreter start; the cubins land in the shared on-disk cache the GPU child then reads.
    with ProcessPoolExecutor(max_workers=min(jobs, len(names)), mp_context=mp.get_context("fork")) as pool:
        return dict(zip(names, pool.map(build, names, [with_sass] * len(names))))


# ---- GPU child ------------------------------------------------------------------------------

def child(args) -> int:
    """Check and time the configurations named in --run, one JSON line per step on --report."""
    report = open(args.report, "a", buffering=1)

    def emit(**kw):
        report.write(json.dumps(kw, default=str) + "\n")

    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from kernelab.bench import bench
    from kernelab.gpu import load, synchronize
    from kernelab.gpu.errors import KernelFault, is_sticky_message
    from kernelab.ops import Case, discover
    from kernelab.ops.attention.op import launch_attention, validate_tensors

    torch.backends.cuda.matmul.allow_tf32 = False  # the fp32 reference stays fp32
    torch.backends.cudnn.allow_tf32 = False
    cc = torch.cuda.get_device_capability()
    if cc != (9, 0):
        emit(event="fatal", error=f"this sweep builds sm_90a/sm_90 cubins; the GPU is sm_{cc[0]}{cc[1]}")
        return 2
    op = discover()["attention"]
    emit(event="ready", device=torch.cuda.get_device_name(), torch=torch.__version__, cuda=torch.version.cuda)
    deadline = args.deadline

    def case_of(shape, causal):
        return Case(tuple(shape), "bfloat16", params=(("causal", bool(causal)),))

    bench_inputs = op.make_inputs(case_of(BENCH_SHAPE, False), seed=1234)
    q, k, v = bench_inputs["q"], bench_inputs["k"], bench_inputs["v"]
    scale = 1.0 / math.sqrt(BENCH_SHAPE[3])

    def sdpa_baselines(tag: str):
        for label, backend in (("sdpa", None), ("sdpa[flash]", SDPBackend.FLASH_ATTENTION)):
            for causal in (False, True):
                fn = lambda c=causal: F.scaled_dot_product_attention(q, k, v, is_causal=c, scale=scale)  # noqa: E731
                try:
                    if backend is None:
                        m = bench(fn, mode="cold", target_rel=0.01, max_wall_s=1.5, name=f"{label} causal={causal}")
                    else:
                        with sdpa_kernel(backend):
                            m = bench(fn, mode="cold", target_rel=0.01, max_wall_s=1.5,
                                      name=f"{label} causal={causal}")
                    emit(event="baseline", tag=tag, peer=label, causal=causal, measurement=m.to_dict())
                except Exception as e:
                    emit(event="baseline", tag=tag, peer=label, causal=causal, error=f"{type(e).__name__}: {e}")

    if args.baselines:
        sdpa_baselines("start")

    def reference(qq, kk, vv, causal):
        """O and LSE in fp32: SDPA's math backend, and logsumexp of the fp32 scores."""
        d = qq.shape[-1]
        qf, kf, vf = qq.float(), kk.float(), vv.float()
        with sdpa_kernel(SDPBackend.MATH):
            o = F.scaled_dot_product_attention(qf, kf, vf, is_causal=causal, scale=1.0 / math.sqrt(d))
        sc = (qf @ kf.transpose(-1, -2)) * (1.0 / math.sqrt(d))
        if causal:
            s = sc.shape[-1]
            sc = sc.masked_fill(torch.ones(s, s, dtype=torch.bool, device=sc.device).triu(1), float("-inf"))
        return o, torch.logsumexp(sc, dim=-1)

    def compare(got, ref, rtol, atol):
        got = got.float()
        err = (got - ref).abs()
        bad = ~(err <= atol + rtol * ref.abs())  # NaN counts as bad
        return {"max_abs": float(torch.nan_to_num(err, nan=float("inf")).max()), "bad": int(bad.sum()),
                "nan": int(torch.isnan(got).sum()), "n": got.numel()}

    (o_rtol, o_atol), (l_rtol, l_atol) = op.tolerances["bfloat16"], op.tolerances["float32"]

    def launcher(cfg, kernel, g):
        """launch(case, inputs, outputs) for this configuration: v3 takes TMA maps and its own grid."""
        if cfg.variant == tuning.V3:
            from kernelab.ops.attention.v3_wgmma_tma import launch_v3

            k = tuning.knobs(cfg.variant, cfg.overrides)
            return lambda case, inputs, outputs: launch_v3(kernel, g.smem(case.shape[3]), k["BLOCK_N"],
                                                           bool(k["PERSISTENT"]), case, inputs, outputs)
        return lambda case, inputs, outputs: launch_attention(kernel, g.block, g.block_m, g.smem(case.shape[3]),
                                                              case, inputs, outputs)

    def check(launch) -> dict:
        rows, ok = [], True
        for shape in CHECK_SHAPES:
            for causal in (False, True):
                case = case_of(shape, causal)
                inputs = op.make_inputs(case, seed=7 + shape[2] + int(causal))
                outputs = op.make_outputs(case, inputs)
                outputs["o"].fill_(float("nan"))
                outputs["lse"].fill_(float("nan"))
                launch(case, inputs, outputs)
                synchronize()
                ro, rl = reference(inputs["q"], inputs["k"], inputs["v"], causal)
                co = compare(outputs["o"], ro, o_rtol, o_atol)
                cl = compare(outputs["lse"], rl, l_rtol, l_atol)
                good = co["bad"] == 0 and cl["bad"] == 0
                ok &= good
                rows.append({"shape": list(shape), "causal": causal, "ok": good, "o": co, "lse": cl})
        return {"ok": ok, "cases": rows}

    def check_bench_output(o, lse, causal) -> dict:
        """The first and the last head of a timed run's outputs against the fp32 reference."""
        b, h, s, d = BENCH_SHAPE
        out = {"ok": True}
        for name, (bi, hi) in (("first_head", (0, 0)), ("last_head", (b - 1, h - 1))):
            ro, rl = reference(q[bi:bi + 1, hi:hi + 1], k[bi:bi + 1, hi:hi + 1], v[bi:bi + 1, hi:hi + 1], causal)
            co = compare(o[bi:bi + 1, hi:hi + 1], ro, o_rtol, o_atol)
            cl = compare(lse[bi:bi + 1, hi:hi + 1], rl, l_rtol, l_atol)
            out[name] = {"o": co, "lse": cl}
            out["ok"] &= co["bad"] == 0 and cl["bad"] == 0
        return out

    for name in [n for n in args.run.split(",") if n]:
        if time.time() > deadline - PER_CONFIG_S:
            emit(event="skipped", config=name, why="time budget")
            continue
        cfg = tuning.sweep_configs([name])[0]
        g = cfg.geometry
        emit(event="start", config=name)
        try:
            module = load(kernel_path(cfg.variant), arch=arch_for(cfg.variant), defines=cfg.defines)
            kernel = module.kernel("attention_bf16")
            blocks = kernel.max_active_blocks_per_sm(g.block, g.smem_d128)
            emit(event="loaded", config=name, num_regs=kernel.attributes.num_regs, blocks_per_sm_d128=blocks)
            launch = launcher(cfg, kernel, g)
            chk = check(launch)
            emit(event="check", config=name, **chk)
            if not chk["ok"]:
                continue
            for causal in (False, True):
                case = case_of(BENCH_SHAPE, causal)
                outputs = op.make_outputs(case, bench_inputs)
                qq, kk, vv, oo, ll = validate_tensors(case, bench_inputs, outputs)
                grid = (-(-BENCH_SHAPE[2] // g.block_m), BENCH_SHAPE[0] * BENCH_SHAPE[1])
                smem = g.smem(BENCH_SHAPE[3])

                if cfg.variant == tuning.V3:  # TMA maps (encoded once, then cached) and its own grid
                    def fn(case=case, outputs=outputs):
                        launch(case, bench_inputs, outputs)
                else:
                    def fn(c=int(causal), oo=oo, ll=ll):
                        kernel(qq, kk, vv, oo, ll, BENCH_SHAPE[2], BENCH_SHAPE[3], c, scale, grid=grid,
                               block=g.block, shared_mem=smem)

                m = bench(fn, mode="cold", target_rel=0.01, max_wall_s=1.5, name=f"{name} causal={causal}")
                synchronize()
                verdict = check_bench_output(oo, ll, causal)
                emit(event="time", config=name, causal=causal, measurement=m.to_dict(), output_check=verdict)
            emit(event="done", config=name)
        except Exception as e:
            msg = f"{type(e).__name__}: {e}"
            sticky = isinstance(e, KernelFault) or is_sticky_message(msg)
            emit(event="error", config=name, sticky=sticky, error=msg[-3000:], traceback=traceback.format_exc()[-3000:])
            if sticky:
                return 3  # the CUDA context is gone: the parent starts a fresh child for the rest
    if args.baselines_end and time.time() < deadline - SDPA_END_S:
        sdpa_baselines("end")
    emit(event="finished")
    return 0


# ---- supervisor (parent side) ---------------------------------------------------------------

def child_command(report: Path, todo: list[str], deadline: float, baselines: bool) -> list[str]:
    """The GPU child's command line (tests replace this with a scripted stand-in)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--report", str(report),
           "--run", ",".join(todo), "--deadline", repr(deadline), "--baselines-end"]
    return cmd + (["--baselines"] if baselines else [])


def supervise(args, configs, builds, t_start) -> tuple[list[dict], list[str]]:
    """Run the GPU child over the buildable configurations, replacing it after a crash or a hang.
    Returns (every report line, notes)."""
    todo = [c.name for c in configs if not builds[c.name].get("error")]
    deadline = t_start + args.budget_s
    lines: list[dict] = []
    notes: list[str] = []
    folder = Path(tempfile.mkdtemp(prefix="kernelab-sweep-"))
    for attempt in range(len(todo) + 1):  # each restart retires at least the configuration that ended the last child
        if not todo:
            break
        if time.time() > deadline - PER_CONFIG_S:
            notes.append(f"time budget: not run: {', '.join(todo)}")
            break
        report = folder / f"child{attempt}.jsonl"
        cmd = child_command(report, todo, deadline - 2.0, baselines=attempt == 0)
        proc = subprocess.Popen(cmd, env=os.environ.copy(), start_new_session=True)
        state = {"current": None, "ready": False}
        todo_before = list(todo)

        def absorb(entries):
            for _, d in entries:
                lines.append(d)
                ev, name = d.get("event"), d.get("config")
                if ev == "ready":
                    state["ready"] = True
                elif ev == "start":
                    state["current"] = name
                elif ev in ("done", "skipped", "error") or (ev == "check" and not d.get("ok")):
                    if name in todo:
                        todo.remove(name)
                    state["current"] = None

        pos, last_progress, status = 0, time.time(), None
        while status is None:
            time.sleep(0.2)
            new = _read_new(report, pos)
            if new:
                pos = new[-1][0]
                last_progress = time.time()
                absorb(new)
            rc = proc.poll()
            if rc is not None:
                absorb(_read_new(report, pos))
                status = rc
            elif time.time() - last_progress > args.stall_s:
                status = "hang"
            elif time.time() > deadline + 10.0:
                status = "time budget"
            if status in ("hang", "time budget"):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if status == 0:
            break
        if not state["ready"]:
            notes.append(f"the GPU child failed before it was ready (exit {status}); its stderr is above")
            break
        current = state["current"]
        if current is not None:  # the child died or was killed inside this configuration
            err = {"hang": f"hang: no report for {args.stall_s:.0f} s; the child was killed",
                   "time budget": "time budget: killed at the deadline"}.get(
                status, f"crash: the child exited with status {status} inside this configuration")
            lines.append({"event": "error", "config": current, "sticky": True, "error": err})
            notes.append(f"{current}: {err}")
            if current in todo:
                todo.remove(current)
        elif status != 3:  # 3: a configuration broke the CUDA context and said so (an "error" line)
            notes.append(f"the GPU child stopped between configurations (status {status})")
        if todo == todo_before:
            notes.append(f"no progress in the last child (status {status}); stopping with {', '.join(todo)} not run")
            break
    return lines, notes


def _read_new(path: Path, pos: int) -> list[tuple[int, dict]]:
    if not path.exists():
        return []
    out = []
    with open(path) as f:
        f.seek(pos)
        while True:
            line = f.readline()
            if not line or not line.endswith("\n"):
                break
            out.append((f.tell(), json.loads(line)))
    return out


# ---- results --------------------------------------------------------------------------------

def assemble(configs, builds, lines, notes, args, t_start) -> dict:
    from kernelab.ops import Case, discover

    op = discover()["attention"]
    work = {c: op.work(Case(BENCH_SHAPE, "bfloat16", params=(("causal", c),))).flops for c in (False, True)}
    meta = next((d for d in lines if d.get("event") == "ready"), {})
    baselines: dict = {}
    for d in lines:
        if d.get("event") == "baseline":
            key = d["peer"] if d["tag"] == "start" else f"{d['peer']} (end)"
            entry = baselines.setdefault(key, {})
            mode = "causal" if d["causal"] else "noncausal"
            if "measurement" in d:
                med = d["measurement"]["median_s"]
                entry[mode] = {"median_s": med, "tflops": work[d["causal"]] / med / 1e12,
                               "measurement": d["measurement"]}
            else:
                entry[mode] = {"error": d.get("error")}

    def ref(peer, mode):
        return baselines.get(peer, {}).get(mode, {}).get("median_s")

    rows = []
    for c in configs:
        row = c.to_dict()
        row["compile"] = builds[c.name]
        row["status"] = "compile_error" if builds[c.name].get("error") else "not_run"
        mine = [d for d in lines if d.get("config") == c.name]
        for d in mine:
            ev = d["event"]
            if ev == "loaded":
                row["num_regs"], row["blocks_per_sm_d128"] = d["num_regs"], d["blocks_per_sm_d128"]
            elif ev == "check":
                row["check"] = {"ok": d["ok"], "cases": d["cases"]}
                row["status"] = "checked" if d["ok"] else "wrong"
            elif ev == "time":
                mode = "causal" if d["causal"] else "noncausal"
                med = d["measurement"]["median_s"]
                t = {"median_s": med, "tflops": work[d["causal"]] / med / 1e12, "output_check": d["output_check"],
                     "measurement": d["measurement"]}
                for peer, key in (("sdpa", "x_sdpa"), ("sdpa[flash]", "x_flash")):
                    r = ref(peer, mode)
                    t[key] = r / med if r else None
                row.setdefault("timings", {})[mode] = t
                if not d["output_check"]["ok"]:
                    row["status"] = "wrong_at_bench_size"
            elif ev == "done":
                if row["status"] == "checked":
                    row["status"] = "ok"
            elif ev == "error":
                row["status"] = "hang" if str(d.get("error", "")).startswith("hang") else (
                    "crash" if d.get("sticky") else "error")
                row["error"] = d.get("error")
            elif ev == "skipped":
                row["status"] = "skipped"
                row["error"] = d.get("why")
        rows.append(row)
    fatal = [d for d in lines if d.get("event") == "fatal"]
    return {
        "schema": "kernelab-sweep-attention-1",
        "bench_case": {"shape": list(BENCH_SHAPE), "dtype": "bfloat16", "flops": {"noncausal": work[False],
                                                                                   "causal": work[True]}},
        "check_shapes": [list(s) for s in CHECK_SHAPES],
        "protocol": "kernelab.bench.bench(mode='cold', target_rel=0.01, max_wall_s=1.5); ratios = "
                    "peer median / config median (> 1: the config is faster)",
        "device": meta.get("device"), "torch": meta.get("torch"), "cuda": meta.get("cuda"),
        "wall_s": round(time.time() - t_start, 1), "budget_s": args.budget_s,
        "baselines": baselines, "configs": rows, "notes": notes + [d.get("error") for d in fatal],
    }


def table(result: dict) -> str:
    def fmt(t, key):
        if not t:
            return "-"
        r = t.get(key)
        return f"{r:.2f}" if r else "-"

    lines = [f"attention sweep, B4 H32 S4096 D128 bf16 on {result.get('device')} ({result['wall_s']} s)",
             f"{'config':<28} {'status':<9} {'regs':>4} {'smem':>6} {'blk':>3}  "
             f"{'noncausal':>9} {'xSDPA':>5} {'xFA2':>5}  {'causal':>7} {'xSDPA':>5} {'xFA2':>5}"]
    for peer, entry in result["baselines"].items():
        nc, c = entry.get("noncausal", {}), entry.get("causal", {})
        lines.append(f"{peer:<28} {'peer':<9} {'':>4} {'':>6} {'':>3}  {nc.get('tflops', float('nan')):9.1f} "
                     f"{'':>5} {'':>5}  {c.get('tflops', float('nan')):7.1f}")
    for row in result["configs"]:
        comp = row["compile"]
        nc = row.get("timings", {}).get("noncausal")
        c = row.get("timings", {}).get("causal")
        regs = str(comp.get("registers") if comp.get("registers") is not None else "-")
        regs += "!" if comp.get("spills") else ""  # spilled (the CPU test forbids it under NVRTC 13.0)
        lines.append(f"{row['name']:<28} {row['status']:<9} {regs:>4} {row['geometry']['smem_d128'] // 1024:>5}K "
                     f"{row.get('blocks_per_sm_d128', '-'):>3}  "
                     f"{(nc or {}).get('tflops', float('nan')):9.1f} {fmt(nc, 'x_sdpa'):>5} {fmt(nc, 'x_flash'):>5}  "
                     f"{(c or {}).get('tflops', float('nan')):7.1f} {fmt(c, 'x_sdpa'):>5} {fmt(c, 'x_flash'):>5}")
        if row["status"] not in ("ok", "not_run", "skipped"):
            lines.append(f"    {row['status']}: {str(row.get('error') or _first_bad(row))[:200]}")
    lines += [f"note: {n}" for n in result["notes"] if n]
    lines.append("TFLOP/s = 4 B H S^2 D (halved when causal) / median; xSDPA, xFA2 = peer median / config median "
                 "(target: v2 >= 0.9 xSDPA, v1 >= 1.0 xFA2). blk = resident blocks per SM at D = 128; "
                 "regs! = the build spilled.")
    return "\n".join(lines)


def _first_bad(row) -> str:
    for case in (row.get("check") or {}).get("cases", []):
        if not case["ok"]:
            return (f"check failed at {case['shape']} causal={case['causal']}: O {case['o']}, LSE {case['lse']}")
    for mode, t in (row.get("timings") or {}).items():
        if not t["output_check"]["ok"]:
            return f"{mode} bench output: {t['output_check']}"
    comp = row.get("compile", {})
    return comp.get("error") or ""


# ---- main -----------------------------------------------------------------------------------

def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", help="JSON results file")
    p.add_argument("--configs", default="", help="comma-separated names from tuning.SWEEP (default: all)")
    p.add_argument("--budget-s", type=float, default=105.0,
                   help="wall-clock budget for the whole sweep, builds included (the child is killed 10 s past it)")
    p.add_argument("--stall-s", type=float, default=STALL_S, help="a child silent this long is killed as hung")
    p.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 1), help="parallel builds")
    p.add_argument("--dry-run", action="store_true", help="build and print the plan; no GPU needed")
    p.add_argument("--no-sass", action="store_true", help="skip the SASS counts of each build (cuobjdump)")
    # child-side options (the parent passes these)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--report", help=argparse.SUPPRESS)
    p.add_argument("--run", default="", help=argparse.SUPPRESS)
    p.add_argument("--deadline", type=float, default=0.0, help=argparse.SUPPRESS)
    p.add_argument("--baselines", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--baselines-end", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        return child(args)

    t_start = time.time()
    configs = tuning.sweep_configs([n for n in args.configs.split(",") if n])
    # One cache folder for the builders and the GPU child (the user's cache may be read-only).
    os.environ.setdefault("KERNELAB_CACHE_DIR", tempfile.mkdtemp(prefix="kernelab-cubins-"))
    builds = build_all(configs, args.jobs, with_sass=not args.no_sass)
    print(f"built {len(configs)} configurations in {time.time() - t_start:.1f} s "
          f"({sum(1 for b in builds.values() if b.get('error'))} failed)", flush=True)
    if args.dry_run:
        for c in configs:
            b = builds[c.name]
            print(f"{c.name:<28} {c.variant:<18} {b['arch']:<7} regs {b.get('registers')} spills {b.get('spills')} "
                  f"stack {b.get('stack')} sass {b.get('sass')} smem_d128 {c.geometry.smem_d128} "
                  f"{'ERROR ' + b['error'][:300] if b.get('error') else ''}")
        return 0 if not any(b.get("error") for b in builds.values()) else 1
    if not args.out:
        p.error("--out is required (or --dry-run)")
    lines, notes = supervise(args, configs, builds, t_start)
    result = assemble(configs, builds, lines, notes, args, t_start)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1, default=str))
    print(table(result))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
