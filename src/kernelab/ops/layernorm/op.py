"""layernorm over the last dimension of x [M, N]:
y = (x - mean) / sqrt(var + eps) * weight + bias, with the biased variance (as
torch.nn.functional.layer_norm). fp32 and bf16 in and out, fp32 accumulation; eps is a case
parameter (default 1e-5, F.layer_norm's).

Work: read x once, write y once, read weight and bias once: (2 * M * N + 2 * N) * element
size bytes; about 8 fp32 operations per element, far under the ridge point.

Numerics: the test cases include rows with |mean| >> std (x = 1000 + N(0, 1)), where the
one-pass variance E[x^2] - E[x]^2 cancels catastrophically in fp32 and a plain fp32 sum of
the row loses ~1e-4 of the mean; the kernels sum x - pivot and use the two-pass variance (or exact
merges of per-thread moments). The pivot is the median of x[row][0..2] (ops/common/row_pivot.cuh):
the cases with x[row][0] = 1000 among N(0, 1) (an outlier in column 0) check that it is not x[0].
"""

from __future__ import annotations

from kernelab.ops.base import Case, Work
from kernelab.ops.rmsnorm.op import RowNorm


class LayerNorm(RowNorm):
    name = "layernorm"
    kernel_entry = "layernorm"
    # v5 (two passes through L2, the row's loads issued before the pivot is used): fp32 499.1 / 498.9 us against
    # torch.compile 503.3 / 503.4 and v4 509.9 / 510.1 (docs/runs/2026-12-02-h200-sweep_ln19d.json); bf16 at 256
    # threads a row, six rows an SM, with the peel and the shifted-sum merge (session 23) 253.5-253.8 against v4's
    # 259.4-261.3 and torch.compile's 286.0-286.2 (docs/runs/2026-12-02-h200-sweep_ln23b.json). Session 24's
    # outlier-safe pivots cost bf16 v5 4%: 264.5 against v4's 261.7 in the same run
    # (docs/runs/nvidia-h200-20261202T130958.json; v4 259.4-262.7 across sessions 23-24), so bf16's best is v4
    # again; fp32 v5 498.1, unchanged. Session 26: v5's whole-vector rows kernel (`@vec_kernel`) runs bf16 252.1 /
    # 252.0 us against its general kernel's 259.6 / 259.8 and v4's 260.7 (docs/runs/2026-12-02-h200-sweep_ln26.json):
    # v5 is the best in both dtypes again.
    best_variant = "v5_l2_two_pass"
    has_bias = True
    default_eps = 1e-5
    # fp32: the mean's rounding error (~eps * log2(N) ~ 1e-6 at N = 8192, from an fp32 sum in any
    # order) reaches every y as an absolute error of ~1e-6 * rstd: seen 1.4e-6 on the H200
    # (2026-11-30, 33x8192), so atol is 1e-5. bf16: the output rounding, 2^-8.
    tolerances = {"float32": (1e-5, 1e-5), "bfloat16": (1e-2, 1e-5)}

    def test_cases(self) -> list[Case]:
        cases = super().test_cases()
        for dt in self.dtypes:
            # |mean| >> std: the one-pass variance and a plain fp32 mean fail here.
            cases += [Case((5, 1000), dt, params=(("shift", 1000.0),)),
                      Case((5, 8192), dt, params=(("shift", 1000.0),)),
                      Case((2, 40000), dt, params=(("shift", 1000.0),)),
                      # x[row][0] = 1000 among N(0, 1): sums about x[row][0] (every kernel's pivot until session
                      # 24) missed fp32's atol by 2-9x in v0-v4 and up to 6000x in v5 (Q - S mean cancels);
                      # the median of x[0..2] (../common/row_pivot.cuh) is one of the normal values.
                      Case((5, 8192), dt, params=(("lead", 1000.0),)),
                      Case((2, 40000), dt, params=(("lead", 1000.0),)),
                      Case((3, 2), dt, params=(("lead", 1000.0),))]
        return cases

    def reference(self, case, inputs):
        import torch.nn.functional as F

        n = case.shape[1]
        return {"y": F.layer_norm(inputs["x"].double(), (n,), inputs["weight"].double(), inputs["bias"].double(),
                                  eps=self.eps(case))}

    def work(self, case) -> Work:
        m, n = case.shape
        itemsize = 4 if case.dtype == "float32" else 2
        return Work(bytes=(2 * m * n + 2 * n) * itemsize, flops=8 * m * n, flop_unit="fp32")

    def peers(self, case):
        import torch
        import torch.nn.functional as F

        n, eps = case.shape[1], self.eps(case)

        def eager(inputs):
            return {"y": F.layer_norm(inputs["x"], (n,), inputs["weight"], inputs["bias"], eps=eps)}

        return {"torch": eager, "torch.compile": torch.compile(eager, dynamic=False)}


OP = LayerNorm()
