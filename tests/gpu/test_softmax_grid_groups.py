"""softmax v9_grid_groups (and v11_group_regs, v10's rows in the same groups) on a GPU, beyond the per-variant sweep of tests/gpu/test_ops_mem_b.py:
groups of C = 1, 4, 6, 11, 12 blocks (forced by `@group`) looping over 9-10 rows each, so the ring
of stages wraps at least twice and the exchange slots and mbarriers go through both parities;
misaligned rows (head / tail scalars), y not co-aligned with x (scalar stores), -inf / NaN / +inf
rows through the loop; the exchange counters after a launch (each group's = C x its rows: the
exchange really ran); two launches in a row on one workspace (re-zeroed); a CUDA graph captured
once and replayed twice on new inputs (the counters' memset is in the graph); and a cooperative
launch larger than the GPU holds refused with a LaunchError, not run.

A deadlock would hang the process at the next synchronisation, so every wait here polls an event
for at most HANG_S seconds, then prints what it waited for and exits the process (a hung kernel
cannot be killed; every later CUDA call would hang too). Failures name the instance, grid and rows.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time

import pytest
import torch

from kernelab.check import compare_outputs, tolerance
from kernelab.gpu import KernelFault, LaunchError, Module, compile_file, default_arch, device_info, last_launched_kernel
from kernelab.ops import discover, load_variant
from kernelab.ops.base import Case
from kernelab.ops.build import target_arch
from kernelab.ops.softmax import op as softmax_op

from ._softmax_rows import sm90_only

pytestmark = pytest.mark.gpu

OP = discover()["softmax"]
V9 = OP.variant("v9_grid_groups")
V11 = OP.variant("v11_group_regs")
SUFFIX = {"bfloat16": "bf16", "float32": "f32"}
HANG_S = 60.0


_needs_hopper = sm90_only("v9")


def _sync_or_die(what: str) -> None:
    ev = torch.cuda.Event()
    ev.record()
    t0 = time.monotonic()
    while not ev.query():
        if time.monotonic() - t0 > HANG_S:
            sys.stderr.write(f"\nHANG: {what} ({last_launched_kernel()}) did not finish in {HANG_S:.0f} s: a group "
                             f"waits for a block that never arrives (not co-resident? counters not zeroed?)\n")
            sys.stderr.flush()
            os._exit(3)
        time.sleep(0.001)
    try:
        torch.cuda.synchronize()
    except Exception as e:  # a fault: name the kernel
        raise AssertionError(f"{what}: {last_launched_kernel()} faulted: {e}") from None


_modules: dict = {}


def _module(meta=None, base=V9):
    """`base` (v9 or v11) with header values `meta` (None: the default's), and its loaded module."""
    key = (base.name, tuple(sorted((meta or {}).items())))
    if key not in _modules:
        v = dataclasses.replace(base, meta={**base.meta, **{k: str(x) for k, x in (meta or {}).items()}}) if meta else base
        if meta:
            d = OP.defines(v)
            mod = Module(compile_file(v.path, arch=target_arch(v, default_arch()).sm, defines=d), d)
        else:
            mod = load_variant(OP, v)
        _modules[key] = (v, mod)
    return _modules[key]


def _geometry(v, mod, m, n, dtype):
    """(plan, groups) the launch takes for M x N on this GPU (the launch's own arithmetic)."""
    sms, cc = device_info().sm_count, torch.cuda.get_device_capability()
    if v.meta.get("strategy") == "group_regs":
        p = softmax_op.group_regs_plan(n, m, cc, dtype, sms, *softmax_op.group_regs_knobs(v))
    else:
        p = softmax_op.grid_groups_plan(n, m, cc, dtype, sms, *softmax_op.grid_groups_knobs(v))
    assert p is not None, f"{v.name} plans nothing for {m} x {n} {dtype} ({v.meta})"
    per_sm = mod.kernel(f"{p.name}_{SUFFIX[dtype]}").max_active_blocks_per_sm(p.block, p.smem)
    return p, min(m, sms * per_sm // p.group)


def _launch(v, mod, case, inputs, outputs):
    try:
        OP.launch(mod.kernel(OP.kernel_name(case.dtype)), v, case, inputs, outputs)
    except KernelFault as e:
        raise AssertionError(f"{v.id} faulted on {case.label} in {last_launched_kernel()}: {e}") from None


def _check(case, inputs, outputs, what):
    rtol, atol = tolerance(OP, case.dtype)
    cmp = compare_outputs(outputs["y"], OP.reference(case, inputs)["y"], rtol, atol, nan_ok=True, max_report=3, name="y")
    assert cmp.ok, f"{what}: {cmp.summary(max_lines=3)}"


def _run(v, mod, case, dist="normal", seed=0):
    inputs = OP.make_inputs(case, seed, "cuda", dist)
    outputs = OP.make_outputs(case, inputs)
    outputs["y"].fill_(float("nan"))
    _launch(v, mod, case, inputs, outputs)
    _sync_or_die(f"{case.label} ({v.meta.get('group')})")
    return inputs, outputs


def _counters(groups):
    """The exchange counters of the current stream's workspace, one per group."""
    idx = torch.cuda.current_device()
    ws = softmax_op._gg_workspaces[(idx, torch.cuda.current_stream().cuda_stream)]
    return ws[: groups * softmax_op.GG_COUNTER_STRIDE : softmax_op.GG_COUNTER_STRIDE].cpu().tolist()


# (N, dtype, offset, layout, forced group)
LOOPS = [(131072, "bfloat16", 0, None, 4), (131072, "bfloat16", 0, None, 6), (131072, "float32", 0, None, 11),
         (131072, "float32", 1, None, 12), (65537, "bfloat16", 3, None, 6), (100000, "bfloat16", 1, "mixed_alignment", 4),
         (16385, "float32", 1, None, 1), (40000, "float32", 3, "mixed_alignment", 11)]


@pytest.mark.parametrize("n,dtype,offset,layout,group", LOOPS, ids=lambda x: str(x))
def test_every_group_loops_through_both_parities(n, dtype, offset, layout, group):
    v, mod = _module({"group": group})
    p, groups = _geometry(v, mod, 1 << 30, n, dtype)
    m = 9 * groups + 1  # 9 rows a group, a 10th for one: the ring (3-4 stages) wraps twice
    kw = {"offset": offset} | ({"layout": layout} if layout else {})
    case = Case((m, n), dtype, **kw)
    inputs, outputs = _run(v, mod, case)
    assert last_launched_kernel() == f"softmax_gg_c{group}_{SUFFIX[dtype]}"
    _check(case, inputs, outputs, f"{case.label} via {p.name} ({groups} groups of {group}, {p.smem} B ring)")
    if group > 1:
        rows = [(m - 1 - g) // groups + 1 for g in range(groups)]
        assert _counters(groups) == [group * r for r in rows], "each group's counter = C x its rows"


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_default_plan_on_the_bench_width(dtype):
    """`@group auto` at N = 131072 (300 rows: a partial last round) and one row (the widest group)."""
    v, mod = _module()
    for m in (300, 1):
        case = Case((m, 131072), dtype)
        p, groups = _geometry(v, mod, m, 131072, dtype)
        inputs, outputs = _run(v, mod, case)
        _check(case, inputs, outputs, f"{case.label} via {p} ({groups} groups)")


def test_masked_and_special_rows_through_the_loop():
    """-inf entries, an all -inf row (NaN, as torch) and NaN / +inf rows inside the group loop."""
    for meta, case, dist in (({"group": 6}, Case((150, 70000), "bfloat16", params=(("mask", True),)), "special"),
                             ({"group": 11}, Case((100, 131072), "float32"), "special"),
                             ({}, Case((60, 131072), "bfloat16", params=(("mask", True),)), "normal")):
        v, mod = _module(meta)
        inputs, outputs = _run(v, mod, case, dist)
        _check(case, inputs, outputs, f"{case.label} ({dist}, group {meta.get('group', 'auto')})")


def test_two_launches_in_a_row_reuse_the_zeroed_workspace():
    v, mod = _module({"group": 6})
    p, groups = _geometry(v, mod, 1 << 30, 131072, "bfloat16")
    case = Case((4 * groups + 3, 131072), "bfloat16")
    first = _run(v, mod, case, seed=0)
    second = _run(v, mod, case, seed=1)  # without the memset its counters would start at 6 x rows: stale pairs
    _check(case, *first, "first launch")
    _check(case, *second, "second launch")
    rows = [(case.shape[0] - 1 - g) // groups + 1 for g in range(groups)]
    assert _counters(groups) == [6 * r for r in rows]


def test_cuda_graph_capture_and_two_replays():
    v, mod = _module({"group": 11})
    case = Case((50, 131072), "float32", offset=1)
    inputs = OP.make_inputs(case, 0, "cuda")
    outputs = OP.make_outputs(case, inputs)
    _launch(v, mod, case, inputs, outputs)  # load the module, build the workspace and configs outside capture
    _sync_or_die("warm-up")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(s):
        _launch(v, mod, case, inputs, outputs)  # the workspace for the capture stream, allocated before capture
        _sync_or_die("side-stream launch")
        with torch.cuda.graph(g, stream=s):
            _launch(v, mod, case, inputs, outputs)
    for seed in (1, 2):  # new inputs each replay: stale counters or pairs would give the old rows' (M, S)
        inputs["x"].copy_(OP.make_inputs(case, seed, "cuda")["x"])
        outputs["y"].fill_(float("nan"))
        g.replay()
        _sync_or_die(f"graph replay (seed {seed})")
        _check(case, inputs, outputs, f"graph replay, seed {seed}")


def test_a_grid_larger_than_the_gpu_holds_is_refused():
    """The cooperative launch checks co-residency: a grid one group past it raises, and never runs."""
    v, mod = _module({"group": 6})
    p, groups = _geometry(v, mod, 1 << 30, 131072, "bfloat16")
    k = mod.kernel(f"{p.name}_bf16")
    x = torch.zeros((8, 131072), dtype=torch.bfloat16, device="cuda")
    y = torch.empty_like(x)
    counters, slots = softmax_op.grid_groups_workspace(x.device, groups + 1, 6)
    with pytest.raises(LaunchError, match="cooperative"):
        k(x, y, 8, 131072, counters, slots, grid=(groups + 1) * 6, block=p.block, shared_mem=p.smem, cooperative=True)
    _sync_or_die("after the refused launch")


# ---- v11_group_regs: v10's register rows in the same groups; the exchange by every warp ---------
# (N, dtype, offset, layout, forced group): every C the share fits 256 threads x 64 registers at
LOOPS11 = [(131072, "bfloat16", 0, None, 8), (131072, "float32", 1, None, 11), (65537, "bfloat16", 3, None, 6),
           (100000, "bfloat16", 1, "mixed_alignment", 8), (16385, "float32", 1, None, 2),
           (40000, "float32", 3, "mixed_alignment", 11), (8192, "float32", 0, None, 1)]


@pytest.mark.parametrize("n,dtype,offset,layout,group", LOOPS11, ids=lambda x: str(x))
def test_v11_every_group_loops_through_both_parities(n, dtype, offset, layout, group):
    v, mod = _module({"group": group}, V11)
    p, groups = _geometry(v, mod, 1 << 30, n, dtype)
    m = 9 * groups + 1  # 9 rows a group, a 10th for one: the 2-stage ring wraps 4 times, both slot parities
    kw = {"offset": offset} | ({"layout": layout} if layout else {})
    case = Case((m, n), dtype, **kw)
    inputs, outputs = _run(v, mod, case)
    assert last_launched_kernel() == f"softmax_gr_c{group}_{SUFFIX[dtype]}"
    _check(case, inputs, outputs, f"{case.label} via {p.name} ({groups} groups of {group}, {p.smem} B ring)")
    if group > 1:
        rows = [(m - 1 - g) // groups + 1 for g in range(groups)]
        assert _counters(groups) == [group * r for r in rows], "each group's counter = C x its rows"


def test_v11_default_plan_special_rows_and_a_graph_replay():
    """`@group auto` at the bench width (300 rows, one row), -inf / NaN / +inf rows through the loop,
    and a captured launch replayed on new inputs (the counters' memset is in the graph)."""
    v, mod = _module(None, V11)
    for dtype in ("bfloat16", "float32"):
        for m in (300, 1):
            case = Case((m, 131072), dtype)
            p, groups = _geometry(v, mod, m, 131072, dtype)
            inputs, outputs = _run(v, mod, case)
            _check(case, inputs, outputs, f"{case.label} via {p} ({groups} groups)")
    case = Case((150, 70000), "bfloat16", params=(("mask", True),))
    _check(case, *_run(v, mod, case, "special"), f"{case.label} (special)")
    case = Case((40, 131072), "bfloat16", offset=1)
    inputs = OP.make_inputs(case, 0, "cuda")
    outputs = OP.make_outputs(case, inputs)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(s):
        _launch(v, mod, case, inputs, outputs)  # this stream's workspace, allocated before capture
        _sync_or_die("side-stream launch")
        with torch.cuda.graph(g, stream=s):
            _launch(v, mod, case, inputs, outputs)
    for seed in (1, 2):
        inputs["x"].copy_(OP.make_inputs(case, seed, "cuda")["x"])
        outputs["y"].fill_(float("nan"))
        g.replay()
        _sync_or_die(f"v11 graph replay (seed {seed})")
        _check(case, inputs, outputs, f"v11 graph replay, seed {seed}")
