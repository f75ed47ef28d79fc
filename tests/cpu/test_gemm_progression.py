"""scripts/gemm_progression.py: the table the closing note and NOTES.md quote comes from the run."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("gemm_progression", ROOT / "scripts" / "gemm_progression.py")
PROG = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(PROG)


def _row(name, dtype, label, seconds, flops, status="ok"):
    return {"op": "gemm", "name": name, "status": status, "case": {"dtype": dtype, "label": f"{label} {dtype}"},
            "measurement": {"median_s": seconds}, "work": {"flops": flops}}


def test_ratios_are_cublas_time_over_the_variants():
    f = 2 * 4096 ** 3
    run = {"git": {"commit": "abc1234"}, "created": "2026-11-30T11:46:46+00:00", "rows": [
        _row("cublas", "float32", "4096x4096x4096", 2.7e-3, f),
        _row("v9_sgemm_tuned", "float32", "4096x4096x4096", 3.0e-3, f),
        _row("v0_naive", "float32", "4096x4096x4096", 1.0, f, status="failed"),
    ]}
    table = PROG.progression(run)
    assert "commit abc1234" in table
    assert f"| float32 | v9_sgemm_tuned | {f / 3.0e-3 / 1e12:.1f} (0.900x) |" in table
    assert "v0_naive" not in table  # failed rows are not figures


def test_membound_table_picks_the_best_variant_and_the_best_real_peer():
    spec = importlib.util.spec_from_file_location("membound_table", ROOT / "scripts" / "membound_table.py")
    mt = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mt)

    def row(name, kind, seconds):
        return {"op": "transpose", "name": name, "kind": kind, "status": "ok",
                "case": {"label": "16384x16384 float32"}, "work": {"bytes": 2 * 2**30},
                "measurement": {"median_s": seconds, "mode": "cold"}}

    run = {"ceilings": {"copy_bytes_per_s": 4.0e12}, "rows": [
        row("torch.compile", "peer", 5.5e-4), row("copy_(m.t())", "peer", 1e-4),  # a baseline, not a peer
        row("v3_vec_swizzle", "variant", 5.45e-4), row("v4_grouped_order", "variant", 5.25e-4)]}
    line = mt.table(run).splitlines()[-1]
    assert "| v4_grouped_order | 525.0 |" in line and f"| {5.5e-4 / 5.25e-4:.3f} (torch.compile) |" in line
    assert f"| {2 * 2**30 / 5.25e-4 / 4.0e12:.3f} |" in line and line.endswith("|  |  |")  # no pairs in this run
    # a run with head-to-head pairs (kernelab/head_to_head.py) gets the paired columns
    run["rows"][-1]["metrics"] = {"paired": {
        "copy": {"speedup": 0.9636, "ci": [0.9627, 0.9645], "verdict": "slower"},
        "torch.compile": {"status": "hang"}}}
    line = mt.table(run).splitlines()[-1]
    assert line.endswith("| 0.964 [0.963, 0.965] slower | hang |"), line
