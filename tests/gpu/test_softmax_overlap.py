"""softmax v17_overlap_rows on a GPU, beyond tests/gpu/test_ops_mem_b.py's sweep of every test case: each
cluster size its plan takes (2, 4, 8, 16), with 17 rows for every cluster that fits, plus one (the 4 pair
buffers wrapped four times, the 8 row slots twice, every stage's two barriers both parities); misaligned
rows (head / tail scalars, kept from pass A to pass B), y not co-aligned with x (scalar stores); rows far
from 0 (the FFMA form in both passes, and its fallback past 2^20); special values; the `work` counters
left at zero and a CUDA graph replayed on new inputs; a 512-thread build (its sweep knob).
Failures name the instance the launch took (e.g. softmax_ov_c8_bf16)."""

from __future__ import annotations

import pytest

from kernelab.gpu import Module, compile_file, default_arch
from kernelab.ops import discover, load_variant
from kernelab.ops.base import Case
from kernelab.ops.build import target_arch

from ._softmax_rows import assert_counters_zero_and_graph_replays, assert_every_cluster_loops, run_kernel, sm90_only

pytestmark = pytest.mark.gpu

OP = discover()["softmax"]
V17 = OP.variant("v17_overlap_rows")
_needs_hopper = sm90_only("v17")
_modules: dict = {}


# (N, dtype, offset, the cluster size of the sm_90 / sm_100 plan)
LOOPS = [(8192, "bfloat16", 0, 2), (65536, "bfloat16", 1, 4), (131072, "bfloat16", 0, 8),
         (262144, "bfloat16", 0, 16), (65536, "float32", 3, 8), (131072, "float32", 1, 16), (2049, "float32", 0, 2),
         (50257, "bfloat16", 0, 4)]


@pytest.mark.parametrize("n,dtype,offset,cluster", LOOPS, ids=lambda x: str(x))
def test_every_cluster_size_loops(n, dtype, offset, cluster):
    assert_every_cluster_loops(V17, n, dtype, cluster, offset=offset, rows_per_cluster=17)


def _build(macros):
    """v17 with header values overridden (a sweep's knobs: @threads 512, @elems 32), compiled once."""
    if not macros:
        return V17, load_variant(OP, V17)
    if macros not in _modules:
        import dataclasses

        v = dataclasses.replace(V17, meta={**V17.meta, **dict(macros)})
        d = OP.defines(v)
        _modules[macros] = (v, Module(compile_file(v.path, arch=target_arch(v, default_arch()).sm, defines=d), d))
    return _modules[macros]


BUILDS = [(), (("threads", "512"), ("elems", "32"))]
LAYOUTS = [(700, 131072, "bfloat16", {}), (300, 131072, "float32", {"offset": 1}),
           (400, 65536, "bfloat16", {"offset": 3}),
           (200, 100000, "bfloat16", {"offset": 1, "layout": "mixed_alignment"}),
           (5, 32769, "float32", {}), (3, 40000, "float32", {"layout": "mixed_alignment"})]


@pytest.mark.parametrize("build", BUILDS, ids=lambda b: "default" if not b else "t512")
@pytest.mark.parametrize("m,n,dtype,kw", LAYOUTS, ids=lambda x: str(x) if not isinstance(x, dict) else "-")
def test_layouts(build, m, n, dtype, kw):
    v, mod = _build(build)
    case = Case((m, n), dtype, **kw)
    cmp, kernel = run_kernel(v, mod, case)
    assert cmp.ok, f"{v.name} {build} {case.label} via {kernel}: {cmp.summary(max_lines=3)}"


SHIFTS = [(1000.0, "float32"), (-30000.0, "float32"), (3.0e6, "float32"), (1000.0, "bfloat16"), (3.0e6, "bfloat16")]


@pytest.mark.parametrize("shift,dtype", SHIFTS, ids=lambda x: str(x))
def test_rows_far_from_zero(shift, dtype):
    """Pass B exponentiates relative to the row's max with its own c and fix: 1000 + N(0, 1) in fp32 fails
    the 2e-5 tolerance if either pass drops c's rounding; 3e6 takes the (x - sh) fallback in both."""
    v, mod = _build(())
    case = Case((96, 131072), dtype)
    cmp, kernel = run_kernel(v, mod, case, shift=shift)
    assert cmp.ok, f"{case.label} + {shift} via {kernel}: {cmp.summary(max_lines=3)}"


def test_special_large_and_masked():
    v, mod = _build(())
    for case, dist in ((Case((150, 70000), "bfloat16", params=(("mask", True),)), "special"),
                       (Case((150, 131072), "float32"), "special"), (Case((150, 131072), "bfloat16"), "special"),
                       (Case((64, 131072), "float32"), "large"), (Case((64, 131072), "bfloat16"), "large"),
                       (Case((64, 131072), "bfloat16"), "uniform")):
        cmp, kernel = run_kernel(v, mod, case, dist)
        assert cmp.ok, f"{case.label} ({dist}) via {kernel}: {cmp.summary(max_lines=3)}"


def test_fewer_rows_than_clusters():
    """A cluster whose first index is past M runs no row at all (its loop ends at iteration 0, pass B skipped);
    1, 2 and 7 rows on ~15-30 clusters."""
    v, mod = _build(())
    for m in (1, 2, 7):
        case = Case((m, 131072), "bfloat16")
        cmp, kernel = run_kernel(v, mod, case)
        assert cmp.ok, f"{case.label} via {kernel}: {cmp.summary(max_lines=3)}"


def test_leaves_its_counters_zero_and_replays_in_a_graph():
    assert_counters_zero_and_graph_replays(V17, load_variant(OP, V17),
                                           [Case((1000, 131072), "bfloat16"), Case((500, 65536), "float32")])
