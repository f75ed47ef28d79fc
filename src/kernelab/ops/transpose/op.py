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
from dataclasses import dataclass

from kernelab.check.inputs import DTYPES
from kernelab.ops.base import Case, OpSpec, StreamCounters, Variant, Work, resident_blocks

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
    baselines = ("copy_(m.t())",)  # the 3x yardstick: reported (x_peers), never the best peer

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
    #   @block N        threads per block (1-D); @block_f32 / @block_bf16 where one dtype's kernels differ
    #                   (macros BLOCK_F32 / BLOCK_BF16, read by grouped_tiles.cuh: v4 fp32 512 since session 25)
    #   @tile_rows R    rows of m per block tile (input rows = output columns)
    #   @tile_cols C    columns of m per block tile
    #   @tile_rows_bf16, @tile_cols_bf16   optional: the bf16 kernel's tile when it differs
    #                   (macros TILE_ROWS_BF16 / TILE_COLS_BF16; only variants that read them)
    #   @tiles tickets  optional (v7): a persistent grid whose blocks take tiles from a counter; the
    #                   kernels take one more argument, `unsigned* work` (tile_tickets below)
    #   @full_tiles 1   optional (v8): launch `transpose_full_<dtype>` instead of the contract kernel
    #                   when every tile is whole and 16-byte aligned and 32-bit offsets reach (full_tiles)
    #   @shifted 1      optional (v4): launch `transpose_shifted_<dtype>` when a row of m or of out is off
    #                   a 16-byte boundary (rows_aligned): 16-byte accesses at every row phase
    # Grid: x over column tiles, y over row tiles (capped at 65535; the kernels loop beyond); with
    # `@tiles tickets`, 1-D: the blocks the GPU holds at once, at most one per tile.
    def defines(self, variant):
        d = {"BLOCK": variant.meta_int("block"), "TILE_ROWS": variant.meta_int("tile_rows"),
             "TILE_COLS": variant.meta_int("tile_cols"), **variant.dtype_defines("tile_rows", "tile_cols", "block")}
        if is_tma(variant):  # v5: the ring, the output buffers and the grid mode (tma_geometry checks them)
            for dt in self.dtypes:
                tma_geometry(variant, dt)
            d.update(STAGES=variant.meta_int("stages"), OUT_BUFS=variant.meta_int("out_bufs"),
                     PERSISTENT=variant.meta_int("persistent"), **variant.dtype_defines("stages"))
        return d

    def supports(self, variant: Variant, case: Case) -> str | None:
        reason = super().supports(variant, case)
        if reason is None and is_tma(variant):
            reason = tma_refusal(variant, case)
        return reason

    def dynamic_smem(self, variant: Variant, case: Case) -> int:
        if is_tma(variant):
            return tma_geometry(variant, case.dtype).smem
        return super().dynamic_smem(variant, case)

    @staticmethod
    def tile(variant, dtype: str) -> tuple[int, int]:
        """(rows, cols) of m in one block tile of `variant`'s kernel for `dtype`."""
        return variant.meta_int_for("tile_rows", dtype), variant.meta_int_for("tile_cols", dtype)

    def launch(self, kernel, variant, case, inputs, outputs):
        if is_tma(variant):  # its kernel takes tensor maps: the host side is vN_name.py (run_variant calls it)
            if variant.launcher is None:
                raise ValueError(f"{variant.path.name} declares `@tma` but has no {variant.path.stem}.py "
                                 "launcher next to it")
            return variant.launcher(self, kernel, variant, case, inputs, outputs)
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
        grid_y = math.ceil(rows / tile_rows)
        block = variant.meta_int_for("block", case.dtype)  # the kernel's __launch_bounds__ (grouped_tiles.cuh)
        if takes_tickets(variant):
            # v7: persistent blocks take the tiles after their first from work[0] and leave both
            # counters zero when the grid completes (no memset, so a CUDA graph replays as is).
            grid = min(grid_x * grid_y, resident_blocks(kernel, block))
            kernel(src, out, rows, cols, ld, tile_tickets(m.device), grid=grid, block=block)
            return
        if variant.meta_int("full_tiles", 0) and full_tiles(src, out, rows, cols, ld, tile_rows, tile_cols):
            kernel = kernel.module.kernel(f"transpose_full_{DTYPES[case.dtype]}")
        if variant.meta_int("shifted", 0) and not rows_aligned(src, out, rows, ld):
            kernel = kernel.module.kernel(f"transpose_shifted_{DTYPES[case.dtype]}")
        kernel(src, out, rows, cols, ld, grid=(grid_x, min(grid_y, MAX_GRID_Y)), block=block)


def full_tiles(src, out, rows: int, cols: int, ld: int, tile_rows: int, tile_cols: int) -> bool:
    """Whether v8's whole-tile instance may run: whole tiles only, a tile a block (no row-tile loop),
    16-byte vectors on both sides (both pointers aligned, both row strides whole vectors), and every
    element offset of m's span and of out below 2^31 (the instance indexes with 32-bit offsets)."""
    return (rows % tile_rows == 0 and cols % tile_cols == 0 and rows // tile_rows <= MAX_GRID_Y
            and rows_aligned(src, out, rows, ld) and (rows - 1) * ld + cols < 2**31 and rows * cols < 2**31)


def rows_aligned(src, out, rows: int, ld: int) -> bool:
    """Whether every row of m (the span src, row stride ld) and of out ([cols, rows] contiguous) starts on
    a 16-byte boundary: the aligned kernels' vector path. Otherwise v4 runs its shifted kernels."""
    esize = src.element_size()
    return (src.data_ptr() | out.data_ptr() | ld * esize | rows * esize) % 16 == 0


def takes_tickets(variant: Variant) -> bool:
    """`@tiles tickets` (v7_ticket_tiles): tiles handed out by a counter, the kernels take `work`."""
    return variant.meta.get("tiles", "").split()[:1] == ["tickets"]


# v7_ticket_tiles' counters: two int32 a (device, stream), tiles taken and blocks finished
# (base.StreamCounters: zeroed once, left zero by every launch that completes, as the last block
# to finish resets them).
tile_tickets = StreamCounters(width=2)


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


# ---- TMA variants (v5_tma_tiles: `@tma 128` in the header) ----------------------------------------
# The kernel moves tiles with cp.async.bulk.tensor.2d through two tensor maps (m's and out's), both
# with the 128-byte swizzle, so a box row is at most 128 bytes: tiles are slabs of SLAB columns.

TMA_MAX_BOX = 256  # elements per box side (cuTensorMapEncodeTiled)
TMA_SMEM_LIMIT = 227 * 1024  # dynamic + static shared memory a block may opt into on sm_90 / sm_100
TMA_STATIC_SMEM = 64  # the kernel's static shared memory: one 8-byte mbarrier a stage (8 stages at most)
SMEM_ALIGN_SLACK = 1024  # the kernel rounds its dynamic shared memory up to a 1024-byte boundary
ITEMSIZE = {"float32": 4, "bfloat16": 2}


def is_tma(variant: Variant) -> bool:
    return "tma" in variant.meta


@dataclass(frozen=True)
class TmaGeometry:
    """One TMA variant's launch geometry for one dtype (from its header values, checked)."""

    itemsize: int
    tile_rows: int  # rows of m per tile (= the input box's rows; the output box's columns, in slabs)
    tile_cols: int  # columns of m per tile (= the output box's rows)
    block: int
    stages: int
    out_bufs: int
    persistent: bool

    @property
    def slab(self) -> int:
        """Elements in one 128-byte box row (the swizzle span): 32 fp32, 64 bf16."""
        return 128 // self.itemsize

    @property
    def tile_bytes(self) -> int:
        return self.tile_rows * self.tile_cols * self.itemsize

    @property
    def ring(self) -> int:
        """Input stages the kernel keeps (one block per tile keeps one)."""
        return self.stages if self.persistent else 1

    @property
    def outs(self) -> int:
        return self.out_bufs if self.persistent else 1

    @property
    def smem(self) -> int:
        """Dynamic shared memory per block: the ring and the output buffers, 1024-byte aligned."""
        return (self.ring + self.outs) * self.tile_bytes + SMEM_ALIGN_SLACK

    def tiles(self, rows: int, cols: int) -> int:
        return math.ceil(rows / self.tile_rows) * math.ceil(cols / self.tile_cols)


def tma_geometry(variant: Variant, dtype: str) -> TmaGeometry:
    """The checked geometry of TMA variant `variant` for `dtype`; ValueError names a bad knob and its range."""
    e = ITEMSIZE[dtype]
    sfx = "_bf16" if dtype == "bfloat16" else ""
    g = TmaGeometry(itemsize=e, tile_rows=variant.meta_int_for("tile_rows", dtype),
                    tile_cols=variant.meta_int_for("tile_cols", dtype), block=variant.meta_int("block"),
                    stages=variant.meta_int_for("stages", dtype), out_bufs=variant.meta_int("out_bufs"),
                    persistent=bool(variant.meta_int("persistent")))
    bad = []
    for key, v in ((f"tile_rows{sfx}", g.tile_rows), (f"tile_cols{sfx}", g.tile_cols)):
        if v <= 0 or v % g.slab or v > TMA_MAX_BOX:
            bad.append(f"@{key} = {v}: a {dtype} tile side must be a multiple of {g.slab} (one 128-byte swizzled "
                       f"box row) and at most {TMA_MAX_BOX} (a TMA box side)")
    if g.block % 32 or not 32 <= g.block <= 1024:
        bad.append(f"@block = {g.block}: whole warps, 32..1024 threads")
    if not 1 <= g.stages <= 8:
        bad.append(f"@stages{sfx if f'stages{sfx}' in variant.meta else ''} = {g.stages}: 1..8 input stages")
    if not 1 <= g.out_bufs <= 4:
        bad.append(f"@out_bufs = {g.out_bufs}: 1..4 output buffers")
    if variant.meta_int("persistent") not in (0, 1):
        bad.append(f"@persistent = {variant.meta_int('persistent')}: 1 (persistent grid) or 0 (a block per tile)")
    if not bad and g.smem + TMA_STATIC_SMEM > TMA_SMEM_LIMIT:
        bad.append(f"{dtype} needs {g.smem} B of shared memory a block ((stages {g.ring} + output buffers {g.outs}) x "
                   f"{g.tile_bytes} B tiles + {SMEM_ALIGN_SLACK}) + up to {TMA_STATIC_SMEM} B of mbarriers; the limit "
                   f"is {TMA_SMEM_LIMIT} B. Fix: fewer stages or buffers, or smaller tiles")
    if bad:
        raise ValueError(f"{variant.name}: " + "; ".join(bad))
    return g


def tma_refusal(variant: Variant, case: Case) -> str | None:
    """Why a TMA variant cannot run `case` (its tensor maps' constraints), or None.

    cuTensorMapEncodeTiled needs a 16-byte aligned base address and a row stride that is a multiple
    of 16 bytes, for m's map and for out's ([C, R] contiguous: row stride R elements). The layouts
    follow make_inputs / make_outputs: an `offset` view starts `offset` elements into its allocation
    (m, and out unless the layout is mixed_alignment or column_slice); a column slice m[:, k:] starts
    k elements in and has row stride C + k. Bad knobs are a reason too (the message names them)."""
    try:
        tma_geometry(variant, case.dtype)
    except ValueError as e:
        return str(e)
    rows, cols = case.shape
    e = ITEMSIZE[case.dtype]
    if rows == 0 or cols == 0:
        return None  # nothing to launch
    k = int(case.param("col_start", 1)) if case.layout == "column_slice" else 0
    in_start = case.offset + k
    in_stride = cols + k
    out_start = 0 if case.layout in ("mixed_alignment", "column_slice") else case.offset
    why = []
    if in_start * e % 16:
        why.append(f"m starts {in_start} element(s) = {in_start * e} bytes into its allocation, and a TMA tensor map "
                   "needs a 16-byte aligned base address")
    if in_stride * e % 16:
        why.append(f"m's row stride is {in_stride} elements = {in_stride * e} bytes, and a TMA tensor map needs a "
                   f"multiple of 16 bytes ({16 // e} {case.dtype} elements)")
    if out_start * e % 16:
        why.append(f"out starts {out_start} element(s) = {out_start * e} bytes into its allocation (needs 16-byte "
                   "alignment)")
    if rows * e % 16:
        why.append(f"out's row stride is R = {rows} elements = {rows * e} bytes, not a multiple of 16 ({16 // e} "
                   f"{case.dtype} elements)")
    if max(rows, cols) >= 1 << 31:
        why.append(f"a side of {max(rows, cols)} is past TMA's signed 32-bit coordinates")
    if why:
        return f"{variant.name} (TMA): " + "; ".join(why) + ". Other transpose variants run it"
    return None


OP = Transpose()
