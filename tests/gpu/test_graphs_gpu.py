"""kernelab.graphs on a GPU: every batch 1..64 matches eager, and buckets share memory."""

import pytest
import torch

from kernelab.graphs import BucketedGraph

pytestmark = pytest.mark.gpu


def test_bucketed_graph_matches_eager_for_every_batch():
    w = torch.randn(256, 256, device="cuda")

    def step(x):
        return torch.relu(x @ w) + 1.0

    g = BucketedGraph(step, example=torch.randn(64, 256, device="cuda"))
    for n in range(1, 65):
        x = torch.randn(n, 256, device="cuda")
        # cuBLAS may pick another algorithm for the padded bucket's shape: fp32 rounding differs.
        torch.testing.assert_close(g(x), step(x), rtol=1e-4, atol=1e-4)
    mem = g.memory_per_bucket
    assert set(mem) == {1, 2, 4, 8, 16, 32, 64}
    assert mem[64] > 0 and min(mem.values()) >= 0, mem  # the largest capture sizes the pool; none shrinks it
    assert sum(v for k, v in mem.items() if k < 64) <= max(mem[64], 1) * 2, mem


def test_shape_mismatch_is_refused():
    g = BucketedGraph(lambda x: x * 2, example=torch.randn(4, 8, device="cuda"), buckets=(1, 2, 4))
    with pytest.raises(ValueError, match="does not match"):
        g(torch.randn(2, 9, device="cuda"))
