"""softmax v14_split_grid on a GPU, beyond tests/gpu/test_ops_mem_b.py's sweep of every test case:
the two grids (v12's clusters on the caller's stream, v13's on a side stream, one row counter)
together at several `@side_margin`s, each grid alone (the side grid's stop and both grids' shared
reset), misaligned and special rows, the counters left at zero, and the fork / join captured in a
CUDA graph and replayed. Failures name the last kernel launched (the side grid's when it ran)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from kernelab.check import compare_outputs, tolerance
from kernelab.gpu import device_info, synchronize
from kernelab.check.inputs import DTYPES
from kernelab.ops import discover, load_variant
from kernelab.ops.base import Case
from kernelab.ops.softmax import op as softmax_op

from ._softmax_rows import assert_counters_zero_and_graph_replays, run_kernel, sm90_only

pytestmark = pytest.mark.gpu

OP = discover()["softmax"]
V14 = OP.variant("v14_split_grid")


_needs_hopper = sm90_only("v14")


def _with_margin(margin: int, side_grid: str = "packed_regs"):
    return dataclasses.replace(V14, meta={**V14.meta, "side_margin": str(margin), "side_grid": side_grid})


def _grids(n, dtype, m, margin, side_grid="packed_regs"):
    """(main plan, side plan, main clusters, side clusters) as split_grid_launch computes them."""
    g = softmax_op.split_launch(load_variant(OP, V14), _with_margin(margin, side_grid), m, n, dtype)
    return g.pa, g.pb, g.main, g.side


# (M, N, dtype, offset): 2048 x 131072 bf16 is the bench shape; the others cross cluster sizes and
# put head / tail scalars beside the bulk-copied vectors.
CASES = [(2048, 131072, "bfloat16", 0), (700, 131072, "float32", 1), (600, 65537, "bfloat16", 1),
         (300, 262144, "bfloat16", 0), (900, 20000, "float32", 3)]


@pytest.mark.parametrize("side_grid", ["packed_regs", "online"])
@pytest.mark.parametrize("margin", [0, 128])
@pytest.mark.parametrize("m,n,dtype,offset", CASES, ids=lambda x: str(x))
def test_both_grids_compute_every_row(m, n, dtype, offset, margin, side_grid):
    v = _with_margin(margin, side_grid)
    case = Case((m, n), dtype, offset=offset)
    cmp, kernel = run_kernel(v, load_variant(OP, v), case)
    _, pb, main, side = _grids(n, dtype, m, margin, side_grid)
    if side:  # the side grid is launched last
        assert kernel == f"{pb.name}_{DTYPES[dtype]}", f"{case.label}: {side} side clusters planned, {kernel} ran last"
    assert cmp.ok, (f"{case.label} ({side_grid}, margin {margin}, {main} + {side} clusters) via {kernel}: "
                    f"{cmp.summary(max_lines=3)}")


def test_the_h200_side_grid_fills_the_sms_the_main_grid_leaves():
    """On a GPU whose clusters of 8 leave SMs idle (the H200: 120 of 132), the side grid gets them."""
    pa, pb, main, side = _grids(131072, "bfloat16", 2048, 128)
    mod = load_variant(OP, V14)
    per_sm = mod.kernel(f"{pa.name}_bf16").max_active_blocks_per_sm(pa.block, pa.smem)
    used = -(-main * pa.cluster // per_sm)
    sms = device_info().sm_count
    assert used <= sms, f"{main} main clusters of {pa.cluster} at {per_sm} an SM need {used} SMs of {sms}"
    assert side == (sms - used) // pb.cluster, (main, side, used, sms)


@pytest.mark.parametrize("which", ["main", "side", "online side"])
def test_each_grid_alone_does_every_row_and_resets_the_counters(which):
    """One grid launched by hand with `clusters` its own count: the split entry points work alone
    (the side's `stop` at M: it takes rows to the end) and leave the counters zero."""
    m, n, dtype = 500, 131072, "bfloat16"
    case = Case((m, n), dtype)
    pa, pb, _, _ = _grids(n, dtype, m, 0, "online" if which == "online side" else "packed_regs")
    mod = load_variant(OP, V14)
    inputs = OP.make_inputs(case, 0, "cuda")
    outputs = OP.make_outputs(case, inputs)
    outputs["y"].fill_(float("nan"))
    work = softmax_op.dynamic_work(inputs["x"].device)
    p = pa if which == "main" else pb
    k = mod.kernel(f"{p.name}_bf16")
    fit = softmax_op.persistent_grid(k, p, 1 << 30)
    extra = () if which == "main" else (m,)
    k(inputs["x"], outputs["y"], m, n, work, fit, *extra, grid=fit, block=p.block, cluster=p.cluster,
      shared_mem=p.smem)
    synchronize()
    rtol, atol = tolerance(OP, dtype)
    cmp = compare_outputs(outputs["y"], OP.reference(case, inputs)["y"], rtol, atol, nan_ok=True, name="y")
    assert cmp.ok, f"{which} grid alone ({fit} clusters of {p.cluster}): {cmp.summary(max_lines=3)}"
    assert work.tolist() == [0, 0], f"{which} grid alone left the counters at {work.tolist()}"


@pytest.mark.parametrize("side_grid", ["packed_regs", "online"])
def test_masked_and_special_rows(side_grid):
    for case, dist in ((Case((400, 70000), "bfloat16", params=(("mask", True),)), "special"),
                       (Case((400, 131072), "float32"), "special"), (Case((400, 131072), "bfloat16"), "large")):
        cmp, kernel = run_kernel(_with_margin(0, side_grid), load_variant(OP, V14), case, dist)
        assert cmp.ok, f"{case.label} ({dist}, {side_grid}) via {kernel}: {cmp.summary(max_lines=3)}"


@pytest.mark.parametrize("side_grid", ["packed_regs", "online"])
def test_leaves_its_counters_zero_and_replays_in_a_graph(side_grid):
    """The fork and join to the side stream inside a CUDA-graph capture; the helper's graph case is
    300 x 131072 bf16, where the default margin leaves the side grid rows."""
    cases = [Case((1000, 131072), "bfloat16"), Case((400, 131072), "float32"), Case((130, 65536), "bfloat16")]
    assert_counters_zero_and_graph_replays(_with_margin(128, side_grid), load_variant(OP, V14), cases)


@pytest.mark.parametrize("n", [131072, 131071])
def test_v4_dispatch_sends_full_stage_bf16_rows_to_v12(n):
    """v4's "wide" entry: bf16 rows of 65537-131072 whose v12 stages are full go to v12 alone since session 27
    (op.py DISPATCH_WIDE_SPLIT; v14's grids before, still v14's own tests above); part-stage widths and rows past
    131072 go to v16: tests/gpu/test_softmax_half_blocks.py."""
    v4 = OP.variant("v4_dispatch")
    p = OP.plan(v4, n, torch.cuda.get_device_capability(), "bfloat16")
    assert not p.side and p.name.startswith("softmax_dy_"), p
    for offset in (0, 1):
        case = Case((600, n), "bfloat16", offset=offset)
        cmp, kernel = run_kernel(v4, load_variant(OP, v4), case)
        assert kernel.startswith("softmax_dy_"), kernel
        assert cmp.ok, f"{case.label} via {kernel}: {cmp.summary(max_lines=3)}"
