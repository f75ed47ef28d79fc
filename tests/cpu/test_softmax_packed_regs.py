"""softmax v13_packed_regs without a GPU: its plan (the smallest cluster whose share fits 1024
threads x 8 raw vectors and the one-stage budget, per arch), that the share never exceeds what the
kernel holds (7 vectors a thread on sm_120, where the stage caps it), the instances compiled without
spills for sm_90 / sm_100 / sm_120 and refused for sm_80, the SASS of the row loop (bulk copies into
shared memory, eight 16-byte shared loads and global stores a thread, rows taken with an atomic,
pairs and indices pushed into the peer's shared memory, no local memory), and the launch passing
the stream's `work` counters with one block an SM."""

from __future__ import annotations

import re

import pytest
import torch

from kernelab.analysis.sass import run_cuobjdump
from kernelab.gpu import CompileError, compile_file, toolchain
from kernelab.ops import Case, discover
from kernelab.ops.softmax import op as softmax_op

from ._launch_recorder import record_launches

OP = discover()["softmax"]
V13 = OP.variant("v13_packed_regs")
V4 = OP.variant("v4_dispatch")
WIDTHS = (2049, 8192, 32768, 32769, 65536, 65537, 100000, 131072, 131073, 262144)


def _plan(n, dtype="bfloat16", cc=(9, 0)):
    return OP.plan(V13, n, cc, dtype)


def test_plan_takes_the_smallest_cluster_that_holds_the_share():
    # sm_90: 1024 threads x 8 vectors = 128 KiB a block; one stage of it (<= 226 KiB budget)
    assert (_plan(65536).cluster, _plan(65536).smem) == (1, 131072)  # bf16: one SM a row
    assert (_plan(65537).cluster, _plan(65537).smem) == (2, 65552)
    assert (_plan(131072).cluster, _plan(131072).smem) == (2, 131072)  # the bench shape: 66 clusters of 2
    assert _plan(262144).cluster == 4 and _plan(262144, "float32").cluster == 8
    assert _plan(131072, "float32").cluster == 4 and _plan(65536, "float32").cluster == 2
    p = _plan(131072)
    assert p.name == "softmax_pr_c2" and p.block == 1024 and p.persistent and p.work
    assert p.capacity == 131072
    # sm_120: 99 KiB a block, so the stage, not the registers, sets C
    assert _plan(131072, cc=(12, 0)).cluster == 4 and _plan(65536, cc=(12, 0)).cluster == 2
    assert _plan(262144, "float32", cc=(12, 0)) is None  # an eighth of it is 128 KiB
    # outside the bulk widths, or before sm_90: none
    assert _plan(2048) is None and _plan(262145) is None and _plan(131072, cc=(8, 0)) is None
    assert "262144" in OP.supports(V13, Case((1, 1000), "float32"))


@pytest.mark.parametrize("cc,vecs", [((9, 0), 8), ((10, 0), 8), ((12, 0), 7)])
def test_every_share_fits_what_the_kernel_holds(cc, vecs):
    """The kernel traps on a share wider than 1024 x K vectors (K = 8, and 7 on sm_120); the plan's
    stage is the share, so every planned width must fit both it and the stage budget."""
    budget = softmax_op.bulk_ring_budget(cc, 1)
    for dt in OP.dtypes:
        for n in WIDTHS:
            p = _plan(n, dt, cc)
            if p is None:
                continue
            assert p.smem // 16 <= 1024 * vecs, (cc, dt, n, p)
            assert p.smem <= budget and p.smem == softmax_op.bulk_stage_bytes(n, p.cluster, dt)
            assert p.capacity >= n


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_every_instance_compiles_without_spills(arch):
    m = compile_file(V13.path, arch=arch, defines=OP.defines(V13))
    names = {f"softmax_pr_c{c}_{s}" for c in (1, 2, 4, 8) for s in ("f32", "bf16")}
    assert names <= set(m.resources)
    for name, r in m.resources.items():
        assert r.spill_stores == 0 and r.spill_loads == 0, f"{arch} {name}: {r}"
        assert r.registers <= 64, f"{arch} {name}: {r.registers} registers at 1024 threads"


def test_refuses_sm_80():
    with pytest.raises(CompileError, match="needs sm_90"):
        compile_file(V13.path, arch="sm_80")


@pytest.mark.skipif(toolchain.cuobjdump_path() is None, reason="cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
def test_sass_holds_raw_vectors_and_stores_16_bytes():
    m = compile_file(V13.path, arch="sm_90", defines=OP.defines(V13))
    c2 = run_cuobjdump(m.cubin, "-sass", "-fun", "softmax_pr_c2_bf16")
    assert len(re.findall(r"LDS\.128", c2)) == 8 and len(re.findall(r"STG\.E\.128", c2)) == 8
    assert "UBLKCP.S.G" in c2 and "ATOMG.E.ADD" in c2  # the stage's bulk copy; rows from the counter
    assert len(re.findall(r"\bST\.ASYNC|STAS", c2)) >= 2  # the (max, sum) pair and the row index
    assert len(re.findall(r"MUFU\.EX2", c2)) >= 2 * 64  # two EX2 an element (64 bf16 a thread)
    assert not re.search(r"\b(LDL|STL)\b", c2)
    c1 = run_cuobjdump(m.cubin, "-sass", "-fun", "softmax_pr_c1_f32")  # no cluster: no DSMEM pushes
    assert "ATOMG.E.ADD" in c1 and not re.search(r"\bST\.ASYNC|STAS|MAPA", c1)


def test_launch_passes_the_stream_counters(monkeypatch):
    """v13 (softmax_pr_*) and v4's rows that go to v13's kernel as v15's instances (softmax_ac_*; fp32
    262144: v12's clusters would need 16 SMs of one GPC) launch with `work` after M, N, one stage of
    dynamic shared memory and clusters of the plan's C."""
    monkeypatch.setattr(softmax_op, "persistent_grid", lambda k, p, m: 66)
    calls = record_launches(OP, [(V13, Case((64, 131072), "bfloat16")), (V4, Case((64, 262144), "float32"))])
    (n13, a13, kw13), (n4, a4, kw4) = calls
    assert n13 == "softmax_pr_c2_bf16" and n4 == "softmax_ac_c8_f32"
    assert len(a13) == len(a4) == 5 and a13[2:4] == (64, 131072) and a4[2:4] == (64, 262144)
    assert a13[4].dtype == torch.int32 and a13[4].tolist() == [0, 0]
    assert kw13 == dict(grid=66, block=1024, cluster=2, shared_mem=131072)
    assert kw4 == dict(grid=66, block=1024, cluster=8, shared_mem=131072)


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_fast_exp_knob_compiles_without_spills(arch):
    """PR_FAST_EXP 1 (fast_exp.cuh in v13's body) keeps every instance within v13's 64 registers, no spills."""
    m = compile_file(V13.path, arch=arch, defines={**OP.defines(V13), "PR_FAST_EXP": 1})
    for name, r in m.resources.items():
        assert r.spill_stores == 0 and r.spill_loads == 0 and r.registers <= 64, f"{arch} {name}: {r}"


@pytest.mark.skipif(toolchain.cuobjdump_path() is None, reason="cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
def test_fast_exp_knob_sass():
    """PR_FAST_EXP 1: the bf16 max on packed pairs (none with 0), and each EX2's argument one FFMA in both sweeps (at
    least 2 x 64 more FFMA than 0's; the (x - sh) * LOG2E fallbacks stay beside them for shifts past 2^20)."""
    def sass(fast):
        m = compile_file(V13.path, arch="sm_90", defines={**OP.defines(V13), "PR_FAST_EXP": fast})
        return run_cuobjdump(m.cubin, "-sass", "-fun", "softmax_pr_c2_bf16")
    slow, fast = sass(0), sass(1)
    packed = r"\b(V?HMNMX2?)\.BF16_V2\b"
    assert not re.search(packed, slow) and len(re.findall(packed, fast)) >= 8
    assert len(re.findall(r"\bFFMA\b", fast)) - len(re.findall(r"\bFFMA\b", slow)) >= 2 * 64
