"""rmsnorm over the last dimension of x [M, N]: y = x / sqrt(mean(x^2) + eps) * weight.

fp32 and bf16 in and out, fp32 accumulation; eps is a case parameter (default 1e-6, the
value the reference and torch peers use: F.rms_norm(x, (N,), weight, eps)).

Work: read x once, write y once, read weight once: (2 * M * N + N) * element size bytes;
about 4 fp32 operations per element (square-add, two multiplies), far under the ridge point.

`RowNorm` here is also the base of layernorm (same shapes, inputs, plans and launch; layernorm
adds a bias and a shifted-mean test case).
"""

from __future__ import annotations

import functools

from kernelab.check.inputs import DTYPES
from kernelab.ops.base import Case, OpSpec, Work, resident_blocks
from kernelab.ops.softmax import rows
from kernelab.ops.softmax.rows import Plan

TEST_WIDTHS = (1, 7, 64, 1000, 1024, 4096, 8192, 16385)
TEST_ROWS = (1, 5, 33)
STRATEGIES = ("rows", "registers", "fast_rows")
BLOCK_THREADS = (64, 128, 256, 512, 1024)  # fast_rows block instances


class RowNorm(OpSpec):
    """A normalisation of each row of x [M, N] with a per-column weight (and bias)."""

    dtypes = ("float32", "bfloat16")
    # "large" is drawn as N(0, 1e4^2) for both dtypes: fp32's 1e30 scale would overflow x^2 in
    # fp32 accumulation, as it does in torch, and no fp32 kernel could match the reference.
    distributions = ("normal", "uniform", "large")
    has_bias = False
    default_eps = 1e-6

    # ---- shapes -------------------------------------------------------------------------
    def test_cases(self) -> list[Case]:
        cases = []
        for dt in self.dtypes:
            cases += [Case((m, n), dt) for n in TEST_WIDTHS for m in TEST_ROWS]
            cases += [
                Case((2, 40000), dt),  # wider than a block holds: the streaming kernel
                # Misaligned x (y co-aligned): 16-byte accesses after a scalar head.
                Case((5, 1000), dt, offset=1),
                Case((5, 4097), dt, offset=3),
                Case((3, 40001), dt, offset=1),
                # Mixed: y aligned, x not: stores fall back to scalars.
                Case((3, 8192), dt, offset=1, layout="mixed_alignment"),
                # weight (and bias) are views at offset 1: their loads fall back to scalars.
                Case((5, 1000), dt, layout="misaligned_params"),
                Case((33, 1024), dt, layout="misaligned_params"),
                # eps large enough to matter: a kernel that drops it fails here.
                Case((5, 1000), dt, params=(("eps", 0.1),)),
            ]
        return cases

    def bench_cases(self) -> list[Case]:
        return [Case((32768, 8192), "bfloat16"), Case((32768, 8192), "float32")]

    def eps(self, case: Case) -> float:
        return float(case.param("eps", self.default_eps))

    # ---- data ---------------------------------------------------------------------------
    def make_inputs(self, case, seed, device="cuda", dist="normal"):
        m, n = case.shape
        scale = 1.0
        if dist == "large":
            dist, scale = "normal", 1e4
        x = self.tensor((m, n), case.dtype, seed, device, dist, offset=case.offset, scale=scale)
        shift = case.param("shift", 0.0)
        if shift:
            x.add_(shift)
        lead = case.param("lead", 0.0)
        if lead:  # column 0 an outlier (an LLM's massive activation): centring sums on x[row][0] fails here
            x[:, 0] = lead
        poff = 1 if case.layout == "misaligned_params" else 0
        inputs = {"x": x, "weight": self.tensor((n,), case.dtype, seed + 1, device, "normal", offset=poff)}
        if self.has_bias:
            inputs["bias"] = self.tensor((n,), case.dtype, seed + 2, device, "normal", offset=poff)
        return inputs

    def make_outputs(self, case, inputs):
        import torch

        m, n = case.shape
        off = case.offset if case.layout != "mixed_alignment" else 0
        buf = torch.empty(m * n + off, dtype=inputs["x"].dtype, device=inputs["x"].device)
        return {"y": buf[off:].view(m, n)}

    def reference(self, case, inputs):
        import torch.nn.functional as F

        n = case.shape[1]
        return {"y": F.rms_norm(inputs["x"].double(), (n,), inputs["weight"].double(), eps=self.eps(case))}

    def work(self, case) -> Work:
        m, n = case.shape
        itemsize = 4 if case.dtype == "float32" else 2
        return Work(bytes=(2 * m * n + n) * itemsize, flops=4 * m * n, flop_unit="fp32")

    def peers(self, case):
        import torch
        import torch.nn.functional as F

        n, eps = case.shape[1], self.eps(case)

        def eager(inputs):
            return {"y": F.rms_norm(inputs["x"], (n,), inputs["weight"], eps=eps)}

        return {"torch": eager, "torch.compile": torch.compile(eager, dynamic=False)}

    # ---- kernels ------------------------------------------------------------------------
    def plan(self, variant, n: int, dtype: str = "float32") -> Plan:
        """Which kernel instance and geometry `variant` uses for rows of width n (of `dtype`:
        `@strategy fast_rows` sets elements per thread per dtype; the instance names exist for both)."""
        strategy = variant.meta.get("strategy", "rows")
        if strategy not in STRATEGIES:
            raise ValueError(f"{variant.path.name}: unknown `@strategy {strategy}`; use one of {', '.join(STRATEGIES)}")
        elems = self.elems_per_thread(variant, dtype) if strategy == "fast_rows" else 0
        return _plan(self.kernel_entry, strategy, variant.meta_int_for("block", dtype, 256),
                     variant.meta_int("rows_per_block", 1), n, elems)

    @staticmethod
    def elems_per_thread(variant, dtype: str) -> int:
        """`@elems_bf16 E` / `@elems_f32 E`: elements per thread of a fast_rows block instance."""
        return variant.meta_int("elems_bf16" if dtype == "bfloat16" else "elems_f32")

    def defines(self, variant) -> dict:
        # fast_rows: the header is the one place the elements per thread are written; plan() and
        # the kernels (macros ELEMS_BF16 / ELEMS_F32) both read them from it.
        if variant.meta.get("strategy") == "fast_rows":
            return {"ELEMS_BF16": self.elems_per_thread(variant, "bfloat16"),
                    "ELEMS_F32": self.elems_per_thread(variant, "float32")}
        if variant.meta.get("strategy", "rows") == "rows":
            # The contract kernel's launch geometry (plan() below) as macros, so a kernel sized at
            # compile time (rmsnorm v4 / layernorm v5: shared slots, launch bounds, threads per row)
            # matches the launch, also when a sweep overrides the header values.
            return {"BLOCK": variant.meta_int("block", 256), "ROWS_PER_BLOCK": variant.meta_int("rows_per_block", 1),
                    **variant.dtype_defines("block", "vec_block")}
        return {}

    def static_kernel(self, variant, case):
        """The launched kernel for the case's layout: its rows are whole aligned vectors unless it is an offset
        view or has misaligned parameters (torch's allocations are aligned)."""
        itemsize = 2 if case.dtype == "bfloat16" else 4
        whole = case.offset == 0 and case.layout != "misaligned_params" and case.shape[1] * itemsize % 16 == 0
        return self._instance(variant, case, self.plan(variant, case.shape[1], case.dtype), whole)

    def _instance(self, variant, case, p: Plan, whole: bool) -> tuple[str, int]:
        """(kernel, block) of plan p: the plan's instance (fast_rows, registers), else `@vec_kernel`'s build where
        every row is whole aligned vectors (`whole`), else the contract kernel. launch and static_kernel both ask."""
        sfx = DTYPES[case.dtype]
        if p.name is not None:
            return f"{p.name}_{sfx}", p.block
        vec = variant.meta.get("vec_kernel")
        if vec and whole:  # the whole-vector build, at its own block where the header gives one (`@vec_block_bf16`)
            return f"{vec}_{sfx}", variant.meta_int_for("vec_block", case.dtype, p.block)
        return self.kernel_name(case.dtype), p.block

    def supports(self, variant, case):
        reason = super().supports(variant, case)
        if reason:
            return reason
        self.plan(variant, case.shape[1], case.dtype)  # raises on an unknown strategy
        return None

    def launch(self, kernel, variant, case, inputs, outputs):
        m, n = case.shape
        if m == 0 or n == 0:
            return
        if n >= 2**31 or m >= 2**31:
            raise ValueError(f"{self.name}: M = {m} and N = {n} must each be < 2^31 (the kernels index rows with int)")
        p = self.plan(variant, n, case.dtype)
        params = (inputs["weight"], inputs["bias"]) if self.has_bias else (inputs["weight"],)
        whole = bool(variant.meta.get("vec_kernel")) and whole_vectors(n, inputs["x"], outputs["y"], *params)
        name, block = self._instance(variant, case, p, whole)
        k = kernel if name == self.kernel_name(case.dtype) else kernel.module.kernel(name)
        grid = p.grid(m)
        if variant.meta.get("grid") == "persistent" and p.capacity is not None:
            # `@grid persistent` (v3): the row-in-registers instances loop over rows, so the grid
            # is what the GPU holds at once (x `@waves`, default 1), capped by the rows.
            grid = min(grid, max(1, resident_blocks(k, block) * variant.meta_int("waves", 1)))
        k(inputs["x"], *params, outputs["y"], m, n, self.eps(case), grid=grid, block=block)


def whole_vectors(n: int, *tensors) -> bool:
    """Every row of every tensor is whole 16-byte vectors at 16-byte-aligned addresses: n elements
    a row fill whole vectors and each tensor starts on a 16-byte boundary (rows are contiguous, the
    op contract). `@vec_kernel K` variants launch K_<dtype> then, a build with no head or tail
    scalars, no per-row alignment checks and no element-by-element bodies (layernorm v5: ~15% fewer
    instructions a row, sm_90 SASS)."""
    return (n * tensors[0].element_size()) % 16 == 0 and all(t.data_ptr() % 16 == 0 for t in tensors)


@functools.lru_cache(maxsize=4096)
def _plan(prefix: str, strategy: str, block: int, rows_per_block: int, n: int, elems: int = 0) -> Plan:
    if strategy == "fast_rows":
        # A warp per row up to 1024 (rows.py's instances); then one block of the fewest threads
        # P (a power of two, 64..1024) with P x elems >= n; wider rows stream.
        warp = rows.warp_plan(prefix, n)
        if warp is not None:
            return warp
        for t in BLOCK_THREADS:
            if n <= t * elems:
                return Plan(f"{prefix}_block_t{t}", t, capacity=t * elems)
        return Plan(f"{prefix}_stream_t512", 512)
    if strategy == "registers":
        # The row in registers: a warp per row up to 1024, a block up to 32768; beyond, stream.
        return rows.warp_plan(prefix, n) or rows.block_plan(prefix, n) or Plan(f"{prefix}_stream_t512", 512)
    return Plan(None, block, rows_per_block)  # "rows": the contract kernel, header geometry


class RMSNorm(RowNorm):
    name = "rmsnorm"
    kernel_entry = "rmsnorm"
    # v4 248.0 / 497.0 us vs torch.compile 246.8 / 495.7 and v2 254.5 / 506.1 (bf16 / fp32, 32768 x 8192,
    # one H200 process: docs/runs/2026-11-30-h200-sweep_membound_s7.json)
    best_variant = "v4_l2_two_pass"
    # fp32: a few roundings and rsqrt's 2 ulp: ~1e-6 relative. bf16: the output rounding, 2^-8.
    tolerances = {"float32": (1e-5, 1e-6), "bfloat16": (1e-2, 1e-5)}
    default_eps = 1e-6


OP = RMSNorm()
