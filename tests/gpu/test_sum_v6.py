"""sum v6_ticket_chunks on a GPU, beyond the per-variant sweep of tests/gpu/test_ops_mem_a.py (which
runs v6 on every test case against the float64 reference and checks that repeated runs give the
same bits): v6's result has v3's (and v5's) bits, with the GPU's own persistent grid and with a
forced grid of a few blocks (so every size above a few chunks goes through the ticket loop); the
pass alone leaves v3's partials, chunk for chunk, and the counter at `chunks` (every ticket drawn);
a whole call leaves the counter at 0; back-to-back calls with no synchronisation, two streams at
once, and a CUDA graph captured once and replayed twice on new inputs all give v3's bits; n = 0
gives 0; the full checker (poisons, guard bands, repeats, stream order) on a ticket-path case.

Run with: PYTHONPATH=src python -m pytest -q tests/gpu/test_sum_v6.py"""

from __future__ import annotations

import math

import pytest
import torch

from kernelab.check import check_variant
from kernelab.ops import Case, discover, load_variant, run_variant
from kernelab.ops.sum import op as sum_op

pytestmark = pytest.mark.gpu

SUM = discover()["sum"]
V3, V5, V6 = SUM.variant("v3"), SUM.variant("v5"), SUM.variant("v6")
SIZES = [1, 7, (1 << 14) + 3, (1 << 20) + 5, 1 << 24, (1 << 24) + 3]


def _per_chunk(dtype):
    return V6.meta_int("block") * V6.meta_int("vectors_per_thread") * (16 // (4 if dtype == "float32" else 2))


def _sum(v, x):
    case = Case((x.numel(),), "float32" if x.dtype == torch.float32 else "bfloat16")
    out = torch.full((), float("nan"), dtype=torch.float32, device=x.device)
    run_variant(SUM, v, case, {"x": x}, {"out": out})
    return out


def _bits(t):
    return t.view(torch.int32).item()


def _counter():
    return int(sum_op._chunk_counter(torch.device("cuda", torch.cuda.current_device())))


def _x(n, dtype, offset=0, seed=0):
    return SUM.make_inputs(Case((n,), dtype, offset=offset), seed, "cuda")["x"]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("resident", [None, 3, 7], ids=["gpu_grid", "grid3", "grid7"])
def test_v6_has_v3s_bits(dtype, resident, monkeypatch):
    """Every size x aligned / misaligned (x[1:]): v6 == v3 == v5 bit for bit, and the counter is 0
    after each call. resident=3 / 7: the pass runs 3 / 7 blocks, so each takes many tickets."""
    if resident is not None:
        monkeypatch.setattr(sum_op, "resident_blocks", lambda kernel, block: resident)
    failures = []
    for n in SIZES:
        for offset in (0, 1):
            x = _x(n, dtype, offset, seed=n % 97 + offset)
            r3, r5, r6 = _sum(V3, x), _sum(V5, x), _sum(V6, x)
            torch.cuda.synchronize()
            if not (_bits(r6) == _bits(r3) == _bits(r5)):
                failures.append(f"n={n} offset={offset}: v6 {r6.item()!r} v3 {r3.item()!r} v5 {r5.item()!r}")
            if _counter() != 0:
                failures.append(f"n={n} offset={offset}: counter left at {_counter()}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_v6_pass_leaves_v3s_partials_and_draws_every_ticket(dtype):
    """The pass kernels alone, on a counter of the test's own: partial[c] has v3 block c's bits for
    every chunk whichever block took it, and the counter ends at `chunks` (the kernel's contract:
    chunks - grid tickets that name a chunk, one failing ticket per block), then 0 is ours to set."""
    n, offset = (1 << 24) + 3, 1
    x = _x(n, dtype, offset)
    chunks = math.ceil(n / _per_chunk(dtype))
    k3 = load_variant(SUM, V3).kernel(SUM.kernel_name(dtype))
    k6 = load_variant(SUM, V6).kernel(SUM.kernel_name(dtype))
    p3 = torch.full((chunks,), float("nan"), device="cuda")
    k3(x, p3, n, grid=chunks, block=256)
    ctr = torch.zeros(1, dtype=torch.int32, device="cuda")
    for grid in (SUM.ticket_grid(k6, 256, chunks), 5, 1):
        p6 = torch.full((chunks,), float("nan"), device="cuda")
        k6(x, p6, ctr, n, chunks, grid=grid, block=256)
        torch.cuda.synchronize()
        assert torch.equal(p6.view(torch.int32), p3.view(torch.int32)), f"grid {grid}: partials differ from v3's"
        want = chunks if chunks > grid else 0
        assert int(ctr) == want, f"grid {grid}: counter {int(ctr)}, expected {want}"
        ctr.zero_()


def test_v6_back_to_back_calls_and_two_streams():
    """Eight calls on different inputs with no synchronisation between them: each call's finish
    (programmatic on sm_90+) must read its own pass's partials and zero the counter before the next
    pass draws from it; a stale counter would skip chunks. Then two streams at once (a counter slot
    each). Every result has v3's bits."""
    xs = [_x((1 << 24) + 3, "bfloat16", seed=s) * (s + 1) for s in range(8)]
    outs = [_sum(V6, x) for x in xs]
    torch.cuda.synchronize()
    for i, (x, out) in enumerate(zip(xs, outs)):
        assert _bits(out) == _bits(_sum(V3, x)), f"call {i}: {out.item()!r} vs v3 {_sum(V3, x).item()!r}"
    assert _counter() == 0

    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    for s in (s1, s2):
        s.wait_stream(torch.cuda.current_stream())
    res = {}
    for rep in range(3):
        for name, s, x in (("s1", s1, xs[0]), ("s2", s2, xs[1])):
            with torch.cuda.stream(s):
                res[(name, rep)] = _sum(V6, x)
    torch.cuda.synchronize()
    want = {"s1": _bits(_sum(V3, xs[0])), "s2": _bits(_sum(V3, xs[1]))}
    for (name, rep), out in res.items():
        assert _bits(out) == want[name], f"{name} call {rep}: {out.item()!r}"
    for s in (s1, s2):
        with torch.cuda.stream(s):
            assert _counter() == 0


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_v6_in_a_cuda_graph_replayed_twice(dtype):
    """Captured once (the counter and its slot exist before the capture: warm-up on the same stream),
    replayed twice on new inputs: v3's bits each time, counter back at 0 (no memset in the graph)."""
    n = (1 << 24) + 3
    x = _x(n, dtype, seed=1).clone()
    out = torch.empty((), dtype=torch.float32, device="cuda")
    case = Case((n,), dtype)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(s):
        run_variant(SUM, V6, case, {"x": x}, {"out": out})  # warm-up: allocations and this stream's slot
        torch.cuda.synchronize()
        with torch.cuda.graph(g, stream=s):
            run_variant(SUM, V6, case, {"x": x}, {"out": out})
    for seed in (2, 3):
        src = _x(n, dtype, seed=seed)
        x.copy_(src)
        out.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        assert _bits(out) == _bits(_sum(V3, src)), f"replay seed {seed}: {out.item()!r} vs v3 {_sum(V3, src).item()!r}"
        with torch.cuda.stream(s):
            assert _counter() == 0, "the graph left the counter non-zero"


def test_v6_empty_input_sums_to_zero_like_v3_and_v5():
    for dtype in ("float32", "bfloat16"):
        x = _x(0, dtype)
        outs = [_sum(v, x) for v in (V3, V5, V6)]
        torch.cuda.synchronize()
        assert [o.item() for o in outs] == [0.0, 0.0, 0.0] and len({_bits(o) for o in outs}) == 1, dtype
    assert _counter() == 0


def test_v6_passes_the_full_checker_on_the_ticket_path():
    """Seeds, distributions, two poisons, guard bands, input snapshots, repeated calls and stream order
    (the checker's delayed-input phase) on a size whose pass takes tickets: 1025 chunks, more than
    the H200's 792 resident blocks (132 SMs x 6)."""
    case = Case(((1 << 24) + 3,), "bfloat16", offset=1)
    r = check_variant(SUM, V6, case, seeds=(0, 1))
    assert r.ok, f"{case.label}: {r.reason}: {r.detail}"
