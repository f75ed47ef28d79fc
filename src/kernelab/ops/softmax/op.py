"""softmax over the last dimension of x [M, N]: y_i = exp(x_i - max x) / sum_j exp(x_j - max x).

fp32 and bf16 in and out, fp32 math. Rows from 1 to 262144 wide (and wider, through the
online variant). Variants keep the row in one warp (v0), one block (v1), or a cluster of
blocks (v3) on chip, or stream it twice (v2); v4 picks among them by N and GPU.

Work: read x once, write y once: 2 * M * N * element size bytes. About 5 fp32 operations per
element (max, subtract, scale, sum, multiply) plus one exp2 on the special-function unit;
the FLOPs are negligible (intensity ~1.25 FLOP/B in bf16), so the floor is bandwidth.

Special values follow torch.softmax (the op declares the "special" distribution): -inf
entries give 0 (a masked softmax, case param mask=True), a row that is -inf everywhere gives
NaN (0 / 0), a row holding NaN or +inf is NaN everywhere.
"""

from __future__ import annotations

import functools

from kernelab.check.inputs import DTYPES
from kernelab.ops.base import Case, OpSpec, Work

from . import rows
from .rows import Plan

TEST_WIDTHS = (1, 2, 31, 32, 33, 1000, 1024, 1025, 4097, 8192, 16384, 32769, 65537, 131072, 262144)


def _rows_for(n: int) -> int:
    """Small M, but more than one row (and not a multiple of the 8 rows of a warp-kernel block)."""
    return 7 if n <= 1025 else 3 if n <= 32769 else 2


class Softmax(OpSpec):
    name = "softmax"
    dtypes = ("float32", "bfloat16")
    kernel_entry = "softmax"
    best_variant = "v4_dispatch"
    # fp32: exp2 of (x - m) * log2(e) carries |x - m| * 2^-24 relative error (~2e-6 at |x - m| = 20)
    # plus ~1e-6 from the sum and the scale. bf16: the output rounding, 2^-8 relative.
    tolerances = {"float32": (2e-5, 1e-7), "bfloat16": (1e-2, 1e-6)}
    # "special" (NaN, +-inf, -0.0, denormals sprinkled in): NaN results are defined, as in
    # torch.softmax: a row with NaN or +inf is NaN everywhere, -inf entries give 0.
    distributions = ("normal", "uniform", "large", "special")

    # ---- shapes -------------------------------------------------------------------------
    def test_cases(self) -> list[Case]:
        cases = []
        for dt in self.dtypes:
            cases += [Case((_rows_for(n), n), dt) for n in TEST_WIDTHS]
            cases += [
                Case((1, 1024), dt),  # one row: 7 idle warps in the warp kernel's block
                Case((257, 1000), dt),  # many rows, a partial last block of 8 rows
                # Misaligned row starts: x is a view `offset` elements into its allocation.
                # Co-aligned (y has the same offset): 16-byte accesses after a scalar head.
                Case((5, 1000), dt, offset=1),
                Case((3, 4097), dt, offset=3),
                Case((3, 40000), dt, offset=1),
                Case((2, 131072), dt, offset=3),
                # Mixed: y is aligned and x is not, so stores must fall back to scalars.
                Case((3, 1024), dt, offset=1, layout="mixed_alignment"),
                Case((3, 8192), dt, offset=3, layout="mixed_alignment"),
                Case((2, 100000), dt, offset=1, layout="mixed_alignment"),
                # Masked: -inf entries, and row 1 -inf everywhere (NaN, as in torch).
                Case((7, 1000), dt, params=(("mask", True),)),
                Case((4, 5000), dt, params=(("mask", True),)),
                Case((3, 70000), dt, params=(("mask", True),)),
            ]
        return cases

    def bench_cases(self) -> list[Case]:
        bf16 = [Case(s, "bfloat16") for s in ((32768, 8192), (262144, 1024), (8192, 32768), (2048, 131072))]
        return bf16 + [Case((32768, 8192), "float32"), Case((2048, 131072), "float32")]

    # ---- data ---------------------------------------------------------------------------
    def make_inputs(self, case, seed, device="cuda", dist="normal"):
        import torch

        m, n = case.shape
        x = self.tensor((m, n), case.dtype, seed, device, dist, offset=case.offset)
        if case.param("mask", False):
            g = torch.Generator(device=device)
            g.manual_seed(int(seed) + 7919)
            masked = torch.rand((m, n), generator=g, device=device) < 0.25
            x.masked_fill_(masked, float("-inf"))
            if m > 1:
                x[1].fill_(float("-inf"))
        return {"x": x}

    def make_outputs(self, case, inputs):
        import torch

        m, n = case.shape
        off = 0 if case.layout == "mixed_alignment" else case.offset
        buf = torch.empty(m * n + off, dtype=inputs["x"].dtype, device=inputs["x"].device)
        return {"y": buf[off:].view(m, n)}

    def reference(self, case, inputs):
        import torch

        return {"y": torch.softmax(inputs["x"].double(), dim=-1)}

    def work(self, case) -> Work:
        m, n = case.shape
        itemsize = 4 if case.dtype == "float32" else 2
        return Work(bytes=2 * m * n * itemsize, flops=5 * m * n, flop_unit="fp32")

    def peers(self, case):
        import torch

        def eager(inputs):
            return {"y": torch.softmax(inputs["x"], dim=-1)}

        return {"torch": eager, "torch.compile": torch.compile(eager, dynamic=False)}

    # ---- kernels ------------------------------------------------------------------------
    def plan(self, variant, n: int, cc: tuple[int, int] = (9, 0)) -> Plan | None:
        """The kernel instance and geometry `variant` uses for rows of width n on a GPU of
        compute capability cc (None: the variant cannot hold such rows)."""
        strategy = variant.meta.get("strategy", "rows")
        if strategy not in STRATEGIES:
            raise ValueError(f"{variant.path.name}: unknown `@strategy {strategy}`; use one of {', '.join(STRATEGIES)}")
        return _plan(strategy, variant.meta_int("block", 256), variant.meta_int("rows_per_block", 1), n, tuple(cc))

    def supports(self, variant, case):
        reason = super().supports(variant, case)
        if reason:
            return reason
        n = case.shape[-1]
        # Arch-independent question: can any GPU this variant builds for hold the row?
        if self.plan(variant, n, (9, 0)) is None:
            return f"{variant.name} ({variant.meta.get('strategy')}) holds rows of at most {_limit(variant)} elements; N = {n}"
        return None

    def launch(self, kernel, variant, case, inputs, outputs):
        m, n = case.shape
        if m == 0 or n == 0:
            return
        if n >= 2**31 or m >= 2**31:
            raise ValueError(f"softmax: M = {m} and N = {n} must each be < 2^31 (the kernels index rows with int)")
        p = self.plan(variant, n, rows.arch_cc(kernel))
        if p is None:
            raise ValueError(f"{variant.id} cannot run rows of {n} elements (at most {_limit(variant)}); "
                             f"use {self.best_variant}, which handles any width")
        k = kernel if p.name is None else kernel.module.kernel(f"{p.name}_{DTYPES[case.dtype]}")
        k(inputs["x"], outputs["y"], m, n, grid=p.grid(m), block=p.block, cluster=p.cluster)


ONLINE = Plan("softmax_online_t512", 512)
STRATEGIES = ("warp", "block", "online", "cluster", "dispatch", "rows")


@functools.lru_cache(maxsize=4096)
def _plan(strategy: str, block: int, rows_per_block: int, n: int, cc: tuple[int, int]) -> Plan | None:
    if strategy == "warp":
        return rows.warp_plan("softmax", n)
    if strategy == "block":
        return rows.block_plan("softmax", n)
    if strategy == "online":
        return ONLINE
    if strategy == "cluster":
        return rows.cluster_plan("softmax", n)
    if strategy == "dispatch":
        if n <= rows.MAX_WARP_N:
            return rows.warp_plan("softmax", n)
        if n <= 8192:
            return rows.block_plan("softmax", n)
        if cc >= (9, 0) and n <= rows.MAX_CLUSTER_N:
            return rows.cluster_plan("softmax", n)
        if n <= rows.MAX_BLOCK_N:
            return rows.block_plan("softmax", n)
        return ONLINE
    # "rows": the contract kernel with the header's `@block` / `@rows_per_block` (wrong/ kernels)
    return Plan(None, block, rows_per_block)


def _limit(variant) -> str:
    return {"warp": str(rows.MAX_WARP_N), "block": str(rows.MAX_BLOCK_N),
            "cluster": str(rows.MAX_CLUSTER_N)}.get(variant.meta.get("strategy", ""), "any")


OP = Softmax()
