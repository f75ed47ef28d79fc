"""softmax v6_packed_rows on a GPU, beyond test_ops_mem_b's every-variant x every-case run:
every instance at exactly its width (the `_full` kernel: no predicates, no padding) and one
narrower or misaligned (the general kernel), with the kernel that ran asserted, on normal,
special (NaN, +-inf, -0.0, denormals) and large inputs, masked rows included; then the knob
builds the sweep times (PK_LOAD, PK_KEEP_EXP, two rows a warp with a half-warp past the last row,
1- and 8-warp blocks, 16 and 64 elements a thread), so a sweep row is never the first run of a
build. Outputs are poisoned with NaN first; failures name the case, the distribution and the
kernel."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from kernelab.check import compare_outputs, tolerance
from kernelab.check.inputs import DTYPES
from kernelab.gpu import KernelFault, Module, compile_file, last_launched_kernel, synchronize
from kernelab.ops import Case, discover, run_variant
from kernelab.ops.build import target_arch
from kernelab.ops.softmax import op as softmax_op

pytestmark = pytest.mark.gpu

OP = discover()["softmax"]
V6 = OP.variant("v6_packed_rows")


def _check(launch, case, dist, seed=0):
    """(comparison, kernel that ran) of one launch on fresh inputs with a NaN-poisoned output."""
    inputs = OP.make_inputs(case, seed, "cuda", dist)
    outputs = OP.make_outputs(case, inputs)
    outputs["y"].fill_(float("nan"))
    try:
        launch(inputs, outputs)
        synchronize()
    except KernelFault as e:
        raise AssertionError(f"v6 faulted on {case.label} [{dist}] in {last_launched_kernel()}: {e}") from None
    rtol, atol = tolerance(OP, case.dtype)
    ref = OP.reference(case, inputs)["y"]
    return compare_outputs(outputs["y"], ref, rtol, atol, nan_ok=True, max_report=3, name="y"), last_launched_kernel()


def _cases(dtype):
    """(case, whether the `_full` kernel must run) at every instance's width."""
    out = []
    for cap in (256, 512, 1024):  # warp rows; 5 rows = 2 full blocks of 2 warps and one with a warp past M
        out += [(Case((5, cap), dtype), True), (Case((5, cap - 1), dtype), False),
                (Case((5, cap), dtype, offset=1), False), (Case((3, cap), dtype, params=(("mask", True),)), True)]
    e = softmax_op.packed_block_elems(softmax_op.PACKED_DEFAULTS["block_elems"], dtype)
    widths = [e * t for t in (64, 128, 256, 512, 1024)]  # block rows of t x the header's elements a thread
    if dtype == "bfloat16" and e < 32:
        widths.append(1024 * 32)  # the 32-element instance past them
    for n in widths:
        out += [(Case((3, n), dtype), True), (Case((3, n - 3), dtype), False),
                (Case((3, n), dtype, offset=3, layout="mixed_alignment"), False),
                (Case((3, n), dtype, params=(("mask", True),)), True)]
    return out


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_full_and_general_kernels_at_every_instance_width(dtype):
    failures, ran = [], 0
    for case, full in _cases(dtype):
        p = OP.plan(V6, case.shape[1], torch.cuda.get_device_capability(), dtype)
        want = f"{p.name}{'_full' if full else ''}_{DTYPES[dtype]}"
        for dist in ("normal", "special", "large"):
            cmp, kernel = _check(lambda i, o, case=case: run_variant(OP, V6, case, i, o), case, dist, seed=ran)
            ran += 1
            if kernel != want:
                failures.append(f"{case.label} [{dist}] ran {kernel}, expected {want}")
            if not cmp.ok:
                failures.append(f"{case.label} [{dist}] via {kernel}: {cmp.summary(max_lines=3)}")
    assert not failures, f"{len(failures)} of {ran} runs:\n" + "\n".join(failures[:30])


# meta (header values, also passed as macros by op.defines) and extra macros of each knob build
KNOB_BUILDS = {
    "PK_LOAD=1": ({}, {"PK_LOAD": 1}),
    "PK_LOAD=2": ({}, {"PK_LOAD": 2}),
    "PK_KEEP_EXP=1": ({}, {"PK_KEEP_EXP": 1}),
    "lanes_per_row=16": ({"lanes_per_row": "16"}, {}),
    "warps_per_block=1": ({"warps_per_block": "1"}, {}),
    "warps_per_block=8": ({"warps_per_block": "8"}, {}),
    "block_elems=64": ({"block_elems": "64"}, {}),
    "block_elems=16": ({"block_elems": "16"}, {}),
}


@pytest.mark.parametrize("label", list(KNOB_BUILDS))
def test_knob_builds_are_correct(label):
    meta, extra = KNOB_BUILDS[label]
    v = dataclasses.replace(V6, meta={**V6.meta, **meta})
    defines = {**OP.defines(v), **extra}
    module = Module(compile_file(v.path, arch=target_arch(v), defines=defines), defines)
    # Odd row counts: with two rows a warp the last warp's second half has no row; with 8-warp
    # blocks the last block is partial. Both widths of the sweep, exact and not, masked rows.
    cases = [Case((7, 1024), "bfloat16"), Case((7, 1000), "bfloat16"), Case((7, 1024), "float32"),
             Case((3, 1024), "bfloat16", offset=1, layout="mixed_alignment"), Case((7, 512), "bfloat16"),
             Case((3, 8192), "bfloat16"), Case((3, 8192), "float32"), Case((3, 8191), "bfloat16", offset=3),
             Case((4, 5000), "bfloat16", params=(("mask", True),)), Case((2, 16384), "bfloat16"),
             Case((2, 32768), "bfloat16")]
    failures, ran = [], 0
    for case in cases:
        if OP.supports(v, case):
            continue
        kernel = module.kernel(OP.kernel_name(case.dtype))
        for dist in ("normal", "special"):
            cmp, ran_k = _check(lambda i, o, case=case: OP.launch(kernel, v, case, i, o), case, dist, seed=ran)
            ran += 1
            if not cmp.ok:
                failures.append(f"{label} {case.label} [{dist}] via {ran_k}: {cmp.summary(max_lines=3)}")
    assert ran >= 18, ran
    assert not failures, "\n".join(failures[:30])
