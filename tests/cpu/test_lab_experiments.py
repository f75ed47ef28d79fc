"""The lab's experiments without a GPU: the registry and its citations, lazy imports, the lab's
kernels (compiled for sm_80 and sm_90 by NVRTC), and each experiment's verdict logic fed with
synthetic measurements: numbers that hold the claim and numbers that do not."""

import importlib
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kernelab.lab import _common, bandwidth, compat, execution, faults, gemm_tiling, graph_buckets, launch, load_all, \
    memory
from kernelab.lab.base import DIFFERS, HOLDS

ROOT = Path(__file__).resolve().parents[2]

ISSUE_EXPERIMENTS = {
    "vector_add_bandwidth", "bf16_vs_fp32", "l2_flush", "launch_overhead", "small_grid", "coalescing",
    "bank_conflicts", "warp_divergence", "occupancy", "sticky_errors", "arch_compat", "misaligned_views",
    "malloc_free", "graph_buckets", "gemm_tiling", "syncthreads_hang",
}
CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")


def checks_by_name(verdict):
    return {c.what: c for c in verdict.checks}


# ---- the registry ------------------------------------------------------------------------------

def test_registry_holds_every_experiment_of_the_issue():
    exps = load_all()
    assert ISSUE_EXPERIMENTS <= set(exps), sorted(ISSUE_EXPERIMENTS - set(exps))
    assert len(exps) >= 16
    assert len({e.title for e in exps.values()}) == len(exps), "titles must tell experiments apart"


@pytest.mark.parametrize("name", sorted(ISSUE_EXPERIMENTS))
def test_claim_is_english_and_cites_a_seed_file_and_section(name):
    e = load_all()[name]
    for part in e.source.split(";"):
        part = part.strip()
        assert re.match(r"^seeds/00[034] §\S", part), f"{name}: '{part}' is not 'seeds/NNN §section'"
    assert not CJK.search(e.claim) and not CJK.search(e.title), f"{name}: the claim is stated in English"
    assert len(e.claim) > 80, f"{name}: state the claim with its numbers"


@pytest.mark.parametrize("name", sorted(ISSUE_EXPERIMENTS))
def test_every_experiment_has_a_quick_mode(name):
    """Sizes or sample counts depend on ctx.quick: directly, through pick(ctx, ...), or through the
    bench options that timed(ctx, ...) takes from it."""
    src = inspect.getsource(load_all()[name].fn)
    assert re.search(r"pick\(ctx|ctx\.quick|timed\(ctx", src), f"{name} has no quick mode"


def test_listing_the_experiments_imports_neither_torch_nor_cuda():
    code = ("import sys; sys.modules['torch'] = None; sys.modules['cuda'] = None; sys.modules['cuda.core'] = None\n"
            "from kernelab.lab import load_all\nprint(len(load_all()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) >= 16


def test_cli_lab_list_shows_every_claim():
    from typer.testing import CliRunner

    from kernelab.cli import app

    res = CliRunner().invoke(app, ["lab", "list", "--json"])
    assert res.exit_code == 0, res.output
    listed = {row["name"]: row for row in json.loads(res.output)}
    assert ISSUE_EXPERIMENTS <= set(listed)
    assert all(row["source"].startswith("seeds/") for row in listed.values())


def test_worker_targets_name_importable_functions():
    for target in (faults.STICKY_TARGET, faults.BARRIER_TARGET, memory.MISALIGNED_TARGET, memory.MALLOC_FREE_TARGET,
                   compat.TARGET):
        module, func = target.split(":")
        assert module.startswith("kernelab.lab.")
        assert callable(getattr(importlib.import_module(module), func)), target


# ---- the lab's kernels -------------------------------------------------------------------------------

KERNELS = {
    "strided_copy": ({"strided_copy"}, [None]),
    "smem_column": ({"smem_column"}, [{"PAD": 0}, {"PAD": 1}]),
    "divergence": ({"branchy"}, [None]),
    "occupancy_probe": ({"probe"}, [None]),
    "faults": ({"illegal_store", "fill"}, [None]),
    "scale": ({"scale"}, [None]),
    "vec16_unchecked": ({"add_vec16_unchecked", "add_vec16_typed"}, [None]),
    "latency": ({"pointer_chase"}, [None]),
    "launch": ({"touch"}, [None]),
    "barrier": ({"sync_after_return", "counted_barrier", "waiter_skips_barrier", "sync_fixed"}, [None]),
    "gemm_pad": ({"tiled_nn", "tiled_tn"}, [{"PAD": 0}, {"PAD": 1}]),
}


def test_every_lab_kernel_file_is_listed_here():
    assert {p.stem for p in _common.KERNELS.glob("*.cu")} == set(KERNELS)


@pytest.mark.parametrize("name", sorted(KERNELS))
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_lab_kernels_compile_without_spills(name, arch):
    from kernelab.gpu import compile_file

    names, variants = KERNELS[name]
    for defines in variants:
        c = compile_file(_common.kernel_file(name), arch=arch, defines=defines)
        assert set(c.resources) == names
        for k, r in c.resources.items():
            assert r.spill_stores == 0 and r.spill_loads == 0, f"{name}/{k} spills on {arch}"


def test_padding_changes_the_static_shared_memory_as_declared():
    from kernelab.gpu import compile_file

    for name, base in (("smem_column", 32 * 32 * 4), ("gemm_pad", 2 * 16 * 16 * 4)):
        unpadded = compile_file(_common.kernel_file(name), arch="sm_90", defines={"PAD": 0})
        padded = compile_file(_common.kernel_file(name), arch="sm_90", defines={"PAD": 1})
        assert max(r.shared_static for r in unpadded.resources.values()) == base
        assert max(r.shared_static for r in padded.resources.values()) > base


# ---- shared helpers ------------------------------------------------------------------------------------

def test_about_pick_and_pow2():
    assert _common.about(600) == pytest.approx((400, 900))
    quick, full = type("C", (), {"quick": True})(), type("C", (), {"quick": False})()
    assert _common.pick(quick, quick=1, full=2) == 1 and _common.pick(full, quick=1, full=2) == 2
    assert _common.pow2(1 << 28) == "2^28" and _common.pow2(100000) == "100,000"
    assert _common.host_calls(True, warmup=2, samples=10) == 13


# ---- 1-3, 5: bandwidth ------------------------------------------------------------------------------------

def test_vector_add_verdict():
    v = bandwidth.vector_add_verdict(nominal=4.8e12, achievable=4.3e12, bw_naive=0.85 * 4.8e12, bw_best=0.97 * 4.3e12)
    assert v.status == HOLDS
    v = bandwidth.vector_add_verdict(nominal=4.8e12, achievable=4.3e12, bw_naive=0.72 * 4.8e12, bw_best=0.97 * 4.3e12)
    c = checks_by_name(v)[bandwidth.NAIVE_PCT]
    assert v.status == DIFFERS and not c.holds and c.deviation == pytest.approx(0.1)
    assert bandwidth.vector_add_verdict(4.8e12, 4.3e12, 0.85 * 4.8e12, 0.90 * 4.3e12).status == DIFFERS


def test_bf16_range_comes_from_the_seeds_two_intervals():
    lo, hi = bandwidth.bf16_ratio_range()
    assert lo == pytest.approx(0.85 / 2.0) and hi == pytest.approx(1.0 / 1.7)
    assert bandwidth.bf16_verdict(t_fp32=1.0e-3, t_bf16=0.5e-3).status == HOLDS
    assert bandwidth.bf16_verdict(t_fp32=1.0e-3, t_bf16=0.7e-3).status == DIFFERS


def test_l2_flush_verdict():
    assert bandwidth.l2_flush_verdict(5.6e-6, 3.2e-6, 900e-6, 898e-6).status == HOLDS
    v = bandwidth.l2_flush_verdict(5.0e-6, 4.9e-6, 900e-6, 898e-6)
    assert v.status == DIFFERS and not checks_by_name(v)[bandwidth.L2_SMALL].holds
    v = bandwidth.l2_flush_verdict(5.6e-6, 3.2e-6, 1000e-6, 800e-6)
    assert not checks_by_name(v)[bandwidth.L2_LARGE].holds


def test_small_grid_verdict_and_littles_law():
    assert bandwidth.little_bound(8e5, 600e-9) == pytest.approx(8e5 / 600e-9)
    v = bandwidth.small_grid_verdict(latency_s=650e-9, bw_small=0.4e12, bw_large=3.5e12, in_flight_bytes=8e5)
    assert v.status == HOLDS
    # faster than Little's law allows (the latency is wrong, or the kernel did less work)
    v = bandwidth.small_grid_verdict(latency_s=650e-9, bw_small=2.0e12, bw_large=3.5e12, in_flight_bytes=8e5)
    assert not checks_by_name(v)[bandwidth.LITTLE].holds
    assert not checks_by_name(bandwidth.small_grid_verdict(200e-9, 0.4e12, 3.5e12, 8e5))[bandwidth.LATENCY].holds


# ---- 4: launch ----------------------------------------------------------------------------------------------

def test_fixed_cost_recovers_a_synthetic_line():
    a, b = 3e-6, 1 / 4.3e12
    small, large = 43e6, 3 * 2**30
    fa, fb = launch.fixed_cost(a + b * small, small, a + b * large, large)
    assert fa == pytest.approx(a) and fb == pytest.approx(b)


def test_launch_verdict():
    assert launch.launch_verdict(host_launch_s=6e-6, loss_fraction=0.5, graph_launch_s=0.8e-6).status == HOLDS
    v = launch.launch_verdict(host_launch_s=3e-6, loss_fraction=0.2, graph_launch_s=2e-6)
    assert v.status == DIFFERS and sum(not c.holds for c in v.checks) == 3
    assert checks_by_name(v)[launch.HOST_LAUNCH].deviation == pytest.approx(0.4)


# ---- 6, 7, 12, 13: memory -------------------------------------------------------------------------------------

def test_bank_model():
    assert memory.column_read_degree(32) == 32 and memory.column_read_degree(33) == 1
    assert memory.bank_conflict_degree([7] * 32) == 1, "one word read by every lane is a broadcast"
    assert memory.bank_conflict_degree(range(32)) == 1
    assert memory.bank_conflict_degree([0, 32, 64, 0]) == 3
    assert memory.column_read_degree(16, rows=16) == 8


def test_coalescing_verdict():
    bw = {s: 3e12 / s for s in memory.STRIDES}
    assert memory.coalescing_verdict(bw).status == HOLDS
    bw[32] = 3e12 / 8
    v = memory.coalescing_verdict(bw)
    assert v.status == DIFFERS and checks_by_name(v)[memory.COALESCING].value == pytest.approx(8)


def test_bank_verdict():
    assert memory.bank_verdict(32e-6, 1.1e-6, 2.0e-3, 0.6e-3).status == HOLDS
    v = memory.bank_verdict(1.05e-6, 1.0e-6, 0.61e-3, 0.6e-3)
    assert sum(not c.holds for c in v.checks) == 2


def test_misaligned_verdict():
    assert memory.misaligned_verdict(True, 2, "crash", True, True).status == HOLDS
    assert memory.misaligned_verdict(True, 2, "wrong", True, True).status == HOLDS
    v = memory.misaligned_verdict(True, 0, "right", False, True)
    assert {c.what for c in v.checks if not c.holds} == {memory.PTR_MOD, memory.UNCHECKED, memory.OURS}


def test_malloc_free_verdict():
    holds = memory.malloc_free_verdict(malloc_s=40e-6, free_s=60e-6, free_spin_host_s=1.0e-3, spin_s=1.02e-3,
                                       cached_alloc_s=3e-6, cached_free_spin_host_s=8e-6, cached_spin_s=1.02e-3)
    assert holds.status == HOLDS
    no_sync = memory.malloc_free_verdict(40e-6, 60e-6, 70e-6, 1.02e-3, 3e-6, 8e-6, 1.02e-3)
    assert [c.what for c in no_sync.checks if not c.holds] == [memory.FREE_WAITS]


# ---- 8, 9: execution ------------------------------------------------------------------------------------------

def test_divergence_verdict():
    assert execution.divergence_verdict(t_f=10e-6, t_g=10.4e-6, t_divergent=20.5e-6, t_aligned=10.3e-6).status == HOLDS
    v = execution.divergence_verdict(t_f=10e-6, t_g=10e-6, t_divergent=10.2e-6, t_aligned=10.1e-6)
    assert {c.what for c in v.checks if not c.holds} == {execution.DIV_SUM, execution.DIV_DOUBLES}


def test_occupancy_example_through_the_calculator_holds():
    from kernelab.analysis import occupancy

    ex = execution.EXAMPLE
    o = occupancy(ex["cc"], ex["threads"], ex["regs"], ex["smem"])
    assert o.blocks_per_sm == execution.SEED_BLOCKS and o.limiter == "shared_memory"
    thirty_two = occupancy(ex["cc"], 32, ex["regs"], 0)
    v = execution.occupancy_verdict(o.blocks_per_sm, o.occupancy, 3, 0, thirty_two.occupancy, 0.6)
    assert v.status == HOLDS, v.summary()
    bad = execution.occupancy_verdict(o.blocks_per_sm, o.occupancy, 2, 5, thirty_two.occupancy, 1.0)
    assert {c.what for c in bad.checks if not c.holds} == {execution.API_BLOCKS, execution.MISMATCH, execution.BW_32}
    no_api = execution.occupancy_verdict(o.blocks_per_sm, o.occupancy, None, 0, thirty_two.occupancy, 0.6)
    assert execution.API_BLOCKS not in checks_by_name(no_api) and "9.0" in no_api.note


# ---- 10, 16: faults ----------------------------------------------------------------------------------------------

def test_sticky_verdict():
    err = "AcceleratorError: CUDA error: an illegal memory access was encountered"
    calls = [{"call": f"c{i}", "ok": False, "error": err} for i in range(6)]
    assert faults.sticky_verdict(True, calls, "crash", True).status == HOLDS
    calls[3] = {"call": "c3", "ok": True}
    v = faults.sticky_verdict(True, calls, "crash", True)
    assert [c.what for c in v.checks if not c.holds] == [faults.LATER_FAILED]
    assert faults.is_illegal_address("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered")
    assert not faults.is_illegal_address("CUDA error: misaligned address")
    assert faults.sticky_verdict(True, calls, "ok", False).status == DIFFERS


def test_barrier_verdict():
    hang = {"completed": False, "correct": None, "outcome": "hang",
            "detail": "no result after 5 s in the task; the watchdog killed the child's process group"}
    ok = {"completed": True, "correct": True, "outcome": "ok"}
    seeds_world = {"sync_fixed": ok, "sync_after_return_warp": hang}
    assert faults.barrier_verdict(seeds_world, parent_ok=True).status == HOLDS
    today = {"sync_fixed": ok, "sync_after_return_warp": ok, "sync_after_return_partial": ok, "counted_barrier": hang}
    v = faults.barrier_verdict(today, parent_ok=True)
    assert [c.what for c in v.checks if not c.holds] == [faults.SYNC_HANGS]
    nothing_hung = {k: ok for k in faults.FIRST_PASS}
    failed = {c.what for c in faults.barrier_verdict(nothing_hung, parent_ok=False).checks if not c.holds}
    assert failed == {faults.SYNC_HANGS, faults.ANY_HANG, faults.WATCHDOG, faults.HANG_PARENT_OK}


def test_barrier_cases_keep_threads_that_reach_the_barrier():
    for name, (kernel, active) in faults.BARRIER_CASES.items():
        assert kernel in KERNELS["barrier"][0]
        if active is not None:
            assert 0 < active(faults.BLOCK) < faults.BLOCK
    assert faults.BARRIER_CASES["sync_after_return_warp"][1](256) % 32 == 0
    assert faults.BARRIER_CASES["sync_after_return_partial"][1](256) % 32 != 0


# ---- 11: compat -----------------------------------------------------------------------------------------------------

def test_compat_helpers_and_verdict():
    assert compat.foreign_arch((9, 0)) == "sm_80" and compat.foreign_arch((8, 6)) == "sm_90"
    assert compat.foreign_arch((10, 0)) == "sm_80"
    assert compat.virtual_arch_for((9, 0)) == "compute_80" and compat.virtual_arch_for((7, 5)) == "compute_75"
    assert compat.is_no_kernel_image("sm_80 ... which this GPU cannot run (no kernel image)")
    assert compat.is_no_kernel_image("CUDA_ERROR_NO_BINARY_FOR_GPU")
    assert compat.compat_verdict(True, True, True, ptx_first_s=2.5, sass_first_s=0.01, ptx_later_s=0.002).status == HOLDS
    v = compat.compat_verdict(True, True, True, ptx_first_s=0.03, sass_first_s=0.002, ptx_later_s=0.001)
    assert [c.what for c in v.checks if not c.holds] == [compat.JIT_SECONDS]


def test_ptx_helpers_without_a_driver():
    from kernelab.gpu import KernelabError
    from kernelab.gpu.ptx import ptx_header, virtual_arch

    assert virtual_arch("compute_80").compute == "compute_80" and virtual_arch("8.0").compute == "compute_80"
    with pytest.raises(KernelabError, match="compute_80 instead of sm_80"):
        virtual_arch("sm_80")
    with pytest.raises(KernelabError, match="portable"):
        virtual_arch("compute_90a")
    text = "//\n// Generated by NVIDIA NVVM Compiler\n.version 8.7\n.target sm_80\n.address_size 64\n"
    assert ptx_header(text) == ("8.7", "sm_80") and ptx_header(text.encode()) == ("8.7", "sm_80")
    assert ptx_header("nothing") == (None, None)


# ---- 14: graph buckets ------------------------------------------------------------------------------------------

def test_buckets_verdict():
    assert graph_buckets.step_time(host_s=90e-6, gpu_s=40e-6) == 90e-6
    speed = {b: 2.0 for b in graph_buckets.BUCKETS}
    separate = {b: 2 << 20 for b in graph_buckets.BUCKETS}
    assert graph_buckets.buckets_verdict(speed, separate, True).status == HOLDS
    shared = {b: (2 << 20 if b == 64 else 0) for b in graph_buckets.BUCKETS}
    v = graph_buckets.buckets_verdict({**speed, 64: 1.01}, shared, True)
    assert {c.what for c in v.checks if not c.holds} == {graph_buckets.SPEEDUP, graph_buckets.MEMORY}


# ---- 15: gemm tiling -----------------------------------------------------------------------------------------------

def test_inner_loop_bank_conflicts_of_both_layouts():
    assert gemm_tiling.inner_loop_degrees("nn", 0) == {"A": 1, "B": 1}, "the seeds' loop reads rows: no conflict"
    assert gemm_tiling.inner_loop_degrees("tn", 0)["B"] == 8, "a column of 16-float rows: 2 banks for 16 lanes"
    assert gemm_tiling.inner_loop_degrees("tn", 1)["B"] == 1
    for i in range(16):
        assert gemm_tiling.inner_loop_degrees("nn", 1, i) == {"A": 1, "B": 1}


def test_gemm_verdict():
    assert gemm_tiling.gemm_verdict(10e-3, 1e-3, 1.3e-3, 1.0e-3, 1.4e-3, 1.0e-3).status == HOLDS
    v = gemm_tiling.gemm_verdict(10e-3, 1e-3, 1.0e-3, 1.0e-3, 1.4e-3, 1.0e-3)
    assert [c.what for c in v.checks if not c.holds] == [gemm_tiling.PAD_SEED]
    assert "1-way" in v.note and "8-way" in v.note


def test_compile_ptx_needs_a_driver_and_says_so():
    from kernelab.gpu import KernelabError, has_gpu
    from kernelab.gpu.ptx import compile_ptx

    source = _common.kernel_file("scale").read_text()
    if has_gpu():
        cp = compile_ptx(source, arch="compute_80", name="scale.cu")
        assert cp.target == "sm_80" and cp.ptx_version and b".entry scale" in cp.ptx
    else:
        with pytest.raises(KernelabError, match="needs a machine with an NVIDIA driver"):
            compile_ptx(source, arch="compute_80", name="scale.cu")
