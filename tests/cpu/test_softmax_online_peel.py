"""softmax v2_online's PASS1_PEEL knob (session 20, default off until an H200 sweep measures it): pass 1's
first step of vectors issued before the head/tail scalars are touched. Read back with analysis.load_order
on every CI arch: the default build's first LDG.E.128 waits on the scalars (a second DRAM round trip on a
misaligned row), the knob's does not, with no spills and room for two 512-thread blocks an SM."""

from __future__ import annotations

import pytest

from kernelab.analysis.load_order import load_order
from kernelab.analysis.sass import disassemble
from kernelab.gpu import CI_ARCHS, compile_file
from kernelab.gpu.toolchain import cuobjdump_path
from kernelab.ops import discover

pytestmark = pytest.mark.skipif(cuobjdump_path() is None, reason="no cuobjdump (pip install nvidia-cuda-cuobjdump)")

OP = discover()["softmax"]
V2 = OP.variant("v2_online")
KERNELS = ("softmax_online_t512_f32", "softmax_online_t512_bf16")


@pytest.mark.parametrize("arch", CI_ARCHS)
def test_the_peel_issues_the_first_vectors_before_the_scalars(arch):
    orders = {}
    for peel in (0, 1):
        m = compile_file(V2.path, arch=arch, defines={**OP.defines(V2), "PASS1_PEEL": peel})
        for k in KERNELS:  # __launch_bounds__(512, 2): at most 64 registers
            assert m.resources[k].registers <= 64 and not m.resources[k].spills, (arch, peel, k)
        orders[peel] = {lo.name: lo for lo in load_order(disassemble(m.cubin))}
    for k in KERNELS:
        before, after = orders[0][k], orders[1][k]
        assert before.late_first_wide and before.late_first_wide[0].waited_guard, (arch, k)  # a head/tail scalar
        assert not after.late_first_wide, (arch, k, after.note())
