"""transpose v6_register_blocks on the GPU: every V x V register block lands transposed (bit-exact:
a transpose moves bits), under its default tiles and the sweep's other tile shapes, on shapes that
cut blocks and tiles at every edge, misaligned views, and enough row tiles that the grid loops."""
from __future__ import annotations

import dataclasses

import pytest
import torch

from kernelab.check import check_variant
from kernelab.gpu import Module, compile_file
from kernelab.ops import Case, discover
from kernelab.ops.build import target_arch

pytestmark = pytest.mark.gpu
OP = discover()["transpose"]
V6 = OP.variant("v6_register_blocks")
SHAPES = [(256, 512), (64, 128), (65, 129), (7, 9), (1, 1000), (1000, 1), (300, 4104), (70000, 16)]
# (meta, why): tiles of other shapes (BLOCK = (TILE_COLS / V) x (TILE_ROWS / V) threads)
KNOBS = [({}, "defaults"),
         ({"block": "64", "tile_rows": "32", "tile_cols": "32", "tile_rows_bf16": "32", "tile_cols_bf16": "128"},
          "64 threads"),
         ({"block": "256", "tile_rows": "64", "tile_cols": "64", "tile_rows_bf16": "128", "tile_cols_bf16": "128"},
          "256 threads")]


def _module(meta):
    v = dataclasses.replace(V6, meta={**V6.meta, **meta})
    d = OP.defines(v)
    return v, Module(compile_file(v.path, arch=target_arch(v), defines=d), d)


@pytest.mark.parametrize("meta,why", KNOBS, ids=[w for _, w in KNOBS])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_register_blocks_transpose_every_shape_bit_exactly(meta, why, dtype):
    v, mod = _module(meta)
    bad = []
    for shape in SHAPES:
        case = Case(shape, dtype)
        m = OP.make_inputs(case, 0, "cuda")["m"]
        out = torch.full((shape[1], shape[0]), float("nan"), dtype=m.dtype, device="cuda")
        OP.launch(mod.kernel(OP.kernel_name(dtype)), v, case, {"m": m}, {"out": out})
        torch.cuda.synchronize()
        if not torch.equal(out.view(torch.int16 if dtype == "bfloat16" else torch.int32),
                           m.t().contiguous().view(torch.int16 if dtype == "bfloat16" else torch.int32)):
            bad.append(shape)
    assert not bad, f"v6 ({why}) {dtype}: wrong transposes at {bad}"


def test_register_blocks_pass_the_checker_on_offsets_and_slices():
    """The checker's cases that cut 16-byte alignment on one side only (offset views, column slices,
    mixed alignment): the element path must take them, with nothing written outside out."""
    cases = [c for c in OP.test_cases() if c.offset or c.layout != "contiguous"]
    assert len(cases) >= 6
    for case in cases:
        r = check_variant(OP, V6, case, seeds=(0,))
        assert r.ok, f"{case.label} {case.layout} offset {case.offset}: {r.reason}: {r.detail[:400]}"
