"""gelu_bias v5_short_fit's ODD_VEC knob (session 21; default 1 since session 22 measured it 4.3x faster at
32768 x 8191 bf16 on an H200): the build with it has a path that moves x and y in 16-byte vectors for
tensors whose rows are not 16-byte multiples, where the ODD_VEC 0 build's only path for them loads and
stores element by element."""

from __future__ import annotations

import re

from kernelab.analysis.sass import sass_mix
from kernelab.gpu import CI_ARCHS, compile_file
from kernelab.ops import discover

OP = discover()["gelu_bias"]


def test_odd_vec_adds_a_16_byte_path_and_leaves_the_default_alone():
    v = OP.variant("v5_short_fit")
    for arch in CI_ARCHS:
        counts = {}
        for k in (0, 1):
            m = compile_file(v.path, arch=arch, defines={**OP.defines(v), "ODD_VEC": k})
            assert all(not r.spills and r.registers <= 64 for r in m.resources.values()), (arch, k)
            ops = sass_mix(m.cubin)["gelu_bias_bf16"].opcodes
            counts[k] = {"STG.E.128": ops.get("STG.E.128", 0),
                         "LDG.E.128": sum(c for o, c in ops.items() if o.startswith("LDG.E.128")),
                         "SHF.R.W": sum(c for o, c in ops.items() if o.startswith("SHF.R.W"))}
        new, old = counts[1], counts[0]
        assert new["STG.E.128"] > old["STG.E.128"] and new["LDG.E.128"] > old["LDG.E.128"], (arch, counts)
        assert new["SHF.R.W"] >= old["SHF.R.W"] + 4, (arch, counts)  # the bias words' funnel shifts
    # The knob is on by default: the header's build is the ODD_VEC 1 build.
    assert "ODD_VEC" not in OP.defines(v)
    assert re.search(r"#define ODD_VEC 1\b", v.path.read_text())
