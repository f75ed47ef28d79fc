"""'Will it run on GPU X' by the seeds' rules (seeds/000 §3): SASS forward within a major
version, arch-specific targets on exactly their GPU, PTX JIT-compiled for any newer GPU,
otherwise no kernel image."""

from pathlib import Path

import pytest

from kernelab.analysis import AnalysisError, compatibility_table, will_it_run
from kernelab.analysis.sass import FatbinListing, parse_fatbin_dump

FATBIN = Path(__file__).parents[1] / "fixtures" / "fatbin"

# (contents, GPU, how, image)
CASES = [
    # SASS: same major, minor >= (seeds: sm_80 runs on 8.6 and 8.9, not on 9.0)
    ({"sm_80"}, (8, 0), "sass", "sm_80"),
    ({"sm_80"}, (8, 6), "sass", "sm_80"),
    ({"sm_80"}, (8, 9), "sass", "sm_80"),
    ({"sm_80"}, (9, 0), "none", None),
    ({"sm_80"}, (7, 5), "none", None),
    ({"sm_86"}, (8, 0), "none", None),  # never to a lower minor
    ({"sm_86"}, (8, 9), "sass", "sm_86"),
    ({"sm_90"}, (10, 0), "none", None),
    ({"sm_100"}, (10, 3), "sass", "sm_100"),
    ({"sm_120"}, (12, 1), "sass", "sm_120"),
    # exact match preferred; otherwise the highest compatible minor
    ({"sm_80", "sm_90"}, (9, 0), "sass", "sm_90"),
    ({"sm_80", "sm_90"}, (8, 9), "sass", "sm_80"),
    ({"sm_80", "sm_86"}, (8, 9), "sass", "sm_86"),
    ({"sm_90", "sm_90a"}, (9, 0), "sass", "sm_90a"),
    # arch-specific 'a': exactly that compute capability
    ({"sm_90a"}, (9, 0), "sass", "sm_90a"),
    ({"sm_90a"}, (10, 0), "none", None),
    ({"sm_100a"}, (10, 3), "none", None),
    ({"sm_90a", "compute_90a"}, (10, 0), "none", None),  # 'a' PTX does not JIT forward either
    ({"compute_90a"}, (9, 0), "jit", "compute_90a"),
    # family 'f': SASS and PTX within the major version
    ({"sm_100f"}, (10, 0), "sass", "sm_100f"),
    ({"sm_100f"}, (10, 3), "sass", "sm_100f"),
    ({"sm_100f"}, (12, 0), "none", None),
    ({"compute_100f"}, (10, 3), "jit", "compute_100f"),
    ({"compute_100f"}, (11, 0), "none", None),
    ({"compute_103f"}, (10, 0), "none", None),
    # PTX: any GPU at or above the virtual arch, the newest such PTX
    ({"sm_80", "compute_80"}, (9, 0), "jit", "compute_80"),
    ({"sm_80", "compute_80"}, (12, 0), "jit", "compute_80"),
    ({"sm_80", "compute_80"}, (7, 5), "none", None),
    ({"compute_90"}, (8, 9), "none", None),  # compute_90 PTX cannot run on an A100/L40S
    ({"compute_90"}, (10, 0), "jit", "compute_90"),
    ({"compute_70", "compute_80", "compute_90"}, (8, 9), "jit", "compute_80"),
    ({"sm_90", "compute_80"}, (9, 0), "sass", "sm_90"),  # SASS before JIT
    (set(), (9, 0), "none", None),
]


@pytest.mark.parametrize("contents, gpu, how, image", CASES)
def test_rules(contents, gpu, how, image):
    v = will_it_run(contents, gpu)
    assert (v.how, v.image, v.runs) == (how, image, how != "none"), v.reason
    assert v.target == f"{gpu[0]}.{gpu[1]}"


def test_reasons_explain():
    v = will_it_run({"sm_80"}, (9, 0))
    assert "no kernel image" in v.reason and "cross major" in v.reason and "compute_90" in v.reason
    v = will_it_run({"sm_80", "compute_80"}, (9, 0))
    assert "JIT" in v.reason and "first load" in v.reason and "sm_80 cannot run" in v.reason
    v = will_it_run({"sm_80"}, (8, 6))
    assert "same major version 8" in v.reason
    v = will_it_run({"sm_90a"}, (10, 0))
    assert "arch-specific" in v.reason
    assert str(v).startswith("10.0: ")


def fixture(name: str) -> FatbinListing:
    return FatbinListing(parse_fatbin_dump((FATBIN / f"{name}.dump").read_text()), name)


@pytest.mark.parametrize("name, gpu, how, image", [
    ("saxpy_multi", "H100 SXM", "sass", "sm_90a"),
    ("saxpy_multi", (8, 6), "sass", "sm_86"),
    ("saxpy_multi", "L40S", "sass", "sm_86"),  # 8.9 runs the sm_86 SASS
    ("saxpy_multi", "B200", "jit", "compute_90"),
    ("saxpy_multi", (7, 5), "none", None),
    ("saxpy_family", "H200", "sass", "sm_90a"),
    ("saxpy_family", (10, 3), "sass", "sm_100f"),
    ("saxpy_family", (12, 0), "jit", "compute_120"),
    ("saxpy_family", (11, 0), "none", None),
    ("saxpy_family", "A100", "none", None),
    # seeds §3 Q5: -arch=sm_80 on an H100 runs through the PTX JIT ...
    ("app_sm80", "H100", "jit", "compute_80"),
    ("app_sm80", "RTX 4090", "sass", "sm_80"),
    # ... and SASS-only sm_80 gives "no kernel image is available" there
    ("saxpy_sm80_only", "H100", "none", None),
])
def test_captured_binaries(name, gpu, how, image):
    v = fixture(name).will_it_run(gpu)
    assert (v.how, v.image) == (how, image), v.reason


def test_table_over_devices():
    table = compatibility_table(fixture("saxpy_multi"), ["A100", "RTX 4090", "H100 PCIe", "B200", "9.0", "sm_75"])
    assert [v.how for v in table] == ["sass", "sass", "sass", "jit", "sass", "none"]


def test_target_spellings():
    for gpu in ((9, 0), "9.0", "sm_90", "90", "H100", "NVIDIA H100 80GB HBM3", "h200"):
        assert will_it_run({"sm_90"}, gpu).how == "sass", gpu


def test_bad_input():
    with pytest.raises(AnalysisError, match="not a SASS or PTX target"):
        will_it_run({"sm_8"}, (9, 0))
    with pytest.raises(AnalysisError, match="not a SASS or PTX target"):
        will_it_run({"ptx_90"}, (9, 0))
    with pytest.raises(AnalysisError, match="unknown GPU"):
        will_it_run({"sm_90"}, "Voodoo 5")
    assert will_it_run("sm_90", (9, 0)).how == "sass"  # a single name is one target
