"""transpose v4's shifted kernels (shifted_tiles.cuh, session 22) without a GPU: the loop replayed in
Python line for line, over memory laid out as the GPU sees it (m and out at any element phase of a
16-byte boundary, any row stride), on tile geometries the sweep and the tests build. Each replay checks
what the kernel relies on: every 16-byte load and store is aligned; every load touches a 16-byte
granule that holds an element of m (so it cannot fault); every element of out is written exactly once,
with m's value, and nothing outside out is written. Then: op.py picks the shifted kernel exactly when a
row is misaligned, and the kernels compile as the header says."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kernelab.gpu import CI_ARCHS, compile_file
from kernelab.ops import Case, discover
from kernelab.ops.transpose.op import rows_aligned

from ._transpose_geom import TileGeometry as Geom

OP = discover()["transpose"]
V4 = OP.variant("v4_grouped_order")


def replay(g: Geom, rows: int, cols: int, ld: int, in_off: int, out_off: int, seed: int = 0, rotate=None):
    """Run shifted_transpose's tile loop over m (rows x cols, row stride ld) at element in_off of its
    allocation and out (cols x rows, contiguous) at element out_off of its own; `rotate`: the gather's
    rotation (SHIFT_ROTATE; default as the kernel: fp32 only). Returns (m, out, writes,
    the mean shared-memory bank conflict of the gathers: wavefronts a warp's LDS takes)."""
    v = g.v
    held_rows = g.tr + v
    held = held_rows * g.in_cpr
    load_steps, xsteps = -(-held // g.block), -(-held_rows // g.block)  # the copy steps
    rng = np.random.default_rng(seed)
    span = (rows - 1) * ld + cols
    mem_in = rng.integers(1, 2**30, size=in_off + span + 2 * v)  # the allocation, with slack after m
    m = np.stack([mem_in[in_off + i * ld: in_off + i * ld + cols] for i in range(rows)])
    mem_out = np.full(out_off + rows * cols + 2 * v, -1, dtype=np.int64)
    writes = np.zeros_like(mem_out)
    conflicts = []  # per warp and element step k of each gather: the most distinct words in one bank

    def phase_of(R):  # m row r0 - V + R
        return (in_off + (R % v) * ld) % v

    def needed(j, p):
        return j < p or j - p < cols

    def load16(addr):  # addr: element index into mem_in of a 16-byte aligned chunk
        assert addr % v == 0, f"misaligned 16-byte load at element {addr}"
        assert any(in_off <= a < in_off + span for a in range(addr, addr + v)), f"load of a granule outside m at {addr}"
        return list(mem_in[addr: addr + v])

    def store(addr, vals, vector):
        if vector:
            assert addr % v == 0, f"misaligned 16-byte store at element {addr}"
        for a, x in zip(range(addr, addr + len(vals)), vals):
            assert out_off <= a < out_off + rows * cols, f"store outside out at element {a}"
            mem_out[a] = x
            writes[a] += 1

    n_x, n_y = -(-cols // g.tc), (rows + v - 2) // g.tr + 1
    for t in range(n_x * n_y):
        tx, ty = divmod(t, n_y)  # column-major (GROUP >= n_y); the order does not change what is written
        r0, c0 = ty * g.tr, tx * g.tc
        tile = [None] * (held + held_rows)  # None: a slot no copy filled (stale bytes)
        for s, tid in itertools.product(range(load_steps), range(g.block)):
            idx = s * g.block + tid
            big_r, ch = divmod(idx, g.in_cpr)
            i, j, p = r0 + big_r - v, c0 + ch * v, phase_of(big_r)
            if idx < held and 0 <= i < rows and needed(j, p):
                tile[big_r * g.in_cpr + (ch ^ ((big_r // v) & g.xmask))] = load16(in_off + i * ld + j - p)
        for x, tid in itertools.product(range(xsteps), range(g.block)):
            big_r = x * g.block + tid
            i, j, p = r0 + big_r - v, c0 + g.tc, phase_of(big_r)
            if big_r < held_rows and p != 0 and 0 <= i < rows and needed(j, p):
                tile[held + big_r] = load16(in_off + i * ld + j - p)
        for s in range(g.per_thread):
            words = {k: {} for k in range(v)}  # per element step k: warp -> bank -> distinct words
            for tid in range(g.block):
                idx = s * g.block + tid
                if idx >= g.chunks:
                    continue
                oc, q = g.store_task(idx)
                lane = idx % 32
                j = c0 + oc
                if j >= cols:
                    continue
                sh = (out_off + j * rows) % v
                # Odd square (ld and rows odd mod V): the group of output row oc reads its elements in an
                # order rotated by oc mod V, so the warp's 4 rows read 4 different columns mod V.
                rot = ((ld % v) * (rows % v) & 1) * ((lane // g.lpr) % v) * (rotate if rotate is not None else v == 4)
                e = [None] * v
                for kk in range(v):
                    k = (kk + rot) % v
                    big_r = v - sh + q * v + k
                    c = oc + phase_of(big_r)
                    ch = c // v
                    slot = big_r * g.in_cpr + (ch ^ ((big_r // v) & g.xmask)) if ch < g.in_cpr else held + big_r
                    e[k] = tile[slot][c % v] if tile[slot] is not None else None
                    word = (slot * v + c % v) * g.itemsize // 4
                    words[kk].setdefault(tid // 32, {}).setdefault(word % 32, set()).add(word)
                w = r0 + q * v - sh
                dst = out_off + j * rows + w
                if 0 <= w and w + v <= rows:
                    store(dst, e, True)
                else:
                    for k in range(v):
                        if 0 <= w + k < rows:
                            store(dst + k, [e[k]], False)
            conflicts += [max(len(ws) for ws in banks.values()) for per_k in words.values() for banks in per_k.values()]
    out = mem_out[out_off: out_off + rows * cols].reshape(cols, rows)
    return m, out, writes, sum(conflicts) / len(conflicts)


# The defaults first (fp32 64 x 64 at 512 threads since session 25, bf16 128 x 128 at 256), then others.
GEOMS = [Geom(4, 64, 64, 512), Geom(2, 128, 128, 256), Geom(4, 64, 64, 256), Geom(4, 32, 32, 128),
         Geom(2, 16, 32, 64), Geom(2, 64, 32, 256)]


@pytest.mark.parametrize("g", GEOMS, ids=lambda g: f"{8 * g.itemsize}bit-{g.tr}x{g.tc}-b{g.block}")
# 128 and 63 rows: out rows whose last window ends past the last whole tile of m (the row tiles run to
# rows + V - 1).
@pytest.mark.parametrize("rows,cols,pad", [(37, 45, 0), (70, 33, 3), (129, 130, 1), (9, 200, 5), (200, 7, 0),
                                           (128, 40, 1), (63, 70, 0)])
def test_replay_writes_out_once_with_m_transposed(g, rows, cols, pad):
    ld = cols + pad
    for in_off, out_off in [(0, 0), (1, 0), (g.v - 1, 3 % g.v), (2 % g.v, 1)]:
        m, out, writes, _ = replay(g, rows, cols, ld, in_off, out_off, seed=rows + in_off)
        assert (writes[out_off: out_off + rows * cols] == 1).all(), \
            f"in_off {in_off} out_off {out_off}: write counts {np.unique(writes)}"
        assert (writes[:out_off] == 0).all() and (writes[out_off + rows * cols:] == 0).all()
        np.testing.assert_array_equal(out, m.T, err_msg=f"in_off {in_off} out_off {out_off}")


def test_shifted_kernel_is_picked_exactly_when_a_row_is_misaligned():
    calls = []

    class Kernel:
        def __init__(self, name):
            self.name, self.module = name, self

        def kernel(self, name):
            return Kernel(name)

        def __call__(self, *args, grid, block):
            calls.append(self.name)

    for shape, offset, expect in [((64, 64), 0, "transpose_f32"), ((63, 64), 0, "transpose_shifted_f32"),
                                  ((64, 63), 0, "transpose_shifted_f32"), ((64, 64), 1, "transpose_shifted_f32")]:
        case = Case(shape, "float32", offset=offset)
        inputs = OP.make_inputs(case, 0, "cpu")
        outputs = OP.make_outputs(case, inputs)
        OP.launch(Kernel("transpose_f32"), V4, case, inputs, outputs)
        assert calls[-1] == expect, (shape, offset, calls[-1])
        m, out = inputs["m"], outputs["out"]
        assert rows_aligned(m, out, shape[0], m.stride(0)) == (expect == "transpose_f32")


@pytest.mark.parametrize("arch", CI_ARCHS)
def test_shifted_kernels_compile_without_spills_and_copy_16_bytes(arch):
    from kernelab.analysis.sass import sass_mix

    m = compile_file(V4.path, arch=arch, defines=OP.defines(V4))
    mix = sass_mix(m.cubin)
    for k in ("transpose_shifted_f32", "transpose_shifted_bf16"):
        r = m.resources[k]
        assert r.spills == 0 and r.stack_frame == 0, (k, arch, r)
        x = mix[k]
        # loads: 16-byte cp.async only; stores: 16-byte vectors (and the rows' cut ends, element by element)
        assert x.ldgsts128 > 0 and x.ldg == 0 and x.stg128 > 0, (k, arch, x.opcodes)


@pytest.mark.parametrize("g", GEOMS[:2], ids=["fp32-64x64", "bf16-128x128"])
def test_gather_bank_conflicts_of_the_defaults(g):
    """A warp's gather reads 4 output rows x 8 chunks. Lane (oc, q) reads raw column oc + p, p its m row's
    phase; where ld and rows are both odd mod V (an odd square: 16383^2), oc + p has one value mod V in
    all 32 lanes at each step, so they share 8 of the 32 banks: 4-way (4.05 fp32, 4.16 bf16 before the
    rotation), whatever the layout of whole 16-byte chunks (cp.async writes whole chunks). The kernel then
    rotates each output row's element order by oc mod V. With only out misaligned the gather is the
    aligned loop's (1-way fp32; bf16 2-way, two rows' elements to a word); with only m misaligned, near
    1. Mean conflict (wavefronts a warp's LDS takes) over the gathers:"""
    v = g.v
    odd, even = v * 37 + v - 1, v * 38  # (both V - 1 mod V: 151 / 303) and a multiple of V
    cases = {"odd square": (odd, odd), "out only": (odd, even), "m only": (even, odd)}  # (rows, cols = ld)
    mean = {name: replay(g, rows, cols, cols, 0, 0, rotate=True)[3] for name, (rows, cols) in cases.items()}
    assert mean["odd square"] <= (1.2 if v == 4 else 2.3), mean
    assert replay(g, odd, odd, odd, 0, 0, rotate=False)[3] >= 4.0  # without the rotation
    assert mean["out only"] <= (1.05 if v == 4 else 2.05) and mean["m only"] <= 1.3, mean
