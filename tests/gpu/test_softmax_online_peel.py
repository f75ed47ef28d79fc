"""softmax v2_online built with PASS1_PEEL 1 (session 20's knob: pass 1's first step of vectors issued
before the head/tail scalars) on a GPU: right on rows with and without head/tail scalars, narrower than
one step and several steps wide, masked rows (a row of -inf, a head that is the row's only finite
value), fp32 and bf16. The default build is checked by tests/gpu/test_ops_mem_b.py's sweep."""

from __future__ import annotations

import pytest

from kernelab.gpu import Module, compile_file, default_arch
from kernelab.ops import discover
from kernelab.ops.base import Case
from kernelab.ops.build import target_arch

from ._softmax_rows import run_kernel

pytestmark = pytest.mark.gpu

OP = discover()["softmax"]
V2 = OP.variant("v2_online")


@pytest.fixture(scope="module")
def peeled():
    d = {**OP.defines(V2), "PASS1_PEEL": 1}
    return Module(compile_file(V2.path, arch=target_arch(V2, default_arch()).sm, defines=d), d)


# (M, N, offset): offset 0 with N a multiple of the vector is the aligned case (no scalars); the
# others give rows with a head, a tail or both; 2049 x 4 vectors is past one step of 512 x 4.
SHAPES = [(5, 1, 0), (5, 7, 1), (9, 1000, 0), (9, 1001, 3), (17, 8192, 0), (17, 8191, 1), (6, 8192, 2),
          (4, 32769, 3), (3, 70001, 1)]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("m,n,offset", SHAPES)
def test_peeled_pass_one_is_right(peeled, dtype, m, n, offset):
    case = Case((m, n), dtype, offset=offset)
    cmp, kernel = run_kernel(V2, peeled, case)
    assert cmp.ok, f"{case.label} via {kernel}: {cmp.summary(max_lines=3)}"


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("n,offset", [(1000, 1), (5000, 3), (70000, 2)])
def test_peeled_pass_one_on_masked_rows(peeled, dtype, n, offset):
    case = Case((7, n), dtype, offset=offset, params=(("mask", True),))
    cmp, kernel = run_kernel(V2, peeled, case)
    assert cmp.ok, f"{case.label} via {kernel}: {cmp.summary(max_lines=3)}"
