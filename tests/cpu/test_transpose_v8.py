"""transpose v8_lean_tiles without a GPU: when op.py launches the whole-tile instance
(`@full_tiles 1` and full_tiles(): whole 32 x 32 tiles, a tile a block, 16-byte vectors on both
sides, 32-bit offsets), what the launch calls, and the SASS of the instance: its 16-byte loads and
stores, no element path, a short prologue, no spills on any arch."""

from __future__ import annotations

import dataclasses
import re

import pytest
import torch

from kernelab.analysis.sass import run_cuobjdump
from kernelab.gpu import compile_file, toolchain
from kernelab.ops import Case, discover
from kernelab.ops.transpose import op as transpose_op

from ._launch_recorder import record_launches

OP = discover()["transpose"]
V8 = OP.variant("v8_lean_tiles")
FULL = dataclasses.replace(V8, meta={**V8.meta, "full_tiles": "1"})


def _record(v, case):
    """The kernel name and grid OP.launch calls for `case` on CPU tensors (a stand-in module)."""
    (name, args, kw), = record_launches(OP, [(v, case)])
    return name, kw["grid"]


@pytest.mark.parametrize("dtype,sfx", [("float32", "f32"), ("bfloat16", "bf16")])
def test_launch_takes_the_whole_tile_instance_only_where_it_applies(dtype, sfx):
    assert V8.meta_int("full_tiles", 0) == 1  # on in the header (session 13's sweep)
    bare = dataclasses.replace(V8, meta={**V8.meta, "full_tiles": "0"})
    assert _record(bare, Case((256, 512), dtype))[0] == f"transpose_{sfx}"
    assert _record(V8, Case((256, 512), dtype))[0] == f"transpose_full_{sfx}"
    assert _record(FULL, Case((256, 512), dtype)) == (f"transpose_full_{sfx}", (16, 8))
    assert _record(FULL, Case((96, 4096), dtype))[0] == f"transpose_full_{sfx}"
    vec = 4 if dtype == "float32" else 8
    aligned_slice = Case((256, 512 - 32), dtype, layout="column_slice", params=(("col_start", 32),))
    assert _record(FULL, aligned_slice)[0] == f"transpose_full_{sfx}"
    for case in (Case((63, 64), dtype), Case((256, 500), dtype), Case((256, 512), dtype, offset=1),
                 Case((256, 512), dtype, offset=1, layout="mixed_alignment"),
                 Case((256, 512 - vec), dtype, layout="column_slice", params=(("col_start", vec),))):
        assert _record(FULL, case)[0] == f"transpose_{sfx}", case.label


def test_full_tiles_predicate():
    m = torch.empty(1 << 20, dtype=torch.bfloat16)
    out = torch.empty(1 << 20, dtype=torch.bfloat16)
    ok = transpose_op.full_tiles
    assert ok(m, out, 256, 512, 512, 32, 32)
    assert not ok(m, out, 250, 512, 512, 32, 32) and not ok(m, out, 256, 500, 512, 32, 32)  # cut tiles
    assert not ok(m[1:], out, 256, 512, 512, 32, 32) and not ok(m, out[1:], 256, 512, 512, 32, 32)  # misaligned
    assert not ok(m, out, 256, 512, 516, 32, 32)  # rows of m not whole vectors
    assert not ok(m, out, 65536 * 32, 32, 32, 32, 32)  # more row tiles than gridDim.y: the loop
    assert not ok(m, out, 32768, 65536, 65536, 32, 32)  # 2^31 elements: past 32-bit offsets
    assert ok(m, out, 32768, 65504, 65504, 32, 32)  # just under


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_100", "sm_120"])
def test_whole_tile_instance_compiles_without_spills(arch):
    for v in (FULL, dataclasses.replace(FULL, meta={**FULL.meta, "block": "64"})):
        m = compile_file(v.path, arch=arch, defines=OP.defines(v))
        for sfx in ("f32", "bf16"):  # no spills, and no more registers than the contract kernel's
            r, c = m.resources[f"transpose_full_{sfx}"], m.resources[f"transpose_{sfx}"]
            assert r.spill_stores == 0 and r.spill_loads == 0 and r.registers <= c.registers, f"{arch}: {r} vs {c}"


@pytest.mark.skipif(toolchain.cuobjdump_path() is None, reason="cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
def test_whole_tile_sass_is_short_and_16_bytes_wide():
    m = compile_file(V8.path, arch="sm_90", defines=OP.defines(V8))
    for k, vecs, contract in (("transpose_full_bf16", 1, "transpose_bf16"), ("transpose_full_f32", 2, "transpose_f32")):
        ins = [l for l in run_cuobjdump(m.cubin, "-sass", "-fun", k).splitlines() if re.match(r"\s*/\*[0-9a-f]{4}\*/", l)]
        loads = [l for l in ins if "LDG" in l]
        assert len(loads) == vecs and all("LDG.E.128" in l for l in loads), loads  # no element path
        assert sum("STG.E.128" in l for l in ins) == vecs and sum("STG" in l for l in ins) == vecs
        assert not any(re.search(r"\b(LDL|STL)\b", l) for l in ins)
        first = next(n for n, l in enumerate(ins) if "LDG" in l)
        c_ins = [l for l in run_cuobjdump(m.cubin, "-sass", "-fun", contract).splitlines()
                 if re.match(r"\s*/\*[0-9a-f]{4}\*/", l)]
        c_first = next(n for n, l in enumerate(c_ins) if "LDG.E.128" in l)
        assert first <= 24 and first < c_first / 2, (k, first, c_first)  # sm_90: 16 / 48 bf16, 21 / 61 fp32
