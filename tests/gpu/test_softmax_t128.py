"""softmax v4_dispatch's "dynamic_t128" instances on a GPU (softmax_dy_t128_c16_*: v12's rows in clusters of 16
blocks of 128 threads, 64 values a thread, a ring of 3 stages; staged_rows.cuh's dynamic_rows with its block and
ring as template arguments, session 29), reached through `@dispatch_only dynamic_t128`: every cluster loops (9
rows each: the 6 row slots of a 3-stage ring wrapped, both phases of each stage's barrier), misaligned rows and
y not co-aligned with x, rows far from 0 (the FFMA exps and their fallback), special and masked rows, the `work`
counters left at 0 and a CUDA graph replayed; fp32 rows of exactly 131072, 16-byte aligned, through the `_full`
instance (no geometry, scalars or predicates). Failures name the kernel the launch took."""

from __future__ import annotations

import dataclasses

import pytest

from kernelab.ops import discover, load_variant
from kernelab.ops.base import Case

from ._softmax_rows import assert_counters_zero_and_graph_replays, assert_every_cluster_loops, run_kernel, sm90_only

pytestmark = pytest.mark.gpu

OP = discover()["softmax"]
V4 = OP.variant("v4_dispatch")
T128 = dataclasses.replace(V4, meta={**V4.meta, "dispatch_only": "dynamic_t128"})
_needs_hopper = sm90_only("v4's dynamic_t128 instances")


def _module():
    return load_variant(OP, T128)


# (N, dtype, offset): the bench width in both dtypes, a share of less than a full stage, and misaligned rows
LOOPS = [(131072, "float32", 0), (131072, "bfloat16", 0), (65537, "float32", 1), (100000, "bfloat16", 3),
         (115712, "float32", 2)]


@pytest.mark.parametrize("n,dtype,offset", LOOPS, ids=lambda x: str(x))
def test_every_cluster_of_16_loops(n, dtype, offset):
    assert_every_cluster_loops(T128, n, dtype, 16, offset=offset)


# (rows, width, dtype, case keywords, the kernel): rows of exactly 16 x 128 x 64 fp32, 16-byte aligned, take the
# `_full` instance (op.py's dynamic_full); misaligned x or y, other widths and bf16 the general one
LAYOUTS = [(200, 100000, "float32", {"offset": 1, "layout": "mixed_alignment"}, "softmax_dy_t128_c16_f32"),
           (3, 131072, "float32", {}, "softmax_dy_t128_c16_full_f32"),
           (40, 131072, "float32", {"offset": 1, "layout": "mixed_alignment"}, "softmax_dy_t128_c16_f32"),  # x only
           (40, 131072, "float32", {"offset": 4}, "softmax_dy_t128_c16_full_f32"),  # 16 bytes in: still aligned
           (40, 131072, "bfloat16", {}, "softmax_dy_t128_c16_bf16"),
           (1, 65537, "bfloat16", {}, "softmax_dy_t128_c16_bf16")]


@pytest.mark.parametrize("m,n,dtype,kw,want", LAYOUTS, ids=lambda x: str(x) if not isinstance(x, dict) else "-")
def test_layouts_and_fewer_rows_than_clusters(m, n, dtype, kw, want):
    case = Case((m, n), dtype, **kw)
    cmp, kernel = run_kernel(T128, _module(), case)
    assert kernel == want, kernel
    assert cmp.ok, f"{case.label} via {kernel}: {cmp.summary(max_lines=3)}"


@pytest.mark.parametrize("shift,dtype", [(1000.0, "float32"), (3.0e6, "float32"), (5.0e4, "bfloat16")],
                         ids=lambda x: str(x))
def test_rows_far_from_zero(shift, dtype):
    case = Case((96, 131072), dtype)
    cmp, kernel = run_kernel(T128, _module(), case, shift=shift)
    assert cmp.ok, f"{case.label} + {shift} via {kernel}: {cmp.summary(max_lines=3)}"


def test_special_large_and_masked_rows():
    for case, dist in ((Case((150, 70000), "float32", params=(("mask", True),)), "special"),
                       (Case((150, 131072), "float32"), "special"), (Case((64, 131072), "float32"), "large"),
                       (Case((64, 131072), "bfloat16"), "uniform")):
        cmp, kernel = run_kernel(T128, _module(), case, dist)
        assert cmp.ok, f"{case.label} ({dist}) via {kernel}: {cmp.summary(max_lines=3)}"


def test_counters_left_zero_and_graph_replays():
    assert_counters_zero_and_graph_replays(T128, _module(), [Case((500, 131072), "float32", offset=1),
                                                             Case((7, 98304), "float32")])
