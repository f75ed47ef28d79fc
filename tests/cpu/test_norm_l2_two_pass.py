"""rmsnorm v4_l2_two_pass's per-dtype geometry (`@block_bf16`): the plan, the macros and the
compiled kernels' launch bounds agree, and a sweep's `@block` override reaches both dtypes."""

from __future__ import annotations

import dataclasses

from kernelab.gpu import compile_file
from kernelab.ops import discover
from kernelab.ops.build import target_arch

OPS = discover()
RMS, LN = OPS["rmsnorm"], OPS["layernorm"]
V4 = RMS.variant("v4_l2_two_pass")


def test_each_dtype_takes_its_own_block():
    assert V4.meta["block"] == "512" and V4.meta["block_bf16"] == "256"
    assert RMS.plan(V4, 8192, "bfloat16").block == 256
    assert RMS.plan(V4, 8192, "float32").block == 512
    assert RMS.defines(V4) == {"BLOCK": 512, "ROWS_PER_BLOCK": 1, "BLOCK_BF16": 256}
    # layernorm v5 has one block for both
    v5 = LN.variant("v5_l2_two_pass")
    assert LN.plan(v5, 8192, "bfloat16").block == LN.plan(v5, 8192, "float32").block == 512
    assert "BLOCK_BF16" not in LN.defines(v5)


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
