"""vector_add: c = a + b, elementwise, fp32 and bf16 (the first op of the series, seeds/000 §9).

Work: read a and b, write c: 3 * n * element size bytes; n FLOPs (irrelevant: intensity
1/12 FLOP/B in fp32, three orders of magnitude under the ridge point).
"""

from __future__ import annotations

import math

from kernelab.ops.base import Case, OpSpec, Work, resident_blocks

PRIME = 1_000_003


class VectorAdd(OpSpec):
    name = "vector_add"
    dtypes = ("float32", "bfloat16")
    kernel_entry = "vector_add"
    best_variant = "v1_vec16"  # the fastest measured at 2^28 on the H200 (NOTES.md)
    distributions = ("normal", "uniform", "large", "special")  # NaN/Inf propagate elementwise
    # One correctly rounded add per element in both dtypes: any difference from float64 rounded
    # to the output dtype is a bug, so the tolerance is exact.
    tolerances = {"float32": (0.0, 0.0), "bfloat16": (0.0, 0.0)}

    def test_cases(self) -> list[Case]:
        sizes = [0, 1, 255, 256, 257, 4095, 4096, 4097, PRIME, (1 << 20) + 3]
        cases = [Case((n,), dt) for dt in self.dtypes for n in sizes]
        # Misaligned views: x[k:] has ptr % 16 == k * itemsize. Inputs and output share the
        # offset (co-aligned: a kernel can peel a prologue) or only inputs are offset (mixed:
        # no common alignment, so a vector kernel must fall back to scalar access).
        for dt, itemsize in (("float32", 4), ("bfloat16", 2)):
            for k in (1, 2, 3, 4, 7):
                if (k * itemsize) % 16:
                    cases.append(Case((PRIME,), dt, offset=k))
            cases.append(Case((PRIME,), dt, offset=1, layout="mixed_alignment"))
            cases.append(Case((257,), dt, offset=1, layout="mixed_alignment"))
        return cases

    def bench_cases(self) -> list[Case]:
        return [Case((1 << p,), dt) for dt in self.dtypes for p in (20, 24, 28)]

    def make_inputs(self, case, seed, device="cuda", dist="normal"):
        (n,) = case.shape
        return {
            "a": self.tensor((n,), case.dtype, seed, device, dist, offset=case.offset),
            "b": self.tensor((n,), case.dtype, seed + 1, device, dist, offset=case.offset),
        }

    def make_outputs(self, case, inputs):
        import torch

        (n,) = case.shape
        off = 0 if case.layout == "mixed_alignment" else case.offset
        buf = torch.empty(n + off, dtype=inputs["a"].dtype, device=inputs["a"].device)
        return {"c": buf[off:]}

    def reference(self, case, inputs):
        return {"c": inputs["a"].double() + inputs["b"]}  # b is widened on the fly: no second float64 copy

    def work(self, case) -> Work:
        itemsize = 4 if case.dtype == "float32" else 2
        return Work(bytes=3 * case.numel * itemsize, flops=case.numel,
                    flop_unit="fp32" if case.dtype == "float32" else "bf16")

    def peers(self, case):
        import torch

        def eager(inputs):
            return {"c": torch.add(inputs["a"], inputs["b"])}

        return {"torch": eager, "torch.compile": _compiled(eager)}

    # Launch geometry comes from the variant's header:
    #   @block N              threads per block
    #   @elems_per_thread E   grid = ceil(n / (N * E))
    #   @bytes_per_thread B   the same with E = B / element size (vector kernels)
    #   @grid persistent      grid = SMs x resident blocks per SM (occupancy API), capped by the work
    def launch(self, kernel, variant, case, inputs, outputs):
        n = case.numel
        if n == 0:
            return
        block = variant.meta_int("block", 256)
        itemsize = inputs["a"].element_size()
        elems = variant.meta_int("bytes_per_thread", 0) // itemsize or variant.meta_int("elems_per_thread", 1)
        needed = math.ceil(n / (block * elems))
        if variant.meta.get("grid") == "persistent":
            grid = min(needed, resident_blocks(kernel, block))
        else:
            grid = needed
        kernel(inputs["a"], inputs["b"], outputs["c"], n, grid=grid, block=block)


def _compiled(fn):
    import torch

    compiled = torch.compile(fn, dynamic=False)
    return compiled


OP = VectorAdd()
