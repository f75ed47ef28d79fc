"""Softmax launches recorded without a GPU: Softmax.launch against a stand-in module whose kernels
record (name, positional arguments, keyword arguments) instead of running, on CPU tensors. The
tests of v12's and v13's launches read the `work` counters and cluster geometry from it."""

from __future__ import annotations

from kernelab.ops import discover
from kernelab.ops.softmax import op as softmax_op

OP = discover()["softmax"]


def record_launches(monkeypatch, runs, grid: int) -> list[tuple]:
    """OP.launch for each (variant, case) of `runs` on an sm_90 stand-in, persistent grids fixed at
    `grid`; the calls the launches made, in order."""
    calls = []

    class Kernel:
        def __init__(self, name):
            self.name = name

        def __call__(self, *args, **kw):
            calls.append((self.name, args, kw))

    class Mod:
        compiled = type("C", (), {"arch": "sm_90"})()

        def kernel(self, name):
            return Kernel(name)

    monkeypatch.setattr(softmax_op, "persistent_grid", lambda k, p, m: grid)
    for v, case in runs:
        inputs = OP.make_inputs(case, 0, "cpu")
        outputs = OP.make_outputs(case, inputs)
        OP.launch(type("Contract", (), {"module": Mod()})(), v, case, inputs, outputs)
    return calls
