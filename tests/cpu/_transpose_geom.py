"""grouped_tiles.cuh's TileGeom<B, TR, TC> at BLOCK threads, in Python: the CPU tests of transpose v4
(test_transpose_v4.py) and of its shifted kernels (test_transpose_shifted.py) replay the kernels' index
arithmetic with these numbers."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class TileGeometry:
    itemsize: int
    tr: int
    tc: int
    block: int

    def __post_init__(self):
        self.v = 16 // self.itemsize                      # elements a 16-byte vector
        self.in_cpr, self.out_cpr = self.tc // self.v, self.tr // self.v  # chunks a tile row / output row
        self.chunks = self.tr * self.in_cpr
        self.per_thread = -(-self.chunks // self.block)
        self.xmask = min(self.in_cpr, 8) - 1              # swizzle bits
        self.lpr = min(self.out_cpr, 8)                   # lanes an output row in a warp store
        self.rpw = 32 // self.lpr                         # output rows a warp store
        self.groups = self.out_cpr // self.lpr            # warp tasks across an output row of the tile

    def store_task(self, idx: int) -> tuple[int, int]:
        """TileGeom::store_task: the store phase's chunk idx -> (output row oc of the tile, output chunk q)."""
        task, lane = divmod(idx, 32)
        return (task // self.groups) * self.rpw + lane // self.lpr, (task % self.groups) * self.lpr + lane % self.lpr
