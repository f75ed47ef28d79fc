"""Launches recorded without a GPU: an op's launch against a stand-in module (compiled for `arch`)
whose kernels record (name, positional arguments, keyword arguments) instead of running, on CPU
tensors. The softmax tests read v12's and v13's `work` counters and cluster geometry from it, the
transpose tests which v8 instance a case takes."""

from __future__ import annotations

from kernelab.ops.build import launch_variant


def record_launches(op, runs, arch: str = "sm_90", blocks_per_sm=2, signatures=frozenset()) -> list[tuple]:
    """op.launch (or the variant's own launcher, as run_variant does) for each (variant, case) of
    `runs`, starting from the contract kernel; the calls
    the launches made, in order. The occupancy API's blocks an SM: `blocks_per_sm`, a number for every
    kernel or a function of (kernel name, block). `signatures`: the kernel names the module says it has (the
    launchers that pick a kernel only if the module holds it ask: softmax's `_full` instances)."""
    calls, known = [], frozenset(signatures)

    class Module:
        compiled = type("Compiled", (), {"arch": arch})()
        signatures = known

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


# What launches ask of an H200, for tests without one: its SM count, the blocks an SM takes (1024-thread
# blocks one, the others two) and the clusters each v14 instance fits alone (main grids 240 blocks, two
# an SM; side grids one block an SM).
H200_SMS = 132


def h200_blocks_per_sm(name, block):
    return 1 if block == 1024 else 2


def h200_clusters(kernel, block, cluster, smem=0):
    return (240 if "_sg_a_" in kernel.name else H200_SMS) // cluster[0]


def patch_h200(monkeypatch):
    """device_info and the cluster-occupancy query answer as an H200 does."""
    import kernelab.gpu as kgpu
    from kernelab.gpu import tensormap

    monkeypatch.setattr(kgpu, "device_info", lambda *a: type("D", (), {"sm_count": H200_SMS})())
    monkeypatch.setattr(tensormap, "max_active_clusters", h200_clusters)
