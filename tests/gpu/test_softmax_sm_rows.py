"""softmax v8_sm_rows on a GPU, beyond the per-variant sweep of tests/gpu/test_ops_mem_b.py (which
runs v8 on every test case it supports, normal and special inputs): the full check (check_variant)
on the shapes that exercise the persistent loop and the row split; enough rows that every block
(or cluster) takes 2 x its share of rounds + 1, so each chunk's full / empty mbarriers and the
cluster exchange's buffers go through both phase parities; rows narrower than the ring (all staged)
and wider (an L2 part, prefetched and read twice); misaligned rows (head / tail scalars next to
the bulk-copied vectors) and y not co-aligned with x (scalar stores); each cluster size 1, 2, 4,
forced by knobs too; and the knob builds a sweep times.

Failures name the instance the launch took (e.g. softmax_sr_c1_bf16), the grid and the ring.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from kernelab.check import check_variant, compare_outputs, tolerance
from kernelab.gpu import KernelFault, Module, compile_file, default_arch, last_launched_kernel, synchronize
from kernelab.ops import discover, load_variant
from kernelab.ops.base import Case
from kernelab.ops.build import target_arch
from kernelab.ops.softmax import op as softmax_op

from ._softmax_rows import sm90_only

pytestmark = pytest.mark.gpu

OP = discover()["softmax"]
V8 = OP.variant("v8_sm_rows")
SUFFIX = {"bfloat16": "bf16", "float32": "f32"}


_needs_hopper = sm90_only("v8")


def _module(meta=None, defines=None):
    """v8's module for header values `meta` and extra macros `defines` (None, None: the default's).
    Knob builds are compiled here, not through load_variant, whose cache is keyed by the file."""
    v = dataclasses.replace(V8, meta={**V8.meta, **(meta or {})}) if meta else V8
    if not meta and not defines:
        return v, load_variant(OP, v)
    d = {**OP.defines(v), **(defines or {})}
    return v, Module(compile_file(v.path, arch=target_arch(v, default_arch()).sm, defines=d), d)


def _run(v, module, case, dist="normal"):
    inputs = OP.make_inputs(case, 0, "cuda", dist)
    outputs = OP.make_outputs(case, inputs)
    outputs["y"].fill_(float("nan"))
    try:
        OP.launch(module.kernel(OP.kernel_name(case.dtype)), v, case, inputs, outputs)
        synchronize()
    except KernelFault as e:
        raise AssertionError(f"{v.id} faulted on {case.label} in {last_launched_kernel()}: {e}") from None
    rtol, atol = tolerance(OP, case.dtype)
    cmp = compare_outputs(outputs["y"], OP.reference(case, inputs)["y"], rtol, atol, nan_ok=True, max_report=3, name="y")
    return cmp, last_launched_kernel()


def _fit(v, module, n, dtype):
    """(plan, blocks or clusters that fit on this GPU at once) for rows of n."""
    p = OP.plan(v, n, torch.cuda.get_device_capability(), dtype)
    assert p is not None, f"v8 plans nothing for N={n} {dtype}"
    k = module.kernel(f"{p.name}_{SUFFIX[dtype]}")
    return p, softmax_op.persistent_grid(k, p, 1 << 30)


def _loop_case(v, module, n, dtype, offset=0, layout=None, params=()):
    """Rows for 2 rounds of every block / cluster, + 1 so the last round is partial (a third row for one)."""
    p, fit = _fit(v, module, n, dtype)
    kw = {"offset": offset, "params": params} | ({"layout": layout} if layout else {})
    return p, fit, Case((2 * fit + 1, n), dtype, **kw)


def _hopper_or_blackwell():
    return torch.cuda.get_device_capability()[0] in (9, 10)


# The brief's shapes through the full check (several seeds, normal and special inputs, guard bands,
# poisoned outputs, input mutation): (case, cluster size the default plan takes on sm_90 / sm_100).
FULL = [(Case((264, 131072), "bfloat16"), 1),  # two rounds of 132 SMs: 48 KiB a block through L2
        (Case((7, 262144), "bfloat16"), 2),
        (Case((5, 65537), "float32", offset=1), 1),  # unaligned rows: head / tail scalars, an L2 part
        (Case((3, 131073), "bfloat16", offset=3), 1),
        (Case((66, 131072), "float32"), 2),  # clusters of 2
        (Case((3, 262144), "float32", offset=1), 4),
        (Case((4, 2049), "bfloat16", offset=1, layout="mixed_alignment"), 1)]


@pytest.mark.parametrize("case,cluster", FULL, ids=lambda x: x.label if isinstance(x, Case) else str(x))
def test_full_check(case, cluster):
    p = OP.plan(V8, case.shape[1], torch.cuda.get_device_capability(), case.dtype)
    if _hopper_or_blackwell():
        assert p.cluster == cluster, f"{p}: the plan's cluster changed (expected {cluster})"
    r = check_variant(OP, V8, case, seeds=(0, 1), dists=("normal", "special"))
    assert r.ok, f"{case.label} via {p}: {r.reason}: {r.detail}"


# (N, dtype, offset, layout, cluster size the default plan takes on sm_90 / sm_100)
LOOPS = [(131072, "bfloat16", 0, None, 1), (131072, "float32", 0, None, 2), (262144, "bfloat16", 0, None, 2),
         (262144, "float32", 0, None, 4), (65537, "bfloat16", 1, None, 1),  # narrower than the ring: all staged
         (65537, "float32", 3, None, 1), (131073, "bfloat16", 3, None, 1), (100000, "float32", 1, "mixed_alignment", 2),
         (4097, "float32", 3, None, 1)]


@pytest.mark.parametrize("n,dtype,offset,layout,cluster", LOOPS, ids=lambda x: str(x))
def test_every_block_loops_over_its_rows(n, dtype, offset, layout, cluster):
    v, mod = _module()
    p, fit, case = _loop_case(v, mod, n, dtype, offset, layout)
    if _hopper_or_blackwell():
        assert p.cluster == cluster, f"{p}: the plan's cluster changed (expected {cluster})"
        if p.cluster <= 2:  # clusters of 1 and 2 place on every SM (an SM pair is never split)
            sms = torch.cuda.get_device_properties(0).multi_processor_count
            assert fit * p.cluster >= sms - 1, f"{p}: {fit} clusters of {p.cluster} on {sms} SMs"
    assert fit >= 1, f"{p}: no cluster of {p.cluster} with a {p.smem} B ring fits"
    cmp, kernel = _run(v, mod, case)
    assert kernel == f"{p.name}_{SUFFIX[dtype]}", kernel
    assert cmp.ok, f"{case.label} via {kernel} ({fit} clusters, {p.smem} B ring): {cmp.summary(max_lines=3)}"


@pytest.mark.parametrize("n", [2049, 65536, 131072, 262144])
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_one_row(n, dtype):
    v, mod = _module()
    cmp, kernel = _run(v, mod, Case((1, n), dtype))
    assert cmp.ok, f"1 x {n} {dtype} via {kernel}: {cmp.summary(max_lines=3)}"


def test_masked_and_special_rows_through_the_loop():
    """-inf entries, an all -inf row (NaN, as torch) and NaN / +inf rows, in the staged part and
    the L2 part, inside the persistent loop (C = 1 bf16, C = 2 fp32)."""
    v, mod = _module()
    for n, dtype in ((131072, "bfloat16"), (131072, "float32")):
        p, fit, case = _loop_case(v, mod, n, dtype, params=(("mask", True),))
        for dist in ("normal", "special"):
            cmp, kernel = _run(v, mod, case, dist)
            assert cmp.ok, f"{case.label} ({dist}) via {kernel}: {cmp.summary(max_lines=3)}"


# The knob builds a sweep would time: (header values, macros, the cluster size the plan must take
# for fp32 131072 / bf16 131072 on sm_90 / sm_100). Header-only knobs (max_l2_kib, min_cluster)
# reuse the default build; each of the others compiles once (~2 s).
KNOBS = [({"max_l2_kib": "320"}, {}, (1, 1)),  # forced C = 1 for fp32: 304 KiB a block through L2
         ({"min_cluster": "2"}, {}, (2, 2)),  # forced C = 2 for bf16
         ({"min_cluster": "4"}, {}, (4, 4)),
         ({"chunks": "3"}, {}, (4, 4)),  # 48 KiB ring: a big L2 part, chunks reused every row
         ({"chunk_kib": "4", "chunks": "24"}, {}, (4, 2)),  # many small chunks (96 KiB)
         ({"threads": "992"}, {}, (2, 1)), ({"threads": "128"}, {}, (2, 1)),
         ({"store": "1"}, {}, (2, 1)), ({}, {"SR_PREFETCH": 0}, (2, 1)), ({}, {"SR_L2_HINT": 0}, (2, 1))]


@pytest.mark.parametrize("meta,defines,clusters", KNOBS,
                         ids=lambda x: ",".join(f"{k}={w}" for k, w in x.items()) if isinstance(x, dict) and x else "-")
def test_knob_builds_are_correct(meta, defines, clusters):
    v, mod = _module(meta, defines)
    failures = []
    # Aligned fp32 and bf16 (the bench shapes' layout), a misaligned bf16 row (head / tail scalars,
    # an L2 part), y not co-aligned (scalar stores).
    for (n, dtype, offset, layout), want in zip(((131072, "float32", 0, None), (131072, "bfloat16", 0, None)), clusters):
        p, fit, case = _loop_case(v, mod, n, dtype, offset, layout)
        if _hopper_or_blackwell() and p.cluster != want:
            failures.append(f"{case.label}: {p} (expected a cluster of {want})")
        cmp, kernel = _run(v, mod, case)
        if not cmp.ok:
            failures.append(f"{case.label} via {kernel} ({p}, {fit} clusters): {cmp.summary(max_lines=2)}")
    for n, dtype, offset, layout in ((131073, "bfloat16", 3, None), (100000, "float32", 1, "mixed_alignment")):
        p, fit, case = _loop_case(v, mod, n, dtype, offset, layout)
        cmp, kernel = _run(v, mod, case)
        if not cmp.ok:
            failures.append(f"{case.label} via {kernel} ({p}, {fit} clusters): {cmp.summary(max_lines=2)}")
    assert not failures, "\n".join(failures)
