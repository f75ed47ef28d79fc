"""transpose v5_tma_tiles on the GPU: every test case supports() admits (both dtypes) and shapes that
are not multiples of a tile (boxes that cross the edges read zeros and store clipped) through
kernelab's checker (NaN-poisoned outputs, guard bands, input snapshots, repeated calls, stream
order); every knob setting the CPU tests compile, on the same shapes; the bench shape bit-exact;
and a misaligned tensor that bypasses supports() refused at launch with the constraint named."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from kernelab.check import check_callable, check_variant
from kernelab.gpu import ArgumentError, Module, compile_file
from kernelab.ops import Case, discover, run_variant
from kernelab.ops.build import target_arch

pytestmark = pytest.mark.gpu

OP = discover()["transpose"]
V5 = OP.variant("v5_tma_tiles")

# TMA-describable shapes that are not multiples of the 64 x 64 (fp32) / 128 x 128 (bf16) tiles:
# smaller than one box on both sides (16 x 16, 24 x 40), one row tile tall or wide (8 x 4096,
# 4096 x 8), 2056 x 1032 (a partial tile at both far edges), 4104 x 4104 (65 x 65 fp32 tiles over
# 264 persistent blocks: 16-17 turns a block, the ring's phases wrap several times), and an
# aligned column slice of a wider matrix (row stride 1008 > 1000 columns).
EXTRA = [Case(s, dt) for dt in OP.dtypes
         for s in ((16, 16), (24, 40), (8, 4096), (4096, 8), (2056, 1032), (4104, 4104))]
EXTRA += [Case((1000, 1000), dt, layout="column_slice", params=(("col_start", 8),)) for dt in OP.dtypes]
SMALL = 1 << 17  # cases up to this many elements also run every distribution the op declares


def _cases(dtype):
    out = [c for c in OP.test_cases() + EXTRA if c.dtype == dtype and OP.supports(V5, c) is None]
    assert len(out) >= 12, [c.label for c in out]  # never vacuous: the suite's cases plus EXTRA
    return out


def _dists(case):
    return None if case.numel <= SMALL else ("normal",)  # None: every distribution (NaN/Inf included)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_every_supported_case_passes_the_checker(dtype):
    failures = []
    for case in _cases(dtype):
        r = check_variant(OP, V5, case, seeds=(0,), dists=_dists(case))
        if not r.ok:
            failures.append(f"{case.label}: {r.reason}: {r.detail[:300]}")
    assert not failures, "\n".join(failures)


# (meta overrides, extra macros): mirror of tests/cpu/test_transpose_tma.py's KNOBS.
KNOBS = [({"persistent": 0}, {}), ({"out_bufs": 1}, {}), ({"out_bufs": 2}, {}), ({"stages": 1}, {}),
         ({"stages": 4, "stages_bf16": 2}, {}), ({}, {"GROUP": 1}), ({"block": 128}, {}), ({"block": 512}, {}),
         ({"tile_rows": 32, "tile_cols": 32, "tile_rows_bf16": 64, "tile_cols_bf16": 64}, {}),
         ({"tile_rows": 128, "tile_cols": 64, "tile_rows_bf16": 64, "tile_cols_bf16": 128}, {}),
         ({"tile_rows": 32, "tile_cols": 256, "tile_rows_bf16": 256, "tile_cols_bf16": 64, "stages": 2,
           "out_bufs": 2}, {})]
KNOB_SHAPES = ((24, 40), (1000, 1000), (2056, 1032), (4104, 4104))


def _runner(meta, macros):
    v = dataclasses.replace(V5, meta={**V5.meta, **{k: str(x) for k, x in meta.items()}})
    d = {**OP.defines(v), **macros}
    module = Module(compile_file(v.path, arch=target_arch(v), defines=d), d)

    def runner(case):
        kernel = module.kernel(OP.kernel_name(case.dtype))
        return lambda inputs, outputs: v.launcher(OP, kernel, v, case, inputs, outputs)
    return runner


@pytest.mark.parametrize("meta,macros", KNOBS, ids=lambda d: ",".join(f"{k}={x}" for k, x in d.items()) or "-")
def test_each_knob_setting(meta, macros):
    runner = _runner(meta, macros)
    failures = []
    for dt in OP.dtypes:
        for shape in KNOB_SHAPES:
            case = Case(shape, dt)
            r = check_callable(runner(case), OP, case, seeds=(0,), dists=_dists(case), name=f"v5 {meta} {macros}")
            if not r.ok:
                failures.append(f"{case.label}: {r.reason}: {r.detail[:300]}")
    assert not failures, f"{meta} {macros}:\n" + "\n".join(failures)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_at_the_bench_size(dtype):
    """16384^2: 65536 fp32 / 16384 bf16 tiles over the persistent grid, bit-exact, through op.launch."""
    case = Case((16384, 16384), dtype)
    m = OP.make_inputs(case, 0, "cuda", "uniform")["m"]
    out = OP.make_outputs(case, {"m": m})
    out["out"].fill_(float("nan"))
    run_variant(OP, V5, case, {"m": m}, out)
    assert torch.equal(out["out"], m.t())
    out["out"].fill_(float("nan"))
    from kernelab.ops.build import load_variant

    OP.launch(load_variant(OP, V5).kernel(OP.kernel_name(dtype)), V5, case, {"m": m}, out)  # the delegation
    assert torch.equal(out["out"], m.t())


def test_a_misaligned_view_that_bypasses_supports_is_refused_at_launch():
    case = Case((1000, 1000), "float32", offset=1)
    assert OP.supports(V5, case) is not None
    inputs = OP.make_inputs(case, 0, "cuda")
    with pytest.raises(ArgumentError, match="16-byte aligned"):
        run_variant(OP, V5, case, inputs, OP.make_outputs(case, inputs))
    torch.cuda.synchronize()  # nothing was launched: the context is intact
