"""transpose v6_register_blocks without a GPU: the thread -> V x V block map covers each tile once
with the store pairing the header claims, the bf16 PRMT selectors transpose a block, and a tile
that does not give one block per thread stops the compile with the rule."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from kernelab.gpu import compile_file
from kernelab.gpu.errors import CompileError
from kernelab.ops import discover

OP = discover()["transpose"]
V6 = OP.variant("v6_register_blocks")


def _blocks(block, tile_rows, tile_cols, v):
    """The kernel's map: thread t -> (row block, column block) of its tile."""
    cb_count = tile_cols // v
    return [(2 * ((t >> 1) // cb_count) + (t & 1), (t >> 1) % cb_count) for t in range(block)]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_threads_cover_the_tile_once_and_pair_their_stores(dtype):
    v = 4 if dtype == "float32" else 8
    tr, tc = OP.tile(V6, dtype)
    block = V6.meta_int("block")
    got = _blocks(block, tr, tc, v)
    assert sorted(got) == [(rb, cb) for rb in range(tr // v) for cb in range(tc // v)]
    for lane in range(0, 32, 2):  # lanes 2j, 2j + 1: same column block, adjacent row blocks
        (rb0, cb0), (rb1, cb1) = got[lane], got[lane + 1]
        assert cb0 == cb1 and rb1 == rb0 + 1
    # a warp's load instruction reads 16 consecutive column blocks of two row blocks
    assert sorted({cb for _, cb in got[:32]}) == list(range(16))


def _byte_perm(a, b, sel):
    """__byte_perm(a, b, sel): byte i of the result is byte (sel >> 4 i) & 7 of the 8 bytes b:a."""
    src = int(a) | (int(b) << 32)
    return sum(((src >> (8 * ((sel >> (4 * i)) & 7))) & 0xFF) << (8 * i) for i in range(4))


def test_bf16_selectors_transpose_an_8x8_block():
    rng = np.random.default_rng(0)
    block = rng.integers(0, 1 << 16, size=(8, 8), dtype=np.uint32)  # 16-bit elements, row-major
    words = [[int(block[r, 2 * w]) | (int(block[r, 2 * w + 1]) << 16) for w in range(4)] for r in range(8)]
    for c in range(8):  # the kernel's output row c: word k = (row 2k, row 2k + 1) of column c
        sel = 0x7632 if c & 1 else 0x5410
        out = [_byte_perm(words[2 * k][c // 2], words[2 * k + 1][c // 2], sel) for k in range(4)]
        col = [(out[k // 2] >> (16 * (k % 2))) & 0xFFFF for k in range(8)]
        assert col == [int(block[r, c]) for r in range(8)], c


def test_a_tile_that_is_not_one_block_per_thread_stops_the_compile():
    bad = dataclasses.replace(V6, meta={**V6.meta, "tile_cols_bf16": "64"})  # 8 x 8 blocks for 128 threads
    with pytest.raises(CompileError, match="one V x V block per thread"):
        compile_file(bad.path, arch="sm_90", defines=OP.defines(bad))
