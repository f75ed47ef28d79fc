"""The check tests/gpu/test_transpose_v7.py and test_transpose_v8.py make after one launch of a
transpose: the output, NaN-poisoned and between guard bands, equals m.t() bit for bit, and nothing
was written outside it. Problems come back as lines for the test's assertion message."""

from __future__ import annotations

import torch

from kernelab.check.compare import raw_bits
from kernelab.check.integrity import guarded_outputs, poison_
from kernelab.ops import Case


def transpose_bit_problems(op, launch, case: Case, dist: str, seed: int = 0, device: str = "cuda") -> list[str]:
    """Run `launch(case, inputs, outputs)` once on fresh inputs; what differs from m.t() or lands outside `out`."""
    inputs = op.make_inputs(case, seed, device, dist)
    guarded = guarded_outputs(op.make_outputs(case, inputs), guard_bytes=4096)
    g = guarded["out"]
    poison_(g.tensor, "nan")
    g.arm()
    launch(case, inputs, {"out": g.tensor})
    if device == "cuda":
        torch.cuda.synchronize()
    out = []
    if g.violations():
        out.append(f"{case.label}: writes outside the output: {g.violations()}")
    want, got = raw_bits(inputs["m"].t().contiguous()), raw_bits(g.tensor)
    if not torch.equal(got, want):
        bad = (got != want).nonzero()
        out.append(f"{case.label} [{dist}]: {bad.shape[0]} of {got.numel()} elements differ from m.t(), "
                   f"first at out{tuple(bad[0].tolist())}")
    return out
