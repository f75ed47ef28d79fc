"""Issue 7, session 5: the knob sweeps behind docs/runs/2026-11-30-h200-sweep_membound_s5.json, -s6.json
and -s7.json, as candidate lists on top of scripts/sweep_membound.py (same checks, timing and table).

Usage (GPU machine): SWEEP_SET=s5|s6|s7 PYTHONPATH=src python3 scripts/sweep_membound_s5.py --ops ... --out F
    s5: sum 2^28 bf16 (v3, one-launch ticket geometries), softmax v6 32768x8192 bf16 knobs, gelu_bias
        fp32 v4 knobs and 256x1024 bf16 block sizes, transpose tiles (16384^2) and 256x512 bf16 geometries
    s6: transpose v4 with a skewed column-major order (SKEW, a knob since removed: s6 needs e7b7c6d)
    s7: rmsnorm v4_l2_two_pass / layernorm v5_l2_two_pass geometries, softmax v6 block_elems twice
Without a GPU, --dry-run compiles every candidate (sweep_membound.py's)."""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import sweep_membound as sm
from sweep_membound import Candidate, Sweep, Case

P = [Candidate("torch", "peer"), Candidate("torch.compile", "peer")]


def my_sweeps(selected):
    out = []
    if "sum" in selected:
        t = "v4_ticket"
        out.append(Sweep("sum", Case((1 << 28,), "bfloat16"), "cold", Case(((1 << 22) + 3,), "bfloat16"), P + [
            Candidate("v3_oneshot", "existing", "v3_oneshot"),
            Candidate("v3 U=16", "new", "v3_oneshot", meta={"vectors_per_thread": "16"}, defines={"X_LOAD": 3}),
            Candidate(f"{t} U=8 X3", "new", t, meta={"vectors_per_thread": "8"}, defines={"X_LOAD": 3}),
            Candidate(f"{t} U=16 b512 X3", "new", t, meta={"vectors_per_thread": "16", "block": "512"}, defines={"X_LOAD": 3}),
            Candidate(f"{t} U=32 b256 X3", "new", t, meta={"vectors_per_thread": "32"}, defines={"X_LOAD": 3}),
        ]))
    if "softmax" in selected:
        v6 = "v6_packed_rows"
        out.append(Sweep("softmax", Case((32768, 8192), "bfloat16"), "cold", Case((64, 8192), "bfloat16"), P + [
            Candidate(f"{v6}", "existing", v6),
            Candidate(f"{v6} PK_LOAD=3", "new", v6, defines={"PK_LOAD": 3}),
            Candidate(f"{v6} be64", "new", v6, meta={"block_elems": "64"}),
            Candidate(f"{v6} be64 PK_LOAD=3", "new", v6, meta={"block_elems": "64"}, defines={"PK_LOAD": 3}),
            Candidate(f"{v6} be16", "new", v6, meta={"block_elems": "16"}),
        ]))
    if "gelu_bias" in selected:
        v4 = "v4_oneshot_rows"
        out.append(Sweep("gelu_bias", Case((32768, 8192), "float32"), "cold", Case((1024, 8192), "float32"), P + [
            Candidate(v4, "existing", v4),
            Candidate(f"{v4} R=8", "new", v4, meta={"rows_per_thread": "8"}),
            Candidate(f"{v4} b128", "new", v4, meta={"block": "128"}, defines={"MIN_BLOCKS": 8}),
            Candidate(f"{v4} b512", "new", v4, meta={"block": "512"}, defines={"MIN_BLOCKS": 2}),
            Candidate("v5_short_fit", "new", "v5_short_fit"),
        ]))
        for dt in ("bfloat16",):
            small = Case((256, 1024), dt)
            out.append(Sweep("gelu_bias", small, "graph", small, P + [
                Candidate("v5_short_fit", "existing", "v5_short_fit"),
                Candidate("v5 b64", "new", "v5_short_fit", meta={"block": "64"}),
                Candidate("v5 b256", "new", "v5_short_fit", meta={"block": "256"}),
                Candidate("v3 b128", "new", "v3_early_load", meta={"block": "128"}),
                Candidate("v3 b64", "new", "v3_early_load", meta={"block": "64"}),
                Candidate("v2 b128", "new", "v2_fast_erfc", meta={"block": "128"}),
            ]))
    if "transpose" in selected:
        v4 = "v4_grouped_order"
        out.append(Sweep("transpose", Case((16384, 16384), "float32"), "cold", Case((2117, 449), "float32"), P + [
            Candidate(v4, "existing", v4),
            Candidate(f"{v4} 128x64", "new", v4, meta={"tile_rows": "128", "tile_cols": "64"}),
            Candidate(f"{v4} 64x128", "new", v4, meta={"tile_rows": "64", "tile_cols": "128"}),
            Candidate(f"{v4} 128x64 b512", "new", v4, meta={"tile_rows": "128", "tile_cols": "64", "block": "512"}),
            Candidate(f"{v4} 64x64 b128", "new", v4, meta={"block": "128"}),
        ]))
        out.append(Sweep("transpose", Case((16384, 16384), "bfloat16"), "cold", Case((2117, 449), "bfloat16"), P + [
            Candidate(v4, "existing", v4),
            Candidate(f"{v4} bf16 128x64", "new", v4, meta={"tile_rows_bf16": "128", "tile_cols_bf16": "64"}),
            Candidate(f"{v4} bf16 64x128", "new", v4, meta={"tile_rows_bf16": "64", "tile_cols_bf16": "128"}),
            Candidate(f"{v4} bf16 128x128 b512", "new", v4, meta={"block": "512"}),
        ]))
        small = Case((256, 512), "bfloat16")
        out.append(Sweep("transpose", small, "graph", small, P + [
            Candidate("v2_smem_padded", "existing", "v2_smem_padded"),
            Candidate("v2 b128", "new", "v2_smem_padded", meta={"block": "128"}),
            Candidate("v2 b512", "new", "v2_smem_padded", meta={"block": "512"}),
            Candidate("v2 b1024", "new", "v2_smem_padded", meta={"block": "1024"}),
            Candidate("v3 64x64 b512", "new", "v3_vec_swizzle", meta={"block": "512"}),
        ]))
    return out




def s6_sweeps(selected):
    out = []
    if "transpose" in selected:
        v4 = "v4_grouped_order"
        for dt in ("float32", "bfloat16"):
            out.append(Sweep("transpose", Case((16384, 16384), dt), "cold", Case((2117, 449), dt), P + [
                Candidate(v4, "existing", v4),
                Candidate(f"{v4} SKEW=1", "new", v4, defines={"SKEW": 1}),
                Candidate(f"{v4} SKEW=8", "new", v4, defines={"SKEW": 8}),
                Candidate(f"{v4} SKEW=37", "new", v4, defines={"SKEW": 37}),
            ]))
    return out


def s7_sweeps(selected):
    out = []
    r4, l5 = "v4_l2_two_pass", "v5_l2_two_pass"

    def c(v, label, meta=None, **d):
        meta = dict(meta or {})
        if "block" in meta:  # rmsnorm v4 has per-dtype blocks since this sweep: the label's block for both
            meta.update(block_bf16=meta["block"], block_f32=meta["block"])
        return Candidate(f"{v} {label}", "new", v, meta=meta, defines=d)
    if "rmsnorm" in selected:
        out.append(Sweep("rmsnorm", Case((32768, 8192), "bfloat16"), "cold", Case((1000, 8192), "bfloat16"), P + [
            Candidate("v2_nc_prefetch", "existing", "v2_nc_prefetch"),
            c(r4, "b256", {"block": "256"}),
            c(r4, "b256 SM1536", {"block": "256"}, SM_THREADS=1536),
            c(r4, "b256 SM1024", {"block": "256"}, SM_THREADS=1024),
            c(r4, "b128", {"block": "128"}),
            c(r4, "b128 U8", {"block": "128"}, UNROLL=8),
            c(r4, "b256 U2", {"block": "256"}, UNROLL=2),
            c(r4, "b512 SM1024", {"block": "512"}, SM_THREADS=1024),
            c(r4, "b256 X2=0", {"block": "256"}, X2_HINT=0),
            c(r4, "b256 rpb2 b512", {"block": "512", "rows_per_block": "2"}),
        ]))
        out.append(Sweep("rmsnorm", Case((32768, 8192), "float32"), "cold", Case((1000, 8192), "float32"), P + [
            Candidate("v2_nc_prefetch", "existing", "v2_nc_prefetch"),
            c(r4, "b512 SM1536", {}, SM_THREADS=1536),
            c(r4, "b512 SM1024", {}, SM_THREADS=1024),
            c(r4, "b256 SM1536", {"block": "256"}, SM_THREADS=1536),
        ]))
    if "layernorm" in selected:
        out.append(Sweep("layernorm", Case((32768, 8192), "float32"), "cold", Case((1000, 8192), "float32"), P + [
            Candidate("v4_pinned_onebar", "existing", "v4_pinned_onebar"),
            c(l5, "b512 SM1536", {}, SM_THREADS=1536),
            c(l5, "b512 SM1024", {}, SM_THREADS=1024),
            c(l5, "b256 SM1536", {"block": "256"}, SM_THREADS=1536),
            c(l5, "b1024 SM1536", {"block": "1024"}, SM_THREADS=1536),
            c(l5, "b1024 rpb2 SM1536", {"block": "1024", "rows_per_block": "2"}, SM_THREADS=1536),
            c(l5, "b512 SM1536 U2", {}, SM_THREADS=1536, UNROLL=2),
        ]))
    if "softmax" in selected:
        v6 = "v6_packed_rows"
        out.append(Sweep("softmax", Case((32768, 8192), "bfloat16"), "cold", Case((64, 8192), "bfloat16"), P + [
            Candidate(f"{v6} be32 a", "new", v6, meta={"block_elems": "32"}),
            Candidate(f"{v6} be16 a", "new", v6, meta={"block_elems": "16"}),
            Candidate(f"{v6} be32 b", "new", v6, meta={"block_elems": "32"}),
            Candidate(f"{v6} be16 b", "new", v6, meta={"block_elems": "16"}),
            Candidate(f"{v6} be64", "new", v6, meta={"block_elems": "64"}),
        ]))
    return out


import os
sm.sweeps = {"s5": my_sweeps, "s6": s6_sweeps, "s7": s7_sweeps}[os.environ.get("SWEEP_SET", "s7")]
if __name__ == "__main__":
    sys.exit(sm.main())
