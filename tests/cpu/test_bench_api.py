"""bench()/compare()/seeds_bench() argument checks that need no GPU, the public API surface,
and the ncu CSV parser of scripts/bench_accuracy.py."""

import importlib.util
import re
from pathlib import Path

import pytest

import kernelab.bench as kb
from kernelab.bench import BenchError, bench, compare, seeds_bench
from kernelab.gpu import NoGPUError, has_gpu

ROOT = Path(__file__).resolve().parents[2]


def test_public_api_is_small_and_documented():
    assert {"bench", "compare", "Measurement", "Comparison", "ImpossibleResult"} <= set(kb.__all__)
    for name in ("bench(fn, *, mode=", "compare(fn_a, fn_b)", "physical_floor", "seeds_bench"):
        assert name in kb.__doc__


def test_bad_arguments_are_refused_before_touching_the_gpu():
    with pytest.raises(BenchError, match="unknown mode 'warm'"):
        bench(lambda: None, mode="warm")
    with pytest.raises(BenchError, match="must be callable"):
        bench(42)
    with pytest.raises(BenchError, match="belong to mode='graph'"):
        bench(lambda: None, mode="cold", arg_sets=[()])
    with pytest.raises(ValueError, match="target_rel"):
        bench(lambda: None, target_rel=0)
    with pytest.raises(BenchError, match="iters"):
        seeds_bench(lambda: None, iters=0)
    with pytest.raises(BenchError, match="both functions or for neither"):
        compare(lambda: None, lambda: None, mode="graph", arg_sets_a=[()])


@pytest.mark.skipif(has_gpu(), reason="checks the error on a machine without a GPU")
def test_no_gpu_is_a_clear_error():
    with pytest.raises(NoGPUError, match="needs an NVIDIA GPU"):
        bench(lambda: None)


def test_bench_does_not_import_cuda_python():
    """Only kernelab.gpu talks to CUDA (the persisting-L2 reset lives in kernelab.gpu.l2)."""
    pattern = re.compile(r"^\s*(from|import)\s+cuda\.(core|bindings)", re.MULTILINE)
    offenders = [p.name for p in (ROOT / "src" / "kernelab" / "bench").glob("*.py") if pattern.search(p.read_text())]
    assert offenders == []


def _accuracy_script():
    spec = importlib.util.spec_from_file_location("bench_accuracy", ROOT / "scripts" / "bench_accuracy.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


NCU_CSV = '''==PROF== Connected to process 4242 (/usr/bin/python3.12)
==PROF== Profiling "vector_add_f32" - 0: 0%....50%....100% - 1 pass
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","4242","python3.12","127.0.0.1","vector_add_f32","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","234,560"
"1","4242","python3.12","127.0.0.1","vector_add_f32","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","usecond","235.10"
"2","4242","python3.12","127.0.0.1","void k<int, 2>(int*)","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes.sum","byte","12"
==PROF== Disconnected from process 4242
'''


def test_ncu_csv_parser():
    times = _accuracy_script().parse_ncu_csv(NCU_CSV)
    assert times == pytest.approx([234.56e-6, 235.10e-6])
