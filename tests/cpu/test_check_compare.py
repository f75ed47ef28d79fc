"""The comparison and tolerance rules of kernelab.check, on CPU tensors."""

import json
import math

import pytest
import torch

from kernelab.check import REASONS, CheckResult, check_time, compare_outputs, is_constant, tolerance
from kernelab.check.result import Mismatch
from kernelab.check.tolerances import DEFAULTS

F64 = torch.float64


def test_correctly_rounded_answer_passes_with_zero_tolerance():
    a = torch.randn(10_000, generator=torch.Generator().manual_seed(0))
    b = torch.randn(10_000, generator=torch.Generator().manual_seed(1))
    exact = a.double() + b.double()  # not representable in fp32 in general
    got = a + b  # fp32: the correctly rounded sum
    assert not torch.equal(got.double(), exact)
    assert compare_outputs(got, exact, 0.0, 0.0).ok
    one_ulp_off = got.clone()
    one_ulp_off[123] = torch.nextafter(got[123], torch.tensor(math.inf))
    c = compare_outputs(one_ulp_off, exact, 0.0, 0.0)
    assert not c.ok and c.mismatches == 1 and c.first[0].index == (123,)


def test_tolerance_boundary_is_inclusive():
    e = torch.tensor([1.0, 2.0, -4.0], dtype=F64)
    rtol, atol = 2.0 ** -8, 2.0 ** -10  # powers of two: the bound is exact in binary
    edge = e + (atol + rtol * e.abs())  # exactly at the bound
    assert compare_outputs(edge, e, rtol, atol).ok
    beyond = e.clone()
    beyond[1] += 2 * (atol + rtol * 2.0)
    c = compare_outputs(beyond, e, rtol, atol)
    assert not c.ok and c.mismatches == 1 and c.first[0].index == (1,)
    assert c.max_abs == pytest.approx(2 * (atol + rtol * 2.0))
    assert c.max_rel == pytest.approx(c.max_abs / 2.0)


def test_nan_in_expected_fails_closed_unless_declared():
    e = torch.tensor([1.0, float("nan"), 3.0], dtype=F64)
    g = torch.tensor([1.0, float("nan"), 3.0])
    closed = compare_outputs(g, e, 1e-6, 1e-6)
    assert not closed.ok and closed.nan_mismatches == 1 and closed.inf_mismatches == 0
    assert closed.expected_nans == 1
    assert compare_outputs(g, e, 1e-6, 1e-6, nan_ok=True).ok
    finite_where_nan = torch.tensor([1.0, 0.0, 3.0])
    c = compare_outputs(finite_where_nan, e, 1e-6, 1e-6, nan_ok=True)
    assert not c.ok and c.nan_mismatches == 1


def test_nan_and_inf_mismatches_are_counted_apart_from_finite_ones():
    e = torch.tensor([1.0, 2.0, 3.0, math.inf, 5.0, -math.inf], dtype=F64)
    g = torch.tensor([float("nan"), math.inf, 3.5, math.inf, 5.0, math.inf])
    c = compare_outputs(g, e, 1e-6, 1e-6)
    assert c.mismatches == 4
    assert c.nan_mismatches == 1  # got NaN where 1.0 was expected
    assert c.inf_mismatches == 2  # inf where 2.0 was expected; +inf where -inf was
    assert c.finite_mismatches == 1  # 3.5 vs 3.0
    assert c.max_abs == pytest.approx(0.5)  # over pairs of finite values only


def test_overflow_to_inf_is_the_correctly_rounded_answer():
    e = torch.tensor([70000.0], dtype=F64)  # beyond fp16's 65504: rounds to inf
    assert compare_outputs(torch.tensor([math.inf], dtype=torch.float16), e, 1e-3, 1e-5).ok
    c = compare_outputs(torch.tensor([65504.0], dtype=torch.float16), e, 1e-3, 1e-5)
    assert not c.ok and c.finite_mismatches == 1


def test_first_mismatches_report_index_values_and_bits():
    e = torch.zeros(4, 5, dtype=F64)
    g = torch.zeros(4, 5)
    g[0, 3] = 1.0
    g[2, 1] = -2.0
    g[3, 4] = float("nan")
    c = compare_outputs(g, e, 0.0, 1e-3, name="y", max_report=2)
    assert c.mismatches == 3 and len(c.first) == 2  # capped at max_report, count is complete
    m0, m1 = c.first
    assert (m0.output, m0.index, m0.got, m0.expected) == ("y", (0, 3), 1.0, 0.0)
    assert m0.got_bits == "0x3f800000" and m1.index == (2, 1) and m1.got == -2.0
    assert m0.rel_err == math.inf and m0.abs_err == 1.0
    assert "y[0, 3]: got 1 (0x3f800000), expected 0" in str(m0)
    assert "3 of 20 elements of 'y'" in c.summary()
    assert c.nan_mismatches == 1


def test_bf16_output_compares_against_float64_reference():
    e = torch.tensor([1.0, 1.0 + 2 ** -9, 100.0], dtype=F64)
    g = e.to(torch.bfloat16)  # 1 + 2^-9 rounds to 1.0 (ties to even): still the correctly rounded answer
    assert compare_outputs(g, e, 0.0, 0.0).ok
    rtol, atol = DEFAULTS["bfloat16"]
    off = g.clone()
    off[2] = 104.0  # 4% off; bf16 rtol is 1.6%
    assert not compare_outputs(off, e, rtol, atol).ok


def test_integer_outputs_are_exact():
    e = torch.tensor([1, 2, 3])
    assert compare_outputs(torch.tensor([1, 2, 3], dtype=torch.int32), e, 0.0, 0.0).ok
    c = compare_outputs(torch.tensor([1, 2, 4], dtype=torch.int32), e, 0.0, 0.0)
    assert c.mismatches == 1 and c.first[0].got == 4.0


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="shape"):
        compare_outputs(torch.zeros(3), torch.zeros(4, dtype=F64), 0, 0, name="c")
    with pytest.raises(ValueError, match="complex"):
        compare_outputs(torch.zeros(3, dtype=torch.complex64), torch.zeros(3, dtype=torch.complex128), 0, 0)


def test_empty_outputs_pass():
    c = compare_outputs(torch.zeros(0), torch.zeros(0, dtype=F64), 0, 0)
    assert c.ok and c.numel == 0 and c.max_abs is None


def test_is_constant():
    assert is_constant(torch.zeros(10))
    assert is_constant(torch.full((3, 3), float("nan")))
    assert not is_constant(torch.arange(10.0))
    assert not is_constant(torch.zeros(1))  # one element cannot vary
    assert is_constant(torch.zeros(6).as_strided((3,), (2,)))


class _Op:
    tolerances = {"float32": (0.0, 0.0)}


def test_tolerance_lookup_precedence_and_errors():
    assert tolerance(None, "float32") == DEFAULTS["float32"]
    assert tolerance(_Op(), torch.float32) == (0.0, 0.0)
    assert tolerance(_Op(), "bfloat16") == DEFAULTS["bfloat16"]
    assert tolerance(_Op(), "float32", {"float32": (1e-3, 0)}) == (1e-3, 0.0)
    with pytest.raises(ValueError, match="no default tolerance.*complex64.*declare it in the op"):
        tolerance(None, "complex64")
    with pytest.raises(ValueError, match="cannot be negative"):
        tolerance(None, "float32", {"float32": (-1, 0)})
    with pytest.raises(ValueError, match="pair"):
        tolerance(None, "float32", {"float32": 1e-3})


def test_fp32_default_is_far_tighter_than_bf16_error():
    """The fp32 default must reject bf16 math: bf16 rounding (2^-9 relative) vs rtol 1.3e-6."""
    rtol, atol = DEFAULTS["float32"]
    assert 2 ** -9 > 1000 * rtol


def test_reason_codes_cover_the_documented_interface():
    documented = {"mismatch", "unwritten", "out_of_bounds", "input_mutated", "stale_read", "cached_result",
                  "async_work", "precision", "constant_output", "nan", "crash", "hang", "leak", "compile_error",
                  "impossible_time"}
    assert documented <= set(REASONS)
    with pytest.raises(ValueError, match="unknown reason code"):
        CheckResult(ok=False, reason="wrongish")


def test_check_result_json_round_trip_keeps_infinities_and_mismatches():
    r = CheckResult(ok=False, reason="mismatch", detail="d", max_abs=math.inf, max_rel=float("nan"), mismatches=2,
                    first_mismatches=[Mismatch("c", (1, 2), 1.0, math.inf, math.inf, math.nan, "0x3f800000")])
    d = json.loads(json.dumps(r.to_dict()))  # strict JSON: no Infinity literals needed
    assert d["max_abs"] == "inf" and d["status"] == "failed"
    back = CheckResult.from_dict(d)
    assert back.max_abs == math.inf and math.isnan(back.max_rel)
    assert back.first_mismatches[0].index == (1, 2) and back.first_mismatches[0].expected == math.inf


def test_impossible_time_is_rejected():
    r = check_time(1e-6, 2e-6, name="v9")
    assert not r.ok and r.reason == "impossible_time" and "below the physical floor" in r.detail
    assert check_time(3e-6, 2e-6).ok
    with pytest.raises(ValueError):
        check_time(1e-6, 0)
