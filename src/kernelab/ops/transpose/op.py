"""transpose: out[j, i] = m[i, j] for an [R, C] matrix m, fp32 and bf16; out is [C, R], contiguous.

Work: read m once and write out once: 2 x R x C x element size bytes, 0 FLOPs. A transpose
is a copy whose write order differs from its read order, so its ceiling is a device copy's
bandwidth; what separates the variants is how close to whole 128-byte lines both sides get.

Input layouts. m's rows must have unit stride (m.stride(1) == 1), but the row stride
m.stride(0) may exceed C: a column slice m[:, k:] runs as is, with the row stride passed
to the kernel (`ld`, elements). An input with m.stride(1) != 1 (e.g. a.t()) is refused
with the fix (.contiguous(), or note that the transpose of a.t() is a plain copy of a).
"""

from __future__ import annotations

import math

from kernelab.ops.base import Case, OpSpec, Work

# Largest gridDim.y; the kernels loop over row tiles beyond it, so any R works.
MAX_GRID_Y = 65535
P1, P2 = 1009, 1013  # primes, neither a multiple of any tile nor of a 16-byte vector


class Transpose(OpSpec):
    name = "transpose"
    dtypes = ("float32", "bfloat16")
    kernel_entry = "transpose"
    best_variant = "v4_grouped_order"  # column-major tile order: 16384^2 fp32 0.96x a copy (v3 0.92x), bf16 0.93x (0.88x) (sweep s4, H200)
    tolerances = {"float32": (0.0, 0.0), "bfloat16": (0.0, 0.0)}  # a copy: bit-exact
    distributions = ("normal", "uniform", "large", "special")  # bits are moved, never computed

    def test_cases(self) -> list[Case]:
        shapes = [(1, 1), (1, 1000), (1000, 1), (1, 4099), (4099, 1), (31, 33), (32, 32), (33, 31),
                  (64, 64), (65, 63), (127, 129), (256, 512), (1000, 1000), (P1, P2)]
        cases = [Case(s, dt) for dt in self.dtypes for s in shapes]
        for dt in self.dtypes:
            # Flat offset k: m is a view k elements into its allocation (misaligned rows), and
            # so is out (co-aligned); mixed_alignment offsets only m. 1000 x 1000 has 16-byte
            # rows, so these are what send the vector kernel to its fallback.
            for k in (1, 3):
                cases.append(Case((1000, 1000), dt, offset=k))
            cases.append(Case((256, 512), dt, offset=2))
            cases.append(Case((1000, 1000), dt, offset=1, layout="mixed_alignment"))
            # Column slices m[:, k:] of an [R, C + k] matrix: row stride C + k > C. col_start 1
            # misaligns every row; col_start = one 16-byte vector keeps them aligned (vector path).
            vec = 4 if dt == "float32" else 8
            for k in (1, vec):
                cases.append(Case((127, 129), dt, layout="column_slice", params=(("col_start", k),)))
                cases.append(Case((1000, 1000 - k), dt, layout="column_slice", params=(("col_start", k),)))
        return cases

    def bench_cases(self) -> list[Case]:
        # 256 x 512 fp32 = 512 KiB each way (1 MiB moved): the graph-mode small shape.
        # 16384^2 fp32 = 1 GiB each way (2 GiB moved): the target shape.
        return [Case(s, dt) for dt in self.dtypes for s in ((256, 512), (4096, 4096), (16384, 16384))]

    # ---- data ---------------------------------------------------------------------------
    def make_inputs(self, case, seed, device="cuda", dist="normal"):
        rows, cols = case.shape
        if case.layout == "column_slice":
            k = int(case.param("col_start", 1))
            full = self.tensor((rows, cols + k), case.dtype, seed, device, dist, offset=case.offset)
            return {"m": full[:, k:]}
        return {"m": self.tensor((rows, cols), case.dtype, seed, device, dist, offset=case.offset)}

    def make_outputs(self, case, inputs):
        import torch

        rows, cols = case.shape
        off = case.offset if case.layout not in ("mixed_alignment", "column_slice") else 0
        buf = torch.empty(rows * cols + off, dtype=inputs["m"].dtype, device=inputs["m"].device)
        return {"out": buf[off:].view(cols, rows)}

    def reference(self, case, inputs):
        return {"out": inputs["m"].double().t().contiguous()}  # compared flat: a view would be copied per comparison

    def work(self, case) -> Work:
        itemsize = 4 if case.dtype == "float32" else 2
        return Work(bytes=2 * case.numel * itemsize, flops=0, flop_unit="fp32")

    def peers(self, case):
        import torch

        def eager(inputs):
            return {"out": inputs["m"].t().contiguous()}

        outs: dict = {}

        def copy_t(inputs):
            # torch's strided copy into a preallocated output (ANCHORS: 1.16 TB/s at 16384^2 fp32).
            m = inputs["m"]
            key = (m.shape, m.dtype, m.device)
            if key not in outs:
                outs.clear()  # keep one buffer alive, not one per shape ever seen
                outs[key] = torch.empty(m.shape[1], m.shape[0], dtype=m.dtype, device=m.device)
            out = outs[key]
            out.copy_(m.t())
            return {"out": out}

        return {"torch": eager, "torch.compile": torch.compile(eager, dynamic=False), "copy_(m.t())": copy_t}

    # ---- launch ---------------------------------------------------------------------------
    # Geometry from the variant's header (also passed to the kernel as macros):
    #   @block N        threads per block (1-D)
    #   @tile_rows R    rows of m per block tile (input rows = output columns)
    #   @tile_cols C    columns of m per block tile
    #   @tile_rows_bf16, @tile_cols_bf16   optional: the bf16 kernel's tile when it differs
    #                   (macros TILE_ROWS_BF16 / TILE_COLS_BF16; only variants that read them)
    # Grid: x over column tiles, y over row tiles (capped at 65535; the kernels loop beyond).
    def defines(self, variant):
        return {"BLOCK": variant.meta_int("block"), "TILE_ROWS": variant.meta_int("tile_rows"),
                "TILE_COLS": variant.meta_int("tile_cols"), **variant.dtype_defines("tile_rows", "tile_cols")}

    @staticmethod
    def tile(variant, dtype: str) -> tuple[int, int]:
        """(rows, cols) of m in one block tile of `variant`'s kernel for `dtype`."""
        return variant.meta_int_for("tile_rows", dtype), variant.meta_int_for("tile_cols", dtype)

    def launch(self, kernel, variant, case, inputs, outputs):
        m, out = inputs["m"], outputs["out"]
        rows, cols = m.shape
        if rows == 0 or cols == 0:
            return
        src, ld = row_major_span(m)
        if tuple(out.shape) != (cols, rows) or not out.is_contiguous():
            raise ValueError(f"transpose: out must be a contiguous [{cols}, {rows}] tensor, got "
                             f"{tuple(out.shape)} with strides {tuple(out.stride())}")
        tile_rows, tile_cols = self.tile(variant, case.dtype)
        grid_x = math.ceil(cols / tile_cols)
        grid_y = min(math.ceil(rows / tile_rows), MAX_GRID_Y)
        kernel(src, out, rows, cols, ld, grid=(grid_x, grid_y), block=variant.meta_int("block"))


def row_major_span(m):
    """(a contiguous 1-D view covering m's rows, the row stride in elements) for an [R, C]
    tensor whose rows have unit stride. The kernel indexes it as src[i * ld + j]."""
    import torch

    rows, cols = m.shape
    if cols > 1 and m.stride(1) != 1:
        raise ValueError(f"transpose: the input's rows must have unit stride (m.stride(1) == 1); got strides "
                         f"{tuple(m.stride())}. Fix: pass m.contiguous(); if m is a.t(), its transpose is a "
                         f"itself (a.contiguous() copies it).")
    ld = m.stride(0) if rows > 1 else cols
    if ld < cols:
        raise ValueError(f"transpose: rows overlap (row stride {ld} < {cols} columns); pass m.contiguous()")
    if m.is_contiguous():
        return m.reshape(-1), cols
    # A column slice: one flat view from m's first element to its last, same storage.
    return torch.as_strided(m, ((rows - 1) * ld + cols,), (1,)), ld


OP = Transpose()
