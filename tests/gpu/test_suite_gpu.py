"""`kernelab run` end to end on a GPU: check -> bench -> analysis in the worker, peers in the
same run, a results file, and a faulting or hanging candidate contained while the rest go on."""

import shutil
from pathlib import Path

import pytest

from kernelab.bench.compare import VERDICTS
from kernelab.head_to_head import PEER_WINDOW
from kernelab.report.results import load
from kernelab.report.tables import verdict
from kernelab.suite import Selection, run_suite

pytestmark = pytest.mark.gpu

OPS = Path(__file__).resolve().parents[2] / "src" / "kernelab" / "ops"


def test_quick_run_of_one_op_end_to_end(tmp_path):
    res = run_suite(Selection(ops=["vector_add"], variants=["v1"], dtypes=["float32"], quick=True),
                    results_dir=str(tmp_path))
    assert res.mode == "gpu" and res.path.is_file() and not list(tmp_path.glob("partial-*"))
    rows = {r.name: r for r in res.rows}
    assert set(rows) == {"torch", "torch.compile", "v1_vec16"}, {n: r.status for n, r in rows.items()}
    v1 = rows["v1_vec16"]
    assert all(r.status == "ok" for r in rows.values()), {n: (r.status, r.detail[:300]) for n, r in rows.items()}
    m = v1.metrics
    assert m["time_s"] >= m["floor_s"] * 0.98 and 0.5 < m["x_best_peer"] < 1.5  # same traffic as torch.add
    assert m["gbps"] > 1000 and v1.resources and v1.binary_sha256 and v1.occupancy.get("api_blocks_per_sm")
    assert len(v1.measurement["samples_s"]) >= 10 and v1.check["ok"]
    assert set(v1.timings) >= {"setup_s", "check_s", "bench_s", "verify_s", "total_s"}
    # 2^28 fp32: 3 GiB of operands; the run must stay under 16 GiB and say where the time went.
    assert 3 * 2**30 <= res.peak_gpu_memory_bytes < 16 * 2**30
    assert {"ceilings_s", "precompile", "per_op_s"} <= set(res.phases) and "vector_add" in res.phases["per_op_s"]
    assert load(res.path).rows[-1].metrics["time_s"] == pytest.approx(v1.metrics["time_s"])
    # Head to head: 2^28 fp32 moves 3 GiB, memory-bound, so v1 is re-timed against a copy of the same
    # bytes, interleaved; vector add streams like a copy, so a twin of the wrong size (2x off) fails here.
    copy = m["paired"]["copy"]
    assert 0.8 < copy["speedup"] < 1.25 and copy["ci"][0] <= copy["speedup"] <= copy["ci"][1], copy
    assert copy["n"] >= 20 and copy["verdict"] in VERDICTS and copy["mode"] == "cold"
    assert copy["copy_bytes"] == v1.work["bytes"]
    close = abs(m["x_best_peer"] - 1) <= PEER_WINDOW  # a close call against the best peer is paired too
    assert (m["best_peer"] in m["paired"]) == close, (m["x_best_peer"], list(m["paired"]))
    h2h = res.phases["head_to_head"]
    assert h2h["pairs"] == h2h["folded"] == 1 + close and h2h["failed"] == 0
    assert "paired vs copy:" in verdict(v1) and not any(r.kind == "h2h" for r in res.rows)


def test_a_faulting_and_a_hanging_variant_cost_only_themselves(tmp_path):
    """An ops folder with vector_add plus two broken variants: an illegal address (sticky: the worker
    dies) and an infinite loop (the watchdog kills the worker). The variant after each still runs."""
    ops = tmp_path / "ops"
    shutil.copytree(OPS / "vector_add", ops / "vector_add", ignore=shutil.ignore_patterns("__pycache__", "wrong"))
    wrong = OPS / "vector_add" / "wrong"
    shutil.copy(wrong / "w9_illegal_address.cu", ops / "vector_add" / "v4_faults.cu")
    shutil.copy(wrong / "w10_infinite_loop.cu", ops / "vector_add" / "v6_hangs.cu")
    shutil.copy(OPS / "vector_add" / "v1_vec16.cu", ops / "vector_add" / "v5_after_fault.cu")
    shutil.copy(OPS / "vector_add" / "v1_vec16.cu", ops / "vector_add" / "v7_after_hang.cu")
    res = run_suite(Selection(ops=["vector_add"], variants=["v4*", "v5*", "v6*", "v7*"], dtypes=["float32"],
                              shapes=["1048576"], ops_dir=str(ops), peers=False, timeout_s=20.0),
                    results_dir=str(tmp_path / "results"))
    status = {r.name: r.status for r in res.rows}
    assert status == {"v4_faults": "crash", "v5_after_fault": "ok", "v6_hangs": "hang", "v7_after_hang": "ok"}, \
        {r.name: (r.status, r.detail[:200]) for r in res.rows}
    assert res.path.is_file()


def test_a_pair_in_graph_mode_and_an_unknown_rival():
    """A launch-bound case's pair is timed as graph replays (the peer's first call, where torch.compile
    would compile, runs eagerly before the capture); a rival the case lacks is skipped and named."""
    from kernelab.head_to_head import measure_pair
    from kernelab.ops.base import Case, discover

    op = discover()["vector_add"]
    case = Case((1 << 20,), "float32")
    row = measure_pair(op, case, "v1_vec16 vs torch", "graph", 0, True, op.peers(case))
    m = row.metrics
    assert row.status == "ok" and row.kind == "h2h" and m["mode"] == "graph", (row.status, row.detail)
    assert 0.3 < m["speedup"] < 3 and m["ci"][0] <= m["speedup"] <= m["ci"][1] and m["n"] >= 20
    assert 0 < m["median_s"] < 1e-3 and 0 < m["rival_median_s"] < 1e-3
    gone = measure_pair(op, case, "v1_vec16 vs cuBLAS", "cold", 0, True, op.peers(case))
    assert gone.status == "skipped" and "no peer 'cuBLAS'" in gone.detail
