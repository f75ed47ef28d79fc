"""transpose v4_grouped_order on the GPU under every knob setting the sweep uses: each of the op's
test cases (edges, misaligned views, column slices) plus shapes that reach the parts v3's tests do
not (a last group shorter than GROUP, more row tiles than gridDim.y holds, one row / one column at
size), bit-exact against the float64 reference with NaN-poisoned, guarded outputs; and the
default at the bench size. (tests/gpu/test_ops_mem_a.py also runs the default over every test case.)"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from kernelab.check import compare_outputs, tolerance
from kernelab.check.integrity import guarded_outputs, poison_
from kernelab.gpu import Module, compile_file
from kernelab.ops import Case, discover, run_variant
from kernelab.ops.build import target_arch

pytestmark = pytest.mark.gpu

OP = discover()["transpose"]
V4 = OP.variant("v4_grouped_order")

# Beyond the op's test cases: 2117 rows = 33 row tiles of 64 + 5 (GROUP 32 leaves a last group of
# 2 row tiles, the second cut by the edge); 65535 x 64 + 70 rows exceed gridDim.y's cap at 64-row
# tiles (and at 32), so blocks take a second tile; 1 x (2^20 + 3) and (2^20 + 3) x 1 at size.
EXTRA = [Case((2117, 449), dt) for dt in OP.dtypes] + [
    Case((2117, 456), "bfloat16", offset=8), Case((65535 * 64 + 70, 3), "float32"),
    Case((65535 * 64 + 70, 2), "bfloat16"), Case((1, (1 << 20) + 3), "float32"), Case(((1 << 20) + 3, 1), "bfloat16")]

KNOBS = [({}, {}), ({}, {"GROUP": 1}), ({}, {"GROUP": 8}), ({}, {"GROUP": 1 << 20}), ({}, {"GROUP": 32}),
         ({"tile_rows_bf16": "128", "tile_cols_bf16": "128"}, {}), ({"tile_rows_bf16": "128", "tile_cols_bf16": "64"}, {}),
         ({"tile_rows": "32", "tile_cols": "32", "tile_rows_bf16": "32", "tile_cols_bf16": "32"}, {}), ({"tile_rows": "32", "tile_cols": "32", "tile_rows_bf16": "32", "tile_cols_bf16": "32", "block": "128"}, {}),
         ({"tile_rows": "32", "tile_cols": "64", "tile_rows_bf16": "32", "tile_cols_bf16": "64"}, {}), ({"tile_rows": "64", "tile_cols": "32", "tile_rows_bf16": "64", "tile_cols_bf16": "32"}, {}),
         ({"tile_rows": "16", "tile_cols": "32", "tile_rows_bf16": "16", "tile_cols_bf16": "32", "block": "64"}, {})]


def _launcher(meta, macros):
    v = dataclasses.replace(V4, meta={**V4.meta, **meta})
    d = {**OP.defines(v), **macros}
    module = Module(compile_file(v.path, arch=target_arch(v), defines=d), d)

    def launch(case, inputs, outputs):
        OP.launch(module.kernel(OP.kernel_name(case.dtype)), v, case, inputs, outputs)
    return launch


def _problems(launch, case, dist) -> list[str]:
    inputs = OP.make_inputs(case, 1, "cuda", dist)
    guarded = guarded_outputs(OP.make_outputs(case, inputs), guard_bytes=4096)
    for g in guarded.values():
        poison_(g.tensor, "nan")
        g.arm()
    outputs = {k: g.tensor for k, g in guarded.items()}
    launch(case, inputs, outputs)
    torch.cuda.synchronize()
    out = [f"{case.label}: writes outside the output: {g.violations()}" for g in guarded.values() if g.violations()]
    ref = OP.reference(case, inputs)
    for k, g in guarded.items():
        rtol, atol = tolerance(OP, g.tensor.dtype)
        cmp = compare_outputs(g.tensor, ref[k], rtol, atol, nan_ok=True, name=k)
        if not cmp.ok:
            out.append(f"{case.label} [{dist}]: {cmp.summary(3)}")
    return out


@pytest.mark.parametrize("meta,macros", KNOBS, ids=lambda d: ",".join(f"{k}={v}" for k, v in d.items()) or "-")
def test_v4_under_each_knob(meta, macros):
    launch = _launcher(meta, macros)
    problems = []
    for case in OP.test_cases() + EXTRA:
        problems += _problems(launch, case, "special" if case.numel <= 1 << 16 else "normal")
    assert not problems, f"v4 {meta} {macros}: " + "\n".join(problems[:10])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_v4_at_size(dtype):
    """The bench shape (16384^2 fp32; 8192^2 bf16), whole tiles in grouped order, bit-exact."""
    n = 16384 if dtype == "float32" else 8192
    case = Case((n, n), dtype)
    m = OP.make_inputs(case, 0, "cuda", "uniform")["m"]
    out = OP.make_outputs(case, {"m": m})
    out["out"].fill_(float("nan"))
    run_variant(OP, V4, case, {"m": m}, out)
    assert torch.equal(out["out"], m.t())


# 4096 rows at an offset: whole row tiles of m, out's rows all at one phase, so each out row's last window
# lies in the row tile after m's last (the shifted kernels run their row tiles to rows + V - 1).
@pytest.mark.parametrize("shape,dtype,offset", [((16383, 16383), "float32", 0), ((8191, 8193), "float32", 3),
                                                ((8193, 8191), "bfloat16", 5), ((16384, 16383), "bfloat16", 0),
                                                ((4096, 1001), "float32", 1), ((4096, 1001), "bfloat16", 3)])
def test_v4_shifted_kernels_at_size(shape, dtype, offset):
    """Misaligned rows at size (session 22: op.py launches transpose_shifted_*): m and out at every row
    phase, whole and edge tiles, guarded outputs, bit-exact."""
    case = Case(shape, dtype, offset=offset)
    problems = _problems(lambda c, i, o: run_variant(OP, V4, c, i, o), case, "uniform")
    assert not problems, "\n".join(problems[:10])
