"""`kernelab lab report`: the claims table is built from stored experiment results only."""

import json

import pytest
from typer.testing import CliRunner

from kernelab.cli import app
from kernelab.lab.base import Check, Verdict
from kernelab.lab.report import claims_markdown, load_lab_results, update_claims_section


def _result(name, checks, note=""):
    return {"name": name, "source": "seeds/000 §9", "claim": "c",
            "verdict": Verdict(checks=checks, note=note).to_dict()}


RESULTS = [
    _result("fast", [Check("bandwidth / copy", 0.973, 0.95, None, "x")]),
    _result("slow", [Check("latency", 343.0, 400.0, 900.0, "ns"), Check("flag", 1.0, 1, 1)], note="why it differs"),
]


def test_table_carries_each_measured_value_and_range():
    md = claims_markdown(RESULTS)
    assert md.startswith("2 experiments: 1 differs, 1 holds.")
    assert "| fast | seeds/000 §9 | bandwidth / copy | 0.973 x | ≥ 0.95 x | holds |" in md
    assert "| slow | seeds/000 §9 | latency | 343 ns | 400–900 ns | differs by 14% |" in md
    assert "|  |  | flag | 1.00 | 1.00 | holds |" in md
    assert "**slow**: why it differs" in md


def test_section_is_written_between_markers_and_replaced(tmp_path):
    bm = tmp_path / "BENCHMARKS.md"
    bm.write_text("# Benchmarks\n\nprose stays\n")
    update_claims_section(bm, RESULTS, "lab.json")
    update_claims_section(bm, RESULTS[:1], "lab.json")
    text = bm.read_text()
    assert "prose stays" in text and text.count("<!-- kernelab:begin lab -->") == 1
    assert "1 experiments: 1 holds." in text and "| slow |" not in text


def test_cli_and_bad_files(tmp_path):
    good = tmp_path / "lab.json"
    good.write_text(json.dumps(RESULTS))
    r = CliRunner().invoke(app, ["lab", "report", str(good)])
    assert r.exit_code == 0 and "| fast |" in r.output
    bad = tmp_path / "bad.json"
    bad.write_text('{"rows": []}')
    with pytest.raises(ValueError, match="not `kernelab lab run --json` output"):
        load_lab_results(bad)
    r = CliRunner().invoke(app, ["lab", "report", str(tmp_path / "missing.json")])
    assert r.exit_code != 0 and "kernelab lab run" in r.output
