"""Issue 7, session 9: the sweeps behind docs/runs/2026-12-01-h200-sweep_membound_s9_*.json, as
candidate lists on top of scripts/sweep_membound.py (same checks, timing and table).

Usage (GPU machine): SWEEP_SET=tickets PYTHONPATH=src python3 scripts/sweep_membound_s9.py --ops sum,transpose --out F
    tickets: work handed out by a counter on a persistent grid, after session 8's copy experiment (a
            counter-driven persistent copy 257.3 us vs a one-shot grid 261.9 and a static persistent
            one 268.6; docs/runs/2026-12-01-h200-copy_patterns.json):
            sum v6_ticket_chunks (v5 with v3's chunks taken from a counter) against v5 and v3 at 2^28
            / 2^29 bf16 and 2^28 fp32 cold, 2^18 in graph mode; transpose v7_ticket_tiles (v4 with its
            tiles taken from a counter) against v4 at 16384^2 fp32 / bf16, each existing one timed
            twice (before and after) to show the run's drift.
    small:  transpose 256 x 512 in graph mode (the 1.1x-of-torch target: v2 was 1.11x torch.compile's
            time in bf16): v2, v3, v4 at small tiles, v7, v8_lean_tiles and its block sizes, peers timed
            twice. Earlier forms of this set: -s9_small.json (before v8); -s9_small3.json (session 10)
            timed a first v8, v8_direct_small (no tile and no barrier: each thread gathered 16-byte
            vectors of out from V element loads down a column of m; 1.69 us bf16, 1.91 fp32, slower
            than v2 at every knob, deleted), and v2's block and tile knobs (block 512 1.430 us bf16 vs
            v2's 1.438; nothing else faster).
    peers:  the cases whose best variant sat within 1% of its best peer (layernorm fp32, rmsnorm bf16 /
            fp32 at 32768 x 8192), timed alternately (peer, ours, peer again, ours again) so the
            ratio is paired rather than read across runs.
    lnknobs: layernorm v4's untried knobs at 32768 x 8192 fp32 (after `peers`: 0.988x torch.compile).
Without a GPU, --dry-run compiles every candidate (sweep_membound.py's)."""
import os
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import sweep_membound as sm
from sweep_membound import Candidate, Sweep, Case

P = [Candidate("torch", "peer"), Candidate("torch.compile", "peer")]


def tickets_sweeps(selected):
    out = []
    if "sum" in selected:
        v3, v5, v6 = "v3_oneshot", "v5_pdl_finish", "v6_ticket_chunks"
        cands = P + [Candidate(v5, "existing", v5), Candidate(v6, "new", v6), Candidate(v3, "existing", v3),
                     Candidate(f"{v5} again", "existing", v5), Candidate(f"{v6} again", "new", v6)]
        for n, dt in ((1 << 28, "bfloat16"), (1 << 29, "bfloat16"), (1 << 28, "float32")):
            out.append(Sweep("sum", Case((n,), dt), "cold", Case(((1 << 20) + 5,), dt), cands))
        for dt in ("bfloat16", "float32"):
            small = Case((1 << 18,), dt)
            out.append(Sweep("sum", small, "graph", small, P + [
                Candidate("v4_ticket", "existing", "v4_ticket"), Candidate(v5, "existing", v5),
                Candidate(v6, "new", v6)]))
    if "transpose" in selected:
        v4, v7 = "v4_grouped_order", "v7_ticket_tiles"
        for dt in ("float32", "bfloat16"):
            out.append(Sweep("transpose", Case((16384, 16384), dt), "cold", Case((1000, 4099), dt), P + [
                Candidate(v4, "existing", v4), Candidate(v7, "new", v7),
                Candidate(f"{v4} again", "existing", v4), Candidate(f"{v7} again", "new", v7)]))
    return out


def small_sweeps(selected):
    if "transpose" not in selected:
        return []
    out = []
    for dt in ("bfloat16", "float32"):
        small = Case((256, 512), dt)
        tiles = ({"tile_rows_bf16": "64", "tile_cols_bf16": "64"} if dt == "bfloat16"
                 else {"tile_rows": "32", "tile_cols": "32", "block": "128"})
        # v8_lean_tiles at 64 threads (fp32 4 vectors a thread, bf16 2); 256 would leave bf16 half a vector
        # and its experiment knobs (session 10: v8 issues 2.4x fewer instructions than v2 in bf16 and runs no
        # faster): the load torch.compile's kernel issues (LD_KIND 2: L2 evict_last) or a plain one (1), and
        # Triton's block order (ORDER 1: consecutive blocks down one column tile)
        # and at 64 threads (its header: 128; fp32 2 vectors a thread, bf16 1)
        v8_knobs = [("block 64", {"block": "64"})]
        v8_defines = [("plain loads", {"LD_KIND": "1"}), ("evict_last loads", {"LD_KIND": "2"}),
                      ("column order", {"ORDER": "1"}), ("column order evict_last", {"ORDER": "1", "LD_KIND": "2"})]
        out.append(Sweep("transpose", small, "graph", small, P + [
            Candidate("v2_smem_padded", "existing", "v2_smem_padded"),
            Candidate("v3_vec_swizzle", "existing", "v3_vec_swizzle"),
            Candidate("v4_grouped_order", "existing", "v4_grouped_order"),
            Candidate("v4_grouped_order small tiles", "new", "v4_grouped_order", meta=tiles),
            Candidate("v7_ticket_tiles", "new", "v7_ticket_tiles"),
            Candidate("v8_lean_tiles", "new", "v8_lean_tiles"),
            *[Candidate(f"v8_lean_tiles {label}", "new", "v8_lean_tiles", meta=meta) for label, meta in v8_knobs],
            *[Candidate(f"v8_lean_tiles {label}", "new", "v8_lean_tiles", defines=d) for label, d in v8_defines],
            Candidate("torch again", "peer"), Candidate("torch.compile again", "peer"),
            Candidate("v2_smem_padded again", "existing", "v2_smem_padded"),
            Candidate("v8_lean_tiles again", "new", "v8_lean_tiles")]))
    return out


def peers_sweeps(selected):
    out = []
    for op_name, best, dts in (("layernorm", "v4_pinned_onebar", ("float32",)),
                               ("rmsnorm", "v4_l2_two_pass", ("bfloat16", "float32"))):
        if op_name not in selected:
            continue
        for dt in dts:
            out.append(Sweep(op_name, Case((32768, sm.NORM_N), dt), "cold", Case((1000, sm.NORM_N), dt), P + [
                Candidate(best, "existing", best),
                Candidate("torch.compile again", "peer"), Candidate(f"{best} again", "existing", best),
                Candidate("torch again", "peer")]))
    return out


def lnknobs_sweeps(selected):
    """layernorm fp32 (v4 0.988x torch.compile in `peers`, paired): v4's knobs not swept in session 4
    (elements a thread, so threads a block; x's load without L1 allocation; the late parameter
    loads further ahead)."""
    if "layernorm" not in selected:
        return []
    v4 = "v4_pinned_onebar"
    # (e32, e8 / e16 at 2048 threads an SM, PARAMS_EARLY=2 and PARAMS_AHEAD=4 spill at their
    # register caps on sm_90: not run)
    knobs = [("e8 (1024 thr)", {"elems_f32": "8"}, {}), ("X_LOAD=3", {}, {"X_LOAD": 3})]
    return [Sweep("layernorm", Case((32768, sm.NORM_N), "float32"), "cold", Case((1000, sm.NORM_N), "float32"), P + [
        Candidate(v4, "existing", v4)] + [Candidate(f"{v4} {label}", "new", v4, meta=m, defines=d) for label, m, d in knobs]
        + [Candidate("torch.compile again", "peer"), Candidate(f"{v4} again", "existing", v4)])]


sm.sweeps = {"tickets": tickets_sweeps, "small": small_sweeps, "peers": peers_sweeps, "lnknobs": lnknobs_sweeps}[os.environ.get("SWEEP_SET", "tickets")]
if __name__ == "__main__":
    sys.exit(sm.main())
