"""transpose v7_ticket_tiles without a GPU: its header and op.py's handling of `@tiles tickets`
(a 1-D persistent grid of resident blocks capped by the tile count, the per-stream counters passed
as the extra `work` argument, the same zeroed pair on every call), v4's tile geometry and
defaults kept, the ticket protocol replayed in Python under random interleavings (every tile
moved once, the counters back at zero, no take after the reset), and the compiled kernels: v4's
shared memory plus one word, and in the SASS the ticket's ATOMG before the mid-tile barrier,
the fence and the finish count after the loop.

What the generic tests already cover for v7 (tests/cpu/test_ops_mem_a.py): every CI arch
compiles with no spills under the register limits, 16-byte loads and stores in the SASS (its
`@access_bytes 16` claim), exactly two integer atomics a kernel, no local memory; the header's
What changed / Why / Predicted / Measured lines. tests/gpu/test_ops_mem_a.py runs it on every
test case."""

from __future__ import annotations

import math
import random
import re

import pytest
import torch

from kernelab.gpu import parse_signatures, toolchain
from kernelab.ops import Case, compile_variant, discover
from kernelab.ops.transpose import op as transpose_op
from kernelab.ops.transpose.op import takes_tickets

OP = discover()["transpose"]
V4 = OP.variant("v4_grouped_order")
V7 = OP.variant("v7_ticket_tiles")


# ---- header and op.py ------------------------------------------------------------------------------

def test_header_meta_and_defaults_are_v4s():
    assert takes_tickets(V7) and not any(takes_tickets(v) for v in OP.variants() if v.name != V7.name)
    assert V7.meta["tiles"].split()[0] == "tickets"
    assert V7.meta["access_bytes"].split()[0] == "16"
    # The same knobs and values: v4's tiles at 256 threads (v7 was measured there; v4 runs fp32 at 512 since
    # session 25, `@block_f32`).
    v4_at_256 = {k: v for k, v in OP.defines(V4).items() if k != "BLOCK_F32"}
    assert OP.defines(V7) == v4_at_256 and OP.defines(V4)["BLOCK_F32"] == 512
    for dt in OP.dtypes:
        assert OP.tile(V7, dt) == OP.tile(V4, dt)
    assert OP.tile(V7, "float32") == (64, 64) and OP.tile(V7, "bfloat16") == (128, 128)
    assert "Measured (H200" in V7.header  # the measured negative result, with its run file
    assert "What changed from v4" in V7.header and "Predicted:" in V7.header
    src = V7.path.read_text()
    assert '#include "grouped_tiles.cuh"' in src and '#include "grouped_tiles.cuh"' in V4.path.read_text()
    assert "grouped_transpose" not in V4.path.read_text().split('#include "grouped_tiles.cuh"')[0]


def test_best_variant_is_still_v4():
    assert OP.best_variant == "v4_grouped_order"  # v7 is adopted only after it is measured


def test_kernels_take_the_counters_as_their_last_argument():
    sigs = parse_signatures(V7.path.read_text(), OP.defines(V7))  # what the launcher reads
    v4 = parse_signatures(V4.path.read_text(), OP.defines(V4))
    for k in ("transpose_f32", "transpose_bf16"):
        assert [p.ctype for p in sigs[k][:-1]] == [p.ctype for p in v4[k]]
        work = sigs[k][-1]
        assert (work.name, work.kind, work.torch_dtype) == ("work", "pointer", "int32")


class FakeKernel:
    """A loaded kernel's stand-in: checks the call against v7's C signature, records it."""

    def __init__(self, name):
        self.name = name
        self.params = parse_signatures(V7.path.read_text(), OP.defines(V7))[name]
        self.calls = []

    def __call__(self, *args, grid, block, shared_mem=0):
        assert len(args) == len(self.params)
        for p, a in zip(self.params, args):
            if p.kind == "pointer":
                assert isinstance(a, torch.Tensor) and (a.is_contiguous() or a.numel() == 0), p.describe()
                if p.torch_dtype:
                    assert str(a.dtype) == f"torch.{p.torch_dtype}", p.describe()
            else:
                assert isinstance(a, int) and 0 <= a < 2 ** (32 if p.base in ("int", "unsigned int") else 64)
        assert isinstance(grid, int), "v7's grid is 1-D (the kernel takes blockIdx.x as the first tile)"
        self.calls.append((args, grid, block, shared_mem))


def _launch(case, monkeypatch, resident):
    monkeypatch.setattr(transpose_op, "resident_blocks", lambda kernel, block: resident)
    kernel = FakeKernel(OP.kernel_name(case.dtype))
    inputs = OP.make_inputs(case, 0, "cpu")
    outputs = OP.make_outputs(case, inputs)
    OP.launch(kernel, V7, case, inputs, outputs)
    return kernel.calls, inputs, outputs


CASES = [Case((1, 1), "float32"), Case((1, 17), "bfloat16"), Case((63, 65), "float32"), Case((1000, 3), "bfloat16"),
         Case((1000, 1000), "float32", offset=1), Case((129, 4097), "bfloat16"),
         Case((127, 129), "float32", layout="column_slice", params=(("col_start", 4),)),
         Case((65535 * 64 + 70, 2), "float32")]  # more row tiles than v4's gridDim.y holds: v7 has no y


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("resident", [1056, 8])
def test_grid_is_resident_blocks_capped_by_the_tile_count(case, resident, monkeypatch):
    calls, inputs, outputs = _launch(case, monkeypatch, resident)
    ((args, grid, block, smem),) = calls
    src, out, rows, cols, ld, work = args
    tr, tc = OP.tile(V7, case.dtype)
    tiles = math.ceil(rows / tr) * math.ceil(cols / tc)
    assert (rows, cols) == case.shape and block == 256 and smem == 0
    assert grid == min(tiles, resident)
    assert src.data_ptr() == inputs["m"].data_ptr() and out.data_ptr() == outputs["out"].data_ptr()
    assert ld == (inputs["m"].stride(0) if rows > 1 else cols)
    assert work.dtype == torch.int32 and work.numel() == 2 and work.tolist() == [0, 0]


def test_the_same_counters_on_every_call_and_dtype(monkeypatch):
    ptrs = set()
    for case in (Case((300, 500), "float32"), Case((300, 500), "bfloat16"), Case((5, 7), "float32")):
        calls, _, _ = _launch(case, monkeypatch, 1056)
        ptrs.add(calls[0][0][-1].data_ptr())
    assert len(ptrs) == 1  # one pair per device and stream, allocated once (no memset per call)
    assert transpose_op.tile_tickets(torch.device("cpu")).data_ptr() in ptrs


def test_an_empty_matrix_launches_nothing(monkeypatch):
    for shape in ((0, 5), (5, 0)):
        calls, _, _ = _launch(Case(shape, "float32"), monkeypatch, 1056)
        assert calls == []


def test_other_variants_keep_their_two_dimensional_grid(monkeypatch):
    calls = []

    def kernel(*args, grid, block):
        calls.append((args, grid))

    case = Case((1000, 1000), "float32")
    inputs = OP.make_inputs(case, 0, "cpu")
    OP.launch(kernel, V4, case, inputs, OP.make_outputs(case, inputs))
    ((args, grid),) = calls
    assert len(args) == 5 and grid == (16, 16)


# ---- the ticket protocol, replayed ---------------------------------------------------------------

def replay_tickets(tiles: int, grid: int, rng: random.Random):
    """TicketTiles as thread 0 of each block runs it (the barriers make a block's other threads
    follow thread 0's tile sequence), blocks interleaved at random between atomic steps.
    Returns (tiles moved in order, counters at the end, takes seen after the reset)."""
    work = [0, 0]
    moved = []
    reset_done = False
    late_takes = 0

    def block(b):
        nonlocal reset_done, late_takes
        t = b  # first(): blockIdx.x
        while t < tiles:
            moved.append(t)  # the tile's loads and staging
            yield
            if reset_done:
                late_takes += 1
            ahead = work[0]  # take(): atomicAdd(&work[0], 1), before the mid-tile barrier
            work[0] += 1
            yield
            t = grid + ahead  # publish(), the end barrier, next()
        # done(): __threadfence(); atomicAdd(&work[1], 1)
        count = work[1]
        work[1] += 1
        if count == grid - 1:
            work[0] = work[1] = 0
            reset_done = True
        yield

    live = [block(b) for b in range(grid)]
    while live:
        g = rng.choice(live)
        try:
            next(g)
        except StopIteration:
            live.remove(g)
    return moved, work, late_takes


@pytest.mark.parametrize("tiles,grid", [(1, 1), (7, 7), (100, 8), (1000, 37), (4096, 1056), (5, 9), (2, 1)])
def test_every_tile_once_and_the_counters_back_at_zero(tiles, grid):
    # (5, 9): more blocks than tiles (op.py caps the grid, the kernel need not rely on it).
    for seed in range(20):
        moved, work, late = replay_tickets(tiles, grid, random.Random(seed))
        assert sorted(moved) == list(range(tiles)), f"seed {seed}"
        assert work == [0, 0] and late == 0, f"seed {seed}: counters {work}, {late} takes after the reset"


def test_tiles_go_out_in_v4s_linear_order():
    """With the blocks in a fixed rotation (all equally fast) the tiles start in v4's linear order:
    the first wave by block index, then the tickets (one counter: handed out in increasing order)."""
    grid, tiles = 8, 50
    work, order, ts = 0, [], list(range(grid))
    while any(t < tiles for t in ts):
        for b in range(grid):
            if ts[b] < tiles:
                order.append(ts[b])
                ts[b] = grid + work
                work += 1
    assert order == list(range(tiles))


# ---- compiled ------------------------------------------------------------------------------------

def test_shared_memory_is_v4s_tile_plus_one_word():
    r4 = compile_variant(OP, V4, arch="sm_90").resources
    r7 = compile_variant(OP, V7, arch="sm_90").resources
    for k in ("transpose_f32", "transpose_bf16"):
        assert r7[k].shared_static == r4[k].shared_static + 4, k  # next_tile


def _ordered_sync_ops(text: str, kernel: str) -> list[str]:
    body = text.split(f"Function : {kernel}")[1].split("Function :")[0]
    ops = []
    for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", body):
        op = m[1].split(".")[0]
        if op in ("ATOMG", "BAR", "MEMBAR", "STS", "LDS") and not m[1].startswith(("STS.128", "LDS.128")):
            ops.append(op)
    return ops


@pytest.mark.skipif(toolchain.cuobjdump_path() is None, reason="no cuobjdump")
@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
def test_sass_takes_the_ticket_before_the_mid_barrier_and_counts_after_the_loop(arch):
    from kernelab.analysis.sass import disassemble

    text = disassemble(compile_variant(OP, V7, arch=arch).cubin)
    for k in ("transpose_f32", "transpose_bf16"):
        ops = _ordered_sync_ops(text, k)
        sync = [o for o in ops if o in ("ATOMG", "BAR", "MEMBAR")]
        # Loop: ATOMG (the ticket), BAR (mid-tile), BAR (end of tile); after it MEMBAR, ATOMG (count).
        assert sync == ["ATOMG", "BAR", "BAR", "MEMBAR", "ATOMG"], f"{k} [{arch}]: {sync}"
        # The ticket goes to shared memory (a 4-byte STS) between the two barriers, and is read
        # back (a 4-byte LDS) after the second one.
        i_bar1 = ops.index("BAR")
        i_bar2 = ops.index("BAR", i_bar1 + 1)
        assert "STS" in ops[i_bar1:i_bar2], f"{k} [{arch}]: no ticket store before the end barrier"
        assert ops[i_bar2 + 1] == "LDS", f"{k} [{arch}]: {ops[i_bar2:i_bar2 + 3]}"
