"""softmax v4_dispatch's "dynamic_t128" instances (session 29): v12's rows (staged_rows.cuh's dynamic_rows) with the
block's threads and the ring's stages as template arguments, built in v4 beside its 256-thread instances as
softmax_dy_t128_c16_* from op.py's DISPATCH_BULK_T128. On the CPU: the plan, the defines, that the sm_90 code is
the code v12 compiles with the same knobs as macros (what session 28's sweep t128_28 timed), and that the
256-thread instances did not change when the block size became a template argument."""

from __future__ import annotations

import dataclasses
import re

import pytest

from kernelab.analysis.occupancy import occupancy_for_kernel
from kernelab.analysis.sass import run_cuobjdump
from kernelab.gpu import compile_file, toolchain
from kernelab.ops import Case, discover
from kernelab.ops.build import compile_variant
from kernelab.ops.softmax import op as softmax_op

from ._launch_recorder import record_launches

OP = discover()["softmax"]
V4 = OP.variant("v4_dispatch")
V12 = OP.variant("v12_dynamic_rows")
T128 = dataclasses.replace(V4, meta={**V4.meta, "dispatch_only": "dynamic_t128"})
STAGES, THREADS, PER_SM, CLUSTER, ELEMS = softmax_op.DISPATCH_BULK_T128


def test_knobs_match_the_instance_names_and_defines():
    """The threads and cluster are in the instances' names (softmax_dy_t128_c16_*); the stages and values a thread
    reach v4 as V4_T128_STAGES / V4_T128_ELEMS, so the plan's ring and the kernel's agree."""
    assert (THREADS, CLUSTER) == (128, 16)
    d = OP.defines(V4)
    assert d["V4_T128_STAGES"] == STAGES and d["V4_T128_ELEMS"] == ELEMS
    assert "dynamic_t128" in softmax_op.DISPATCH_ENTRIES and "dynamic_t128" in softmax_op.STRATEGIES


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_plan_is_clusters_of_16_blocks_of_128_threads(dtype):
    esize = 4 if dtype == "float32" else 2
    for n in (65537, 98304, 131072):
        p = OP.plan(T128, n, (9, 0), dtype)
        stage = 16 * -(-n * esize // (16 * CLUSTER))
        assert (p.name, p.block, p.cluster, p.smem, p.work) == ("softmax_dy_t128_c16", 128, 16, STAGES * stage, True)
        assert p.capacity >= n
    # 16 x 128 threads x 64 values hold 131072: wider rows fall back to v2's online kernel under `@dispatch_only`
    assert OP.plan(T128, 131073, (9, 0), dtype).name == "softmax_online_t512"
    assert OP.plan(T128, 131072, (8, 0), dtype).name == "softmax_online_t512"  # no clusters before sm_90


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_instances_fit_without_spills_and_the_ring_sets_the_blocks(arch):
    """Both instances compile without spills, and at fp32 131072 the ring (3 x 32 KiB), not the registers, bounds
    the blocks an SM (sm_90 / sm_100: two of 228 KiB; sm_120: one of 100 KiB)."""
    m = compile_variant(OP, V4, arch=arch)
    cc = (int(arch[3:-1]), int(arch[-1]))
    for dt in ("f32", "bf16"):
        r = m.resources[f"softmax_dy_t128_c16_{dt}"]
        assert not r.spills, (arch, dt, r.spill_stores, r.spill_loads)
    p = OP.plan(T128, 131072, cc, "float32")
    assert p.name == "softmax_dy_t128_c16", p
    occ = occupancy_for_kernel(m.resources["softmax_dy_t128_c16_f32"], cc, p.block, p.smem)
    assert occ.blocks_per_sm == (1 if cc[0] == 12 else 2) and occ.limiter == "shared_memory", occ


def _instructions(module, name):
    text = run_cuobjdump(module.cubin, "-sass", "-fun", name)
    return [re.sub(r"\s+", " ", ln.split(";")[0]).strip() for ln in text.splitlines() if ";" in ln and "/*" in ln]


@pytest.mark.skipif(toolchain.cuobjdump_path() is None,
                    reason="cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
def test_sm90_code_is_v12_built_with_the_same_knobs():
    """The template arguments give the code the SB_THREADS / SB_STAGES macros gave: v4's softmax_dy_t128_c16_f32
    and v12's softmax_dy_c16_f32 built with DISPATCH_BULK_T128 as its knobs are the same SASS, instruction for
    instruction (so session 28's timing of that v12 build is this instance's)."""
    v4 = compile_variant(OP, V4, arch="sm_90")
    v12 = compile_file(V12.path, arch="sm_90", defines=softmax_op.bulk_defines(STAGES, THREADS, PER_SM, 1, ELEMS))
    for dt in ("f32", "bf16"):
        mine = _instructions(v4, f"softmax_dy_t128_c16_{dt}")
        assert len(mine) > 500 and mine == _instructions(v12, f"softmax_dy_c16_{dt}"), dt


def test_v4_launches_the_full_instance_for_aligned_rows_of_131072_only(monkeypatch):
    """v4's "wide" entry at fp32 131072 (DISPATCH_T128_FULL): aligned rows take softmax_dy_t128_c16_full_f32 in
    128-thread clusters of 16 with a 96 KiB ring; rows whose x or y is not 16-byte aligned, or a module without the
    `_full` kernel, take e32's plan (256 threads, 64 KiB ring: the general t128 kernel is 9% slower, t128_29);
    other widths never see t128."""
    monkeypatch.setattr(softmax_op, "persistent_grid", lambda k, p, m: 14)
    have = {"softmax_dy_t128_c16_full_f32"}
    runs = [(V4, Case((4, 131072), "float32")), (V4, Case((4, 131072), "float32", offset=1)),
            (V4, Case((4, 131072), "float32", offset=1, layout="mixed_alignment")),
            (V4, Case((4, 131072), "float32", offset=4)), (V4, Case((4, 131071), "float32"))]
    calls = record_launches(OP, runs, signatures=have)
    got = [(n, kw["block"], kw["cluster"], kw["shared_mem"]) for n, _, kw in calls]
    t128_full = ("softmax_dy_t128_c16_full_f32", 128, 16, 3 * 32768)
    e32 = ("softmax_dy_e32_c16_f32", 256, 16, 2 * 32768)
    assert got == [t128_full, e32, e32, t128_full, ("softmax_dy_e32_c16_f32", 256, 16, 2 * 32768)]
    assert [n for n, _, _ in record_launches(OP, runs[:1])] == ["softmax_dy_e32_c16_f32"]  # no `_full` kernel
    monkeypatch.setattr(softmax_op, "DISPATCH_T128_FULL", False)
    softmax_op._plan.cache_clear()
    try:
        assert [n for n, _, _ in record_launches(OP, runs[:1], signatures=have)] == ["softmax_dy_e32_c16_f32"]
    finally:
        monkeypatch.undo()
        softmax_op._plan.cache_clear()


def test_full_instance_holds_whole_vectors_only():
    """sm_90: the `_full` instance has no scalar global loads or stores of x / y (the general kernel's head / tail
    and its stores for rows y is not co-aligned with), 16 unpredicated LDS.128 (16 vectors a thread), and ~14%
    fewer instructions than the general t128 kernel; no spills."""
    if toolchain.cuobjdump_path() is None:
        pytest.skip("cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
    m = compile_variant(OP, V4, arch="sm_90")
    full = run_cuobjdump(m.cubin, "-sass", "-fun", "softmax_dy_t128_c16_full_f32")
    general = run_cuobjdump(m.cubin, "-sass", "-fun", "softmax_dy_t128_c16_f32")
    scalar = lambda s, op: len(re.findall(rf"\s{op}\.E\s", s))  # noqa: E731 (4-byte global accesses)
    # y's 64 values one by one where y is not co-aligned with x, the head / tail loads; both: the counters' reset
    assert scalar(general, "STG") >= 64 + 2 and scalar(general, "LDG") == 2
    assert scalar(full, "STG") == 2 and scalar(full, "LDG") == 0
    lds = lambda s: re.findall(r"^\s+/\*[0-9a-f]{4}\*/\s+(@!?P\d+\s+)?LDS\.128", s, re.M)  # noqa: E731
    assert len(lds(full)) == len(lds(general)) == 16
    assert not any(lds(full)) and all(lds(general))  # the general kernel's are predicated on the share's end
    lines = lambda s: len(re.findall(r"^\s+/\*[0-9a-f]{4}\*/", s, re.M))  # noqa: E731
    assert lines(full) < 0.9 * lines(general), (lines(full), lines(general))
    assert not m.resources["softmax_dy_t128_c16_full_f32"].spills
