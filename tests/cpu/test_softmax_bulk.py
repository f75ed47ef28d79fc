"""softmax v7_bulk_smem (and v10_staged_regs, v7's ring read once into registers) without a GPU: its plan (cluster size and ring of stages by width, dtype,
arch and header knobs), the macros the knobs become, that every instance a plan names is
compiled, no spills for sm_90 / sm_100 / sm_120, no sm_80 build, and the SASS of the row loop:
bulk copies global -> shared (UBLKCP.S.G) completing on mbarriers, 16-byte shared loads, and no
MEMBAR (nothing in the loop waits for memory traffic but the stage's mbarrier). v10: the same plan
with the share also fitting threads x `@elems` registers, SB_ELEMS, its instances and SASS."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import torch

from kernelab.analysis.occupancy import occupancy, occupancy_for_kernel
from kernelab.analysis.sass import run_cuobjdump
from kernelab.check.inputs import DTYPES
from kernelab.gpu import CompileError, compile_file, parse_signatures, toolchain
from kernelab.ops import Case, discover
from kernelab.ops.build import compile_variant
from kernelab.ops.softmax import op as softmax_op

from ._launch_recorder import record_launches

OP = discover()["softmax"]
V7 = OP.variant("v7_bulk_smem")
V10 = OP.variant("v10_staged_regs")


def _with(base=V7, **meta):
    return dataclasses.replace(base, meta={**base.meta, **{k: str(v) for k, v in meta.items()}})


def _plan(v, n, dtype="bfloat16", cc=(9, 0)):
    return OP.plan(v, n, cc, dtype)


def test_plan_takes_the_smallest_cluster_whose_stages_fit():
    p = _plan(V7, 131072)  # bf16 row 256 KiB: C = 4 -> 64 KiB chunks, 3 stages = 192 KiB
    assert (p.name, p.cluster, p.block, p.smem, p.persistent) == ("softmax_bk_c4", 4, 512, 3 * 65536, True)
    p = _plan(V7, 131072, "float32")  # 512 KiB: C = 8
    assert (p.name, p.cluster, p.smem) == ("softmax_bk_c8", 8, 3 * 65536)
    assert _plan(V7, 262144, "float32").cluster == 16 and _plan(V7, 262144).cluster == 8
    assert _plan(V7, 32769).cluster == 1 and _plan(V7, 65536).cluster == 2
    # sm_120 has 99 KiB a block: twice the cluster; fp32 262144 does not fit at all.
    assert _plan(V7, 131072, cc=(12, 0)).cluster == 8 and _plan(V7, 262144, "float32", (12, 0)) is None
    assert _plan(V7, 131072, cc=(8, 0)) is None  # no bulk copies or clusters before sm_90
    assert _plan(V7, 2048) is None and _plan(V7, 262145) is None and _plan(V7, 2049).cluster == 1
    assert "262144" in OP.supports(V7, Case((1, 1000), "float32"))
    for n in (2049, 4097, 32769, 40000, 65537, 100000, 131072, 262144):
        for dt in OP.dtypes:
            p = _plan(V7, n, dt)
            v = 16 // (4 if dt == "float32" else 2)
            stage = 16 * -(-n // (v * p.cluster))  # the kernel's check of its dynamic shared memory
            assert p.smem == 3 * stage and p.capacity >= n, (n, dt, p)
            assert p.smem + softmax_op.BULK_STATIC_MAX <= 232448 - 1024


def test_knobs_move_the_plan_and_become_macros():
    assert OP.defines(V7) == {"SB_STAGES": 3, "SB_THREADS": 512, "SB_BLOCKS_PER_SM": 1}
    assert OP.defines(_with(stages=4, threads=256)) == {"SB_STAGES": 4, "SB_THREADS": 256, "SB_BLOCKS_PER_SM": 1}
    assert _plan(_with(stages=4), 131072).cluster == 8  # 4 x 64 KiB no longer fits: chunks of 32 KiB
    assert _plan(_with(blocks_per_sm=2), 131072).cluster == 8  # two rings of 96 KiB an SM
    assert _plan(_with(min_cluster=16), 131072).cluster == 16
    assert _plan(_with(threads=1024), 131072).block == 1024
    for bad, match in (({"stages": 1}, "2 to 8"), ({"threads": 384}, "128, 256"), ({"blocks_per_sm": 3,
                       "threads": 1024}, "2048 threads"), ({"min_cluster": 3}, "one of")):
        with pytest.raises(ValueError, match=match):
            _plan(_with(**bad), 131072)


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_every_instance_compiles_without_spills(arch):
    m = compile_variant(OP, V7, arch=arch)
    declared = set(parse_signatures(V7.path.read_text()))
    assert declared == set(m.resources) and len(declared) == 2 * 5 + 2
    cc = (int(arch[3:-1]), int(arch[-1]))
    for n in (2049, 32769, 65537, 131072, 262144):
        for dt in OP.dtypes:
            p = _plan(V7, n, dt, cc)
            if p is not None:
                assert f"{p.name}_{DTYPES[dt]}" in declared
                assert p.smem + m.resources[f"{p.name}_{DTYPES[dt]}"].shared_static <= 232448 - 1024
    spills = {k: (r.registers, r.spill_stores, r.spill_loads) for k, r in m.resources.items() if r.spills}
    assert not spills, spills


def test_refuses_sm_80():
    assert V7.min_arch == "sm_90"
    with pytest.raises(CompileError):
        compile_file(V7.path, arch="sm_80", defines=OP.defines(V7))


def _sass(defines, fun):
    m = compile_file(V7.path, arch="sm_90", defines={**OP.defines(V7), **defines})
    return run_cuobjdump(m.cubin, "-sass", "-fun", fun)


@pytest.mark.skipif(toolchain.cuobjdump_path() is None, reason="cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
def test_sass_bulk_copies_mbarriers_and_no_membar():
    sass = _sass({}, "softmax_bk_c4_bf16")
    assert "UBLKCP.S.G" in sass  # cp.async.bulk global -> shared
    assert "SYNCS.ARRIVE.TRANS64" in sass and "SYNCS.PHASECHK.TRANS64.TRYWAIT" in sass  # expect_tx, try_wait
    assert len(re.findall(r"LDS\.128", sass)) >= 8  # the sweeps over the stage
    assert "STG.E.128" in sass and "MEMBAR" not in sass
    assert not re.search(r"\bLDG\.E\.(64|128)", sass)  # x arrives only by bulk copies (head/tail: scalars)
    store = _sass({"SB_STORE": 1}, "softmax_bk_c8_f32")
    assert "UBLKCP.G.S" in store and "DEPBAR.LE SB0, 0x1" in store  # bulk store; refill after wait_group.read 1
    assert "MEMBAR.ALL.GPU" not in store
    assert "ST.E.EF.128" in _sass({"SB_STORE": 2}, "softmax_bk_c4_bf16") or "STG.E.EF.128" in _sass(
        {"SB_STORE": 2}, "softmax_bk_c4_bf16")


# ---- v10_staged_regs -----------------------------------------------------------------------------

def test_v10_share_also_fits_the_registers():
    # Defaults 256 threads x 64 values, 2 stages: bf16 131072 -> C = 8 (32 KiB shares, 64 KiB ring;
    # v7 takes C = 4, whose 64 KiB shares fit 3 stages but not 256 x 64 registers).
    p = _plan(V10, 131072)
    assert (p.name, p.cluster, p.block, p.smem) == ("softmax_bk_c8", 8, 256, 2 * 32768)
    assert _plan(V10, 131072, "float32").cluster == 8 and _plan(V10, 131072, "float32").smem == 2 * 65536
    assert _plan(V7, 131072).cluster == 4
    # 32769 bf16: v7 stages it whole (C = 1, 3 x 64 KiB fits); 32769 values > 256 x 64 x 2, so C = 4.
    assert _plan(V7, 32769).cluster == 1 and _plan(V10, 32769).cluster == 4
    assert _plan(V10, 16384).cluster == 1 and _plan(V10, 16385).cluster == 2
    # More values a thread, or more threads, allow smaller clusters.
    assert _plan(_with(V10, threads=512, stages=3), 131072).cluster == 4
    assert _plan(_with(V10, elems=32), 131072).cluster == 16
    for n in (2049, 4097, 32769, 40000, 65537, 100000, 131072, 262144):
        for dt in OP.dtypes:
            p = _plan(V10, n, dt)
            v = 16 // (4 if dt == "float32" else 2)
            stage_vecs = -(-n // (v * p.cluster))
            assert stage_vecs * v <= 256 * 64 and p.smem == 2 * 16 * stage_vecs, (n, dt, p)
    assert _plan(V10, 131072, cc=(8, 0)) is None and _plan(V10, 2048) is None
    with pytest.raises(ValueError, match="@elems 48"):
        _plan(_with(V10, elems=48), 131072)


def test_v10_knobs_become_macros():
    assert OP.defines(V10) == {"SB_STAGES": 2, "SB_THREADS": 256, "SB_BLOCKS_PER_SM": 1, "SB_ELEMS": 64}
    assert OP.defines(_with(V10, elems=32, threads=1024))["SB_ELEMS"] == 32
    assert "SB_ELEMS" not in OP.defines(V7)  # v7 has no `@elems`: its build (and cache key) is unchanged


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
@pytest.mark.parametrize("name", ["v10_staged_regs", "v12_dynamic_rows"])
def test_v10_v12_every_instance_compiles_without_spills(name, arch):
    v = OP.variant(name)
    m = compile_variant(OP, v, arch=arch)
    declared = set(parse_signatures(v.path.read_text(), OP.defines(v), [v.path.parent]))
    assert declared == set(m.resources) and len(declared) == 2 * 5 + 2
    cc = (int(arch[3:-1]), int(arch[-1]))
    for n in (2049, 32769, 65537, 131072, 262144):
        for dt in OP.dtypes:
            p = _plan(v, n, dt, cc)
            if p is not None:
                assert f"{p.name}_{DTYPES[dt]}" in declared
    # Two 256-thread blocks an SM: ptxas keeps sm_90 within 128 by itself; elsewhere SB_MIN_BLOCKS caps it.
    assert all(r.registers <= 128 for r in m.resources.values()), {k: r.registers for k, r in m.resources.items()}
    spills = {k: (r.registers, r.spill_stores, r.spill_loads) for k, r in m.resources.items() if r.spills}
    assert not spills, spills
    with pytest.raises(CompileError):
        compile_file(v.path, arch="sm_80", defines=OP.defines(v))


@pytest.mark.skipif(toolchain.cuobjdump_path() is None, reason="cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
def test_v10_sass_one_sweep_from_shared_memory():
    m = compile_file(V10.path, arch="sm_90", defines=OP.defines(V10))
    sass = run_cuobjdump(m.cubin, "-sass", "-fun", "softmax_bk_c8_bf16")
    assert "UBLKCP.S.G" in sass and "SYNCS.PHASECHK.TRANS64.TRYWAIT" in sass
    # The one sweep, unrolled: K = 64 / 8 = 8 LDS.128 a thread (v7 reads the stage three times).
    assert len(re.findall(r"LDS\.128", sass)) == 8, len(re.findall(r"LDS\.128", sass))
    assert len(re.findall(r"STG\.E\.128", sass)) == 8 and "MEMBAR" not in sass
    assert not re.search(r"\bLDG\.E\.(64|128)", sass)


# ---- v12_dynamic_rows ----------------------------------------------------------------------------
V12 = OP.variant("v12_dynamic_rows")


def test_no_exchange_ablation_is_refused_where_rows_are_handed_out():
    """SB_ABLATE bit 1 (no cluster exchange, a timing-only knob) faulted v4 at 2048 x 131072 in session 28: v12's row
    handout needs the exchange to keep a cluster's blocks within a row of their leader. dynamic_rows refuses it at
    compile time, naming the knob and where it still works (v10's static rows, which compile with it)."""
    with pytest.raises(CompileError, match="SB_ABLATE bit 1"):
        compile_file(V12.path, arch="sm_90", defines={**OP.defines(V12), "SB_ABLATE": 1}, use_cache=False)
    for bits in (2, 8):  # the other ablations keep the exchange
        assert compile_file(V12.path, arch="sm_90", defines={**OP.defines(V12), "SB_ABLATE": bits}).resources
    assert compile_file(V10.path, arch="sm_90", defines={**OP.defines(V10), "SB_ABLATE": 1}).resources


def test_v12_plans_as_v10_with_its_own_instances():
    for n in (2049, 16385, 32769, 65537, 131072, 262144):
        for dt in OP.dtypes:
            p10, p12 = _plan(V10, n, dt), _plan(V12, n, dt)
            assert p12.name == p10.name.replace("softmax_bk_", "softmax_dy_")
            assert (p12.cluster, p12.block, p12.smem, p12.capacity) == (p10.cluster, p10.block, p10.smem, p10.capacity)
            assert p12.work and not p10.work  # the launch passes `work` by the plan, not by the kernel's name
    assert OP.defines(V12) == OP.defines(V10)
    assert _plan(V12, 131072, cc=(8, 0)) is None and "262144" in OP.supports(V12, Case((1, 1000), "float32"))


@pytest.mark.skipif(toolchain.cuobjdump_path() is None, reason="cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
def test_v12_sass_takes_rows_with_atomics_and_pushes_them():
    m = compile_file(V12.path, arch="sm_90", defines=OP.defines(V12))
    c8 = run_cuobjdump(m.cubin, "-sass", "-fun", "softmax_dy_c8_bf16")
    assert len(re.findall(r"LDS\.128", c8)) == 8 and len(re.findall(r"STG\.E\.128", c8)) == 8  # v10's body
    assert "UBLKCP.S.G" in c8 and "ATOMG.E.ADD" in c8  # bulk copies; the rows taken from the counter
    assert len(re.findall(r"\bST\.ASYNC|STAS", c8)) >= 2  # the (max, sum) pairs and the row indices
    assert not re.search(r"\b(LDL|STL)\b", c8)
    c1 = run_cuobjdump(m.cubin, "-sass", "-fun", "softmax_dy_c1_bf16")  # no cluster: no DSMEM pushes
    assert "ATOMG.E.ADD" in c1 and not re.search(r"\bST\.ASYNC|STAS|MAPA", c1)


def test_v12_launch_passes_the_stream_counters(monkeypatch):
    """The launch adds `work` (two int32, this stream's slot of dynamic_work) after M, N; v10's does not."""
    case = Case((64, 131072), "bfloat16")
    monkeypatch.setattr(softmax_op, "persistent_grid", lambda k, p, m: 30)
    # v4_dispatch's bf16 rows of 32769-65536 are v12's (wider ones v14's: test_softmax_split_grid.py)
    calls = record_launches(OP, [(V12, case), (OP.variant("v4_dispatch"), Case((64, 65536), "bfloat16")), (V10, case)])
    (n12, a12, kw12), (n4, a4, kw4), (n10, a10, kw10) = calls
    assert n12 == "softmax_dy_c8_bf16" and n4 == "softmax_dy_c4_bf16" and n10 == "softmax_bk_c8_bf16"
    assert len(a12) == len(a4) == 5 and len(a10) == 4 and a12[2:4] == (64, 131072)
    work = a12[4]
    assert work.dtype == torch.int32 and work.numel() == 2 and work.tolist() == [0, 0]
    assert a4[4].data_ptr() == work.data_ptr()  # one slot per (device, stream), reused
    assert kw12 == dict(grid=30, block=256, cluster=8, shared_mem=65536) == kw10
    assert kw4 == dict(grid=30, block=256, cluster=4, shared_mem=65536)


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_v4_dispatch_v12_rows_are_not_register_bound(arch):
    """Where v4_dispatch sends rows to v12, the ring, not the registers, sets the blocks an SM: the
    occupancy at the instance's registers equals that at 128 (the design's two 256-thread blocks).
    Without SB_MIN_BLOCKS, sm_100's fp32 instances took 152-154 registers: one block an SM for rows
    of 131073-196608, where the ring has room for two."""
    v4 = OP.variant("v4_dispatch")
    m = compile_variant(OP, v4, arch=arch)
    cc = (int(arch[3:-1]), int(arch[-1]))
    seen = 0
    for dt in OP.dtypes:
        for n in (32769, 65536, 65537, 131072, 131073, 196608, 262144):
            p = OP.plan(v4, n, cc, dt)
            if not getattr(p, "work", False):  # v12's instances (the plans that take its counters)
                continue
            r = m.resources[f"{p.name}_{DTYPES[dt]}"]
            got = occupancy_for_kernel(r, cc, p.block, p.smem).blocks_per_sm
            at_128 = occupancy(cc, p.block, min(r.registers, 128), r.shared_static + p.smem, barriers=r.barriers)
            assert got == at_128.blocks_per_sm >= 1, (arch, dt, n, p.name, r.registers, got)
            seen += 1
    assert seen >= 8  # bf16 32769-262144 and fp32 65537-262144 go to v12 on every arch here


def _c8_bf16_sass(defines):
    """sm_90 SASS of v12's softmax_dy_c8_bf16 (the bench row's instance) built with extra macros, checked first to
    stay within 128 registers (two 256-thread blocks an SM) without spills."""
    m = compile_file(V12.path, arch="sm_90", defines={**OP.defines(V12), **defines})
    r = m.resources["softmax_dy_c8_bf16"]
    assert r.registers <= 128 and not r.spills, (defines, r.registers, r.spill_stores)
    return run_cuobjdump(m.cubin, "-sass", "-fun", "softmax_dy_c8_bf16")


@pytest.mark.skipif(toolchain.cuobjdump_path() is None, reason="cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
def test_fast_exp_knob_sass():
    """SB_FAST_EXP 1 (staged_rows.cuh's default): bf16 maxima on packed pairs (HMNMX2 / VHMNMX, none in the
    SB_FAST_EXP 0 build) and each exp's argument one FFMA (at least 64 more than 0's: one an element of the fast path's
    8 x 8), the sweep's LDS.128 predicated rather than branched around. Both builds within 128 registers (two
    256-thread blocks an SM), no spills."""
    default, fast = _c8_bf16_sass({"SB_FAST_EXP": 0}), _c8_bf16_sass({})
    packed = r"\b(V?HMNMX2?)\.BF16_V2\b"
    assert not re.search(packed, default)
    assert len(re.findall(packed, fast)) >= 8, len(re.findall(packed, fast))
    ffma = len(re.findall(r"\bFFMA\b", fast)) - len(re.findall(r"\bFFMA\b", default))
    assert ffma >= 64, ffma  # one a bf16 element (K = 8 vectors x 8)
    # The LDS.128 of the sweep are predicated (no branch around each), all 8 before the first exp.
    assert len(re.findall(r"@!?P\d LDS\.128", fast)) == 8


@pytest.mark.skipif(toolchain.cuobjdump_path() is None, reason="cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
def test_warp_exchange_knob_sass():
    """SB_WARP_XCHG 1 (staged_rows.cuh's default): no block barrier in the row loop (0's block merge has one
    BAR.SYNC a row beside the start-up's) and one warp merge fewer (10 SHFL.BFLY: its max and sum butterflies);
    an mbarrier arrival a warp says the stage is read. Within 128 registers, no spills."""
    default, warp = _c8_bf16_sass({"SB_WARP_XCHG": 0}), _c8_bf16_sass({})
    bars = [len(re.findall(r"\bBAR\.SYNC", t)) for t in (default, warp)]
    assert bars[1] == bars[0] - 1, bars
    shfl = [len(re.findall(r"SHFL\.BFLY", t)) for t in (default, warp)]
    assert shfl[1] <= shfl[0] - 10, shfl
    assert "SYNCS.ARRIVE.TRANS64.A1T0" in warp and "SYNCS.ARRIVE.TRANS64.A1T0" not in default  # the plain arrival


@pytest.mark.skipif(toolchain.cuobjdump_path() is None, reason="cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
def test_fill_and_trace_knobs_sass():
    """SB_FILL 1 (session 32) issues stage 0 in the prologue and the other stages from row 0's turn: one bulk-copy
    site more (UBLKCP) than the default's two (prologue, refill). SB_TRACE 1 reads %globaltimer (7 sites: entry,
    init, issue, the row's three, exit); the default reads it nowhere. Both within 128 registers, no spills
    (_c8_bf16_sass), so a probe's build keeps the shipped occupancy."""
    default, fill, trace = (_c8_bf16_sass(d) for d in ({}, {"SB_FILL": 1}, {"SB_TRACE": 1}))
    copies = [len(re.findall(r"\bUBLKCP\b", t)) for t in (default, fill)]
    assert copies[1] == copies[0] + 1, copies
    assert "GLOBALTIMER" not in default and "GLOBALTIMER" not in fill
    assert len(re.findall("GLOBALTIMER", trace)) >= 7


@pytest.mark.parametrize("threads", ["128", "256", "512"])
def test_v12_static_shared_memory_is_what_the_plan_leaves(threads):
    """SB_WARP_XCHG's pair slots (2 x C x W: 2 KiB at C = 16, 256 threads) are static shared memory beside the ring:
    every instance's static bytes stay within what bulk_plan keeps off the ring's budget for its cluster
    (BULK_STATIC_MAX + staged_pairs_bytes), on every CI arch."""
    v = dataclasses.replace(V12, meta={**V12.meta, "threads": threads})
    for arch in ("sm_90", "sm_100", "sm_120"):
        m = compile_file(v.path, arch=arch, defines=OP.defines(v))
        for name, r in m.resources.items():
            found = re.search(r"_c(\d+)_", name)
            c = int(found.group(1)) if found else 16  # softmax_bf16 / _f32: the contract kernel, the c16 instance
            allowed = softmax_op.BULK_STATIC_MAX + softmax_op.staged_pairs_bytes(c, int(threads))
            assert r.shared_static <= allowed, (arch, threads, name, r.shared_static, allowed)



def test_trace_layout_in_python_matches_the_knob():
    """kernelab.ops.softmax.trace reads SB_TRACE's records (the probe and the GPU test through it): its words per
    record, rows stamped, base word and magic are the ones staged_rows.cuh writes."""
    from kernelab.ops.softmax import trace

    src = (Path(V12.path).parent / "staged_rows.cuh").read_text()
    assert int(re.search(r"#define SB_TRACE_ROWS (\d+)", src)[1]) == trace.ROWS
    head = int(re.search(r"#define SB_TRACE_STRIDE \((\d+) \+ 4 \* SB_TRACE_ROWS\)", src)[1])
    assert head == trace.HEAD and trace.STRIDE == head + 4 * trace.ROWS
    assert int(re.search(r"#define SB_TRACE_MAGIC (0x[0-9a-f]+)ull", src)[1], 16) == trace.MAGIC
    assert f"[{trace.BASE} + (size_t)blockIdx.x * SB_TRACE_STRIDE + w]" in src
    assert f"reinterpret_cast<const unsigned long long*>(work)[{trace.MAGIC_WORD}] != SB_TRACE_MAGIC" in src
