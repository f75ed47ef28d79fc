"""softmax, rmsnorm, layernorm without a GPU: references against torch on CPU, the checker's
verdicts on CPU models of the kernels' arithmetic (right and wrong), work models, case lists,
launch plans, compiles for every CI arch with 0 spills, and 16-byte accesses in the SASS."""

from __future__ import annotations

import math
import re

import pytest
import torch
import torch.nn.functional as F

from kernelab.check import REASONS, check_callable
from kernelab.check.inputs import DTYPES
from kernelab.gpu import CI_ARCHS, Arch, compile_file, toolchain
from kernelab.ops import compile_variant, discover
from kernelab.ops.base import Case
from kernelab.ops.softmax import rows

from ._parallel import map_compiles

OPS = discover()
SOFTMAX, RMSNORM, LAYERNORM = OPS["softmax"], OPS["rmsnorm"], OPS["layernorm"]
MINE = (SOFTMAX, RMSNORM, LAYERNORM)


def _all_variants(include_wrong=True):
    for op in MINE:
        for v in op.variants(include_wrong=include_wrong):
            yield op, v


def _small(op, limit=300_000):
    return [c for c in op.test_cases() if c.numel <= limit]


def _quiet_check(run, op, case, **kw):
    kw.setdefault("seeds", (0,))
    return check_callable(run, op, case, device="cpu", repeat=False, stream_order=False, **kw)


# ---- references, inputs, tolerances -------------------------------------------------------------

def test_references_are_float64_and_match_torch_fp32_on_cpu():
    x = torch.randn(3, 1000, dtype=torch.float64)
    w, b = torch.randn(1000, dtype=torch.float64), torch.randn(1000, dtype=torch.float64)
    case = Case((3, 1000), "float32")
    inputs = {"x": x.float(), "weight": w.float(), "bias": b.float()}
    for op, expected in (
        (SOFTMAX, torch.softmax(x.float(), -1)),
        (RMSNORM, x.float() / torch.sqrt((x.float() ** 2).mean(-1, keepdim=True) + 1e-6) * w.float()),
        (LAYERNORM, (x.float() - x.float().mean(-1, keepdim=True))
         / torch.sqrt(x.float().var(-1, unbiased=False, keepdim=True) + 1e-5) * w.float() + b.float()),
    ):
        ref = op.reference(case, inputs)["y"]
        assert ref.dtype == torch.float64, op.name
        torch.testing.assert_close(ref.float(), expected, rtol=1e-5, atol=1e-6, msg=op.name)


def test_eps_is_a_case_param_with_torch_defaults():
    assert RMSNORM.eps(Case((1, 8), "float32")) == 1e-6 and LAYERNORM.eps(Case((1, 8), "float32")) == 1e-5
    assert RMSNORM.eps(Case((1, 8), "float32", params=(("eps", 0.1),))) == 0.1
    x = torch.full((1, 4), 0.1, dtype=torch.float64)
    inputs = {"x": x, "weight": torch.ones(4, dtype=torch.float64)}
    big = RMSNORM.reference(Case((1, 4), "float32", params=(("eps", 1.0),)), inputs)["y"]
    assert torch.allclose(big, x / math.sqrt(0.01 + 1.0))


@pytest.mark.parametrize("op", [SOFTMAX, RMSNORM], ids=lambda o: o.name)
def test_torch_on_cpu_passes_the_checker_on_every_small_case(op):
    """The tolerances are reachable: torch's own CPU kernels pass the checker with our inputs,
    reference and tolerances, including softmax's special values (NaN rows, -inf masks)."""
    failures = []
    for case in _small(op, limit=40_000):
        eager = op.peers(case)["torch"]

        def run(inputs, outputs):
            outputs["y"].copy_(eager(inputs)["y"])

        r = _quiet_check(run, op, case)
        if not r.ok:
            failures.append(f"{case.label}: {r.reason}: {r.detail[:300]}")
    assert not failures, "\n".join(failures)


def _layernorm_pivot_fp32(inputs, outputs, eps=1e-5):
    """The kernels' arithmetic in fp32 (sums of x - x[0], two-pass variance), as a CPU model."""
    x = inputs["x"].float()
    z = x - x[:, :1]
    mean = z.sum(-1, keepdim=True) / x.shape[1]
    var = ((z - mean) ** 2).sum(-1, keepdim=True) / x.shape[1]
    outputs["y"].copy_((z - mean) * torch.rsqrt(var + eps) * inputs["weight"].float() + inputs["bias"].float())


def test_layernorm_pivot_two_pass_passes_and_one_pass_variance_fails_on_shifted_rows():
    """Why the kernels sum x - x[0] and use the two-pass variance: at x = 1000 + N(0, 1) in fp32
    the one-pass E[x^2] - E[x]^2 is rejected (mismatch, as wrong/w0_one_pass_variance expects)."""
    case = Case((5, 8192), "float32", params=(("shift", 1000.0),))
    pivot = _layernorm_pivot_fp32
    assert _quiet_check(pivot, LAYERNORM, case, seeds=(0, 1)).ok

    def one_pass(inputs, outputs):
        x = inputs["x"].float()
        mean = x.mean(-1, keepdim=True)
        var = ((x * x).mean(-1, keepdim=True) - mean * mean).clamp_min(0)
        outputs["y"].copy_((x - mean) * torch.rsqrt(var + 1e-5) * inputs["weight"] + inputs["bias"])

    r = _quiet_check(one_pass, LAYERNORM, case)
    assert not r.ok and r.reason == LAYERNORM.variant("w0").meta["expect"], r.detail


def test_cpu_models_of_the_wrong_kernels_get_their_expected_reasons():
    """The @expect codes are what the checker says about the wrong kernels' behaviour."""
    def softmax_short_store(inputs, outputs):  # wrong/w0_unwritten_tail: last column never written
        outputs["y"][:, :-1].copy_(torch.softmax(inputs["x"].float(), -1)[:, :-1])

    def softmax_warp_local_sum(inputs, outputs):  # wrong/w1: normalised by each warp's share of the sum
        x = inputs["x"].float()
        e = torch.exp(x - x.max(-1, keepdim=True).values)
        col = torch.arange(x.shape[1])
        warp = (col % 256) // 32
        s = torch.stack([e[:, warp == k].sum(-1) for k in range(8)], -1)
        outputs["y"].copy_(e / s[:, warp])

    def rms_whole_fours(inputs, outputs):  # rmsnorm wrong/w0: the last N % 4 columns dropped
        x, n = inputs["x"].float(), inputs["x"].shape[1] // 4 * 4
        rstd = torch.rsqrt((x[:, :n] ** 2).sum(-1, keepdim=True) / x.shape[1] + 1e-6)
        outputs["y"][:, :n].copy_(x[:, :n] * rstd * inputs["weight"][:n])

    def ln_bias0(inputs, outputs):  # layernorm wrong/w1: bias[0] everywhere
        x = inputs["x"].float()
        outputs["y"].copy_(F.layer_norm(x, (x.shape[1],), inputs["weight"], None, 1e-5) + inputs["bias"][0])

    cases = [
        (SOFTMAX, "w0", softmax_short_store, Case((7, 1000), "float32")),
        (SOFTMAX, "w1", softmax_warp_local_sum, Case((3, 1025), "float32")),
        (RMSNORM, "w0", rms_whole_fours, Case((5, 1001), "float32")),
        (LAYERNORM, "w1", ln_bias0, Case((5, 1000), "float32")),
    ]
    for op, wrong, model, case in cases:
        r = _quiet_check(model, op, case)
        expect = op.variant(wrong).meta["expect"]
        assert not r.ok and r.reason == expect, f"{op.name}/{wrong}: {r.reason} != {expect}: {r.detail[:300]}"


def test_wrong_kernels_declare_known_reasons():
    for op in MINE:
        wrong = op.wrong_variants()
        assert 1 <= len(wrong) <= 2, op.name
        for v in wrong:
            assert v.meta.get("expect") in REASONS, f"{v.id}: `@expect {v.meta.get('expect')}` is not a reason code"


def test_softmax_special_values_match_torch():
    """-inf masks give 0, an all -inf row NaN, +inf or NaN entries a NaN row: what the kernels do."""
    x = torch.tensor([[0.0, float("-inf"), 1.0], [float("-inf")] * 3, [0.0, float("inf"), 1.0], [0.0, float("nan"), 1.0]],
                     dtype=torch.float64)
    ref = SOFTMAX.reference(Case((4, 3), "float32"), {"x": x})["y"]
    assert ref[0, 1] == 0 and torch.isfinite(ref[0]).all()
    assert torch.isnan(ref[1:]).all()
    assert "special" in SOFTMAX.distributions and "special" not in RMSNORM.distributions


# ---- work models and case lists -----------------------------------------------------------------

def test_work_models_count_bytes_that_must_move():
    c = Case((32768, 8192), "bfloat16")
    assert SOFTMAX.work(c).bytes == 2 * 32768 * 8192 * 2
    assert RMSNORM.work(c).bytes == (2 * 32768 * 8192 + 8192) * 2
    assert LAYERNORM.work(c).bytes == (2 * 32768 * 8192 + 2 * 8192) * 2
    assert SOFTMAX.work(Case((3, 5), "float32")).bytes == 2 * 15 * 4
    for op in MINE:
        assert op.work(c).flops > 0


def test_softmax_cases_cover_the_required_widths_and_layouts():
    widths = {1, 2, 31, 32, 33, 1000, 1024, 1025, 4097, 8192, 32769, 131072, 262144}
    for dt in ("float32", "bfloat16"):
        cases = [c for c in SOFTMAX.test_cases() if c.dtype == dt]
        assert widths <= {c.shape[1] for c in cases}
        assert any(c.offset and c.layout == "contiguous" for c in cases)
        assert any(c.layout == "mixed_alignment" for c in cases)
        assert any(c.param("mask") for c in cases)
        assert all(c.shape[0] <= 257 for c in cases)
    bench = {(c.shape, c.dtype) for c in SOFTMAX.bench_cases()}
    for shape in ((32768, 8192), (262144, 1024), (8192, 32768), (2048, 131072)):
        assert (shape, "bfloat16") in bench
    assert any(dt == "float32" for _, dt in bench)


@pytest.mark.parametrize("op", [RMSNORM, LAYERNORM], ids=lambda o: o.name)
def test_norm_cases_cover_the_required_grid(op):
    for dt in ("float32", "bfloat16"):
        shapes = {c.shape for c in op.test_cases() if c.dtype == dt}
        for n in (1, 7, 64, 1000, 1024, 4096, 8192, 16385):
            for m in (1, 5, 33):
                assert (m, n) in shapes
        cases = [c for c in op.test_cases() if c.dtype == dt]
        assert any(c.param("eps") for c in cases) and any(c.offset for c in cases)
        assert any(c.layout == "misaligned_params" for c in cases)
    assert (((32768, 8192), "bfloat16")) in {(c.shape, c.dtype) for c in op.bench_cases()}
    if op is LAYERNORM:
        assert any(c.param("shift") for c in op.test_cases())


def test_inputs_are_laid_out_as_the_case_says():
    c = Case((3, 100), "bfloat16", offset=3, layout="mixed_alignment")
    x = SOFTMAX.make_inputs(c, 0, "cpu")["x"]
    y = SOFTMAX.make_outputs(c, {"x": x})["y"]
    assert x.is_contiguous() and x.storage_offset() == 3 and y.storage_offset() == 0
    masked = SOFTMAX.make_inputs(Case((4, 50), "float32", params=(("mask", True),)), 0, "cpu")["x"]
    assert torch.isinf(masked[1]).all() and torch.isinf(masked).sum() > 50
    p = LAYERNORM.make_inputs(Case((2, 16), "float32", layout="misaligned_params"), 0, "cpu")
    assert p["weight"].storage_offset() == 1 and p["bias"].storage_offset() == 1
    big = RMSNORM.make_inputs(Case((2, 1000), "float32"), 0, "cpu", dist="large")["x"]
    assert 1e3 < big.abs().max() < 1e6  # N(0, 1e4^2): x^2 stays finite in fp32
    shifted = LAYERNORM.make_inputs(Case((2, 1000), "float32", params=(("shift", 1000.0),)), 0, "cpu")["x"]
    assert 990 < float(shifted.mean()) < 1010


# ---- launch plans -------------------------------------------------------------------------------

def _geometry(n: int, mis_elems: int, v: int):
    head = min((v - mis_elems) % v, n)
    nvec = (n - head) // v
    return head, nvec, n - head - nvec * v


@pytest.mark.parametrize("p,e", [(32, 8), (32, 32), (256, 32), (8 * 1024, 32)])
def test_row_split_covers_every_column_once(p, e):
    """The ownership rule of rows.cuh (head scalars, vectors j = k * P + g, tail scalars), modelled:
    every column of the row is owned by exactly one (thread, slot) whenever N <= P * E."""
    for v in (4, 8):
        for n in sorted({1, 2, v - 1, v, v + 1, 33, p * e - 1, p * e}):
            for mis in range(v):
                head, nvec, tail = _geometry(n, mis, v)
                assert head < v and tail < v and nvec <= (e // v) * p, (n, mis, v)
                seen = [0] * n
                for g in range(p):
                    if g < head:
                        seen[g] += 1
                    if g < tail:
                        seen[head + nvec * v + g] += 1
                    for k in range(e // v):
                        j = k * p + g
                        if j < nvec:
                            for i in range(v):
                                seen[head + j * v + i] += 1
                assert seen == [1] * n, (p, e, n, mis, v)


def test_plans_pick_the_smallest_instance_that_holds_the_row():
    for make in (rows.warp_plan, rows.block_plan, rows.cluster_plan):
        previous = 0
        for n in (1, 255, 256, 257, 1024, 1025, 2048, 2049, 8192, 16384, 16385, 32768, 65536, 131072, 262144):
            plan = make("softmax", n)
            if plan is None:
                previous = None
                continue
            assert previous is not None, f"{make.__name__} accepts N={n} after refusing a narrower row"
            assert plan.capacity >= n, (n, plan)
            assert make("softmax", plan.capacity) == plan and (plan.capacity // 2 < n or plan.capacity in (256, 2048, 16384)), (n, plan)
    assert rows.warp_plan("softmax", 1025) is None and rows.block_plan("softmax", 32769) is None
    assert rows.cluster_plan("softmax", 262145) is None
    p = rows.cluster_plan("softmax", 131072)
    assert (p.block, p.cluster, p.grid(2048), p.blocks(2048)) == (512, 8, 2048, 16384)


def test_softmax_dispatch_picks_by_width_and_arch():
    v4 = SOFTMAX.variant("v4_dispatch")
    name = lambda n, cc: SOFTMAX.plan(v4, n, cc).name  # noqa: E731
    # bf16 up to 1024 and 4097-8192: v6 (H200 session 4: 250.8 us vs v0 266.1; 258.8 vs v1 271.7)
    assert name(1000, (9, 0)) == "softmax_pk_warp_c1024"
    assert name(8192, (9, 0)) == "softmax_pk_block_t512"
    assert name(4096, (9, 0)) == "softmax_block_t128"  # 1025-4096: v1 still (v6 unmeasured there)
    assert name(1000, (8, 0)) == "softmax_warp_e32"  # before sm_90 the table is unchanged
    # bf16 16385-32768: v6's 32-element instance (H200 session 6: 257.7 us vs v2 262.8; v3 362, v1 303)
    assert name(32768, (9, 0)) == "softmax_pk_block_t1024_e32"
    assert SOFTMAX.plan(v4, 32768, (9, 0), "float32").name == "softmax_dy_c2"  # fp32 past 12288: "wide"
    assert SOFTMAX.plan(v4, 12288, (9, 0), "float32").name == "softmax_online_t512"
    # past 32768: the "wide" entry (session 14's grid of 24 widths; op.py wide_plan): v12 (rows from
    # a counter) where each block's stage is a full 32 KiB and its clusters place (v14's two grids for bf16
    # of 65537-131072 in sessions 13-26; v12 alone since SB_FAST_EXP, session 27); fp32 131072 in
    # clusters of 16 holding 32 values a thread; the rest v16, v13's kernel in the fewest 512-thread
    # blocks that hold a row (bf16 4915 x 40960: v13 204.8 us vs v12 287.4; v16 1-7% faster than v13's)
    assert name(65536, (9, 0)) == "softmax_dy_c4" and name(32769, (9, 0)) == "softmax_hb_c2"
    assert SOFTMAX.plan(v4, 65536, (9, 0), "float32").name == "softmax_dy_c4"
    assert name(131072, (9, 0)) == "softmax_dy_c8" and name(81920, (9, 0)) == "softmax_hb_c3"  # v12 alone since session 27
    assert name(262144, (10, 0)) == "softmax_hb_c8"  # session 16: v16 209.8 us vs v14 218.3 at 768 rows
    # fp32 131072 = 16 x 128 x 64: the t128 clusters' `_full` instance (session 29), e32's for misaligned rows
    f32 = SOFTMAX.plan(v4, 131072, (9, 0), "float32")
    assert f32.name == "softmax_dy_t128_c16" and f32.misaligned.name == "softmax_dy_e32_c16"  # 32 values a thread
    assert SOFTMAX.plan(v4, 131071, (9, 0), "float32").name == "softmax_dy_e32_c16"
    assert name(131072, (8, 0)) == "softmax_online_t512"
    assert name(32768, (8, 0)) == "softmax_block_t1024"
    assert name(300000, (9, 0)) == "softmax_online_t512"
    # Narrow-only variants say why they skip a case.
    assert "1024" in SOFTMAX.supports(SOFTMAX.variant("v0"), Case((1, 1025), "float32"))
    assert SOFTMAX.supports(SOFTMAX.variant("v2"), Case((1, 10**6), "float32")) is None


def test_every_planned_kernel_exists_in_its_variant():
    """The names the launches ask for are extern "C" kernels of the variant they take them from."""
    from kernelab.gpu import parse_signatures

    widths = sorted({c.shape[1] for c in SOFTMAX.test_cases()} | {8193, 16385, 300000})
    for op in MINE:
        for v in op.variants():
            sigs = parse_signatures(v.path.read_text(), op.defines(v), [v.path.parent])
            for n in widths:
                for cc in ((8, 0), (9, 0)):
                    if v.min_arch and cc < Arch.parse(v.min_arch).cc:
                        continue
                    for dt in op.dtypes:  # plans depend on the dtype (v6's bf16-only 32-element instance)
                        p = op.plan(v, n, cc, dt) if op is SOFTMAX else op.plan(v, n, dt)
                        if p is None:
                            continue
                        want = op.kernel_name(dt) if p.name is None else f"{p.name}_{DTYPES[dt]}"
                        assert want in sigs, f"{v.id} plans {want} for N={n} on sm_{cc[0]}{cc[1]}, which it lacks"


# ---- compiles, spills, SASS ---------------------------------------------------------------------

def _compile(op, v, arch):
    """Arch-limited variants (v3: @arch sm_90) build for their arch and newer, not older."""
    if v.min_arch:
        if Arch.parse(arch).cc < Arch.parse(v.min_arch).cc:
            return None
        return compile_file(v.path, arch=arch, defines=op.defines(v))
    return compile_variant(op, v, arch=arch)


@pytest.mark.parametrize("arch", CI_ARCHS)
def test_every_variant_compiles_without_spills(arch):
    failures = []
    for (op, v), m in map_compiles(lambda job: _compile(job[0], job[1], arch), _all_variants()):
        if isinstance(m, Exception):
            raise m
        if m is None:
            continue
        for dt in v.dtypes(op):
            if op.kernel_name(dt) not in m.resources:
                failures.append(f"{v.id} [{arch}]: no kernel {op.kernel_name(dt)}")
        for k, r in m.resources.items():
            if r.spills:
                failures.append(f"{v.id} {k} [{arch}]: {r.spill_stores} B spill stores, {r.spill_loads} B spill loads")
    assert not failures, "\n".join(failures)


def test_cluster_variant_refuses_sm_80():
    v3 = SOFTMAX.variant("v3_cluster")
    assert v3.min_arch == "sm_90"
    from kernelab.gpu import CompileError

    with pytest.raises(CompileError, match="sm_90"):
        compile_file(v3.path, arch="sm_80")


@pytest.mark.parametrize("arch", CI_ARCHS)
def test_sass_has_16_byte_accesses_and_no_local_memory(arch):
    """Variants whose header claims `@access_bytes 16`: every kernel of the module loads and stores
    with LDG/STG .128 (the scalar head/tail and misaligned fallbacks are there too, by design) and
    touches no local memory (LDL/STL: spills or stack arrays). A kernel whose loads are bulk copies
    (UBLKCP / UTMALDG: multiples of 16 B by definition, e.g. v10's instances inside v4_dispatch)
    or 16-byte cp.async copies (LDGSTS .128: transpose v4's shifted kernels) counts as 16-byte loads."""
    if toolchain.cuobjdump_path() is None:
        pytest.skip("cuobjdump not found (pip install nvidia-cuda-cuobjdump, or triton which ships it)")
    from kernelab.analysis.sass import sass_mix

    failures = []
    for op, v in _all_variants(include_wrong=False):
        if v.meta.get("access_bytes") != "16":
            continue
        m = _compile(op, v, arch)
        if m is None:
            continue
        mix = sass_mix(m.cubin)
        assert set(mix) == set(m.resources), f"{v.id}: SASS functions {sorted(mix)} vs ptxas {sorted(m.resources)}"
        for k, x in mix.items():
            if (x.ldg128 == 0 and x.tma == 0 and x.ldgsts128 == 0) or x.stg128 == 0:
                failures.append(f"{v.id} {k} [{arch}]: LDG.128 x{x.ldg128}, STG.128 x{x.stg128}")
            if x.ldl or x.stl:
                failures.append(f"{v.id} {k} [{arch}]: local memory LDL x{x.ldl}, STL x{x.stl}")
    assert not failures, "\n".join(failures)


def test_variant_headers_say_what_why_predicted_measured():
    for op, v in _all_variants(include_wrong=False):
        text = v.header
        for word in ("What changed", "Why", "Predicted", "Measured: BENCHMARKS.md"):
            assert word in text, f"{v.path.name} header lacks {word!r}"
        assert re.search(r"\d+(\.\d+)? ?(GB|us|TB/s)", text), f"{v.path.name}: the prediction should count bytes/time"
        assert v.meta.get("strategy"), f"{v.path.name}: no `@strategy`"


# ---- torch operators ----------------------------------------------------------------------------

def test_torch_operators_are_registered_with_fake_implementations():
    import kernelab.ops.torch_ops  # noqa: F401
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        x = torch.empty(4, 3, 1000, dtype=torch.bfloat16)
        w = torch.empty(1000, dtype=torch.bfloat16)
        assert torch.ops.kernelab.softmax(x).shape == x.shape
        assert torch.ops.kernelab.rmsnorm(x, w).dtype == torch.bfloat16
        assert torch.ops.kernelab.layernorm(x, w, w, 1e-5).shape == x.shape
    assert "eps=1e-06" in str(torch.ops.kernelab.rmsnorm.default._schema).replace("9.9999999999999995e-07", "1e-06")
    assert "bias" in str(torch.ops.kernelab.layernorm.default._schema)


def test_torch_operators_refuse_bad_input_with_a_fix():
    import kernelab.ops.torch_ops  # noqa: F401

    with pytest.raises(TypeError, match="float32, bfloat16"):
        torch.ops.kernelab.softmax(torch.zeros(2, 3, dtype=torch.float16))
    with pytest.raises(ValueError, match="cuda"):
        torch.ops.kernelab.softmax(torch.zeros(2, 3))
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        torch.ops.kernelab.rmsnorm(torch.zeros(2, 3), torch.zeros(4))
