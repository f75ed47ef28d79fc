"""Launches recorded without a GPU: an op's launch against a stand-in module (compiled for `arch`)
whose kernels record (name, positional arguments, keyword arguments) instead of running, on CPU
tensors. The softmax tests read v12's and v13's `work` counters and cluster geometry from it, the
transpose tests which v8 instance a case takes."""

from __future__ import annotations

from kernelab.ops.build import launch_variant


def record_launches(op, runs, arch: str = "sm_90", blocks_per_sm=2) -> list[tuple]:
    """op.launch (or the variant's own launcher, as run_variant does) for each (variant, case) of
    `runs`, starting from the contract kernel; the calls
    the launches made, in order. The occupancy API's blocks an SM: `blocks_per_sm`, a number for every
    kernel or a function of (kernel name, block)."""
    calls = []

    class Module:
        compiled = type("Compiled", (), {"arch": arch})()

        def kernel(self, name):
            return Kernel(name)

    class Kernel:
        def __init__(self, name):
            self.name, self.module = name, Module()

        def __call__(self, *args, **kw):
            calls.append((self.name, args, kw))

        def max_active_blocks_per_sm(self, block, dynamic_smem=0):
            return blocks_per_sm(self.name, block) if callable(blocks_per_sm) else blocks_per_sm

    for v, case in runs:
        inputs = op.make_inputs(case, 0, "cpu")
        outputs = op.make_outputs(case, inputs)
        launch_variant(op, Kernel(op.kernel_name(case.dtype)), v, case, inputs, outputs)
    return calls
