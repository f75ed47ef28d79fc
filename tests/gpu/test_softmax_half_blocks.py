"""softmax v16_half_blocks on a GPU, beyond tests/gpu/test_ops_mem_b.py's sweep of every test case:
each cluster size 1-8 of 512-thread blocks its plan takes, with enough rows that every cluster loops
9+ times (both mbarrier parities, the 4 row-index slots wrapped twice); misaligned rows; the widest
rows it holds (bf16 262144, fp32 131072); more clusters resident than v15's (two blocks an SM); the
`work` counters left at zero and a CUDA graph replayed on new inputs; the rows v4_dispatch's "wide"
entry sends to v16's instances (and to v15's, fp32 past 131072).
Failures name the instance the launch took (e.g. softmax_hb_c5_bf16) and the clusters that fit."""

from __future__ import annotations

import pytest
import torch

from kernelab.check.inputs import DTYPES
from kernelab.ops import discover, load_variant
from kernelab.ops.base import Case

from ._softmax_rows import (assert_counters_zero_and_graph_replays, assert_every_cluster_loops, planned_fit,
                           run_kernel, sm90_only)

pytestmark = pytest.mark.gpu

OP = discover()["softmax"]
V16 = OP.variant("v16_half_blocks")


_needs_hopper = sm90_only("v16")


# (N, dtype, offset, the cluster size of the sm_90 / sm_100 plan)
LOOPS = [(32768, "bfloat16", 0, 1), (65536, "bfloat16", 1, 2), (98304, "bfloat16", 0, 3), (65536, "float32", 3, 4),
         (151936, "bfloat16", 0, 5), (196608, "bfloat16", 1, 6), (229376, "bfloat16", 0, 7),
         (262144, "bfloat16", 0, 8), (131072, "float32", 1, 8), (50257, "bfloat16", 0, 2)]


@pytest.mark.parametrize("n,dtype,offset,cluster", LOOPS, ids=lambda x: str(x))
def test_every_cluster_size_loops_over_nine_rows(n, dtype, offset, cluster):
    assert_every_cluster_loops(V16, n, dtype, cluster, offset=offset)


def test_two_blocks_an_sm_fit_more_clusters_than_v15():
    """The point of the variant: at bf16 151936, v16's clusters of 5 half-SM blocks occupy more of
    the GPU than v15's clusters of 3 whole-SM blocks (39 of them, 117 SMs, on the H200)."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    p16, fit16 = planned_fit(V16, 151936, "bfloat16")
    p15, fit15 = planned_fit(OP.variant("v15_any_cluster"), 151936, "bfloat16")
    assert fit16 * p16.cluster / 2 > fit15 * p15.cluster, (fit16, p16.cluster, fit15, p15.cluster, sms)


def test_leaves_its_counters_zero_and_replays_in_a_graph():
    cases = []
    for n, dt in ((151936, "bfloat16"), (98304, "float32")):  # C = 5, 6
        p, fit = planned_fit(V16, n, dt)
        cases.append(Case((5 * fit + 3, n), dt))
    assert_counters_zero_and_graph_replays(V16, load_variant(OP, V16), cases)


@pytest.mark.parametrize("n,dtype,prefix", [(40960, "bfloat16", "softmax_hb_"), (50000, "bfloat16", "softmax_hb_"),
                                            (98304, "bfloat16", "softmax_hb_"), (151936, "bfloat16", "softmax_hb_"),
                                            (196608, "bfloat16", "softmax_hb_"), (262144, "float32", "softmax_ac_"),
                                            (262144, "bfloat16", "softmax_hb_c8"),
                                            (262143, "bfloat16", "softmax_hb_c8")])
def test_v4_dispatch_sends_part_stage_rows_to_v16_and_v15(n, dtype, prefix):
    """v4's "wide" entry (op.py wide_plan): bf16 rows whose v12 stages would be under 30 KiB, bf16 rows
    past 131072 whatever their stage (session 16: v16 3.5-4.6% ahead of v14 at 262144), and fp32 rows
    whose v12 clusters would need 16 SMs of one GPC, go to v13's kernel: v16's 512-thread blocks where
    they hold the row, else v15's 1024-thread blocks (fp32 262144: clusters of 8)."""
    v4 = OP.variant("v4_dispatch")
    p = OP.plan(v4, n, torch.cuda.get_device_capability(), dtype)
    assert p.name.startswith(prefix), p
    for offset in (0, 1):
        case = Case((300, n), dtype, offset=offset)
        cmp, kernel = run_kernel(v4, load_variant(OP, v4), case)
        assert kernel == f"{p.name}_{DTYPES[dtype]}", kernel
        assert cmp.ok, f"300 x {n} {dtype} (offset {offset}) via {kernel}: {cmp.summary(max_lines=3)}"
