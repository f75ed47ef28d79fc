"""rmsnorm / layernorm v3 (persistent rows with prefetch) and sum v4 (one launch, ticket) on the
GPU, where the generic per-variant tests cannot reach: the op's test cases have at most 33 rows,
fewer than the persistent grid's groups, so each group would take one row and the loop (the
prefetch, the params kept across rows, their per-row reload when rows change phase) would never
run; and sum v4's ticket must survive repeated calls and CUDA-graph replay."""

from __future__ import annotations

import pytest
import torch

from kernelab.check import check_variant
from kernelab.ops import Case, discover, run_variant

pytestmark = pytest.mark.gpu

OPS = discover()
SUM = OPS["sum"]

# Rows >> groups (132 SMs x 2 blocks for the 8192-wide instance, x 8 warps x 2-4 blocks for the
# warp instances), widths that keep every row in x's 16-byte phase (8192; 1000 and 4100 fp32:
# 4000- and 16400-byte rows) and that do not (1000 and 4100 bf16: 2000- and 8200-byte rows: the
# params are reloaded per row), view offsets (misaligned rows) and a wide row (the stream kernel).
LOOP_CASES = [
    Case((1500, 8192), "bfloat16"), Case((1500, 8192), "float32"),
    Case((9000, 1000), "bfloat16"), Case((9000, 1000), "float32"),
    Case((1200, 4100), "bfloat16"), Case((1200, 4100), "float32", offset=1),
    Case((600, 8192), "bfloat16", offset=3), Case((40, 40000), "float32"),
]


@pytest.mark.parametrize("op_name", ["rmsnorm", "layernorm"])
@pytest.mark.parametrize("case", LOOP_CASES, ids=lambda c: c.label)
def test_v3_persistent_loop_is_correct(op_name, case):
    op = OPS[op_name]
    v = op.variant("v3_persist_prefetch")
    r = check_variant(op, v, case, seeds=(0,), dists=("normal",), repeat=False, stream_order=False)
    assert r.ok, f"{v.id} {case.label}: {r.reason}: {r.detail[:600]}"


@pytest.mark.parametrize("op_name", ["rmsnorm", "layernorm"])
def test_v3_full_check_on_a_looping_case(op_name):
    """The checker's whole protocol (seeds x distributions, poisons, guards, repeats, stream order)."""
    op = OPS[op_name]
    case = Case((2000, 8192), "bfloat16", params=(("shift", 1000.0),) if op_name == "layernorm" else ())
    r = check_variant(op, op.variant("v3_persist_prefetch"), case, seeds=(0, 1))
    assert r.ok, f"{case.label}: {r.reason}: {r.detail[:600]}"


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_sum_v4_ticket_survives_repeats_and_graph_replay(dtype):
    from kernelab.ops.sum import op as sum_op

    v = SUM.variant("v4_ticket")
    case = Case(((1 << 18) + 7,), dtype)
    inputs = SUM.make_inputs(case, 0, "cuda")
    out = SUM.make_outputs(case, inputs)
    bits = set()
    for _ in range(5):  # the same bits every call: the last block adds in a fixed order
        run_variant(SUM, v, case, inputs, out)
        bits.add(int(out["out"].view(torch.int32)))
    assert len(bits) == 1
    ref = float(inputs["x"].sum(dtype=torch.float64))
    assert abs(float(out["out"]) - ref) < 1e-5
    assert int(sum_op._ticket(inputs["x"].device)) == 0  # reset by the kernel's last ticket

    # Graph capture and replay with new data in the same input buffer.
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        run_variant(SUM, v, case, inputs, out)  # warm-up on the capture stream (its ticket is allocated here)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            run_variant(SUM, v, case, inputs, out)
    torch.cuda.current_stream().wait_stream(stream)
    for seed in (1, 2, 3):
        inputs["x"].copy_(SUM.make_inputs(case, seed, "cuda")["x"])
        graph.replay()
        torch.cuda.synchronize()
        ref = float(inputs["x"].sum(dtype=torch.float64))
        assert abs(float(out["out"]) - ref) < 1e-5, f"replay {seed}: {float(out['out'])} vs {ref}"


def test_sum_v4_at_the_bench_size_is_within_the_rounding_estimate():
    v = SUM.variant("v4_ticket")
    case = Case((1 << 28,), "float32")
    inputs = SUM.make_inputs(case, 0, "cuda")
    out = SUM.make_outputs(case, inputs)
    run_variant(SUM, v, case, inputs, out)
    err = abs(float(out["out"]) - float(inputs["x"].sum(dtype=torch.float64)))
    assert err < 5e-6, f"|error| {err:.3g} at n = 2^28 ({v.meta_int('vectors_per_thread')} vectors per thread)"
    del inputs
