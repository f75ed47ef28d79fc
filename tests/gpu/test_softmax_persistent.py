"""softmax v5_persistent on a GPU, beyond the per-variant sweep of tests/gpu/test_ops_mem_b.py
(which runs v5 on every test case, normal and special inputs): enough rows that every
persistent warp / block / cluster loops over >= 3 rows (the next-row prefetch and the
double-buffered mbarrier exchange of the cluster instances are exercised through both parities,
with misaligned rows too), the non-portable cluster of 16 is schedulable, and v4_dispatch gives
right answers when its table routes every width to v5 (the change a sweep may ask for).

Failures name the instance the launch took (e.g. softmax_pc_t512_c8_bf16) and the grid.
"""

from __future__ import annotations

import pytest
import torch

from kernelab.check import compare_outputs, tolerance
from kernelab.gpu import KernelFault, last_launched_kernel, synchronize
from kernelab.ops import discover, load_variant, run_variant
from kernelab.ops.base import Case
from kernelab.ops.softmax import op as softmax_op

pytestmark = pytest.mark.gpu

OP = discover()["softmax"]
V5 = OP.variant("v5_persistent")


def _hopper() -> bool:
    return torch.cuda.get_device_capability() >= (9, 0)


def _run(v, case, dist="normal"):
    inputs = OP.make_inputs(case, 0, "cuda", dist)
    outputs = OP.make_outputs(case, inputs)
    outputs["y"].fill_(float("nan"))
    try:
        run_variant(OP, v, case, inputs, outputs)
        synchronize()
    except KernelFault as e:
        raise AssertionError(f"{v.id} faulted on {case.label} in {last_launched_kernel()}: {e}") from None
    rtol, atol = tolerance(OP, case.dtype)
    cmp = compare_outputs(outputs["y"], OP.reference(case, inputs)["y"], rtol, atol, nan_ok=True, max_report=3, name="y")
    return cmp, last_launched_kernel()


def _grid(case):
    """(plan, persistent grid, rows each warp / block / cluster takes at most) for v5 on `case`."""
    p = OP.plan(V5, case.shape[1], torch.cuda.get_device_capability(), case.dtype)
    k = load_variant(OP, V5).kernel(f"{p.name}_{'bf16' if case.dtype == 'bfloat16' else 'f32'}")
    g = softmax_op.persistent_grid(k, p, case.shape[0])
    units = g * p.rows_per_block  # warps (8 per block) or blocks or clusters
    return p, g, -(-case.shape[0] // units)


# (N, rows per resident unit at least, dtype, offset): warps, single blocks, clusters of 4, 8, 16.
LOOPS = [(1000, 3, "bfloat16", 1), (1024, 3, "float32", 0), (8192, 3, "bfloat16", 0), (4097, 3, "float32", 3),
         (32768, 4, "bfloat16", 1), (65536, 3, "float32", 0), (131072, 4, "bfloat16", 0), (131072, 3, "float32", 1),
         (262144, 3, "bfloat16", 0)]


@pytest.mark.parametrize("n,loops,dtype,offset", LOOPS, ids=lambda x: str(x))
def test_every_unit_loops_over_several_rows(n, loops, dtype, offset):
    if n > 16384 and not _hopper():
        pytest.skip("clusters need sm_90")
    p = OP.plan(V5, n, torch.cuda.get_device_capability(), dtype)
    probe = Case((1, n), dtype)
    _, g, _ = _grid(probe)
    assert g == 1  # capped by the work: one row, one unit
    # Rows = loops x the units that fit, + 1 so that the last round is partial.
    k = load_variant(OP, V5).kernel(f"{p.name}_{'bf16' if dtype == 'bfloat16' else 'f32'}")
    fit = softmax_op.persistent_grid(k, p, 1 << 30) * p.rows_per_block
    case = Case((loops * fit + 1, n), dtype, offset=offset)
    _, g, per_unit = _grid(case)
    assert per_unit >= loops, f"{p}: grid {g} leaves {per_unit} rows per unit"
    cmp, kernel = _run(V5, case)
    assert kernel == f"{p.name}_{'bf16' if dtype == 'bfloat16' else 'f32'}", kernel
    assert cmp.ok, f"{case.label} via {kernel} (grid {g}, {per_unit} rows per unit): {cmp.summary(max_lines=3)}"


def test_masked_rows_through_the_cluster_loop():
    """-inf entries and an all -inf row (NaN, as torch) inside a persistent cluster loop."""
    if not _hopper():
        pytest.skip("clusters need sm_90")
    case = Case((70, 40000), "bfloat16", params=(("mask", True),))
    cmp, kernel = _run(V5, case, "special")
    assert cmp.ok, f"{case.label} via {kernel}: {cmp.summary(max_lines=3)}"


def test_cluster_of_16_is_schedulable():
    if not _hopper():
        pytest.skip("clusters need sm_90")
    from kernelab.gpu import tensormap

    mod = load_variant(OP, V5)
    for dt in ("bf16", "f32"):
        k = mod.kernel(f"softmax_pc_t512_c16_{dt}")
        fit = tensormap.max_active_clusters(k, 512, (16, 1, 1))
        assert fit and fit >= 1, f"{k.name}: cuOccupancyMaxActiveClusters says {fit} clusters of 16 fit"


def test_dispatch_routed_to_v5_everywhere_is_correct(monkeypatch):
    """The table flipped to "persistent" (what a sweep verdict may ask for): v4 must hold the
    instances and they must be right on the op's test cases (normal inputs). The flip changes v4's
    defines (V4_PERSISTENT, softmax_op.dispatch_lists), so load_variant builds it again."""
    v4 = OP.variant("v4_dispatch")
    for name in ("DISPATCH_SM90", "DISPATCH_OLDER"):
        table = getattr(softmax_op, name)
        monkeypatch.setattr(softmax_op, name, {dt: tuple((w, "persistent") for w, _ in e) for dt, e in table.items()})
    softmax_op._plan.cache_clear()
    try:
        failures, kernels = [], set()
        for case in OP.test_cases():
            cmp, kernel = _run(v4, case)
            kernels.add(kernel)
            if not cmp.ok:
                failures.append(f"{case.label} via {kernel}: {cmp.summary(max_lines=2)}")
        assert not failures, "\n".join(failures[:20])
        assert any(k.startswith("softmax_pw_") for k in kernels) and any("_c1_" in k for k in kernels)
        if _hopper():
            assert any("_c8_" in k for k in kernels), sorted(kernels)
    finally:
        monkeypatch.undo()
        softmax_op._plan.cache_clear()


def _f32_65536() -> str:
    """v4's fp32 rows of 65536 (its "wide" entry): v12's clusters of 4 where a block may take 128 KiB
    of shared memory (sm_90, sm_100); elsewhere what the plan says (sm_120: 99 KiB a block);
    before sm_90 the online kernel."""
    if not _hopper():
        return "softmax_online_t512_f32"
    cc = torch.cuda.get_device_capability()
    return "softmax_dy_c4_f32" if cc[0] < 12 else OP.plan(OP.variant("v4_dispatch"), 65536, cc, "float32").name + "_f32"


def _f32_131072() -> str:
    """v4's aligned fp32 rows of 131072: the t128 clusters' `_full` instance where two of its 96 KiB rings fit an
    SM (sm_90, sm_100; session 29), e32's clusters of 16 where not (sm_120), the online kernel before sm_90."""
    if not _hopper():
        return "softmax_online_t512_f32"
    cc = torch.cuda.get_device_capability()
    return "softmax_dy_t128_c16_full_f32" if cc[0] < 12 else "softmax_dy_e32_c16_f32"


def test_dispatch_takes_v6_at_32768_bf16_and_the_table_elsewhere():
    v4 = OP.variant("v4_dispatch")
    wide_bf16 = "softmax_pk_block_t1024_e32_full_bf16" if _hopper() else "softmax_block_t1024_bf16"
    for n, dt, want in ((32768, "bfloat16", wide_bf16),
                        (32768, "float32", "softmax_dy_c2_f32" if _hopper() else "softmax_block_t1024_f32"),
                        (8192, "float32", "softmax_online_t512_f32"),
                        (8192, "bfloat16", "softmax_pk_block_t512_full_bf16" if _hopper() else "softmax_block_t256_bf16"),
                        (65536, "bfloat16", "softmax_dy_c4_bf16" if _hopper() else "softmax_online_t512_bf16"),
                        (65536, "float32", _f32_65536()),
                        (131072, "float32", _f32_131072()),
                        (131073, "float32", "softmax_dy_c16_f32" if _hopper() else "softmax_online_t512_f32"),
                        # v12 alone (v14's main grid until session 27: op.py DISPATCH_WIDE_SPLIT)
                        (131072, "bfloat16", "softmax_dy_c8_bf16" if _hopper() else "softmax_online_t512_bf16"),
                        # 24 KiB stages for v12: v16, v13's kernel in 512-thread blocks (sessions 14-15)
                        (100000, "bfloat16", "softmax_hb_c4_bf16" if _hopper() else "softmax_online_t512_bf16")):
        cmp, kernel = _run(v4, Case((3, n), dt))
        assert cmp.ok and kernel == want, f"N={n} {dt}: ran {kernel} (want {want}); {cmp.summary(max_lines=2)}"
