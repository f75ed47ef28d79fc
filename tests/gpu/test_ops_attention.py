"""The attention op on a GPU. Read failures top to bottom: each step assumes the ones above it.

 1. the float64 reference agrees with SDPA's math backend in fp32 (so the yardstick is right);
 2. v0 (three naive kernels) agrees with the reference on every test case;
 3. for v1 then v2, a ladder from one tile to everything:
    a. keys all zero (every score 0): O must be the column mean of V and LSE = log(S) - exercises
       the V loads, P V, normalisation and the O/LSE stores, whatever Q K^T does;
    b. V = identity: O[i, j] is then P[i, j] itself, so a wrong Q K^T fragment map or softmax shows
       up as wrong probabilities at known (row, key) positions;
    c. random inputs, one tile (S = 64, D = 64; S = 128, D = 128);
    d. every test case, non-causal, then causal (tails: S = 1, 17, 127, 129, 1000);
    e. a larger case (S = 2048: many tiles, many mbarrier phases);
    f. three runs on the same inputs are bitwise equal (a difference is a race);
    g. nothing is written outside O and LSE (guard bands);
 4. the known-wrong kernels fail where they should, and kernelab's checker rejects them;
 5. the checker accepts v1/v2; kernelab::attention and its torch.compile'd form match; the SDPA peers
    match (peers return O only: SDPA has no LSE).
Failure messages name the worst element (batch, head, row, column) and which 64-row blocks and
8-column groups hold bad elements: rows 0-63 / 64-127 of a 128-row block are v2's two consumer
warpgroups; a single bad 16-row band is one warp; bad columns >= 64 at D = 128 are the second
64-wide swizzle slab.
"""

from __future__ import annotations

import math

import pytest
import torch

from kernelab.ops import Case, discover, run_variant

pytestmark = pytest.mark.gpu

OP = discover()["attention"]
TOL = OP.tolerances  # {"bfloat16": (rtol, atol) for O, "float32": (rtol, atol) for LSE}
FAST = ["v1_fa2_mma", "v2_wgmma_pingpong", "v3_wgmma_tma"]


def _case(b, h, s, d, causal=False):
    return Case((b, h, s, d), "bfloat16", params=(("causal", causal),))


def _usable(variant):
    def check(case):
        why = OP.supports(OP.variant(variant), case)
        if why:  # only v2 on a GPU that is not sm_90: it cannot run there at all
            pytest.skip(f"{variant} cannot run on this GPU: {why}")
    return check


def _run(variant: str, case: Case, inputs: dict) -> dict:
    outputs = OP.make_outputs(case, inputs)
    outputs["o"].fill_(float("nan"))
    outputs["lse"].fill_(float("nan"))
    run_variant(OP, OP.variant(variant), case, inputs, outputs)
    torch.cuda.synchronize()
    return outputs


def _diagnose(what: str, got: torch.Tensor, ref: torch.Tensor, rtol: float, atol: float) -> str | None:
    """None if got matches ref within tolerance; else where and how it does not."""
    got64 = got.double()
    err = (got64 - ref).abs()
    bad = ~(err <= atol + rtol * ref.abs())  # NaN counts as bad
    if not bad.any():
        return None
    n_bad = int(bad.sum())
    err_nan = torch.where(torch.isnan(err), torch.full_like(err, float("inf")), err)
    idx = int(err_nan.flatten().argmax())
    coords = []
    for size in reversed(ref.shape):
        coords.append(idx % size)
        idx //= size
    coords = tuple(reversed(coords))
    msg = [f"{what}: {n_bad}/{bad.numel()} elements out of tolerance (rtol={rtol}, atol={atol}); "
           f"worst at (b, h, row{', col' if got.dim() == 4 else ''}) = {coords}: got {got64[coords].item():.6g}, "
           f"expected {ref[coords].item():.6g}; NaNs: {int(torch.isnan(got64).sum())}"]
    rows_bad = bad.reshape(-1, *bad.shape[2:]).any(dim=0)
    if rows_bad.dim() == 2:
        cols = rows_bad.any(dim=0).nonzero().flatten()
        msg.append(f"bad 8-column groups: {sorted({int(c) // 8 for c in cols})}")
        rows_bad = rows_bad.any(dim=1)
    rows = rows_bad.nonzero().flatten()
    msg.append(f"bad 64-row blocks: {sorted({int(r) // 64 for r in rows})}; bad 16-row bands (first 8): "
               f"{sorted({int(r) // 16 for r in rows})[:8]}; S = {ref.shape[2]}")
    return "\n  ".join(msg)


def _compare(case, got, ref, name=""):
    problems = [p for p in (_diagnose(f"{name} O", got["o"], ref["o"], *TOL["bfloat16"]),
                            _diagnose(f"{name} LSE", got["lse"], ref["lse"], *TOL["float32"])) if p]
    assert not problems, f"{case.label}:\n" + "\n".join(problems)


def _inputs(case, seed=0):
    return OP.make_inputs(case, seed, "cuda")


# ---- 1. the yardstick ----------------------------------------------------------------------

@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_reference_matches_sdpa_math_backend_in_fp32(d, causal):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    case = _case(2, 3, 129, d, causal)
    inputs = _inputs(case)
    ref = OP.reference(case, inputs)
    with sdpa_kernel(SDPBackend.MATH):
        o = torch.nn.functional.scaled_dot_product_attention(*(inputs[x].float() for x in "qkv"), is_causal=causal)
    assert (o.double() - ref["o"]).abs().max().item() < 1e-5


# ---- 2. v0 -----------------------------------------------------------------------------------

@pytest.mark.parametrize("case", OP.test_cases(), ids=lambda c: c.label)
def test_v0_matches_reference(case):
    inputs = _inputs(case)
    _compare(case, _run("v0_naive", case, inputs), OP.reference(case, inputs), "v0")


# ---- 3. v1 and v2, one step at a time ------------------------------------------------------------

@pytest.mark.parametrize("variant", FAST)
@pytest.mark.parametrize("d", [64, 128])
def test_a_zero_keys_give_the_mean_of_v(variant, d):
    case = _case(1, 2, 64 if d == 64 else 128, d)
    _usable(variant)(case)
    inputs = _inputs(case)
    inputs["k"].zero_()
    got = _run(variant, case, inputs)
    s = case.shape[2]
    ref = {"o": inputs["v"].double().mean(dim=2, keepdim=True).expand_as(inputs["v"]),
           "lse": torch.full(case.shape[:3], math.log(s), dtype=torch.float64, device="cuda")}
    _compare(case, got, ref, f"{variant} (K = 0)")


@pytest.mark.parametrize("variant", FAST)
@pytest.mark.parametrize("d", [64, 128])
def test_b_identity_values_expose_the_probabilities(variant, d):
    s = d  # V = I_d: O[i, j] = P[i, j] for every key j
    case = _case(1, 2, s, d)
    _usable(variant)(case)
    inputs = _inputs(case)
    inputs["v"].copy_(torch.eye(s, d, dtype=torch.bfloat16, device="cuda").expand(1, 2, s, d))
    got = _run(variant, case, inputs)
    _compare(case, got, OP.reference(case, inputs), f"{variant} (V = I, O = P)")


@pytest.mark.parametrize("variant", FAST)
@pytest.mark.parametrize("s,d", [(64, 64), (128, 128)])
def test_c_random_single_tile(variant, s, d):
    case = _case(1, 2, s, d)
    _usable(variant)(case)
    inputs = _inputs(case, seed=1)
    _compare(case, _run(variant, case, inputs), OP.reference(case, inputs), variant)


@pytest.mark.parametrize("variant", FAST)
@pytest.mark.parametrize("case", [c for c in OP.test_cases() if not c.param("causal")], ids=lambda c: c.label)
def test_d1_every_non_causal_case(variant, case):
    _usable(variant)(case)
    for seed, dist in ((0, "normal"), (1, "uniform")):
        inputs = OP.make_inputs(case, seed, "cuda", dist)
        _compare(case, _run(variant, case, inputs), OP.reference(case, inputs), f"{variant} ({dist})")


@pytest.mark.parametrize("variant", FAST)
@pytest.mark.parametrize("case", [c for c in OP.test_cases() if c.param("causal")], ids=lambda c: c.label)
def test_d2_every_causal_case(variant, case):
    _usable(variant)(case)
    for seed, dist in ((0, "normal"), (1, "uniform")):
        inputs = OP.make_inputs(case, seed, "cuda", dist)
        _compare(case, _run(variant, case, inputs), OP.reference(case, inputs), f"{variant} ({dist})")


@pytest.mark.parametrize("variant", FAST)
@pytest.mark.parametrize("causal", [False, True])
def test_e_larger_case(variant, causal):
    case = _case(1, 4, 2048, 128, causal)
    _usable(variant)(case)
    inputs = _inputs(case, seed=2)
    _compare(case, _run(variant, case, inputs), OP.reference(case, inputs), variant)


@pytest.mark.parametrize("variant", FAST)
def test_f_repeated_runs_are_bitwise_equal(variant):
    case = _case(2, 3, 1000, 128, True)
    _usable(variant)(case)
    inputs = _inputs(case, seed=3)
    first = _run(variant, case, inputs)
    for _ in range(2):
        again = _run(variant, case, inputs)
        assert torch.equal(first["o"], again["o"]) and torch.equal(first["lse"], again["lse"]), \
            f"{variant}: two runs on the same inputs differ - a race (missing barrier or phase)"


@pytest.mark.parametrize("variant", FAST)
def test_g_nothing_written_outside_the_outputs(variant):
    case = _case(1, 3, 129, 64, True)
    _usable(variant)(case)
    inputs = _inputs(case)
    guard = 64  # elements on each side (128 / 256 bytes: the views stay 16-byte aligned)
    o_buf = torch.full((guard * 2 + 3 * 129 * 64,), 7.0, dtype=torch.bfloat16, device="cuda")
    l_buf = torch.full((guard * 2 + 3 * 129,), 7.0, dtype=torch.float32, device="cuda")
    outputs = {"o": o_buf[guard:guard + 3 * 129 * 64].view(1, 3, 129, 64),
               "lse": l_buf[guard:guard + 3 * 129].view(1, 3, 129)}
    run_variant(OP, OP.variant(variant), case, inputs, outputs)
    torch.cuda.synchronize()
    for buf in (o_buf, l_buf):
        assert (buf[:guard] == 7).all() and (buf[-guard:] == 7).all(), f"{variant} wrote outside its outputs"
    _compare(case, outputs, OP.reference(case, inputs), variant)


# ---- 4. the known-wrong kernels ------------------------------------------------------------------

def test_w1_is_right_without_causal_and_wrong_with_it():
    plain, causal = _case(1, 2, 129, 64, False), _case(1, 2, 129, 64, True)
    inputs = _inputs(plain)
    _compare(plain, _run("w1_causal_off_by_one", plain, inputs), OP.reference(plain, inputs), "w1 non-causal")
    got, ref = _run("w1_causal_off_by_one", causal, inputs), OP.reference(causal, inputs)
    assert _diagnose("w1 O", got["o"], ref["o"], *TOL["bfloat16"]), "the off-by-one causal mask went unnoticed"


def test_w2_has_the_right_o_and_a_wrong_lse():
    case = _case(1, 2, 129, 128, False)
    inputs = _inputs(case)
    got, ref = _run("w2_lse_log2", case, inputs), OP.reference(case, inputs)
    assert _diagnose("w2 O", got["o"], ref["o"], *TOL["bfloat16"]) is None
    assert _diagnose("w2 LSE", got["lse"], ref["lse"], *TOL["float32"]), "a base-2 LSE went unnoticed"


@pytest.mark.parametrize("variant", [v.name for v in OP.wrong_variants()])
def test_checker_rejects_known_wrong_kernels(variant):
    from kernelab.check import check_variant

    v = OP.variant(variant)
    case = _case(1, 2, 129, 64, True)
    r = check_variant(OP, v, case, seeds=(0, 1))
    assert not r.ok and r.reason == v.meta["expect"], f"{variant}: {r.reason} {r.detail}"


# ---- 5. the checker, the torch operator and the peers ----------------------------------------------

@pytest.mark.parametrize("variant", FAST)
@pytest.mark.parametrize("causal", [False, True])
def test_checker_accepts(variant, causal):
    from kernelab.check import check_variant

    case = _case(2, 3, 129, 128, causal)
    _usable(variant)(case)
    r = check_variant(OP, OP.variant(variant), case, seeds=(0, 1, 2))
    assert r.ok, f"{variant} {case.label}: {r.reason} {r.detail}"


@pytest.mark.parametrize("causal", [False, True])
def test_torch_op_eager_and_compiled(causal):
    import kernelab.ops.attention.torch_op  # noqa: F401

    case = _case(2, 3, 257, 128, causal)
    inputs = _inputs(case)
    ref = OP.reference(case, inputs)
    o, lse = torch.ops.kernelab.attention(inputs["q"], inputs["k"], inputs["v"], causal)
    _compare(case, {"o": o, "lse": lse}, ref, "kernelab::attention")

    @torch.compile(fullgraph=True)
    def f(q, k, v):
        o, lse = torch.ops.kernelab.attention(q, k, v, causal)
        return o * 2, lse

    o2, lse2 = f(inputs["q"], inputs["k"], inputs["v"])
    assert torch.equal(o2, o * 2) and torch.equal(lse2, lse)
    # A [B, S, H, D] tensor viewed as [B, H, S, D] is not contiguous: the operator copies it.
    q_t = inputs["q"].transpose(1, 2).contiguous().transpose(1, 2)
    o3, _ = torch.ops.kernelab.attention(q_t, inputs["k"], inputs["v"], causal)
    assert torch.equal(o3, o)


def test_peers_match_the_reference_or_say_why_they_cannot_run():
    from kernelab.ops.attention.op import PeerUnavailable

    case = _case(2, 3, 257, 128, True)
    inputs = _inputs(case)
    ref = OP.reference(case, inputs)
    peers = OP.peers(case)
    assert list(peers) == ["sdpa", "sdpa[flash]", "sdpa[cudnn]", "sdpa[efficient]"]
    ran = []
    for name, fn in peers.items():
        try:
            got = fn(inputs)
        except PeerUnavailable as e:
            assert OP.skipped_peers[case.label][name] and name in str(e)
            continue
        assert set(got) == {"o"}  # SDPA has no LSE output
        problem = _diagnose(f"{name} O", got["o"], ref["o"], *TOL["bfloat16"])
        assert problem is None, problem
        ran.append(name)
    assert "sdpa" in ran and "sdpa[flash]" in ran, f"only {ran} ran on this GPU"


# ---- v3's persistent walk --------------------------------------------------------------------
@pytest.mark.parametrize("d", [64, 128])
def test_h_v3_blocks_walk_many_tiles_with_a_tail(d):
    """Non-causal v3 runs one block per SM, each walking several 128-row tiles: its K/V ring, Q's
    empty/full phases and the consumers' turns run on from tile to tile. S = 300 leaves a
    44-row tail in every head, and B x H = 160 gives 480 tiles, 3-4 per block on 132 SMs (the
    other cases here have fewer tiles than SMs, so one tile per block)."""
    case = _case(2, 80, 300, d)
    _usable("v3_wgmma_tma")(case)
    inputs = _inputs(case, seed=5)
    _compare(case, _run("v3_wgmma_tma", case, inputs), OP.reference(case, inputs), "v3")
