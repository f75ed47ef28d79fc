"""softmax v17_overlap_rows without a GPU: its plan (clusters of 2-16 whose 3 stages and pair buffers fit half an
SM, shares that fit pass A's registers), its static shared memory against what the plan keeps off the ring, and
its sm_90 SASS: the bench row's instance (softmax_ov_c8_bf16) exponentiates every element twice (pass A's sum,
pass B's y) and spills nothing, at the header's 256 threads and at the 512-thread knob."""

from __future__ import annotations

import dataclasses
import re

import pytest

from kernelab.analysis.sass import run_cuobjdump
from kernelab.gpu import compile_file
from kernelab.ops import discover
from kernelab.ops.softmax import op as softmax_op

OP = discover()["softmax"]
V17 = OP.variant("v17_overlap_rows")


def _plan(n, dtype="bfloat16", cc=(9, 0), **meta):
    v = dataclasses.replace(V17, meta={**V17.meta, **meta}) if meta else V17
    return OP.plan(v, n, cc, dtype)


def test_plan_takes_the_smallest_cluster_of_two_or_more_whose_stages_fit():
    assert _plan(131072).name == "softmax_ov_c8" and _plan(131072).smem == 3 * 32768
    assert _plan(131072, "float32").name == "softmax_ov_c16"  # 3 x 64 KiB at C = 8 is over half an SM
    assert _plan(262144).name == "softmax_ov_c16" and _plan(262144, "float32") is None
    assert _plan(2049).name == "softmax_ov_c2" and _plan(8192, "float32").name == "softmax_ov_c2"  # never C = 1
    assert _plan(2048) is None and _plan(131072, cc=(8, 0)) is None
    assert _plan(131072, stages="2") is None  # a stage is read in two iterations
    # pass A's registers: at 512 threads x 16 values an fp32 16th of 131072 (8192) still fits, 16 values x 256 not
    assert _plan(131072, "float32", threads="512", elems="16").name == "softmax_ov_c16"
    assert _plan(131072, "float32", elems="16") is None
    for p in (_plan(65536), _plan(131072, "float32")):
        assert p.work and p.persistent and p.block == 256


def test_the_plan_says_why_a_row_does_not_fit():
    from kernelab.ops.base import Case

    reason = OP.supports(V17, Case((4, 262144), "float32"))
    assert reason and "262144" in reason and "v17_overlap_rows" in reason


@pytest.mark.parametrize("threads,elems", [("256", "64"), ("512", "32")])
def test_static_shared_memory_is_what_the_plan_leaves(threads, elems):
    v = dataclasses.replace(V17, meta={**V17.meta, "threads": threads, "elems": elems})
    for arch in ("sm_90", "sm_100", "sm_120"):
        m = compile_file(v.path, arch=arch, defines=OP.defines(v))
        for name, r in m.resources.items():
            found = re.search(r"_c(\d+)_", name)
            c = int(found.group(1)) if found else 16  # the contract kernels are the c16 instance
            allowed = softmax_op.BULK_STATIC_MAX + softmax_op.overlap_pairs_bytes(c, int(threads), 3)
            assert r.shared_static <= allowed, (arch, threads, name, r.shared_static, allowed)
            assert not r.spills, (arch, threads, name, r.spill_stores)


@pytest.mark.parametrize("threads,elems,cap", [("256", "64", 128), ("512", "32", 64)])
def test_bench_instance_exponentiates_each_element_twice(threads, elems, cap):
    """softmax_ov_c8_bf16 (2048 x 131072 bf16): a thread's share of 8 (256 threads) or 4 (512) vectors of 8 values,
    each exponentiated in pass A (the sum) and pass B (y), in the fast and the fallback form: 4 x 64 or 4 x 32
    MUFU.EX2 and a few for the merges; registers within two blocks an SM (cap)."""
    v = dataclasses.replace(V17, meta={**V17.meta, "threads": threads, "elems": elems})
    m = compile_file(v.path, arch="sm_90", defines=OP.defines(v))
    r = m.resources["softmax_ov_c8_bf16"]
    assert r.registers <= cap and not r.spills, (r.registers, r.spill_stores)
    sass = run_cuobjdump(m.cubin, "-sass", "-fun", "softmax_ov_c8_bf16")
    per_pass = int(elems)
    ex2 = len(re.findall(r"MUFU\.EX2", sass))
    assert 4 * per_pass <= ex2 <= 4 * per_pass + 24, ex2
    assert len(re.findall(r"STG\.E\.128", sass)) == 2 * per_pass // 8  # the fast and the fallback form's y
    # no block barrier from the first shared-memory load on (the cluster barrier's own BAR.SYNC path comes before)
    assert "LDS.128" in sass and "BAR.SYNC" not in sass.split("LDS.128", 1)[1]
