"""CUDA graphs for a variable batch (seeds/003, "streams and graphs" and the second exercise),
measured on kernelab.graphs.BucketedGraph, the utility that ships for it.

The step is a small decode-like MLP: 8 layers of a 1024 x 1024 bf16 matmul and a ReLU (16
kernels, each a few microseconds), so launching it eagerly costs about as much host time as
the GPU spends on it. For each bucket (1, 2, 4, ..., 64):
- eager: the GPU time of one step (bench, hot) and its host time (Measurement.host_enqueue_s);
- graph: the same for one BucketedGraph call (copy into the static input, pad, replay);
- a stream of steps runs at max(host, GPU) per step, so that is the time compared.
Memory: the seeds say the price of bucketing is memory x buckets. We capture one graph per
bucket on its own (a private pool each, as plain torch.cuda.graph does) and measure what each
adds to torch's reserved memory; BucketedGraph shares one pool, captured largest first.
"""

from __future__ import annotations

from ._common import EFFECT, about, fmt_time, timed
from .base import Check, Verdict, experiment

BUCKETS = (1, 2, 4, 8, 16, 32, 64)
SPEEDUP = "graph step against eager, the slowest bucket's speedup (max(host, GPU) per step)"
MEMORY = "memory of one graph per bucket (separate pools) / memory of one graph"
SAME_RESULT = "bucketed graph output equals eager output (batches 1, 5, 33, 64)"
WIDTH, LAYERS = 1024, 8


def step_time(host_s: float, gpu_s: float) -> float:
    """Time per step of a stream of steps: the host and the GPU overlap, the slower one sets the pace."""
    return max(host_s, gpu_s)


def buckets_verdict(speedups: dict, memory_each: dict, same: bool) -> Verdict:
    """speedups: bucket -> eager/graph step time; memory_each: bucket -> bytes its own capture reserved."""
    largest = max(memory_each.values())
    return Verdict([
        Check(SPEEDUP, min(speedups.values()), 1.0 + EFFECT, None, "x"),
        Check(MEMORY, sum(memory_each.values()) / largest if largest else 0.0, *about(len(memory_each)), "x"),
        Check(SAME_RESULT, float(same), 1, 1),
    ], note="1 = yes, 0 = no for the last check. BucketedGraph shares one pool across buckets (see the recorded "
            "'shared_pool_bytes'), which is how it avoids paying memory x buckets")


def _model(seed: int = 0):
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    weights = [(torch.randn(WIDTH, WIDTH, device="cuda", generator=g) / WIDTH**0.5).to(torch.bfloat16)
               for _ in range(LAYERS)]

    def step(x):
        for w in weights:
            x = torch.relu(x @ w)
        return x
    return step, weights


def _capture_alone(step, example):
    """Capture `step` on its own (a private memory pool); return (graph, output, reserved bytes it added)."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            step(example)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    # Without this the capture reused cached free blocks and added 0 bytes of reserved memory
    # (first H200 run, 2026-11-30): release them, so the graph's own pool has to allocate.
    torch.cuda.empty_cache()
    before = torch.cuda.memory_reserved()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = step(example)
    torch.cuda.synchronize()
    return graph, out, torch.cuda.memory_reserved() - before


@experiment("graph_buckets", title="CUDA graph buckets for a batch of 1 to 64",
            claim="A CUDA graph replays a whole sequence of launches for the host cost of one, but its shapes are "
                  "fixed; for a batch that varies from 1 to 64, capture one graph per bucket (1, 2, 4, ..., 64) and "
                  "pad each batch up to its bucket. The price is memory x the number of buckets.",
            source="seeds/003 §sync and streams, §exercises, answer 2")
def graph_buckets(ctx):
    import torch

    from ..graphs import BucketedGraph, padding_waste

    torch.cuda.empty_cache()
    step, weights = _model()
    example = torch.zeros(max(BUCKETS), WIDTH, dtype=torch.bfloat16, device="cuda")
    before = torch.cuda.memory_reserved()
    bucketed = BucketedGraph(step, example, buckets=BUCKETS)
    shared_total = torch.cuda.memory_reserved() - before
    ctx.log(f"BucketedGraph: {len(BUCKETS)} graphs captured, shared pool {shared_total / 2**20:.1f} MiB")
    ctx.record("shared_pool_bytes", shared_total)
    ctx.record("shared_pool_per_bucket", {str(k): v for k, v in bucketed.memory_per_bucket.items()})

    g = torch.Generator(device="cuda").manual_seed(1)
    same = True
    for b in (1, 5, 33, 64):
        x = torch.randn(b, WIDTH, device="cuda", generator=g).to(torch.bfloat16)
        same &= bool(torch.allclose(bucketed(x).float(), step(x).float(), rtol=2e-2, atol=2e-2))
    ctx.log(f"graph output matches eager for batches 1, 5, 33, 64: {same}")

    speedups, rows = {}, {}
    for b in BUCKETS:
        x = torch.randn(b, WIDTH, device="cuda", generator=g).to(torch.bfloat16)
        eager = timed(ctx, lambda x=x: step(x), f"eager step, batch {b}", mode="hot", key=f"eager_{b}")
        graph = timed(ctx, lambda x=x: bucketed(x), f"graph step, batch {b}", mode="hot", key=f"graph_{b}")
        te = step_time(eager.host_enqueue_s, eager.median_s)
        tg = step_time(graph.host_enqueue_s, graph.median_s)
        speedups[b] = te / tg
        rows[b] = {"eager_host_s": eager.host_enqueue_s, "eager_gpu_s": eager.median_s, "graph_host_s":
                   graph.host_enqueue_s, "graph_gpu_s": graph.median_s, "speedup": speedups[b]}
        ctx.log(f"batch {b}: eager host {fmt_time(eager.host_enqueue_s)} / GPU {fmt_time(eager.median_s)}, graph host "
                f"{fmt_time(graph.host_enqueue_s)} / GPU {fmt_time(graph.median_s)}: {speedups[b]:.2f}x")
    ctx.record("per_bucket", {str(k): v for k, v in rows.items()})
    torch.cuda.synchronize()

    memory_each, kept = {}, []
    for b in BUCKETS:
        graph, out, added = _capture_alone(step, example[:b].clone())
        memory_each[b] = added
        kept.append((graph, out))
    ctx.log("one graph per bucket, separate pools: " + ", ".join(f"{b}: {v / 2**20:.1f} MiB" for b, v in
                                                                  memory_each.items()))
    ctx.record("separate_pool_bytes", {str(k): v for k, v in memory_each.items()})
    for graph, _ in kept:
        graph.reset()
    del kept
    torch.cuda.empty_cache()
    waste = padding_waste(range(1, max(BUCKETS) + 1), BUCKETS)
    ctx.log(f"padding: batches 1..{max(BUCKETS)} equally likely do {100 * waste:.0f}% of their rows on padding")
    ctx.record("padding_waste_uniform_1_64", waste)
    return buckets_verdict(speedups, memory_each, same)
