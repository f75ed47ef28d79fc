"""transpose v5_tma_tiles without a GPU: its shared-memory transpose replayed in Python against a
model of TMA's 128-byte swizzle (every element lands where the TMA store reads it, every block is
visited once, no bank conflicts in any LDS.128 / STS.128 phase), supports() refusing exactly the
cases TMA cannot describe with the constraint named, the knobs' checks, the launcher's geometry with
the driver faked out, and the kernel compiled for sm_90 / sm_100 / sm_120 (and every knob setting
the GPU tests run) with no spills and the TMA instructions in its SASS."""

from __future__ import annotations

import dataclasses
import math
import re
from collections import defaultdict

import pytest
import torch

from kernelab.gpu import compile_file, toolchain
from kernelab.ops import Case, compile_variant, discover
from kernelab.ops.build import target_arch
from kernelab.ops.transpose.op import SMEM_ALIGN_SLACK, is_tma, tma_geometry

OP = discover()["transpose"]
V5 = OP.variant("v5_tma_tiles")
ARCHS = ("sm_90", "sm_100", "sm_120")


def with_meta(**meta) -> "object":
    return dataclasses.replace(V5, meta={**V5.meta, **{k: str(v) for k, v in meta.items()}})


# ---- the shared-memory transpose, line for line against a model of the TMA -------------------

def swizzled(slab_base: int, row: int, byte_in_row: int) -> int:
    """TMA's 128-byte swizzle inside a 1024-byte aligned slab of 128-byte rows: 16-byte chunk c of row
    r lands at chunk c ^ (r % 8) (address bits [4:6] ^= bits [7:9])."""
    return slab_base + row * 128 + (((byte_in_row // 16) ^ (row % 8)) * 16) + byte_in_row % 16


def replay(e: int, tr: int, tc: int, block: int):
    """Run transpose_block for every thread over one tile. Returns (out_smem {byte address: m element
    (i, j) of the tile}, phases: [(turn, warp, k, 'lds'|'sts', [chunk address per lane])], blocks seen)."""
    p, slab = 16 // e, 128 // e
    tile_bytes = tr * tc * e
    in_base, out_base = 0, tile_bytes  # both 1024-byte aligned, as the kernel's buffers
    # What the TMA load leaves in the input stage: element (r, x) of the tile at its swizzled address.
    in_smem = {}
    for r in range(tr):
        for x in range(tc):
            q, xx = divmod(x, slab)
            a0 = swizzled(in_base + q * tr * 128, r, xx * e)
            in_smem[a0] = (r, x)
    nb = (tr // p) * (tc // p)
    c_slabs = tc // (8 * p)
    out_smem, seen, phases = {}, [], []
    for turn in range(math.ceil(nb / block)):
        lanes_lds = defaultdict(list)  # (warp, k) -> chunk addresses in lane order
        lanes_sts = defaultdict(list)
        for tid in range(block):
            b = turn * block + tid
            if b >= nb:
                continue
            l, d, g = b & 7, (b >> 3) & 7, b >> 6
            a = (g // c_slabs) * 8 + ((l + d) & 7)
            c = (g % c_slabs) * 8 + l
            seen.append((a, c))
            in0 = in_base + (c >> 3) * (tr * 128) + a * p * 128 + (((c & 7) ^ ((a * p) & 7)) << 4)
            out0 = out_base + (a >> 3) * (tc * 128) + c * p * 128 + (((a & 7) ^ ((c * p) & 7)) << 4)
            rows = []  # v[k]: the P elements of the 16-byte chunk, in memory order
            for k in range(p):
                addr = (in0 ^ (k << 4)) + k * 128
                lanes_lds[(tid // 32, k)].append(addr)
                rows.append([in_smem[addr + n * e] for n in range(p)])
            for k in range(p):
                if e == 4:  # o = (v[0].k, v[1].k, v[2].k, v[3].k)
                    chunk = [rows[n][k] for n in range(4)]
                else:  # word w = prmt(v[2w].word(k/2), v[2w+1].word(k/2), k odd ? 0x7632 : 0x5410)
                    chunk = []
                    for w in range(4):
                        word = slice(2 * (k // 2), 2 * (k // 2) + 2)  # word k / 2: elements 2 (k / 2), + 1
                        lo, hi = rows[2 * w][word], rows[2 * w + 1][word]
                        chunk += [lo[k & 1], hi[k & 1]]  # 0x5410 (k even): low halves; 0x7632: high
                addr = (out0 ^ (k << 4)) + k * 128
                lanes_sts[(tid // 32, k)].append(addr)
                for n in range(p):
                    assert addr + n * e not in out_smem, "a byte of the output buffer written twice"
                    out_smem[addr + n * e] = chunk[n]
        phases += [(turn, w, k, "lds", v) for (w, k), v in lanes_lds.items()]
        phases += [(turn, w, k, "sts", v) for (w, k), v in lanes_sts.items()]
    return out_smem, phases, seen


GEOMETRIES = [  # (element bytes, TILE_ROWS, TILE_COLS, BLOCK): the defaults, and every tile the knobs allow
    (4, 64, 64, 256), (2, 128, 128, 256), (4, 32, 32, 256), (4, 32, 32, 64), (4, 64, 128, 256), (4, 128, 64, 256),
    (4, 256, 32, 256), (4, 32, 256, 512), (4, 64, 64, 128), (4, 64, 64, 1024), (2, 64, 64, 256), (2, 64, 128, 128),
    (2, 128, 64, 256), (2, 256, 64, 256), (2, 64, 256, 512), (2, 128, 128, 96)]


@pytest.mark.parametrize("geom", GEOMETRIES, ids=lambda g: f"{8 * g[0]}bit-{g[1]}x{g[2]}-b{g[3]}")
def test_smem_transpose_puts_every_element_where_the_tma_store_reads_it(geom):
    e, tr, tc, block = geom
    slab = 128 // e
    out_smem, _, seen = replay(e, tr, tc, block)
    p = 16 // e
    assert sorted(seen) == [(a, c) for a in range(tr // p) for c in range(tc // p)], "every P x P block once"
    # The TMA store reads out-tile element (j, i) (out row j = column j of m, column i = row i of m)
    # from its swizzled address in slab i // SLAB of TC rows.
    expect = {}
    for j in range(tc):
        for i in range(tr):
            q, ii = divmod(i, slab)
            expect[swizzled(tr * tc * e + q * tc * 128, j, ii * e)] = (i, j)
    assert out_smem == expect


def tile_coords(t, n_x, n_y, group):
    """TileOrder::coords (v4's): linear tile index -> (row tile, column tile)."""
    if group >= 65536:
        return t % n_y, t // n_y
    g_rows = min(group, n_y)
    per_group = g_rows * n_x
    g, k = divmod(t, per_group)
    base = g * g_rows
    rows_here = min(g_rows, n_y - base)
    tx, ty = divmod(k, rows_here)
    return base + ty, tx


@pytest.mark.parametrize("e,tr,tc,shape,group", [
    (4, 64, 64, (24, 40), 1 << 20), (4, 64, 64, (100, 72), 1 << 20), (4, 32, 256, (70, 300), 1),
    (2, 128, 128, (130, 200), 1 << 20), (2, 64, 128, (200, 66), 3), (2, 256, 64, (8, 520), 1 << 20),
    (4, 128, 64, (257, 129), 2)])
def test_tile_loop_model_writes_each_output_element_once_from_m(e, tr, tc, shape, group):
    """The kernel's loop with TMA's semantics: load boxes (x = column of m, y = row) that start past m's
    last column are not issued (their stage bytes stay stale), the rest read zeros outside m; store boxes
    (x = column of out = row of m, y = row of out) that start past R are not issued, the rest are clipped
    to out. Every element of out is written once, with m's element, and nothing stale or zero reaches it."""
    rows, cols = shape
    slab = 128 // e
    out_smem, _, _ = replay(e, tr, tc, 256)
    src_of = {}  # (out-tile row j, column i) -> input-tile element (r, x) the threads moved there
    for j in range(tc):
        for i in range(tr):
            q, ii = divmod(i, slab)
            src_of[(j, i)] = out_smem[swizzled(tr * tc * e + q * tc * 128, j, ii * e)]
    n_x, n_y = -(-cols // tc), -(-rows // tr)
    written = {}
    for t in range(n_x * n_y):
        ty, tx = tile_coords(t, n_x, n_y, group)
        boxes = min(tc // slab, (cols - tx * tc - 1) // slab + 1)  # the kernel's load_tile
        loaded = {}  # input-tile element -> value ("zero" outside m)
        for q in range(boxes):
            x0, y0 = tx * tc + q * slab, ty * tr
            for r in range(tr):
                for xx in range(slab):
                    i, j = y0 + r, x0 + xx
                    loaded[(r, q * slab + xx)] = (i, j) if i < rows and j < cols else "zero"
        for q in range(tr // slab):  # the kernel's store loop
            x0, y0 = ty * tr + q * slab, tx * tc
            if x0 >= rows:
                continue
            for jj in range(tc):
                for ii in range(slab):
                    oj, oi = y0 + jj, x0 + ii  # out[oj][oi]
                    if oj < cols and oi < rows:  # clipped to out
                        v = loaded.get(src_of[(jj, q * slab + ii)], "stale")
                        assert (oj, oi) not in written, f"out[{oj}][{oi}] written twice"
                        written[(oj, oi)] = v
    assert written == {(j, i): (i, j) for i in range(rows) for j in range(cols)}


def _worst(addresses):
    """Most distinct 4-byte words in one bank among 16-byte accesses at `addresses`."""
    words = defaultdict(set)
    for a in addresses:
        for w in range(a // 4, a // 4 + 4):
            words[w % 32].add(w)
    return max(len(v) for v in words.values())


@pytest.mark.parametrize("geom", GEOMETRIES, ids=lambda g: f"{8 * g[0]}bit-{g[1]}x{g[2]}-b{g[3]}")
def test_every_lds128_and_sts128_phase_is_conflict_free(geom):
    """LDS.128 / STS.128 serve 8 lanes (128 bytes) a wavefront: the header's diagonal lane mapping puts
    the 8 lanes of every phase on 8 distinct 16-byte bank groups, on both sides, after the swizzle."""
    _, phases, _ = replay(*geom)
    for turn, warp, k, kind, addrs in phases:
        for ph in range(0, len(addrs), 8):
            assert _worst(addrs[ph:ph + 8]) == 1, f"{kind} turn {turn} warp {warp} row {k} phase {ph // 8}"


# ---- op.py: geometry, knobs, supports() ----------------------------------------------------------

def test_header_and_discovery():
    assert is_tma(V5) and not any(is_tma(v) for v in OP.variants() if v.name != V5.name)
    assert V5.summary.startswith("v5_tma_tiles:") and "What changed from v4" in V5.header
    assert "Predicted:" in V5.header and V5.min_arch == "sm_90"
    lines = [ln for ln in V5.header.splitlines() if ln.strip()]
    assert lines[-1] == "Measured: BENCHMARKS.md, transpose rows (full runs)."  # the header's last line
    assert V5.launcher is not None  # v5_tma_tiles.py


def test_default_geometry_and_shared_memory():
    f, b = tma_geometry(V5, "float32"), tma_geometry(V5, "bfloat16")
    assert (f.tile_rows, f.tile_cols, f.slab, f.block) == (64, 64, 32, 256)
    assert (f.stages, f.out_bufs, f.persistent) == (3, 3, True)
    assert (b.tile_rows, b.tile_cols, b.slab) == (128, 128, 64)
    assert f.smem == 6 * 16384 + SMEM_ALIGN_SLACK and b.smem == 6 * 32768 + SMEM_ALIGN_SLACK  # 97 KiB, 193 KiB
    assert OP.dynamic_smem(V5, Case((1000, 1000), "float32")) == f.smem
    one = tma_geometry(with_meta(persistent=0), "bfloat16")
    assert (one.ring, one.outs, one.smem) == (1, 1, 2 * 32768 + SMEM_ALIGN_SLACK)
    assert tma_geometry(with_meta(stages_bf16=2), "bfloat16").smem == 5 * 32768 + SMEM_ALIGN_SLACK
    assert tma_geometry(with_meta(stages_bf16=2), "float32").stages == 3
    assert f.tiles(1000, 1000) == 16 * 16 and b.tiles(1000, 1000) == 8 * 8


def test_defines_carry_the_knobs_and_leave_v0_to_v4_alone():
    assert OP.defines(V5) == {"BLOCK": 256, "TILE_ROWS": 64, "TILE_COLS": 64, "TILE_ROWS_BF16": 128,
                              "TILE_COLS_BF16": 128, "STAGES": 3, "OUT_BUFS": 3, "PERSISTENT": 1}
    assert OP.defines(with_meta(stages_bf16=2))["STAGES_BF16"] == 2
    for v in OP.variants():
        if v.name != V5.name:
            assert not {"STAGES", "OUT_BUFS", "PERSISTENT"} & set(OP.defines(v)), v.name
            assert OP.dynamic_smem(v, Case((64, 64), "float32")) == 0


@pytest.mark.parametrize("meta,match", [
    ({"tile_rows": 48}, r"@tile_rows = 48: a float32 tile side must be a multiple of 32"),
    ({"tile_cols": 512}, r"@tile_cols = 512: .*at most 256"),
    ({"tile_rows_bf16": 32}, r"@tile_rows_bf16 = 32: a bfloat16 tile side must be a multiple of 64"),
    ({"stages": 0}, r"@stages = 0: 1..8"), ({"stages_bf16": 9}, r"@stages_bf16 = 9: 1..8"),
    ({"out_bufs": 5}, r"@out_bufs = 5: 1..4"), ({"block": 48}, r"@block = 48: whole warps"),
    ({"persistent": 2}, r"@persistent = 2"),
    ({"tile_rows_bf16": 256, "tile_cols_bf16": 256}, r"bfloat16 needs 787456 B of shared memory.*Fix: fewer stages"),
])
def test_bad_knobs_are_refused_with_the_knob_named(meta, match):
    v = with_meta(**meta)
    dtype = "bfloat16" if any("bf16" in k for k in meta) else "float32"
    with pytest.raises(ValueError, match=match):
        tma_geometry(v, dtype)
    with pytest.raises(ValueError, match=match):
        OP.defines(v)  # before any compile
    assert re.search(match, OP.supports(v, Case((64, 64), dtype)))  # the suite skips it with the reason


def _case_ok(case) -> bool:
    return OP.supports(V5, case) is None


def test_supports_takes_exactly_the_cases_tma_can_describe():
    ok = {c.label for c in OP.test_cases() if _case_ok(c)}
    # 16-byte rows on both sides (R and the input's row stride multiples of 4 fp32 / 8 bf16) and
    # 16-byte aligned starts: the square powers of two, 256 x 512, 1000 x 1000 and the aligned slice.
    assert ok == {f"{s} {dt}" for dt in ("float32", "bfloat16") for s in ("32x32", "64x64", "256x512", "1000x1000")} | {
        "1000x996 float32 (column_slice, col_start=4)", "1000x992 bfloat16 (column_slice, col_start=8)"}


@pytest.mark.parametrize("case,words", [
    (Case((1000, 1000), "float32", offset=1), ["m starts 1 element(s) = 4 bytes", "16-byte aligned base",
                                               "out starts 1 element(s)"]),
    (Case((1000, 1000), "bfloat16", offset=1, layout="mixed_alignment"), ["m starts 1 element(s) = 2 bytes"]),
    (Case((256, 512), "float32", offset=2), ["m starts 2 element(s) = 8 bytes"]),
    (Case((1000, 999), "float32", layout="column_slice", params=(("col_start", 1),)),
     ["m starts 1 element(s) = 4 bytes"]),  # its row stride (1000) is fine
    (Case((127, 129), "float32", layout="column_slice", params=(("col_start", 4),)),
     ["m's row stride is 133 elements = 532 bytes", "multiple of 16 bytes (4 float32 elements)",
      "out's row stride is R = 127 elements"]),
    (Case((31, 33), "bfloat16"), ["m's row stride is 33 elements = 66 bytes",
                                  "out's row stride is R = 31 elements = 62 bytes"]),
    (Case((1, 1000), "float32"), ["out's row stride is R = 1 elements = 4 bytes"]),
    (Case((4099, 1), "bfloat16"), ["m's row stride is 1 elements = 2 bytes", "out's row stride is R = 4099"]),
])
def test_refusals_name_the_constraint(case, words):
    why = OP.supports(V5, case)
    assert why and why.startswith("v5_tma_tiles (TMA): ") and why.endswith("Other transpose variants run it")
    for w in words:
        assert w in why, why
    for v in OP.variants():  # the other variants keep every case
        if v.name != V5.name:
            assert OP.supports(v, case) is None


def test_aligned_extra_shapes_are_supported():
    for s in ((2056, 1032), (24, 40), (8, 4096), (4096, 8), (4104, 4104)):
        assert _case_ok(Case(s, "float32")) and _case_ok(Case(s, "bfloat16")), s
    assert _case_ok(Case((16384, 16384), "bfloat16"))
    assert not _case_ok(Case((4095, 4097), "float32"))  # R = 4095 and C = 4097 rows: neither is 16-byte


# ---- the launcher, with the driver faked -------------------------------------------------------

class FakeKernel:
    name = "transpose_f32"
    module = object()


@pytest.fixture
def fake_driver(monkeypatch):
    calls = {"maps": [], "launch": []}
    g = V5.launcher.__globals__
    tm = g["tensormap"]

    def tensor_map_2d(t, box_rows, box_cols, swizzle=128):
        calls["maps"].append((t, box_rows, box_cols, swizzle))
        return f"map{len(calls['maps'])}"

    def launch(kernel, grid, block, *args, shared_mem=0, cluster=None, stream=None):
        calls["launch"].append((grid, block, args, shared_mem))

    monkeypatch.setattr(tm, "tensor_map_2d", tensor_map_2d)
    monkeypatch.setattr(tm, "launch", launch)
    monkeypatch.setitem(g, "resident_blocks", lambda kernel, block, smem: 132 * (2 if smem < 110_000 else 1))
    return calls


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("shape", [(1000, 1000), (16384, 16384), (8, 4096)])
def test_launch_geometry(fake_driver, dtype, shape):
    case = Case(shape, dtype)
    inputs = OP.make_inputs(case, 0, "cpu") if math.prod(shape) < 1 << 22 else {
        "m": torch.empty(shape, dtype=getattr(torch, dtype))}
    outputs = OP.make_outputs(case, inputs)
    OP.launch(FakeKernel(), V5, case, inputs, outputs)  # op.launch hands TMA variants to their .py
    g = tma_geometry(V5, dtype)
    (m, br_in, bc_in, sw_in), (o, br_out, bc_out, sw_out) = fake_driver["maps"]
    assert m is inputs["m"] and o is outputs["out"] and sw_in == sw_out == 128
    assert (br_in, bc_in) == (g.tile_rows, g.slab) and (br_out, bc_out) == (g.tile_cols, g.slab)
    ((grid, block, args, smem),) = fake_driver["launch"]
    tiles = math.ceil(shape[0] / g.tile_rows) * math.ceil(shape[1] / g.tile_cols)
    assert grid == min(tiles, 264 if dtype == "float32" else 132) and block == 256
    assert args == ("map1", "map2", shape[0], shape[1]) and smem == g.smem


def test_launch_one_block_per_tile_and_empty(fake_driver):
    v = with_meta(persistent=0)
    case = Case((1000, 1000), "float32")
    inputs = OP.make_inputs(case, 0, "cpu")
    v.launcher(OP, FakeKernel(), v, case, inputs, OP.make_outputs(case, inputs))
    ((grid, block, args, smem),) = fake_driver["launch"]
    assert grid == 256 and smem == 2 * 16384 + SMEM_ALIGN_SLACK
    empty = Case((0, 5), "float32")
    inputs = OP.make_inputs(empty, 0, "cpu")
    V5.launcher(OP, FakeKernel(), V5, empty, inputs, OP.make_outputs(empty, inputs))
    assert len(fake_driver["launch"]) == 1  # nothing launched for an empty matrix


def test_launch_refuses_a_column_major_input(fake_driver):
    m = torch.zeros(64, 32).t()
    with pytest.raises(ValueError, match="unit stride"):
        V5.launcher(OP, FakeKernel(), V5, Case((32, 64), "float32"), {"m": m}, {"out": torch.empty(64, 32)})


# ---- compiled ----------------------------------------------------------------------------------

# (meta overrides, extra macros): the GPU tests' knob settings (tests/gpu/test_transpose_tma.py).
KNOBS = [({}, {}), ({"persistent": 0}, {}), ({"out_bufs": 1}, {}), ({"out_bufs": 2}, {}), ({"stages": 1}, {}),
         ({"stages": 4, "stages_bf16": 2}, {}), ({}, {"GROUP": 1}), ({"block": 128}, {}), ({"block": 512}, {}),
         ({"tile_rows": 32, "tile_cols": 32, "tile_rows_bf16": 64, "tile_cols_bf16": 64}, {}),
         ({"tile_rows": 128, "tile_cols": 64, "tile_rows_bf16": 64, "tile_cols_bf16": 128}, {}),
         ({"tile_rows": 32, "tile_cols": 256, "tile_rows_bf16": 256, "tile_cols_bf16": 64, "stages": 2,
           "out_bufs": 2}, {})]


def _build(meta, macros, arch):
    v = with_meta(**meta)
    return compile_file(v.path, arch=target_arch(v, arch), defines={**OP.defines(v), **macros})


@pytest.mark.parametrize("arch", ARCHS)
def test_compiles_without_spills_at_64_registers(arch):
    for meta, macros in KNOBS:
        m = _build(meta, macros, arch)
        assert m.arch == arch
        for k in ("transpose_f32", "transpose_bf16"):
            r = m.resources[k]
            assert r.spills == 0 and r.stack_frame == 0, f"{meta} {macros} {k} [{arch}]: {r}"
            assert 0 < r.registers <= 64 and r.shared_static <= 64, f"{meta} {macros} {k} [{arch}]: {r}"


def test_the_library_build_targets_sm_90_or_newer():
    assert compile_variant(OP, V5, arch="sm_80").arch == "sm_90"  # @arch sm_90 is a minimum
    assert compile_variant(OP, V5, arch="sm_100").arch == "sm_100"


def test_bad_macros_stop_the_compile():
    from kernelab.gpu import CompileError

    with pytest.raises(CompileError, match="OUT_BUFS"):
        compile_file(V5.path, arch="sm_90", defines={**OP.defines(V5), "OUT_BUFS": 7})
    with pytest.raises(CompileError, match="needs sm_90"):
        compile_file(V5.path, arch="sm_80", defines=OP.defines(V5))


@pytest.mark.skipif(toolchain.cuobjdump_path() is None, reason="no cuobjdump")
@pytest.mark.parametrize("arch", ARCHS)
def test_sass_moves_tiles_with_tma_and_the_threads_only_touch_shared_memory(arch):
    from kernelab.analysis import sass_mix

    for meta, macros in KNOBS[:4] + KNOBS[-3:]:
        mix = sass_mix(_build(meta, macros, arch).cubin)
        for k, e in (("transpose_f32", 4), ("transpose_bf16", 2)):
            m = mix[k]
            ops = m.opcodes
            assert ops.get("UTMALDG.2D", 0) >= 2 and ops.get("UTMASTG.2D", 0) >= 1, f"{meta} {k} [{arch}]: {ops}"
            assert m.ldg == 0 and m.stg == 0 and m.ldl == 0 and m.stl == 0 and m.atomics == 0, f"{meta} {k}: {ops}"
            p = 16 // e
            assert ops.get("LDS.128", 0) % p == 0 and ops.get("LDS.128", 0) >= p, f"{meta} {k}: {ops}"
            assert ops.get("STS.128", 0) == ops.get("LDS.128", 0), f"{meta} {k}: {ops}"
            assert not any(o.startswith(("LDS.32", "LDS.64", "LDS.U", "STS.32", "STS.64")) or o in ("LDS", "STS")
                           for o in ops), f"{meta} {k}: narrow shared accesses {ops}"
            if e == 2:
                assert ops.get("PRMT", 0) == 4 * ops["STS.128"], f"{meta} {k}: {ops}"  # 4 per 16-byte column
