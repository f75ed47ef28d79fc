"""The known-wrong kernels are well formed: each names the reason the checker must give, they cover every
cheat class of issue 4 §5, and they compile for every CI arch without spilling (GPU tests run them)."""

import pytest

from kernelab.check import REASONS
from kernelab.gpu import CI_ARCHS
from kernelab.ops import compile_variant, discover

OP = discover()["vector_add"]
WRONG = OP.wrong_variants()

# issue 4 §5: the ten classes, and the reason the checker gives for each
CLASSES = {
    "tail unwritten": "unwritten", "only the first block": "unwritten", "mutates an input": "input_mutated",
    "reads uninitialised output": "stale_read", "writes one past the end": "out_of_bounds",
    "work on a side stream": "async_work", "result cached by pointer": "cached_result",
    "bf16 math in an fp32 op": "precision", "illegal address": "crash", "infinite loop": "hang",
}


def test_every_wrong_kernel_declares_a_known_reason():
    assert WRONG, "vector_add/wrong/ holds no kernels"
    for v in WRONG:
        assert v.wrong and v.name.startswith("w")
        reason = v.meta.get("expect")
        assert reason in REASONS, f"{v.name}: `// @expect {reason}` is not a reason code ({', '.join(REASONS)})"
        assert v.summary.startswith(v.name + ":"), f"{v.name}: the header should open with what is wrong"


def test_the_wrong_kernels_cover_every_cheat_class():
    expected = sorted(CLASSES.values())
    declared = sorted(v.meta["expect"] for v in WRONG)
    assert len(WRONG) >= len(CLASSES)
    for reason in set(expected):
        assert declared.count(reason) >= expected.count(reason), f"no wrong kernel expects {reason!r}"


def test_host_side_cheats_have_launchers():
    by_name = {v.name: v for v in WRONG}
    assert by_name["w6_side_stream"].launcher is not None
    assert by_name["w7_cached_by_pointer"].launcher is not None
    assert by_name["w8_bf16_math"].dtypes(OP) == ("float32",)


@pytest.mark.parametrize("arch", CI_ARCHS)
def test_wrong_kernels_compile_without_spills(arch):
    for v in WRONG:
        m = compile_variant(OP, v, arch=arch)
        for dt in v.dtypes(OP):
            assert OP.kernel_name(dt) in m.resources, f"{v.name} lacks {OP.kernel_name(dt)}"
        for k, r in m.resources.items():
            assert r.spills == 0, f"{v.name} {k} [{arch}] spills"
