"""What the softmax GPU tests of the persistent wide-row variants share: one launch of a variant's
kernel on fresh NaN-poisoned outputs compared with the float64 reference, and the check that the
rows-from-a-counter variants (v12_dynamic_rows, v13_packed_regs) leave their per-stream counters
zero and replay correctly in a CUDA graph. Failures name the kernel the launch took."""

from __future__ import annotations

import pytest
import torch

from kernelab.check import compare_outputs, tolerance
from kernelab.check.inputs import DTYPES
from kernelab.gpu import KernelFault, last_launched_kernel, synchronize
from kernelab.ops import discover, load_variant
from kernelab.ops.base import Case
from kernelab.ops.softmax import op as softmax_op

OP = discover()["softmax"]


def sm90_only(what: str):
    """An autouse fixture for a test module (assign it to a module name): below sm_90 its tests skip,
    saying what needs sm_90 (cp.async.bulk, and clusters for most)."""

    @pytest.fixture(autouse=True)
    def _needs_hopper():
        if torch.cuda.get_device_capability() < (9, 0):
            pytest.skip(f"{what} needs sm_90 ({'cp.async.bulk' if 'v9' in what else 'cp.async.bulk, clusters'})")

    return _needs_hopper


def planned_fit(v, n: int, dtype: str):
    """(plan, clusters that fit on this GPU at once) of variant v for rows of n."""
    p = OP.plan(v, n, torch.cuda.get_device_capability(), dtype)
    assert p is not None, f"{v.name} plans nothing for N={n} {dtype}"
    k = load_variant(OP, v).kernel(f"{p.name}_{DTYPES[dtype]}")
    return p, softmax_op.persistent_grid(k, p, 1 << 30)


def assert_every_cluster_loops(v, n: int, dtype: str, cluster: int, rows_per_cluster: int = 9, **case_kw) -> None:
    """Variant v's plan for rows of n takes `cluster` blocks (checked on sm_90 / sm_100, whose plans
    the cases are written for); with `rows_per_cluster` (9: both mbarrier parities, the row-index slots
    wrapped twice) rows for every cluster that fits, plus one, the plan's instance runs and is right."""
    p, fit = planned_fit(v, n, dtype)
    if torch.cuda.get_device_capability()[0] in (9, 10):
        assert p.cluster == cluster, f"{p}: the plan's cluster changed (expected {cluster})"
    assert fit >= 1, f"{p}: no cluster of {p.cluster} x {p.block} threads with {p.smem} B fits"
    case = Case((rows_per_cluster * fit + 1, n), dtype, **case_kw)
    module = load_variant(OP, v)
    cmp, kernel = run_kernel(v, module, case)
    full = softmax_op.dynamic_full(p, n, *_aligned(case), module, dtype)  # v4's t128 `_full` instance
    assert kernel == f"{p.name}{'_full' if full else ''}_{DTYPES[dtype]}", kernel
    assert cmp.ok, f"{case.label} via {kernel} ({fit} clusters, {p.smem} B stage): {cmp.summary(max_lines=3)}"


class _Ptr:
    def __init__(self, aligned: bool):
        self._p = 0 if aligned else 2

    def data_ptr(self) -> int:
        return self._p


def _aligned(case: Case):
    """Stand-ins for x and y whose data_ptr() says whether the case's rows start 16-byte aligned, as
    softmax_op.dynamic_full reads them: x is `offset` elements into a fresh (aligned) allocation, y too
    unless the layout is mixed_alignment (then y starts at 0)."""
    esize = 4 if case.dtype == "float32" else 2
    x_ok = case.offset * esize % 16 == 0
    return _Ptr(x_ok), _Ptr(x_ok or case.layout == "mixed_alignment")


def run_kernel(v, module, case: Case, dist: str = "normal", seed: int = 0, shift: float = 0.0):
    """`v`'s launch of `module`'s contract kernel on `case`: (comparison with the reference, kernel that ran).
    `shift` is added to x first (rows far from 0: an exponent's rounding there is a relative error of every exp)."""
    inputs = OP.make_inputs(case, seed, "cuda", dist)
    if shift:
        inputs["x"].add_(shift)
    outputs = OP.make_outputs(case, inputs)
    outputs["y"].fill_(float("nan"))
    try:
        OP.launch(module.kernel(OP.kernel_name(case.dtype)), v, case, inputs, outputs)
        synchronize()
    except KernelFault as e:
        raise AssertionError(f"{v.id} faulted on {case.label} in {last_launched_kernel()}: {e}") from None
    rtol, atol = tolerance(OP, case.dtype)
    cmp = compare_outputs(outputs["y"], OP.reference(case, inputs)["y"], rtol, atol, nan_ok=True, max_report=3, name="y")
    return cmp, last_launched_kernel()


def assert_counters_zero_and_graph_replays(v, module, cases) -> None:
    """Each case twice: correct, and both counters (rows taken, clusters finished) back to 0 after it
    (a stale counter would skip rows: NaN left in y). Then a launch captured in a CUDA graph on its
    own stream, replayed on new inputs (misaligned 300 x 131072 bf16), computes every row."""
    for case in cases:
        for _ in range(2):
            cmp, kernel = run_kernel(v, module, case)
            assert cmp.ok, f"{case.label} via {kernel}: {cmp.summary(max_lines=3)}"
            work = softmax_op.dynamic_work(torch.device("cuda", torch.cuda.current_device()))
            assert work.tolist() == [0, 0], f"{kernel}: counters left at {work.tolist()}"
    case = Case((300, 131072), "bfloat16", offset=1)
    inputs = OP.make_inputs(case, 0, "cuda")
    outputs = OP.make_outputs(case, inputs)
    k = module.kernel(OP.kernel_name(case.dtype))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(s):
        OP.launch(k, v, case, inputs, outputs)  # this stream's counters, allocated before capture
        synchronize()
        with torch.cuda.graph(g, stream=s):
            OP.launch(k, v, case, inputs, outputs)
    rtol, atol = tolerance(OP, case.dtype)
    for seed in (1, 2):
        inputs["x"].copy_(OP.make_inputs(case, seed, "cuda")["x"])
        outputs["y"].fill_(float("nan"))
        g.replay()
        synchronize()
        cmp = compare_outputs(outputs["y"], OP.reference(case, inputs)["y"], rtol, atol, nan_ok=True, name="y")
        assert cmp.ok, f"{v.name} graph replay (seed {seed}): {cmp.summary(max_lines=3)}"
