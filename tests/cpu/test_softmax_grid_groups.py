"""softmax v9_grid_groups without a GPU: the group-size rule (pinned choices for the H200's 132
SMs and the B200's 148, and the rule itself checked against a brute-force cost on many shapes),
the ring's depth falling back where no group fits, the header knobs and their errors, that every
instance a plan names is compiled with 0 spills for sm_90 / sm_100 / sm_120 (and not for sm_80),
the SASS (bulk copies into shared memory, 16-byte LDS / STG, no local memory; the gpu-scope
release / acquire only in the exchange warp's path and not at all for C = 1), and the launch's
plumbing with a fake kernel: grid = C x groups sized by the occupancy API, cooperative, and a
clear LaunchError when a group cannot be co-resident."""

from __future__ import annotations

import dataclasses
import re

import pytest

from kernelab.analysis.sass import run_cuobjdump
from kernelab.check.inputs import DTYPES
from kernelab.gpu import CompileError, LaunchError, compile_file, parse_signatures, toolchain
from kernelab.ops import Case, discover
from kernelab.ops.build import compile_variant
from kernelab.ops.softmax import op as softmax_op
from kernelab.ops.softmax.op import GG_ROW_OVERHEAD, bulk_stage_bytes, grid_groups_plan

OP = discover()["softmax"]
V9 = OP.variant("v9_grid_groups")
H200, B200 = ((9, 0), 132), ((10, 0), 148)
BUDGET = 232448 - 1024 - softmax_op.BULK_STATIC_MAX  # v7's: one block an SM, opt-in limit


def _with(**meta):
    return dataclasses.replace(V9, meta={**V9.meta, **{k: str(v) for k, v in meta.items()}})


def _gg(m, n, dtype, gpu=H200, **kw):
    cc, sms = gpu
    return grid_groups_plan(n, m, cc, dtype, sms, **kw)


def _stages(p, n, dtype):
    return p.smem // bulk_stage_bytes(n, p.group, dtype)


# (M, N, dtype, GPU) -> (C, groups, stages): the choices the rule makes with the default knobs.
PINNED = [
    (2048, 131072, "bfloat16", H200, (6, 22, 4)),  # 132 SMs, 94 rounds of 42.7 KiB shares
    (2048, 131072, "float32", H200, (11, 12, 4)),  # 132 SMs, 171 rounds of 46.5 KiB
    (4096, 65536, "bfloat16", H200, (3, 44, 4)),
    (4096, 65536, "float32", H200, (6, 22, 4)),
    (8192, 32768, "bfloat16", H200, (2, 66, 4)),
    (32768, 8192, "bfloat16", H200, (1, 132, 4)),  # narrow: a block per row, no exchange
    (100, 2049, "float32", H200, (1, 100, 4)),  # fewer rows than SMs: one group per row
    (1, 131072, "bfloat16", H200, (16, 1, 4)),  # one row: the widest group
    (3, 262144, "float32", H200, (16, 3, 3)),  # no group holds 4 stages of 1 MiB / 16: 3
    (2048, 262144, "float32", H200, (16, 8, 3)),
    (2048, 131072, "bfloat16", B200, (5, 29, 4)),  # 145 of 148 SMs
    (2048, 131072, "float32", B200, (12, 12, 4)),
    (4096, 65536, "bfloat16", B200, (3, 49, 4)),
    (32768, 8192, "bfloat16", B200, (1, 148, 4)),
]


@pytest.mark.parametrize("m,n,dtype,gpu,want", PINNED, ids=lambda x: str(x))
def test_plan_choices_are_pinned(m, n, dtype, gpu, want):
    p = _gg(m, n, dtype, gpu)
    assert (p.group, p.groups, _stages(p, n, dtype)) == want, str(p)
    assert p.name == f"softmax_gg_c{p.group}" and p.block == 512 + 32 and p.cluster is None and p.persistent


def test_three_stage_choices_match_the_brief():
    """`@stages 3`: bf16 2048 x 131072 -> 33 groups of 4 (every SM, 64 KiB shares); fp32 -> 12 of 11."""
    assert (_gg(2048, 131072, "bfloat16", stages=3).group, _gg(2048, 131072, "bfloat16", stages=3).groups) == (4, 33)
    assert _gg(2048, 131072, "float32", stages=3).group == 11
    assert _gg(2048, 131072, "float32", B200, stages=3).group == 7  # 21 x 7 = 147 of 148 SMs


def _brute(m, n, dtype, sms, stages):
    best = None
    for c in range(1, 17):
        stage = bulk_stage_bytes(n, c, dtype)
        q = min(m, sms // c)
        if stages * stage > BUDGET or q < 1:
            continue
        cost = -(-m // q) * (2 * stage + GG_ROW_OVERHEAD)
        if best is None or cost < best[0]:  # strict: ties keep the smaller C
            best = (cost, c, q)
    return best


@pytest.mark.parametrize("gpu", [H200, B200], ids=["h200", "b200"])
def test_rule_is_the_least_predicted_time(gpu):
    cc, sms = gpu
    for dtype in OP.dtypes:
        for n in (2049, 4097, 16384, 32769, 65536, 65537, 100000, 131072, 200000, 262144):
            for m in (1, 2, 7, 33, 131, 132, 133, 1000, 2048, 4096, 100000):
                p = _gg(m, n, dtype, gpu)
                s = _stages(p, n, dtype)
                best = _brute(m, n, dtype, sms, s)
                assert (p.group, p.groups) == best[1:], (m, n, dtype, str(p), best)
                assert p.groups * p.group <= sms and p.groups <= m
                assert p.smem == s * bulk_stage_bytes(n, p.group, dtype) and p.smem <= BUDGET
                assert p.capacity >= n
                # the deepest ring (at most 4) that some group holds
                if s < 4:
                    assert all((s + 1) * bulk_stage_bytes(n, c, dtype) > BUDGET for c in range(1, 17))


def test_plan_without_rows_is_the_smallest_group_that_fits():
    p = OP.plan(V9, 131072, (9, 0), "bfloat16")
    assert (p.group, p.groups, p.smem) == (5, 0, 4 * bulk_stage_bytes(131072, 5, "bfloat16"))
    assert OP.plan(V9, 131072, (9, 0), "float32").group == 10
    assert OP.plan(V9, 16384, (9, 0), "bfloat16").group == 1 and OP.plan(V9, 32769, (9, 0), "bfloat16").group == 2
    assert OP.plan(V9, 131072, (12, 0), "bfloat16").group == 11  # sm_120: 99 KiB a block
    assert OP.plan(V9, 262144, (12, 0), "float32") is None  # 1 MiB / 16 = 64 KiB: not even 2 stages
    assert OP.plan(V9, 131072, (8, 0), "bfloat16") is None  # no bulk copies before sm_90
    assert OP.plan(V9, 2048, (9, 0), "bfloat16") is None and OP.plan(V9, 262145, (9, 0), "bfloat16") is None
    assert "262144" in OP.supports(V9, Case((1, 1000), "float32"))
    assert OP.supports(V9, Case((3, 131072), "float32")) is None


def test_knobs_move_the_plan_and_become_macros():
    assert OP.defines(V9) == {"GG_THREADS": 512}  # the ring's depth is the launch's, not a macro
    assert OP.defines(_with(threads=256)) == {"GG_THREADS": 256}
    p = grid_groups_plan(131072, 2048, (9, 0), "bfloat16", 132, *softmax_op.grid_groups_knobs(_with(group=4)))
    assert (p.group, p.groups, _stages(p, 131072, "bfloat16")) == (4, 33, 3)  # 4 x 64 KiB does not fit: 3 stages
    p = grid_groups_plan(131072, 2048, (9, 0), "bfloat16", 132, *softmax_op.grid_groups_knobs(_with(group=12)))
    assert (p.group, p.groups) == (12, 11)
    assert grid_groups_plan(131072, 2048, (9, 0), "bfloat16", 8, group=12) is None  # 12 blocks on 8 SMs: never resident
    assert grid_groups_plan(131072, 2048, (9, 0), "bfloat16", 132, group=2) is None  # 128 KiB shares: not 2 stages
    assert softmax_op.grid_groups_knobs(_with(stages=6, threads=992, group="auto")) == (6, 992, 0)
    for bad, match in (({"stages": 1}, "2 to 8"), ({"stages": 9}, "2 to 8"), ({"threads": 100}, "multiple of 32"),
                       ({"threads": 1024}, "exchange warp"), ({"group": 17}, "auto` or a group size of 1 to 16"),
                       ({"group": "four"}, "@group four"), ({"group": 0}, "1 to 16")):
        with pytest.raises(ValueError, match=match):
            OP.plan(_with(**bad), 131072, (9, 0), "bfloat16")


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_every_instance_compiles_without_spills(arch):
    m = compile_variant(OP, V9, arch=arch)
    declared = set(parse_signatures(V9.path.read_text()))
    assert declared == set(m.resources) and len(declared) == 2 * 16 + 2
    cc = (int(arch[3:-1]), int(arch[-1]))
    for n in (2049, 32769, 65537, 131072, 262144):
        for dt in OP.dtypes:
            for mm, sms in ((1, 132), (2048, 132), (2048, 148), (10**5, 170)):
                p = grid_groups_plan(n, mm, cc, dt, sms)
                if p is not None:
                    k = f"{p.name}_{DTYPES[dt]}"
                    assert k in declared
                    assert p.smem + m.resources[k].shared_static <= (232448 if cc[0] < 12 else 101376)
    spills = {k: (r.registers, r.spill_stores, r.spill_loads) for k, r in m.resources.items() if r.spills}
    assert not spills, spills


def test_refuses_sm_80():
    assert V9.min_arch == "sm_90"
    with pytest.raises(CompileError):
        compile_file(V9.path, arch="sm_80", defines=OP.defines(V9))


def _sass(fun, defines=None):
    m = compile_file(V9.path, arch="sm_90", defines={**OP.defines(V9), **(defines or {})})
    return run_cuobjdump(m.cubin, "-sass", "-fun", fun)


@pytest.mark.skipif(toolchain.cuobjdump_path() is None, reason="cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
def test_sass_bulk_copies_16_byte_sweeps_and_the_exchange():
    for fun in ("softmax_gg_c6_bf16", "softmax_gg_c11_f32"):
        sass = _sass(fun)
        assert "UBLKCP.S.G" in sass, fun  # cp.async.bulk global -> shared
        assert "SYNCS.ARRIVE.TRANS64" in sass and "SYNCS.PHASECHK.TRANS64.TRYWAIT" in sass, fun
        assert len(re.findall(r"LDS\.128", sass)) >= 12, fun  # the three sweeps over the stage
        assert "STG.E.128" in sass, fun
        assert not re.search(r"\b(LDL|STL)\b", sass), fun
        assert not re.search(r"\bLDG\.E\.128", sass), fun  # x arrives only by bulk copies (head/tail: scalars)
        # The exchange: one release add (after one MEMBAR.GPU, the exchange warp's), acquire polls
        # with an L1 invalidation, pairs read from L2, a nanosleep backoff.
        assert len(re.findall(r"REDG?\.E\.ADD\.STRONG\.GPU", sass)) == 1, fun
        assert len(re.findall(r"MEMBAR\.ALL\.GPU", sass)) == 1, fun
        assert "LDG.E.STRONG.GPU" in sass and "CCTL.IVALL" in sass and "LDG.E.64.STRONG.GPU" in sass, fun
        assert "NANOSLEEP" in sass, fun
    one = _sass("softmax_gg_c1_bf16")  # a block per row: no global exchange, no gpu-scope fence
    assert "UBLKCP.S.G" in one and not re.search(r"MEMBAR|RED\.|REDG|STRONG\.GPU|NANOSLEEP", one)


# ---- launch plumbing with a fake kernel ---------------------------------------------------------------

class _Kernel:
    def __init__(self, name, per_sm, calls):
        self.name, self.per_sm, self.calls = name, per_sm, calls

    def max_active_blocks_per_sm(self, block, smem):
        self.calls.append(("occupancy", block, smem))
        return self.per_sm

    def __call__(self, *args, **kw):
        self.calls.append(("launch", self.name, args, kw))


class _Module:
    def __init__(self, per_sm, arch="sm_90"):
        self.device_index, self.calls, self.per_sm = 0, [], per_sm
        self.compiled = type("C", (), {"arch": arch})()

    def kernel(self, name):
        return _Kernel(name, self.per_sm, self.calls)


@pytest.fixture
def fake_launch(monkeypatch):
    monkeypatch.setitem(softmax_op._gg_sms, 0, 132)
    monkeypatch.setattr(softmax_op, "_gg_occupancy", {})
    zeroed = []

    def workspace(device, groups, group):
        zeroed.append((groups, group))
        return f"counters[{groups}]", f"slots[{groups}x{group}]"

    monkeypatch.setattr(softmax_op, "grid_groups_workspace", workspace)

    def run(case, per_sm=1, variant=V9):
        mod = _Module(per_sm)
        x = type("T", (), {"device": "cuda:0"})()
        OP.launch(type("K", (), {"module": mod})(), variant, case, {"x": x}, {"y": "y"})
        return mod.calls, zeroed

    return run


def test_launch_is_cooperative_with_the_planned_grid(fake_launch):
    calls, zeroed = fake_launch(Case((2048, 131072), "bfloat16"))
    assert calls[0] == ("occupancy", 544, 4 * bulk_stage_bytes(131072, 6, "bfloat16"))
    _, name, args, kw = calls[1]
    assert name == "softmax_gg_c6_bf16" and args[2:] == (2048, 131072, "counters[22]", "slots[22x6]")
    assert kw == dict(grid=132, block=544, shared_mem=4 * 43696, cooperative=True)
    assert zeroed == [(22, 6)]  # the counters are zeroed before every launch


def test_launch_sizes_groups_by_occupancy_and_rows(fake_launch):
    calls, _ = fake_launch(Case((32768, 8192), "bfloat16"), per_sm=2)  # narrow rows: 2 blocks an SM fit
    assert calls[1][3]["grid"] == 264
    calls, _ = fake_launch(Case((5, 131072), "float32"))  # fewer rows than groups: one group per row
    p = grid_groups_plan(131072, 5, (9, 0), "float32", 132)
    assert calls[1][3]["grid"] == 5 * p.group and calls[1][2][4] == "counters[5]"


def test_launch_refuses_a_group_that_cannot_be_resident(fake_launch):
    with pytest.raises(LaunchError, match="must all be resident"):
        fake_launch(Case((2048, 131072), "bfloat16"), per_sm=0)
    with pytest.raises(ValueError, match="cannot run rows of 1000"):
        fake_launch(Case((4, 1000), "bfloat16"))


# ---- v11_group_regs: v10's register rows in the same cooperative groups ----------------------------
V11 = OP.variant("v11_group_regs")
REGS = 256 * 64  # fp32 values a block of the default knobs holds (threads x elems)
BUDGET2 = 233472 // 2 - 1024 - softmax_op.BULK_STATIC_MAX  # two blocks an SM (bulk_plan's budget)


def _with11(**meta):
    return dataclasses.replace(V11, meta={**V11.meta, **{k: str(v) for k, v in meta.items()}})


def _gr(m, n, dtype, gpu=H200, **kw):
    cc, sms = gpu
    return softmax_op.group_regs_plan(n, m, cc, dtype, sms, **kw)


# (M, N, dtype, GPU) -> (C, groups) with the default knobs (2 stages, 256 threads x 64, 2 blocks an SM).
PINNED11 = [
    (2048, 131072, "bfloat16", H200, (8, 33)),  # all 264 block slots; v10's clusters of 8 place 30 (240)
    (2048, 131072, "float32", H200, (11, 24)),  # 46.5 KiB shares, 264 slots
    (4096, 65536, "bfloat16", H200, (4, 66)),
    (4096, 65536, "float32", H200, (6, 44)),
    (8192, 32768, "bfloat16", H200, (2, 132)),
    (32768, 8192, "bfloat16", H200, (1, 264)),  # a block per row, no exchange
    (1, 131072, "bfloat16", H200, (16, 1)),  # one row: the smallest shares
    (2048, 262144, "bfloat16", H200, (16, 16)),  # only C = 16 fits the registers
    (2048, 131072, "bfloat16", B200, (8, 37)),
    (2048, 131072, "float32", B200, (10, 29)),
]


@pytest.mark.parametrize("m,n,dtype,gpu,want", PINNED11, ids=lambda x: str(x))
def test_v11_plan_choices_are_pinned(m, n, dtype, gpu, want):
    p = _gr(m, n, dtype, gpu)
    assert (p.group, p.groups) == want, str(p)
    assert p.name == f"softmax_gr_c{p.group}" and p.block == 256 and p.cluster is None and p.persistent
    assert p.smem == 2 * bulk_stage_bytes(n, p.group, dtype)


def _brute11(m, n, dtype, sms):
    v = 4 if dtype == "float32" else 8
    best = None
    for c in range(1, 17):
        stage = bulk_stage_bytes(n, c, dtype)
        q = min(m, 2 * sms // c)
        if 2 * stage > BUDGET2 or stage // 16 * v > REGS or q < 1:
            continue
        cost = -(-m // q) * (2 * stage + GG_ROW_OVERHEAD)
        if best is None or cost < best[0]:
            best = (cost, c, q)
    return best


def test_v11_rule_is_the_least_predicted_time_among_groups_the_registers_hold():
    for dtype in OP.dtypes:
        for n in (2049, 16384, 16385, 32769, 65537, 131072, 200000, 262144):
            for m in (1, 7, 131, 264, 265, 2048, 100000):
                p, best = _gr(m, n, dtype), _brute11(m, n, dtype, 132)
                if best is None:
                    assert p is None, (m, n, dtype, str(p))
                    continue
                assert (p.group, p.groups) == best[1:], (m, n, dtype, str(p), best)
                assert p.capacity >= n and p.capacity // p.group <= REGS
    assert _gr(2048, 262144, "float32") is None  # 64 KiB shares x 2 stages: not in half an SM's shared memory
    assert OP.supports(V11, Case((2, 262144), "float32")) is not None
    assert OP.supports(V11, Case((2, 262144), "bfloat16")) is None


def test_v11_plan_without_rows_knobs_and_errors():
    assert OP.plan(V11, 131072, (9, 0), "bfloat16").group == 8  # the smallest C whose share fits the registers
    assert OP.plan(V11, 131072, (8, 0), "bfloat16") is None and OP.plan(V11, 2048, (9, 0), "float32") is None
    assert OP.defines(V11) == {"SB_STAGES": 2, "SB_THREADS": 256, "SB_BLOCKS_PER_SM": 2, "SB_ELEMS": 64}
    assert softmax_op.group_regs_knobs(_with11(group=11, threads=512, blocks_per_sm=1)) == (2, 512, 1, 64, 11)
    p = OP.plan(_with11(threads=512, blocks_per_sm=1), 131072, (9, 0), "bfloat16")
    assert p.group == 4 and p.block == 512  # 512 x 64 values hold a quarter row
    assert _gr(2048, 131072, "bfloat16", group=4) is None  # a 32768-value share: not in 256 x 64 registers
    for bad, match in (({"stages": 9}, "2 to 8"), ({"threads": 100}, "blocks of 128, 256, 512, 1024"),
                       ({"elems": 48}, "16, 32, 64"), ({"blocks_per_sm": 5}, "1 to 4 blocks"),
                       ({"group": 17}, "auto` or a group size of 1 to 16")):
        with pytest.raises(ValueError, match=match):
            OP.plan(_with11(**bad), 131072, (9, 0), "bfloat16")


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_v11_every_instance_compiles_without_spills(arch):
    m = compile_variant(OP, V11, arch=arch)
    declared = set(parse_signatures(V11.path.read_text()))
    assert declared == set(m.resources) and len(declared) == 2 * 16 + 2
    assert all(r.registers <= 128 for r in m.resources.values())  # two 256-thread blocks an SM
    spills = {k: (r.registers, r.spill_stores, r.spill_loads) for k, r in m.resources.items() if r.spills}
    assert not spills, spills
    with pytest.raises(CompileError):
        compile_file(V11.path, arch="sm_80", defines=OP.defines(V11))


@pytest.mark.skipif(toolchain.cuobjdump_path() is None, reason="cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
def test_v11_sass_one_sweep_registers_and_the_group_exchange():
    m = compile_file(V11.path, arch="sm_90", defines=OP.defines(V11))
    for fun in ("softmax_gr_c8_bf16", "softmax_gr_c11_f32"):
        sass = run_cuobjdump(m.cubin, "-sass", "-fun", fun)
        assert "UBLKCP.S.G" in sass and "STG.E.128" in sass, fun
        assert not re.search(r"\b(LDL|STL)\b", sass), fun
        assert len(re.findall(r"REDG?\.E\.ADD\.STRONG\.GPU", sass)) == 1, fun  # thread 0's release add
        assert "LDG.E.STRONG.GPU" in sass and "NANOSLEEP" in sass, fun  # the acquire polls
        assert "MAPA" not in sass and "UCGABAR" not in sass, fun  # no cluster: no DSMEM, no cluster barrier
    one = run_cuobjdump(m.cubin, "-sass", "-fun", "softmax_gr_c1_bf16")
    assert "UBLKCP.S.G" in one and not re.search(r"RED\.|REDG|STRONG\.GPU|NANOSLEEP", one)


def test_v11_launch_is_cooperative_with_256_thread_blocks(fake_launch):
    calls, zeroed = fake_launch(Case((2048, 131072), "bfloat16"), per_sm=2, variant=V11)
    assert calls[0] == ("occupancy", 256, 2 * bulk_stage_bytes(131072, 8, "bfloat16"))
    _, name, args, kw = calls[1]
    assert name == "softmax_gr_c8_bf16" and args[2:] == (2048, 131072, "counters[33]", "slots[33x8]")
    assert kw == dict(grid=264, block=256, shared_mem=65536, cooperative=True)
    assert zeroed[-1] == (33, 8)
    calls, _ = fake_launch(Case((2048, 131072), "bfloat16"), per_sm=1, variant=V11)  # registers allow one
    assert calls[1][3]["grid"] == 16 * 8  # the grid follows the occupancy API, the C the plan
