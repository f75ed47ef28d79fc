"""transpose v7_ticket_tiles on the GPU: bit-for-bit equal to torch's transpose (m.t()) for fp32
and bf16 on edge shapes, misaligned views and column slices (row stride > columns), with
NaN-poisoned outputs and guard bands; enough tiles per block that the tickets, not the first wave,
do most of the work; its two counters back at zero after every call (no memset: a stale counter
would skip tiles and leave NaN); two streams at once, each on its own counters; a CUDA graph
captured once and replayed twice on new inputs; the grouped-order knob (GROUP); and the bench
size. (tests/gpu/test_ops_mem_a.py also runs it on every test case of the op.)"""

from __future__ import annotations

import pytest
import torch

from kernelab.check.compare import raw_bits
from kernelab.gpu import Module, compile_file
from kernelab.ops import Case, discover, run_variant
from kernelab.ops.build import target_arch
from kernelab.ops.transpose import op as transpose_op

from ._transpose_bits import transpose_bit_problems

pytestmark = pytest.mark.gpu

OP = discover()["transpose"]
V7 = OP.variant("v7_ticket_tiles")


def _counters(device=None) -> list[int]:
    """This stream's two counters (tiles taken, blocks finished), after the launches on it completed."""
    torch.cuda.synchronize()
    return transpose_op.tile_tickets(device or torch.device("cuda", torch.cuda.current_device())).tolist()


def _cases(dtype: str) -> list[Case]:
    vec = 4 if dtype == "float32" else 8
    return [
        # Edges: one element, one row, tiles cut on both sides, a wide row of tiles, a tall thin one.
        Case((1, 1), dtype), Case((1, 17), dtype), Case((63, 65), dtype), Case((129, 4097), dtype),
        Case((1000, 3), dtype),
        # Misaligned views (offset k elements into the allocation: m and out; m only).
        Case((63, 65), dtype, offset=1), Case((1000, 1000), dtype, offset=3),
        Case((1000, 1000), dtype, offset=1, layout="mixed_alignment"),
        # Strided rows: m[:, k:] of an [R, C + k] matrix (ld = C + k), misaligned and aligned.
        Case((127, 129), dtype, layout="column_slice", params=(("col_start", 1),)),
        Case((1000, 1000 - vec), dtype, layout="column_slice", params=(("col_start", vec),)),
        # Many tiles a block: 2117 x 449 (a row of cut tiles at the bottom), 4096 x 4096 (fp32 4096
        # tiles of 64 x 64 on ~1056 blocks; bf16 1024 of 128 x 128 on ~528), and a tall matrix with
        # more row tiles than v4's gridDim.y holds (fp32 65537 tiles, ~62 a block).
        Case((2117, 449), dtype), Case((4096, 4096), dtype),
        Case((65535 * 64 + 70, 3), dtype) if dtype == "float32" else Case(((1 << 20) + 3, 1), dtype),
        Case((1, (1 << 20) + 3), dtype),
    ]


def _problems(launch, case: Case, dist: str, seed: int = 0) -> list[str]:
    out = transpose_bit_problems(OP, launch, case, dist, seed)
    work = _counters()
    if work != [0, 0]:
        out.append(f"{case.label}: counters left at {work} (tiles taken, blocks finished)")
    return out


def _default(case, inputs, outputs):
    run_variant(OP, V7, case, inputs, outputs)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_bit_exact_against_torch_with_the_counters_left_zero(dtype):
    problems = []
    for case in _cases(dtype):
        for dist in (("special", "normal") if case.numel <= 1 << 16 else ("normal",)):
            problems += _problems(_default, case, dist)
    assert not problems, "\n".join(problems[:10])


def test_repeated_calls_and_both_dtypes_on_one_stream():
    """Each launch starts from the zeros the previous one left: the same counters serve every call
    on the stream, whatever the dtype or shape."""
    problems = []
    for k in range(3):
        for case in (Case((2048, 3000), "float32"), Case((3000, 2048), "bfloat16"), Case((70, 70), "float32")):
            problems += _problems(_default, case, "normal", seed=k)
    assert not problems, "\n".join(problems[:10])


def test_two_streams_at_once_each_on_its_own_counters():
    cases = [Case((4096, 4096), "float32"), Case((4096, 4096), "bfloat16")]
    inputs = [OP.make_inputs(c, i, "cuda") for i, c in enumerate(cases)]
    outputs = [OP.make_outputs(c, x) for c, x in zip(cases, inputs)]
    for o in outputs:
        o["out"].fill_(float("nan"))
    streams = [torch.cuda.Stream() for _ in cases]
    counters = []
    for s, c, x, o in zip(streams, cases, inputs, outputs):
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):  # back to back, overlapping with the other stream's launches
                run_variant(OP, V7, c, x, o)
            counters.append(transpose_op.tile_tickets(x["m"].device))
    torch.cuda.synchronize()
    assert counters[0].data_ptr() != counters[1].data_ptr()
    for c, x, o, w in zip(cases, inputs, outputs, counters):
        assert torch.equal(raw_bits(o["out"]), raw_bits(x["m"].t().contiguous())), c.label
        assert w.tolist() == [0, 0], f"{c.label}: {w.tolist()}"


@pytest.mark.parametrize("case", [Case((4096, 4096), "float32"), Case((4096, 4096), "bfloat16"),
                                  Case((1000, 999), "float32", offset=1)], ids=lambda c: c.label)
def test_cuda_graph_replays_twice_on_new_inputs(case):
    inputs = OP.make_inputs(case, 0, "cuda")
    outputs = OP.make_outputs(case, inputs)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(s):
        run_variant(OP, V7, case, inputs, outputs)  # warm-up: this stream's counters allocated before capture
        torch.cuda.synchronize()
        with torch.cuda.graph(g, stream=s):
            run_variant(OP, V7, case, inputs, outputs)
    torch.cuda.synchronize()
    for seed in (1, 2):
        inputs["m"].copy_(OP.make_inputs(case, seed, "cuda")["m"])
        outputs["out"].fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        assert torch.equal(raw_bits(outputs["out"]), raw_bits(inputs["m"].t().contiguous())), f"replay {seed}"
    with torch.cuda.stream(s):  # the capture stream's counters: what the graph's kernel uses
        assert transpose_op.tile_tickets(inputs["m"].device).tolist() == [0, 0]


# GROUP: v4's tile-order knob (2^20 column-major by default; 1 = v3's row order; 32 = groups of 32
# row tiles, a last group cut short at 2117 rows).
@pytest.mark.parametrize("group", [1, 32])
def test_other_tile_orders(group):
    d = {**OP.defines(V7), "GROUP": group}
    module = Module(compile_file(V7.path, arch=target_arch(V7), defines=d), d)

    def launch(case, inputs, outputs):
        OP.launch(module.kernel(OP.kernel_name(case.dtype)), V7, case, inputs, outputs)

    problems = []
    for dt in OP.dtypes:
        for case in (Case((2117, 449), dt), Case((4096, 4096), dt), Case((63, 65), dt, offset=1)):
            problems += _problems(launch, case, "normal")
    assert not problems, "\n".join(problems[:10])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_at_the_bench_size(dtype):
    """16384^2 (fp32 65536 tiles, bf16 16384), bit-exact, counters zero."""
    case = Case((16384, 16384), dtype)
    m = OP.make_inputs(case, 0, "cuda", "uniform")["m"]
    out = OP.make_outputs(case, {"m": m})
    out["out"].fill_(float("nan"))
    run_variant(OP, V7, case, {"m": m}, out)
    assert torch.equal(raw_bits(out["out"]), raw_bits(m.t().contiguous()))
    assert _counters() == [0, 0]

