"""StreamCounters under CUDA graphs on a GPU: torch captures every graph on one default side
stream, so two graphs that each launch a counter-driven kernel (softmax v4 at 65536 wide: v12's
rows from a counter) must get counters of their own, and replaying both at once on two streams
must give both right answers. A capture that comes before any eager call (a fresh StreamCounters)
gets counters of its own, zeroed by its graph, and they are zero again after each replay."""

from __future__ import annotations

import pytest
import torch

from kernelab.check import compare_outputs, tolerance
from kernelab.ops import discover, run_variant
from kernelab.ops.base import Case, StreamCounters
from kernelab.ops.softmax import op as softmax_op

pytestmark = pytest.mark.gpu

OP = discover()["softmax"]
V4 = OP.variant("v4_dispatch")
CASE = Case((512, 65536), "bfloat16")  # 64 MiB each way: long enough for two replays to overlap


def _needs_counters():
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("v4 takes counter-driven kernels on sm_90+ only")
    p = OP.plan(V4, CASE.shape[1], torch.cuda.get_device_capability(), CASE.dtype)
    assert p.work, f"v4 at {CASE.label} planned {p.name} without counters: pick a width that uses them"


def _capture(inputs, outputs, seen):
    g = torch.cuda.CUDAGraph()
    run_variant(OP, V4, CASE, inputs, outputs)  # warm-up: loads the module, plans the launch
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        seen.append(softmax_op.dynamic_work(inputs["x"].device).data_ptr())
        run_variant(OP, V4, CASE, inputs, outputs)
    return g


def _check(inputs, outputs, what):
    rtol, atol = tolerance(OP, CASE.dtype)
    cmp = compare_outputs(outputs["y"], OP.reference(CASE, inputs)["y"], rtol, atol, max_report=3, name="y")
    assert cmp.ok, f"{what}: {cmp.summary(max_lines=3)}"


def test_two_graphs_on_the_default_capture_stream_replay_at_once():
    _needs_counters()
    sets = []
    for seed in (1, 2):
        inputs = OP.make_inputs(CASE, seed, "cuda", "normal")
        sets.append((inputs, OP.make_outputs(CASE, inputs)))
    seen = []
    graphs = [_capture(i, o, seen) for i, o in sets]
    assert seen[0] != seen[1], "both captures got the same counters (keyed by the capture stream only)"
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    for _, o in sets:
        o["y"].fill_(float("nan"))
    torch.cuda.synchronize()
    for _ in range(20):
        for g, s in zip(graphs, streams):
            with torch.cuda.stream(s):
                g.replay()
    torch.cuda.synchronize()
    for k, (i, o) in enumerate(sets):
        _check(i, o, f"graph {k} after 20 concurrent replays")


def test_a_capture_before_any_eager_call_has_counters_of_its_own(monkeypatch):
    _needs_counters()
    fresh = StreamCounters(width=2)
    inputs = OP.make_inputs(CASE, 3, "cuda", "normal")
    outputs = OP.make_outputs(CASE, inputs)
    run_variant(OP, V4, CASE, inputs, outputs)  # loads the module with the library's counters
    torch.cuda.synchronize()
    monkeypatch.setattr(softmax_op, "dynamic_work", fresh)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        run_variant(OP, V4, CASE, inputs, outputs)
    assert not fresh._arrays and len(fresh._own) == 1, "the capture made the device array (a memset of every slot)"
    (own,) = fresh._own.values()
    for _ in range(3):
        outputs["y"].fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        _check(inputs, outputs, "a graph whose capture made its counters")
        assert own.tolist() == [0, 0], f"the kernel left its counters at {own.tolist()}"
