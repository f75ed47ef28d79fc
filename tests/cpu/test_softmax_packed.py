"""softmax v6_packed_rows without a GPU: its launch plan by width, dtype and header knobs, the
`_full` kernel choice at launch (replayed against the parsed signatures on CPU tensors), header
defaults = op.py defaults = the .cu's #ifndef defaults, a CPU model of its arithmetic (packed
max, exps recomputed as 2^((x - M) log2 e - log2 S)) through the checker on every small case and
distribution, compiles of the sweep's knob builds for sm_90 without spills, and the
SASS of the full kernels: 16-byte read-only loads (no evict-first hint), 16-byte stores, no
scalar accesses, no barrier in warp rows, one in block rows, and the 32 registers the
occupancy claim rests on."""

from __future__ import annotations

import dataclasses
import re

import pytest
import torch

from kernelab.check import check_callable
from kernelab.check.inputs import DTYPES
from kernelab.gpu import compile_file, parse_signatures, toolchain
from kernelab.ops import Case, discover
from kernelab.ops.softmax import op as softmax_op

OP = discover()["softmax"]
V6 = OP.variant("v6_packed_rows")
LOG2E = 1.4426950408889634


def _knobs(**meta):
    return dataclasses.replace(V6, meta={**V6.meta, **{k: str(v) for k, v in meta.items()}})


def _defines(v, **extra):
    return {**OP.defines(v), **extra}


# ---- plan, knobs, supports ------------------------------------------------------------------------

def test_header_defaults_match_op_and_source():
    """One source of truth: the header's knob values are op.py's defaults and the .cu's #ifndef
    defaults (a standalone compile without op.defines builds the same kernels)."""
    assert V6.meta["strategy"] == "packed" and V6.meta["access_bytes"] == "16"
    header = {k: int(V6.meta[k]) for k in softmax_op.PACKED_DEFAULTS}
    assert header == softmax_op.PACKED_DEFAULTS
    src = V6.path.read_text()
    for key, macro in (("warps_per_block", "PK_WARPS_PER_BLOCK"), ("lanes_per_row", "PK_LANES_PER_ROW"),
                       ("block_elems", "PK_BLOCK_ELEMS")):
        m = re.search(rf"#ifndef {macro}\n#define {macro} (\d+)\n#endif", src)
        assert m and int(m[1]) == header[key], macro
    assert OP.defines(V6) == {"PK_WARPS_PER_BLOCK": 2, "PK_LANES_PER_ROW": 32, "PK_BLOCK_ELEMS": 16}
    assert OP.defines(OP.variant("v0_warp_row")) == {}  # other variants build as before


def test_plan_by_width_and_dtype():
    def name(n, dt="bfloat16", v=V6):
        p = OP.plan(v, n, (9, 0), dt)
        return None if p is None else (p.name, p.block, p.rows_per_block, p.capacity)

    assert name(1) == ("softmax_pk_warp_c256", 64, 2, 256) and name(256) == ("softmax_pk_warp_c256", 64, 2, 256)
    assert name(257)[0] == "softmax_pk_warp_c512" and name(1000)[0] == "softmax_pk_warp_c1024"
    assert name(1024) == ("softmax_pk_warp_c1024", 64, 2, 1024)
    assert name(1025) == ("softmax_pk_block_t128", 128, 1, 2048)
    assert name(8192) == ("softmax_pk_block_t512", 512, 1, 8192)
    assert name(16384) == ("softmax_pk_block_t1024", 1024, 1, 16384)
    # bf16 past 1024 x 16: the 32-element instance, to 32768 (fp32 stops at 16384)
    assert name(16385) == ("softmax_pk_block_t1024_e32", 1024, 1, 32768) and name(32769) is None
    assert name(16385, "float32") is None
    for dt in OP.dtypes:  # the same instances on every arch (no clusters)
        for n in (1, 1000, 1024, 4097, 8192, 32768):
            assert OP.plan(V6, n, (8, 0), dt) == OP.plan(V6, n, (10, 0), dt)
    # knobs: two rows a warp, v0's 8-warp blocks, 64 elements a thread (bf16; fp32 stays at 32)
    assert name(1024, v=_knobs(lanes_per_row=16)) == ("softmax_pk_warp_c1024", 64, 4, 1024)
    assert name(1024, v=_knobs(warps_per_block=8)) == ("softmax_pk_warp_c1024", 256, 8, 1024)
    e64 = _knobs(block_elems=64)
    assert name(8192, v=e64) == ("softmax_pk_block_t128", 128, 1, 8192)
    assert name(65536, v=e64)[0] == "softmax_pk_block_t1024" and name(65537, v=e64) is None
    assert name(8192, "float32", v=e64) == ("softmax_pk_block_t256", 256, 1, 8192)
    assert name(65536, "float32", v=e64) is None
    assert "32768" in OP.supports(e64, Case((2, 65536), "float32"))
    assert OP.supports(e64, Case((2, 65536), "bfloat16")) is None


def test_supports_and_bad_knobs_say_why():
    assert "32768" in OP.supports(V6, Case((2, 32769), "bfloat16"))
    assert "16384" in OP.supports(V6, Case((2, 16385), "float32"))  # 1024 threads x 16 (block_elems 16)
    assert OP.supports(V6, Case((2, 16384), "float32")) is None
    for meta, match in (({"lanes_per_row": 8}, "32 .* or 16"), ({"warps_per_block": 0}, "1 to 32"),
                        ({"block_elems": 48}, "16, 32 or 64")):
        with pytest.raises(ValueError, match=match):
            OP.plan(_knobs(**meta), 1024, (9, 0))
    # Every width the op's test cases have is held or declined with a reason, never an error.
    for case in OP.test_cases():
        why = OP.supports(V6, case)
        assert why is None or ("at most 16384" if case.dtype == "float32" else "at most 32768") in why, (case.label, why)
        assert (why is None) == (case.shape[1] <= 32768), case.label


# ---- the launch: instance and `_full` kernel --------------------------------------------------------

class _Fake:
    """A loaded module's stand-in: launches are checked against the parsed C signatures."""

    def __init__(self, defines):
        self.signatures = parse_signatures(V6.path.read_text(), defines, [V6.path.parent])
        self.calls = []
        self.module = self
        self.compiled = type("C", (), {"arch": "sm_90"})()

    def kernel(self, name):
        assert name in self.signatures, f"{name} is not a kernel of v6"
        fake = self

        class K:
            module = fake

            def __call__(self, *args, grid, block, cluster=None):
                assert len(args) == len(fake.signatures[name]) == 4
                fake.calls.append((name, grid, block, cluster))

        return K()


def _launched(case, v=V6):
    fake = _Fake(_defines(v))
    inputs = OP.make_inputs(case, 0, "cpu")
    outputs = OP.make_outputs(case, inputs)
    OP.launch(fake.kernel(OP.kernel_name(case.dtype)), v, case, inputs, outputs)
    (call,) = fake.calls
    return call


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_launch_takes_the_full_kernel_only_for_exact_aligned_rows(dtype):
    sfx = DTYPES[dtype]
    assert _launched(Case((5, 1024), dtype)) == (f"softmax_pk_warp_c1024_full_{sfx}", 3, 64, None)
    assert _launched(Case((5, 1000), dtype))[0] == f"softmax_pk_warp_c1024_{sfx}"  # narrower than the instance
    assert _launched(Case((3, 1024), dtype, offset=1, layout="mixed_alignment"))[0] == f"softmax_pk_warp_c1024_{sfx}"
    assert _launched(Case((3, 8192), dtype)) == (f"softmax_pk_block_t512_full_{sfx}", 3, 512, None)
    assert _launched(Case((3, 8192), dtype, offset=3, layout="mixed_alignment"))[0] == f"softmax_pk_block_t512_{sfx}"
    assert _launched(Case((3, 4097), dtype, offset=3))[0] == f"softmax_pk_block_t512_{sfx}"
    assert _launched(Case((2, 256), dtype))[0] == f"softmax_pk_warp_c256_full_{sfx}"
    assert _launched(Case((7, 1024), dtype), _knobs(lanes_per_row=16)) == (f"softmax_pk_warp_c1024_full_{sfx}", 2, 64, None)
    assert _launched(Case((9, 1024), dtype), _knobs(warps_per_block=8)) == (f"softmax_pk_warp_c1024_full_{sfx}", 2, 256, None)


def test_every_instance_a_plan_names_exists_with_its_full_kernel():
    sigs = parse_signatures(V6.path.read_text(), OP.defines(V6), [V6.path.parent])
    names = set()
    for dt in OP.dtypes:
        for n in sorted({c.shape[1] for c in OP.test_cases()} | {256, 512, 2048, 4096, 16384, 32768}):
            p = OP.plan(V6, n, (9, 0), dt)
            if p is not None:
                names |= {f"{p.name}_{DTYPES[dt]}", f"{p.name}_full_{DTYPES[dt]}"}
    assert names <= set(sigs), sorted(names - set(sigs))
    # (general, full) x dtypes x (warp caps + block sizes) + contract + bf16's 32-element block (general, full)
    assert len(sigs) == 2 * 2 * (3 + 5) + 2 + 2


def test_v4s_packed_entry_names_instances_v4_holds_in_both_dtypes():
    """A v4_dispatch table entry "packed" (v6's plan) must ask for kernels v4 compiles: fp32 has no
    32-element block instance, so the plan needs the dtype (it once asked for softmax_pk_block_t1024_e32_f32)."""
    v4 = OP.variant("v4_dispatch")
    sigs = set(parse_signatures(v4.path.read_text(), OP.defines(v4), [v4.path.parent]))
    for dt in OP.dtypes:
        for n in (256, 512, 1024, 2048, 4096, 8192, 16384, 32768):
            p = softmax_op._by_strategy("packed", n, (9, 0), 0, 32, dt)
            assert p == softmax_op.packed_plan(n, dtype=dt), (n, dt)
            if p is not None:
                assert {f"{p.name}_{DTYPES[dt]}", f"{p.name}_full_{DTYPES[dt]}"} <= sigs, (n, dt, p.name)


# ---- the arithmetic, as a CPU model through the checker -------------------------------------------

def _packed_model(inputs, outputs):
    """v6's bf16 arithmetic in fp32 on CPU: M = max ignoring NaN (max.bf16x2 / fmaxf), shift 0 for
    an all -inf row, S = sum 2^((x - shift) log2 e), y = 2^(fma(x - shift, log2 e, -log2 S))."""
    x = inputs["x"].float()
    m = torch.where(torch.isnan(x), float("-inf"), x).amax(-1, keepdim=True)
    sh = torch.where(m == float("-inf"), torch.zeros_like(m), m)
    s = torch.exp2((x - sh) * LOG2E).sum(-1, keepdim=True)
    arg = ((x - sh).double() * LOG2E - torch.log2(s).double()).float()  # one rounding, as the FFMA
    outputs["y"].copy_(torch.exp2(arg))


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_cpu_model_of_the_packed_arithmetic_passes_the_checker(dtype):
    """Every small case and every distribution the op declares (NaN rows, -inf masks and rows,
    +inf entries, values of 1e4 / 1e30): the formula meets the tolerances and torch's special
    values. (fp32 rows run v0/v1's arithmetic in v6; the formula is checked on both anyway.)"""
    failures = []
    for case in [c for c in OP.test_cases() if c.dtype == dtype and c.numel <= 40_000]:
        r = check_callable(_packed_model, OP, case, device="cpu", repeat=False, stream_order=False, seeds=(0,),
                           dists=OP.distributions)
        if not r.ok:
            failures.append(f"{case.label}: {r.reason}: {r.detail[:300]}")
    assert not failures, "\n".join(failures)


def test_cpu_model_gives_torch_special_values():
    x = torch.tensor([[0.0, float("-inf"), 1.0], [float("-inf")] * 3, [0.0, float("inf"), 1.0],
                      [0.0, float("nan"), 1.0]])
    out = {"y": torch.empty_like(x)}
    _packed_model({"x": x}, out)
    y = out["y"]
    assert y[0, 1] == 0 and torch.allclose(y[0], torch.softmax(x[0], -1))
    assert torch.isnan(y[1:]).all()


# ---- compiles, registers, SASS ---------------------------------------------------------------------

SWEEP_BUILDS = {  # the knob settings scripts/sweep_softmax.py times (and two more geometries)
    "default": ({}, {}),
    "PK_LOAD=1": ({}, {"PK_LOAD": 1}),
    "PK_LOAD=2": ({}, {"PK_LOAD": 2}),
    "PK_KEEP_EXP=1": ({}, {"PK_KEEP_EXP": 1}),
    "lanes_per_row=16": ({"lanes_per_row": 16}, {}),
    "warps_per_block=8": ({"warps_per_block": 8}, {}),
    "warps_per_block=1": ({"warps_per_block": 1}, {}),
    "block_elems=64": ({"block_elems": 64}, {}),
    "block_elems=16": ({"block_elems": 16}, {}),
}


def test_knob_builds_compile_without_spills(arch="sm_90"):
    """sm_90, where the sweep runs (its --dry-run compiles the same builds: one cache entry);
    test_ops_mem_b compiles the default for every CI arch (~4 s a build and arch, so not all)."""
    failures = []
    for label, (meta, extra) in SWEEP_BUILDS.items():
        if label == "default":
            continue  # test_ops_mem_b compiles the default for every CI arch
        m = compile_file(V6.path, arch=arch, defines=_defines(_knobs(**meta), **extra))
        # 34, and bf16's 32-element block instance (2) where block_elems < 32
        assert len(m.resources) == 34 + (2 if int(meta.get("block_elems", 16)) < 32 else 0), label
        for k, r in m.resources.items():
            if r.spills:
                failures.append(f"{label} {k} [{arch}]: {r.registers} registers, {r.spill_stores} B spilled")
    assert not failures, "\n".join(failures)


def test_full_bf16_kernels_fit_32_registers_on_sm90():
    """The occupancy the header predicts from: 2048 threads an SM (64 warp rows of 1024, 8 block
    rows of 8192) needs <= 32 registers a thread; the general warp rows 40 (1536 threads)."""
    res = compile_file(V6.path, arch="sm_90", defines=OP.defines(V6)).resources
    for k in ("softmax_pk_warp_c1024_full_bf16", "softmax_pk_block_t256_full_bf16", "softmax_pk_block_t1024_full_bf16"):
        assert res[k].registers <= 32, (k, res[k].registers)
    assert res["softmax_pk_warp_c1024_bf16"].registers <= 40


@pytest.mark.skipif(toolchain.cuobjdump_path() is None, reason="cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
def test_full_kernels_sass_loads_read_only_16_bytes_and_nothing_scalar(arch):
    from kernelab.analysis.sass import sass_mix

    def mix_of(**extra):
        return sass_mix(compile_file(V6.path, arch=arch, defines=_defines(V6, **extra)).cubin)

    mix = mix_of()
    for name, x in mix.items():
        ops = x.opcodes
        assert not any(".EF" in o for o in ops), f"{name}: an evict-first load: {ops}"
        assert x.ldg128 and x.stg128 and not (x.ldl or x.stl), name
        if "_full_" not in name:
            continue
        k = 4 if name.endswith("bf16") else 8  # 16-byte vectors a thread: 32 bf16 / 32 fp32 elements
        if "_e32_" in name:  # bf16's 32-element block instance (rows of 16385-32768)
            k = 4
        elif "_block_" in name:  # block rows hold block_elems (16) a thread: 2 bf16 / 4 fp32 vectors
            k = 2 if name.endswith("bf16") else 4
        elif "_c256_" in name:
            k //= 4
        elif "_c512_" in name:
            k //= 2
        assert ops.get("LDG.E.128.CONSTANT") == k and x.ldg128 == k, (name, ops)
        assert x.stg128 == k and x.stg == k and x.ldg == k, f"{name}: scalar or extra accesses {ops}"
        assert x.bar == (1 if "_block_" in name else 0), (name, x.bar)
    # the general kernels keep the scalar head/tail fallback, as v0/v1
    assert mix["softmax_pk_warp_c1024_bf16"].stg16 and mix["softmax_pk_block_t256_bf16"].stg16
    # PK_LOAD=1 is v0/v1's evict-first load
    ef = mix_of(PK_LOAD=1)["softmax_pk_warp_c1024_full_bf16"].opcodes
    assert ef.get("LDG.E.EF.128") == 4 and "LDG.E.128.CONSTANT" not in ef, ef
    # packed bf16: the max on pairs, two EX2 an element (+ the merges'), one LG2 a row
    bf = mix["softmax_pk_warp_c1024_full_bf16"].opcodes
    assert any(o.startswith(("VHMNMX.BF16", "HMNMX2.BF16")) for o in bf), bf
    assert 64 <= bf.get("MUFU.EX2", 0) <= 70 and bf.get("MUFU.LG2") == 1, bf
