"""softmax v5_persistent and v4_dispatch's table without a GPU: which instance each width and
dtype gets, that every instance a plan (or a flipped dispatch entry) can name is compiled into
the module it is taken from, no spills for sm_90 / sm_100 / sm_120, and the SASS of the cluster
loop: next-row loads issued, no MEMBAR (the mbarrier exchange replaced the releasing cluster
barrier), 16-byte accesses. Also the sweep script's --dry-run end to end."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from kernelab.check.inputs import DTYPES
from kernelab.gpu import Arch, CompileError, compile_file, parse_signatures, toolchain
from kernelab.ops import Case, discover
from kernelab.ops.build import compile_variant
from kernelab.ops.softmax import op as softmax_op
from kernelab.ops.softmax import rows

OP = discover()["softmax"]
V4, V5 = OP.variant("v4_dispatch"), OP.variant("v5_persistent")
ROOT = Path(__file__).resolve().parents[2]
WIDTHS = sorted({c.shape[1] for c in OP.test_cases()} | {1024, 8192, 8193, 16384, 16385, 32768, 65536, 131072,
                                                          131073, 262144})


def _name(v, n, cc=(9, 0), dtype="bfloat16"):
    p = OP.plan(v, n, cc, dtype)
    return None if p is None else p.name


def test_v5_plan_by_width():
    assert _name(V5, 1) == "softmax_pw_e8" and _name(V5, 1024) == "softmax_pw_e32"
    assert _name(V5, 1025) == "softmax_pc_t64_c1" and _name(V5, 8192) == "softmax_pc_t256_c1"
    assert _name(V5, 16384) == "softmax_pc_t512_c1"
    assert _name(V5, 16385) == "softmax_pc_t256_c4" and _name(V5, 32768) == "softmax_pc_t256_c4"
    assert _name(V5, 65536) == "softmax_pc_t256_c8"
    assert _name(V5, 131072) == "softmax_pc_t512_c8" and _name(V5, 262144) == "softmax_pc_t512_c16"
    assert _name(V5, 262145) is None
    assert "262144" in OP.supports(V5, Case((1, 262145), "float32"))
    # Clusters need sm_90: before it, v5 holds up to 16384 only.
    assert _name(V5, 16384, (8, 0)) == "softmax_pc_t512_c1" and _name(V5, 16385, (8, 0)) is None
    for n in WIDTHS:
        p = OP.plan(V5, n, (9, 0))
        if p is not None:
            assert p.persistent and p.capacity >= n, (n, p)
            assert p.cluster is None or p.block * p.cluster * rows.ELEMS_PER_THREAD == p.capacity


def test_v5_threads_knob_takes_the_fewest_blocks_of_that_size():
    import dataclasses

    v512 = dataclasses.replace(V5, meta={**V5.meta, "threads": "512"})
    v256 = dataclasses.replace(V5, meta={**V5.meta, "threads": "256"})
    assert _name(v512, 32768) == "softmax_pc_t512_c2" and _name(v512, 65536) == "softmax_pc_t512_c4"
    assert _name(v256, 131072) == "softmax_pc_t256_c16" and _name(v256, 262144) is None
    assert _name(v512, 8192) == "softmax_pc_t256_c1"  # the knob is about clusters; blocks fit N
    bad = dataclasses.replace(V5, meta={**V5.meta, "threads": "384"})
    with pytest.raises(ValueError, match="256 or 512"):
        OP.plan(bad, 32768, (9, 0))
    e64 = dataclasses.replace(V5, meta={**V5.meta, "elems": "64"})
    assert _name(e64, 1024) == "softmax_pw_e32"  # warps keep their instances
    assert _name(e64, 8192) == "softmax_pc_t128_e64_c1" and _name(e64, 16384) == "softmax_pc_t256_e64_c1"
    assert _name(e64, 32768) == "softmax_pc_t256_e64_c2" and _name(e64, 262144) == "softmax_pc_t256_e64_c16"
    assert _name(e64, 32768, (8, 0)) is None
    with pytest.raises(ValueError, match="32 or 64"):
        OP.plan(dataclasses.replace(V5, meta={**V5.meta, "elems": "48"}), 8192, (9, 0))


def test_dispatch_fixes_8192x32768_and_follows_the_measured_table():
    # bf16 4097-32768: v6 (8192 x 32768: its 32-element instance 257.7 us, v2 262.8, v3 362, v1 303)
    assert _name(V4, 32768) == "softmax_pk_block_t1024_e32" and _name(V4, 16385) == "softmax_pk_block_t1024_e32"
    assert _name(V4, 16384) == "softmax_pk_block_t1024"
    # fp32 12289-32768: "wide" (session 14's mid set: 3072 x 32768 199.6 us vs v2 276.7); v2 to 12288
    assert _name(V4, 32768, dtype="float32") == "softmax_dy_c2" and _name(V4, 16384, dtype="float32") == "softmax_dy_c1"
    assert _name(V4, 12288, dtype="float32") == "softmax_online_t512"
    assert _name(V4, 8192) == "softmax_pk_block_t512"  # v6 (16 elements a thread) 255.4 us vs 32 259.3, v1 271.7
    assert _name(V4, 8192, dtype="float32") == "softmax_online_t512"  # v2 515 us vs v1 542
    assert _name(V4, 1024) == "softmax_pk_warp_c1024"  # v6 250.8 us vs v0 266.1
    assert _name(V4, 1024, dtype="float32") == "softmax_warp_e32"
    # past 32768, the "wide" entry (session 14's grid of widths, op.py wide_plan): v12 where each
    # block's stage is a full 32 KiB and its clusters place (v12 alone since session 27, v14's grids before), v12's
    # 32-value clusters of 16 for fp32 rows they hold, else v16 (v13's kernel in the fewest 512-thread
    # blocks, 1-8, two an SM; every bf16 row past 131072), else v15 (1024-thread blocks: fp32 past 131072)
    assert _name(V4, 65536) == "softmax_dy_c4" and _name(V4, 65536, dtype="float32") == "softmax_dy_c4"
    assert _name(V4, 40960) == "softmax_hb_c2" and _name(V4, 57344) == "softmax_hb_c2"  # 20 / 28 KiB stages
    assert _name(V4, 32769, dtype="float32") == "softmax_dy_c4"
    assert _name(V4, 131072) == "softmax_dy_c8" and _name(V4, 262144) == "softmax_hb_c8"
    assert _name(V4, 98304) == "softmax_hb_c3" and _name(V4, 200704) == "softmax_hb_c7"
    # session 15: 1325 x 151936 in 5 half-SM blocks 215.0 us, v15's 3 x 1024 threads 235.8, v13's 4 253.2
    assert _name(V4, 151936) == "softmax_hb_c5" and _name(V4, 196608) == "softmax_hb_c6"
    # fp32 131072: a 128 KiB ring an SM in clusters of 8 -> clusters of 16 holding 32 values a thread
    assert _name(V4, 131072, dtype="float32") == "softmax_dy_t128_c16"  # session 29: its `_full` instance, aligned
    assert _name(V4, 131071, dtype="float32") == "softmax_dy_e32_c16"
    assert _name(V4, 98304, dtype="float32") == "softmax_dy_c8"
    assert _name(V4, 131073, dtype="float32") == "softmax_dy_c16"
    assert _name(V4, 262144, dtype="float32") == "softmax_ac_c8"  # clusters of 16 SMs: 244.4 us vs 212.8
    assert _name(V4, 300000) == "softmax_online_t512"
    assert _name(V4, 32768, (8, 0)) == "softmax_block_t1024" and _name(V4, 131072, (8, 0)) == "softmax_online_t512"
    for table in (softmax_op.DISPATCH_SM90, softmax_op.DISPATCH_OLDER):
        assert set(table) == set(OP.dtypes)
        for entries in table.values():
            widths = [w for w, _ in entries]
            assert widths == sorted(widths), entries
            assert all(s in softmax_op.STRATEGIES for _, s in entries), entries


def _planned_names(v, cc, dtype):
    out = set()
    for n in WIDTHS:
        p = OP.plan(v, n, cc, dtype)
        if p is not None and p.name is not None:
            out.add(f"{p.name}_{DTYPES[dtype]}")
    return out


def _v4_kernels(arch, v=V4):
    """Kernel names v4_dispatch.cu declares when compiled for `arch` (its `#if __CUDA_ARCH__ >= 900`
    blocks hold the cluster instances; the lists no entry names are left out: softmax_op.dispatch_lists),
    from the compiled module (what a launch can find)."""
    return set(compile_variant(OP, v, arch=arch).resources)


@pytest.mark.parametrize("strategy,elems", [("persistent", 32), ("persistent", 64), ("warp", 32), ("block", 32),
                                            ("online", 32), ("cluster", 32), ("dynamic", 32),
                                            ("dynamic_e32", 32), ("dynamic_t128", 32), ("any_cluster", 32),
                                            ("half_blocks", 32),
                                            ("wide", 32)])
def test_any_strategy_in_the_dispatch_table_names_kernels_v4_has(monkeypatch, strategy, elems):
    """Flipping an entry of DISPATCH_SM90 to another strategy (the lead's one-word change after a
    sweep), or DISPATCH_PERSISTENT_ELEMS to 64, must only name instances v4 holds for that arch, once
    compiled from the flipped tables (they decide which optional instance lists v4 builds)."""
    for table_name in ("DISPATCH_SM90", "DISPATCH_OLDER"):
        table = getattr(softmax_op, table_name)
        flipped = {dt: tuple((w, strategy) for w, _ in entries) for dt, entries in table.items()}
        monkeypatch.setattr(softmax_op, table_name, flipped)
    monkeypatch.setattr(softmax_op, "DISPATCH_PERSISTENT_ELEMS", {dt: elems for dt in OP.dtypes})
    softmax_op._plan.cache_clear()
    try:
        kernels = {(8, 0): _v4_kernels("sm_80"), (9, 0): _v4_kernels("sm_90")}
        for cc in ((8, 0), (9, 0)):
            for dt in OP.dtypes:
                missing = _planned_names(V4, cc, dt) - kernels[cc]
                assert not missing, f"{strategy} on sm_{cc[0]}{cc[1]} {dt}: v4 lacks {sorted(missing)}"
    finally:
        monkeypatch.undo()
        softmax_op._plan.cache_clear()


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_100", "sm_120"])
def test_v4_holds_v5_instances_for_its_arch_without_spills(arch):
    """v4 built for a "persistent" entry includes v5: the warp and single-block instances build
    everywhere, the clusters on sm_90+. (sm_80 has no clusters, so a "persistent" entry there picks
    blocks up to 16384 and falls through.) Its default build leaves them out (no entry names them).
    The persistent build is compiled for sm_80 and sm_90 (the flip test's builds, shared through the
    cache); on sm_100 / sm_120 the same list is v5's, which the next test compiles."""
    import dataclasses

    assert not any(k.startswith(("softmax_pc_", "softmax_pw_")) for k in _v4_kernels(arch))
    if arch not in ("sm_80", "sm_90"):
        return
    persistent = dataclasses.replace(V4, meta={**V4.meta, "dispatch_only": "persistent"})
    m = compile_variant(OP, persistent, arch=arch)
    for dt in OP.dtypes:
        want = _planned_names(V5, Arch.parse(arch).cc, dt)
        missing = want - set(m.resources)
        assert not missing, f"v4 [{arch}] lacks {sorted(missing)}"
    spills = {k: (r.spill_stores, r.spill_loads) for k, r in m.resources.items() if r.spills}
    assert not spills, f"v4 [{arch}] spills: {spills}"


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_v5_compiles_every_instance_without_spills(arch):
    m = compile_variant(OP, V5, arch=arch)
    declared = set(parse_signatures(V5.path.read_text(), OP.defines(V5), [V5.path.parent]))
    assert declared == set(m.resources), sorted(declared ^ set(m.resources))
    assert len(declared) == 2 * (3 + 4 + 8 + 3 + 4) + 2  # warps, blocks, clusters, E = 64 blocks/clusters + contract
    import dataclasses

    e64 = dataclasses.replace(V5, meta={**V5.meta, "elems": "64"})
    for dt in OP.dtypes:
        assert _planned_names(V5, (9, 0), dt) | _planned_names(e64, (9, 0), dt) <= declared
    spills = {k: (r.registers, r.spill_stores, r.spill_loads) for k, r in m.resources.items() if r.spills}
    assert not spills, spills


def test_v5_refuses_sm_80_with_a_reason():
    assert V5.min_arch == "sm_90"
    with pytest.raises(CompileError, match="sm_90"):
        compile_file(V5.path, arch="sm_80")


@pytest.mark.skipif(toolchain.cuobjdump_path() is None, reason="cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
def test_v5_cluster_loop_sass_has_no_membar_and_wide_accesses():
    from kernelab.analysis.sass import sass_mix

    m = compile_variant(OP, V5, arch="sm_90")
    mix = sass_mix(m.cubin)
    for k, x in mix.items():
        assert x.ldg128 and x.stg128, f"{k}: LDG.128 x{x.ldg128}, STG.128 x{x.stg128}"
        assert not (x.ldl or x.stl), f"{k}: local memory"
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(m.cubin)
        f.flush()
        sass = subprocess.run([toolchain.cuobjdump_path(), "-sass", "-fun", "softmax_pc_t512_c8_bf16", f.name],
                              capture_output=True, text=True, check=True).stdout
    assert "MEMBAR" not in sass, "a MEMBAR would wait for the next row's loads in flight"
    assert "SYNCS.ARRIVE.TRANS64" in sass and "TRYWAIT" in sass  # mbarrier expect_tx + try_wait
    # The next row's loads are issued before the block barrier of the current row's reduction:
    # before the loop's BAR.SYNC come the first row's 4 LDG.128 (bf16, E = 32) and the next row's 4.
    lines = sass.splitlines()
    loop_bar = [i for i, line in enumerate(lines) if "BAR.SYNC" in line][1]  # [0]: after the cluster barrier
    assert sum("LDG.E.EF.128" in line for line in lines[:loop_bar]) >= 8


def test_sweep_dry_run_compiles_and_replays_every_candidate():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "sweep_softmax.py"), "--dry-run"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "0 problem(s)" in r.stdout
    for want in ("softmax_pc_t512_c8_bf16", "softmax_pw_e32_bf16", "softmax_online_t512_bf16", "softmax_pc_t256_c16",
                 "softmax_pk_warp_c1024_full_bf16", "softmax_pk_block_t512_full_bf16", "softmax_pk_block_t128_full_bf16"):
        assert want in r.stdout, want
    # v6's knob rows compile with their own macros (PK_KEEP_EXP=1 keeps fp32 exps: more registers)
    keep = [line for line in r.stdout.splitlines() if "PK_KEEP_EXP=1" in line and "262144x1024" in line]
    assert len(keep) == 1 and re.search(r"_full_bf16 (4[0-9]|5[0-9]|6[0-4])r spill 0/0", keep[0]), keep


@pytest.mark.parametrize("only", softmax_op.DISPATCH_ENTRIES)
def test_dispatch_only_names_kernels_v4_holds(only):
    """`@dispatch_only E` (the widths sweep's knob): v4 takes entry E at every width it can hold, v2's
    online rows elsewhere, and every instance it names is one v4 compiles for sm_90."""
    import dataclasses

    v = dataclasses.replace(V4, meta={**V4.meta, "dispatch_only": only})
    kernels = _v4_kernels("sm_90", v)
    for dt in OP.dtypes:
        names = _planned_names(v, (9, 0), dt)
        assert names <= kernels, f"{only} {dt}: v4 lacks {sorted(names - kernels)}"
        entry = softmax_op._by_strategy(only, 131072, (9, 0), 0, softmax_op.DISPATCH_PERSISTENT_ELEMS[dt], dt)
        expect = entry or softmax_op.ONLINE
        assert OP.plan(v, 131072, (9, 0), dt).name == expect.name


def test_dispatch_only_rejects_an_unknown_entry():
    import dataclasses

    for bad in ("fastest", "split"):
        v = dataclasses.replace(V4, meta={**V4.meta, "dispatch_only": bad})
        with pytest.raises(ValueError, match=f"dispatch_only {bad}.*one of warp"):
            OP.plan(v, 4096, (9, 0), "bfloat16")
