"""softmax's SB_TRACE build (staged_rows.cuh, session 32; scripts/probe_trace32.py reads it) on a GPU.

The stamps are what session 32's reading of the fill and drain rests on, so they are checked for what a reading
assumes: every block's entry <= init <= first issue <= exit; every row stamped once, in order (landed <= read <=
stores issued, and the next row's landing after this row's stores); the rows' indices a permutation of 0..M-1; the
softmax itself still right. And the guard: a trace build launched on op.launch's 8-byte counters traps at entry
(word 15 is not the magic) instead of writing its records past them; run in a child process, since a trap ends
the CUDA context."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import torch

from kernelab.gpu import Module, compile_file, default_arch
from kernelab.ops import discover
from kernelab.ops.base import Case
from kernelab.ops.softmax.trace import HEAD, TracedWide

from ._softmax_rows import sm90_only

pytestmark = pytest.mark.gpu

OP = discover()["softmax"]
N = 131072
_needs_hopper = sm90_only("SB_TRACE (v12's rows)")
_module: list = []


def _traced():
    if not _module:
        v4 = OP.variant("v4_dispatch")
        d = {**OP.defines(v4), "SB_TRACE": 1}
        _module.append((v4, Module(compile_file(v4.path, arch=default_arch(), defines=d), d)))
    return _module[0]


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_stamps_are_ordered_and_every_row_is_stamped_once(dtype):
    v4, mod = _traced()
    w = TracedWide(OP, v4, mod, dtype)
    grid, C = w.grid, w.C
    m = 3 * grid + 5  # every cluster loops, the ring wraps, some clusters take one row more
    x = OP.make_inputs(Case((m, N), dtype), 1, "cuda")["x"]
    y = torch.full_like(x, float("nan"))
    w(x, y, m)
    torch.cuda.synchronize()
    tol = 1e-2 if dtype == "bfloat16" else 1e-4
    assert torch.allclose(y.float(), torch.softmax(x.float(), -1), rtol=tol, atol=1e-9)
    assert w.work[:2].tolist() == [0, 0], "the counters are left zero"
    rec = w.records(m)
    ent, ini, iss, ext, _, taken = (rec[:, k] for k in range(6))
    assert (ent > 0).all() and (ent <= ini).all() and (ini <= iss).all() and (iss <= ext).all()
    assert (taken.reshape(grid, C) == taken.reshape(grid, C)[:, :1]).all(), "a cluster's blocks take the same rows"
    assert taken[::C].sum() == m
    seen = []
    for b in range(grid * C):
        n = int(taken[b])
        rows = rec[b, HEAD:HEAD + 4 * n].reshape(n, 4)
        landed, read, issued, index = rows.T
        assert (landed <= read).all() and (read <= issued).all(), f"block {b}: a row's stamps out of order"
        assert (landed[1:] >= issued[:-1]).all(), f"block {b}: a row landed before the previous one was done"
        assert (issued <= ext[b]).all()
        if b % C == 0:
            seen.extend(index.tolist())
        else:
            assert (index == rec[b - b % C, HEAD + 3:HEAD + 4 * n:4]).all(), "a cluster's blocks share each row"
    assert sorted(seen) == list(range(m)), "every row handed out once"
    assert ent.max() - ent.min() < 1e6, "the blocks entered within a millisecond of one another"


def test_trace_build_on_the_op_counters_traps():
    script = textwrap.dedent("""
        import torch
        from kernelab.gpu import Module, compile_file, default_arch
        from kernelab.ops import discover
        from kernelab.ops.base import Case
        op = discover()["softmax"]
        v4 = op.variant("v4_dispatch")
        d = {**op.defines(v4), "SB_TRACE": 1}
        mod = Module(compile_file(v4.path, arch=default_arch(), defines=d), d)
        case = Case((64, 131072), "bfloat16")
        x = op.make_inputs(case, 0, "cuda")
        y = op.make_outputs(case, x)
        op.launch(mod.kernel(op.kernel_name("bfloat16")), v4, case, x, y)
        torch.cuda.synchronize()
        print("NO TRAP")
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    text = (r.stdout + r.stderr).lower()
    assert r.returncode != 0 and "no trap" not in text, text[-2000:]
    assert "illegal instruction" in text or "launch failure" in text or "trap" in text, text[-2000:]
