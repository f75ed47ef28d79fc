"""CUDA Graphs for a variable batch: one captured graph per bucket, batches padded up to it.

A graph replays a fixed sequence of launches on fixed addresses, so a batch that changes
from step to step (decode with 1-64 requests) cannot use one graph. The standard answer
(seeds/003, "CUDA Graph buckets"; vLLM does this) is to capture one graph per bucket size
(1, 2, 4, ..., 64), copy each batch into the static input of the smallest bucket that
holds it, pad the rest, replay, and slice the result. The graphs share one memory pool,
captured largest first, so the buckets together cost about as much memory as the largest.

    step = BucketedGraph(model_step, example=torch.randn(64, 4096, device="cuda"))
    y = step(x)          # x has 1..64 rows; runs the 8-row graph for 5 rows, returns 5 rows

The cost is memory per bucket (reported by `memory_per_bucket`) and the padded work.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Callable, Sequence

DEFAULT_BUCKETS = (1, 2, 4, 8, 16, 32, 64)


def bucket_for(batch: int, buckets: Sequence[int]) -> int:
    """The smallest bucket >= batch."""
    if batch < 1:
        raise ValueError(f"batch must be >= 1, got {batch}")
    ordered = sorted(buckets)
    i = bisect.bisect_left(ordered, batch)
    if i == len(ordered):
        raise ValueError(f"batch {batch} exceeds the largest bucket {ordered[-1]}; add a bucket or split the batch")
    return ordered[i]


def padding_waste(batch_sizes: Sequence[int], buckets: Sequence[int]) -> float:
    """Fraction of the work done on padding rows for a stream of batch sizes."""
    used = sum(batch_sizes)
    total = sum(bucket_for(b, buckets) for b in batch_sizes)
    return 1.0 - used / total if total else 0.0


@dataclass
class _Bucket:
    size: int
    graph: object
    static_in: object
    static_out: object
    memory_bytes: int


@dataclass
class BucketedGraph:
    """Capture `fn` once per bucket; call with any batch up to the largest bucket.

    fn: takes one tensor whose dim 0 is the batch and returns one tensor with the same dim 0.
    example: a tensor shaped like the largest input (dim 0 is ignored, the rest fixes the shape).
    pad_value: what the padding rows hold (0 keeps most models finite).
    """

    fn: Callable
    example: object
    buckets: Sequence[int] = DEFAULT_BUCKETS
    pad_value: float = 0.0
    warmup: int = 2
    _captured: dict = field(default_factory=dict, init=False, repr=False)
    _pool: object = field(default=None, init=False, repr=False)

    def __post_init__(self):
        import torch

        if not torch.cuda.is_available():
            from .gpu.errors import NoGPUError

            raise NoGPUError("capturing CUDA graphs")
        if not self.example.is_cuda:
            raise ValueError("example must be a CUDA tensor (graphs capture GPU work)")
        self.buckets = tuple(sorted(set(int(b) for b in self.buckets)))
        if not self.buckets or self.buckets[0] < 1:
            raise ValueError(f"buckets must be positive batch sizes, got {self.buckets}")
        self._pool = torch.cuda.graph_pool_handle()
        for size in reversed(self.buckets):  # largest first: the shared pool is sized once
            self._capture(size)

    def _capture(self, size: int) -> None:
        import torch

        shape = (size, *self.example.shape[1:])
        static_in = torch.full(shape, self.pad_value, dtype=self.example.dtype, device=self.example.device)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm up off the capture: lazy init, autotuning, allocations
            for _ in range(self.warmup):
                self.fn(static_in)
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        # Release cached free blocks first, so what the capture needs shows up as new reserved memory
        # (the warm-up's freed blocks would otherwise be counted, or released mid-capture: a first
        # H200 run read -2 MiB per bucket).
        torch.cuda.empty_cache()
        before = torch.cuda.memory_reserved()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self._pool):
            static_out = self.fn(static_in)
        torch.cuda.synchronize()
        if static_out.shape[0] != size:
            raise ValueError(f"fn must keep the batch dimension: input {size} rows, output {static_out.shape[0]}")
        self._captured[size] = _Bucket(size, graph, static_in, static_out, torch.cuda.memory_reserved() - before)

    @property
    def memory_per_bucket(self) -> dict[int, int]:
        """Bytes the pool grew by when each bucket was captured (largest first, so later ones reuse it)."""
        return {s: b.memory_bytes for s, b in sorted(self._captured.items())}

    def __call__(self, x):
        n = x.shape[0]
        b = self._captured[bucket_for(n, self.buckets)]
        if tuple(x.shape[1:]) != tuple(b.static_in.shape[1:]) or x.dtype != b.static_in.dtype:
            raise ValueError(f"input {tuple(x.shape)} {x.dtype} does not match the captured shape "
                             f"(*, {', '.join(map(str, b.static_in.shape[1:]))}) {b.static_in.dtype}")
        b.static_in[:n].copy_(x)
        if n < b.size:
            b.static_in[n:].fill_(self.pad_value)
        b.graph.replay()
        return b.static_out[:n]
