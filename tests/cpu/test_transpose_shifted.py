"""transpose v4's shifted kernels (shifted_tiles.cuh, session 22) without a GPU: the loop replayed in
Python line for line, over memory laid out as the GPU sees it (m and out at any element phase of a
16-byte boundary, any row stride), on tile geometries the sweep and the tests build. Each replay checks
what the kernel relies on: every 16-byte load and store is aligned; every load touches a 16-byte
granule that holds an element of m (so it cannot fault); every element of out is written exactly once,
with m's value, and nothing outside out is written. Then: op.py picks the shifted kernel exactly when a
row is misaligned, and the kernels compile as the header says."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from kernelab.gpu import CI_ARCHS, compile_file
from kernelab.ops import Case, discover
from kernelab.ops.transpose.op import rows_aligned

OP = discover()["transpose"]
V4 = OP.variant("v4_grouped_order")


@dataclasses.dataclass
class Geom:
    """TileGeom<B, TR, TC> at BLOCK threads (grouped_tiles.cuh)."""
    itemsize: int
    tr: int
    tc: int
    block: int

    def __post_init__(self):
        self.v = 16 // self.itemsize
        self.in_cpr, self.out_cpr = self.tc // self.v, self.tr // self.v
        self.chunks = self.tr * self.in_cpr
        self.per_thread = -(-self.chunks // self.block)
        self.xmask = min(self.in_cpr, 8) - 1
        self.lpr = min(self.out_cpr, 8)
        self.rpw = 32 // self.lpr
        self.groups = self.out_cpr // self.lpr
        self.xsteps = -(-self.tr // self.block)


def replay(g: Geom, rows: int, cols: int, ld: int, in_off: int, out_off: int, seed: int = 0):
    """Run shifted_transpose's tile loop over m (rows x cols, row stride ld) at element in_off of its
    allocation and out (cols x rows, contiguous) at element out_off of its own. Returns (m, out, writes)."""
    v = g.v
    rng = np.random.default_rng(seed)
    span = (rows - 1) * ld + cols
    mem_in = rng.integers(1, 2**30, size=in_off + span + 2 * v)  # the allocation, with slack after m
    m = np.stack([mem_in[in_off + i * ld: in_off + i * ld + cols] for i in range(rows)])
    mem_out = np.full(out_off + rows * cols + 2 * v, -1, dtype=np.int64)
    writes = np.zeros_like(mem_out)

    phase_of = [(in_off + (k % v) * ld) % v for k in range(v)]  # tile row r: phase_of[r % v]

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

    n_x, n_y = -(-cols // g.tc), -(-rows // g.tr)
    for t in range(n_x * n_y):
        tx, ty = divmod(t, n_y)  # column-major (GROUP >= n_y); the order does not change what is written
        r0, c0 = ty * g.tr, tx * g.tc
        tile = [[None] * v for _ in range(g.chunks + g.tr)]  # None: a slot no load filled (stale bytes)
        for s, tid in itertools.product(range(g.per_thread), range(g.block)):
            idx = s * g.block + tid
            r, ch = divmod(idx, g.in_cpr)
            i, j, p = r0 + r, c0 + ch * v, phase_of[r % v]
            if idx < g.chunks and i < rows and needed(j, p):
                tile[r * g.in_cpr + (ch ^ ((r // v) & g.xmask))] = load16(in_off + i * ld + j - p)
        for x, tid in itertools.product(range(g.xsteps), range(g.block)):
            r = x * g.block + tid
            if r >= g.tr:
                continue
            i, j, p = r0 + r, c0 + g.tc, phase_of[r % v]
            if p != 0 and i < rows and needed(j, p):
                tile[g.chunks + r] = load16(in_off + i * ld + j - p)
        for s in range(g.per_thread):
            cur = {}
            for tid in range(g.block):  # the gather: a warp's lanes in order
                idx = s * g.block + tid
                if idx >= g.chunks:
                    continue
                task, lane = divmod(idx, 32)
                oc = (task // g.groups) * g.rpw + lane // g.lpr
                q = (task % g.groups) * g.lpr + lane % g.lpr
                e = []
                for k in range(v):
                    c = oc + phase_of[k]
                    ch, at = divmod(c, v)
                    slot = (q * v + k) * g.in_cpr + (ch ^ (q & g.xmask)) if ch < g.in_cpr else g.chunks + q * v + k
                    e.append(tile[slot][at] if tile[slot] is not None else None)
                cur[tid] = (oc, q, e)
            for tid, (oc, q, e) in cur.items():
                lane = tid % 32
                first, last = lane % g.lpr == 0, lane % g.lpr == g.lpr - 1
                prev = cur[tid if first else tid - 1][2]  # __shfl_up_sync(..., 1, LPR)
                j, i = c0 + oc, r0 + q * v
                if j >= cols:
                    continue
                dst = out_off + j * rows + i
                sh = (out_off + j * rows) % v
                if sh == 0:
                    if i + v <= rows:
                        store(dst, e, True)
                    else:
                        store(dst, [e[k] for k in range(v) if i + k < rows], False)
                    continue
                if not first:
                    w = prev[v - sh:] + e[:v - sh]  # kl::bytes_at(prev, cur, (V - sh) * E)
                    if i - sh + v <= rows:
                        store(dst - sh, w, True)
                    else:
                        store(dst - sh, [w[k] for k in range(v) if i - sh + k < rows], False)
                for k in range(v):
                    if ((first and k < v - sh) or (last and k >= v - sh)) and i + k < rows:
                        store(dst + k, [e[k]], False)
    out = mem_out[out_off: out_off + rows * cols].reshape(cols, rows)
    return m, out, writes


GEOMS = [Geom(4, 64, 64, 256), Geom(2, 128, 128, 256), Geom(4, 32, 32, 128), Geom(2, 16, 32, 64), Geom(2, 64, 32, 256)]


@pytest.mark.parametrize("g", GEOMS, ids=lambda g: f"{8 * g.itemsize}bit-{g.tr}x{g.tc}-b{g.block}")
@pytest.mark.parametrize("rows,cols,pad", [(37, 45, 0), (70, 33, 3), (129, 130, 1), (9, 200, 5), (200, 7, 0)])
def test_replay_writes_out_once_with_m_transposed(g, rows, cols, pad):
    ld = cols + pad
    for in_off, out_off in [(0, 0), (1, 0), (g.v - 1, 3 % g.v), (2 % g.v, 1)]:
        m, out, writes = replay(g, rows, cols, ld, in_off, out_off, seed=rows + in_off)
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
        # loads: 16-byte cp.async only; stores: 16-byte vectors plus the groups' scalar ends; 4 shuffles a vector
        assert x.ldgsts128 > 0 and x.ldg == 0 and x.stg128 > 0 and x.shfl >= 4, (k, arch, x.opcodes)
