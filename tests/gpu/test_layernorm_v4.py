"""layernorm v4_pinned_onebar on the GPU at the knob settings the sweep times, where the generic
per-variant test (test_ops_mem_b.py) builds only the header's defaults, on the shapes that break
row kernels: N = 1 and odd N (tail scalars only), misaligned rows (a scalar head), y or the
parameters out of x's 16-byte phase (the generic row body instead of the fast one), rows where
whole warps own nothing (elements per thread 8 bf16 / 4 fp32 at N = 1025: the one-barrier merge
gets warps with count 0), |mean| >> std (x = 1000 + N(0, 1)), and wide rows (the stream kernel,
whose pass 2 also ends in the merge)."""

from __future__ import annotations

import dataclasses

import pytest

from kernelab.check import check_callable
from kernelab.gpu import Module, compile_file
from kernelab.ops import discover
from kernelab.ops.base import Case
from kernelab.ops.build import target_arch

pytestmark = pytest.mark.gpu

OP = discover()["layernorm"]
NAME = "v4_pinned_onebar"
SHIFT = (("shift", 1000.0),)

# (macros, header values overridden): the sweep's knob rows, and K = 1 (empty warps at N = 1025).
KNOBS = [
    ({}, {}),
    ({"LN_ONE_BARRIER": 0}, {}),
    ({"PARAMS_AHEAD": 4}, {}),
    ({"PARAMS_EARLY": 1}, {}),
    ({"PARAMS_EARLY": 2, "PARAMS_AHEAD": 1}, {}),
    ({}, {"elems_bf16": "8", "elems_f32": "4"}),
    ({"LN_ONE_BARRIER": 0}, {"elems_bf16": "8", "elems_f32": "4"}),
    ({"PARAM_WORDS": 0}, {}),  # bf16 parameters out of x's phase element by element (before session 21)
]


def _cases(dt):
    return [
        Case((3, 1), dt), Case((5, 7), dt), Case((33, 1000), dt, params=SHIFT), Case((5, 1025), dt),
        Case((5, 1025), dt, params=SHIFT), Case((5, 4097), dt, offset=3), Case((5, 8192), dt, params=SHIFT),
        Case((3, 8192), dt, offset=1, layout="mixed_alignment"), Case((33, 1024), dt, layout="misaligned_params"),
        Case((5, 1000), dt, layout="misaligned_params"), Case((5, 16385), dt),
        Case((2, 40000), dt, params=SHIFT), Case((3, 40001), dt, offset=1),
        # Rows of 1001 start at every 16-byte phase: the parameters' column `head` at every shift.
        Case((9, 1001), dt), Case((9, 1001), dt, layout="misaligned_params"), Case((9, 8191), dt, offset=2),
    ]


@pytest.mark.parametrize("macros,meta", KNOBS, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()) or "-")
def test_v4_knob_builds_are_correct_on_edge_shapes(macros, meta):
    v = OP.variant(NAME)
    if meta:
        v = dataclasses.replace(v, meta={**v.meta, **meta})
    defines = {**OP.defines(v), **macros}
    module = Module(compile_file(v.path, arch=target_arch(v), defines=defines), defines)
    failures, ran = [], 0
    for dt in OP.dtypes:
        kernel = module.kernel(OP.kernel_name(dt))
        for case in _cases(dt):
            assert OP.supports(v, case) is None, case.label  # v4 holds every width (warp, block, stream)
            plan = OP.plan(v, case.shape[1], dt)

            def run(inputs, outputs, case=case):
                OP.launch(kernel, v, case, inputs, outputs)

            r = check_callable(run, OP, case, seeds=(0,), dists=("normal",), repeat=False, stream_order=False,
                               name=f"{NAME} {macros} {meta}")
            ran += 1
            if not r.ok:
                failures.append(f"{case.label} via {plan}: {r.reason}: {r.detail[:300]}")
    assert ran and not failures, f"{len(failures)} of {ran} failed:\n" + "\n".join(failures)
