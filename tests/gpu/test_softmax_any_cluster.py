"""softmax v15_any_cluster on a GPU, beyond tests/gpu/test_ops_mem_b.py's sweep of every test case:
each cluster size 1-8 its plan takes (3, 5, 6, 7 are new: clusters v13 never launches), with enough
rows that every cluster loops 9+ times (both mbarrier parities, the 4 row-index slots wrapped twice);
misaligned rows; the `work` counters left at zero and a CUDA graph replayed on new inputs. (The rows
v4_dispatch's "wide" entry sends to v15's and v16's instances: tests/gpu/test_softmax_half_blocks.py.)
Failures name the instance the launch took (e.g. softmax_ac_c3_bf16) and the clusters that fit."""

from __future__ import annotations

import pytest

from kernelab.ops import discover, load_variant
from kernelab.ops.base import Case

from ._softmax_rows import assert_counters_zero_and_graph_replays, assert_every_cluster_loops, planned_fit, sm90_only

pytestmark = pytest.mark.gpu

OP = discover()["softmax"]
V15 = OP.variant("v15_any_cluster")


_needs_hopper = sm90_only("v15")


# (N, dtype, offset, the cluster size of the sm_90 / sm_100 plan)
LOOPS = [(151936, "bfloat16", 0, 3), (196608, "bfloat16", 1, 3), (98304, "float32", 0, 3),
         (163840, "float32", 3, 5), (196608, "float32", 0, 6), (229376, "float32", 1, 7), (262144, "float32", 0, 8),
         (50257, "bfloat16", 0, 1)]


@pytest.mark.parametrize("n,dtype,offset,cluster", LOOPS, ids=lambda x: str(x))
def test_every_cluster_size_loops_over_nine_rows(n, dtype, offset, cluster):
    assert_every_cluster_loops(V15, n, dtype, cluster, offset=offset)


def test_leaves_its_counters_zero_and_replays_in_a_graph():
    cases = []
    for n, dt in ((151936, "bfloat16"), (163840, "float32")):  # C = 3, 5
        p, fit = planned_fit(V15, n, dt)
        cases.append(Case((5 * fit + 3, n), dt))
    assert_counters_zero_and_graph_replays(V15, load_variant(OP, V15), cases)

