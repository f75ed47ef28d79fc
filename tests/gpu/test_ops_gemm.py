"""gemm on a GPU, ordered so that the first failure localises the bug.

Read the results in file order:
  1. TMA alone (test_tma_*): descriptor encoding, the by-value launch path, one box into shared
     memory and back, out-of-bounds zero fill, the 128-byte swizzle. If these fail, v7 cannot
     work and the fault is in kernelab.gpu.tensormap or the driver, not in the GEMM.
  2. fp32 v0-v5 on every test case (plain CUDA; float64 reference; guard bands).
  3. wrong/ kernels: each must fail the same check.
  4./5. Tensor cores, one ladder; each rung runs v6 (mma.sync), v7 (wgmma + TMA), v8 (v7 in
     2-block clusters with TMA multicast) in turn: identity B (A path: fragment layouts and
     swizzle, exact), identity A (the B path), one k-block, a k-loop wrapping the stage ring,
     many tiles per persistent block, every test case (tails, M = 1/16, 4095x4097x1000), and a
     CUDA-graph replay (the tensor maps travel by value). The first rung a variant fails names
     the part to read. A v8-only failure points at the cluster parts (multicast, remote arrives,
     the producer tail); its one-tile tests run a pair whose second block has no rows.
  6. The torch operator, eager and under torch.compile.
"""

from __future__ import annotations

import pytest
import torch

from kernelab.gpu import load, synchronize, tensormap
from kernelab.ops import Case, discover, run_variant

pytestmark = pytest.mark.gpu

OP = discover()["gemm"]
TC = ["v6_mma_sync", "v7_wgmma_tma", "v8_cluster_multicast"]  # tensor-core variants, in reading order
GUARD = 256  # elements of sentinel before and after C (1 KB in fp32: keeps C 16-byte aligned)
SENTINEL = 12288.0  # exact in fp32 and bf16 (1.5 * 2^13)


# ---- helpers --------------------------------------------------------------------------

def _variant_or_skip(name: str, case: Case):
    v = OP.variant(name)
    why = OP.supports(v, case)
    if why is not None:
        pytest.skip(why)
    return v


def _run(v, case, inputs):
    """Launch v; C is poisoned with NaN and framed by sentinel guard bands."""
    m, n, _ = case.shape
    dt = inputs["a"].dtype
    buf = torch.full((GUARD + m * n + GUARD,), SENTINEL, dtype=dt, device="cuda")
    c = buf[GUARD:GUARD + m * n].view(m, n)
    c.fill_(float("nan"))
    run_variant(OP, v, case, inputs, {"c": c})
    synchronize()
    head, tail = buf[:GUARD], buf[GUARD + m * n:]
    assert bool((head == SENTINEL).all()) and bool((tail == SENTINEL).all()), \
        f"{v.name} {case.label}: wrote outside C (guard bands changed)"
    return c


def _explain(got, ref, bad, src=None, src_name="A") -> str:
    """Where the wrong elements are, what they hold, and (given the operand an exact test copies
    into C) where in that operand the wrong value sits: a misplaced fragment or swizzle shows as
    C[m, n] = A[m', n'] with a pattern in (m', n')."""
    idx = bad.nonzero()
    rows, cols = idx[:, 0].unique(), idx[:, 1].unique()
    lines = [f"{len(idx)} of {bad.numel()} wrong; rows {rows.min().item()}..{rows.max().item()} ({len(rows)} distinct), "
             f"cols {cols.min().item()}..{cols.max().item()} ({len(cols)} distinct); NaN (unwritten): "
             f"{int(torch.isnan(got).sum().item())}"]
    for m, n in idx[:6].tolist():
        g, r = got[m, n].item(), ref[m, n].item()
        where = ""
        if src is not None and g == g:
            hits = (src.float() == g).nonzero()
            if 0 < len(hits) <= 4:
                where = f" = {src_name}" + f", {src_name}".join(f"[{i},{j}]" for i, j in hits.tolist())
        lines.append(f"  C[{m},{n}] = {g:.6g}{where}, expected {r:.6g}")
    return "\n".join(lines)


def _check(v, case, inputs, c):
    ref = OP.reference(case, inputs)["c"].double()
    rtol, atol = OP.tolerance(case)
    got = c.double()
    bad = ~((got - ref).abs() <= atol + rtol * ref.abs())  # NaN counts as bad
    assert not bool(bad.any()), f"{v.name} {case.label} (rtol {rtol:.2e}, atol {atol:.2e}):\n" + _explain(got, ref, bad)


def _check_case(name, case, seed=0):
    v = _variant_or_skip(name, case)
    inputs = OP.make_inputs(case, seed, "cuda")
    _check(v, case, inputs, _run(v, case, inputs))


# ---- 1. TMA alone ---------------------------------------------------------------------

TMA_COPY = r"""
typedef unsigned int u32;
typedef unsigned long long u64;
struct alignas(64) CUtensorMap { u64 opaque[16]; };

// Loads one box at (c0 = column, c1 = row) into a 1024-byte-aligned shared tile through TMA,
// waits on an mbarrier, and copies the tile's bytes out in shared-memory order.
extern "C" __global__ void tma_copy(const __grid_constant__ CUtensorMap tmap, unsigned short* out,
                                    int c0, int c1, int box_bytes) {
  extern __shared__ unsigned char raw[];
  __shared__ __align__(8) u64 bar;
  const u32 raw_addr = (u32)__cvta_generic_to_shared(raw);
  const u32 tile = (raw_addr + 1023u) & ~1023u;
  const u32 b = (u32)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" :: "r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(b), "r"(box_bytes) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
                 :: "r"(tile), "l"(reinterpret_cast<u64>(&tmap)), "r"(c0), "r"(c1), "r"(b) : "memory");
  }
  u32 done = 0;
  while (!done) {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(b) : "memory");
  }
  const unsigned short* s = reinterpret_cast<const unsigned short*>(raw + (tile - raw_addr));
  for (int i = threadIdx.x; i < box_bytes / 2; i += blockDim.x) out[i] = s[i];
}
"""


def _tma_copy(t, box_rows, box_cols, swizzle, c0, c1):
    k = load(TMA_COPY).kernel("tma_copy")
    tm = tensormap.tensor_map_2d(t, box_rows, box_cols, swizzle)
    out = torch.full((box_rows * box_cols,), -1, dtype=torch.int16, device="cuda")
    tensormap.launch(k, 1, 128, tm, out, c0, c1, tm.box_bytes, shared_mem=tm.box_bytes + 1024)
    synchronize()
    return out.view(box_rows, box_cols)


def _window(t16, r0, c0, rows, cols):
    """t16[r0:r0+rows, c0:c0+cols] with zeros where the window leaves the matrix (TMA's OOB fill)."""
    w = torch.zeros(rows, cols, dtype=torch.int16, device=t16.device)
    r1, c1 = min(r0 + rows, t16.shape[0]), min(c0 + cols, t16.shape[1])
    w[: r1 - r0, : c1 - c0] = t16[r0:r1, c0:c1]
    return w


def test_tma_descriptor_encodes_gemm_boxes():
    """cuTensorMapEncodeTiled accepts v7's boxes, including boxes larger than the matrix."""
    for rows, cols, br in ((4096, 4096, 128), (4096, 4096, 256), (1, 4096, 128), (16, 8, 128), (4095, 1000, 256)):
        t = torch.empty(rows, cols, dtype=torch.bfloat16, device="cuda")
        tm = tensormap.tensor_map_2d(t, br, 64, 128)
        assert tm.box_bytes == br * 64 * 2


def test_tma_tile_copy_plain_with_out_of_bounds_zero_fill():
    t = torch.arange(40 * 72, dtype=torch.int32, device="cuda").remainder(30000).to(torch.int16).view(40, 72)
    got = _tma_copy(t, 16, 64, 0, c0=8, c1=3)  # fully inside
    assert torch.equal(got, _window(t, 3, 8, 16, 64)), "TMA box (no swizzle) differs from the matrix window"
    got = _tma_copy(t, 16, 64, 0, c0=40, c1=30)  # 32 columns and 6 rows hang off the matrix
    assert torch.equal(got, _window(t, 30, 40, 16, 64)), "TMA out-of-bounds elements are not zero"


def test_tma_tile_copy_swizzle128_as_v7_loads_a():
    """A 128x64 bf16 box (v7's A tile) with the 128-byte swizzle: 16-byte chunk c of row r lands at
    chunk c ^ (r % 8). Partly outside the matrix on both axes (rows >= 200, columns >= 1000)."""
    bits = torch.arange(200 * 1000, dtype=torch.int32, device="cuda").remainder(30000).to(torch.int16)
    t = bits.view(torch.bfloat16).view(200, 1000)
    got = _tma_copy(t, 128, 64, 128, c0=960, c1=128)
    logical = _window(bits.view(200, 1000), 128, 960, 128, 64)
    expect = torch.empty_like(logical)
    for r in range(128):
        for p in range(8):
            q = p ^ (r % 8)
            expect[r, p * 8:(p + 1) * 8] = logical[r, q * 8:(q + 1) * 8]
    assert torch.equal(got, expect), "128-byte swizzle differs from chunk ^ (row % 8) (see HOPPER.md / PTX tensor copy)"


# ---- 2. fp32 variants -----------------------------------------------------------------

@pytest.mark.parametrize("name", [v.name for v in OP.variants() if v.dtypes(OP) == ("float32",)])
def test_fp32_variant_every_test_case(name):
    for case in OP.test_cases():
        if case.dtype == "float32":
            _check_case(name, case)


def test_fp32_variants_second_distribution_and_seed():
    case = Case((127, 129, 65), "float32")
    for v in OP.variants():
        if OP.supports(v, case) is None:
            inputs = OP.make_inputs(case, 7, "cuda", dist="uniform")
            _check(v, case, inputs, _run(v, case, inputs))


# ---- 3. known-wrong kernels -----------------------------------------------------------

def _fails(v, case) -> float:
    inputs = OP.make_inputs(case, 0, "cuda")
    c = _run(v, case, inputs)
    ref = OP.reference(case, inputs)["c"].double()
    rtol, atol = OP.tolerance(case)
    return ((c.double() - ref).abs() - rtol * ref.abs()).max().item() / atol  # > 1: rejected


def test_wrong_no_k_tail_is_rejected_on_a_k_tail_only():
    v = OP.variant("w1_no_k_tail")
    assert _fails(v, Case((128, 128, 128), "float32")) <= 1.0  # K multiple of 16: looks right
    assert _fails(v, Case((17, 31, 45), "float32")) > 10.0


def test_wrong_bf16_inputs_is_rejected_as_a_precision_error():
    ratio = _fails(OP.variant("w2_bf16_inputs"), Case((256, 256, 256), "float32"))
    assert 3.0 < ratio < 1e4, ratio  # well over the fp32 tolerance, far under garbage


# ---- 4./5. tensor-core variants, from one tile up --------------------------------------

def _identity_b(m, n, k, seed=0):
    """A random, B[n][k] = (n == k): C[m][n] = A[m][n] for n < k, else 0 (exact in bf16)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, generator=g, device="cuda").to(torch.bfloat16)
    b = torch.zeros(n, k, device="cuda", dtype=torch.bfloat16)
    r = torch.arange(min(n, k), device="cuda")
    b[r, r] = 1.0
    return a, b


def _identity_a(m, n, k, seed=0):
    """A[m][k] = (m == k), B random: C[m][n] = B[n][m] for m < k, else 0 (exact)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    b = torch.randn(n, k, generator=g, device="cuda").to(torch.bfloat16)
    a = torch.zeros(m, k, device="cuda", dtype=torch.bfloat16)
    r = torch.arange(min(m, k), device="cuda")
    a[r, r] = 1.0
    return a, b


def _tile(name):
    """The variant's C tile (one block's work): one-tile tests use exactly that shape."""
    return OP.geometry(OP.variant(name), Case((1, 1, 1), "bfloat16")).tile


def _check_exact(name, m, n, k, make, source):
    case = Case((m, n, k), "bfloat16")
    v = _variant_or_skip(name, case)
    a, b = make(m, n, k)
    c = _run(v, case, {"a": a, "b": b}).float()
    ref = (a.float() @ b.float().t())
    bad = c != ref
    src, src_name = (a, "A") if source == "a" else (b, "B")
    assert not bool(bad.any()), f"{name} {case.label}, exact test:\n" + _explain(c, ref, bad, src, src_name)


@pytest.mark.parametrize("name", TC)
def test_tc_identity_b_one_tile(name):
    """One tile, one k-block, C = A[:, :64]: wrong here = the A operand path (ldmatrix/descriptor,
    swizzle) or the accumulator-to-C mapping; `= A[i,j]` in the message says which A element landed."""
    m, n = _tile(name)
    _check_exact(name, m, n, 64, _identity_b, "a")


@pytest.mark.parametrize("name", TC)
def test_tc_identity_a_one_tile(name):
    """One tile, one k-block, C[m][n] = B[n][m]: wrong here but not above = the B operand path."""
    m, n = _tile(name)
    _check_exact(name, m, n, 64, _identity_a, "b")


@pytest.mark.parametrize("name", TC)
def test_tc_one_kblock_random(name):
    m, n = _tile(name)
    _check_case(name, Case((m, n, 64), "bfloat16"))


@pytest.mark.parametrize("name", TC)
def test_tc_k_loop_wraps_the_stage_ring(name):
    """9 k-blocks: v6's 3-stage and v7's 4-stage rings wrap twice (mbarrier phases, cp.async groups)."""
    m, n = _tile(name)
    _check_case(name, Case((m, n, 64 * 9), "bfloat16"))
    _check_case(name, Case((m, n, 64 * 9 - 8), "bfloat16"), seed=1)  # and a K tail in the last block


@pytest.mark.parametrize("name", TC[1:])
def test_persistent_many_tiles_per_block(name):
    """256 tiles on <= 132 blocks: each block does 2+ tiles, the ring and phases carry across tiles."""
    _check_case(name, Case((2048, 4096, 128), "bfloat16"))


@pytest.mark.parametrize("name", TC)
def test_tc_every_test_case(name):
    for case in OP.test_cases():
        if case.dtype == "bfloat16" and OP.supports(OP.variant(name), case) is None:
            _check_case(name, case)


@pytest.mark.parametrize("name", TC[1:])
def test_tma_variant_in_cuda_graph_replay(name):
    """The tensor maps are copied into the launch; a captured graph replays them (and fresh data)."""
    case = Case((256, 512, 192), "bfloat16")
    v = _variant_or_skip(name, case)
    inputs = OP.make_inputs(case, 3, "cuda")
    c = torch.empty(256, 512, dtype=torch.bfloat16, device="cuda")
    run_variant(OP, v, case, inputs, {"c": c})  # warm: load + encode outside capture
    synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        run_variant(OP, v, case, inputs, {"c": c})
    fresh = OP.make_inputs(case, 4, "cuda")
    inputs["a"].copy_(fresh["a"])
    inputs["b"].copy_(fresh["b"])
    c.fill_(float("nan"))
    g.replay()
    synchronize()
    _check(v, case, inputs, c)


# ---- 6. the torch operator ------------------------------------------------------------

def test_torch_op_eager_and_compiled():
    import kernelab.ops.gemm.torch_op  # noqa: F401

    for dt, (m, n, k) in (("bfloat16", (100, 260, 136)), ("float32", (33, 65, 47))):
        case = Case((m, n, k), dt)
        inputs = OP.make_inputs(case, 5, "cuda")
        c = torch.ops.kernelab.gemm(inputs["a"], inputs["b"])
        _check(OP.variant("v5" if dt == "float32" else "v6"), case, inputs, c)

    f = torch.compile(lambda x, w: torch.ops.kernelab.gemm(x, w) * 2.0, fullgraph=True)
    case = Case((64, 128, 256), "bfloat16")
    inputs = OP.make_inputs(case, 6, "cuda")
    got = f(inputs["a"], inputs["b"]).float() / 2.0
    ref = OP.reference(case, inputs)["c"]
    rtol, atol = OP.tolerance(case)
    assert torch.allclose(got, ref, rtol=2 * rtol, atol=atol)
    with pytest.raises(ValueError, match=r"a @ b.T"):
        torch.ops.kernelab.gemm(inputs["a"], inputs["b"].t())
