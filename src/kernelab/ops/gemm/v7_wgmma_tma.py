"""Host side of v7_wgmma_tma: two TMA tensor maps and a persistent grid.

A is [M, K] and B is [N, K] (row-major), so both maps are 2-D with K innermost. The boxes
are the kernel's tiles: 128 rows x 64 columns of A, 256 x 64 of B (64 bf16 = 128 bytes =
one 128-byte swizzle span, as the kernel's wgmma descriptors expect). The grid is one block
per SM (192 KB of shared memory each), capped by the number of output tiles.
"""

from __future__ import annotations

from kernelab.gpu import device_info, tensormap
from kernelab.ops.gemm.op import check_alignment

_sms: dict[int, int] = {}


def _sm_count(device_index: int) -> int:
    if device_index not in _sms:
        _sms[device_index] = device_info(device_index).sm_count
    return _sms[device_index]


def launch(op, kernel, variant, case, inputs, outputs):
    m, n, k = case.shape
    if m == 0 or n == 0:
        return
    check_alignment(variant, inputs)
    a, b, c = inputs["a"], inputs["b"], outputs["c"]
    g = op.geometry(variant, case)
    bm, bn = g.tile
    bk = variant.meta_int("bk")
    map_a = tensormap.tensor_map_2d(a, box_rows=bm, box_cols=bk, swizzle=128)
    map_b = tensormap.tensor_map_2d(b, box_rows=bn, box_cols=bk, swizzle=128)
    tiles = -(-m // bm) * -(-n // bn)
    grid = min(tiles, _sm_count(a.device.index))
    tensormap.launch(kernel, grid, g.block, map_a, map_b, c, m, n, k, shared_mem=g.smem)
