"""Head to head without a GPU: which pairs a run settles, how results fold into the variant rows,
and how the tables show them (kernelab/head_to_head.py; the timing itself is in tests/gpu)."""

import pytest

from kernelab import head_to_head as h2h
from kernelab.report.results import Row
from kernelab.report.tables import verdict
from kernelab.suite import Selection

GIB = 1 << 30


def _row(name, kind, t, label="2048x131072 bfloat16", op="softmax", nbytes=GIB, bound="memory", **metrics):
    return Row(op, name, kind, {"label": label, "shape": [2048, 131072], "dtype": "bfloat16"},
               work={"bytes": nbytes}, metrics={"time_s": t, "bound": bound, "mode": "cold", **metrics})


def test_the_best_variant_is_paired_with_a_close_peer_and_a_copy():
    rows = [_row("torch.compile", "peer", 1.00),
            _row("v4", "variant", 1.02, x_best_peer=0.98, best_peer="torch.compile"),
            _row("v1", "variant", 2.0, x_best_peer=0.5, best_peer="torch.compile")]
    pairs = h2h.plan_pairs(rows)
    assert [(op, name, mode) for op, _, name, mode in pairs] == [
        ("softmax", "v4 vs torch.compile", "cold"), ("softmax", "v4 vs copy", "cold")]
    assert pairs[0][1]["label"] == "2048x131072 bfloat16"


@pytest.mark.parametrize("x, bound, nbytes, expect", [
    (1.20, "memory", GIB, ["v4 vs copy"]),              # a clear win over the peer: no peer pair
    (0.85, "memory", 255 << 20, []),                     # a clear loss, and under the bench size
    (0.90, "memory", 1 << 20, ["v4 vs torch"]),          # a small shape near its 1.1x target
    (1.04, "compute", GIB, ["v4 vs torch"]),             # compute-bound: no copy twin
    (0.951, "memory", 256 << 20, ["v4 vs torch", "v4 vs copy"]),
])
def test_pairs_only_for_close_calls_and_bench_size_memory_bound_cases(x, bound, nbytes, expect):
    rows = [_row("v4", "variant", 1.0, nbytes=nbytes, bound=bound, x_best_peer=x, best_peer="torch")]
    assert [name for _, _, name, _ in h2h.plan_pairs(rows)] == expect


def test_no_pairs_for_failed_rows_or_cases_without_peers():
    bad = _row("v4", "variant", 1.0)
    bad.status = "failed"
    alone = _row("v5", "variant", 1.0, label="other", nbytes=1 << 20)  # no peer, 1 MiB
    assert h2h.plan_pairs([bad, alone]) == []


def test_the_window_and_the_size_are_arguments():
    rows = [_row("v4", "variant", 1.0, nbytes=1 << 20, x_best_peer=1.5, best_peer="torch")]
    names = [name for _, _, name, _ in h2h.plan_pairs(rows, copy_min_bytes=0, peer_window=0.6)]
    assert names == ["v4 vs torch", "v4 vs copy"]


def test_a_graph_mode_variant_is_paired_in_graph_mode():
    rows = [_row("v8", "variant", 1e-6, nbytes=1 << 20, x_best_peer=0.97, best_peer="torch.compile")]
    rows[0].metrics["mode"] = "graph"
    assert [mode for *_, mode in h2h.plan_pairs(rows)] == ["graph"]


def test_fold_attaches_results_and_failures_to_the_variant_row():
    v4 = _row("v4", "variant", 1.0)
    other = _row("v4", "variant", 1.0, label="another case")
    ok = Row("softmax", "v4 vs copy", "h2h", dict(v4.case),
             metrics={"speedup": 0.962, "ci": [0.958, 0.966], "verdict": "slower", "n": 40})
    failed = Row("softmax", "v4 vs torch.compile", "h2h", dict(v4.case), status="hang", detail="no result within 180 s")
    stray = Row("softmax", "v9 vs copy", "h2h", dict(v4.case), metrics={"speedup": 1.0})  # no such variant row
    assert h2h.fold([v4, other], [ok, failed, stray]) == 2
    assert v4.metrics["paired"]["copy"]["speedup"] == 0.962
    assert v4.metrics["paired"]["torch.compile"] == {"status": "hang", "detail": "no result within 180 s"}
    assert "paired" not in other.metrics
    text = verdict(v4)
    assert "paired vs copy: 0.962x [0.958, 0.966] slower" in text and "paired vs torch.compile: hang" in text


def test_pair_names_round_trip_and_a_bad_one_is_named():
    assert h2h.split_pair(h2h.pair_name("v4_dispatch", "torch.compile")) == ("v4_dispatch", "torch.compile")
    with pytest.raises(ValueError, match="VARIANT vs RIVAL"):
        h2h.split_pair("v4_dispatch")


def test_format_paired_in_each_table_s_form_and_the_selection_default():
    """One formatter for the run report's verdict, scripts/membound_table.py and scripts/paired_repeats.py."""
    ok = {"speedup": 0.96364, "ci": [0.95749, 0.96651], "verdict": "slower", "n": 40}
    assert h2h.format_paired(ok) == "0.964x [0.957, 0.967] slower"  # the report's verdict column
    assert h2h.format_paired(ok, unit="") == "0.964 [0.957, 0.967] slower"  # membound_table: header says x
    assert h2h.format_paired(ok, unit="", ci=False) == "0.964 slower"  # paired_repeats: a column per run
    assert h2h.format_paired({"speedup": 1.0, "verdict": "same"}, ci=False) == "1.000x same"  # no ci needed
    assert h2h.format_paired({"status": "crash", "detail": "..."}) == "crash"
    assert h2h.format_paired({"detail": "no status"}) == "?"
    assert h2h.format_paired(None) == ""  # no pair timed
    assert Selection().head_to_head is True


def test_paired_repeats_lines_up_runs_and_leaves_gaps():
    """scripts/paired_repeats.py: one column per run, the best variant's pairs, copy first."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "paired_repeats.py"
    spec = importlib.util.spec_from_file_location("paired_repeats", path)
    pr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pr)

    def run(t_v4, paired):
        rows = [{"op": "transpose", "name": "v3", "kind": "variant", "status": "ok", "case": {"label": "L"},
                 "metrics": {"time_s": 2.0, "paired": {"copy": {"speedup": 0.5, "verdict": "slower"}}}},
                {"op": "transpose", "name": "v4", "kind": "variant", "status": "ok", "case": {"label": "L"},
                 "metrics": {"time_s": t_v4, "paired": paired}}]
        return {"rows": rows}
    a = run(1.0, {"torch.compile": {"speedup": 1.038, "verdict": "faster"},
                  "copy": {"speedup": 0.9636, "verdict": "slower"}})
    b = run(1.0, {"copy": {"status": "hang"}})
    c = run(3.0, {})  # v3 is the best here: its pairs, not v4's
    lines = pr.table([a, b, c], ["A", "B", "C"]).splitlines()
    assert lines[0] == "| op | case | vs | A | B | C |"
    assert lines[2] == "| transpose | L | copy | 0.964 slower | hang | 0.500 slower |"
    assert lines[3] == "| transpose | L | torch.compile | 1.038 faster |  |  |"
