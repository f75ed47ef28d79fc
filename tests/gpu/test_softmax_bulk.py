"""softmax v7_bulk_smem, v10_staged_regs (v7's ring, read once into registers) and v12_dynamic_rows
(v10 with rows taken from a counter) on a GPU, beyond the per-variant sweep of tests/gpu/test_ops_mem_b.py
(which runs v7 on every test case it supports, normal and special inputs): enough rows that
every persistent cluster loops over 2 x stages + 1 rows, so the ring of bulk-copy stages wraps
around at least twice (each stage's mbarrier goes through both phase parities) and the cluster
exchange through both of its buffers; one row (M = 1: one cluster, the prologue fills one stage);
misaligned rows (head / tail scalars next to the bulk-copied vectors) and y not co-aligned with x
(scalar stores); each cluster size 1, 2, 4, 8, 16; and the knob builds a sweep times (v7: bulk-store
path, streaming stores, 2 / 4 stages, 2 blocks an SM, 256 / 1024 threads, evict-first loads; v10:
3 stages, 128 / 512 / 1024 threads, 32 values a thread). Both variants run every loop test.

Failures name the instance the launch took (e.g. softmax_bk_c4_bf16), the grid and the rows
each cluster took.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from kernelab.gpu import Module, compile_file, default_arch
from kernelab.ops import discover, load_variant
from kernelab.ops.base import Case
from kernelab.ops.build import target_arch
from kernelab.ops.softmax import op as softmax_op

from ._softmax_rows import assert_counters_zero_and_graph_replays, run_kernel, sm90_only

pytestmark = pytest.mark.gpu

OP = discover()["softmax"]
V7 = OP.variant("v7_bulk_smem")
V10 = OP.variant("v10_staged_regs")
V12 = OP.variant("v12_dynamic_rows")
VARIANTS = {"v7": V7, "v10": V10, "v12": V12}
SUFFIX = {"bfloat16": "bf16", "float32": "f32"}


_needs_hopper = sm90_only("v7, v10 and v12")


def _module(meta=None, defines=None, base=V7):
    """`base`'s module for header values `meta` and extra macros `defines` (None, None: the default's)."""
    v = dataclasses.replace(base, meta={**base.meta, **(meta or {})}) if meta else base
    if not meta and not defines:
        return v, load_variant(OP, v)
    d = {**OP.defines(v), **(defines or {})}
    return v, Module(compile_file(v.path, arch=target_arch(v, default_arch()).sm, defines=d), d)


_run = run_kernel  # tests/gpu/_softmax_rows.py


def _fit(v, module, n, dtype):
    """(plan, clusters that fit on this GPU) for rows of n."""
    p = OP.plan(v, n, torch.cuda.get_device_capability(), dtype)
    assert p is not None, f"{v.name} plans nothing for N={n} {dtype}"
    k = module.kernel(f"{p.name}_{SUFFIX[dtype]}")
    return p, softmax_op.persistent_grid(k, p, 1 << 30)


def _loop_case(v, module, n, dtype, offset=0, layout=None, stages=3):
    """Rows for 2 x stages + 1 rounds of every cluster, + 1 so the last round is partial."""
    p, fit = _fit(v, module, n, dtype)
    kw = {"offset": offset} | ({"layout": layout} if layout else {})
    return p, fit, Case(((2 * stages + 1) * fit + 1, n), dtype, **kw)


# (N, dtype, offset, layout, cluster size the default plan takes on sm_90 / sm_100: v7, v10, v12).
# v10's share must also fit its 256 threads x 64 values (16384 a block), so it takes larger
# clusters; v12 plans as v10.
LOOPS = [(4097, "float32", 3, None, (1, 1, 1)), (32769, "bfloat16", 0, None, (1, 4, 4)),
         (65536, "bfloat16", 3, None, (2, 4, 4)), (65537, "float32", 1, None, (4, 8, 8)),
         (131072, "bfloat16", 0, None, (4, 8, 8)), (131072, "float32", 1, None, (8, 8, 8)),
         (100000, "bfloat16", 1, "mixed_alignment", (4, 8, 8)), (262144, "bfloat16", 0, None, (8, 16, 16)),
         (262144, "float32", 0, None, (16, 16, 16))]


@pytest.mark.parametrize("which", VARIANTS)
@pytest.mark.parametrize("n,dtype,offset,layout,clusters", LOOPS, ids=lambda x: str(x))
def test_every_cluster_wraps_the_ring_twice(n, dtype, offset, layout, clusters, which):
    v, mod = _module(base=VARIANTS[which])
    p, fit, case = _loop_case(v, mod, n, dtype, offset, layout)
    cluster = clusters[list(VARIANTS).index(which)]
    if torch.cuda.get_device_capability()[0] in (9, 10):
        assert p.cluster == cluster, f"{p}: the plan's cluster changed (expected {cluster})"
    assert fit >= 1, f"{p}: no cluster of {p.cluster} with {p.smem} B of shared memory fits"
    cmp, kernel = _run(v, mod, case)
    assert kernel == f"{p.name}_{SUFFIX[dtype]}", kernel
    assert cmp.ok, f"{case.label} via {kernel} ({fit} clusters, {p.smem} B ring): {cmp.summary(max_lines=3)}"


@pytest.mark.parametrize("which", VARIANTS)
@pytest.mark.parametrize("n", [4097, 32769, 131072, 262144])
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_one_row(n, dtype, which):
    v, mod = _module(base=VARIANTS[which])
    cmp, kernel = _run(v, mod, Case((1, n), dtype))
    assert cmp.ok, f"1 x {n} {dtype} via {kernel}: {cmp.summary(max_lines=3)}"


@pytest.mark.parametrize("which", VARIANTS)
def test_masked_and_special_rows_through_the_loop(which):
    """-inf entries, an all -inf row (NaN, as torch) and NaN / +inf rows inside the cluster loop."""
    v, mod = _module(base=VARIANTS[which])
    for case, dist in ((Case((150, 70000), "bfloat16", params=(("mask", True),)), "special"),
                       (Case((150, 131072), "float32"), "special")):
        cmp, kernel = _run(v, mod, case, dist)
        assert cmp.ok, f"{case.label} ({dist}) via {kernel}: {cmp.summary(max_lines=3)}"


# The knob builds the sweeps time: (variant, header values, macros).
KNOBS = [("v12", {}, {"SB_FAST_EXP": 0}), ("v12", {}, {"SB_WARP_XCHG": 0}), ("v10", {}, {"SB_WARP_XCHG": 0}),
         ("v7", {}, {"SB_STORE": 1}), ("v7", {}, {"SB_STORE": 2}), ("v7", {}, {"SB_LOAD_EF": 1}),
         ("v7", {"stages": "2"}, {}), ("v7", {"stages": "4"}, {}), ("v7", {"blocks_per_sm": "2"}, {}),
         ("v7", {"threads": "256"}, {}), ("v7", {"threads": "1024"}, {}), ("v7", {"min_cluster": "8"}, {}),
         ("v10", {"stages": "3"}, {}), ("v10", {"stages": "3", "threads": "512"}, {}),
         ("v10", {"threads": "1024", "elems": "32"}, {}), ("v10", {"elems": "32"}, {}), ("v10", {"threads": "128"}, {})]


@pytest.mark.parametrize("which,meta,defines", KNOBS,
                         ids=lambda x: x if isinstance(x, str) else ",".join(f"{k}={w}" for k, w in x.items()) or "-")
def test_knob_builds_are_correct(which, meta, defines):
    v, mod = _module(meta, defines, base=VARIANTS[which])
    stages = int(v.meta.get("stages", 3))
    failures = []
    # Aligned bf16 (the bench shape's layout), misaligned fp32 (head / tail + bulk store of the body),
    # y not co-aligned (SB_STORE 1 falls back to scalar stores; its bulk groups stay one per row).
    for n, dtype, offset, layout in ((131072, "bfloat16", 0, None), (65537, "float32", 1, None),
                                     (100000, "bfloat16", 1, "mixed_alignment")):
        p, fit, case = _loop_case(v, mod, n, dtype, offset, layout, stages)
        cmp, kernel = _run(v, mod, case)
        if not cmp.ok:
            failures.append(f"{case.label} via {kernel} ({p}, {fit} clusters): {cmp.summary(max_lines=2)}")
    assert not failures, "\n".join(failures)


def test_v12_leaves_its_counters_zero_and_replays_in_a_graph():
    """v12 takes rows from two counters per stream that the last cluster resets (_softmax_rows.py)."""
    v, mod = _module(base=V12)
    cases = []
    for n, dt in ((131072, "bfloat16"), (65537, "float32"), (8192, "bfloat16")):  # C = 8, 8, 1
        p, fit, case = _loop_case(v, mod, n, dt, stages=2)
        cases.append(case)
    assert_counters_zero_and_graph_replays(v, mod, cases)