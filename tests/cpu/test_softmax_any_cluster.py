"""softmax v15_any_cluster without a GPU: its plan takes the smallest cluster of 1-8 blocks whose share
fits (v13 takes 1, 2, 4 or 8), every share fits what the kernel holds, its instances (clusters of 1-8,
fp32 and bf16) compile without spills for sm_90 / sm_100 / sm_120 and are refused for sm_80, and
v13's, v14's and v4's instances of the shared kernel keep their names."""

from __future__ import annotations

import pytest

from kernelab.gpu import CompileError, compile_file
from kernelab.ops import Case, discover
from kernelab.ops.softmax import op as softmax_op

OP = discover()["softmax"]
V15 = OP.variant("v15_any_cluster")
V13 = OP.variant("v13_packed_regs")


def _plan(v, n, dtype="bfloat16", cc=(9, 0)):
    return OP.plan(v, n, cc, dtype)


@pytest.mark.parametrize("n,dtype,c15,c13", [
    (65536, "bfloat16", 1, 1), (131072, "bfloat16", 2, 2), (151936, "bfloat16", 3, 4), (163840, "bfloat16", 3, 4),
    (196608, "bfloat16", 3, 4), (196609, "bfloat16", 4, 4), (262144, "bfloat16", 4, 4),
    (98304, "float32", 3, 4), (131072, "float32", 4, 4), (163840, "float32", 5, 8), (196608, "float32", 6, 8),
    (229376, "float32", 7, 8), (262144, "float32", 8, 8)])
def test_plan_takes_the_smallest_cluster_of_one_to_eight(n, dtype, c15, c13):
    p, p13 = _plan(V15, n, dtype), _plan(V13, n, dtype)
    assert (p.cluster, p13.cluster) == (c15, c13)
    assert p.name == f"softmax_ac_c{c15}" and p.block == 1024 and p.persistent and p.work
    assert p.smem == softmax_op.bulk_stage_bytes(n, c15, dtype)  # one stage: the block's share
    assert p.smem <= 1024 * softmax_op.PACKED_REGS_VECS * 16


@pytest.mark.parametrize("cc,vecs", [((9, 0), 8), ((10, 0), 8), ((12, 0), 7)])
def test_every_share_fits_what_the_kernel_holds(cc, vecs):
    """The kernel traps on a share wider than 1024 x K vectors (K = 8; 7 on sm_120) or the stage."""
    budget = softmax_op.bulk_ring_budget(cc, 1)
    for dt in OP.dtypes:
        for n in range(softmax_op.BULK_MIN_N, softmax_op.BULK_MAX_N + 1, 4093):
            p = _plan(V15, n, dt, cc)
            if p is None:
                assert cc >= (12, 0) and dt == "float32", (n, dt, cc)  # sm_120: 8 x 99 KiB < a 1 MiB row
                continue
            assert p.smem <= budget and p.smem // 16 <= 1024 * vecs, (n, dt, cc, p)
            assert p.cluster == 1 or softmax_op.bulk_stage_bytes(n, p.cluster - 1, dt) > min(budget, 1024 * 8 * 16)


def test_outside_the_bulk_widths_and_before_sm_90_it_plans_nothing():
    assert _plan(V15, 2048) is None and _plan(V15, 262145) is None and _plan(V15, 131072, cc=(8, 0)) is None
    assert "262144" in OP.supports(V15, Case((1, 1000), "float32"))


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_instances_compile_without_spills(arch):
    m = compile_file(V15.path, arch=arch, defines=OP.defines(V15))
    names = {f"softmax_ac_c{c}_{d}" for c in range(1, 9) for d in ("bf16", "f32")} | {"softmax_f32", "softmax_bf16"}
    assert names <= set(m.resources), sorted(names - set(m.resources))
    for name, r in m.resources.items():
        assert r.spill_stores == r.spill_loads == 0, f"{name} spills on {arch}: {r}"
        assert r.registers <= 64, f"{name}: {r.registers} registers (1024 threads an SM need <= 64)"
    with pytest.raises(CompileError):
        compile_file(V15.path, arch="sm_80", defines=OP.defines(V15))
