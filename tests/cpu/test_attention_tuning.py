"""The attention kernels' tuning knobs without a GPU: the defaults in tuning.py are the sources'
#ifndef defaults and reproduce the headers' launch geometry; every configuration the sweep times
builds (v2 for sm_90a, v1 for sm_80 and sm_90) with no spills, no stack, no LDL/STL in SASS,
tensor-core instructions present, and no ptxas note that wgmma was serialised; the geometry
macros refuse a wrong header; ORDER_SOFTMAX puts every exp of the v2 key loop before the wait
that ends P V; and the sweep's supervisor (scripts/sweep_attention.py) survives a configuration
that computes wrong, crashes the CUDA context, dies, or hangs, with a scripted stand-in child."""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kernelab.analysis import sass_mix
from kernelab.analysis.sass import disassemble
from kernelab.gpu import CompileError, compile_file
from kernelab.ops import discover
from kernelab.ops.attention import tuning

ROOT = Path(__file__).resolve().parents[2]
OP = discover()["attention"]
TUNABLE = (tuning.V1, tuning.V2, tuning.V3)
# ptxas notes that mean a wgmma kernel lost its asynchrony: C7508 setmaxnreg ignored, C7510 /
# C7512 / C7513 wgmma serialised (register pressure or non-wgmma writes to its registers).
BAD_NOTES = ("C7508", "C7510", "C7512", "C7513")


def _path(variant: str) -> Path:
    return ROOT / "src" / "kernelab" / "ops" / "attention" / f"{variant}.cu"


def _build(cfg: tuning.Config, arch: str):
    return compile_file(_path(cfg.variant), arch=arch, defines=cfg.defines)


# ---- defaults and geometry ---------------------------------------------------------------------

@pytest.mark.parametrize("variant", TUNABLE)
def test_knob_defaults_are_the_sources_defaults(variant):
    assert tuning.source_defaults(variant) == tuning.KNOBS[variant]


@pytest.mark.parametrize("variant", TUNABLE)
def test_default_geometry_is_the_headers(variant):
    v = OP.variant(variant)
    g = tuning.geometry(variant)
    assert (g.block, g.block_m, g.smem_d64, g.smem_d128) == tuple(
        v.meta_int(k) for k in ("block", "block_m", "smem_d64", "smem_d128"))
    assert OP.defines(v) == tuning.expect_defines(g)  # what every library build of it checks
    assert tuning.build_defines(variant) == tuning.expect_defines(g)  # defaults pass no knob


def test_geometry_follows_the_knobs():
    g = tuning.geometry(tuning.V2, {"BLOCK_N": 176, "STAGES_D128": 2})
    assert g.smem_d128 == 128 * 128 * 2 + 2 * 2 * 176 * 128 * 2 + 128 + 1024 == 214144
    g1 = tuning.geometry(tuning.V1, {"WARPS": 4, "WARP_M": 32, "BLOCK_N": 32, "STAGES": 2})
    assert (g1.block, g1.block_m, g1.smem_d128) == (128, 128, (128 + 2 * 2 * 32) * 128 * 2)
    with pytest.raises(KeyError, match="no knob"):
        tuning.knobs(tuning.V2, {"BLOCK_M": 192})
    assert tuning.problems(tuning.V2, {"PRODUCER_REGS": 56, "CONSUMER_REGS": 240})  # 64,512 registers exceeded
    assert tuning.problems(tuning.V2, {"STAGES_D128": 4})  # 295 KB of shared memory


def test_sweep_configurations_are_distinct_and_valid():
    names = [c.name for c in tuning.SWEEP]
    assert len(names) == len(set(names))
    assert names[:2] == ["v2", "v1"], "the measured baselines run first"
    assert tuning.SWEEP[0].overrides == {} and tuning.SWEEP[1].overrides == {}
    settings = [(c.variant, tuple(sorted(tuning.knobs(c.variant, c.overrides).items()))) for c in tuning.SWEEP]
    assert len(settings) == len(set(settings)), "two configurations build the same kernel"
    for c in tuning.SWEEP:
        assert not tuning.problems(c.variant, c.overrides), c.name
        assert c.why, c.name
    with pytest.raises(KeyError, match="no sweep configuration"):
        tuning.sweep_configs(["v9"])


def test_header_and_macros_cannot_disagree():
    with pytest.raises(CompileError, match="EXPECT_SMEM_D128"):
        compile_file(_path(tuning.V2), arch="sm_90a", defines={"EXPECT_SMEM_D128": 164991}, use_cache=False)
    with pytest.raises(CompileError, match="EXPECT_BLOCK"):
        compile_file(_path(tuning.V1), arch="sm_90", defines={"WARPS": 4, "EXPECT_BLOCK": 256}, use_cache=False)
    with pytest.raises(CompileError, match="setmaxnreg"):
        compile_file(_path(tuning.V2), arch="sm_90a", defines={"PRODUCER_REGS": 56, "CONSUMER_REGS": 240},
                     use_cache=False)


# ---- every sweep configuration builds clean -----------------------------------------------------

def _builds():
    for c in tuning.SWEEP:
        for arch in tuning.ARCHS[c.variant]:
            yield c, arch


@pytest.mark.parametrize("cfg,arch", list(_builds()), ids=[f"{c.name}-{a}" for c, a in _builds()])
def test_configuration_builds_without_spills_or_local_memory(cfg, arch):
    m = _build(cfg, arch)
    r = m.resources["attention_bf16"]
    assert r.spills == 0 and r.stack_frame == 0, f"{cfg.name} [{arch}]: {r}"
    notes = [n for n in BAD_NOTES if n in m.log]
    assert not notes, f"{cfg.name} [{arch}]: ptxas says {notes}: {m.log}"
    mix = sass_mix(m.cubin)["attention_bf16"]
    assert mix.ldl == 0 and mix.stl == 0, f"{cfg.name} [{arch}] uses local memory"
    if cfg.variant in (tuning.V2, tuning.V3):
        assert mix.hgmma > 0 and mix.hmma == 0
        # The consumers' setmaxnreg.inc draws on the 384 x 168 registers the block starts with: an
        # entry count below 168 would leave it waiting forever.
        assert r.registers == tuning.V2_ENTRY_REGS
    else:
        assert mix.hmma > 0 and mix.hgmma == 0 and mix.ldsm > 0
        min_blocks = tuning.knobs(cfg.variant, cfg.overrides)["MIN_BLOCKS"]
        assert r.registers <= tuning.REGS_PER_SM // (cfg.geometry.block * min_blocks)


# ---- ORDER_SOFTMAX: the softmax runs under P V ----------------------------------------------------

@pytest.mark.parametrize("name", ["v2+order", "v2+order+n176", "v2+order+n176+lazy8+ilp4"])
def test_order_softmax_puts_every_exp_before_the_pv_wait(name):
    cfg = tuning.sweep_configs([name])[0]
    counts = _sweep_module().exps_between_waits(disassemble(_build(cfg, "sm_90a").cubin))
    block_n = tuning.knobs(cfg.variant, cfg.overrides)["BLOCK_N"]
    # Two key loops (D = 64 and D = 128), each with BLOCK_N / 2 exps of P per thread plus the corrections.
    assert len(counts) == 2 and all(c >= block_n // 2 for c in counts), counts


# ---- the sweep's supervisor, with a scripted child ------------------------------------------------

def _sweep_module():
    spec = importlib.util.spec_from_file_location("sweep_attention_under_test", ROOT / "scripts" / "sweep_attention.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


FAKE_CHILD = textwrap.dedent('''
    import json, sys, time
    args = sys.argv[1:]
    report = args[args.index("--report") + 1]
    run = [n for n in args[args.index("--run") + 1].split(",") if n]
    plan = json.loads(PLAN)
    out = open(report, "a", buffering=1)
    def emit(**kw): out.write(json.dumps(kw) + "\\n")
    emit(event="ready", device="fake", torch="0", cuda="0")
    if "--baselines" in args:
        for peer in ("sdpa", "sdpa[flash]"):
            for causal in (False, True):
                emit(event="baseline", tag="start", peer=peer, causal=causal,
                     measurement={"median_s": 0.002 if peer == "sdpa" else 0.004})
    for name in run:
        what = plan[name]
        emit(event="start", config=name)
        if what == "crash":
            emit(event="error", config=name, sticky=True, error="KernelFault: an illegal memory access")
            sys.exit(3)
        if what == "die":
            sys.exit(1)
        if what == "hang":
            time.sleep(60)
        ok = what != "wrong"
        emit(event="check", config=name, ok=ok, cases=[{"shape": [2, 3, 17, 128], "causal": False, "ok": ok,
             "o": {"bad": 0 if ok else 5}, "lse": {"bad": 0}}])
        if not ok:
            continue
        for causal in (False, True):
            emit(event="time", config=name, causal=causal, measurement={"median_s": 0.0025},
                 output_check={"ok": True})
        emit(event="done", config=name)
    emit(event="finished")
''')


def test_supervisor_survives_wrong_crashing_dying_and_hanging_configurations(tmp_path, monkeypatch):
    sweep = _sweep_module()
    plan = {"v2": "ok", "v1": "wrong", "v2+order": "crash", "v2+order+n176": "ok", "v3": "die",
            "v3-persistent": "hang", "v3+lazy8": "ok"}
    script = tmp_path / "fake_child.py"
    script.write_text(f"PLAN = {json.dumps(json.dumps(plan))}\n" + FAKE_CHILD)

    def fake_command(report, todo, deadline, baselines):
        return [sys.executable, str(script), "--report", str(report), "--run", ",".join(todo)] + (
            ["--baselines"] if baselines else [])

    monkeypatch.setattr(sweep, "child_command", fake_command)
    configs = tuning.sweep_configs(list(plan))
    builds = {c.name: {"arch": "sm_90a", "registers": 168} for c in configs}
    args = type("Args", (), {"budget_s": 60.0, "stall_s": 1.5})()
    t0 = time.time()
    lines, notes = sweep.supervise(args, configs, builds, t0)
    assert time.time() - t0 < 20
    result = sweep.assemble(configs, builds, lines, notes, args, t0)
    status = {r["name"]: r["status"] for r in result["configs"]}
    assert status == {"v2": "ok", "v1": "wrong", "v2+order": "crash", "v2+order+n176": "ok", "v3": "crash",
                      "v3-persistent": "hang", "v3+lazy8": "ok"}, (status, notes)
    by_name = {r["name"]: r for r in result["configs"]}
    t = by_name["v2"]["timings"]["noncausal"]
    assert t["x_sdpa"] == pytest.approx(0.002 / 0.0025) and t["x_flash"] == pytest.approx(0.004 / 0.0025)
    assert t["tflops"] == pytest.approx(4 * 4 * 32 * 4096 * 4096 * 128 / 0.0025 / 1e12)
    assert "timings" not in by_name["v1"], "a wrong kernel is never timed"
    text = sweep.table(result)
    assert "v3+lazy8" in text and "hang" in text and "0.80" in text


def test_child_checks_before_timing_and_reports_every_step(tmp_path, monkeypatch):
    """The GPU child's own code, on the CPU: a stand-in kernel computes the float64 reference (or,
    for one configuration, a wrong LSE), bench is a stand-in that calls fn twice. A wrong kernel is
    reported after its check and never timed; a right one is timed non-causal and causal, and its
    bench-size outputs pass the spot check."""
    import math as _math

    import torch

    import kernelab.bench
    import kernelab.gpu
    from kernelab.ops.attention.op import reference_attention

    sweep = _sweep_module()
    monkeypatch.setattr(sweep, "BENCH_SHAPE", (1, 2, 200, 128))
    monkeypatch.setattr(sweep, "CHECK_SHAPES", ((2, 3, 17, 128), (1, 2, 70, 64)))
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (9, 0))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "stand-in")
    make_inputs = type(OP).make_inputs
    monkeypatch.setattr(OP, "make_inputs", lambda case, seed, device="cpu", dist="normal":
                        make_inputs(OP, case, seed, "cpu", dist))
    launches = []

    class Kernel:
        def __init__(self, wrong):
            self.wrong = wrong
            self.attributes = type("A", (), {"num_regs": 168})()

        def max_active_blocks_per_sm(self, block, smem):
            return 1

        def __call__(self, q, k, v, o, lse, s, d, causal, scale, grid, block, shared_mem):
            assert grid == (-(-s // 128), q.shape[0] * q.shape[1]) and block == 384 and shared_mem > 0
            launches.append((tuple(q.shape), causal))
            ref = reference_attention(q, k, v, bool(causal), scale)
            o.copy_(ref["o"].to(o.dtype))
            lse.copy_(ref["lse"].float() * (_math.log2(_math.e) if self.wrong else 1.0))

    class Module:
        def __init__(self, wrong):
            self.k = Kernel(wrong)

        def kernel(self, name):
            return self.k

    def fake_load(path, arch=None, defines=None, **kw):
        assert arch == "sm_90a" and defines["EXPECT_BLOCK"] == 384
        return Module(wrong=defines.get("ORDER_SOFTMAX") == 1)

    class M:
        def __init__(self, t):
            self.median_s = t

        def to_dict(self):
            return {"median_s": self.median_s}

    def fake_bench(fn, **kw):
        assert kw["mode"] == "cold" and kw["target_rel"] == 0.01 and kw["max_wall_s"] == 1.5
        fn()
        fn()
        return M(0.001)

    monkeypatch.setattr(kernelab.gpu, "load", fake_load)
    monkeypatch.setattr(kernelab.gpu, "synchronize", lambda: None)
    monkeypatch.setattr(kernelab.bench, "bench", fake_bench)
    report = tmp_path / "report.jsonl"
    args = type("Args", (), {"report": str(report), "run": "v2,v2+order", "deadline": time.time() + 120,
                             "baselines": True, "baselines_end": False})()
    assert sweep.child(args) == 0
    lines = [json.loads(x) for x in report.read_text().splitlines()]
    events = [(d["event"], d.get("config")) for d in lines]
    assert events[0] == ("ready", None)
    assert [e for e in events if e[0] == "baseline"] == [("baseline", None)] * 4
    assert [e for e in events if e[1] == "v2"] == [("start", "v2"), ("loaded", "v2"), ("check", "v2"), ("time", "v2"),
                                                  ("time", "v2"), ("done", "v2")]
    assert [e for e in events if e[1] == "v2+order"] == [("start", "v2+order"), ("loaded", "v2+order"),
                                                        ("check", "v2+order")]
    by = {(d["event"], d.get("config"), d.get("causal")): d for d in lines}
    assert by[("check", "v2", None)]["ok"] and len(by[("check", "v2", None)]["cases"]) == 4
    bad = by[("check", "v2+order", None)]
    assert not bad["ok"] and all(c["o"]["bad"] == 0 and c["lse"]["bad"] > 0 for c in bad["cases"])
    for causal in (False, True):
        assert by[("time", "v2", causal)]["output_check"]["ok"]
    bench_launches = [x for x in launches if x[0] == (1, 2, 200, 128)]
    assert len(bench_launches) == 4 and {c for _, c in bench_launches} == {0, 1}  # 2 calls x causal and not
    configs = tuning.sweep_configs(["v2", "v2+order"])
    result = sweep.assemble(configs, {c.name: {"registers": 168} for c in configs}, lines, [],
                            type("Args", (), {"budget_s": 105.0})(), time.time())
    assert [r["status"] for r in result["configs"]] == ["ok", "wrong"]
