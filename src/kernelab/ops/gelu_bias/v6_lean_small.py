"""Host side of v6_lean_small: the lean kernel where it applies, v5's launch everywhere else.

The lean kernel (gelu_bias_lean_{bf16,f32}) does one vector a thread (`@lean_vec_bytes`, 16 or 8)
with no run-time tests, so the launch checks what v5's kernel tests in every thread: x, bias and y
aligned to the vector, a row a whole number of vectors, a grid of one block row per row (grid.y <=
65535), every vector index below 2^32, and a tensor no larger than one wave of the lean kernel's
threads (a larger one runs v5's one-shot grid of 4 rows a thread, which measured faster there:
v4/v5 headers). Rows narrower than half a block (chunks < `@lean_block` / 2) would leave most of
each block idle: v5's 2-D blocks pack several rows into a block, so they take those too.
"""

from __future__ import annotations

import math

from kernelab.ops.base import resident_blocks
from kernelab.ops.gelu_bias.op import check_shapes

MAX_GRID_Y = 65535


def lean_grid(rows: int, cols: int, itemsize: int, pointers: tuple[int, ...], block: int, wave_threads: int,
              vec_bytes: int = 16):
    """The lean kernel's grid (blocks along a row, rows) for blocks of `block` threads of one
    `vec_bytes` vector each, or None when v5 must run this tensor."""
    vec = vec_bytes // itemsize
    if rows == 0 or cols == 0 or cols % vec or any(p % vec_bytes for p in pointers):
        return None
    chunks = cols // vec
    blocks_x = math.ceil(chunks / block)
    if 2 * chunks < block or rows > MAX_GRID_Y or rows * chunks >= 2**32:
        return None
    if rows * blocks_x * block > wave_threads:
        return None
    return (blocks_x, rows)


def launch(op, kernel, variant, case, inputs, outputs):
    x, bias, y = inputs["x"], inputs["bias"], outputs["y"]
    check_shapes(x, bias, y)
    rows, cols = x.shape
    if rows and cols and x.is_contiguous() and y.is_contiguous():
        block, vec_bytes = variant.meta_int("lean_block"), variant.meta_int("lean_vec_bytes", 16)
        lean = kernel.module.kernel(kernel.name.replace("gelu_bias_", "gelu_bias_lean_"))
        wave = resident_blocks(lean, block) * block
        grid = lean_grid(rows, cols, x.element_size(), (x.data_ptr(), bias.data_ptr(), y.data_ptr()), block, wave,
                         vec_bytes)
        if grid is not None:
            lean(x, bias, y, cols // (vec_bytes // x.element_size()), grid=grid, block=block)
            return
    op.launch(kernel, variant, case, inputs, outputs)
