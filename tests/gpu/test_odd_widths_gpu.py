"""The memory-bound ops' best variants keep their pace on rows of odd width. Session 21 found rmsnorm v4 bf16 at
32768 x 8191 4.8x slower than at 8192 (1196 against 249 us: rows whose weight sits out of x's 16-byte
phase stored y 2 bytes at a time), and no bench shape is odd, so no run showed it. After the fix the
ratios at 32768 rows were 1.10 (rmsnorm bf16), 1.01 (fp32), 1.17 (layernorm v4 bf16), 1.15 (layernorm v5
fp32); before it 4.8, 2.2, 1.38 and 2.2 (docs/runs/2026-12-02-h200-sweep_odd21*.json). Each test times
8191 and 8192 in the same process, cold L2, and fails past 1.3x: a margin for a shared GPU, under
every ratio the old paths gave. Session 22 added gelu_bias (its ODD_VEC path: 1.17x in bf16 at 32768 rows,
the element path 5.1x) and transpose (its shifted kernels; the element path 2.2x at 16383^2 fp32)."""

from __future__ import annotations

import pytest

from kernelab.bench import bench
from kernelab.ops import discover
from kernelab.ops.base import Case
from kernelab.ops.build import run_variant

pytestmark = pytest.mark.gpu

OPS = discover()
ROWS = 16384  # 256 / 512 MiB each way (bf16 / fp32) at 8192: past the L2, as the bench shapes
LIMIT = 1.3


def _median_s(op, v, case) -> float:
    inputs = op.make_inputs(case, 0, "cuda")
    outputs = op.make_outputs(case, inputs)
    m = bench(lambda: run_variant(op, v, case, inputs, outputs), mode="cold", max_wall_s=1.0,
              name=f"{op.name} {v.name} {case.label}")
    return m.median_s


# (op, dtype, aligned shape, the same one element narrower): the norms and gelu_bias at 16384 rows of
# 8192 / 8191 (256 / 512 MiB each way), transpose at 8192^2 / 8191^2 (session 22's shifted kernels: the
# element path took 2.2x at 16383^2 fp32, docs/runs/2026-12-02-h200-sweep_odd22.json).
CASES = [(op, dt, (ROWS, 8192), (ROWS, 8191)) for op in ("rmsnorm", "layernorm", "gelu_bias")
         for dt in ("bfloat16", "float32")]
CASES += [("transpose", dt, (8192, 8192), (8191, 8191)) for dt in ("float32", "bfloat16")]


@pytest.mark.parametrize("op_name,dt,even,odd", CASES, ids=lambda x: x if isinstance(x, str) else "x".join(map(str, x)))
def test_odd_width_runs_near_the_aligned_width(op_name, dt, even, odd):
    op = OPS[op_name]
    v = op.variant(op.best_variant_for(dt))
    times = {}
    for shape in (even, odd, even):  # aligned twice, around the odd run: the lower of the two
        times[shape] = min(times.get(shape, float("inf")), _median_s(op, v, Case(shape, dt)))
    ratio = times[odd] / times[even]
    print(f"{op_name} {v.name} {dt}: {odd} {times[odd] * 1e6:.1f} us, {even} {times[even] * 1e6:.1f} us, {ratio:.2f}x")
    assert ratio <= LIMIT, f"{op_name} {v.name} {dt}: {odd} takes {ratio:.2f}x the time of {even} (limit {LIMIT})"
