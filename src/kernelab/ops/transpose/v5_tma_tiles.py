"""Host side of v5_tma_tiles: two TMA tensor maps and a persistent grid.

m is [R, C] with unit-stride rows (row stride ld >= C: column slices run as they are), out is
[C, R] contiguous. Both maps use the 128-byte swizzle, so a box row is one 128-byte slab (32 fp32 /
64 bf16 elements): m's box is tile_rows rows x one slab (the kernel loads tile_cols / slab of them
per tile), out's box is tile_cols rows x one slab (tile_rows / slab stores per tile). Boxes that
cross an edge read zeros outside m and are clipped outside out, so the grid needs no edge cases.
Grid: `@persistent 1` launches min(tiles, resident blocks) blocks, resident blocks from the occupancy
API at this launch's shared memory (fp32 64 x 64: 2 an SM; bf16 128 x 128: 1); `@persistent 0` one
block per tile. op.supports() refuses the cases TMA cannot describe; tensormap.encode re-checks the
real tensors and names the constraint if one slips through (e.g. a tensor not made from a Case).
"""

from __future__ import annotations

from kernelab.gpu import device_info, tensormap
from kernelab.ops.transpose.op import tma_geometry

_resident: dict = {}


def resident_blocks(kernel, block: int, smem: int) -> int:
    """Blocks of `kernel` the whole GPU holds at once with `smem` bytes of dynamic shared memory each."""
    key = (kernel.name, id(kernel.module), block, smem)
    if key not in _resident:
        _resident[key] = device_info().sm_count * max(1, kernel.max_active_blocks_per_sm(block, smem))
    return _resident[key]


def launch(op, kernel, variant, case, inputs, outputs):
    m, out = inputs["m"], outputs["out"]
    rows, cols = m.shape
    if rows == 0 or cols == 0:
        return
    if cols > 1 and m.stride(1) != 1:
        raise ValueError(f"transpose: the input's rows must have unit stride (m.stride(1) == 1); got strides "
                         f"{tuple(m.stride())}. Fix: pass m.contiguous()")
    if tuple(out.shape) != (cols, rows) or not out.is_contiguous():
        raise ValueError(f"transpose: out must be a contiguous [{cols}, {rows}] tensor, got "
                         f"{tuple(out.shape)} with strides {tuple(out.stride())}")
    g = tma_geometry(variant, case.dtype)
    in_map = tensormap.tensor_map_2d(m, box_rows=g.tile_rows, box_cols=g.slab, swizzle=128)
    out_map = tensormap.tensor_map_2d(out, box_rows=g.tile_cols, box_cols=g.slab, swizzle=128)
    tiles = g.tiles(rows, cols)
    grid = min(tiles, resident_blocks(kernel, g.block, g.smem)) if g.persistent else tiles
    tensormap.launch(kernel, grid, g.block, in_map, out_map, rows, cols, shared_mem=g.smem)
