"""Results JSON round trip, CSV/Markdown tables and the BENCHMARKS.md markers."""

import json

import pytest

from kernelab.report.benchmarks import BEGIN, END, update_benchmarks_md
from kernelab.report.results import SCHEMA, Results, Row, load
from kernelab.report.tables import to_csv, to_markdown


def sample_results():
    rows = [
        Row("vector_add", "torch", "peer", {"label": "268435456 float32", "dtype": "float32"},
            work={"bytes": 3 * 2**30, "flops": 2**28, "flop_unit": "fp32"},
            measurement={"mode": "cold", "samples_s": [7.4e-4, 7.41e-4], "stats": {"median": 7.405e-4, "n": 2}},
            metrics={"time_s": 7.405e-4, "gbps": 4350.0, "pct_ceiling": 101.0}),
        Row("vector_add", "v2_persistent", "variant", {"label": "268435456 float32", "dtype": "float32"},
            work={"bytes": 3 * 2**30, "flops": 2**28, "flop_unit": "fp32"},
            measurement={"mode": "cold", "samples_s": [7.5e-4], "stats": {"median": 7.5e-4, "n": 1}},
            metrics={"time_s": 7.5e-4, "gbps": 4295.0, "pct_ceiling": 99.8, "x_best_peer": 0.987},
            resources={"vector_add_f32": {"registers": 32}}, occupancy={"occupancy": 1.0}, binary_sha256="ab" * 32),
        Row("vector_add", "w3_mutates_input", "variant", {"label": "1000 float32"}, status="failed",
            reason="input_mutated", detail="input 'a' changed"),
    ]
    return Results(mode="gpu", device={"name": "NVIDIA H200", "arch": "sm_90", "sm_count": 132},
                   environment={"driver": "580.159.04", "torch": "2.11.0"}, compiler={"version": "nvrtc-13.0"},
                   rows=rows, wall_s=12.0, peak_gpu_memory_bytes=3 * 2**30)


def test_json_round_trip(tmp_path):
    r = sample_results()
    path = r.save(tmp_path)
    assert path.name.startswith("nvidia-h200-") and path.suffix == ".json"
    data = json.loads(path.read_text())
    assert data["schema"] == SCHEMA and len(data["rows"]) == 3 and "git" in data
    back = load(path)
    assert back.rows[1].metrics["x_best_peer"] == pytest.approx(0.987)
    assert back.rows[0].measurement["samples_s"] == [7.4e-4, 7.41e-4]
    assert back.to_dict()["rows"] == r.to_dict()["rows"]


def test_load_reads_gzipped_results(tmp_path):
    """Older runs under docs/runs are kept as .json.gz; load (and the scripts' read_json) read them."""
    import gzip

    r = sample_results()
    path = r.save(tmp_path)
    gz = tmp_path / (path.name + ".gz")
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert load(gz).to_dict()["rows"] == load(path).to_dict()["rows"] == r.to_dict()["rows"]
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(b"not gzip")
    with pytest.raises(ValueError, match="bad.json.gz is not valid JSON"):
        load(bad)


def test_load_refuses_other_json(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"schema": "something-else"}')
    with pytest.raises(ValueError, match="not a kernelab results file"):
        load(p)
    with pytest.raises(FileNotFoundError, match="kernelab run"):
        load(tmp_path / "missing.json")


def test_tables_carry_the_figures():
    r = sample_results()
    md = to_markdown(r)
    assert "NVIDIA H200" in md and "580.159.04" in md and "0.99x" in md and "input_mutated" in md
    assert "750.0" in md  # 7.5e-4 s in microseconds
    csv = to_csv(r).splitlines()
    assert len(csv) == 4 and csv[0].startswith("op,name,kind,case")


def test_benchmarks_md_section_is_replaced_between_markers(tmp_path):
    p = tmp_path / "BENCHMARKS.md"
    p.write_text(f"# Benchmarks\n\nProse stays.\n\n{BEGIN}\nold table\n{END}\n\nTrailing prose.\n")
    update_benchmarks_md(p, sample_results(), "results/x.json")
    text = p.read_text()
    assert "Prose stays." in text and "Trailing prose." in text and "old table" not in text
    assert text.count(BEGIN) == 1 and "kernelab report results/x.json" in text and "NVIDIA H200" in text


def test_named_sections_coexist(tmp_path):
    p = tmp_path / "BENCHMARKS.md"
    update_benchmarks_md(p, sample_results(), "a.json", section="first")
    update_benchmarks_md(p, sample_results(), "b.json", section="second")
    update_benchmarks_md(p, sample_results(), "c.json", section="first")
    text = p.read_text()
    assert text.count("<!-- kernelab:begin first -->") == 1 and text.count("<!-- kernelab:begin second -->") == 1
    assert "c.json" in text and "a.json" not in text and "b.json" in text
