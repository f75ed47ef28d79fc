"""Host side of v3_wgmma_tma: three 3-D TMA tensor maps over [B*H, S, D] and a persistent grid.

Each map's box is one 64-column slab (128 bytes: the 128-byte swizzle span the kernel's wgmma
descriptors expect) of a Q tile (128 rows) or a K/V tile (BLOCK_N rows), one head deep; rows past
S read as zeros inside each head. With PERSISTENT 1 the grid is one block per SM (one fits: 161
KiB of shared memory at D = 128), capped by the number of 128-row tiles, for non-causal cases;
causal cases, and PERSISTENT 0, get one block per tile.
"""

from __future__ import annotations

import math

from kernelab.gpu import device_info, tensormap
from kernelab.ops.attention import tuning
from kernelab.ops.attention.op import _cdiv, case_dims, validate_tensors

_sms: dict[int, int] = {}


def _sm_count(device_index: int) -> int:
    if device_index not in _sms:
        _sms[device_index] = device_info(device_index).sm_count
    return _sms[device_index]


def launch_v3(kernel, smem: int, block_n: int, persistent: bool, case, inputs, outputs) -> None:
    """One launch of a v3 build whose knobs give `block_n` keys per tile (the K/V box rows)."""
    b, h, s, d, causal = case_dims(case)
    q, k, v, o, lse = validate_tensors(case, inputs, outputs)
    if s == 0 or b * h == 0:
        return
    tq = tensormap.tensor_map_3d(q, box_rows=128, box_cols=64)
    tk = tensormap.tensor_map_3d(k, box_rows=block_n, box_cols=64)
    tv = tensormap.tensor_map_3d(v, box_rows=block_n, box_cols=64)
    tiles = _cdiv(s, 128) * b * h
    # Causal tiles differ in work up to S / 128-fold: the hardware scheduler balances one block
    # per tile better than a static stride (the kernel's header has the figures).
    grid = min(tiles, _sm_count(q.device.index)) if persistent and not causal else tiles
    tensormap.launch(kernel, grid, 384, tq, tk, tv, o, lse, s, d, int(causal), 1.0 / math.sqrt(d), b * h,
                     shared_mem=smem)


def launch(op, kernel, variant, case, inputs, outputs):
    d = case_dims(case)[3]
    knobs = tuning.KNOBS[tuning.V3]
    smem = variant.meta_int(f"smem_d{d}") if d in (64, 128) else 0  # other D: validate_tensors says why
    launch_v3(kernel, smem, knobs["BLOCK_N"], bool(knobs["PERSISTENT"]), case, inputs, outputs)
