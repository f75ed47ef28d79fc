"""sum, transpose and gelu_bias on the GPU: every variant x dtype x test case against the float64
reference with the op's tolerance (outputs NaN-poisoned, guard bands around them), the best
variants through the full checker, the known-wrong kernels rejected for the reason they
declare, the sum's determinism and bench-size accuracy, the transpose's vector path at size,
and the torch operators eagerly and under torch.compile."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from kernelab.check import check_variant, compare_outputs, tolerance
from kernelab.check.integrity import guarded_outputs, poison_
from kernelab.ops import Case, discover, run_variant

pytestmark = pytest.mark.gpu

OPS = discover()
MINE = ("sum", "transpose", "gelu_bias")
SUM, TRANSPOSE, GELU = OPS["sum"], OPS["transpose"], OPS["gelu_bias"]
SMALL = 1 << 17  # cases up to this many elements also run every distribution the op declares


def _run_checked(op, variant, case, seed=0, dist="normal", launch=None) -> list[str]:
    """One poisoned, guarded run of `variant` on `case`; the problems found (empty: correct).
    `launch(case, inputs, outputs)` replaces run_variant (a module built with other knobs)."""
    inputs = op.make_inputs(case, seed, "cuda", dist)
    guarded = guarded_outputs(op.make_outputs(case, inputs), guard_bytes=4096)
    for g in guarded.values():
        poison_(g.tensor, "nan")
        g.arm()
    outputs = {k: g.tensor for k, g in guarded.items()}
    if launch is None:
        run_variant(op, variant, case, inputs, outputs)
    else:
        launch(case, inputs, outputs)
    torch.cuda.synchronize()
    problems = [f"{k}: writes outside the output: {g.violations()}" for k, g in guarded.items() if g.violations()]
    ref = op.reference(case, inputs)
    nan_ok = "special" in op.distributions
    for k, g in guarded.items():
        rtol, atol = tolerance(op, g.tensor.dtype)
        cmp = compare_outputs(g.tensor, ref[k], rtol, atol, nan_ok=nan_ok, name=k)
        if not cmp.ok:
            problems.append(f"{case.label} [{dist}]: {cmp.summary(3)}")
    return problems


@pytest.mark.parametrize("op_name,variant", [(o, v.name) for o in MINE for v in OPS[o].variants()])
def test_every_variant_dtype_and_test_case(op_name, variant):
    op = OPS[op_name]
    v = op.variant(variant)
    problems = []
    for case in op.test_cases():
        if op.supports(v, case):
            continue
        dists = op.distributions if case.numel <= SMALL else ("normal",)
        for dist in dists:
            problems += _run_checked(op, v, case, seed=0, dist=dist)
    assert not problems, f"{v.id}: " + "\n".join(problems[:10])


BEST_CASES = {
    "sum": [Case((257,), "bfloat16", offset=3), Case(((1 << 20) + 3,), "float32"), Case((0,), "float32")],
    "transpose": [Case((127, 129), "bfloat16", layout="column_slice", params=(("col_start", 1),)),
                  Case((1000, 1000), "float32", offset=1), Case((1000, 992), "float32", layout="column_slice",
                                                                params=(("col_start", 8),))],
    "gelu_bias": [Case((257, 1032), "bfloat16"), Case((256, 1024), "float32", offset=1, layout="mixed_alignment")],
}


@pytest.mark.parametrize("op_name", MINE)
def test_best_variant_passes_the_full_checker(op_name):
    """Seeds x distributions, two poisons, guard bands, input snapshots, repeated calls, stream order."""
    op = OPS[op_name]
    for case in BEST_CASES[op_name]:
        r = check_variant(op, op.best_variant_for(case.dtype), case, seeds=(0, 1))
        assert r.ok, f"{case.label}: {r.reason}: {r.detail}"


@pytest.mark.parametrize("op_name,wrong", [(o, w.name) for o in MINE for w in OPS[o].wrong_variants()])
def test_known_wrong_kernel_is_rejected_for_its_reason(op_name, wrong):
    """The first test case (in test_cases() order) that the checker rejects gives the @expect reason."""
    op = OPS[op_name]
    w = op.variant(wrong)
    for case in op.test_cases():
        if op.supports(w, case):
            continue
        r = check_variant(op, w, case, seeds=(0,), dists=("normal",), repeat=False, stream_order=False)
        if not r.ok:
            assert r.reason == w.meta["expect"], f"{w.id} on {case.label}: {r.reason}: {r.detail}"
            return
    pytest.fail(f"{w.id} passed every test case; the checker never caught it")


# ---- sum ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_sum_variants_are_deterministic(dtype):
    case = Case(((1 << 22) + 5,), dtype, offset=1)
    inputs = SUM.make_inputs(case, 3, "cuda")
    for v in SUM.variants():
        results = []
        for _ in range(3):
            out = SUM.make_outputs(case, inputs)
            run_variant(SUM, v, case, inputs, out)
            results.append(out["out"].clone())
        torch.cuda.synchronize()
        assert all(torch.equal(r.view(torch.int32), results[0].view(torch.int32)) for r in results), v.name


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_sum_v2_at_the_bench_size_is_within_the_rounding_estimate(dtype):
    case = Case((1 << 28,), dtype)
    inputs = SUM.make_inputs(case, 0, "cuda")
    out = SUM.make_outputs(case, inputs)
    run_variant(SUM, SUM.variant("v2"), case, inputs, out)
    ref = inputs["x"].sum(dtype=torch.float64)
    err = abs(float(out["out"]) - float(ref))
    assert err < 5e-6, f"|error| {err:.3g} at n = 2^28 (op.py estimates ~5e-7 typical; atol is 1e-5)"
    del inputs


def test_sum_v5_programmatic_finish_reads_its_own_pass():
    """v5's finish may start before its pass ends (PDL); only griddepcontrol.wait orders it after the
    pass's partials. Back-to-back calls on changing inputs (the caching allocator hands each call
    the previous call's partials buffer, so a finish that read early would see the last call's
    sums), with no synchronisation in between, then the same inside a CUDA graph replayed on new
    inputs: every result must be the sum of its own input."""
    v5 = SUM.variant("v5")
    for dtype in ("float32", "bfloat16"):
        case = Case(((1 << 24) + 3,), dtype)
        xs = [SUM.make_inputs(case, seed, "cuda")["x"] * (seed + 1) for seed in range(12)]
        outs = [SUM.make_outputs(case, {"x": x})["out"] for x in xs]
        for x, out in zip(xs, outs):
            run_variant(SUM, v5, case, {"x": x}, {"out": out})
        torch.cuda.synchronize()
        for i, (x, out) in enumerate(zip(xs, outs)):
            ref = float(x.double().sum())
            assert abs(float(out) - ref) <= 1e-5 * (i + 1) * 8, (dtype, i, float(out), ref)

        x = xs[0].clone()
        out = torch.empty((), dtype=torch.float32, device="cuda")
        run_variant(SUM, v5, case, {"x": x}, {"out": out})  # warm up (allocations) outside the capture
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        with torch.cuda.stream(s), torch.cuda.graph(g, stream=s):
            run_variant(SUM, v5, case, {"x": x}, {"out": out})
        for src in xs[1:4]:
            x.copy_(src)
            g.replay()
            torch.cuda.synchronize()
            ref = float(src.double().sum())
            assert abs(float(out) - ref) <= 1e-5 * 4 * 8, (dtype, "graph", float(out), ref)


# ---- transpose -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_transpose_v3_at_size(dtype):
    """The vector path over whole tiles (16384^2 fp32 is the bench shape), bit-exact."""
    n = 16384 if dtype == "float32" else 8192
    case = Case((n, n), dtype)
    m = TRANSPOSE.make_inputs(case, 0, "cuda", "uniform")["m"]
    out = TRANSPOSE.make_outputs(case, {"m": m})
    out["out"].fill_(float("nan"))
    run_variant(TRANSPOSE, TRANSPOSE.variant("v3"), case, {"m": m}, out)
    assert torch.equal(out["out"], m.t())


def test_transpose_refuses_a_column_major_input_with_the_fix():
    a = torch.randn(64, 48, device="cuda")
    case = Case((48, 64), "float32")
    out = {"out": torch.empty(64, 48, device="cuda")}
    with pytest.raises(ValueError, match="unit stride"):
        run_variant(TRANSPOSE, TRANSPOSE.variant("v3"), case, {"m": a.t()}, out)


# ---- gelu_bias ---------------------------------------------------------------------------------

# v5's row loop (whole groups of R rows, the partial last group, the loop back) needs more rows
# per thread than the test cases give (their grids have a row of threads per row): these do, on
# the persistent grid (132 x 8 resident blocks on an H200), also with several rows per block
# (by = 64 at 16 columns) and an fp32 case. Knobs as the sweep sets them, plus the 64-bit loop.
V5_LOOP_CASES = [Case((20000, 1024), "bfloat16"), Case((1_000_000, 16), "bfloat16"), Case((9000, 2048), "float32"),
                 Case((3001, 1024), "bfloat16"), Case((257, 1032), "float32"), Case((1, 8), "bfloat16")]
V5_KNOBS = [({}, {}), ({}, {"INDEX32_LIMIT": 0}), ({"rows_per_thread": "2"}, {"PREFETCH": 1}),
            ({"rows_per_thread": "1"}, {"PREFETCH": 1, "MIN_BLOCKS": 16}),
            ({"rows_per_thread": "8"}, {}), ({"grid": "oneshot"}, {}), ({"grid": "persistent"}, {}),
            ({"rows_per_thread": "1"}, {"MIN_BLOCKS": 16}), ({"block": "64"}, {}),
            ({"grid": "tight", "rows_per_thread": "2"}, {}), ({"grid": "tight", "rows_per_thread": "4"}, {})]


@pytest.mark.parametrize("meta,defines", V5_KNOBS, ids=lambda d: ",".join(f"{k}={v}" for k, v in d.items()) or "-")
def test_gelu_v5_row_loop_under_each_knob(meta, defines):
    import dataclasses

    from kernelab.gpu import Module, compile_file
    from kernelab.ops.build import target_arch

    base = GELU.variant("v5_short_fit")
    v = dataclasses.replace(base, meta={**base.meta, **meta})
    d = {**GELU.defines(v), **defines}
    module = Module(compile_file(v.path, arch=target_arch(v), defines=d), d)

    def launch(case, inputs, outputs):
        GELU.launch(module.kernel(GELU.kernel_name(case.dtype)), v, case, inputs, outputs)

    problems = []
    for case in V5_LOOP_CASES:
        for dist in ("normal", "special"):
            problems += _run_checked(GELU, v, case, seed=1, dist=dist, launch=launch)
    assert not problems, f"v5 {meta} {defines}: " + "\n".join(problems[:10])


# ---- the torch operators -------------------------------------------------------------------

def test_torch_ops_eager_and_compiled():
    import kernelab.ops.torch_ops  # noqa: F401

    x = torch.randn(1000, 4097, device="cuda")
    ref = x.double().sum()
    torch.testing.assert_close(torch.ops.kernelab.sum(x).double(), ref, rtol=1e-5, atol=1e-2)
    torch.testing.assert_close(torch.ops.kernelab.sum(x.bfloat16()).double(), x.bfloat16().double().sum(),
                               rtol=1e-5, atol=1e-2)
    f = torch.compile(lambda t: torch.ops.kernelab.sum(t * 2) + 1, fullgraph=True, dynamic=False)
    torch.testing.assert_close(f(x).double(), 2 * ref + 1, rtol=1e-5, atol=2e-2)

    m = torch.randn(333, 517, device="cuda").bfloat16()[:, 5:]
    assert torch.equal(torch.ops.kernelab.transpose(m), m.t())
    g = torch.compile(lambda t: torch.ops.kernelab.transpose(t) * 2, fullgraph=True, dynamic=False)
    assert torch.equal(g(m), m.t() * 2)
    assert torch.equal(torch.ops.kernelab.transpose(m.t()), m)  # a column-major input, made contiguous

    xb = torch.randn(4, 64, 1024, device="cuda").bfloat16()
    b = torch.randn(1024, device="cuda").bfloat16()
    exact = F.gelu(xb.double() + b.double())
    rtol, atol = GELU.tolerances["bfloat16"]
    torch.testing.assert_close(torch.ops.kernelab.gelu_bias(xb, b).double(), exact, rtol=rtol, atol=atol)
    h = torch.compile(lambda t, c: torch.ops.kernelab.gelu_bias(t, c) + 1, fullgraph=True, dynamic=False)
    torch.testing.assert_close(h(xb, b).double(), (exact + 1).bfloat16().double(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name,args", [
    ("sum", lambda: (torch.randn(4099, device="cuda"),)),
    ("transpose", lambda: (torch.randn(65, 130, device="cuda").bfloat16()[:, 1:],)),
    ("gelu_bias", lambda: (torch.randn(3, 7, 40, device="cuda"), torch.randn(40, device="cuda"))),
])
def test_torch_ops_pass_opcheck(name, args):
    import kernelab.ops.torch_ops  # noqa: F401

    torch.library.opcheck(getattr(torch.ops.kernelab, name).default, args(),
                          test_utils=("test_schema", "test_faketensor", "test_aot_dispatch_static"))
