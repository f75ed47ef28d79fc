"""gemm without a GPU: the op's declarations, the tolerance model, launch geometry, tensor-map
validation and argument packing, and every variant's cubin and SASS (NVRTC + cuobjdump)."""

from __future__ import annotations

import ctypes
import re
import subprocess
from collections import Counter

import pytest
import torch

from kernelab.gpu import ArgumentError, DevicePointer, parse_signatures, tensormap, toolchain
from kernelab.gpu.params import make_converter
from kernelab.ops import Case, compile_variant, discover

OP = discover()["gemm"]
VARIANTS = [v.name for v in OP.variants()]
NUMBER = {v.name: v.number for v in OP.variants()}
FP32 = [v for v in VARIANTS if NUMBER[v] <= 5 or NUMBER[v] == 9]  # FFMA: v0-v5, v9 (the tuned v5)
BF16 = [v for v in VARIANTS if 6 <= NUMBER[v] <= 8]  # tensor cores


# ---- declarations ---------------------------------------------------------------------

def test_variants_in_issue_order_with_dtypes():
    # v3 twice: 1D then 2D register blocking (the issue's v3 row); v8: the stretch variant; v9: fp32, tuned
    assert [v.split("_")[0] for v in VARIANTS] == [f"v{i}" for i in range(4)] + [f"v{i}" for i in range(3, 10)]
    assert VARIANTS[3:5] == ["v3_regblock1d", "v3_regblock2d"]
    for name in FP32:
        assert OP.variant(name).dtypes(OP) == ("float32",), name
    for name in BF16:
        assert OP.variant(name).dtypes(OP) == ("bfloat16",), name
    for name in ("v7", "v8"):
        v = OP.variant(name)
        assert v.min_arch == "sm_90a" and v.launcher is not None  # tensor maps + persistent grid
    assert OP.variant("v8").meta_int("cluster") == 2


def test_every_variant_header_says_what_why_predicted_measured():
    for v in OP.variants():
        text = v.header
        assert v.summary.startswith(v.name + ":"), f"{v.name}: first line should name it and say what it adds"
        assert re.search(r"Predicted: .*\d", text), f"{v.name}: no numeric prediction"
        assert "Measured: BENCHMARKS.md" in text, v.name
        if v.number > 0:
            assert "What changed" in text, v.name


def test_wrong_kernels_declare_what_the_checker_must_say():
    wrong = OP.wrong_variants()
    assert len(wrong) >= 2
    for v in wrong:
        assert v.meta.get("expect") in {"mismatch", "precision", "unwritten", "out_of_bounds"}, v.name


def test_shapes_cover_tails_decode_and_llm_benchmarks():
    tests = {(c.shape, c.dtype) for c in OP.test_cases()}
    assert ((4095, 4097, 1000), "bfloat16") in tests and ((1, 1, 1), "float32") in tests
    assert any(s[0] == 1 for s, _ in tests) and any(s[0] == 16 for s, _ in tests)
    bench = {(c.shape, c.dtype) for c in OP.bench_cases()}
    for s in (1024, 2048, 4096, 8192):
        assert ((s, s, s), "bfloat16") in bench
    for s in (1024, 2048, 4096):
        assert ((s, s, s), "float32") in bench
    for m in (1, 16, 128, 4096):
        for n, k in ((4096, 4096), (11008, 4096), (4096, 11008)):
            assert ((m, n, k), "bfloat16") in bench
    assert {(c.shape, c.dtype) for c in OP.quick_cases()} == {((4096,) * 3, "float32"), ((4096,) * 3, "bfloat16")}


def test_work_model():
    w = OP.work(Case((4096, 4096, 4096), "float32"))
    assert w.flops == 2 * 4096 ** 3 and w.bytes == 3 * 4096 * 4096 * 4 and w.flop_unit == "fp32"
    w = OP.work(Case((1, 11008, 4096), "bfloat16"))
    assert w.bytes == (4096 + 11008 * 4096 + 11008) * 2 and w.flop_unit == "bf16"


def test_supports_explains_k_alignment_dtype():
    v6, v7, v5 = OP.variant("v6"), OP.variant("v7"), OP.variant("v5")
    assert OP.supports(v7, Case((128, 256, 64), "bfloat16")) is None
    assert OP.supports(v6, Case((4095, 4097, 1000), "bfloat16")) is None
    why = OP.supports(v7, Case((17, 31, 45), "bfloat16"))
    assert "multiple of 8" in why and "K = 45" in why and "48" in why
    assert "16-byte aligned" in OP.supports(v6, Case((128, 256, 64), "bfloat16", offset=1))
    assert OP.supports(v7, Case((128, 256, 64), "bfloat16", offset=8)) is None  # 16 bytes in: still aligned
    assert "no bfloat16 kernel" in OP.supports(v5, Case((64, 64, 64), "bfloat16"))
    assert OP.supports(v5, Case((17, 31, 45), "float32", offset=1)) is None  # fp32 variants take any shape


def test_geometry_from_headers():
    g = OP.geometry(OP.variant("v0"), Case((100, 70, 5), "float32"))
    assert g.block == (32, 8) and g.grid == (3, 13) and g.smem == 0
    g = OP.geometry(OP.variant("v1"), Case((100, 70, 5), "float32"))
    assert g.block == (256,) and g.grid == (9, 100)
    g = OP.geometry(OP.variant("v5"), Case((4095, 4097, 8), "float32"))
    assert g.grid == (33, 32) and g.block == (256,)
    g = OP.geometry(OP.variant("v6"), Case((4096, 4096, 4096), "bfloat16"))
    assert g.grid == (32, 32) and g.smem == 3 * 2 * 128 * 64 * 2
    g = OP.geometry(OP.variant("v7"), Case((4096, 4096, 4096), "bfloat16"))
    assert g.block == (384,) and g.tile == (128, 256) and g.smem == 4 * (128 + 256) * 64 * 2 + 1024
    assert OP.variant("v7").meta_int("bk") == 64
    g8 = OP.geometry(OP.variant("v8"), Case((4096, 4096, 4096), "bfloat16"))
    assert (g8.block, g8.tile, g8.smem) == (g.block, g.tile, g.smem)


# ---- tolerances and inputs ------------------------------------------------------------

def test_tolerance_grows_with_k_and_table_holds_the_largest_k():
    r1, a1 = OP.tolerance(Case((8, 8, 256), "float32"))
    r2, a2 = OP.tolerance(Case((8, 8, 4096), "float32"))
    assert a2 / a1 == pytest.approx(16 ** 0.75) and r1 == r2
    assert OP.tolerances["float32"] == OP.tolerance(Case((1, 1, 4096), "float32"))
    assert OP.tolerances["bfloat16"] == OP.tolerance(Case((1, 1, 11008), "bfloat16"))
    assert OP.tolerances["bfloat16"][0] == 2.0 ** -8  # half a bf16 spacing: the output rounding


def test_inputs_give_unit_variance_outputs_on_cpu():
    for k in (64, 1024):
        case = Case((64, 64, k), "float32")
        inp = OP.make_inputs(case, seed=0, device="cpu")
        ref = OP.reference(case, inp)["c"]
        assert ref.dtype == torch.float64 and ref.shape == (64, 64)
        assert 0.85 < ref.std().item() < 1.15, k


@pytest.mark.parametrize("k", [256, 4096])
def test_fp32_tolerance_passes_fp32_math_and_fails_bf16_inputs(k):
    """The tolerance model on CPU: fp32 sums (sequential, like one thread's loop) stay inside
    atol; the same sums over bf16-rounded inputs (wrong/w2's cheat) do not."""
    case = Case((48, 48, k), "float32")
    inp = OP.make_inputs(case, seed=1, device="cpu")
    a, b = inp["a"], inp["b"]
    ref = OP.reference(case, inp)["c"]
    rtol, atol = OP.tolerance(case)

    def sequential(x, y):  # k-ordered fp32 accumulation, one rounding per step
        acc = torch.zeros(x.shape[0], y.shape[0], dtype=torch.float32)
        for kk in range(x.shape[1]):
            acc = acc + x[:, kk : kk + 1] * y[:, kk].unsqueeze(0)
        return acc

    err = (sequential(a, b).double() - ref).abs() - rtol * ref.abs()
    assert err.max().item() <= atol, f"honest fp32 error {err.max().item():.2e} > atol {atol:.2e}"
    ab, bb = a.bfloat16().float(), b.bfloat16().float()
    cheat = ((ab.double() @ bb.double().t()) - ref).abs() - rtol * ref.abs()
    assert cheat.max().item() > 3 * atol, f"bf16-input error {cheat.max().item():.2e} hides under atol {atol:.2e}"


def test_bf16_reference_is_fp32_accumulated():
    case = Case((16, 24, 64), "bfloat16")
    inp = OP.make_inputs(case, seed=0, device="cpu")
    assert inp["a"].dtype == torch.bfloat16 and inp["b"].shape == (24, 64)
    ref = OP.reference(case, inp)["c"]
    assert ref.dtype == torch.float32 and ref.shape == (16, 24)


# ---- compiled code --------------------------------------------------------------------

def _sass_text(cubin: bytes, tmp_path) -> str:
    path = tmp_path / "k.cubin"
    path.write_bytes(cubin)
    return subprocess.run([toolchain.cuobjdump_path(), "-sass", str(path)], capture_output=True, text=True,
                          check=True).stdout


def _sass_counts(cubin: bytes, tmp_path) -> Counter:
    ops = Counter()
    for line in _sass_text(cubin, tmp_path).splitlines():
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
        if m:
            ops[m.group(1)] += 1
    return ops


needs_cuobjdump = pytest.mark.skipif(toolchain.cuobjdump_path() is None, reason="cuobjdump not installed")


@needs_cuobjdump
@pytest.mark.parametrize("name", VARIANTS + [v.name for v in OP.wrong_variants()])
def test_sass_instruction_mix_and_no_local_memory(name, tmp_path):
    v = OP.variant(name)
    m = compile_variant(OP, v, arch=v.min_arch or "sm_90")
    for kernel, r in m.resources.items():
        assert r.spills == 0 and r.stack_frame == 0, f"{name}/{kernel}: {r}"
    ops = _sass_counts(m.cubin, tmp_path)
    assert ops["LDL"] == 0 and ops["STL"] == 0, f"{name} uses local memory: {ops['LDL']} LDL, {ops['STL']} STL"
    if v.number in (7, 8):
        assert ops["HGMMA"] >= 4 and ops["HMMA"] == 0 and ops["FFMA"] == 0
        assert ops["UTMALDG"] >= 2 and ops["USETMAXREG"] >= 2  # TMA loads; setmaxnreg dec + inc
        assert "C7508" not in m.log and "setmaxnreg" not in m.log.lower(), m.log  # setmaxnreg honoured
        assert "wgmma" not in m.log.lower(), m.log  # no "wgmma serialized" performance warnings
        if v.number == 8:  # multicast B halves; no GPU-scope fence inside the k-loop
            sass = _sass_text(m.cubin, tmp_path)
            assert "UTMALDG.2D.MULTICAST" in sass
            assert sass.count("MEMBAR.ALL.GPU") <= 1, "a cluster-scope release in the loop costs a MEMBAR.GPU each"
    elif v.number == 6:
        assert ops["HMMA"] >= 64 and ops["LDSM"] >= 24 and ops["LDGSTS"] >= 8 and ops["HGMMA"] == 0
    else:
        assert ops["FFMA"] > 0 and ops["HMMA"] == 0 and ops["HGMMA"] == 0


@needs_cuobjdump
def test_register_blocked_kernels_are_ffma_dense(tmp_path):
    """v3-v5 issue 512 FFMAs per 8-deep k-step per thread from 32 LDS.128 (16 bytes per read)."""
    for name in ("v3_regblock2d", "v4", "v5", "v9"):
        m = compile_variant(OP, OP.variant(name), arch="sm_90")
        ops = _sass_counts(m.cubin, tmp_path)
        assert ops["FFMA"] >= 512, (name, ops["FFMA"])


# ---- tensor maps ----------------------------------------------------------------------

def _spec(**kw):
    base = dict(address=0x7F0000000000, rows=4096, cols=4096, row_stride=4096, dtype="bfloat16",
                box_rows=128, box_cols=64, swizzle=128)
    base.update(kw)
    return tensormap.TensorMapSpec(**base)


def test_tensor_map_spec_accepts_gemm_boxes_including_boxes_larger_than_the_matrix():
    assert _spec().problems() == []
    assert _spec(rows=1, cols=4096, row_stride=4096).problems() == []  # M = 1: a 128-row box of 1 real row
    assert _spec(rows=4097, box_rows=256).problems() == []
    assert _spec(cols=8, row_stride=8).problems() == []  # K = 8 < the 64-wide box: zeros beyond
    assert _spec().box_bytes == 128 * 64 * 2


@pytest.mark.parametrize("kw, words", [
    (dict(address=0x7F0000000002), "16-byte aligned"),
    (dict(cols=1001, row_stride=1001), "multiple of 16"),
    (dict(box_rows=512), "outside 1..256"),
    (dict(box_cols=128), "wider than the 128-byte swizzle"),
    (dict(box_cols=4, swizzle=0), "not a multiple of 16"),
    (dict(row_stride=100, cols=4096), "rows would overlap"),
    (dict(dtype="float64"), "no tensor-map element type"),
])
def test_tensor_map_spec_problems_name_the_fix(kw, words):
    problems = _spec(**kw).problems()
    assert problems and any(words in p for p in problems), problems


def test_spec_for_reads_a_tensor_and_refuses_bad_layouts():
    t = torch.empty(200, 1000, dtype=torch.bfloat16)
    s = tensormap.spec_for(t, 128, 64)
    assert (s.rows, s.cols, s.row_stride, s.dtype) == (200, 1000, 1000, "bfloat16")
    with pytest.raises(ArgumentError, match="2-D"):
        tensormap.spec_for(t.view(-1), 128, 64)
    with pytest.raises(ArgumentError, match="contiguous rows"):
        tensormap.spec_for(t.t(), 128, 64)
    with pytest.raises(ArgumentError, match="CUDA tensor"):
        tensormap.tensor_map_2d(t, 128, 64)


KSRC = ('struct alignas(64) CUtensorMap { unsigned long long opaque[16]; };\n'
        'extern "C" __global__ void k(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb, '
        '__nv_bfloat16* c, int M, unsigned long long n, float alpha) {}')


def test_pack_args_passes_maps_by_value_and_scalars_at_their_width():
    params = parse_signatures(KSRC)["k"]
    assert [p.kind for p in params] == ["struct", "struct", "pointer", "scalar", "scalar", "scalar"]
    conv = [make_converter("k", p) for p in params]
    fake = tensormap.TensorMap(_spec(), handle="the CUtensorMap")
    values, types = tensormap.pack_args("k", params, conv, (fake, fake, DevicePointer(0x1000), 7, 2**40, 0.5))
    assert values == ("the CUtensorMap", "the CUtensorMap", 0x1000, 7, 2**40, 0.5)
    assert types == (None, None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_uint64, ctypes.c_float)
    with pytest.raises(ArgumentError, match="takes a kernelab.gpu.tensormap.TensorMap"):
        tensormap.pack_args("k", params, conv, (object(), fake, DevicePointer(0x1000), 7, 1, 0.5))
    with pytest.raises(ArgumentError, match="takes 6 arguments, got 5"):
        tensormap.pack_args("k", params, conv, (fake, fake, DevicePointer(0x1000), 7, 1))


def test_kernel_launch_refuses_a_tensor_map_and_names_the_right_launch():
    params = parse_signatures(KSRC)["k"]
    conv = make_converter("k", params[0])
    with pytest.raises(ArgumentError, match="kernelab.gpu.tensormap.launch"):
        conv(tensormap.TensorMap(_spec(), handle=None))


def test_torch_op_fake_shape():
    import kernelab.ops.gemm.torch_op  # noqa: F401  (registers kernelab::gemm)
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        a = torch.empty(5, 64, dtype=torch.bfloat16)
        b = torch.empty(7, 64, dtype=torch.bfloat16)
        c = torch.ops.kernelab.gemm(a, b)
    assert tuple(c.shape) == (5, 7) and c.dtype == torch.bfloat16


def test_tma_launchers_boxes_grid_and_cluster(monkeypatch):
    """v7/v8's host code on CPU tensors, with the GPU calls recorded instead of made."""
    calls = {}

    def fake_map(t, box_rows, box_cols, swizzle=128):
        calls.setdefault("maps", []).append((tuple(t.shape), box_rows, box_cols, swizzle))
        return tensormap.TensorMap(tensormap.spec_for(t, box_rows, box_cols, swizzle), handle=None)

    def fake_launch(kernel, grid, block, *args, shared_mem=0, cluster=None, stream=None):
        calls["launch"] = dict(grid=grid, block=block, nargs=len(args), smem=shared_mem, cluster=cluster,
                               scalars=args[3:])

    monkeypatch.setattr(tensormap, "tensor_map_2d", fake_map)
    monkeypatch.setattr(tensormap, "launch", fake_launch)
    monkeypatch.setattr(tensormap, "max_active_clusters", lambda *a, **k: 60)
    h200 = type("DeviceInfo", (), {"sm_count": 132})()
    for name, cluster in (("v7", None), ("v8", (2, 1, 1))):
        v = OP.variant(name)
        monkeypatch.setitem(v.launcher.__globals__, "device_info", lambda *a, **k: h200)  # imported by name
        if "_sms" in v.launcher.__globals__:
            monkeypatch.setitem(v.launcher.__globals__, "_sms", {})
        case = Case((4095, 4097, 1000), "bfloat16")
        inputs = OP.make_inputs(case, 0, device="cpu")
        out = {"c": torch.empty(4095, 4097, dtype=torch.bfloat16)}
        calls.clear()
        v.launcher(OP, None, v, case, inputs, out)
        b_rows = 256 if cluster is None else 128
        assert calls["maps"] == [((4095, 1000), 128, 64, 128), ((4097, 1000), b_rows, 64, 128)], calls["maps"]
        lc = calls["launch"]
        tiles = 32 * 17
        assert lc["block"] == (384,) and lc["smem"] == 197632 and lc["cluster"] == cluster
        assert lc["grid"] == (min(tiles, 132) if cluster is None else 2 * min(16 * 17, 60))
        assert lc["scalars"] == (4095, 4097, 1000)
