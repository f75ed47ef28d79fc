"""Scalar conversion and every argument error message, on CPU tensors (no GPU needed)."""

import numpy as np
import pytest
import torch

from kernelab.gpu import ArgumentError, DevicePointer, parse_signatures
from kernelab.gpu.params import make_converter

SIG = parse_signatures(
    'extern "C" __global__ void k(const float* a, float4* v, unsigned long long n, int k, float alpha, bool flag, void* any) {}'
)["k"]
CONV = {p.name: make_converter("k", p) for p in SIG}


class FakeCuda:
    """Stands in for a CUDA tensor: the converter only reads these attributes."""

    def __init__(self, dtype=torch.float32, ptr=256, contiguous=True, numel=8, device="cuda:0"):
        self.dtype, self._ptr, self._c, self._n = dtype, ptr, contiguous, numel
        self.device = torch.device(device)

    def data_ptr(self):
        return self._ptr

    def is_contiguous(self):
        return self._c

    def numel(self):
        return self._n

    def stride(self):
        return (2,)


def test_scalars_become_exact_c_types():
    assert CONV["n"](5).dtype == np.uint64 and CONV["n"](5) == 5
    assert CONV["k"](-3).dtype == np.int32
    assert CONV["alpha"](0.5).dtype == np.float32 and CONV["alpha"](2).dtype == np.float32
    assert CONV["flag"](True).dtype == np.bool_


def test_int_out_of_range_is_refused():
    with pytest.raises(ArgumentError, match=r"does not fit in int"):
        CONV["k"](2**31)
    with pytest.raises(ArgumentError, match=r"does not fit in unsigned long long"):
        CONV["n"](-1)


def test_float_for_int_and_wrong_numpy_type():
    with pytest.raises(ArgumentError, match=r"Fix: pass int\(4.0\)"):
        CONV["n"](4.0)
    with pytest.raises(ArgumentError, match="numpy int32.*unsigned long long"):
        CONV["n"](np.int32(4))
    with pytest.raises(ArgumentError, match="expected a number"):
        CONV["alpha"]("1.0")


def test_bare_int_is_never_a_pointer():
    with pytest.raises(ArgumentError, match="A Python int is not a pointer"):
        CONV["a"](0x7F0000000000)
    assert CONV["a"](DevicePointer(0x1000)) == 0x1000
    with pytest.raises(ArgumentError, match="16-byte aligned"):
        CONV["v"](DevicePointer(0x1004))


def test_tensor_checks_name_argument_and_fix():
    with pytest.raises(ArgumentError, match=r"param 0 'a'.*is on cpu.*a\.cuda\(\)"):
        CONV["a"](torch.zeros(4))
    with pytest.raises(ArgumentError, match=r"'a'.*dtype torch.bfloat16.*expects torch.float32"):
        CONV["a"](FakeCuda(dtype=torch.bfloat16))
    with pytest.raises(ArgumentError, match=r"not contiguous.*a\.contiguous\(\)"):
        CONV["a"](FakeCuda(contiguous=False))
    with pytest.raises(ArgumentError, match=r"'v'.*not 16-byte aligned.*ptr % 16 == 4"):
        CONV["v"](FakeCuda(ptr=0x1004))
    with pytest.raises(ArgumentError, match="got a tensor for a scalar"):
        CONV["n"](FakeCuda())
    assert CONV["a"](FakeCuda(ptr=0x1004)) == 0x1004  # float* needs only 4-byte alignment
    assert CONV["any"](FakeCuda(dtype=torch.int8, ptr=0x1001)) == 0x1001  # void* takes any dtype


def test_wrong_device_index_is_named():
    conv = make_converter("k", SIG[0], device_index=0)
    with pytest.raises(ArgumentError, match="cuda:1.*loaded on cuda:0"):
        conv(FakeCuda(device="cuda:1"))


# ---------------------------------------------------------------- signatures read through local includes

def _write(root, files: dict) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _k(name: str) -> str:
    return f'extern "C" __global__ void {name}(float* y, int n) {{}}\n'


def test_signatures_follow_local_includes_in_the_compilers_search_order(tmp_path):
    """A quoted include is looked for in include_dirs; one inside an included file in that file's own
    folder first (the compiler's order), so lib/b.cuh's "common.cuh" is lib/common.cuh, not the top one."""
    _write(tmp_path, {"a.cuh": '#include "lib/b.cuh"\n' + _k("from_a"),
                      "lib/b.cuh": '#include "common.cuh"\n' + _k("from_b"),
                      "lib/common.cuh": _k("from_lib_common"), "common.cuh": _k("from_top_common")})
    src = '#include <cuda_bf16.h>\n#include "a.cuh"\n' + _k("main")
    assert set(parse_signatures(src, include_dirs=[tmp_path])) == {"from_lib_common", "from_b", "from_a", "main"}
    assert set(parse_signatures(src)) == {"main"}  # no folders: no include is read (a source string has none)
    assert [p.ctype for p in parse_signatures(src, include_dirs=[str(tmp_path)])["from_b"]] == ["float*", "int"]


def test_an_include_cycle_reads_each_file_once(tmp_path):
    _write(tmp_path, {"a.cuh": '#include "b.cuh"\n' + _k("from_a"), "b.cuh": '#include "a.cuh"\n' + _k("from_b")})
    from kernelab.gpu.preprocess import preprocess

    pre = preprocess('#include "a.cuh"\n#include "b.cuh"\n' + _k("main"), include_dirs=[tmp_path])
    assert [p.name for p in pre.files] == ["a.cuh", "b.cuh"]
    assert pre.text.count("from_a") == 1 and pre.text.count("from_b") == 1
    assert set(parse_signatures('#include "a.cuh"\n', include_dirs=[tmp_path])) == {"from_a", "from_b"}


def test_an_include_found_nowhere_is_skipped_not_an_error(tmp_path):
    """The compiler is the judge of a missing file (it has already failed, or found it on the toolkit's
    path, as with a quoted "cuda_bf16.h"): the reader reads the rest and names no error of its own."""
    _write(tmp_path, {"a.cuh": '#include "cuda_fp16.h"\n#include "gone.cuh"\n' + _k("from_a")})
    assert set(parse_signatures('#include "nowhere.cuh"\n#include "a.cuh"\n' + _k("main"),
                                include_dirs=[tmp_path])) == {"from_a", "main"}


def test_included_text_honours_defines_and_if_blocks(tmp_path):
    """softmax/v4_dispatch's pattern: a module defines NO_ENTRY before it includes a strategy, whose own
    entry points are #ifndef NO_ENTRY (they would clash with the module's), and #undef's it after."""
    _write(tmp_path, {"strategy.cu": (
        "#ifndef WIDTH\n#define WIDTH 16\n#endif\n"
        "#ifndef NO_ENTRY\n" + _k("strategy_entry") + 'extern "C" __global__ void softmax_f32(float* y, int n, '
        "unsigned* work) {}\n#endif\n"
        "#if WIDTH < 32\n" + _k("narrow") + "#elif WIDTH == 32\n" + _k("exact") + "#else\n" + _k("wide") + "#endif\n"
        "#if __CUDA_ARCH__ >= 900\n" + _k("sm90_only") + "#else\n" + _k("before_sm90") + "#endif\n"
        "#if !defined(ONLY) || ONLY == 2\n" + _k("two") + "#endif\n")})
    module = ('#define NO_ENTRY\n#include "strategy.cu"\n#undef NO_ENTRY\n'
              "#ifndef NO_ENTRY\n" + _k("softmax_f32") + "#endif\n")
    sigs = parse_signatures(module, include_dirs=[tmp_path])
    # the strategy's entry points are not the module's, and its softmax_f32 (3 params) is not the module's (2)
    assert set(sigs) == {"narrow", "sm90_only", "before_sm90", "two", "softmax_f32"}
    assert [p.name for p in sigs["softmax_f32"]] == ["y", "n"]
    # defines decide #if / #elif; __CUDA_ARCH__ cannot be told on the host: both branches stay (every arch's set)
    assert {"exact", "sm90_only", "before_sm90"} <= set(parse_signatures(module, {"WIDTH": 32}, [tmp_path]))
    assert "wide" in parse_signatures(module, {"WIDTH": "(16 * 4)"}, [tmp_path])
    assert "two" not in parse_signatures(module, {"ONLY": 4}, [tmp_path])
    # read on its own, the strategy has its entry points
    assert {"strategy_entry", "softmax_f32"} <= set(parse_signatures((tmp_path / "strategy.cu").read_text()))


def test_softmax_modules_read_each_entry_point_once_through_their_includes():
    """v4_dispatch includes v0-v13 with SOFTMAX_NO_ENTRY_POINTS (v14-v16 include v12 / v13 so), whose own
    entry points are #ifndef it, and takes the strategies' instance lists from the *_instances.cuh headers
    the strategies include: read through the includes, each entry point is defined once (an included
    strategy's own softmax_f32 would be a second one), and the names are the cubin's (sm_90: 101 for v4,
    whose defines leave out v3's and v5's lists and, since session 27, v14's six; 154 with all; checked against
    cuobjdump when this was written; session 29's three softmax_dy_t128_* bound their blocks through a macro call,
    __launch_bounds__(128, SB_MIN_BLOCKS_AT(128))), with v4's parameters, not an included file's."""
    import re

    from kernelab.gpu.preprocess import preprocess
    from kernelab.ops import discover

    op = discover()["softmax"]
    counts = {"v4_dispatch": 101, "v14_split_grid": 24, "v15_any_cluster": 18, "v16_half_blocks": 18}
    for name, count in counts.items():
        v = op.variant(name)
        text = preprocess(v.path.read_text(), op.defines(v), [v.path.parent]).text
        defined = re.findall(r"__global__\s+void\s+(?:__launch_bounds__\((?:[^()]|\([^()]*\))*\)\s*)?(\w+)\s*\(", text)
        assert len(defined) == len(set(defined)) == count, (name, len(defined), len(set(defined)))
        assert set(parse_signatures(v.path.read_text(), op.defines(v), [v.path.parent])) == set(defined), name
    v4 = op.variant("v4_dispatch")
    sigs = parse_signatures(v4.path.read_text(), op.defines(v4), [v4.path.parent])
    assert [p.name for p in sigs["softmax_f32"]] == ["x", "y", "M", "N"]  # v2's kernel; v12's takes `work` too


def test_attribute_arguments_may_call_a_macro():
    """__launch_bounds__ / __cluster_dims__ / __maxnreg__ arguments with a parenthesised macro call or expression
    (softmax v4's `__launch_bounds__(128, SB_MIN_BLOCKS_AT(128))`): the kernel is still found, with its parameters."""
    src = ("#define MIN_AT(t) (512 / (t))\n"
           'extern "C" __global__ void __launch_bounds__(128, MIN_AT(128)) a(float* x, int n) {}\n'
           'extern "C" __global__ void __cluster_dims__((2), 1, 1) __launch_bounds__((256), 2) b(const float* y) {}\n'
           'extern "C" __global__ void __maxnreg__((64)) c(int m) {}\n')
    sigs = parse_signatures(src)
    assert {k: [p.name for p in v] for k, v in sigs.items()} == {"a": ["x", "n"], "b": ["y"], "c": ["m"]}


@pytest.mark.parametrize("cond, kept", [
    ("defined(__CUDA_ARCH__) && 0", False),  # a known zero decides &&, whatever the other side
    ("!defined(__CUDA_ARCH__) || 1", True),
    ("__CUDA_ARCH__ >= 900", None),  # cannot tell: kept, as every branch is
    ("NEVER_DEFINED_HERE == 0", None),  # may come from a header the reader does not follow
    ("defined(NEVER_DEFINED_HERE)", False),  # ...but then this reads false, as the compiler's would
    ("K * 2 == 0x20 && (K > 8 ? 1 : 0)", True),  # K: 16u below
    ("K / 0", None),
])
def test_if_conditions_are_three_valued(cond, kept):
    from kernelab.gpu.preprocess import preprocess

    text = preprocess(f"#define K 16u\n#if {cond}\nif_branch\n#else\nelse_branch\n#endif\n").text
    assert ("if_branch" in text, "else_branch" in text) == {True: (True, False), False: (False, True),
                                                            None: (True, True)}[kept]


def test_a_compiled_module_carries_the_include_folders_the_reader_needs(tmp_path):
    """compile_file's search path (the file's folder first) travels on CompiledModule.include_dirs, and the
    signatures read through it are the cubin's kernels, the included file's among them."""
    from kernelab.gpu import compile_file, toolchain

    if not toolchain.cuda_include_dirs():
        pytest.skip("NVRTC needs the CUDA headers")
    _write(tmp_path, {"k.cuh": _k("from_header"), "main.cu": '#include "k.cuh"\n' + _k("from_main")})
    compiled = compile_file(tmp_path / "main.cu", arch="sm_90", use_cache=False)
    assert compiled.include_dirs[0] == str(tmp_path.resolve())
    assert set(parse_signatures(compiled.source, None, compiled.include_dirs)) == set(compiled.kernel_names())
    assert set(compiled.kernel_names()) == {"from_header", "from_main"}


def test_a_kernel_built_by_a_macro_is_named_as_such_when_asked_for():
    """A function-like macro that writes a kernel compiles, but the signature reader never sees it: asking for it
    says so and how to fix it (session 30 lost a device call to "no __global__ function ... (found: none)"); a
    template kernel's mangled name and a name that is nowhere get their own messages."""
    from kernelab.gpu import compile_source, toolchain
    from kernelab.gpu.module import missing_kernel_error

    if not toolchain.cuda_include_dirs():
        pytest.skip("NVRTC needs the CUDA headers")
    src = ('#define KERNEL(name) extern "C" __global__ void name(float* x) { x[0] = 1.0f; }\n'
           "KERNEL(by_macro)\n"
           "template <int N> __global__ void templated(float* x) { x[0] = N; }\n"
           "template __global__ void templated<3>(float*);\n"
           'extern "C" __global__ void written(float* x) { x[0] = 2.0f; }\n')
    compiled = compile_source(src, name="macros.cu", arch="sm_90", use_cache=False)
    sigs = parse_signatures(src)
    assert set(sigs) == {"written"} and {"by_macro", "written"} <= set(compiled.kernel_names())
    by_macro = str(missing_kernel_error(compiled, sigs, "by_macro"))
    assert "is in the compiled module" in by_macro and "function-like macro" in by_macro
    assert 'extern "C" __global__ void by_macro(...)' in by_macro
    assert "C++-mangled" in str(missing_kernel_error(compiled, sigs, "templated"))
    nowhere = str(missing_kernel_error(compiled, sigs, "nowhere"))
    assert "has no __global__ function 'nowhere'" in nowhere and "found: written" in nowhere
