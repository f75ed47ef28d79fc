"""gelu_bias v6_lean_small without a GPU: where its launcher takes the lean kernel (and where it
hands the tensor to v5's launch), the grid and arguments it passes, and the SASS the lean kernel
is for: 16-byte loads issued a dozen instructions in, one load and one store, no branch."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import kernelab.gpu
from kernelab.analysis.sass import run_cuobjdump
from kernelab.gpu import compile_file, parse_signatures, toolchain
from kernelab.ops import Case, discover

from ._launch_recorder import record_launches

OP = discover()["gelu_bias"]
V5, V6 = OP.variant("v5_short_fit"), OP.variant("v6_lean_small")
lean_grid = V6.launcher.__globals__["lean_grid"]
WAVE = 132 * 2048  # an H200's threads at full occupancy


@pytest.fixture
def h200(monkeypatch):
    """device_info() as an H200's SM count (resident_blocks reads it), 16 blocks of 128 an SM."""
    monkeypatch.setattr(kernelab.gpu, "device_info", lambda *a, **k: type("D", (), {"sm_count": 132})())
    V6.launcher.__globals__["resident_blocks"].__globals__["_resident"].clear()


def _record(v, case):
    (name, args, kw), = record_launches(OP, [(v, case)], blocks_per_sm=16)
    return name, args, kw


def test_lean_geometry_comes_from_the_header():
    assert V6.meta_int("lean_block") == 128 and OP.defines(V6)["LEAN_BLOCK"] == 128
    assert V6.meta_int("lean_vec_bytes") == 16 and OP.defines(V6)["LEAN_VEC_BYTES"] == 16
    assert "LEAN_BLOCK" not in OP.defines(V5)
    # v5's geometry (op.launch reads it) for every tensor the lean kernel does not take
    assert {k: v for k, v in V6.meta.items() if not k.startswith("lean_")} == V5.meta


def test_lean_grid_conditions():
    ok = (0, 16, 4096)
    assert lean_grid(256, 1024, 2, ok, 128, WAVE) == (1, 256)  # bf16: 128 vectors a row, a block a row
    assert lean_grid(256, 1024, 4, ok, 128, WAVE) == (2, 256)  # fp32: 256 vectors a row
    assert lean_grid(3, 8, 4, ok, 128, WAVE) is None  # 2 vectors a row: most of a block idle, v5 packs rows
    assert lean_grid(64, 512, 2, ok, 128, WAVE) == (1, 64)  # 64 vectors: half a block, the least it takes
    for itemsize in (2, 4):
        assert lean_grid(256, 1002, itemsize, ok, 128, WAVE) is None  # a row is not whole 16-byte vectors
    assert lean_grid(256, 1024, 2, (0, 8, 4096), 128, WAVE) is None  # bias 8-byte aligned only
    assert lean_grid(256, 1024, 2, (2, 16, 4096), 128, WAVE) is None  # x one element in
    assert lean_grid(0, 1024, 2, ok, 128, WAVE) is None and lean_grid(256, 0, 2, ok, 128, WAVE) is None
    assert lean_grid(2112, 1024, 2, ok, 128, WAVE) == (1, 2112)  # 270336 threads: exactly one wave
    assert lean_grid(2113, 1024, 2, ok, 128, WAVE) is None  # one block more: v5's grid
    assert lean_grid(70000, 128, 2, ok, 128, 10**9) is None  # grid.y past 65535
    assert lean_grid(256, 1024, 2, ok, 64, WAVE) == (2, 256)  # `@lean_block 64`: two blocks a row
    assert lean_grid(64, 512, 2, ok, 256, WAVE) is None  # 64 vectors in a 256-thread block
    assert lean_grid(256, 1024, 2, (0, 8, 4096), 128, WAVE, vec_bytes=8) == (2, 256)  # 8-byte vectors: 8-aligned
    assert lean_grid(256, 1020, 2, ok, 128, WAVE, vec_bytes=8) == (2, 256)  # 255 vectors of 4 bf16
    assert lean_grid(256, 1024, 2, (0, 4, 4096), 128, WAVE, vec_bytes=8) is None
    assert lean_grid(1056, 1024, 2, ok, 128, WAVE, vec_bytes=8) == (2, 1056)  # one wave, twice the threads
    assert lean_grid(1057, 1024, 2, ok, 128, WAVE, vec_bytes=8) is None


@pytest.mark.parametrize("dtype,sfx,vec", [("bfloat16", "bf16", 8), ("float32", "f32", 4)])
def test_launch_takes_the_lean_kernel_only_where_it_applies(h200, dtype, sfx, vec):
    name, args, kw = _record(V6, Case((256, 1024), dtype))
    assert name == f"gelu_bias_lean_{sfx}"
    assert kw == {"grid": (1024 // vec // 128, 256), "block": 128}
    x, bias, y, chunks = args
    assert chunks == 1024 // vec and x.shape == y.shape == (256, 1024) and bias.shape == (1024,)
    for case in (Case((4096, 8192), dtype), Case((256, 1024), dtype, offset=1), Case((3, 8), dtype),
                 Case((1009, 1013), dtype), Case((256, 1024), dtype, offset=1, layout="mixed_alignment")):
        name, args, kw = _record(V6, case)
        assert name == f"gelu_bias_{sfx}", case.label
        ref = _record(V5, case)
        assert (name, kw, [tuple(a.shape) if isinstance(a, torch.Tensor) else a for a in args]) == \
               (ref[0], ref[2], [tuple(a.shape) if isinstance(a, torch.Tensor) else a for a in ref[1]]), case.label


def test_launch_checks_shapes_before_choosing(h200):
    x = torch.zeros(256, 1024, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match=r"bias \[N\].*bias \(1000,\)"):
        V6.launcher(OP, None, V6, Case((256, 1024), "bfloat16"), {"x": x, "bias": torch.zeros(1000)},
                    {"y": torch.empty_like(x)})


def _sass(cubin, fun):
    return [l for l in run_cuobjdump(cubin, "-sass", "-fun", fun).splitlines() if re.match(r"\s*/\*[0-9a-f]{4}\*/", l)]


@pytest.mark.skipif(toolchain.cuobjdump_path() is None,
                    reason="cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
def test_lean_sass_loads_early_and_does_not_branch():
    m = compile_file(V6.path, arch="sm_90", defines=OP.defines(V6))
    for sfx in ("bf16", "f32"):
        ins = _sass(m.cubin, f"gelu_bias_lean_{sfx}")
        general = _sass(m.cubin, f"gelu_bias_{sfx}")
        loads = [n for n, l in enumerate(ins) if "LDG" in l]
        assert len(loads) == 2 and all("LDG.E.128" in ins[n] for n in loads), sfx  # x and bias, 16 bytes each
        assert sum("STG" in l for l in ins) == 1 and "STG.E.128" in next(l for l in ins if "STG" in l)
        assert max(loads) <= 16, (sfx, loads)  # sm_90: the second load is instruction 15 (0x00f0)
        body = ins[:next(n for n, l in enumerate(ins) if "STG" in l)]
        assert not any(re.search(r"\bBRA\b|\bBSSY\b|\b(LDL|STL)\b", l) for l in body), sfx
        assert 4 * len(ins) < len(general), (sfx, len(ins), len(general))  # v5's kernel: loops and fallback


def test_lean17_sweep_dry_run_replays_every_candidate():
    """The sweep that will time v6 (SWEEP_SET=lean17): every candidate compiles and its launch,
    the lean kernel included, replays against the parsed signatures."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "SWEEP_SET": "lean17", "PYTHONPATH": str(root / "src")}
    r = subprocess.run([sys.executable, str(root / "scripts" / "sweep_membound_s14.py"), "--ops", "gelu_bias",
                        "--dry-run"], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0 and "0 problem(s)" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
    assert r.stdout.count("v6_lean_small") == 13  # 6 candidates at each small shape, 1 at 4096 x 8192
    assert r.stdout.count("lean_vec_bytes=8") == 4


V6_8 = dataclasses.replace(V6, meta={**V6.meta, "lean_vec_bytes": "8"})


def test_eight_byte_vectors_launch_and_sign_as_uint2(h200):
    name, args, kw = _record(V6_8, Case((256, 1024), "bfloat16"))
    assert name == "gelu_bias_lean_bf16" and kw == {"grid": (2, 256), "block": 128} and args[3] == 256
    sigs = parse_signatures(V6.path.read_text(), OP.defines(V6_8), [V6.path.parent])
    assert [p.base for p in sigs["gelu_bias_lean_bf16"]][:3] == ["uint2"] * 3
    assert [p.base for p in parse_signatures(V6.path.read_text(), OP.defines(V6), [V6.path.parent])
            ["gelu_bias_lean_f32"]][:3] == ["uint4"] * 3
    assert "gelu_bias_bf16" in sigs  # v5's kernel, from the included file


@pytest.mark.skipif(toolchain.cuobjdump_path() is None,
                    reason="cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
def test_eight_byte_vectors_do_half_the_math():
    """The upper half of the widened vector is never stored, so NVVM drops its math: half the MUFU
    (rcp, ex2) of the 16-byte kernel, 8-byte loads and store, still no branch."""
    m16 = compile_file(V6.path, arch="sm_90", defines=OP.defines(V6))
    m8 = compile_file(V6.path, arch="sm_90", defines=OP.defines(V6_8))
    for sfx, elems in (("bf16", 8), ("f32", 4)):
        ins16, ins8 = _sass(m16.cubin, f"gelu_bias_lean_{sfx}"), _sass(m8.cubin, f"gelu_bias_lean_{sfx}")
        mufu16, mufu8 = sum("MUFU" in l for l in ins16), sum("MUFU" in l for l in ins8)
        assert mufu16 == 2 * elems and mufu8 == elems, (sfx, mufu16, mufu8)
        loads = [l for l in ins8 if "LDG" in l]
        assert len(loads) == 2 and all("LDG.E.64" in l for l in loads), loads
        assert [l for l in ins8 if "STG" in l][0].split()[1].startswith("STG.E.64")
        body = ins8[:next(n for n, l in enumerate(ins8) if "STG" in l)]
        assert not any(re.search(r"\bBRA\b|\bBSSY\b", l) for l in body), sfx
