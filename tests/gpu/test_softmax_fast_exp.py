"""softmax's staged rows (staged_rows.cuh: v10, v12 and v4_dispatch's v12 / v14 main grids) with
SB_FAST_EXP 1, their default since session 27, on a GPU: exps as ex2(fma(x, LOG2E, -c)) with a
thread's rounding residual c_lo folded back once, bf16 maxima on packed pairs. What could go wrong is
numeric, so besides the loop and layout cases the rows sit far from 0: there c = fl(sh LOG2E) is off
by up to ulp(c) / 2 (1000 + N(0, 1) fp32: up to ~4e-5 of every exp, over fp32's 2e-5 tolerance had the
residual not been folded back), and past 2^20 the fallback (x - sh first) runs. Special values (NaN,
+-inf, masked rows) must come out as torch's. The SB_FAST_EXP 0 build: test_softmax_bulk.py's KNOBS."""

from __future__ import annotations

import pytest

from kernelab.gpu import Module, compile_file, default_arch
from kernelab.ops import discover, load_variant
from kernelab.ops.base import Case
from kernelab.ops.build import target_arch

from ._softmax_rows import run_kernel, sm90_only

pytestmark = pytest.mark.gpu

OP = discover()["softmax"]
# (variant, extra macros): the library's builds of the staged rows, and v13's body (v13, v16; v4_dispatch's
# v13 / v16 entries and v14's side grid) with PR_FAST_EXP 1, its knob (v13_packed_regs.cu).
VARIANTS = [("v10_staged_regs", ()), ("v12_dynamic_rows", ()), ("v4_dispatch", ()),
            ("v13_packed_regs", (("PR_FAST_EXP", 1),)), ("v16_half_blocks", (("PR_FAST_EXP", 1),)),
            ("v4_dispatch", (("PR_FAST_EXP", 1),)), ("v4_dispatch", (("SB_WARP_XCHG", 0),))]
_modules: dict = {}
_needs_hopper = sm90_only("the staged rows (v10, v12, v4's wide entries)")


def _fast(build):
    """(variant, module) of (name, macros): the library's build (SB_FAST_EXP 1 is staged_rows.cuh's default), or
    one with the macros, compiled once a test session."""
    name, macros = build
    v = OP.variant(name)
    if not macros:
        return v, load_variant(OP, v)
    if build not in _modules:
        d = {**OP.defines(v), **dict(macros)}
        _modules[build] = (v, Module(compile_file(v.path, arch=target_arch(v, default_arch()).sm, defines=d), d))
    return _modules[build]


def _ids(x):
    if isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str):
        return x[0] + "".join(f",{k}={w}" for k, w in x[1])
    return str(x) if not isinstance(x, dict) else "-"


# (rows, width, dtype, case keywords): the ring wraps (more rows than clusters), a misaligned fp32 row
# (head / tail scalars, which the fast sweep exps as the vectors), y not co-aligned (scalar stores).
LAYOUTS = [(700, 131072, "bfloat16", {}), (300, 131072, "float32", {"offset": 1}),
           (400, 65536, "bfloat16", {"offset": 3}),
           (200, 100000, "bfloat16", {"offset": 1, "layout": "mixed_alignment"}),
           (5, 32769, "float32", {})]


@pytest.mark.parametrize("name", VARIANTS, ids=_ids)
@pytest.mark.parametrize("m,n,dtype,kw", LAYOUTS, ids=lambda x: str(x) if not isinstance(x, dict) else "-")
def test_fast_exp_layouts(name, m, n, dtype, kw):
    v, mod = _fast(name)
    case = Case((m, n), dtype, **kw)
    cmp, kernel = run_kernel(v, mod, case)
    assert cmp.ok, f"{name} {case.label} via {kernel}: {cmp.summary(max_lines=3)}"


# Rows far from 0, through the FFMA path (|max| < 2^20) and the fallback (|max| >= 2^20, fp32 only: bf16
# holds 3e6 to 8 bits, so the row is a few distinct values: still a softmax, checked the same).
SHIFTS = [(1000.0, "float32"), (-30000.0, "float32"), (3.0e6, "float32"), (1000.0, "bfloat16"), (5.0e4, "bfloat16"),
          (3.0e6, "bfloat16")]


@pytest.mark.parametrize("name", VARIANTS, ids=_ids)
@pytest.mark.parametrize("shift,dtype", SHIFTS, ids=lambda x: str(x))
def test_fast_exp_rows_far_from_zero(name, shift, dtype):
    v, mod = _fast(name)
    case = Case((96, 131072), dtype)
    cmp, kernel = run_kernel(v, mod, case, shift=shift)
    assert cmp.ok, f"{name} {case.label} + {shift} via {kernel}: {cmp.summary(max_lines=3)}"


@pytest.mark.parametrize("name", VARIANTS, ids=_ids)
def test_fast_exp_special_large_and_masked(name):
    v, mod = _fast(name)
    for case, dist in ((Case((150, 70000), "bfloat16", params=(("mask", True),)), "special"),
                       (Case((150, 131072), "float32"), "special"), (Case((150, 131072), "bfloat16"), "special"),
                       (Case((64, 131072), "float32"), "large"), (Case((64, 131072), "bfloat16"), "large"),
                       (Case((64, 131072), "bfloat16"), "uniform")):
        cmp, kernel = run_kernel(v, mod, case, dist)
        assert cmp.ok, f"{name} {case.label} ({dist}) via {kernel}: {cmp.summary(max_lines=3)}"
