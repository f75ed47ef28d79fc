"""Issue 7, session 6: the knob sweeps behind docs/runs/2026-11-30-h200-sweep_membound_s8*.json, as
candidate lists on top of scripts/sweep_membound.py (same checks, timing and table).

Usage (GPU machine): SWEEP_SET=wide|transpose PYTHONPATH=src python3 scripts/sweep_membound_s6.py --ops ... --out F
    wide:      softmax v8_sm_rows (a block an SM, ring + L2 part) and its knobs at 2048 x 131072
               bf16 / fp32 against v7 and v4; the 8192 x 32768 bf16 candidates (v2, v6's 32-element
               instance, v7 / v8 with C = 1)
    groups:    softmax v9_grid_groups and its knobs at 2048 x 131072 bf16 / fp32 against v7
    transpose: transpose v5_tma_tiles (TMA boxes) and its knobs at 16384^2 and 4096^2, both dtypes
    small:     graph mode at 256 x 1024 (gelu_bias: v5's tight grid, R rows a thread) and 256 x 512
               (transpose), both dtypes
Without a GPU, --dry-run compiles every candidate (sweep_membound.py's)."""
import os
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import sweep_membound as sm
from sweep_membound import Candidate, Sweep, Case

P = [Candidate("torch", "peer"), Candidate("torch.compile", "peer")]


def wide_sweeps(selected):
    out = []
    if "softmax" not in selected:
        return out
    v7, v8 = "v7_bulk_smem", "v8_sm_rows"
    # Checked on 264 rows: two rounds of 132 blocks (C = 1) / four of 66 clusters (C = 2).
    bf, f32 = Case((2048, 131072), "bfloat16"), Case((2048, 131072), "float32")
    out.append(Sweep("softmax", bf, "cold", Case((264, 131072), "bfloat16"), P + [
        Candidate(v7, "existing", v7),
        Candidate(v8, "new", v8),
        Candidate(f"{v8} PREFETCH=0", "new", v8, defines={"SR_PREFETCH": 0}),
        Candidate(f"{v8} L2_HINT=0", "new", v8, defines={"SR_L2_HINT": 0}),
        Candidate(f"{v8} chunks 12", "new", v8, meta={"chunks": "12"}),
        Candidate(f"{v8} t992", "new", v8, meta={"threads": "992"}),
        Candidate(f"{v8} t256", "new", v8, meta={"threads": "256"}),
        Candidate(f"{v8} c2", "new", v8, meta={"min_cluster": "2"}),
        Candidate(f"{v8} store1", "new", v8, meta={"store": "1"}),
        Candidate(f"{v8} LOAD_EF=0", "new", v8, defines={"SR_LOAD_EF": 0}),
        Candidate(f"{v8} chunk8 x24", "new", v8, meta={"chunk_kib": "8", "chunks": "24"}),
    ]))
    out.append(Sweep("softmax", f32, "cold", Case((264, 131072), "float32"), P + [
        Candidate(v7, "existing", v7),
        Candidate(v8, "new", v8),
        Candidate(f"{v8} t992", "new", v8, meta={"threads": "992"}),
        Candidate(f"{v8} c1 (l2 320)", "new", v8, meta={"max_l2_kib": "320"}),
        Candidate(f"{v8} c4", "new", v8, meta={"min_cluster": "4"}),
        Candidate(f"{v8} PREFETCH=0", "new", v8, defines={"SR_PREFETCH": 0}),
        Candidate(f"{v8} store1", "new", v8, meta={"store": "1"}),
    ]))
    mid = Case((8192, 32768), "bfloat16")
    out.append(Sweep("softmax", mid, "cold", Case((264, 32768), "bfloat16"), P + [
        Candidate("v4_dispatch", "existing", "v4_dispatch"),
        Candidate("v6_packed_rows", "new", "v6_packed_rows"),  # its 32-element 1024-thread instance here
        Candidate(v7, "new", v7),
        Candidate(f"{v7} t1024", "new", v7, meta={"threads": "1024"}),
        Candidate(v8, "new", v8),
        Candidate(f"{v8} t992", "new", v8, meta={"threads": "992"}),
    ]))
    return out


def groups_sweeps(selected):
    """softmax v9_grid_groups (v7's ring in cooperative groups of ordinary blocks) at 2048 x 131072."""
    out = []
    if "softmax" not in selected:
        return out
    v7, v9 = "v7_bulk_smem", "v9_grid_groups"
    out.append(Sweep("softmax", Case((2048, 131072), "bfloat16"), "cold", Case((264, 131072), "bfloat16"), P + [
        Candidate(v7, "existing", v7),
        Candidate(v9, "new", v9),
        Candidate(f"{v9} stages 3", "new", v9, meta={"stages": "3"}),
        Candidate(f"{v9} group 4", "new", v9, meta={"group": "4"}),
        Candidate(f"{v9} group 12", "new", v9, meta={"group": "12"}),
        Candidate(f"{v9} t256", "new", v9, meta={"threads": "256"}),
        Candidate(f"{v9} t992", "new", v9, meta={"threads": "992"}),
    ]))
    out.append(Sweep("softmax", Case((2048, 131072), "float32"), "cold", Case((264, 131072), "float32"), P + [
        Candidate(v7, "existing", v7),
        Candidate(v9, "new", v9),
        Candidate(f"{v9} stages 3", "new", v9, meta={"stages": "3"}),
        Candidate(f"{v9} group 12", "new", v9, meta={"group": "12"}),
        Candidate(f"{v9} group 6", "new", v9, meta={"group": "6"}),
        Candidate(f"{v9} t992", "new", v9, meta={"threads": "992"}),
    ]))
    return out


def transpose_sweeps(selected):
    out = []
    if "transpose" not in selected:
        return out
    v4, v5 = "v4_grouped_order", "v5_tma_tiles"
    for dt in ("float32", "bfloat16"):
        bf = dt == "bfloat16"
        tiles = (lambda r, c: {"tile_rows_bf16": str(r), "tile_cols_bf16": str(c)}) if bf else \
                (lambda r, c: {"tile_rows": str(r), "tile_cols": str(c)})
        out.append(Sweep("transpose", Case((16384, 16384), dt), "cold", Case((2120, 448), dt), P + [
            Candidate(v4, "existing", v4),
            Candidate(v5, "new", v5),
            Candidate(f"{v5} out_bufs 2", "new", v5, meta={"out_bufs": "2"}),
            Candidate(f"{v5} stages 2", "new", v5, meta={"stages": "2"}),
            Candidate(f"{v5} stages 4", "new", v5, meta={"stages": "4", "out_bufs": "2"}),
            Candidate(f"{v5} b128", "new", v5, meta={"block": "128"}),
            Candidate(f"{v5} b512", "new", v5, meta={"block": "512"}),
            Candidate(f"{v5} one tile a block", "new", v5, meta={"persistent": "0", "stages": "1", "out_bufs": "1"}),
            Candidate(f"{v5} GROUP 1", "new", v5, defines={"GROUP": 1}),
        ] + ([Candidate(f"{v5} 64x128", "new", v5, meta=tiles(64, 128)),
              Candidate(f"{v5} 128x64", "new", v5, meta=tiles(128, 64)),
              Candidate(f"{v5} 64x64", "new", v5, meta=tiles(64, 64))] if bf else
             [Candidate(f"{v5} 64x128", "new", v5, meta=tiles(64, 128)),
              Candidate(f"{v5} 128x64", "new", v5, meta=tiles(128, 64)),
              Candidate(f"{v5} 32x64", "new", v5, meta=tiles(32, 64))])))
        out.append(Sweep("transpose", Case((4096, 4096), dt), "cold", None, P + [
            Candidate("v3_vec_swizzle" if bf else v4, "existing", "v3_vec_swizzle" if bf else v4),
            Candidate(v5, "new", v5),
        ]))
    return out


def small_sweeps(selected):
    """Graph-mode small shapes (<= 1 MiB) where torch.compile is ahead by ~1.1x."""
    out = []
    if "gelu_bias" in selected:
        v5 = "v5_short_fit"
        for dt in ("float32", "bfloat16"):
            small = Case((256, 1024), dt)
            out.append(Sweep("gelu_bias", small, "graph", Case((257, 1032), dt), P + [
                Candidate("v2_fast_erfc", "existing", "v2_fast_erfc"),
                Candidate(v5, "new", v5),
                Candidate("v3 b128", "new", "v3_early_load", meta={"block": "128"}),
                Candidate(f"{v5} tight R2", "new", v5, meta={"grid": "tight", "rows_per_thread": "2"}),
                Candidate(f"{v5} tight R4", "new", v5, meta={"grid": "tight", "rows_per_thread": "4"}),
                Candidate(f"{v5} tight R2 b256", "new", v5, meta={"grid": "tight", "rows_per_thread": "2", "block": "256"}),
                Candidate(f"{v5} tight R1 b256", "new", v5, meta={"grid": "tight", "rows_per_thread": "1", "block": "256"}),
            ]))
    if "transpose" in selected:
        for dt in ("bfloat16", "float32"):
            small = Case((256, 512), dt)
            out.append(Sweep("transpose", small, "graph", small, P + [
                Candidate("v2_smem_padded", "existing", "v2_smem_padded"),
                Candidate("v2 b512", "new", "v2_smem_padded", meta={"block": "512"}),
            ] + transpose_small_candidates(dt)))
    return out


def transpose_small_candidates(dtype):
    v6 = "v6_register_blocks"
    # One BLOCK for both kernels, so the other dtype's tile follows it: (TILE_COLS / V) x (TILE_ROWS / V) = BLOCK.
    other = {64: ({"tile_rows": "32", "tile_cols": "32"}, {"tile_rows_bf16": "32", "tile_cols_bf16": "128"}),
             256: ({"tile_rows": "64", "tile_cols": "64"}, {"tile_rows_bf16": "128", "tile_cols_bf16": "128"})}

    def tiles(r, c, b):
        f32, bf = other[b]
        mine = {"tile_rows_bf16": str(r), "tile_cols_bf16": str(c)} if dtype == "bfloat16" else \
            {"tile_rows": str(r), "tile_cols": str(c)}
        return {**f32, **bf, **mine, "block": str(b)}
    regs = [Candidate(v6, "new", v6)] + (
        [Candidate(f"{v6} 32x128 b64", "new", v6, meta=tiles(32, 128, 64)),
         Candidate(f"{v6} 64x64 b64", "new", v6, meta=tiles(64, 64, 64)),
         Candidate(f"{v6} 128x128 b256", "new", v6, meta=tiles(128, 128, 256))] if dtype == "bfloat16" else
        [Candidate(f"{v6} 32x32 b64", "new", v6, meta=tiles(32, 32, 64)),
         Candidate(f"{v6} 16x64 b64", "new", v6, meta=tiles(16, 64, 64)),
         Candidate(f"{v6} 64x64 b256", "new", v6, meta=tiles(64, 64, 256))])
    return regs  # v5 at 256 x 512 (2.2-2.6 us) was measured in the first small sweep (-s6_small.json)


sm.sweeps = {"wide": wide_sweeps, "groups": groups_sweeps, "transpose": transpose_sweeps, "small": small_sweeps}[os.environ.get("SWEEP_SET", "wide")]
if __name__ == "__main__":
    sys.exit(sm.main())
