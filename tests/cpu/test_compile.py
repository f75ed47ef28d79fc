"""Compiling without a GPU: NVRTC cubins for every CI arch, the cache, compile errors, signatures."""

import time

import pytest

from kernelab.gpu import CI_ARCHS, Arch, CompileError, KernelabError, compile_source, parse_signatures
from kernelab.gpu import cache
from kernelab.ops import compile_variant, discover

from ._parallel import map_compiles

ADD = r"""
#include <cuda_bf16.h>
extern "C" __global__ void add(const float* __restrict__ a, float* c, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + 1.0f;
}
"""


def _library_variants():
    for op in discover().values():
        for v in op.variants(include_wrong=True):
            yield op, v


@pytest.mark.parametrize("arch", CI_ARCHS)
def test_every_library_kernel_compiles_without_spills(arch):
    """Every variant (wrong/ included: they must compile so the checker can reject them) builds
    for every CI arch with 0 spill bytes. Arch-specific variants (@arch sm_90a) build for theirs."""
    failures = []
    jobs = [(op, v) for op, v in _library_variants()
            if not (v.min_arch and Arch.parse(v.min_arch).cc != Arch.parse(arch).cc
                    and Arch.parse(v.min_arch).suffix == "a")]  # an sm_90a variant: built in its own arch's run
    def build(job):
        op, v = job
        return compile_variant(op, v, arch=arch if not v.min_arch else None)
    for (op, v), m in map_compiles(build, jobs):
        if isinstance(m, CompileError):
            failures.append(f"{v.id} [{arch}]: {m}")
            continue
        if isinstance(m, Exception):
            raise m
        assert m.resources, f"{v.id}: no ptxas report in the log"
        for dt in v.dtypes(op):
            name = op.kernel_name(dt)
            if not v.wrong:
                assert name in m.resources, f"{v.id} lacks kernel {name}"
        for k, r in m.resources.items():
            if r.spills and not v.wrong:
                failures.append(f"{v.id} {k} [{arch}]: {r.spill_stores} B spill stores, {r.spill_loads} B spill loads")
    assert not failures, "\n".join(failures)


def test_arch_specific_variants_build_for_their_arch():
    for op, v in _library_variants():
        if v.min_arch:
            m = compile_variant(op, v, arch=v.min_arch)
            assert m.arch == Arch.parse(v.min_arch).sm
            assert all(r.spills == 0 for r in m.resources.values()), v.id


def test_cache_miss_then_hit_without_compiler(monkeypatch, tmp_path):
    # A cache of its own: clearing the session's would make every later test compile again (~3 min of CI).
    monkeypatch.setenv("KERNELAB_CACHE_DIR", str(tmp_path))
    assert cache.clear() == 0
    first = compile_source(ADD, arch="sm_90")
    assert not first.cache_hit and first.resources["add"].registers > 0

    import kernelab.gpu.compiler as compiler

    real_nvrtc = compiler._nvrtc

    def boom(*a, **k):
        raise AssertionError("a warm hit must not invoke the compiler")

    monkeypatch.setattr(compiler, "_nvrtc", boom)
    t0 = time.perf_counter()
    second = compile_source(ADD, arch="sm_90")
    assert time.perf_counter() - t0 < 0.05
    assert second.cache_hit and second.cubin == first.cubin
    assert second.resources["add"].registers == first.resources["add"].registers
    # A different arch, define or source is a miss (the compiler back, the cache still this test's own).
    monkeypatch.setattr(compiler, "_nvrtc", real_nvrtc)
    assert not compile_source(ADD, arch="sm_80").cache_hit
    assert not compile_source(ADD, arch="sm_90", defines={"X": 1}).cache_hit
    assert not compile_source(ADD + "\n// edit\n", arch="sm_90").cache_hit


def test_cache_key_covers_included_headers(tmp_path):
    (tmp_path / "common.cuh").write_text("#define OFFSET 1.0f\n")
    src = tmp_path / "k.cu"
    src.write_text('#include "common.cuh"\nextern "C" __global__ void k(float* x) { x[0] += OFFSET; }\n')
    from kernelab.gpu import compile_file

    assert not compile_file(src, arch="sm_90").cache_hit
    assert compile_file(src, arch="sm_90").cache_hit
    (tmp_path / "common.cuh").write_text("#define OFFSET 2.0f\n")
    assert not compile_file(src, arch="sm_90").cache_hit, "editing an included header must miss"


def test_compile_error_carries_file_and_line(tmp_path):
    src = tmp_path / "broken.cu"
    src.write_text('extern "C" __global__ void k(float* x) {\n  x[0] = undefined_name;\n}\n')
    from kernelab.gpu import compile_file

    with pytest.raises(CompileError) as ei:
        compile_file(src, arch="sm_90", use_cache=False)
    err = ei.value
    assert any(d.line == 2 and d.file.endswith("broken.cu") for d in err.diagnostics)
    assert f"{src}:2: error" in str(err) and "undefined_name" in str(err)


def test_nvcc_compile_matches_nvrtc_resources():
    from kernelab.gpu import toolchain

    if not toolchain.nvcc_path():
        pytest.skip("no nvcc on this machine (pip install 'kernelab[tools]')")
    m = compile_source(ADD, arch="sm_90", compiler="nvcc", use_cache=False)
    assert m.cubin[:4] == b"\x7fELF" and m.resources["add"].registers > 0


def test_cubin_is_elf_and_has_sha():
    m = compile_source(ADD, arch="sm_120")
    assert m.cubin[:4] == b"\x7fELF" and len(m.cubin_sha256) == 64 and m.arch == "sm_120"


def test_bad_arch_and_compiler_errors():
    with pytest.raises(KernelabError, match="sm_90"):
        Arch.parse("hopper")
    with pytest.raises(KernelabError, match="nvrtc"):
        compile_source(ADD, compiler="clang")
    assert Arch.parse("9.0").sm == "sm_90" and Arch.parse("90a").sm == "sm_90a" and Arch.parse("sm_100").cc == (10, 0)


def test_missing_file_error():
    from kernelab.gpu import compile_file

    with pytest.raises(KernelabError, match="no such CUDA source file"):
        compile_file("/nonexistent/kernel.cu")


def test_signature_parser_reads_types_bounds_and_macros():
    src = r"""
    #define IDX unsigned long long
    // extern "C" __global__ void commented_out(int x);
    extern "C" __global__ void __launch_bounds__(256, 2) k1(const float* __restrict__ a, T* b, IDX n, int k, float alpha) {}
    template <int N> __global__ void templated(float* x) {}
    extern "C" __global__ void k2(void) {}
    extern "C" __global__ void k3(const __grid_constant__ CUtensorMap tm, __nv_bfloat16* out) {}
    """
    sigs = parse_signatures(src, {"T": "__nv_bfloat16"})
    assert set(sigs) == {"k1", "k2", "k3"}
    k1 = sigs["k1"]
    assert [p.kind for p in k1] == ["pointer", "pointer", "scalar", "scalar", "scalar"]
    assert k1[0].const and k1[0].torch_dtype == "float32"
    assert k1[1].torch_dtype == "bfloat16" and k1[2].base == "unsigned long long"
    assert sigs["k2"] == [] and sigs["k3"][0].kind == "struct"


def test_signature_parser_refuses_unknown_types():
    with pytest.raises(KernelabError, match="cannot pass safely"):
        parse_signatures('extern "C" __global__ void k(MyStruct s) {}')
