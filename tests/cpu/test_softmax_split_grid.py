"""softmax v14_split_grid without a GPU: its two plans (v12's instance as the main grid, v13's as the
side grid, under v14's names), how many clusters each grid gets (split_grids: the side grid takes the
SMs the main grid leaves, never rows it may not take), v4_dispatch sending full-stage bf16 rows of
65537-131072 to it, the instances compiled without spills for sm_90 / sm_100 / sm_120 (refused for sm_80), and the
launch: the main grid on the caller's stream, the side grid on a forked stream joined back, both
with the stream's `work` counters and the two grids' cluster total."""

from __future__ import annotations

import dataclasses

import pytest
import torch

import kernelab.gpu as kgpu
from kernelab.gpu import CompileError, compile_file, tensormap
from kernelab.ops import Case, discover
from kernelab.ops.softmax import op as softmax_op

from ._launch_recorder import h200_blocks_per_sm, patch_h200, record_launches

OP = discover()["softmax"]
V14 = OP.variant("v14_split_grid")
V4 = OP.variant("v4_dispatch")


def test_plans_main_is_v12s_instance_side_is_v13s():
    a = softmax_op.split_main_plan(131072, (9, 0), "bfloat16")
    b = softmax_op.split_side_plan(131072, (9, 0), "bfloat16", "packed_regs")
    assert (a.name, a.block, a.cluster, a.work, a.side) == ("softmax_sg_a_c8", 256, 8, True, True)
    assert (b.name, b.block, b.cluster, b.work, b.side) == ("softmax_sg_b_c2", 1024, 2, True, False)
    # the same geometry as the variants they come from (v4's v12 instance, v13)
    dy = softmax_op._by_strategy("dynamic", 131072, (9, 0), dtype="bfloat16")
    assert (a.block, a.cluster, a.smem, a.capacity) == (dy.block, dy.cluster, dy.smem, dy.capacity)
    pr = softmax_op.packed_regs_plan(131072, (9, 0), "bfloat16")
    assert (b.block, b.cluster, b.smem) == (pr.block, pr.cluster, pr.smem)
    assert softmax_op.split_main_plan(262144, (9, 0), "bfloat16").cluster == 16
    assert softmax_op.split_side_plan(262144, (9, 0), "bfloat16", "packed_regs").cluster == 4
    # fp32 rows of up to 131072: v4's 32-value clusters of 16
    assert softmax_op.split_main_plan(131072, (9, 0), "float32").name == "softmax_sg_a_e32_c16"
    assert OP.plan(V14, 131072, (9, 0), "bfloat16") == a
    assert OP.plan(V14, 2048, (9, 0)) is None and OP.plan(V14, 131072, (8, 0)) is None
    assert "262144" in OP.supports(V14, Case((4, 1000), "bfloat16"))


def test_split_grids_gives_the_side_the_sms_the_main_grid_leaves():
    # the H200 at 2048 x 131072 bf16: 30 clusters of 8 at 2 blocks an SM use 120 SMs; 12 left: 6 of 2
    assert softmax_op.split_grids(30, 2, 8, 66, 2, 132, 2048, 128) == (30, 6)
    assert softmax_op.split_grids(30, 2, 8, 4, 2, 132, 2048, 128) == (30, 4)  # what the driver fits alone
    assert softmax_op.split_grids(33, 2, 8, 66, 2, 132, 2048, 128) == (33, 0)  # no SM left
    assert softmax_op.split_grids(30, 2, 8, 66, 2, 132, 131, 128) == (30, 3)  # at most the rows it may take
    assert softmax_op.split_grids(30, 2, 8, 66, 2, 132, 128, 128) == (30, 0)
    # fewer rows than the main grid fits: the main grid shrinks, the side takes the rest of the SMs
    assert softmax_op.split_grids(30, 2, 8, 66, 2, 132, 200, 0) == (30, 6)
    assert softmax_op.split_grids(30, 2, 8, 66, 2, 132, 10, 0) == (10, 10)
    assert softmax_op.split_grids(31, 3, 8, 66, 4, 132, 2048, 0) == (31, 12)  # 83 SMs used (rounded up), 49 left


@pytest.fixture
def wide_split(monkeypatch):
    """v4's "wide" entry with DISPATCH_WIDE_SPLIT on (full-stage bf16 rows of 65537-131072 as v14's two grids, the
    route until session 27), the plan cache cleared on the way in and out."""
    softmax_op._plan.cache_clear()
    monkeypatch.setattr(softmax_op, "DISPATCH_WIDE_SPLIT", True)
    yield
    softmax_op._plan.cache_clear()


@pytest.mark.parametrize("n,dtype,strategy", [(65536, "bfloat16", "dynamic"), (65537, "bfloat16", "half_blocks"),
                                              (131072, "bfloat16", "dynamic"), (262144, "bfloat16", "half_blocks"),
                                              (229376, "bfloat16", "half_blocks"), (131072, "float32", "dynamic"),
                                              (262144, "float32", "any_cluster")])
def test_v4_dispatch_wide_entry(n, dtype, strategy):
    """v12 alone where its stages are full (bf16 131072 too, since session 27), else v16 / v15 / e32."""
    p = OP.plan(V4, n, (9, 0), dtype)
    prefix = {"split": "softmax_sg_a_", "dynamic": "softmax_dy_", "any_cluster": "softmax_ac_",
              "half_blocks": "softmax_hb_"}[strategy]
    assert p.side == (strategy == "split") and p.name.startswith(prefix), p


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_instances_compile_without_spills(arch):
    m = compile_file(V14.path, arch=arch, defines=OP.defines(V14))
    names = {f"softmax_sg_a_c{c}_{d}" for c in (1, 2, 4, 8, 16) for d in ("bf16", "f32")}
    names |= {f"softmax_sg_b_c{c}_{d}" for c in (1, 2, 4, 8) for d in ("bf16", "f32")}
    names |= {"softmax_sg_a_e32_c16_bf16", "softmax_sg_a_e32_c16_f32", "softmax_sg_o_bf16", "softmax_sg_o_f32"}
    assert names <= set(m.resources)
    for name, r in m.resources.items():
        assert r.spill_stores == r.spill_loads == 0, f"{name} spills on {arch}: {r}"
    with pytest.raises(CompileError):
        compile_file(V14.path, arch="sm_80", defines=OP.defines(V14))


class _Stream:
    def __init__(self, name, log):
        self.name, self.log = name, log

    def wait_event(self, e):
        self.log.append((self.name, "waits", e.name))


class _Event:
    def __init__(self, name, log):
        self.name, self.log = name, log

    def record(self, stream):
        self.log.append((self.name, "recorded on", stream.name))


_per_sm = h200_blocks_per_sm  # blocks an SM as on the H200: 1024-thread blocks one, the others two


@pytest.fixture
def fake_gpu(monkeypatch):
    """An H200 as the launch sees it: 132 SMs, the clusters each instance fits alone (main grids 240
    blocks, two an SM; side grids one block an SM), and streams and events that log what they are asked."""
    log = []
    caller, side = _Stream("caller", log), _Stream("side", log)
    patch_h200(monkeypatch)
    monkeypatch.setattr(softmax_op, "_split_stream", lambda device: (side, _Event("fork", log), _Event("join", log)))
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: caller)
    return log


def test_launch_forks_the_side_grid_and_joins_it(fake_gpu):
    calls = record_launches(OP, [(V14, Case((2048, 131072), "bfloat16"))], blocks_per_sm=_per_sm)
    (na, aa, kwa), (nb, ab, kwb) = calls
    assert (na, nb) == ("softmax_sg_a_c8_bf16", "softmax_sg_b_c2_bf16")
    assert aa[2:4] == ab[2:4] == (2048, 131072)
    assert aa[4] is ab[4] and aa[4].dtype == torch.int32  # one `work` pair for both grids
    assert aa[5] == ab[5] == 36  # 30 + 6 clusters reset the counters
    assert ab[6] == 2048 - 128  # the side stops taking rows at M - @side_margin
    assert kwa == dict(grid=30, block=256, cluster=8, shared_mem=OP.plan(V14, 131072).smem)
    assert "stream" not in kwa  # the caller's stream
    assert kwb["grid"] == 6 and kwb["block"] == 1024 and kwb["cluster"] == 2 and kwb["stream"].name == "side"
    assert fake_gpu == [("fork", "recorded on", "caller"), ("side", "waits", "fork"),
                        ("join", "recorded on", "side"), ("caller", "waits", "join")]


def test_launch_without_rows_for_the_side_is_the_main_grid_alone(fake_gpu):
    """M <= @side_margin, or a main grid that fills every SM: one launch, its own cluster count (0)."""
    calls = record_launches(OP, [(V14, Case((100, 131072), "bfloat16"))], blocks_per_sm=_per_sm)
    calls += record_launches(OP, [(V14, Case((2048, 131072), "bfloat16"))], blocks_per_sm=1)  # 240 SMs' worth
    assert [(n, a[5], kw["grid"]) for n, a, kw in calls] == [("softmax_sg_a_c8_bf16", 0, 30)] * 2
    assert fake_gpu == []


def test_v4_dispatch_launches_v12_or_v14s_grids(fake_gpu, request):
    calls = record_launches(OP, [(V4, Case((2048, 131072), "bfloat16"))], blocks_per_sm=_per_sm)
    assert [n for n, _, _ in calls] == ["softmax_dy_c8_bf16"]  # v12 alone (session 27): one grid, no side stream
    assert fake_gpu == []
    request.getfixturevalue("wide_split")
    assert OP.plan(V4, 131072, (9, 0), "bfloat16").side
    assert OP.plan(V4, 131072, (9, 0), "float32").name == "softmax_dy_t128_c16"  # fp32 is never split
    calls = record_launches(OP, [(V4, Case((2048, 131072), "bfloat16"))], blocks_per_sm=_per_sm)
    assert [(n, kw["grid"]) for n, _, kw in calls] == [("softmax_sg_a_c8_bf16", 30), ("softmax_sg_b_c2_bf16", 6)]
    calls = record_launches(OP, [(V14, Case((1024, 262144), "bfloat16"))], blocks_per_sm=_per_sm)
    assert [(n, kw["grid"]) for n, _, kw in calls] == [("softmax_sg_a_c16_bf16", 15), ("softmax_sg_b_c4_bf16", 3)]


def test_online_side_grid_takes_two_blocks_on_every_free_sm(fake_gpu, monkeypatch):
    """`@side_grid online`: v2's rows from the counter in 512-thread blocks of no cluster, two on each
    of the 12 SMs the main grid leaves; its plan streams any width."""
    import kernelab.ops.base as base

    monkeypatch.setattr(base, "resident_blocks", lambda k, block: 132 * _per_sm(k.name, block))
    online = dataclasses.replace(V14, meta={**V14.meta, "side_grid": "online"})
    p = softmax_op.split_side_plan(131072, (9, 0), "bfloat16", "online")
    assert (p.name, p.block, p.cluster, p.smem, p.capacity, p.work) == ("softmax_sg_o", 512, None, 0, None, True)
    calls = record_launches(OP, [(online, Case((2048, 131072), "float32"))], blocks_per_sm=_per_sm)
    (na, aa, kwa), (nb, ab, kwb) = calls
    assert (na, nb) == ("softmax_sg_a_e32_c16_f32", "softmax_sg_o_f32")
    assert kwb["grid"] == 24 and kwb["block"] == 512 and kwb["cluster"] is None and kwb["shared_mem"] == 0
    assert aa[5] == ab[5] == kwa["grid"] + 24 and ab[6] == 2048 - 128
    with pytest.raises(ValueError, match="side_grid"):
        softmax_op.split_side_plan(131072, (9, 0), "bfloat16", "cluster")
    # `@side_smem_kib`: unused dynamic shared memory, so the blocks fit only on idle SMs; one an SM here
    padded = dataclasses.replace(online, meta={**online.meta, "side_smem_kib": "120"})
    def one_side_block(name, block):
        return 1 if name.startswith("softmax_sg_o") else _per_sm(name, block)
    calls = record_launches(OP, [(padded, Case((2048, 131072), "bfloat16"))], blocks_per_sm=one_side_block)
    (_, _, _), (nb, ab, kwb) = calls
    assert nb == "softmax_sg_o_bf16" and kwb["grid"] == 12 and kwb["shared_mem"] == 120 * 1024


def test_split_launch_is_computed_once_per_module_and_shape(fake_gpu):
    """The occupancy queries behind v14's grids run once per (module, knobs, shape), not per launch."""
    asked = []

    class Kernel:
        def __init__(self, name):
            self.name = name

        def max_active_blocks_per_sm(self, block, dynamic_smem=0):
            asked.append(self.name)
            return _per_sm(self.name, block)

    class Module:
        compiled = type("Compiled", (), {"arch": "sm_90"})()

        def kernel(self, name):
            return Kernel(name)

    mod = Module()
    a = softmax_op.split_launch(mod, V14, 2048, 131072, "bfloat16")
    assert softmax_op.split_launch(mod, V14, 2048, 131072, "bfloat16") is a and (a.main, a.side) == (30, 6)
    assert sorted(asked) == ["softmax_sg_a_c8_bf16", "softmax_sg_b_c2_bf16"]
    other = dataclasses.replace(V14, meta={**V14.meta, "side_margin": "4096"})  # knobs are part of the key
    assert softmax_op.split_launch(mod, other, 2048, 131072, "bfloat16").side == 0
    b = softmax_op.split_launch(Module(), V14, 2048, 131072, "bfloat16")  # another module: computed again
    assert b is not a and (b.main, b.side) == (a.main, a.side)
    assert len(asked) == 4


def test_v4_holds_v14s_instances_only_while_its_wide_entry_takes_them(request):
    """dispatch_lists' V4_SPLIT: v4's module leaves v14's softmax_sg_* out while DISPATCH_WIDE_SPLIT is off (no plan
    reaches them), and holds the ones its plans name once it is on."""
    default = set(compile_file(V4.path, arch="sm_90", defines=OP.defines(V4)).resources)
    assert not any(k.startswith("softmax_sg_") for k in default) and "softmax_dy_c8_bf16" in default
    request.getfixturevalue("wide_split")
    split = set(compile_file(V4.path, arch="sm_90", defines=OP.defines(V4)).resources)
    assert {"softmax_sg_a_c8_bf16", "softmax_sg_b_c2_bf16"} <= split and default < split
