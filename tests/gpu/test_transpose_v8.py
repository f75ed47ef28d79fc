"""transpose v8_lean_tiles on the GPU: bit-for-bit equal to torch's transpose (m.t()) for fp32 and
bf16, NaN-poisoned outputs with guard bands, at its default build (the header's `@full_tiles 1`:
the whole-tile instance with 32-bit offsets where op.py's full_tiles allows it), with the contract
kernel everywhere (`@full_tiles 0`) at each experiment knob (LD_KIND 1 and 2: plain and
evict_last loads; ORDER 1: blocks renumbered down the columns), and at 64 threads a block (fp32 4
vectors a thread, bf16 2; the header's 128: 2 and 1). The cases cover both of its paths (16-byte vectors
on whole tiles of aligned rows; v2's element path on edge tiles, misaligned views and rows that are
not whole vectors) and both of its grid shapes (a tile a block with no loop; the row-tile loop past
65535 row tiles, where ORDER 1 falls back to the default order). tests/gpu/test_ops_mem_a.py also
runs the default on every test case of the op."""

from __future__ import annotations

import dataclasses

import pytest

from kernelab.gpu import Module, compile_file
from kernelab.ops import Case, discover
from kernelab.ops.build import target_arch

from ._transpose_bits import transpose_bit_problems

pytestmark = pytest.mark.gpu

OP = discover()["transpose"]
V8 = OP.variant("v8_lean_tiles")


def _cases(dtype: str, tall: bool) -> list[Case]:
    vec = 4 if dtype == "float32" else 8
    cases = [
        Case((1, 1), dtype), Case((63, 65), dtype), Case((256, 512), dtype), Case((96, 4096), dtype),
        Case((2117, 449), dtype),  # whole tiles and a cut row and column of them
        Case((256, 512), dtype, offset=1),  # misaligned: every tile on the element path
        Case((256, 512), dtype, offset=1, layout="mixed_alignment"),  # m misaligned, out aligned
        Case((127, 129), dtype, layout="column_slice", params=(("col_start", 1),)),  # ld not whole vectors
        Case((256, 512 - vec), dtype, layout="column_slice", params=(("col_start", vec),)),  # aligned slice
        Case((260, 512), dtype),  # rows not whole vectors of out in bf16 (260 x 2 B): the element path
    ]
    if tall:  # more row tiles than gridDim.y holds: the loop (65537 row tiles; a whole column tile
        # on the vector path and a cut one on the element path)
        cases.append(Case((65535 * 32 + 64, 36), dtype))
    return cases


def _problems(launch, case: Case, dist: str) -> list[str]:
    return transpose_bit_problems(OP, launch, case, dist)


def _launcher(meta: dict, defines: dict):
    v = dataclasses.replace(V8, meta={**V8.meta, **meta})
    d = {**OP.defines(v), **defines}
    module = Module(compile_file(v.path, arch=target_arch(v), defines=d), d)

    def launch(case, inputs, outputs):
        OP.launch(module.kernel(OP.kernel_name(case.dtype)), v, case, inputs, outputs)
    return launch


# The header has `@full_tiles 1`: the default builds launch the whole-tile instance where it applies
# (256 x 512, 96 x 4096, the aligned slice) and the contract kernel elsewhere; "contract kernel"
# builds take the contract kernel everywhere.
BUILDS = {
    "default": ({}, {}),
    "contract kernel": ({"full_tiles": "0"}, {}),
    "plain loads": ({"full_tiles": "0"}, {"LD_KIND": 1}),
    "evict_last loads": ({"full_tiles": "0"}, {"LD_KIND": 2}),
    "column order": ({"full_tiles": "0"}, {"ORDER": 1}),
    "64-thread blocks": ({"full_tiles": "0", "block": "64"}, {}),
    "full tiles, 64-thread blocks": ({"block": "64"}, {}),
}


@pytest.mark.parametrize("build", list(BUILDS))
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_bit_exact_against_torch(build, dtype):
    launch = _launcher(*BUILDS[build])
    problems = []
    for case in _cases(dtype, tall=build in ("default", "column order", "contract kernel")):
        for dist in (("special", "normal") if case.numel <= 1 << 16 else ("normal",)):
            problems += _problems(launch, case, dist)
    assert not problems, "\n".join(problems[:10])

