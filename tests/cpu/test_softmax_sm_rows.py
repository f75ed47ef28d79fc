"""softmax v8_sm_rows without a GPU: its plan (cluster size by the L2 part a block would read, the
ring of chunks as dynamic shared memory, the producer warp in the block) by width, dtype, arch and
header knobs; the macros the knobs become and the clear errors bad knobs give; that every instance
a plan names is compiled, with no spills for sm_90 / sm_100 / sm_120 (default and the thread-count
knob builds); no sm_80 build; and the SASS: bulk copies into the ring and an L2 prefetch, mbarrier
arrivals and waits, the consumers' named barrier, 16-byte global loads (the L2 part) and stores,
no local memory and no MEMBAR."""

from __future__ import annotations

import dataclasses
import re

import pytest

from kernelab.analysis.sass import run_cuobjdump
from kernelab.check.inputs import DTYPES
from kernelab.gpu import CompileError, compile_file, parse_signatures, toolchain
from kernelab.ops import Case, discover
from kernelab.ops.build import compile_variant
from kernelab.ops.softmax import op as softmax_op

OP = discover()["softmax"]
V8 = OP.variant("v8_sm_rows")
RING = 13 * 16384  # the default ring: 13 chunks of 16 KiB
# The most shared memory a block may have (opt-in), which the SM's total less the 1 KiB the driver
# reserves a block does not lower: sm_90 / sm_100 227 KiB, sm_120 99 KiB.
LIMIT, LIMIT_120 = 232448, 101376
WIDTHS = (2049, 4097, 32769, 40000, 65536, 65537, 100000, 131072, 131073, 262144)


def _with(**meta):
    return dataclasses.replace(V8, meta={**V8.meta, **{k: str(v) for k, v in meta.items()}})


def _plan(v, n, dtype="bfloat16", cc=(9, 0)):
    return OP.plan(v, n, cc, dtype)


def _share(n, c, dtype):
    """Bytes of the widest share a row of n gives one of c blocks (the kernel's and the plan's formula)."""
    v = 16 // (4 if dtype == "float32" else 2)
    return 16 * -(-n // (v * c))


def test_plan_takes_the_smallest_cluster_whose_l2_part_fits():
    p = _plan(V8, 131072)  # bf16 row 256 KiB, C = 1: 208 KiB staged, 48 KiB through L2
    assert (p.name, p.cluster, p.block, p.smem, p.persistent) == ("softmax_sr_c1", 1, 512 + 32, RING, True)
    assert isinstance(p, softmax_op.BulkPlan)  # the launch passes p.smem as dynamic shared memory
    p = _plan(V8, 131072, "float32")  # 512 KiB: C = 1 would leave 304 KiB a block in L2; C = 2 48 KiB
    assert (p.name, p.cluster, p.smem) == ("softmax_sr_c2", 2, RING)
    assert (_plan(V8, 262144).cluster, _plan(V8, 262144, "float32").cluster) == (2, 4)
    # Rows narrower than the ring are staged whole: the ring is the share.
    assert (_plan(V8, 65536).cluster, _plan(V8, 65536).smem) == (1, 131072)
    assert (_plan(V8, 65536, "float32").cluster, _plan(V8, 65536, "float32").smem) == (1, RING)
    assert (_plan(V8, 2049).smem, _plan(V8, 2049, "float32").smem) == (16 * 257, 16 * 513)
    # sm_100 as sm_90; sm_120 has 99 KiB a block: a 98 KiB ring, so bf16 131072 needs C = 2.
    assert _plan(V8, 131072, cc=(10, 0)) == _plan(V8, 131072)
    p = _plan(V8, 131072, cc=(12, 0))
    assert (p.cluster, p.smem) == (2, 100352)
    for n in WIDTHS:
        for dt in OP.dtypes:
            for cc in ((9, 0), (10, 0), (12, 0)):
                p = _plan(V8, n, dt, cc)
                ring = RING if cc < (12, 0) else 100352
                share = _share(n, p.cluster, dt)
                assert p.smem == min(share, ring) and p.capacity >= n, (n, dt, cc, p)
                assert share - p.smem <= 64 * 1024 or p.cluster == 4, (n, dt, cc, p)  # the L2 part
                if p.cluster > 1:  # the next smaller cluster would read more than 64 KiB through L2
                    assert _share(n, p.cluster // 2, dt) - ring > 64 * 1024, (n, dt, cc, p)
                assert p.smem + softmax_op.BULK_STATIC_MAX <= (LIMIT if cc < (12, 0) else LIMIT_120)


def test_plan_and_supports_refuse_what_v8_cannot_run(monkeypatch):
    assert _plan(V8, 2048) is None and _plan(V8, 262145) is None and _plan(V8, 2049).cluster == 1
    assert _plan(V8, 131072, cc=(8, 0)) is None and _plan(V8, 131072, cc=(8, 9)) is None  # no bulk copies
    why = OP.supports(V8, Case((4, 1000), "bfloat16"))
    assert why and "2049" in why and "262144" in why and "N = 1000" in why
    assert OP.supports(V8, Case((4, 300000), "float32"))
    assert OP.supports(V8, Case((4, 131072), "float32")) is None
    import kernelab.gpu as gpu

    monkeypatch.setattr(gpu, "default_arch", lambda: gpu.Arch.parse("sm_80"))
    assert "needs sm_90" in OP.supports(V8, Case((4, 131072), "bfloat16"))


def test_knobs_move_the_plan_and_become_macros():
    assert OP.defines(V8) == {"SR_CHUNK_KIB": 16, "SR_CHUNKS": 13, "SR_THREADS": 512, "SR_STORE": 0}
    assert OP.defines(_with(chunk_kib=8, chunks=24, threads=992, store=2)) == {
        "SR_CHUNK_KIB": 8, "SR_CHUNKS": 24, "SR_THREADS": 992, "SR_STORE": 2}
    assert _plan(_with(chunks=12), 131072).smem == 12 * 16384
    assert _plan(_with(threads=992), 131072).block == 1024
    assert _plan(_with(min_cluster=2), 131072).cluster == 2  # forced C = 2 for bf16
    assert _plan(_with(min_cluster=4), 2049).cluster == 4
    forced = _plan(_with(max_l2_kib=320), 131072, "float32")  # forced C = 1 for fp32: 304 KiB through L2
    assert (forced.cluster, forced.smem) == (1, RING)
    # A ring past what a block may have is clipped to it; none of 1, 2, 4 qualifying takes C = 4.
    assert _plan(_with(chunk_kib=64, chunks=24), 262144).smem == LIMIT - softmax_op.BULK_STATIC_MAX
    p = _plan(_with(chunks=2), 262144, "float32")  # 32 KiB ring: C = 4 still leaves 224 KiB in L2
    assert (p.cluster, p.smem) == (4, 32768)
    for bad, match in (({"chunk_kib": 0}, "1 to 64 KiB"), ({"chunk_kib": 65}, "1 to 64 KiB"),
                       ({"chunks": 25}, "1 to 24"), ({"threads": 1024}, "multiple of 32 from 128 to 992"),
                       ({"threads": 500}, "multiple of 32"), ({"threads": 96}, "128"),
                       ({"max_l2_kib": -1}, "at least 0"), ({"min_cluster": 8}, "one of 1, 2, 4"),
                       ({"store": 3}, "0 \\(st.global\\)")):
        with pytest.raises(ValueError, match=match):
            _plan(_with(**bad), 131072)
        with pytest.raises(ValueError, match="v8_sm_rows.cu"):
            OP.defines(_with(**bad))


def test_header_declares_the_strategy_arch_and_knob_defaults():
    assert V8.meta["strategy"] == "sm_rows" and V8.min_arch == "sm_90" and V8.meta["access_bytes"] == "16"
    assert {k: V8.meta_int(k) for k in softmax_op.SM_ROWS_DEFAULTS} == softmax_op.SM_ROWS_DEFAULTS
    assert V8.summary.startswith("v8_sm_rows:")
    for word in ("What changed from v7", "Why:", "Predicted:", "Measured: BENCHMARKS.md, softmax rows (full runs)."):
        assert word in V8.header, word


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_every_instance_compiles_without_spills(arch):
    m = compile_variant(OP, V8, arch=arch)
    declared = set(parse_signatures(V8.path.read_text()))
    assert declared == set(m.resources) and len(declared) == 2 * 3 + 2
    cc = (int(arch[3:-1]), int(arch[-1]))
    limit = LIMIT if cc < (12, 0) else LIMIT_120
    for n in WIDTHS:
        for dt in OP.dtypes:
            p = _plan(V8, n, dt, cc)
            k = f"{p.name}_{DTYPES[dt]}"
            assert k in declared
            assert p.smem + m.resources[k].shared_static <= limit, (k, p.smem, m.resources[k].shared_static)
    spills = {k: (r.registers, r.spill_stores, r.spill_loads) for k, r in m.resources.items() if r.spills}
    assert not spills, spills


@pytest.mark.parametrize("defines", [{"SR_THREADS": 992}, {"SR_THREADS": 128}, {"SR_THREADS": 768},
                                     {"SR_STORE": 1}, {"SR_STORE": 2}, {"SR_L2_HINT": 0}, {"SR_PREFETCH": 0},
                                     {"SR_LOAD_EF": 0}, {"SR_CHUNKS": 24, "SR_CHUNK_KIB": 8}],
                         ids=lambda d: ",".join(f"{k}={v}" for k, v in d.items()))
def test_knob_builds_compile_without_spills(defines):
    """The builds a sweep times (992 consumer threads: 64 registers, 2 L2-part vectors a thread in flight)."""
    m = compile_file(V8.path, arch="sm_90", defines={**OP.defines(V8), **defines})
    spills = {k: (r.registers, r.spill_stores, r.spill_loads) for k, r in m.resources.items() if r.spills}
    assert not spills, spills


def test_refuses_sm_80():
    assert V8.min_arch == "sm_90"
    with pytest.raises(CompileError, match="sm_90"):
        compile_file(V8.path, arch="sm_80", defines=OP.defines(V8))


def test_bad_macros_fail_the_build_with_the_rule():
    for bad, match in (({"SR_THREADS": 1024}, "SR_THREADS"), ({"SR_CHUNKS": 0}, "SR_CHUNKS"),
                       ({"SR_STORE": 5}, "SR_STORE")):
        with pytest.raises(CompileError, match=match):
            compile_file(V8.path, arch="sm_90", defines={**OP.defines(V8), **bad})


def _sass(defines, fun, arch="sm_90"):
    m = compile_file(V8.path, arch=arch, defines={**OP.defines(V8), **defines})
    return m, run_cuobjdump(m.cubin, "-sass", "-fun", fun)


needs_cuobjdump = pytest.mark.skipif(toolchain.cuobjdump_path() is None,
                                     reason="cuobjdump not found (pip install nvidia-cuda-cuobjdump)")


@needs_cuobjdump
@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
def test_sass_16_byte_global_accesses_and_no_local_memory(arch):
    from kernelab.analysis.sass import sass_mix

    m = compile_variant(OP, V8, arch=arch)
    mix = sass_mix(m.cubin)
    assert set(mix) == set(m.resources)
    for k, x in mix.items():
        # The L2 part: 2 x (U first + U looped) predicated 16-byte loads (U = 4 at 512 threads);
        # head / tail scalars are the only narrower loads.
        assert x.ldg128 >= 16 and x.stg128 >= 1, (k, x.ldg128, x.stg128)
        assert not x.ldl and not x.stl, (k, x.ldl, x.stl)
        narrow = x.ldg8 + x.ldg16 + x.ldg32 + x.ldg64
        assert narrow == 2, (k, x.ldg8, x.ldg16, x.ldg32, x.ldg64)  # the head and the tail scalar


@needs_cuobjdump
def test_sass_ring_producer_and_consumers():
    _, sass = _sass({}, "softmax_sr_c1_bf16")
    assert "UBLKCP.S.G" in sass  # cp.async.bulk global -> shared (the ring's chunks)
    assert "UBLKPF.L2" in sass  # cp.async.bulk.prefetch.L2 (the L2 part, a row ahead)
    assert "SYNCS.ARRIVE.TRANS64" in sass and "SYNCS.PHASECHK.TRANS64.TRYWAIT" in sass  # arrivals, waits
    assert re.search(r"BAR\.SYNC\S* 0x1, 0x200", sass)  # the consumers' named barrier: 512 threads
    assert re.search(r"LDG\.E\.NA\.128", sass)  # L1::no_allocate loads of the L2 part
    assert len(re.findall(r"LDS\.128", sass)) >= 4  # stats and output sweeps over the ring
    assert "MEMBAR" not in sass
    _, c2 = _sass({}, "softmax_sr_c2_f32")  # the cluster exchange: st.async into the peer's pairs
    assert "MEMBAR" not in c2 and ("STAS" in c2 or "ST.ASYNC" in c2 or "SYNCS" in c2)
    _, nopf = _sass({"SR_PREFETCH": 0}, "softmax_sr_c1_bf16")
    assert "UBLKPF" not in nopf
    _, cs = _sass({"SR_STORE": 1}, "softmax_sr_c1_bf16")
    assert re.search(r"STG\.E\.EF\.128", cs)
    _, wide = _sass({"SR_THREADS": 992}, "softmax_sr_c1_bf16")
    assert re.search(r"BAR\.SYNC\S* 0x1, 0x3e0", wide)  # 992 consumers
