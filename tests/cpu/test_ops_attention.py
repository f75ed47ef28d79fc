"""The attention op without a GPU: discovery and headers, the op contract (cases, work model,
reference, input validation), every kernel compiled for its archs with no spills, the SASS each
variant must (HGMMA in v2, HMMA in v1) and must not (LDL/STL anywhere) contain, and the torch
operator's schema and fake implementation."""

from __future__ import annotations

import math
import re
import subprocess

import pytest
import torch

from kernelab.gpu import CI_ARCHS, toolchain
from kernelab.ops import Case, compile_variant, discover

OP = discover()["attention"]
SMEM_OPTIN_H100 = 227 * 1024  # the most one block may ask for on sm_90


def _case(b, h, s, d, causal=False):
    return Case((b, h, s, d), "bfloat16", params=(("causal", causal),))


# ---- discovery and headers -------------------------------------------------------------------

def test_variants_and_known_wrong_kernels_are_discovered():
    assert [v.name for v in OP.variants()] == ["v0_naive", "v1_fa2_mma", "v2_wgmma_pingpong", "v3_wgmma_tma"]
    wrong = OP.wrong_variants()
    assert [w.name for w in wrong] == ["w1_causal_off_by_one", "w2_lse_log2"]
    for w in wrong:
        assert w.meta.get("expect") == "mismatch", f"{w.name}: wrong/ kernels say what the checker must report"
    assert OP.variant(OP.best_variant).name == "v3_wgmma_tma"
    assert OP.variant(OP.fallback_variant).name == "v1_fa2_mma"


@pytest.mark.parametrize("name", ["v0_naive", "v1_fa2_mma", "v2_wgmma_pingpong", "v3_wgmma_tma"])
def test_variant_headers_say_what_why_predicted_and_where_measured(name):
    v = OP.variant(name)
    assert v.summary.startswith(name + ":"), v.summary
    assert "Predicted:" in v.header and "Measured: BENCHMARKS.md" in v.header
    for key in ("block", "block_m"):
        assert v.meta_int(key) > 0
    if name != "v0_naive":  # v0 launches its three kernels from v0_naive.py
        for d in (64, 128):
            assert 0 < v.meta_int(f"smem_d{d}") <= SMEM_OPTIN_H100, f"{name} @smem_d{d}"
    else:
        assert v.launcher is not None and v.meta.get("workspace") == "scores_fp32"


def test_v2_header_names_arch_and_load_path():
    v = OP.variant("v2")
    assert v.min_arch == "sm_90a"
    assert "cp.async" in v.header and "TMA" in v.header  # which loads, and why not the other


def test_v1_smem_header_matches_its_tiles():
    # v1: Q [128][D] + 3 stages of K [32][D] and V [32][D], bf16 (the kernel traps if given less).
    v = OP.variant("v1")
    for d in (64, 128):
        assert v.meta_int(f"smem_d{d}") == (128 + 2 * 3 * 32) * d * 2


# ---- the op contract -----------------------------------------------------------------------

def test_test_cases_cover_tails_head_dims_and_causal():
    cases = OP.test_cases()
    seen = {(c.shape[2], c.shape[3], c.param("causal")) for c in cases}
    for s in (1, 17, 64, 127, 128, 129, 1000):
        for d in (64, 128):
            for causal in (False, True):
                assert (s, d, causal) in seen
    assert all(c.dtype == "bfloat16" and c.shape[0] * c.shape[1] <= 6 for c in cases)
    assert any(c.shape[0] > 1 and c.shape[1] > 1 for c in cases), "batch and head strides need a case"
    # Non-causal before causal for each head dim: the GPU tests read failures in this order.
    first_causal = next(i for i, c in enumerate(cases) if c.param("causal"))
    assert not any(c.param("causal") for c in cases[:first_causal])


def test_bench_and_quick_cases_include_the_anchor_rows():
    bench = OP.bench_cases()
    labels = {c.label for c in bench}
    for causal in (False, True):
        assert _case(4, 32, 4096, 128, causal).label in labels
        assert _case(4, 32, 4096, 64, causal).label in labels
    seqlens = sorted({c.shape[2] for c in bench})
    assert seqlens[0] == 1024 and seqlens[-1] == 16384
    tokens = {c.shape[0] * c.shape[1] * c.shape[2] for c in bench}
    assert tokens == {4 * 32 * 4096}, "B*H*S is held fixed so only the S^2 work grows"
    quick = OP.quick_cases()
    assert [c.label for c in quick] == [_case(4, 32, 4096, 128, False).label, _case(4, 32, 4096, 128, True).label]


def test_work_model():
    w = OP.work(_case(4, 32, 4096, 128))
    assert w.flops == 4 * 4 * 32 * 4096 * 4096 * 128 and w.flop_unit == "bf16"
    assert w.bytes == 4 * (4 * 32 * 4096 * 128 * 2) + 4 * 32 * 4096 * 4
    assert OP.work(_case(4, 32, 4096, 128, True)).flops == w.flops // 2
    # The ANCHORS row: 1769 us for the non-causal case is 622 TFLOP/s.
    assert w.flops / 1769e-6 / 1e12 == pytest.approx(622, rel=0.01)


@pytest.mark.parametrize("b,h,s,d,causal", [(1, 2, 1, 64, False), (2, 3, 17, 64, True), (1, 2, 129, 128, False),
                                            (1, 1, 200, 128, True)])
def test_reference_matches_sdpa_math_and_logsumexp(b, h, s, d, causal):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    case = _case(b, h, s, d, causal)
    inputs = OP.make_inputs(case, 3, "cpu")
    ref = OP.reference(case, inputs)
    assert ref["o"].dtype == torch.float64 and ref["lse"].shape == (b, h, s)
    q, k, v = (inputs[x].double() for x in "qkv")
    with sdpa_kernel(SDPBackend.MATH):
        o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.testing.assert_close(ref["o"], o, rtol=1e-10, atol=1e-10)
    scores = q @ k.transpose(-1, -2) / math.sqrt(d)
    if causal:
        scores = scores.masked_fill(torch.ones(s, s, dtype=torch.bool).triu(1), float("-inf"))
    torch.testing.assert_close(ref["lse"], torch.logsumexp(scores, dim=-1), rtol=1e-12, atol=1e-12)


def test_reference_chunking_does_not_change_the_answer():
    from kernelab.ops.attention.op import reference_attention

    case = _case(2, 2, 70, 64, True)
    inputs = OP.make_inputs(case, 5, "cpu")
    whole = reference_attention(inputs["q"], inputs["k"], inputs["v"], True, 0.125)
    tiny = reference_attention(inputs["q"], inputs["k"], inputs["v"], True, 0.125, budget=7 * 70)
    torch.testing.assert_close(whole["o"], tiny["o"], rtol=0, atol=1e-14)
    torch.testing.assert_close(whole["lse"], tiny["lse"], rtol=0, atol=1e-14)


def test_inputs_and_outputs_have_the_declared_layout():
    case = _case(2, 3, 17, 128, True)
    inputs = OP.make_inputs(case, 0, "cpu")
    outputs = OP.make_outputs(case, inputs)
    assert all(inputs[x].shape == (2, 3, 17, 128) and inputs[x].dtype == torch.bfloat16 for x in "qkv")
    assert not torch.equal(inputs["q"], inputs["k"]), "q, k, v are drawn from different seeds"
    assert outputs["o"].shape == (2, 3, 17, 128) and outputs["lse"].dtype == torch.float32
    with pytest.raises(ValueError, match="contiguous"):
        OP.make_inputs(Case((1, 1, 8, 64), "bfloat16", layout="transposed"), 0, "cpu")


def test_validate_tensors_names_the_problem_and_the_fix():
    from kernelab.ops.attention.op import validate_tensors

    case = _case(1, 2, 16, 64)
    inputs = OP.make_inputs(case, 0, "cpu")
    outputs = OP.make_outputs(case, inputs)
    assert len(validate_tensors(case, inputs, outputs)) == 5
    with pytest.raises(ValueError, match="shape"):
        validate_tensors(case, {**inputs, "k": inputs["k"][:, :, :8]}, outputs)
    with pytest.raises(TypeError, match="bfloat16"):
        validate_tensors(case, {**inputs, "v": inputs["v"].float()}, outputs)
    with pytest.raises(ValueError, match="contiguous"):
        validate_tensors(case, {**inputs, "q": inputs["q"].transpose(2, 3).contiguous().transpose(2, 3)}, outputs)
    misaligned = torch.empty(1 * 2 * 16 * 64 + 1, dtype=torch.bfloat16)[1:].view(1, 2, 16, 64)
    with pytest.raises(ValueError, match="16"):
        validate_tensors(case, {**inputs, "q": misaligned}, outputs)
    with pytest.raises(ValueError, match="head dim"):
        validate_tensors(_case(1, 1, 8, 96), inputs, outputs)


def test_supports_refuses_huge_workspaces_and_other_head_dims():
    v0, v1 = OP.variant("v0"), OP.variant("v1")
    assert OP.supports(v0, _case(16, 32, 1024, 128)) is None  # 2 GiB of scores: the limit
    why = OP.supports(v0, _case(4, 32, 4096, 128))  # 8 GiB: refused
    assert why and "8 GiB" in why
    assert OP.supports(v1, _case(1, 32, 16384, 128)) is None
    assert "head dim" in OP.supports(v1, _case(1, 1, 64, 96))


def test_peers_are_the_sdpa_backends_with_stable_names():
    # The suite lists peers in one process and runs them in another: names may not depend on the machine.
    assert list(OP.peers(_case(1, 2, 64, 64)).keys()) == ["sdpa", "sdpa[flash]", "sdpa[cudnn]", "sdpa[efficient]"]


def test_unavailable_backend_raises_peer_unavailable_with_the_reason():
    from kernelab.ops.attention.op import PeerUnavailable

    case = _case(1, 2, 16, 64)
    inputs = OP.make_inputs(case, 0, "cpu")  # bf16 on the CPU: cuDNN cannot run it
    with pytest.raises(PeerUnavailable, match=r"sdpa\[cudnn\]"):
        OP.peers(case)["sdpa[cudnn]"](inputs)
    assert OP.skipped_peers[case.label]["sdpa[cudnn]"]


def test_peer_returns_o_only_and_matches_reference_on_cpu():
    case = _case(1, 2, 33, 64, True)
    inputs = {k: t.float() for k, t in OP.make_inputs(case, 1, "cpu").items()}
    got = OP.peers(case)["sdpa"](inputs)
    assert set(got) == {"o"}  # SDPA has no LSE output: the checker compares O only for peers
    torch.testing.assert_close(got["o"].double(), OP.reference(case, inputs)["o"], rtol=1e-5, atol=1e-5)


# ---- compiled code ---------------------------------------------------------------------------

def _builds():
    for v in OP.variants(include_wrong=True):
        for arch in ([v.min_arch] if v.min_arch else list(CI_ARCHS)):
            yield v, arch


@pytest.mark.parametrize("variant,arch", [(v.name, a) for v, a in _builds()])
def test_compiles_without_spills_or_stack(variant, arch):
    v = OP.variant(variant)
    m = compile_variant(OP, v, arch=arch)
    assert "attention_bf16" in m.resources
    for name, r in m.resources.items():
        assert r.spills == 0 and r.stack_frame == 0, f"{variant} {name} [{arch}]: {r}"
        assert r.registers <= 255
    if variant.startswith(("v2", "v3")):
        # __launch_bounds__(384, 1): 65536 / 384 -> 168 at entry; setmaxnreg moves them to the consumers.
        assert m.resources["attention_bf16"].registers <= 168
        assert "C7508" not in m.log and "C7510" not in m.log, m.log  # setmaxnreg ignored / wgmma serialised
    if variant.startswith("v0"):
        assert {"attention_softmax_f32", "attention_pv_bf16"} <= set(m.resources)


def _sass_counts(variant: str, arch: str) -> dict[str, dict[str, int]]:
    import tempfile

    tool = toolchain.cuobjdump_path()
    assert tool, "cuobjdump not found (pip install nvidia-cuda-cuobjdump, or triton brings one)"
    m = compile_variant(OP, OP.variant(variant), arch=arch)
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(m.cubin)
        f.flush()
        text = subprocess.run([tool, "-sass", f.name], capture_output=True, text=True, check=True).stdout
    counts: dict[str, dict[str, int]] = {}
    current = None
    for line in text.splitlines():
        fn = re.match(r"\s*Function\s*:\s*(\S+)", line)
        if fn:
            current = counts.setdefault(fn[1], {})
            continue
        ins = re.match(r"\s*/\*[0-9a-fA-F]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
        if ins and current is not None:
            current[ins[1]] = current.get(ins[1], 0) + 1
    assert counts, f"no SASS functions in {variant} [{arch}]"
    return counts


@pytest.mark.parametrize("variant,arch", [(v.name, a) for v, a in _builds() if a in ("sm_90", "sm_90a", "sm_80")])
def test_no_local_memory_in_sass(variant, arch):
    for fn, c in _sass_counts(variant, arch).items():
        assert c.get("LDL", 0) == 0 and c.get("STL", 0) == 0, f"{variant} {fn} [{arch}] uses local memory: {c}"


def test_v2_sass_is_hgmma_with_mbarriers_and_setmaxnreg():
    c = _sass_counts("v2_wgmma_pingpong", "sm_90a")["attention_bf16"]
    # D = 128: S (8 k-steps) twice + P V (8 k-steps) twice; D = 64: S (4) twice + P V (8) twice.
    assert c.get("HGMMA", 0) == 56, c
    assert c.get("HMMA", 0) == 0
    assert c.get("LDGSTS", 0) > 0 and c.get("SYNCS", 0) > 0 and c.get("USETMAXREG", 0) >= 2
    assert c.get("LDSM", 0) == 0, "wgmma reads Q, K and V from shared memory itself"


def test_v3_sass_is_hgmma_fed_by_tma_with_no_cp_async():
    c = _sass_counts("v3_wgmma_tma", "sm_90a")["attention_bf16"]
    assert c.get("HGMMA", 0) == 56, c  # the consumers are v2's
    assert c.get("UTMALDG", 0) > 0 and c.get("LDGSTS", 0) == 0, c
    assert c.get("USETMAXREG", 0) >= 2 and c.get("LDSM", 0) == 0


def test_v3_launch_builds_per_head_tensor_maps_and_a_persistent_grid(monkeypatch):
    from kernelab.gpu import tensormap
    from kernelab.ops.attention import v3_wgmma_tma as host

    calls = {}
    monkeypatch.setattr(host, "_sm_count", lambda index: 132)
    monkeypatch.setattr(tensormap, "tensor_map_3d", lambda t, box_rows, box_cols: ("map", tuple(t.shape), box_rows, box_cols))
    monkeypatch.setattr(tensormap, "launch", lambda kernel, grid, block, *args, shared_mem: calls.update(
        grid=grid, block=block, args=args, smem=shared_mem))
    monkeypatch.setattr(host, "validate_tensors", lambda case, i, o: [i["q"], i["k"], i["v"], o["o"], o["lse"]])

    class T:  # shape-only stand-in: the launch never touches data
        def __init__(self, *shape):
            self.shape = shape
            self.device = type("D", (), {"index": 0})()

    case = _case(4, 32, 4096, 128, causal=True)
    ins = {n: T(4, 32, 4096, 128) for n in "qkv"}
    outs = {"o": T(4, 32, 4096, 128), "lse": T(4, 32, 4096)}
    host.launch_v3("kern", 164992, 176, True, case, ins, outs)
    assert calls["grid"] == 32 * 128, "causal: one block per tile, the hardware balances them"
    host.launch_v3("kern", 164992, 176, True, _case(4, 32, 4096, 128), ins, outs)
    assert calls["grid"] == 132 and calls["block"] == 384 and calls["smem"] == 164992
    tq, tk, tv = calls["args"][:3]
    assert tq[2:] == (128, 64) and tk[2:] == (176, 64) and tv[2:] == (176, 64)
    assert calls["args"][5:] == (4096, 128, 0, pytest.approx(128 ** -0.5), 128)  # S, D, causal, scale, B*H
    host.launch_v3("kern", 164992, 128, False, _case(1, 2, 300, 64), ins, outs)
    assert calls["grid"] == 3 * 2  # one block per 128-row tile


def _spec3(**kw):
    from kernelab.gpu import tensormap

    base = dict(address=0x7F0000000000, rows=4096, cols=128, row_stride=128, dtype="bfloat16", box_rows=128,
                box_cols=64, swizzle=128, planes=128, plane_stride=4096 * 128)
    base.update(kw)
    return tensormap.TensorMapSpec(**base)


def test_three_d_tensor_map_specs_check_the_plane_stride():
    assert _spec3().problems() == [] and _spec3().rank == 3 and _spec3(planes=0).rank == 2
    assert any("planes would overlap" in p for p in _spec3(plane_stride=4095 * 128).problems())
    assert any("multiple of 16" in p for p in _spec3(plane_stride=4096 * 128 + 1).problems())
    assert _spec3(rows=17, plane_stride=17 * 128).problems() == []  # S = 17: a 128-row box, zeros past row 17


def test_tensor_map_3d_refuses_what_it_cannot_describe():
    from kernelab.gpu import ArgumentError, tensormap

    with pytest.raises(ArgumentError, match="CUDA tensor"):
        tensormap.tensor_map_3d(torch.empty(2, 3, 17, 64, dtype=torch.bfloat16), 128, 64)


def test_v1_sass_is_mma_sync_with_ldmatrix_and_cp_async():
    c = _sass_counts("v1_fa2_mma", "sm_90")["attention_bf16"]
    # D = 128: (8 k-steps x 8 n-blocks) for S + (4 k-steps x 16 d-blocks) for P V = 128; D = 64: 64.
    assert c.get("HMMA", 0) == 192, c
    assert c.get("HGMMA", 0) == 0
    # per 32-key tile and warp (32 rows): Q 16+8 (re-read from shared memory), K 16+8, V 16+8 ldmatrix.x4
    assert c.get("LDSM", 0) == 72 and c.get("LDGSTS", 0) > 0


# ---- the torch operator ----------------------------------------------------------------------

def test_torch_op_schema_and_fake_shapes():
    import kernelab.ops.attention.torch_op  # noqa: F401  (registers kernelab::attention)
    from torch._subclasses.fake_tensor import FakeTensorMode

    schema = str(torch.ops.kernelab.attention.default._schema)
    assert schema == "kernelab::attention(Tensor q, Tensor k, Tensor v, bool causal=False) -> (Tensor, Tensor)"
    with FakeTensorMode():
        q = torch.empty(2, 3, 17, 128, dtype=torch.bfloat16, device="cuda")
        o, lse = torch.ops.kernelab.attention(q, q, q, True)
        assert o.shape == q.shape and o.dtype == torch.bfloat16
        assert lse.shape == (2, 3, 17) and lse.dtype == torch.float32


def test_torch_op_rejects_bad_inputs_before_touching_a_gpu():
    import kernelab.ops.attention.torch_op  # noqa: F401

    q = torch.empty(1, 2, 8, 64, dtype=torch.bfloat16)
    with pytest.raises(TypeError, match="bfloat16"):
        torch.ops.kernelab.attention(q.float(), q.float(), q.float())
    with pytest.raises(ValueError, match="one shape"):
        torch.ops.kernelab.attention(q, q[:, :, :4], q)
    with pytest.raises(ValueError, match="head dim"):
        x = torch.empty(1, 2, 8, 96, dtype=torch.bfloat16)
        torch.ops.kernelab.attention(x, x, x)
