"""Launch plans for row kernels (softmax, rmsnorm, layernorm): which kernel instance, how many
threads per row, and the grid, chosen from the row width N.

The row kernels (rows.cuh) keep a row in registers: P threads per row, E = 32 elements per
thread, so an instance holds rows of up to P * 32 elements. An op's launch names the
instance it wants, e.g. `softmax_block_t256_bf16`, and takes it from the variant's module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

ELEMS_PER_THREAD = 32  # E of the block and cluster instances (and the widest warp instance)
WARP_ELEMS = (8, 16, 32)  # warp-per-row instances: rows of 256, 512, 1024
BLOCK_THREADS = (64, 128, 256, 512, 1024)  # block-per-row instances: rows of 2048 .. 32768
CLUSTERS = ((256, 2), (256, 4), (256, 8), (512, 8), (1024, 8))  # (threads, blocks): 16384 .. 262144
WARP_ROWS_PER_BLOCK = 8  # warp kernels run 256-thread blocks
MAX_WARP_N = 32 * WARP_ELEMS[-1]
MAX_BLOCK_N = BLOCK_THREADS[-1] * ELEMS_PER_THREAD
MAX_CLUSTER_N = CLUSTERS[-1][0] * CLUSTERS[-1][1] * ELEMS_PER_THREAD


@dataclass(frozen=True)
class Plan:
    """How to launch one row kernel: kernel `f"{name}_{dtype suffix}"` (None: the variant's
    contract kernel), `block` threads, `rows_per_block` rows per block, `cluster` blocks per row."""

    name: str | None
    block: int
    rows_per_block: int = 1
    cluster: int | None = None
    capacity: int | None = None  # the widest row it holds on chip; None: it streams, any width
    persistent: bool = False  # the grid is what fits on the GPU at once; each warp/block/cluster loops over rows

    def grid(self, rows: int) -> int:
        """The `grid` to launch with. With a cluster it counts clusters, not blocks (cuda.core's
        LaunchConfig, which kernelab.gpu passes it to): one cluster per row, so `rows`."""
        return math.ceil(rows / self.rows_per_block)

    def blocks(self, rows: int) -> int:
        """Thread blocks the launch runs (gridDim.x in the kernel)."""
        return self.grid(rows) * (self.cluster or 1)

    def __str__(self) -> str:
        extra = f", cluster {self.cluster}" if self.cluster else ""
        return f"{self.name or 'contract kernel'} (block {self.block}{extra})"


def warp_plan(prefix: str, n: int) -> Plan | None:
    for e in WARP_ELEMS:
        if n <= 32 * e:
            return Plan(f"{prefix}_warp_e{e}", 32 * WARP_ROWS_PER_BLOCK, WARP_ROWS_PER_BLOCK, capacity=32 * e)
    return None


def block_plan(prefix: str, n: int) -> Plan | None:
    for t in BLOCK_THREADS:
        if n <= t * ELEMS_PER_THREAD:
            return Plan(f"{prefix}_block_t{t}", t, capacity=t * ELEMS_PER_THREAD)
    return None


def cluster_plan(prefix: str, n: int) -> Plan | None:
    for t, c in CLUSTERS:
        if n <= t * c * ELEMS_PER_THREAD:
            return Plan(f"{prefix}_cluster_t{t}_c{c}", t, 1, c, capacity=t * c * ELEMS_PER_THREAD)
    return None


def arch_cc(kernel) -> tuple[int, int]:
    """The compute capability the kernel's module was compiled for (what it can contain)."""
    return arch_cc_of(kernel.module)


def arch_cc_of(module) -> tuple[int, int]:
    """The compute capability `module` was compiled for."""
    from kernelab.gpu import Arch

    return Arch.parse(module.compiled.arch).cc


def simple_plan(variant) -> Plan:
    """`@block T` and `@rows_per_block R` from the header; the contract kernel (`wrong/` kernels, v0 of the norms)."""
    return Plan(None, variant.meta_int("block", 256), variant.meta_int("rows_per_block", 1))
