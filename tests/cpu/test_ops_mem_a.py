"""sum, transpose and gelu_bias without a GPU: headers, case lists, work models, references
against torch on CPU tensors, tolerances through the real checker on CPU (torch's own answer
passes, Python versions of the known-wrong kernels fail with the expected reason), launch
geometry against each kernel's C signature (a fake kernel records the launches), the v2
GELU formula against float64, every kernel compiled for sm_80/90/100/120 with no spills,
and the SASS: 16-byte global accesses where a variant claims them, no local memory, no atomics."""

from __future__ import annotations

import math
import re
import types

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from kernelab.check import REASONS, check_callable
from kernelab.gpu import CI_ARCHS, parse_signatures, toolchain
from kernelab.ops import Case, compile_variant, discover
from kernelab.ops.gelu_bias.op import grid_mode

OPS = discover()
MINE = ("sum", "transpose", "gelu_bias")
SUM, TRANSPOSE, GELU = OPS["sum"], OPS["transpose"], OPS["gelu_bias"]
PRIME = 1_000_003
# Ops whose output is an array: a 16-byte claim covers stores too. sum writes one fp32 per block.
CLAIMS_STORES = {"sum": False, "transpose": True, "gelu_bias": True}


def _all_variants(include_wrong=True):
    for name in MINE:
        op = OPS[name]
        for v in op.variants(include_wrong=include_wrong):
            yield op, v


# ---- discovery and headers -------------------------------------------------------------------

def test_variants_are_discovered_in_order():
    assert [v.name for v in SUM.variants()] == ["v0_smem_tree", "v1_warp_shuffle", "v2_vec_persistent", "v3_oneshot",
                                                "v4_ticket", "v5_pdl_finish", "v6_ticket_chunks"]
    assert [v.name for v in TRANSPOSE.variants()] == ["v0_naive", "v1_smem_tiled", "v2_smem_padded", "v3_vec_swizzle",
                                                      "v4_grouped_order", "v5_tma_tiles",
                                                      "v6_register_blocks", "v7_ticket_tiles", "v8_lean_tiles"]
    assert [v.name for v in GELU.variants()] == ["v0_naive", "v1_vec16", "v2_fast_erfc", "v3_early_load",
                                                 "v4_oneshot_rows", "v5_short_fit", "v6_lean_small"]
    for name in MINE:
        op = OPS[name]
        assert op.variant(op.best_variant).name == op.best_variant
        for dt in op.dtypes:
            assert op.variant(op.best_variant_for(dt)).name == op.best_variant_for(dt)
        assert [v.number for v in op.variants()] == list(range(len(op.variants())))


@pytest.mark.parametrize("op_name", MINE)
def test_headers_say_what_changed_why_predicted_and_where_measured(op_name):
    op = OPS[op_name]
    for v in op.variants():
        assert v.summary.startswith(v.name + ":"), v.summary
        assert "Predicted:" in v.header and "Measured: BENCHMARKS.md" in v.header, v.name
        if v.number:
            assert f"What changed from v{v.number - 1}" in v.header or f"v{v.number - 1} with" in v.summary, v.name
        assert "Why" in v.header, v.name
        # gelu_bias v3, v5 and v6 and transpose v6 and v8 run 128-thread blocks (the graph-mode small shapes);
        # the rest 256.
        small = v.id in ("gelu_bias/v3_early_load", "gelu_bias/v5_short_fit", "gelu_bias/v6_lean_small",
                         "transpose/v6_register_blocks", "transpose/v8_lean_tiles")
        assert v.meta_int("block") == (128 if small else 256), v.name


@pytest.mark.parametrize("op_name", MINE)
def test_wrong_kernels_name_a_known_reason(op_name):
    wrong = OPS[op_name].wrong_variants()
    assert 1 <= len(wrong) <= 2
    for w in wrong:
        assert w.meta.get("expect") in REASONS, f"{w.name}: @expect {w.meta.get('expect')!r}"
        assert "BUG (deliberate)" in w.path.read_text(), f"{w.name}: say where the bug is"


def test_sum_v2_declares_determinism_and_a_second_pass():
    v = SUM.variant("v2")
    assert v.meta["deterministic"].startswith("yes")
    assert v.meta["finish"] == "sum_finish" and "atomic" in v.meta["deterministic"]
    assert "sum_finish" in parse_signatures(v.path.read_text(), SUM.defines(v))


# ---- cases and work models -----------------------------------------------------------------

def test_sum_cases_cover_the_edges():
    cases = SUM.test_cases()
    for dt in SUM.dtypes:
        sizes = {c.numel for c in cases if c.dtype == dt and not c.offset}
        assert {0, 1, 255, 256, 257, PRIME, (1 << 20) + 3} <= sizes
        assert {1, 2, 3} <= {c.offset for c in cases if c.dtype == dt and c.offset}
    assert len({c.label for c in cases}) == len(cases)
    bench = {(c.numel, c.dtype) for c in SUM.bench_cases()}
    assert {(1 << 28, "float32"), (1 << 28, "bfloat16")} <= bench


def test_transpose_cases_cover_the_edges():
    cases = TRANSPOSE.test_cases()
    shapes = {c.shape for c in cases if c.layout == "contiguous" and not c.offset}
    assert {(1, 1), (31, 33), (32, 32), (33, 31), (127, 129), (1000, 1000)} <= shapes
    assert any(r == 1 and c > 1 for r, c in shapes) and any(c == 1 and r > 1 for r, c in shapes)
    assert any(all(n > 1000 and all(n % p for p in range(2, int(n ** 0.5) + 1)) for n in s) for s in shapes), \
        "a prime x prime shape"
    assert any(c.offset for c in cases) and any(c.layout == "column_slice" for c in cases)
    assert len({c.label for c in cases}) == len(cases)
    assert Case((16384, 16384), "float32") in TRANSPOSE.bench_cases()


def test_gelu_cases_cover_the_edges():
    cases = GELU.test_cases()
    assert {"bfloat16", "float32"} == {c.dtype for c in cases}
    shapes = {c.shape for c in cases}
    assert (256, 1024) in shapes and (1, 1) in shapes
    assert any(n % 8 for _, n in shapes), "widths that are not whole 16-byte vectors"
    assert any(c.offset for c in cases) and any(c.layout == "mixed_alignment" for c in cases)
    bench = GELU.bench_cases()
    assert Case((32768, 8192), "bfloat16") in bench
    small = Case((256, 1024), "bfloat16")
    assert small in bench and 2 * small.numel * 2 <= 1 << 20  # x and y: 512 KiB each (+2 KiB of bias)


def test_work_models_count_each_byte_once():
    assert SUM.work(Case((1 << 28,), "float32")).bytes == (1 << 30) + 4
    assert SUM.work(Case((1 << 28,), "bfloat16")).bytes == (1 << 29) + 4
    assert SUM.work(Case((0,), "float32")).flops == 0
    assert TRANSPOSE.work(Case((16384, 16384), "float32")).bytes == 2 << 30
    assert TRANSPOSE.work(Case((3, 5), "bfloat16")).bytes == 2 * 15 * 2
    w = GELU.work(Case((32768, 8192), "bfloat16"))
    assert w.bytes == (2 * 32768 * 8192 + 8192) * 2 and w.flops == 5 * 32768 * 8192


# ---- references against torch on CPU tensors ------------------------------------------------

def test_sum_inputs_are_scaled_so_the_sum_is_standard_normal():
    for n in (4097, PRIME):  # the sample std is within ~1% of sigma at these sizes
        for dist in SUM.distributions:
            x = SUM.make_inputs(Case((n,), "float32"), 0, "cpu", dist)["x"]
            assert abs(float(x.double().std()) * math.sqrt(n) - 1.0) < 0.05, (n, dist)
    x = SUM.make_inputs(Case((0,), "float32"), 0, "cpu")["x"]
    assert x.numel() == 0 and float(SUM.reference(Case((0,), "float32"), {"x": x})["out"]) == 0.0


@pytest.mark.parametrize("case", [Case((257,), "float32"), Case((4097,), "bfloat16", offset=3), Case((1,), "float32")],
                         ids=lambda c: c.label)
def test_sum_reference_is_exact(case):
    inputs = SUM.make_inputs(case, 1, "cpu")
    x = inputs["x"]
    assert x.data_ptr() % 16 == (case.offset * x.element_size()) % 16
    ref = SUM.reference(case, inputs)["out"]
    assert ref.dtype == torch.float64 and ref.shape == ()
    assert float(ref) == pytest.approx(math.fsum(x.double().tolist()), abs=1e-15)
    out = SUM.make_outputs(case, inputs)["out"]
    assert out.dtype == torch.float32 and out.shape == ()


def test_transpose_reference_and_layouts():
    case = Case((127, 129), "bfloat16", layout="column_slice", params=(("col_start", 1),))
    m = TRANSPOSE.make_inputs(case, 0, "cpu")["m"]
    assert m.shape == (127, 129) and m.stride() == (130, 1) and not m.is_contiguous()
    out = TRANSPOSE.make_outputs(case, {"m": m})["out"]
    assert out.shape == (129, 127) and out.is_contiguous()
    assert torch.equal(TRANSPOSE.reference(case, {"m": m})["out"], m.double().t())
    case = Case((1000, 1000), "float32", offset=3)
    inputs = TRANSPOSE.make_inputs(case, 0, "cpu")
    assert inputs["m"].data_ptr() % 16 == 12
    assert TRANSPOSE.make_outputs(case, inputs)["out"].data_ptr() % 16 == 12  # co-aligned
    mixed = Case((1000, 1000), "float32", offset=1, layout="mixed_alignment")
    assert TRANSPOSE.make_outputs(mixed, TRANSPOSE.make_inputs(mixed, 0, "cpu"))["out"].data_ptr() % 16 == 0


def test_transpose_row_span_handles_slices_and_refuses_column_major():
    from kernelab.ops.transpose.op import row_major_span

    a = torch.arange(6 * 10, dtype=torch.float32).view(6, 10)
    flat, ld = row_major_span(a[:, 3:])
    assert ld == 10 and flat.numel() == 5 * 10 + 7 and flat.data_ptr() == a[:, 3:].data_ptr()
    assert torch.equal(flat.as_strided((6, 7), (ld, 1)), a[:, 3:])
    flat, ld = row_major_span(a)
    assert ld == 10 and flat.is_contiguous()
    with pytest.raises(ValueError, match="unit stride"):
        row_major_span(a.t())


def _gelu_exact(v: float) -> float:
    return 0.5 * v * math.erfc(-v / math.sqrt(2.0))


def test_gelu_reference_is_the_erf_gelu():
    case = Case((3, 8), "float32")
    inputs = GELU.make_inputs(case, 0, "cpu")
    ref = GELU.reference(case, inputs)["y"]
    v = (inputs["x"].double() + inputs["bias"].double()).flatten().tolist()
    assert ref.flatten().tolist() == pytest.approx([_gelu_exact(t) for t in v], rel=1e-12, abs=1e-300)
    tanh = F.gelu(inputs["x"].double() + inputs["bias"].double(), approximate="tanh")
    assert (tanh - ref).abs().max() > 1e-5, "the reference must be the erf form, not the tanh approximation"
    assert inputs["bias"].shape == (8,)


# ---- tolerances through the real checker, on CPU -----------------------------------------------

def _peer_run(fn):
    def run(inputs, outputs):
        for k, v in fn(inputs).items():
            outputs[k].copy_(v)
    return run


@pytest.mark.parametrize("op_name,case", [
    ("sum", Case((0,), "float32")), ("sum", Case((257,), "bfloat16", offset=3)), ("sum", Case((PRIME,), "float32")),
    ("transpose", Case((31, 33), "bfloat16")),
    ("transpose", Case((127, 129), "float32", layout="column_slice", params=(("col_start", 1),))),
    ("gelu_bias", Case((256, 1024), "bfloat16")), ("gelu_bias", Case((257, 1032), "float32", offset=2)),
], ids=lambda x: x if isinstance(x, str) else x.label)
def test_torch_eager_passes_the_checker_with_the_op_tolerance(op_name, case):
    """The tolerances admit what torch computes (for gelu bf16: x + bias rounded to bf16 first)."""
    op = OPS[op_name]
    # torch's CPU gelu returns NaN for +inf (fp32 and bf16; float64 gives inf, as the reference
    # does), so 'special' is left out for gelu on CPU: a quirk of torch's CPU kernel, not of the op.
    dists = [d for d in op.distributions if not (op_name == "gelu_bias" and d == "special")]
    r = check_callable(_peer_run(op.peers(case)["torch"]), op, case, device="cpu", seeds=(0,), dists=dists,
                       name="torch")
    assert r.ok, r.detail


def test_checker_rejects_python_versions_of_the_wrong_sums():
    def dropped_last(inputs, outputs):  # w1: an element lost at the tail
        x = inputs["x"]
        outputs["out"].copy_(x[:-1].double().sum() if x.numel() else 0.0)

    def bf16_result(inputs, outputs):  # w2: the right sum, returned through bf16
        outputs["out"].copy_(inputs["x"].double().sum().to(torch.bfloat16))

    r = check_callable(dropped_last, SUM, Case((257,), "float32"), device="cpu", seeds=(0,))
    assert not r.ok and r.reason == "mismatch", r.detail
    # One element of 2^20 (~1e-3 of the sum) is still caught, but the checker files an error that
    # small under "precision" (it is within tf32's 1e-3): w1's @expect names its first failing
    # case in test_cases() order (n = 7), where three lost elements are a plain mismatch.
    r = check_callable(dropped_last, SUM, Case(((1 << 20) + 3,), "float32"), device="cpu", seeds=(0,))
    assert not r.ok and r.reason in ("mismatch", "precision"), r.detail
    r = check_callable(bf16_result, SUM, Case((PRIME,), "float32"), device="cpu", seeds=(0,))
    assert not r.ok and r.reason == "precision", r.detail


def test_sum_tolerance_sits_between_rounding_and_one_element():
    rtol, atol = SUM.tolerances["float32"]
    u = 2.0 ** -24  # fp32 unit roundoff
    rounding = u * math.sqrt(62 + 22)  # v2 at n = 2^28: sequential adds per accumulator + tree depth
    one_element = 1 / math.sqrt(1 << 28)  # |x_i| ~ sigma = 1/sqrt(n)
    assert 10 * rounding < atol < one_element / 5


def test_checker_rejects_python_versions_of_the_wrong_transposes_and_gelus():
    def copy(inputs, outputs):
        m = inputs["m"]
        outputs["out"].view(-1).copy_(m.reshape(-1))

    r = check_callable(copy, TRANSPOSE, Case((31, 33), "float32"), device="cpu", seeds=(0,))
    assert not r.ok and r.reason == "mismatch", r.detail

    def edges_skipped(inputs, outputs):
        rows, cols = inputs["m"].shape
        r32, c32 = rows // 32 * 32, cols // 32 * 32
        outputs["out"][:c32, :r32].copy_(inputs["m"][:r32, :c32].t())

    r = check_callable(edges_skipped, TRANSPOSE, Case((65, 63), "bfloat16"), device="cpu", seeds=(0,))
    assert not r.ok and r.reason == "unwritten", r.detail

    def no_bias(inputs, outputs):
        outputs["y"].copy_(F.gelu(inputs["x"].float()))

    r = check_callable(no_bias, GELU, Case((255, 1000), "bfloat16"), device="cpu", seeds=(0,))
    assert not r.ok and r.reason == "mismatch", r.detail

    def tanh_gelu(inputs, outputs):  # fp32 catches the tanh approximation (bf16 rounding would hide it)
        outputs["y"].copy_(F.gelu(inputs["x"] + inputs["bias"], approximate="tanh"))

    r = check_callable(tanh_gelu, GELU, Case((64, 512), "float32"), device="cpu", seeds=(0,))
    assert not r.ok, r.detail


# ---- launch geometry against the kernels' signatures ----------------------------------------

class FakeKernel:
    """Stands in for a loaded kernel: checks each call against the C signature, records it."""

    def __init__(self, module: "FakeModule", name: str):
        self.module, self.name = module, name
        self.params = module.signatures[name]

    def __call__(self, *args, grid, block, shared_mem=0, pdl=False):
        assert len(args) == len(self.params), f"{self.name}: {len(args)} args for {len(self.params)} params"
        self.module.pdl.append((self.name, pdl))
        for p, a in zip(self.params, args):
            if p.kind == "pointer":
                assert isinstance(a, torch.Tensor), f"{self.name}: {p.describe()} got {type(a)}"
                if p.torch_dtype:
                    assert str(a.dtype) == f"torch.{p.torch_dtype}", f"{self.name}: {p.describe()} got {a.dtype}"
                assert a.is_contiguous() or a.numel() == 0, f"{self.name}: {p.describe()} not contiguous"
            else:
                assert isinstance(a, int) and not isinstance(a, bool), f"{self.name}: {p.describe()} got {a!r}"
                bits = 32 if p.base in ("unsigned int", "int") else 64
                assert 0 <= a < 2 ** bits, f"{self.name}: {p.describe()} = {a} does not fit"
        g = (grid,) if isinstance(grid, int) else tuple(grid)
        b = (block,) if isinstance(block, int) else tuple(block)
        assert all(x >= 1 for x in g) and len(g) <= 3 and (len(g) < 2 or g[1] <= 65535)
        assert math.prod(b) <= 1024 and all(x >= 1 for x in b)
        self.module.calls.append((self.name, args, g, b))

    def max_active_blocks_per_sm(self, block, dynamic_smem=0):
        return 8


class FakeModule:
    def __init__(self, op, variant, arch="sm_90"):
        self.signatures = parse_signatures(variant.path.read_text(), op.defines(variant), [variant.path.parent])
        self.calls: list = []
        self.pdl: list = []  # (kernel, pdl flag) per call
        self.compiled = types.SimpleNamespace(arch=arch)

    def kernel(self, name):
        return FakeKernel(self, name)


def _launch(op, variant, case, monkeypatch, resident=132 * 8, arch="sm_90", module_out=None):
    import importlib

    mod = importlib.import_module(f"kernelab.ops.{op.name}.op")
    if hasattr(mod, "resident_blocks"):
        monkeypatch.setattr(mod, "resident_blocks", lambda kernel, block: resident)
    inputs = op.make_inputs(case, 0, "cpu")
    outputs = op.make_outputs(case, inputs)
    module = FakeModule(op, variant, arch)
    op.launch(module.kernel(op.kernel_name(case.dtype)), variant, case, inputs, outputs)
    if module_out is not None:
        module_out.append(module)
    return module.calls, inputs, outputs


@pytest.mark.parametrize("variant", ["v0", "v1"])
def test_sum_recursive_passes_end_in_the_output(variant, monkeypatch):
    v = SUM.variant(variant)
    per_block = 256 * v.meta_int("elems_per_thread")
    for n in (0, 1, 257, (1 << 20) + 3):
        calls, inputs, outputs = _launch(SUM, v, Case((n,), "bfloat16"), monkeypatch)
        count = n
        for k, (name, args, grid, block) in enumerate(calls):
            assert name == ("sum_bf16" if k == 0 else "sum_f32")
            assert args[2] == count and grid == (max(1, math.ceil(count / per_block)),) and block == (256,)
            count = grid[0]
        assert count == 1 and calls[-1][1][1].data_ptr() == outputs["out"].data_ptr()
        for (_, a, g, _), (_, b, _, _) in zip(calls, calls[1:]):
            assert b[0] is a[1] and a[1].numel() == g[0]  # each pass reads the previous pass's partials


def test_sum_v2_two_passes_with_a_workspace(monkeypatch):
    v = SUM.variant("v2")
    calls, inputs, outputs = _launch(SUM, v, Case((1 << 24,), "float32"), monkeypatch, resident=1056)
    (k1, a1, g1, b1), (k2, a2, g2, b2) = calls
    assert (k1, g1, b1) == ("sum_f32", (1056,), (256,)) and a1[1].numel() == 1056
    assert (k2, g2, b2) == ("sum_finish", (1,), (1024,))
    assert a2[0] is a1[1] and a2[2] == 1056 and a2[1].data_ptr() == outputs["out"].data_ptr()
    assert a1[1].data_ptr() != outputs["out"].data_ptr()
    # Small n: one block, its partial is the answer, one launch.
    calls, _, outputs = _launch(SUM, v, Case((257,), "float32"), monkeypatch)
    assert len(calls) == 1 and calls[0][2] == (1,) and calls[0][1][1].data_ptr() == outputs["out"].data_ptr()
    calls, _, _ = _launch(SUM, v, Case((0,), "bfloat16"), monkeypatch)
    assert len(calls) == 1 and calls[0][1][2] == 0  # n = 0 still launches, and writes 0


def test_sum_v4_is_one_launch_with_a_reused_ticket(monkeypatch):
    """v4: one kernel per call whatever n is (graph replay pays one node), its partials in a
    workspace sized by the one-shot grid, and the same zeroed ticket counter on every call."""
    from kernelab.ops.sum import op as sum_op

    v = SUM.variant("v4")
    assert v.meta["finish"] == "ticket" and v.meta["deterministic"].startswith("yes")
    per_block = 256 * v.meta_int("vectors_per_thread") * 8  # bf16: 8 elements per 16-byte vector
    tickets = set()
    for n in (0, 257, 1 << 18, (1 << 20) + 3):
        calls, inputs, outputs = _launch(SUM, v, Case((n,), "bfloat16"), monkeypatch)
        ((name, args, grid, block),) = calls
        x, partials, ticket, out, count = args
        assert name == "sum_bf16" and count == n and block == (256,)
        assert grid == (max(1, math.ceil(n / per_block)),)
        assert out.data_ptr() == outputs["out"].data_ptr()
        if grid[0] > 1:
            assert partials.numel() == grid[0] and partials.data_ptr() != out.data_ptr()
        assert ticket.dtype == torch.int32 and ticket.numel() == 1 and int(ticket) == 0
        tickets.add(ticket.data_ptr())
    assert len(tickets) == 1  # kept per device and stream, not allocated per call
    t = sum_op._ticket(torch.device("cpu"))
    assert t.data_ptr() == sum_op._ticket(torch.device("cpu")).data_ptr() and t.numel() == 1


def test_sum_v5_launches_its_finish_as_a_programmatic_dependent_launch_on_sm90(monkeypatch):
    """v5: v3's two launches (same grid, same workspace), the finish with pdl=True where the build
    has griddepcontrol (sm_90+) and a plain launch elsewhere; the pass is never programmatic (it
    must wait for whatever wrote x)."""
    v3, v5 = SUM.variant("v3"), SUM.variant("v5")
    assert v5.meta["finish_pdl"] == "yes" and v5.meta["finish"] == v3.meta["finish"] == "sum_finish"
    assert SUM.best_variant == "v5_pdl_finish"
    for arch, want in (("sm_90", True), ("sm_100", True), ("sm_120", True), ("sm_80", False)):
        mods: list = []
        calls, _, outputs = _launch(SUM, v5, Case(((1 << 20) + 3,), "bfloat16"), monkeypatch, arch=arch, module_out=mods)
        calls3, _, _ = _launch(SUM, v3, Case(((1 << 20) + 3,), "bfloat16"), monkeypatch, arch=arch)
        assert [(k, g, b) for k, _, g, b in calls] == [(k, g, b) for k, _, g, b in calls3]
        assert mods[0].pdl == [("sum_bf16", False), ("sum_finish", want)], arch
        assert calls[1][1][1].data_ptr() == outputs["out"].data_ptr() and calls[1][1][0] is calls[0][1][1]
    mods = []
    _launch(SUM, v3, Case((1 << 20,), "float32"), monkeypatch, module_out=mods)
    assert mods[0].pdl == [("sum_f32", False), ("sum_finish", False)]  # v3 stays a plain launch
    mods = []
    calls, _, _ = _launch(SUM, v5, Case((257,), "float32"), monkeypatch, module_out=mods)
    assert mods[0].pdl == [("sum_f32", False)]  # one block: no finish, nothing to overlap
    # the arch string is parsed once, not on every launch
    from kernelab.ops.sum import op as sum_op

    misses = sum_op.has_griddepcontrol.cache_info().misses
    for _ in range(3):
        _launch(SUM, v5, Case(((1 << 20) + 3,), "bfloat16"), monkeypatch, arch="sm_90")
    assert sum_op.has_griddepcontrol.cache_info().misses == misses


@pytest.mark.parametrize("case", [c for c in TRANSPOSE.test_cases() if c.dtype == "bfloat16"], ids=lambda c: c.label)
def test_transpose_grids_cover_the_matrix(case, monkeypatch):
    for v in TRANSPOSE.variants():
        if "tma" in v.meta:  # takes tensor maps, launched by its .py (tests/cpu/test_transpose_tma.py)
            continue
        if "tiles" in v.meta:  # v7: a persistent grid and a counter argument (tests/cpu/test_transpose_v7.py)
            continue
        calls, inputs, outputs = _launch(TRANSPOSE, v, case, monkeypatch)
        ((name, args, grid, block),) = calls
        src, out, rows, cols, ld = args
        assert (rows, cols) == case.shape and block == (v.meta_int("block"),)
        assert ld == inputs["m"].stride(0) if rows > 1 else ld == cols
        assert src.data_ptr() == inputs["m"].data_ptr() and out.data_ptr() == outputs["out"].data_ptr()
        assert src.numel() == (rows - 1) * ld + cols
        tile_rows, tile_cols = TRANSPOSE.tile(v, case.dtype)  # v4: bf16 tiles of their own
        assert cols <= grid[0] * tile_cols < cols + tile_cols
        assert grid[1] == min(math.ceil(rows / tile_rows), 65535)


@pytest.mark.parametrize("case", [c for c in GELU.test_cases() if c.dtype == "float32"] +
                         [Case((2048, 8192), "bfloat16"), Case((256, 1024), "bfloat16"), Case((70000, 8), "bfloat16")],
                         ids=lambda c: c.label)
def test_gelu_grids_cover_the_tensor(case, monkeypatch):
    for v in GELU.variants():
        calls, inputs, outputs = _launch(GELU, v, case, monkeypatch)
        ((name, args, grid, block),) = calls
        rows, cols = case.shape
        assert args[3:] == (rows, cols)
        if v.meta["layout"] == "rows":
            assert block == (256,) and grid[0] * 256 >= cols and grid[1] == min(rows, 65535)
        else:
            vec = 16 // inputs["x"].element_size()
            chunks = math.ceil(cols / vec)
            bx, by = block
            nthreads = v.meta_int("block")
            assert bx * by == nthreads and bx & (bx - 1) == 0 and (bx >= chunks or bx == nthreads)
            assert grid[0] * bx >= chunks and (grid[0] - 1) * bx < chunks
            if v.meta["layout"] == "oneshot":  # one band of R x by rows per grid row, taken once
                band = by * v.meta_int("rows_per_thread")
                assert grid[1] == min(math.ceil(rows / band), 65535)
            elif v.meta["layout"] == "groups" and grid_mode(v, case.dtype) == "oneshot":
                # At least one group of R rows per thread; a tensor smaller than a wave (132 x 8
                # blocks here) spreads to a row per thread.
                band = by * v.meta_int("rows_per_thread")
                want = max(math.ceil(rows / band), 132 * 8 // grid[0])
                assert grid[1] == min(math.ceil(rows / by), want, 65535)
            else:  # persistent: about one wave of resident blocks, at most a row per thread
                assert 1 <= grid[1] <= 65535 and grid[0] * grid[1] <= max(132 * 8, grid[0])
                assert grid[1] == min(math.ceil(rows / by), max(1, 132 * 8 // grid[0]), 65535)


# ---- the v2 GELU formula, emulated in float32 -------------------------------------------------

def _fast_erfc_coefficients():
    src = (GELU.folder / "gelu_erfc.cuh").read_text()  # v2's (and v3's) element math
    body = src[src.index("__device__ __forceinline__ float gelu(float v)"):]
    first = float(re.search(r"float p = (-?[\d.]+)f \* LOG2E;", body)[1])
    rest = [float(c) for c in re.findall(r"p = fmaf\(p, t, (-?[\d.]+)f \* LOG2E\);", body)]
    const = float(re.search(r"fmaf\(t, p, (-?[\d.]+)f \* LOG2E - 1\.0f\)", body)[1])
    return [first] + rest, const


def _fast_gelu_f32(v: np.ndarray) -> np.ndarray:
    """gelu() of v2_fast_erfc.cu step by step in float32 (exact rcp/exp2 in place of MUFU's ~1-2 ulp)."""
    f = np.float32
    coeffs, const = _fast_erfc_coefficients()
    log2e = 1.4426950408889634
    with np.errstate(over="ignore", invalid="ignore"):
        t = (f(1) / (np.abs(v) * f(0.35355339059327376) + f(1))).astype(f)
        p = np.full_like(v, f(coeffs[0] * log2e))
        for c in coeffs[1:]:
            p = (p * t + f(c * log2e)).astype(f)
        a = (t * p + f(const * log2e - 1.0)).astype(f)
        a = ((v * v).astype(f) * f(-0.5 * log2e) + a).astype(f)
        h = (t * np.exp2(a)).astype(f)
        return (v * np.where(v < 0, h, f(1) - h)).astype(f)


def test_v2_gelu_formula_matches_float64_erfc():
    coeffs, const = _fast_erfc_coefficients()
    assert len(coeffs) == 9 and const == -1.26551223, "the Numerical Recipes erfcc fit, 9 terms"
    v = np.linspace(-13, 13, 200_001).astype(np.float32)
    exact = np.array([_gelu_exact(float(t)) for t in v])
    got = _fast_gelu_f32(v).astype(np.float64)
    nz = exact != 0
    rel = np.abs(got - exact)[nz] / np.abs(exact)[nz]
    assert rel.max() < 2e-5  # the far tail: v's own rounding is amplified by ~v^2 there
    core = nz & (v > -5)
    assert (np.abs(got - exact)[core] / np.abs(exact)[core]).max() < 3e-6
    # torch's fp32 formula loses the tail to 1 + erf's cancellation; this does not.
    tail = (v > -5) & (v < -3)
    torch_f32 = (torch.from_numpy(v) * 0.5 * (1 + torch.erf(torch.from_numpy(v) * 0.7071067811865476))).double().numpy()
    assert (np.abs(torch_f32 - exact)[tail] / np.abs(exact)[tail]).max() > 10 * rel.max()
    special = _fast_gelu_f32(np.array([np.inf, -np.inf, np.nan, 0.0, 1e30, -1e30], np.float32))
    assert special[0] == np.inf and np.isnan(special[1]) and np.isnan(special[2])
    assert special[3] == 0 and special[4] == np.float32(1e30) and special[5] == 0


# ---- v5's short fit (bf16 outputs), emulated in float32 -----------------------------------------

def _short_fit():
    """(K, coefficients c0..c5) of gelu_short() in gelu_erfc.cuh: t = 1 / (|v| + K), Q = sum c_k t^k."""
    src = (GELU.folder / "gelu_erfc.cuh").read_text()
    body = src[src.index("__device__ __forceinline__ float gelu_short(float v)"):]
    body = body[:body.index("\n}\n")]
    k = float(re.search(r"fast_rcp\(fabsf\(v\) \+ ([\d.]+)f\)", body)[1])
    top = float(re.search(r"float q = (-?[\d.]+)f;", body)[1])
    rest = [float(c) for c in re.findall(r"q = fmaf\(q, t, (-?[\d.]+)f\);", body)]
    assert "fmaf(v * v, -0.5f * LOG2E, q)" in body and "fminf(v, 3.402823466e38f)" in body
    return k, ([top] + rest)[::-1]


def _short_gelu_f32(v: np.ndarray, rcp_err: float = 0.0, ex2_err: float = 0.0) -> np.ndarray:
    """gelu_short() step by step: float32 roundings, FFMA as one rounding (float64 product and sum,
    then float32), MUFU rcp/ex2 exact times (1 + err) with .ftz (results below 2^-126 are 0)."""
    f, d = np.float32, np.float64
    k, c = _short_fit()
    big = d(np.finfo(f).max)
    v = v.astype(f).astype(d)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        t = (1.0 / (np.abs(v) + k).astype(f).astype(d)) * (1.0 + rcp_err)
        t = np.where(np.abs(t) < 2.0 ** -126, 0.0, t).astype(f).astype(d)
        q = np.full_like(v, d(f(c[-1])))
        for ck in c[-2::-1]:
            q = (q * t + d(f(ck))).astype(f).astype(d)
        v2 = (v * v).astype(f).astype(d)
        a = (v2 * d(f(-0.5 * 1.4426950408889634)) + q).astype(f).astype(d)
        e = np.exp2(a) * (1.0 + ex2_err)
        e = np.where(e < 2.0 ** -126, 0.0, e).astype(f).astype(d)
        h = (t * e).astype(f).astype(d)
        relu = np.where(np.isnan(v), 0.0, np.maximum(v, 0.0))  # fmaxf/fminf drop a NaN operand
        vc = np.where(np.isnan(v), big, np.minimum(v, big))
        return (-np.abs(vc) * h + relu).astype(f)


def test_v5_fit_alone_is_within_its_claim():
    """The polynomial with its fp32 coefficients, evaluated in float64: 8.8e-6 in log2 units (6.1e-6
    relative) over |v| <= 13.3, the range where a bf16/fp32 GELU is not 0."""
    k, c = _short_fit()
    assert len(c) == 6 and k == 2.875, "degree 5, t = 1 / (|v| + 2.875)"
    v = np.linspace(0, 13.3, 100_001)
    t = 1 / (v + k)
    log2_exact = np.log2(np.array([0.5 * math.erfc(x / math.sqrt(2)) for x in v]) / t) + v * v / 2 * math.log2(math.e)
    err = np.abs(np.polyval(np.array(c)[::-1], t) - log2_exact).max()
    assert err < 9e-6, err


def test_v5_short_gelu_matches_float64_erfc():
    """The bound gelu_erfc.cuh and v5's header claim: relative error <= 1.2e-5 for v in [-13, 14]
    (8e-6 above v = -8), with the MUFU errors at their extremes, against math.erfc; 300x below
    bf16's rounding (2^-8)."""
    v = np.linspace(-13, 14, 700_001).astype(np.float32)
    exact = np.array([_gelu_exact(float(t)) for t in v])
    worst = np.zeros(len(v))
    for rcp_err in (0.0, 2.0 ** -23, -(2.0 ** -23)):  # rcp.approx: 1 ulp
        for ex2_err in (0.0, 2.0 ** -22, -(2.0 ** -22)):  # ex2.approx: 2 ulp
            got = _short_gelu_f32(v, rcp_err, ex2_err).astype(np.float64)
            worst = np.maximum(worst, np.abs(got - exact) / np.abs(np.where(exact == 0, 1, exact)))
    assert worst.max() < 1.25e-5, worst.max()
    assert worst[v > -8].max() < 8.5e-6, worst[v > -8].max()
    assert worst.max() < 2.0 ** -8 / 300
    # Below v ~ -13.1 ex2.approx.ftz flushes (|gelu| < 3e-38); nothing is flushed above v = -13.
    assert (_short_gelu_f32(v) != 0)[v != 0].all()
    tail = np.linspace(-40, -13.2, 1001).astype(np.float32)
    assert (_short_gelu_f32(tail) == 0).all()


def test_v5_short_gelu_special_values():
    v = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e30, -1e30, 3e38, -3e38, 1e-30, -1e-30, 1e-40],
                 np.float32)
    y = _short_gelu_f32(v)
    assert y[0] == np.inf, "+inf: inf - FLT_MAX x 0, not inf - inf x 0"
    assert np.isnan(y[1]) and np.isnan(y[2]), "-inf gives NaN as torch does; NaN stays NaN"
    assert y[3] == 0 and y[4] == 0 and y[6] == 0 and y[8] == 0
    assert y[5] == np.float32(1e30) and y[7] == np.float32(3e38)
    assert y[9] == pytest.approx(5e-31, rel=1e-5) and y[10] == pytest.approx(-5e-31, rel=1e-5)
    assert y[11] == pytest.approx(5e-41, rel=0.02)  # a denormal v: v / 2, not flushed


def _v5_bf16_run(inputs, outputs):
    """v5's bf16 kernel in Python: x + bias in fp32, gelu_short, one rounding to bf16."""
    v = (inputs["x"].float() + inputs["bias"].float()).numpy()
    outputs["y"].copy_(torch.from_numpy(_short_gelu_f32(v)).to(torch.bfloat16))


def test_v5_short_gelu_passes_the_checker_with_margin():
    """Through the real checker on CPU, every distribution (NaN, +-inf, -0, denormals included):
    the op's bf16 tolerance (1.6e-2, 2e-4) accepts v5's formula, and so does a third of it (the
    formula's 1.2e-5 adds almost nothing to the half-ulp rounding, 3.9e-3 relative at most)."""
    rtol, atol = GELU.tolerances["bfloat16"]
    case = Case((257, 1032), "bfloat16")
    for tol in (None, {"bfloat16": (rtol / 3, atol / 3)}):
        r = check_callable(_v5_bf16_run, GELU, case, device="cpu", seeds=(0,), name="v5 model", tolerances=tol,
                           repeat=False)
        assert r.ok, r.detail


def test_v5_grid_mode_per_dtype():
    v = GELU.variant("v5")
    assert (grid_mode(v, "bfloat16"), grid_mode(v, "float32")) == ("oneshot", "oneshot")  # the sweep's winner
    import dataclasses

    per_dtype = dataclasses.replace(v, meta={**v.meta, "grid": "bfloat16=persistent float32=oneshot"})
    assert (grid_mode(per_dtype, "bfloat16"), grid_mode(per_dtype, "float32")) == ("persistent", "oneshot")
    tight = dataclasses.replace(v, meta={**v.meta, "grid": "float32=tight bfloat16=oneshot"})
    assert (grid_mode(tight, "bfloat16"), grid_mode(tight, "float32")) == ("oneshot", "tight")
    with pytest.raises(ValueError, match="persistent, oneshot or tight"):
        grid_mode(dataclasses.replace(v, meta={**v.meta, "grid": "bfloat16=waves"}), "bfloat16")


# ---- compiled artifacts: every arch, no spills, the SASS each variant claims --------------------

@pytest.mark.parametrize("arch", CI_ARCHS)
def test_every_kernel_compiles_without_spills(arch):
    for op, v in _all_variants():
        m = compile_variant(op, v, arch=arch)
        for dt in v.dtypes(op):
            r = m.resources.get(op.kernel_name(dt))
            assert r is not None, f"{v.id} [{arch}] lacks {op.kernel_name(dt)}"
        for k, r in m.resources.items():
            assert r.spills == 0 and r.stack_frame == 0, f"{v.id} {k} [{arch}]: {r}"
            # transpose v4's bf16 kernel holds 8 vectors a thread (128 x 128 tiles) and sizes its
            # register budget to the blocks that fit: 3 per SM (85 registers) in sm_80 builds, which
            # budget 1536 threads, 4 (64) on sm_90 and later (2048). v7 runs v4's tile code.
            v4_tiles = v.id in ("transpose/v4_grouped_order", "transpose/v7_ticket_tiles")
            limit = 85 if v4_tiles and k == "transpose_bf16" else 64
            assert 0 < r.registers <= limit, f"{v.id} {k} [{arch}]: {r.registers} registers"


def test_transpose_tiles_are_what_the_headers_say():
    sizes = {}
    for v in TRANSPOSE.variants():
        r = compile_variant(TRANSPOSE, v, arch="sm_90").resources
        sizes[v.name] = (r["transpose_f32"].shared_static, r["transpose_bf16"].shared_static)
    assert sizes["v0_naive"] == (0, 0)
    assert sizes["v1_smem_tiled"] == (32 * 32 * 4, 32 * 32 * 2)  # no padding
    assert sizes["v2_smem_padded"] == (32 * 33 * 4, 32 * 33 * 2)  # one column
    assert sizes["v3_vec_swizzle"] == (64 * 64 * 4, 64 * 64 * 2)  # swizzled, not padded
    assert sizes["v4_grouped_order"] == (64 * 64 * 4, 128 * 128 * 2)  # v3's fp32 tiles; bf16 128 x 128
    assert sizes["v8_lean_tiles"] == (32 * 33 * 4, 32 * 34 * 2)  # bf16 rows padded by two: 4-byte pair stores


def _mix(op, v, arch):
    from kernelab.analysis import sass_mix

    return sass_mix(compile_variant(op, v, arch=arch).cubin)


needs_cuobjdump = pytest.mark.skipif(toolchain.cuobjdump_path() is None,
                                     reason="no cuobjdump (pip install nvidia-cuda-cuobjdump, or triton)")


@needs_cuobjdump
@pytest.mark.parametrize("arch", CI_ARCHS)
def test_sass_has_the_claimed_16_byte_accesses_and_no_local_memory(arch):
    claims = []
    for op, v in _all_variants():
        mix = _mix(op, v, arch)
        for k, m in mix.items():
            assert m.ldl == 0 and m.stl == 0, f"{v.id} {k} [{arch}]: local memory"
            # Every variant is deterministic: no float atomics. A `@finish ticket` kernel (sum v4)
            # takes exactly one integer ticket per block (ATOMG.E.INC), which picks the block that
            # adds the partials, not their order; a `@grid tickets` pass (sum v6) one integer
            # atomicAdd per chunk (ATOMG.E.ADD), which picks the block that sums a chunk (its finish none).
            ticket_pass = v.meta.get("grid") == "tickets" and k != v.meta.get("finish")
            allowed = 1 if v.meta.get("finish") == "ticket" or ticket_pass else 0
            if "tiles" in v.meta:  # `@tiles tickets` (transpose v7): the tile ticket and the finished-block count
                allowed = 2
            assert m.atomics == allowed, f"{v.id} {k} [{arch}]: {m.atomics} atomics, expected {allowed}"
        if v.wrong:
            continue
        claims16 = v.meta.get("access_bytes", "").split()[:1] == ["16"]
        for dt in v.dtypes(op):
            m = mix[op.kernel_name(dt)]
            if claims16:
                claims.append(v.id)
                assert m.ldg128 > 0, f"{v.id} {dt} [{arch}] claims 16-byte loads; SASS has none: {m.opcodes}"
                if CLAIMS_STORES[op.name]:
                    assert m.stg128 > 0, f"{v.id} {dt} [{arch}] claims 16-byte stores; SASS has none"
            else:
                assert m.ldg128 == 0 and m.stg128 == 0, f"{v.id} {dt} [{arch}]: 16-byte accesses but no claim"
    assert sorted(set(claims)) == ["gelu_bias/v1_vec16", "gelu_bias/v2_fast_erfc", "gelu_bias/v3_early_load",
                                   "gelu_bias/v4_oneshot_rows", "gelu_bias/v5_short_fit", "gelu_bias/v6_lean_small",
                                   "sum/v2_vec_persistent", "sum/v3_oneshot",
                                   "sum/v4_ticket", "sum/v5_pdl_finish", "sum/v6_ticket_chunks", "transpose/v3_vec_swizzle", "transpose/v4_grouped_order",
                                   "transpose/v6_register_blocks", "transpose/v7_ticket_tiles",
                                   "transpose/v8_lean_tiles"]


def _loop_per_vector(variant, kernel, arch="sm_90"):
    """Instructions per 16-byte vector in `kernel`'s steady-state row loop: the shortest loop (a
    backward branch) that stores a 16-byte vector, divided by its STG.E.128 count; and its opcodes."""
    from collections import Counter

    from kernelab.analysis.sass import disassemble

    text = disassemble(compile_variant(GELU, GELU.variant(variant), arch=arch).cubin)
    body = text.split(f"Function : {kernel}")[1].split("Function :")[0]
    ins = [(int(m[1], 16), m[2].strip()) for m in re.finditer(r"/\*([0-9a-f]{4})\*/\s+([^;]*);", body)]
    loops = []
    for addr, text_ in ins:
        if (m := re.search(r"BRA (0x[0-9a-f]+)", text_)) and int(m[1], 16) < addr:
            loop = [re.sub(r"^@!?U?P\w+\s+", "", t).split()[0] for a, t in ins if int(m[1], 16) <= a <= addr]
            if "STG.E.128" in loop:
                loops.append(loop)
    loop = min(loops, key=lambda lp: len(lp) / lp.count("STG.E.128"))
    return len(loop) / loop.count("STG.E.128"), Counter(loop)


@needs_cuobjdump
def test_v5_row_loop_has_the_instruction_count_its_header_predicts():
    """v5's header: bf16 140 instructions per vector (v3 179), 15 of math per element with 2 MUFU
    and no FSETP (the select became FMNMX + FFMA); fp32 84 (v4 108) with gelu()'s select kept."""
    v3, _ = _loop_per_vector("v3_early_load", "gelu_bias_bf16")
    v5, ops = _loop_per_vector("v5_short_fit", "gelu_bias_bf16")
    n = ops["STG.E.128"] * 8  # bf16 elements
    assert v5 <= 142 and v5 <= 0.8 * v3, (v5, v3)
    assert ops["MUFU.RCP"] == ops["MUFU.EX2"] == n and ops["FMNMX"] == 2 * n
    assert ops["FFMA"] == 7 * n and not any(k.startswith("FSETP") for k in ops), ops
    f32, ops32 = _loop_per_vector("v5_short_fit", "gelu_bias_f32")
    assert f32 <= 90 and ops32["FFMA"] == 11 * 4 * ops32["STG.E.128"], (f32, ops32)
    assert any(k.startswith("FSETP") for k in ops32)  # fp32 keeps the 9-term gelu()


@needs_cuobjdump
def test_sass_shapes_of_the_reductions_and_the_transposes():
    mix = {v.name: _mix(SUM, v, "sm_90") for v in SUM.variants()}
    assert mix["v0_smem_tree"]["sum_f32"].bar >= 8  # log2(256) steps, a barrier each
    assert mix["v1_warp_shuffle"]["sum_f32"].bar == 1 and mix["v1_warp_shuffle"]["sum_f32"].shfl >= 10
    assert mix["v1_warp_shuffle"]["sum_f32"].ldg32 >= 8  # 8 loads per thread, issued up front
    assert mix["v2_vec_persistent"]["sum_f32"].ldg128 >= 4  # 4 vectors in flight
    t = {v.name: _mix(TRANSPOSE, v, "sm_90") for v in TRANSPOSE.variants()}
    assert t["v0_naive"]["transpose_f32"].lds == 0
    assert t["v3_vec_swizzle"]["transpose_f32"].opcodes.get("STS.128", 0) >= 4


# ---- the torch operators -----------------------------------------------------------------------

def test_torch_ops_schemas_and_fake_shapes():
    import kernelab.ops.torch_ops  # noqa: F401  (registers every op's kernelab::<op>)
    from torch._subclasses.fake_tensor import FakeTensorMode

    assert str(torch.ops.kernelab.sum.default._schema) == "kernelab::sum(Tensor x) -> Tensor"
    assert str(torch.ops.kernelab.transpose.default._schema) == "kernelab::transpose(Tensor m) -> Tensor"
    assert str(torch.ops.kernelab.gelu_bias.default._schema) == "kernelab::gelu_bias(Tensor x, Tensor bias) -> Tensor"
    # Fake CUDA tensors need a CUDA build of torch; a CPU build (CI may install one) fakes on cpu.
    dev = "cuda" if torch.backends.cuda.is_built() else "cpu"
    with FakeTensorMode():
        x = torch.empty(3, 5, 7, dtype=torch.bfloat16, device=dev)
        s = torch.ops.kernelab.sum(x)
        assert s.shape == () and s.dtype == torch.float32 and s.device.type == dev
        m = torch.empty(6, 9, dtype=torch.float32, device=dev)[:, 2:]
        t = torch.ops.kernelab.transpose(m)
        assert t.shape == (7, 6) and t.is_contiguous() and t.dtype == torch.float32
        y = torch.ops.kernelab.gelu_bias(x.transpose(0, 1), torch.empty(7, dtype=torch.bfloat16, device=dev))
        assert y.shape == (5, 3, 7) and y.is_contiguous() and y.dtype == torch.bfloat16


def test_torch_ops_refuse_bad_inputs_before_touching_a_gpu():
    import kernelab.ops.torch_ops  # noqa: F401

    with pytest.raises(TypeError, match="float32"):
        torch.ops.kernelab.sum(torch.zeros(4, dtype=torch.float16))
    with pytest.raises(ValueError, match="CUDA"):
        torch.ops.kernelab.sum(torch.zeros(4))
    with pytest.raises(ValueError, match="2-D"):
        torch.ops.kernelab.transpose(torch.zeros(2, 3, 4))
    with pytest.raises(ValueError, match="last dimension"):
        torch.ops.kernelab.gelu_bias(torch.zeros(2, 8), torch.zeros(4))
    with pytest.raises(TypeError, match="cast"):
        torch.ops.kernelab.gelu_bias(torch.zeros(2, 8), torch.zeros(8, dtype=torch.bfloat16))


@needs_cuobjdump
def test_sum_v5_sass_has_the_griddepcontrol_hooks_only_on_sm90_up():
    """launch_dependents (SASS PREEXIT) in both passes' kernels and griddepcontrol.wait (ACQBULK) in
    the finish, on sm_90+; none in v3 (the same templates with PDL = false) nor in v5's sm_80 build."""
    from kernelab.analysis.sass import disassemble

    def functions(variant, arch):
        text = disassemble(compile_variant(SUM, SUM.variant(variant), arch=arch).cubin)
        return {m[1]: m[2] for m in re.finditer(r"Function : (\w+)\n(.*?)(?=\n\s*Function :|\Z)", text, re.S)}

    for arch in ("sm_90", "sm_100"):
        f = functions("v5", arch)
        assert "PREEXIT" in f["sum_f32"] and "PREEXIT" in f["sum_bf16"], arch
        assert "ACQBULK" in f["sum_finish"] and "PREEXIT" not in f["sum_finish"], arch
        assert not any(op in body for body in functions("v3", arch).values() for op in ("PREEXIT", "ACQBULK")), arch
    assert not any(op in body for body in functions("v5", "sm_80").values() for op in ("PREEXIT", "ACQBULK"))
