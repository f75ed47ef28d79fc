"""gemm: C = A · Bᵀ, with A [M, K], B [N, K] and C [M, N], all row-major ("TN").

Layout. B is stored [N, K], like nn.Linear's weight (y = x · Wᵀ): both operands then have K
contiguous, which is what the tensor-core paths want (ldmatrix without .trans in v6; K-major
shared-memory tiles for wgmma in v7, the layout every public Hopper GEMM uses), and it lets
one tile loader serve A and B in the fp32 kernels. The peer is cuBLAS through torch with the
same layout, `a @ b.T` (torch passes the transpose to cuBLAS as a flag, no copy).

Dtypes. fp32 in and out with fp32 FFMA math, no TF32 (v0-v5, and v9: v5 tuned by macros, see
scripts/sweep_gemm_fp32.py; the peer runs with torch.backends.cuda.matmul.allow_tf32 = False).
bf16 in and out with fp32 accumulation (v6-v8; tensor cores; v8 is the stretch variant, v7 in
2-block clusters with TMA multicast).
Shape of a Case: (M, N, K).

Work. Read A and B once and write C once: (M*K + N*K + M*N) * element size bytes; 2*M*N*K
FLOPs on the fp32 units (v0-v5, v9) or the bf16 tensor cores (v6-v8). At 4096^3 that is 137
GFLOP against 201 MB (fp32): 680 FLOP/B, far right of the ridge (67 TFLOP/s / 4.3 TB/s = 16),
so the floor is the arithmetic (2.05 ms fp32 at 67 TFLOP/s; 139 us bf16 at ~990).

Inputs and tolerances. Inputs are drawn with sigma = K^(-1/4), so every exact C[m][n] has
unit variance at every K (the trick of ops/sum): then one error scale fits all shapes.
  - fp32 (vs a float64 reference): each thread sums K products with fp32 FMAs; the rounding
    error of such a sum has standard deviation ~ u * K^(3/4) / sqrt(2) (u = 2^-24: the partial
    sums have variance k / sqrt(K), and each add rounds at u times their size). Over up to 16M
    outputs the largest is ~6 sigma ~ 4 u K^(3/4): atol = 8 u K^(3/4) (2.4e-4 at K = 4096).
    A kernel that rounds its inputs to bf16 or uses TF32 errs by ~2e-3 and ~4e-4 per output
    (sigma), so it fails; rtol = 2^-20 only matters for the rare |C| >> 1.
  - bf16 (vs an fp32-accumulated reference, A.float() @ B.float().T without TF32): the
    output is rounded once to bf16, at most half a bf16 spacing = 2^-8 |C| (rtol); on top,
    both sides accumulate in fp32 in different orders, and the tensor cores do not round every
    internal add to nearest, so atol = 32 u K^(3/4), 4x the fp32 allowance (9.8e-4 at 4096,
    2.0e-3 at 11008). It grows with K because the accumulation error does.
`tolerance(case)` gives the pair for a case; `tolerances` (the per-dtype table the generic
checker reads) holds it at the largest K each dtype is tested or benchmarked with.

Launch metadata, from each variant's header:
  @block X [Y]     threads per block (2-D for the naive kernels)
  @tile BM BN      the C tile one block computes: grid = (ceil(N / BN), ceil(M / BM))
  @smem BYTES      dynamic shared memory per block (0 if absent)
  @grid persistent one block per SM, looping over tiles (v7, v8; launchers in vN_*.py)
  @bk BK           the k-block of one TMA box (v7, v8: 64 bf16 = one 128-byte swizzle span)
  @cluster C       blocks per thread-block cluster (v8: 2, along M)
  @k_multiple N    the kernel needs K % N == 0 (16-byte rows for cp.async / TMA)
  @align BYTES     A and B must start on a BYTES boundary
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kernelab.ops.base import Case, OpSpec, Variant, Work

ITEMSIZE = {"float32": 4, "bfloat16": 2}
UNIT_ROUNDOFF_FP32 = 2.0 ** -24

# Tolerance model as data: dtype -> (rtol, c) with atol = c * 2^-24 * K^(3/4). See the docstring.
TOLERANCE = {
    "float32": (2.0 ** -20, 8.0),
    "bfloat16": (2.0 ** -8, 32.0),
}

SQUARE_FP32 = (1024, 2048, 4096)
SQUARE_BF16 = (1024, 2048, 4096, 8192)
LLM_M = (1, 16, 128, 4096)
LLM_NK = ((4096, 4096), (11008, 4096), (4096, 11008))  # (N, K): attention/MLP projections of a 7B model


def tolerance_for(dtype: str, k: int) -> tuple[float, float]:
    rtol, c = TOLERANCE[dtype]
    return rtol, c * UNIT_ROUNDOFF_FP32 * max(k, 1) ** 0.75


@dataclass(frozen=True)
class Geometry:
    grid: tuple[int, int]
    block: tuple[int, ...]
    smem: int
    tile: tuple[int, int]


class Gemm(OpSpec):
    name = "gemm"
    dtypes = ("float32", "bfloat16")
    kernel_entry = "gemm"
    best_variant = "v7_wgmma_tma"  # v8 (clusters) takes over if the H200 run shows it faster
    # What the torch operator tries, in order, per dtype (the first that supports() the call).
    fallback_variants = {"bfloat16": ("v7_wgmma_tma", "v6_mma_sync"), "float32": ("v5_warptile_dbuf",)}
    distributions = ("normal", "uniform")  # "large" (x1e30 in fp32) overflows a product of two

    # ---- shapes -------------------------------------------------------------------------
    def test_cases(self) -> list[Case]:
        # Small and odd shapes around every tile size the variants use (16, 128, 256; k-blocks of
        # 8, 16, 64), M = 1 and 16 (decode), and views one element into their allocation.
        fp32 = [(1, 1, 1), (17, 31, 45), (127, 129, 65), (128, 128, 128), (256, 256, 256), (1, 257, 1000),
                (16, 130, 1001), (200, 72, 8), (1000, 1000, 1000)]
        bf16 = [(1, 1, 1), (17, 31, 45), (16, 24, 64), (127, 129, 72), (128, 256, 64), (256, 256, 256),
                (1, 4096, 1000), (16, 1000, 4096), (200, 72, 8), (1000, 1000, 1000), (4095, 4097, 1000)]
        cases = [Case(s, "float32") for s in fp32] + [Case(s, "bfloat16") for s in bf16]
        # Offset views: fp32 +1 element (4 bytes: vector loads must fall back to scalar ones);
        # bf16 +8 elements (16 bytes: still TMA/cp.async-aligned) and +1 (2 bytes: refused by v6/v7).
        cases += [Case((127, 129, 65), "float32", offset=1), Case((64, 64, 64), "float32", offset=1),
                  Case((128, 256, 64), "bfloat16", offset=8), Case((128, 256, 64), "bfloat16", offset=1)]
        return cases

    def bench_cases(self) -> list[Case]:
        cases = [Case((s, s, s), "float32") for s in SQUARE_FP32]
        cases += [Case((s, s, s), "bfloat16") for s in SQUARE_BF16]
        cases += [Case((m, n, k), "bfloat16") for m in LLM_M for (n, k) in LLM_NK]
        return cases

    def quick_cases(self) -> list[Case]:
        return [Case((4096, 4096, 4096), "float32"), Case((4096, 4096, 4096), "bfloat16")]

    # ---- data ---------------------------------------------------------------------------
    def input_scale(self, case: Case, dist: str) -> float:
        """sigma = K^(-1/4) per operand: every exact C[m][n] then has unit variance."""
        k = max(case.shape[2], 1)
        return (math.sqrt(3.0) if dist == "uniform" else 1.0) * k ** -0.25

    def make_inputs(self, case, seed, device="cuda", dist="normal"):
        m, n, k = case.shape
        s = self.input_scale(case, dist)
        return {
            "a": self.tensor((m, k), case.dtype, seed, device, dist, offset=case.offset, scale=s),
            "b": self.tensor((n, k), case.dtype, seed + 1, device, dist, offset=case.offset, scale=s),
        }

    def make_outputs(self, case, inputs):
        import torch

        m, n, _ = case.shape
        return {"c": torch.empty((m, n), dtype=inputs["a"].dtype, device=inputs["a"].device)}

    def reference(self, case, inputs):
        a, b = inputs["a"], inputs["b"]
        if case.dtype == "float32":
            return {"c": a.double() @ b.double().t()}
        with no_tf32():  # fp32 accumulation of exactly upcast bf16 inputs (products are exact in fp32)
            return {"c": a.float() @ b.float().t()}

    def tolerance(self, case: Case) -> tuple[float, float]:
        """(rtol, atol) for this case: atol grows like K^(3/4) (see the module docstring)."""
        return tolerance_for(case.dtype, case.shape[2])

    @property
    def tolerances(self) -> dict[str, tuple[float, float]]:
        """The per-dtype table the generic checker reads: `tolerance` at the largest K in use."""
        kmax = {}
        for c in self.test_cases() + self.bench_cases():
            kmax[c.dtype] = max(kmax.get(c.dtype, 1), c.shape[2])
        return {dt: tolerance_for(dt, k) for dt, k in kmax.items()}

    def work(self, case) -> Work:
        m, n, k = case.shape
        return Work(bytes=(m * k + n * k + m * n) * ITEMSIZE[case.dtype], flops=2 * m * n * k,
                    flop_unit="fp32" if case.dtype == "float32" else "bf16")

    def peers(self, case):
        import torch

        def cublas(inputs):
            with no_tf32():
                return {"c": torch.matmul(inputs["a"], inputs["b"].t())}

        return {"cublas": cublas}

    # ---- kernels ------------------------------------------------------------------------
    def supports(self, variant: Variant, case: Case) -> str | None:
        reason = super().supports(variant, case)
        if reason:
            return reason
        m, n, k = case.shape
        kmul = variant.meta_int("k_multiple", 1)
        if k % kmul:
            return (f"{variant.name} moves 16-byte chunks of each row (cp.async / TMA), so K must be a multiple of "
                    f"{kmul}; K = {k} is not. Pad K with zeros to {-(-k // kmul) * kmul}, or use an earlier variant")
        align = variant.meta_int("align", 1)
        off_bytes = case.offset * ITEMSIZE[case.dtype]
        if off_bytes % align:
            return (f"{variant.name} needs A and B to start {align}-byte aligned; this case's views start {off_bytes} "
                    f"bytes into their allocation. Pass .clone()d tensors")
        return None

    def geometry(self, variant: Variant, case: Case) -> Geometry:
        """Grid, block and shared memory from the variant's header (no GPU needed)."""
        m, n, _ = case.shape
        block = tuple(int(x) for x in variant.meta.get("block", "256").split())
        tile = tuple(int(x) for x in variant.meta["tile"].split()) if "tile" in variant.meta else None
        if tile is None or len(tile) != 2:
            raise KeyError(f"{variant.path.name}: needs `@tile BM BN` in its header comment")
        bm, bn = tile
        grid = (-(-n // bn), -(-m // bm))
        return Geometry(grid=grid, block=block, smem=variant.meta_int("smem", 0), tile=(bm, bn))

    def launch(self, kernel, variant, case, inputs, outputs):
        m, n, k = case.shape
        if m == 0 or n == 0:
            return
        check_alignment(variant, inputs)
        g = self.geometry(variant, case)
        kernel(inputs["a"], inputs["b"], outputs["c"], m, n, k, grid=g.grid, block=g.block, shared_mem=g.smem)


def check_alignment(variant: Variant, inputs: dict) -> None:
    """The run-time twin of supports()'s `@align` check, for tensors that did not come from a Case."""
    align = variant.meta_int("align", 1)
    for name in ("a", "b"):
        ptr = inputs[name].data_ptr()
        if ptr % align:
            raise ValueError(f"{variant.name}: {name} starts at {ptr:#x}, not {align}-byte aligned "
                             f"(ptr % {align} == {ptr % align}). Fix: pass {name}.clone()")


class no_tf32:
    """Context manager: fp32 matmuls in torch run in full fp32 (cuBLAS SGEMM, not TF32)."""

    def __enter__(self):
        import torch

        self._saved = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = False
        return self

    def __exit__(self, *exc):
        import torch

        torch.backends.cuda.matmul.allow_tf32 = self._saved
        return False


OP = Gemm()
