"""softmax, rmsnorm, layernorm on a GPU: every variant x dtype x test case against the float64
reference (outputs poisoned with NaN first), the wrong/ kernels rejected by the checker with
their declared reason, the full check on a few cases of the best variants, the cluster path
actually taken on sm_90+, and the torch operators eagerly, under torch.compile and in a graph.

Failures name the variant, the case, the distribution and the kernel instance the launch
picked (e.g. softmax_cluster_t512_c8_bf16), so one batch run tells where to look.
"""

from __future__ import annotations

import pytest
import torch

from kernelab.check import check_variant, compare_outputs, tolerance
from kernelab.gpu import KernelFault, last_launched_kernel, synchronize
from kernelab.ops import discover, run_variant
from kernelab.ops.base import Case

pytestmark = pytest.mark.gpu

OPS = discover()
MINE = ("softmax", "rmsnorm", "layernorm")


def _cc() -> tuple[int, int]:
    return torch.cuda.get_device_capability()


def _run(op, v, case, seed=0, dist="normal"):
    """Run `v` on fresh inputs with NaN-poisoned outputs; (comparison, kernel that ran)."""
    inputs = op.make_inputs(case, seed, "cuda", dist)
    outputs = op.make_outputs(case, inputs)
    outputs["y"].fill_(float("nan"))
    try:
        run_variant(op, v, case, inputs, outputs)
        synchronize()
    except KernelFault as e:
        raise AssertionError(f"{v.id} faulted on {case.label} [{dist}] in {last_launched_kernel()}: {e}") from None
    kernel = last_launched_kernel()
    rtol, atol = tolerance(op, case.dtype)
    ref = op.reference(case, inputs)["y"]
    nan_ok = "special" in op.distributions
    return compare_outputs(outputs["y"], ref, rtol, atol, nan_ok=nan_ok, max_report=3, name="y"), kernel


def _dists(op, v, case):
    """Every case with normal inputs; the special values too for softmax; the best variant gets
    every distribution the op declares."""
    if v.name == op.best_variant:
        return op.distributions
    return ("normal", "special") if "special" in op.distributions else ("normal",)


@pytest.mark.parametrize("op_name,variant", [(o, v.name) for o in MINE for v in OPS[o].variants()])
def test_every_variant_dtype_and_case(op_name, variant):
    op = OPS[op_name]
    v = op.variant(variant)
    failures, ran, skipped = [], 0, []
    for case in op.test_cases():
        why = op.supports(v, case)
        if why:
            skipped.append(case.label)
            continue
        for dist in _dists(op, v, case):
            cmp, kernel = _run(op, v, case, seed=ran, dist=dist)
            ran += 1
            if not cmp.ok:
                failures.append(f"{v.id} {case.label} [{dist}] via {kernel}: {cmp.summary(max_lines=3)}")
    if not ran and v.min_arch:
        why = op.supports(v, op.test_cases()[0]) or ""
        if "needs" in why:
            pytest.skip(why)  # the cluster variant on a GPU before sm_90
    assert ran, f"{v.id} ran no case (skipped: {skipped})"
    assert not failures, f"{len(failures)} failing runs of {ran}:\n" + "\n".join(failures[:40])


@pytest.mark.parametrize("op_name,variant", [(o, v.name) for o in MINE for v in OPS[o].wrong_variants()])
def test_wrong_kernel_is_rejected_with_its_reason(op_name, variant):
    op = OPS[op_name]
    v = op.variant(variant)
    expect = v.meta["expect"]
    for case in op.test_cases():
        if op.supports(v, case) is None and not _run(op, v, case)[0].ok:
            break
    else:
        pytest.fail(f"{v.id} passed every test case; it is meant to fail ({expect})")
    r = check_variant(op, v, case, seeds=(0,), dists=("normal",))
    assert not r.ok and r.reason == expect, f"{v.id} on {case.label}: checker said {r.reason} ({r.detail[:400]}), expected {expect}"


FULL_CHECK = {
    "softmax": [Case((3, 131072), "bfloat16"), Case((257, 1000), "float32"), Case((4, 5000), "bfloat16", params=(("mask", True),))],
    "rmsnorm": [Case((33, 8192), "bfloat16"), Case((5, 1000), "float32", offset=1)],
    "layernorm": [Case((33, 8192), "bfloat16"), Case((5, 8192), "float32", params=(("shift", 1000.0),))],
}


@pytest.mark.parametrize("op_name", MINE)
def test_best_variant_passes_the_full_check(op_name):
    """Seeds x every distribution, both poisons, guard bands, input snapshots, repeated calls,
    stream order: the checker's whole protocol on a few cases of the exposed variant."""
    op = OPS[op_name]
    for case in FULL_CHECK[op_name]:
        v = op.variant(op.best_variant_for(case.dtype))
        r = check_variant(op, v, case)
        assert r.ok, f"{v.id} {case.label}: {r.reason}: {r.detail[:600]}"


def test_softmax_dispatch_takes_the_cluster_path_on_hopper_and_newer():
    op = OPS["softmax"]
    v = op.variant(op.best_variant)
    # bf16 past 65536 on sm_90+: v12's staged clusters, rows from a counter (v14's two grids until session
    # 27: op.py DISPATCH_WIDE_SPLIT); the dispatch table is in softmax/op.py
    # bf16 rows up to 1024 and of 4097-8192 on sm_90+: v6 (`_full` where the row is exactly the
    # instance's width and 16-byte aligned)
    for n, want_sm90, want_older in ((1000, "softmax_pk_warp_c1024", "softmax_warp_e32"),
                                     (8192, "softmax_pk_block_t512_full", "softmax_block_t256"),
                                     (131072, "softmax_dy_c8", "softmax_online_t512")):
        case = Case((2, n), "bfloat16")
        cmp, kernel = _run(op, v, case)
        assert cmp.ok, f"{case.label} via {kernel}: {cmp.summary()}"
        want = want_sm90 if _cc() >= (9, 0) else want_older
        assert kernel == f"{want}_bf16", f"N={n} on sm_{_cc()[0]}{_cc()[1]} ran {kernel}, expected {want}_bf16"


def test_softmax_best_variant_in_a_cuda_graph():
    """Capture records the (cluster) launch; replays read the buffers' new contents."""
    op = OPS["softmax"]
    v = op.variant(op.best_variant)
    case = Case((4, 131072), "bfloat16")
    inputs = op.make_inputs(case, 0, "cuda")
    outputs = op.make_outputs(case, inputs)
    run_variant(op, v, case, inputs, outputs)  # load the module outside the capture
    synchronize()
    g = torch.cuda.CUDAGraph()
    outputs["y"].fill_(float("nan"))
    with torch.cuda.graph(g):
        run_variant(op, v, case, inputs, outputs)
    synchronize()
    assert torch.isnan(outputs["y"]).all(), "capture must record, not run"
    inputs["x"].mul_(2)
    g.replay()
    synchronize()
    rtol, atol = tolerance(op, case.dtype)
    cmp = compare_outputs(outputs["y"], op.reference(case, inputs)["y"], rtol, atol, name="y")
    assert cmp.ok, cmp.summary()


def test_torch_operators_eager_and_under_torch_compile():
    import torch.nn.functional as F

    import kernelab.ops.torch_ops  # noqa: F401

    def fused(x, w, b):
        return (torch.ops.kernelab.softmax(x) * 2.0 + torch.ops.kernelab.rmsnorm(x, w, 1e-6)
                + torch.ops.kernelab.layernorm(x, w, b, 1e-5))

    def reference(x, w, b):
        n = x.shape[-1]
        x, w, b = x.double(), w.double(), b.double()
        return torch.softmax(x, -1) * 2.0 + F.rms_norm(x, (n,), w, eps=1e-6) + F.layer_norm(x, (n,), w, b, eps=1e-5)

    compiled = torch.compile(fused, fullgraph=True, dynamic=False)
    for dtype, rtol, atol in ((torch.float32, 1e-4, 1e-4), (torch.bfloat16, 3e-2, 3e-2)):
        for shape in ((2, 3, 1000), (4, 8192), (2, 40000)):
            x = torch.randn(shape, device="cuda").to(dtype)
            w = torch.randn(shape[-1], device="cuda").to(dtype)
            b = torch.randn(shape[-1], device="cuda").to(dtype)
            ref = reference(x, w, b)
            for name, fn in (("eager", fused), ("torch.compile", compiled)):
                got = fn(x, w, b)
                assert got.shape == x.shape and got.dtype == dtype, name
                # Each op rounds to dtype before the sum, so compare with the sum's tolerance.
                torch.testing.assert_close(got.double(), ref, rtol=rtol, atol=atol,
                                           msg=lambda m: f"{name} {tuple(shape)} {dtype}: {m}")
    # A wide softmax row (the cluster kernels on sm_90+) through the operator.
    x = torch.randn(3, 131072, device="cuda", dtype=torch.bfloat16)
    torch.testing.assert_close(torch.ops.kernelab.softmax(x).double(), torch.softmax(x.double(), -1), rtol=1e-2, atol=1e-6)
