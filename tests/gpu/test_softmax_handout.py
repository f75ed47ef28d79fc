"""softmax's row handout with SB_HANDOUT (staged_rows.cuh, session 31) on a GPU: v12_dynamic_rows and v4_dispatch
built with SB_HANDOUT 1 (the first S + 1 rows handed out statically, q + j G, and the clusters counted in the row
counter's own 8-byte word) and 2 (the word, first rows by atomics), and with SB_FILL 1 (session 32: stage 0 issued
alone, the other stages once it has landed), alone and with SB_HANDOUT 1.

What could go wrong is the handout's bookkeeping, not the arithmetic: a row handed out twice or never (NaN left in
y, which the comparison rejects), a cluster that never counts itself done (the word left nonzero, so the next launch
on the stream skips rows), or one counted twice (reset too early: the next launch starts mid-way). So each case runs
twice on the same stream with the word checked zero after each launch, at row counts around the clusters in flight:
fewer rows than clusters (some clusters' first static row is already past M: done in the prologue), exactly as many,
one more, the static head's S + 1 rows a cluster and one past it, and enough rows for the ring to wrap; then a CUDA
graph replays a launch. SB_FILL's own risk is a stage issued twice or never when a cluster has fewer than S rows
(a hang, or a stage waited on that nothing fills): the row counts below 2 x the clusters cover it."""

from __future__ import annotations

import pytest
import torch

from kernelab.gpu import Module, compile_file, default_arch
from kernelab.ops import discover
from kernelab.ops.base import Case
from kernelab.ops.build import target_arch
from kernelab.ops.softmax import op as softmax_op

from ._softmax_rows import assert_counters_zero_and_graph_replays, planned_fit, run_kernel, sm90_only

pytestmark = pytest.mark.gpu

OP = discover()["softmax"]
_modules: dict = {}
_needs_hopper = sm90_only("v12's row handout")
BUILDS = [("v12_dynamic_rows", (("SB_HANDOUT", 1),)), ("v12_dynamic_rows", (("SB_HANDOUT", 2),)),
          ("v4_dispatch", (("SB_HANDOUT", 1),)), ("v4_dispatch", (("SB_FILL", 1),)),
          ("v12_dynamic_rows", (("SB_FILL", 1), ("SB_HANDOUT", 1)))]


def _build_id(build) -> str:
    return build[0] + "," + ",".join(f"{k}={v}" for k, v in build[1])


def _build(name: str, knobs: tuple):
    if (name, knobs) not in _modules:
        v = OP.variant(name)
        d = {**OP.defines(v), **dict(knobs)}
        _modules[(name, knobs)] = (v, Module(compile_file(v.path, arch=target_arch(v, default_arch()).sm, defines=d),
                                             d))
    return _modules[(name, knobs)]


def _word() -> list[int]:
    return softmax_op.dynamic_work(torch.device("cuda", torch.cuda.current_device())).tolist()


# (N, dtype, offset): v12's clusters of 8 (bf16 131072, the bench shape's plan), misaligned fp32 (head / tail
# scalars), and v4's fp32 131072 pick (t128's `_full` instance, 3 stages).
SHAPES = [(131072, "bfloat16", 0), (65537, "float32", 1), (131072, "float32", 0)]


@pytest.mark.parametrize("build", BUILDS, ids=_build_id)
@pytest.mark.parametrize("n,dtype,offset", SHAPES, ids=str)
def test_every_row_once_and_the_word_back_to_zero(build, n, dtype, offset):
    v, mod = _build(*build)
    p, fit = planned_fit(v, n, dtype)
    assert fit >= 2, f"{p}: {fit} clusters fit; the cases below need at least 2"
    per_vec = 16 // (2 if dtype == "bfloat16" else 4)
    stages = p.smem // (-(-n // (per_vec * p.cluster)) * 16)  # the ring's stages (bulk_plan: S x the block's share)
    head = (stages + 1) * fit  # rows the static head hands out: S + 1 a cluster
    failures = []
    for m in sorted({1, fit - 1, fit, fit + 1, 2 * fit + 1, head - 1, head, head + 1, 7 * fit + 3}):
        case = Case((m, n), dtype, offset=offset)
        for launch in range(2):  # the second launch takes rows from the word the first one left
            cmp, kernel = run_kernel(v, mod, case, seed=launch)
            word = _word()
            if not cmp.ok or word != [0, 0]:
                failures.append(f"M {m} launch {launch} via {kernel} ({fit} clusters): word {word}, "
                                f"{cmp.summary(max_lines=2)}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("build", BUILDS, ids=_build_id)
def test_graph_replay(build):
    v, mod = _build(*build)
    p, fit = planned_fit(v, 131072, "bfloat16")
    assert_counters_zero_and_graph_replays(v, mod, [Case((3 * fit + 1, 131072), "bfloat16")])
