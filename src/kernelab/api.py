"""The small public API for your own kernel: load it, check it against torch, time it, place it.

    import torch, kernelab

    k = kernelab.load("scale.cu").kernel("scale")            # NVRTC, cached; k.resources: registers, spills

    def candidate(inputs, outputs):                            # writes the outputs it is given
        x, y = inputs["x"], outputs["y"]
        k(x, y, x.numel(), 2.0, grid=(x.numel() + 255) // 256, block=256)

    def make_inputs(seed):
        g = torch.Generator("cuda").manual_seed(seed)
        return {"x": torch.randn(1 << 24, device="cuda", generator=g)}

    result = kernelab.verify(candidate, lambda x: {"y": x * 2}, make_inputs)  # poisoned, guarded, 3 seeds
    assert result.ok, result.detail
    inputs = make_inputs(0); outputs = {"y": torch.empty_like(inputs["x"])}
    m = kernelab.bench.bench(lambda: candidate(inputs, outputs))             # cold L2, noise-based stopping
    print(kernelab.roofline(m.median_s, bytes=2 * 4 * (1 << 24)))            # % of the measured ceiling

`verify` builds a throw-away op (FunctionOp) around your callables so that the whole
integrity harness applies: float64 reference (your reference runs on float64 copies of the
inputs), outputs poisoned twice, guard bands, input mutation, repeated calls, stream order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .ops.base import Case, OpSpec, Work


class FunctionOp(OpSpec):
    """An op made from callables: make_inputs(seed) -> {name: tensor}, reference(**inputs) -> {name: tensor}."""

    def __init__(self, make_inputs: Callable, reference: Callable, *, name: str = "function",
                 tolerances: dict | None = None, work: Work | None = None):
        self.name = name
        self._make_inputs, self._reference = make_inputs, reference
        self.tolerances = dict(tolerances or {})
        self._work = work
        self.distributions = ("normal",)

    def make_inputs(self, case, seed, device="cuda", dist="normal"):
        inputs = self._make_inputs(seed)
        if not isinstance(inputs, dict) or not inputs:
            raise TypeError("make_inputs(seed) must return a non-empty dict {name: tensor}")
        return inputs

    def make_outputs(self, case, inputs):
        import torch

        expected = self._reference(**inputs)
        if not isinstance(expected, dict) or not expected:
            raise TypeError("reference(**inputs) must return a non-empty dict {output name: tensor}")
        return {k: torch.empty_like(v) for k, v in expected.items()}

    def reference(self, case, inputs):
        import torch

        upcast = {k: v.double() if torch.is_tensor(v) and v.is_floating_point() else v for k, v in inputs.items()}
        return self._reference(**upcast)

    def work(self, case) -> Work:
        if self._work is None:
            raise ValueError("give work=Work(bytes=..., flops=...) to place a result on the roofline")
        return self._work


def verify(candidate: Callable, reference: Callable, make_inputs: Callable, *, seeds=(0, 1, 2),
          tolerances: dict | None = None, name: str = "candidate", device: str = "cuda"):
    """Check `candidate(inputs, outputs)` against `reference(**inputs)` on fresh inputs per seed.

    tolerances: {dtype name: (rtol, atol)} overrides, e.g. {"float32": (0, 0)} for an exact op.
    Returns a kernelab.check.CheckResult (`.ok`, `.reason`, `.detail`, error statistics).
    """
    from .check import check_callable

    op = FunctionOp(make_inputs, reference, name=name, tolerances=tolerances)
    first = make_inputs(seeds[0])
    dtype = next((str(v.dtype).replace("torch.", "") for v in first.values() if hasattr(v, "dtype")), "float32")
    case = Case(shape=(), dtype=dtype)
    return check_callable(candidate, op, case, seeds=tuple(seeds), dists=("normal",), device=device, name=name)


@dataclass
class RooflineReport:
    placement: object  # kernelab.analysis.Placement
    device: str

    def __str__(self) -> str:
        p = self.placement
        b = p.measured or p.nominal
        lines = [f"{p.seconds * 1e6:.1f} us on {self.device}: {p.achieved_bandwidth / 1e9:.0f} GB/s"
                 + (f", {p.achieved_flops / 1e12:.2f} TFLOP/s" if p.flops else ""),
                 f"intensity {p.intensity:.3g} FLOP/B; {b.bound}-bound; floor {b.floor_s * 1e6:.1f} us",
                 f"{p.nominal.percent:.0f}% of the nominal roof"
                 + (f", {p.measured.percent:.0f}% of the measured ceiling" if p.measured else
                    " (no measured ceilings cached: run `kernelab ceilings`)")]
        return "\n".join(lines)


def roofline(seconds: float, *, bytes: int, flops: int = 0, flop_unit: str = "fp32") -> RooflineReport:
    """Where a measured time sits: against this GPU's nominal peaks and its cached measured ceilings."""
    from .analysis import load_cached, place, roofline_ceilings, spec_for

    from .gpu import has_gpu

    spec = spec_for(None)
    cached = load_cached() if has_gpu() else None
    measured = roofline_ceilings(cached) if cached is not None else None
    return RooflineReport(place(Work(bytes, flops, flop_unit), seconds, spec, measured), spec.name)
