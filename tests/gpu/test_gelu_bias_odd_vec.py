"""gelu_bias v5_short_fit built with ODD_VEC 1 (session 21; the default since session 22): tensors whose rows
are not 16-byte multiples but whose x and y share a phase run gelu_bias_flat (16-byte vectors over the
flat index, the bias's column stepped per vector and funnel-shifted from 4-byte words, wrapping at the
row's end). Correct on the op's own test cases and on the shapes that break that path: odd widths (rows
at every phase, vectors that cross a row's end), offset views (a scalar head), a tail, widths under
2 V (the element path), y out of x's phase (the element path), and, on the persistent grid (about one
wave of blocks), a tensor that takes several passes of the stride loop and its column step."""

from __future__ import annotations

import dataclasses

import pytest

from kernelab.check import check_callable
from kernelab.gpu import Module, compile_file
from kernelab.ops import discover
from kernelab.ops.base import Case
from kernelab.ops.build import target_arch

pytestmark = pytest.mark.gpu

OP = discover()["gelu_bias"]


def _extra(dt):
    return [
        Case((33, 8191), dt), Case((9, 1001), dt), Case((7, 17), dt), Case((5, 9), dt), Case((3, 15), dt),
        Case((9, 1001), dt, offset=3), Case((64, 8200), dt, offset=1), Case((16384, 1031), dt),
        Case((9, 1001), dt, offset=1, layout="mixed_alignment"),
    ]


@pytest.mark.parametrize("grid", ["oneshot", "persistent"])
@pytest.mark.parametrize("dt", OP.dtypes)
def test_odd_vec_build_is_correct(dt, grid):
    v = OP.variant("v5_short_fit")
    v = dataclasses.replace(v, meta={**v.meta, "grid": grid})
    defines = {**OP.defines(v), "ODD_VEC": 1}
    kernel = Module(compile_file(v.path, arch=target_arch(v), defines=defines), defines).kernel(OP.kernel_name(dt))
    cases = [c for c in OP.test_cases() if c.dtype == dt] + _extra(dt)
    failures = []
    for case in cases:
        def run(inputs, outputs, case=case):
            OP.launch(kernel, v, case, inputs, outputs)

        r = check_callable(run, OP, case, seeds=(0,), dists=("normal",), repeat=False, stream_order=False,
                           name=f"v5_short_fit ODD_VEC=1 @grid {grid}")
        if not r.ok:
            failures.append(f"{case.label}: {r.reason}: {r.detail[:300]}")
    assert not failures, f"{len(failures)} of {len(cases)} failed:\n" + "\n".join(failures)
