"""rmsnorm v4_l2_two_pass's per-dtype geometry (`@block_bf16`): the plan, the macros and the
compiled kernels' launch bounds agree, and a sweep's `@block` override reaches both dtypes."""

from __future__ import annotations

import dataclasses
import re

import pytest

from kernelab.analysis.load_order import load_order
from kernelab.analysis.sass import disassemble, run_cuobjdump, sass_mix
from kernelab.gpu import CI_ARCHS, compile_file
from kernelab.ops import discover
from kernelab.ops.build import target_arch

OPS = discover()
RMS, LN = OPS["rmsnorm"], OPS["layernorm"]
V4 = RMS.variant("v4_l2_two_pass")


def _sass_lines(cubin: bytes, fn: str) -> list[str]:
    """The SASS instruction lines of kernel fn."""
    sass = run_cuobjdump(cubin, "-sass", "-fun", fn)
    return [ln for ln in sass.splitlines() if re.match(r"\s+/\*[0-9a-f]{4}\*/", ln)]


def test_each_dtype_takes_its_own_block():
    assert V4.meta["block"] == "512" and V4.meta["block_bf16"] == "256"
    assert RMS.plan(V4, 8192, "bfloat16").block == 256
    assert RMS.plan(V4, 8192, "float32").block == 512
    assert RMS.defines(V4) == {"BLOCK": 512, "ROWS_PER_BLOCK": 1, "BLOCK_BF16": 256, "VEC_BLOCK_BF16": 512}
    # layernorm v5 too, since session 23 (bf16 256 threads a row, six rows an SM: 40 registers at most)
    v5 = LN.variant("v5_l2_two_pass")
    assert LN.plan(v5, 8192, "bfloat16").block == 256 and LN.plan(v5, 8192, "float32").block == 512
    assert LN.defines(v5) == {"BLOCK": 512, "ROWS_PER_BLOCK": 1, "BLOCK_BF16": 256}
    res = compile_file(v5.path, arch="sm_90", defines=LN.defines(v5)).resources
    assert res["layernorm_bf16"].registers <= 40 and not res["layernorm_bf16"].spills


def test_kernels_are_built_for_the_block_the_plan_launches():
    """The compiled register cap follows each dtype's SM_THREADS / block: bf16 1024 / 256 = 4 blocks
    (64 registers at most), fp32 1536 / 512 = 3 (at most 40)."""
    res = compile_file(V4.path, arch="sm_90", defines=RMS.defines(V4)).resources
    assert 32 < res["rmsnorm_bf16"].registers <= 64 and not res["rmsnorm_bf16"].spills
    assert res["rmsnorm_f32"].registers <= 40 and not res["rmsnorm_f32"].spills


def test_a_block_override_for_both_dtypes():
    v = dataclasses.replace(V4, meta={**V4.meta, "block": "1024", "block_bf16": "1024"})
    assert RMS.plan(v, 8192, "bfloat16").block == RMS.plan(v, 8192, "float32").block == 1024
    assert RMS.defines(v)["BLOCK_BF16"] == 1024
    m = compile_file(v.path, arch=target_arch(v).sm, defines=RMS.defines(v))
    assert {"rmsnorm_bf16", "rmsnorm_f32"} <= set(m.resources)


def test_layernorm_v5_x2_ahead_issues_the_x_rereads_together():
    """X2_AHEAD=4 (session 19's knob) at 1536 threads an SM: no spills, and in the fast pass 2 the four x
    re-reads (LDG.E.EF.128, the evict-first form: one base, 8 KiB apart, 512 threads x 16 B) are the
    four loads right before the first 16-byte store of y (the general body's one-vector loop comes first)."""
    v5 = LN.variant("v5_l2_two_pass")
    m = compile_file(v5.path, arch="sm_90", defines={**LN.defines(v5), "SM_THREADS": 1536, "X2_AHEAD": 4})
    assert not m.resources["layernorm_f32"].spills and m.resources["layernorm_f32"].registers <= 40
    ops = [ln for ln in _sass_lines(m.cubin, "layernorm_f32") if re.search(r"LDG\.E\.EF\.128|STG\.E\.128", ln)]
    first_store = next(i for i, ln in enumerate(ops) if "STG.E.128" in ln)
    ahead = [re.search(r"LDG\.E\.EF\.128 R\d+, desc\[\w+\]\[(R\d+)\.64(?:\+(0x[0-9a-f]+))?\]", ln)
             for ln in ops[first_store - 4:first_store]]
    assert all(ahead), ops[first_store - 4:first_store]
    assert len({a[1] for a in ahead}) == 1 and {int(a[2] or "0", 16) for a in ahead} == {0, 0x2000, 0x4000, 0x6000}


def test_layernorm_best_variant_per_dtype():
    """v5 in both dtypes: fp32 since session 19 (499 us, v4 510, torch.compile 503); bf16 again since session 26,
    whose whole-vector rows kernel ran 252.1 us against v4's 260.7 and torch.compile's 285.9 (sweep ln26; v4 had
    been bf16's best since session 24's outlier-safe pivots). The torch operator takes it."""
    assert LN.best_variant == "v5_l2_two_pass"
    assert LN.best_variant_for("float32") == LN.best_variant_for("bfloat16") == "v5_l2_two_pass"
    assert RMS.best_variant_for("float32") == RMS.best_variant_for("bfloat16") == RMS.best_variant
    from kernelab.ops.layernorm import torch_op

    assert torch_op._variant("float32").name == torch_op._variant("bfloat16").name == "v5_l2_two_pass"


def test_whole_vectors_needs_every_tensor_aligned_and_whole_vector_rows():
    import torch

    from kernelab.ops.rmsnorm.op import whole_vectors

    def t(n, dtype=torch.bfloat16, offset=0):
        return torch.empty(n + offset, dtype=dtype)[offset:]  # CPU allocations are 64-byte aligned

    assert whole_vectors(8, t(16), t(16), t(8))
    assert whole_vectors(4, t(8, torch.float32), t(8, torch.float32))
    assert not whole_vectors(4, t(8), t(8))  # 8 bytes a bf16 row: rows 1, 3, ... start mid-vector
    assert not whole_vectors(6, t(12, torch.float32), t(12, torch.float32))  # 24 bytes a row
    assert not whole_vectors(8, t(16, offset=1), t(16))  # x one element past a boundary
    assert not whole_vectors(8, t(16), t(16), t(8, offset=4))  # a parameter 8 bytes past one


def _fit_every_ci_arch(op, v, kernel: str, cap: int = 40):
    """kernel_f32 and kernel_bf16 of `v` compile on every CI arch within `cap` registers and without spills."""
    for arch in CI_ARCHS:
        res = compile_file(v.path, arch=arch, defines=op.defines(v)).resources
        for dt in ("f32", "bf16"):
            assert res[f"{kernel}_{dt}"].registers <= cap and not res[f"{kernel}_{dt}"].spills, (arch, dt)


def _with_vec(op, name):
    """The variant with its `@vec_kernel` on (both headers set it since session 33; a sweep's meta could take it
    off)."""
    v = op.variant(name)
    if "vec_kernel" in v.meta:
        return v
    return dataclasses.replace(v, meta={**v.meta, "vec_kernel": f"{op.kernel_entry}_vec"})


def test_vec_kernel_defaults_are_the_measured_ones():
    assert LN.variant("v5_l2_two_pass").meta["vec_kernel"] == "layernorm_vec"  # bf16 -2.9% (sweep ln26)
    # rmsnorm: at the general kernel's 256 threads bf16 +0.7% (sweep rms26); at its own 512 (`@vec_block_bf16`) a
    # tie with torch.compile where the general kernel was 0.6% behind (sweep geo33b)
    assert RMS.variant("v4_l2_two_pass").meta["vec_kernel"] == "rmsnorm_vec"
    assert RMS.variant("v4_l2_two_pass").meta["vec_block_bf16"] == "512"


def test_rmsnorm_vec_build_has_its_own_geometry():
    """rmsnorm v4's whole-vector bf16 kernel launches 512 threads (torch.compile's geometry) and is built for four
    such blocks an SM (32 registers, no spills) with pass 1 one step of 2 vectors; the general bf16 kernel keeps 256
    threads at up to 64 registers, and fp32 both 512 at up to 40 (3 an SM)."""
    from kernelab.ops.base import Case

    from ._launch_recorder import record_launches

    calls = record_launches(RMS, [(V4, Case((3, 8192), "bfloat16")), (V4, Case((3, 8191), "bfloat16")),
                                  (V4, Case((3, 8192), "float32")), (V4, Case((3, 8190), "float32"))])
    assert [(name, kw["block"]) for name, _, kw in calls] == [
        ("rmsnorm_vec_bf16", 512), ("rmsnorm_bf16", 256), ("rmsnorm_vec_f32", 512), ("rmsnorm_f32", 512)]
    assert RMS.static_kernel(V4, Case((32768, 8192), "bfloat16")) == ("rmsnorm_vec_bf16", 512)
    m = compile_file(V4.path, arch="sm_90", defines=RMS.defines(V4))
    res = m.resources
    assert res["rmsnorm_vec_bf16"].registers <= 32 and not res["rmsnorm_vec_bf16"].spills
    assert 32 < res["rmsnorm_bf16"].registers <= 64 and res["rmsnorm_vec_f32"].registers <= 40
    # pass 1 at VEC_UNROLL_BF16 2: two x loads (the evict-last form) in the vec kernel's loop, four in the general one
    assert sum("LDG.E.EL.128" in ln for ln in _sass_lines(m.cubin, "rmsnorm_vec_bf16")) == 2
    assert sum("LDG.E.EL.128" in ln for ln in _sass_lines(m.cubin, "rmsnorm_bf16")) == 4


@pytest.mark.parametrize("op, name", [(LN, "v5_l2_two_pass"), (RMS, "v4_l2_two_pass")], ids=["layernorm", "rmsnorm"])
def test_vec_kernel_launches_only_on_whole_vector_rows(op, name):
    """The op launches <op>_vec_<dtype> where every row is whole aligned vectors (the bench shapes and the aligned
    test cases) and the general kernel elsewhere (odd widths, offset views, misaligned parameters); a sweep's
    empty `@vec_kernel` keeps the general kernel."""
    from kernelab.ops.base import Case

    from ._launch_recorder import record_launches

    v = _with_vec(op, name)
    vec, gen = v.meta["vec_kernel"], op.kernel_entry
    assert vec == f"{gen}_vec"
    runs = [(v, Case((3, 8192), "bfloat16")), (v, Case((3, 8192), "float32")), (v, Case((2, 40000), "bfloat16")),
            (v, Case((3, 8191), "bfloat16")), (v, Case((3, 8190), "float32")),
            (v, Case((5, 1000), "bfloat16", offset=1)),
            (v, Case((3, 8192), "bfloat16", offset=1, layout="mixed_alignment")),
            (v, Case((5, 1000), "float32", layout="misaligned_params")),
            (dataclasses.replace(v, meta={**v.meta, "vec_kernel": ""}), Case((3, 8192), "bfloat16"))]
    names = [c[0] for c in record_launches(op, runs)]
    assert names == [f"{vec}_bf16", f"{vec}_f32", f"{vec}_bf16", f"{gen}_bf16", f"{gen}_f32", f"{gen}_bf16",
                     f"{gen}_bf16", f"{gen}_f32", f"{gen}_bf16"]


@pytest.mark.parametrize("op, name", [(LN, "v5_l2_two_pass"), (RMS, "v4_l2_two_pass")], ids=["layernorm", "rmsnorm"])
def test_vec_kernels_are_16_byte_only(op, name):
    """<op>_vec_*: no head / tail scalars and no element-by-element bodies, so every global access is 16 bytes but
    layernorm's row pivot (one scalar load, lanes 0-2); about half the general kernel's SASS (sm_90, session 26:
    layernorm bf16 ~790 -> 622 instructions on the bench path a thread and row); no spills on any CI arch."""
    v = _with_vec(op, name)
    vec, gen = v.meta["vec_kernel"], op.kernel_entry
    _fit_every_ci_arch(op, v, vec)
    m = compile_file(v.path, arch="sm_90", defines=op.defines(v))
    for dt in ("f32", "bf16"):
        lines, general = _sass_lines(m.cubin, f"{vec}_{dt}"), _sass_lines(m.cubin, f"{gen}_{dt}")
        stores = [ln for ln in lines if re.search(r"\bSTG\.", ln)]
        loads = [ln for ln in lines if re.search(r"\bLDG\.", ln)]
        assert stores and all(".128" in ln for ln in stores), stores
        assert sum(".128" not in ln for ln in loads) == (1 if op is LN else 0), loads
        assert len(lines) < 0.6 * len(general), (dt, len(lines), len(general))


def test_layernorm_v5_defaults_are_the_measured_build():
    """fp32: three 512-thread rows an SM, bf16 six 256-thread rows (<= 40 registers each), both with pass 1's
    four vectors issued before any arithmetic on the pivot; no spills on any CI arch."""
    v5 = LN.variant("v5_l2_two_pass")
    _fit_every_ci_arch(LN, v5, "layernorm")
    m = compile_file(v5.path, arch="sm_90", defines=LN.defines(v5))
    for dt in ("f32", "bf16"):
        ins = _sass_lines(m.cubin, f"layernorm_{dt}")
        first_fp = next(i for i, ln in enumerate(ins) if re.search(r"\b(FADD|FFMA|FMUL)\b", ln))
        assert sum("LDG.E.EL.128" in ln for ln in ins[:first_fp]) == 4, f"{dt}: pass 1's vectors before the first FP op"


def test_layernorm_v5_pass2_takes_three_operations_an_element():
    """kl::ln_affine (ops/common/ln_affine.cuh, session 25): y = (x - pivot) * rstd + c, then * w + b, with
    c = -mean * rstd once a row: the aligned pass 2 takes one FADD and two FFMA an element and no FMUL; the
    plain form (LN_SCALE_FOLD 0) two FADD, one FMUL and one FFMA (bf16: 8 elements a 16-byte vector, fp32 4)."""
    v5 = LN.variant("v5_l2_two_pass")

    def counts(fold, dt):
        m = compile_file(v5.path, arch="sm_90", defines={**LN.defines(v5), "LN_SCALE_FOLD": fold})
        ins = _sass_lines(m.cubin, f"layernorm_{dt}")
        # the aligned body's loop (the last in the kernel): its x re-read (LDG.E.EF.128) to its store
        a = max(i for i, ln in enumerate(ins) if "LDG.E.EF.128" in ln)
        b = next(i for i in range(a, len(ins)) if "STG.E.128" in ins[i])
        return tuple(sum(bool(re.search(rf"\b{op}\b", ln)) for ln in ins[a:b]) for op in ("FADD", "FMUL", "FFMA"))
    assert counts(0, "bf16") == (16, 8, 8) and counts(1, "bf16") == (8, 0, 16)
    assert counts(0, "f32") == (8, 4, 4) and counts(1, "f32") == (4, 0, 8)


def test_rmsnorm_v4_pass1_peel_issues_the_vectors_before_the_scalars():
    """PASS1_PEEL 1 (session 20, default 0 until measured): with 0, bf16's pass 1 converts the head scalar
    before its first LDG.E.EL.128 (analysis.load_order; a second DRAM round trip on a row with a head or
    tail), with 1 pass 1 has no such load on any CI arch, without spills or a register past the cap."""
    for arch in CI_ARCHS:
        found = {}
        for peel in (0, 1):
            m = compile_file(V4.path, arch=arch, defines={**RMS.defines(V4), "PASS1_PEEL": peel})
            res = m.resources["rmsnorm_bf16"]
            assert res.registers <= 64 and not res.spills, (arch, peel)  # 1024 threads an SM / 256
            assert m.resources["rmsnorm_f32"].registers <= 40 and not m.resources["rmsnorm_f32"].spills
            lo = {o.name: o for o in load_order(disassemble(m.cubin))}["rmsnorm_bf16"]
            found[peel] = [s.load_text for s in lo.late_first_wide if "LDG.E.EL.128" in s.load_text]  # pass 1's
        assert found[0] and not found[1], (arch, found)


def test_param_shift_stores_y_in_16_byte_vectors():
    """PARAM_SHIFT 1 (session 21): a row whose weight (and bias) sit out of x's 16-byte phase (odd widths:
    bf16 N = 8191 puts 7 rows in 8 there) gets a pass-2 body of its own that stores y with STG.E.128 and
    reads the parameters as 4-byte words (LDG.E.CONSTANT, then SHF.R.W funnel shifts), where PARAM_SHIFT 0
    sent those rows to the element-by-element body (y stored 2 bytes at a time, w read 2 at a time). So on
    every CI arch the bf16 kernel built with the shift has more 16-byte store sites, at least 4 more funnel
    shifts, and fewer 2-byte stores and loads than the one without (sm_90 rmsnorm: STG.E.128 2 -> 4,
    STG.E.U16 22 -> 14, LDG.E.U16 28 -> 20, SHF.R.W.U32 0 -> 8); neither build spills."""
    for op, v in ((RMS, V4), (LN, LN.variant("v5_l2_two_pass"))):
        for arch in CI_ARCHS:
            counts = {}
            for shift in (0, 1):
                m = compile_file(v.path, arch=arch, defines={**op.defines(v), "PARAM_SHIFT": shift})
                for fn, res in m.resources.items():
                    assert not res.spills, (v.name, arch, shift, fn)
                ops = sass_mix(m.cubin)[f"{op.kernel_entry}_bf16"].opcodes
                counts[shift] = {k: ops.get(k, 0) for k in ("STG.E.128", "STG.E.U16", "LDG.E.U16")}
                counts[shift]["SHF.R.W"] = sum(c for o, c in ops.items() if o.startswith("SHF.R.W"))
            new, old = counts[1], counts[0]
            assert new["STG.E.128"] > old["STG.E.128"], (v.name, arch, counts)
            assert new["SHF.R.W"] >= old["SHF.R.W"] + 4, (v.name, arch, counts)  # a funnel a word of a vector
            assert new["STG.E.U16"] < old["STG.E.U16"], (v.name, arch, counts)
            assert new["LDG.E.U16"] < old["LDG.E.U16"], (v.name, arch, counts)
