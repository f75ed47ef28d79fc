"""Poisoning, guard bands, input snapshots and the classification of failures, driven on CPU tensors.

The harness takes the launch as a callable and the device as a parameter, so every cheat of
ops/vector_add/wrong/ has a Python twin here that must be rejected for the same reason.
"""

import math
from pathlib import Path

import pytest
import torch

from kernelab.check.tolerances import DEFAULTS

from kernelab.check import check_callable, verify_outputs
from kernelab.check.integrity import (GuardedOutput, InputSnapshot, guarded_like, holds_poison, poison_, poison_bits,
                                      storage_bytes)
from kernelab.ops import discover
from kernelab.ops.base import Case, _load_launcher

OP = discover()["vector_add"]
N = 4099  # not a multiple of 256, odd


@pytest.fixture(autouse=True, scope="module")
def _one_cpu_thread():
    """On a 2-core container every CPU op above torch's 32768-element grain took ~16 ms with 2 intra-op
    threads (thread wake-ups) and ~3 us with one (2026-11-30). The guard buffers are above that grain."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def honest(i, o):
    torch.add(i["a"], i["b"], out=o["c"])


def tail_unwritten(i, o):
    m = o["c"].numel() // 256 * 256
    o["c"][:m] = i["a"][:m] + i["b"][:m]


def first_block(i, o):
    o["c"][:256] = i["a"][:256] + i["b"][:256]


def mutates_input(i, o):
    torch.add(i["a"], i["b"], out=o["c"])
    i["a"].copy_(o["c"])


def stale_read(i, o):
    o["c"].add_(i["a"] + i["b"])


def past_end(i, o):
    c = o["c"]
    torch.add(i["a"], i["b"], out=c)
    c.as_strided((c.numel() + 1,), (1,))[-1] = 0.0  # c[n]


def before_start(i, o):
    c = o["c"]
    torch.add(i["a"], i["b"], out=c)
    c.as_strided((1,), (1,), c.storage_offset() - 3)[0] = 0.0  # c[-3]


def bf16_math(i, o):
    o["c"].copy_((i["a"].bfloat16() + i["b"].bfloat16()).float())


def fp16_math(i, o):
    o["c"].copy_((i["a"].half() + i["b"].half()).float())


def zeros(i, o):
    o["c"].zero_()


def one_wrong(i, o):
    torch.add(i["a"], i["b"], out=o["c"])
    o["c"][17] += 1.0


def makes_nan(i, o):
    torch.add(i["a"], i["b"], out=o["c"])
    o["c"][17] = float("nan")


def sticky(i, o):
    raise RuntimeError("CUDA error: an illegal memory access was encountered")


def refuses(i, o):
    raise ValueError("this kernel needs 16-byte aligned inputs; pass .contiguous() copies")


def raises(i, o):
    raise IndexError("index 7 is out of bounds")


def make_cached():
    cache = {}

    def cached(i, o):
        key = (i["a"].data_ptr(), i["b"].data_ptr(), o["c"].data_ptr())
        if key in cache:
            o["c"].copy_(cache[key])
            return
        honest(i, o)
        cache[key] = o["c"].clone()

    return cached


def make_lazy():
    """Returns the previous call's answer: work deferred by one call (batching across calls)."""
    state = {}

    def lazy(i, o):
        prev = state.get("prev")
        state["prev"] = i["a"] + i["b"]
        o["c"].copy_(prev if prev is not None else state["prev"])

    return lazy


def _check(fn, dtype="float32", n=N, **kw):
    kw.setdefault("device", "cpu")
    return check_callable(fn, OP, Case((n,), dtype), **kw)


CHEATS = [
    (tail_unwritten, "unwritten"), (first_block, "unwritten"), (mutates_input, "input_mutated"),
    (stale_read, "stale_read"), (past_end, "out_of_bounds"), (before_start, "out_of_bounds"),
    (zeros, "constant_output"), (one_wrong, "mismatch"), (makes_nan, "nan"), (sticky, "crash"),
    (refuses, "refused"), (raises, "error"),
]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("fn,reason", CHEATS, ids=[f.__name__ for f, _ in CHEATS])
def test_each_python_cheat_is_rejected_with_its_reason(fn, reason, dtype):
    r = _check(fn, dtype)
    assert not r.ok and r.reason == reason, str(r)
    assert r.status in ("failed", "refused")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_cached_by_pointer_and_deferred_work_are_cached_results(dtype):
    for make in (make_cached, make_lazy):
        r = _check(make(), dtype)
        assert not r.ok and r.reason == "cached_result", str(r)
        assert "earlier inputs" in r.detail


@pytest.mark.parametrize("fn,lows", [(bf16_math, ("bfloat16",)), (fp16_math, ("float16", "tf32"))])
def test_lower_precision_math_in_an_fp32_op_is_precision(fn, lows):
    """fp16 and tf32 both keep 10 mantissa bits: either name is a right diagnosis for fp16 math."""
    r = _check(fn, "float32")
    assert not r.ok and r.reason == "precision", str(r)
    assert any(low in r.detail for low in lows) and r.mismatches > 0 and r.max_rel > 1e-4


@pytest.mark.parametrize("case", [Case((N,), "float32"), Case((N,), "bfloat16"), Case((1001,), "float32", offset=1),
                                  Case((1001,), "bfloat16", offset=3),
                                  Case((1001,), "float32", offset=1, layout="mixed_alignment"),
                                  Case((0,), "float32"), Case((1,), "bfloat16")], ids=lambda c: c.label)
def test_honest_candidate_passes_every_distribution(case):
    r = check_callable(honest, OP, case, device="cpu", seeds=(0, 1))
    assert r.ok and r.reason is None, str(r)
    assert r.trials == 2 * len(OP.distributions)
    assert any("repeat" in c for c in r.checks)
    # elementwise add is correctly rounded, so it passes with zero tolerance too
    exact = check_callable(honest, OP, case, device="cpu", seeds=(2,), tolerances={case.dtype: (0.0, 0.0)})
    assert exact.ok, str(exact)


def test_exact_tolerance_override_passes_exact_and_rejects_one_ulp():
    assert _check(honest, tolerances={"float32": (0.0, 0.0)}).ok

    def one_ulp(i, o):
        honest(i, o)
        o["c"][5] = torch.nextafter(o["c"][5], torch.tensor(math.inf))

    r = _check(one_ulp, tolerances={"float32": (0.0, 0.0)})
    assert r.reason == "mismatch", str(r)  # one element off is not a precision downgrade
    assert r.reason == "mismatch" and r.mismatches == 1 and r.first_mismatches[0].index == (5,)
    assert _check(one_ulp, tolerances={"float32": DEFAULTS["float32"]}).ok  # within the default fp32 rtol


def test_out_of_bounds_reports_element_offsets():
    after = _check(past_end)
    assert after.out_of_bounds["first_offset"] == N and after.output == "c"
    assert f"element offset {N} (1 past the end" in after.detail
    before = _check(before_start)
    assert before.out_of_bounds["first_offset"] == -3 and "3 before the first element" in before.detail


def test_failure_numbers_and_context():
    r = _check(one_wrong, tolerances={"float32": DEFAULTS["float32"]})  # vector_add itself is exact
    assert (r.mismatches, r.numel, r.nan_mismatches, r.inf_mismatches) == (1, N, 0, 0)
    assert r.first_mismatches[0].index == (17,) and r.max_abs == pytest.approx(1.0, rel=1e-6)
    assert r.seed == 0 and r.dist == "normal" and r.phase.startswith("run A")
    assert r.rtol == pytest.approx(1.3e-6)
    d = r.to_dict()
    assert d["first_mismatches"][0]["index"] == [17] and d["status"] == "failed"


def test_unwritten_detail_names_the_range_and_poison():
    r = _check(tail_unwritten)
    first_unwritten = N // 256 * 256
    assert f"from index ({first_unwritten},) to ({N - 1},)" in r.detail
    assert "0x7fa5a5a5" in r.detail and "0x7f7f7f7f" in r.detail
    assert r.mismatches == N - first_unwritten


def test_stale_read_explains_both_poisons():
    r = _check(stale_read)
    assert "with the buffer poisoned as NaN" in r.detail and "3.39615e+38" in r.detail


def test_poison_patterns():
    for dtype in (torch.float32, torch.bfloat16, torch.float16, torch.float64):
        t = torch.empty(8, dtype=dtype)
        poison_(t, "nan")
        assert torch.isnan(t).all() and holds_poison(t, "nan").all()
        assert not holds_poison(t + 1, "nan").any(), "arithmetic on the poison must change its bits"
        poison_(t, "big")
        assert torch.isfinite(t).all() and (t.abs() > 6e4).all() and holds_poison(t, "big").all()
    assert poison_bits(torch.float32, "nan") == 0x7FA5A5A5
    assert poison_bits(torch.int32, "nan") == int.from_bytes(b"\xa5" * 4, "little", signed=True)
    strided = torch.zeros(10)[::2]
    poison_(strided, "nan")
    assert torch.isnan(strided).all()
    with pytest.raises(ValueError, match="unknown poison"):
        poison_bits(torch.float32, "zero")


@pytest.mark.parametrize("template", [torch.empty(1001)[1:], torch.empty(257, dtype=torch.bfloat16)[3:],
                                      torch.empty(6, 7).t(), torch.empty(0)], ids=["offset", "bf16", "transposed", "empty"])
def test_guarded_output_keeps_layout_and_alignment(template):
    g = guarded_like("c", template, guard_bytes=1024)
    v = g.tensor
    assert v.shape == template.shape and v.stride() == template.stride() and v.dtype == template.dtype
    if template.numel():
        assert v.data_ptr() % 256 == template.data_ptr() % 256
    assert g.covered_bytes == template.numel() * template.element_size()
    g.arm()
    v.fill_(3.0)
    assert g.violations() is None


def test_guard_catches_a_write_in_the_gap_of_a_strided_view():
    g = guarded_like("c", torch.empty(6, 7).t(), guard_bytes=1024)  # shape (7, 6), strides (1, 7)
    g.arm()
    g.tensor.as_strided((1,), (1,), g.tensor.storage_offset() + 0)[0] = 1.0  # element (0, 0): legal
    assert g.violations() is None
    flat = g.tensor.as_strided((42,), (1,))
    flat[41] = 5.0  # the last element of the span: (6, 5) -> 6 * 1 + 5 * 7 = 41, legal
    assert g.violations() is None
    g.arm()
    g.buffer[g.start + 42 * 4] ^= 1  # one byte after the span
    v = g.violations()
    assert v and v["first_offset"] == 42 and v["bytes"] == 1
    assert "1 past the end" in GuardedOutput.describe(v)


def test_input_snapshot_sees_the_bytes_before_a_misaligned_view():
    base = torch.randn(101)
    view = base[1:]
    snap = InputSnapshot({"a": view})
    assert snap.changes() == []
    base[0] = 7.0  # outside the view, inside its storage
    (change,) = snap.changes()
    assert "input 'a'" in change and "element offset -1" in change
    assert storage_bytes(view).numel() == 404


def test_verify_outputs_after_timing():
    case = Case((N,), "float32")
    inputs = OP.make_inputs(case, 0, device="cpu")
    outputs = OP.make_outputs(case, inputs)
    honest(inputs, outputs)
    assert verify_outputs(OP, case, inputs, outputs).ok
    inputs["a"].add_(1.0)  # the inputs moved on; the output did not
    r = verify_outputs(OP, case, inputs, outputs)
    assert not r.ok and r.reason == "mismatch" and r.mismatches > N // 2


def test_bad_check_arguments():
    with pytest.raises(ValueError, match="unknown distribution"):
        _check(honest, dists=("gaussian",))
    with pytest.raises(ValueError, match="at least one seed"):
        _check(honest, seeds=())

    class NoSpecial(type(OP)):
        distributions = ("normal",)

    with pytest.raises(ValueError, match="does not define results"):
        check_callable(honest, NoSpecial(), Case((8,), "float32"), device="cpu", dists=("special",))


def test_nan_reference_fails_closed_for_an_op_without_special():
    class NoSpecial(type(OP)):
        distributions = ("normal",)

        def reference(self, case, inputs):
            out = super().reference(case, inputs)
            out["c"][3] = float("nan")
            return out

    r = check_callable(honest, NoSpecial(), Case((64,), "float32"), device="cpu")
    assert not r.ok and r.reason == "nan" and "failing closed" in r.detail


WRONG = Path(__file__).resolve().parents[2] / "src/kernelab/ops/vector_add/wrong"


def test_the_w7_host_cheat_file_is_caught_on_cpu():
    """w7's launcher, with the kernel launch replaced by a CPU add: the cheat itself is what is judged."""
    launch = _load_launcher(WRONG / "w7_cached_by_pointer.py")

    class CpuOp(type(OP)):
        def launch(self, kernel, variant, case, inputs, outputs):
            honest(inputs, outputs)

    op = CpuOp()
    case = Case((N,), "float32")
    r = check_callable(lambda i, o: launch(op, None, None, case, i, o), op, case, device="cpu")
    assert not r.ok and r.reason == "cached_result", str(r)


# ---- the memory-lean paths used at bench sizes (forced here with small thresholds) ------------

def test_contiguous_guard_remembers_only_the_guard_bands():
    g = guarded_like("c", torch.empty(1000), guard_bytes=1024)
    g.arm()
    assert g.covered is None and g.before.numel() == g.buffer.numel() - 4000
    g.tensor.fill_(1.0)
    assert g.violations() is None
    for byte, offset in ((g.start - 1, -1), (g.start + 4000, 1000)):
        g.arm()
        g.buffer[byte] ^= 0xFF
        v = g.violations()
        assert v and v["bytes"] == 1 and v["first_offset"] == offset, v


def test_digested_snapshot_sees_a_change_and_a_swap_and_names_the_chunk():
    base = torch.randn(8 * 1024 + 1)
    view = base[1:]  # misaligned: the chunk report counts from the view's start
    snap = InputSnapshot({"a": view}, exact_bytes=0, chunk_bytes=4096)  # 9 chunks of 1024 floats
    assert not snap.copies and "a" in snap.digests
    assert snap.changes() == []
    view[5000] = view[5000] + 1.0
    (change,) = snap.changes()
    assert "1 of 9 chunk(s)" in change and "element offsets 4095 and 5119" in change, change
    snap = InputSnapshot({"a": view}, exact_bytes=0, chunk_bytes=4096)
    view[[10, 11]] = view[[11, 10]]  # same multiset of words, other positions
    assert snap.changes(), "a swap inside one chunk must change the weighted digest"


def test_chunked_comparison_equals_one_pass(monkeypatch):
    import kernelab.check.compare as compare_mod

    exp = torch.randn(10_000, dtype=torch.float64)
    got = exp.to(torch.float32).clone()
    got[[17, 4097, 9999]] += torch.tensor([1.0, float("nan"), float("inf")])
    whole = compare_mod.compare_outputs(got, exp, 1e-5, 1e-5, keep_mask=True)
    monkeypatch.setattr(compare_mod, "CHUNK", 1000)
    parts = compare_mod.compare_outputs(got, exp, 1e-5, 1e-5, keep_mask=True)
    assert (parts.mismatches, parts.nan_mismatches, parts.inf_mismatches) == (3, 1, 1)
    assert (parts.mismatches, parts.max_abs, parts.max_rel) == (whole.mismatches, whole.max_abs, whole.max_rel)
    assert [m.index for m in parts.first] == [(17,), (4097,), (9999,)]
    assert torch.equal(parts.bad, whole.bad)


@pytest.mark.parametrize("make", [make_cached, make_lazy])
def test_cached_result_is_found_from_recomputed_references(monkeypatch, make):
    """At bench sizes earlier references are kept as recipes and recomputed on a failure."""
    import kernelab.check.harness as harness

    monkeypatch.setattr(harness, "HISTORY_EXACT_BYTES", 0)
    r = _check(make())
    assert not r.ok and r.reason == "cached_result" and "earlier inputs" in r.detail, str(r)
