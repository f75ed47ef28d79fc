"""softmax v16_half_blocks without a GPU: its plan takes the fewest 512-thread blocks (1-8) whose
shares fit half an SM's shared memory and 8 vectors a thread (twice v15's cluster for the same row),
its rows end at bf16 262144 / fp32 131072, its instances compile without spills in 64 registers
(two blocks an SM) for sm_90 / sm_100 / sm_120 and are refused for sm_80, and the thread-count
template parameter left v13's kernel as it was (v13's, v15's instances: 1024 threads)."""

from __future__ import annotations

import pytest

from kernelab.gpu import CompileError, compile_file
from kernelab.ops import Case, discover
from kernelab.ops.softmax import op as softmax_op

OP = discover()["softmax"]
V16 = OP.variant("v16_half_blocks")
V15 = OP.variant("v15_any_cluster")


def _plan(v, n, dtype="bfloat16", cc=(9, 0)):
    return OP.plan(v, n, cc, dtype)


@pytest.mark.parametrize("n,dtype,c16,c15", [
    (32768, "bfloat16", 1, 1), (65536, "bfloat16", 2, 1), (131072, "bfloat16", 4, 2), (151936, "bfloat16", 5, 3),
    (196608, "bfloat16", 6, 3), (262144, "bfloat16", 8, 4), (65536, "float32", 4, 2), (131072, "float32", 8, 4)])
def test_plan_takes_twice_v15s_blocks_at_half_the_threads(n, dtype, c16, c15):
    p, p15 = _plan(V16, n, dtype), _plan(V15, n, dtype)
    assert (p.cluster, p15.cluster) == (c16, c15)
    assert p.name == f"softmax_hb_c{c16}" and p.block == 512 and p.persistent and p.work
    assert p.smem == softmax_op.bulk_stage_bytes(n, c16, dtype) <= 512 * softmax_op.PACKED_REGS_VECS * 16


@pytest.mark.parametrize("cc,vecs", [((9, 0), 8), ((10, 0), 8), ((12, 0), 7)])
def test_every_share_fits_half_an_sm_and_what_the_kernel_holds(cc, vecs):
    """The kernel traps on a share wider than 512 x K vectors (K = 8; 7 on sm_120) or its stage; two
    blocks an SM each get half of the SM's shared memory."""
    budget = softmax_op.bulk_ring_budget(cc, 2)
    for dt in OP.dtypes:
        for n in range(softmax_op.BULK_MIN_N, softmax_op.BULK_MAX_N + 1, 4093):
            p = _plan(V16, n, dt, cc)
            if p is None:
                assert softmax_op.bulk_stage_bytes(n, 8, dt) > min(budget, 512 * vecs * 16), (n, dt, cc)
                continue
            assert p.smem <= budget and p.smem // 16 <= 512 * vecs, (n, dt, cc, p)
            assert p.cluster == 1 or softmax_op.bulk_stage_bytes(n, p.cluster - 1, dt) > min(budget, 512 * 8 * 16)


def test_the_widest_rows_and_the_refusals():
    assert _plan(V16, 262144).cluster == 8 and _plan(V16, 262145) is None
    assert _plan(V16, 131072, "float32").cluster == 8 and _plan(V16, 131073, "float32") is None
    assert _plan(V16, 2048) is None and _plan(V16, 65536, cc=(8, 0)) is None
    why = OP.supports(V16, Case((1, 131073), "float32"))
    assert why and "131072" in why
    assert OP.supports(V16, Case((1, 262144), "bfloat16")) is None


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_instances_compile_without_spills_in_64_registers(arch):
    m = compile_file(V16.path, arch=arch, defines=OP.defines(V16))
    names = {f"softmax_hb_c{c}_{d}" for c in range(1, 9) for d in ("bf16", "f32")} | {"softmax_f32", "softmax_bf16"}
    assert names <= set(m.resources), sorted(names - set(m.resources))
    for name, r in m.resources.items():
        assert r.spill_stores == r.spill_loads == 0, f"{name} spills on {arch}: {r}"
        assert r.registers <= 64, f"{name}: {r.registers} registers (two blocks of 512 threads an SM need <= 64)"
    with pytest.raises(CompileError):
        compile_file(V16.path, arch="sm_80", defines=OP.defines(V16))
