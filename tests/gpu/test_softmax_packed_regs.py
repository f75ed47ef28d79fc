"""softmax v13_packed_regs on a GPU, beyond tests/gpu/test_ops_mem_b.py's sweep of every test case:
enough rows that every cluster takes 9+ rows (the one stage's mbarrier and the exchange buffers go
through both parities, the 4 row-index slots wrap twice), for each cluster size 1, 2, 4, 8 the plan
takes; one row; misaligned rows (head / tail scalars beside the bulk-copied vectors) and y not
co-aligned with x (scalar stores); masked and special rows; the `work` counters left at zero and a
CUDA graph replayed on new inputs. (The rows v4_dispatch's "wide" entry sends to v13's kernel, as
v15's instances: tests/gpu/test_softmax_any_cluster.py.)

Failures name the instance the launch took (e.g. softmax_pr_c2_bf16) and the clusters that fit.
"""

from __future__ import annotations

import pytest

from kernelab.ops import discover, load_variant
from kernelab.ops.base import Case

from ._softmax_rows import (assert_counters_zero_and_graph_replays, assert_every_cluster_loops, planned_fit,
                           run_kernel, sm90_only)

pytestmark = pytest.mark.gpu

OP = discover()["softmax"]
V13 = OP.variant("v13_packed_regs")


_needs_hopper = sm90_only("v13")


def _run(v, case, dist="normal"):
    return run_kernel(v, load_variant(OP, v), case, dist)


# (N, dtype, offset, layout, the cluster size of the sm_90 / sm_100 plan)
LOOPS = [(4097, "float32", 3, None, 1), (65536, "bfloat16", 0, None, 1), (65537, "bfloat16", 1, None, 2),
         (131072, "bfloat16", 0, None, 2), (100000, "bfloat16", 1, "mixed_alignment", 2),
         (65536, "float32", 0, None, 2), (131072, "float32", 1, None, 4), (262144, "bfloat16", 0, None, 4),
         (262144, "float32", 0, None, 8)]


@pytest.mark.parametrize("n,dtype,offset,layout,cluster", LOOPS, ids=lambda x: str(x))
def test_every_cluster_loops_over_nine_rows(n, dtype, offset, layout, cluster):
    assert_every_cluster_loops(V13, n, dtype, cluster, offset=offset, **({"layout": layout} if layout else {}))


@pytest.mark.parametrize("n", [4097, 65537, 131072, 262144])
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_one_row(n, dtype):
    cmp, kernel = _run(V13, Case((1, n), dtype))
    assert cmp.ok, f"1 x {n} {dtype} via {kernel}: {cmp.summary(max_lines=3)}"


def test_masked_and_special_rows_through_the_loop():
    """-inf entries, an all -inf row (NaN, as torch) and NaN / +inf rows inside the cluster loop."""
    for case, dist in ((Case((300, 70000), "bfloat16", params=(("mask", True),)), "special"),
                       (Case((300, 131072), "float32"), "special"), (Case((300, 131072), "bfloat16"), "large")):
        cmp, kernel = _run(V13, case, dist)
        assert cmp.ok, f"{case.label} ({dist}) via {kernel}: {cmp.summary(max_lines=3)}"


def test_leaves_its_counters_zero_and_replays_in_a_graph():
    """Rows come from two counters per stream that the last cluster resets (_softmax_rows.py)."""
    cases = []
    for n, dt in ((131072, "bfloat16"), (65536, "float32"), (8192, "bfloat16")):  # C = 2, 2, 1
        p, fit = planned_fit(V13, n, dt)
        cases.append(Case((5 * fit + 3, n), dt))
    assert_counters_zero_and_graph_replays(V13, load_variant(OP, V13), cases)
