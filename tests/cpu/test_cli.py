"""Every `kernelab` command on a GPU-less machine: run (static), inspect, occupancy, ceilings,
compare, report, doctor, lab list, version, and the results JSON schema.

The GPU is hidden deterministically (the `no_gpu` fixture), so these tests assert the static
path even on a machine that has one. Commands run in-process through typer's CliRunner; the
two tests where the process itself matters (stdout is pure JSON; the `python -m kernelab`
entry point) run a subprocess with CUDA_VISIBLE_DEVICES="".
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import kernelab
from kernelab.cli import app
from kernelab.ops.base import discover
from kernelab.report.results import SCHEMA, Results, Row, load

ROOT = Path(__file__).resolve().parents[2]
VECTOR_ADD = ROOT / "src" / "kernelab" / "ops" / "vector_add"

# vector_add's variants are read from its folder, so a new variant does not break these tests;
# the four named here are the ones they rely on. Bench cases: 2^20, 2^24, 2^28 in float32 and
# bfloat16 (6); quick cases: the largest per dtype (2).
_VA = discover()["vector_add"]
VARIANTS = [v.name for v in _VA.variants()]
assert {"v0_naive", "v1_vec16", "v2_persistent", "v3_ticket"} <= set(VARIANTS)
N_CASES, N_QUICK = 6, 2


def n_rows(cases) -> int:
    """Rows of a static run: one per variant x case of a dtype the variant has a kernel for."""
    return sum(c.dtype in v.dtypes(_VA) for v in _VA.variants() for c in cases)

runner = CliRunner()


@pytest.fixture
def no_gpu(monkeypatch):
    """Hide any GPU: every has_gpu the commands reach (kernelab.gpu re-exports it; device,
    environment, module and ptx bound it at import), torch.cuda.is_available (nvml's handle
    lookup asks torch directly), and the driver versions, so doctor sees a machine with no
    driver rather than a driver whose GPU torch cannot see."""
    import torch

    import kernelab.gpu as gpu
    import kernelab.gpu.device as device
    import kernelab.gpu.environment as environment
    import kernelab.gpu.module as module
    import kernelab.gpu.nvml as nvml
    import kernelab.gpu.ptx as ptx

    for mod in (gpu, device, environment, module, ptx):
        monkeypatch.setattr(mod, "has_gpu", lambda: False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(device, "driver_cuda_version", lambda: None)
    monkeypatch.setattr(environment, "driver_cuda_version", lambda: None)
    monkeypatch.setattr(nvml, "driver_version", lambda: None)
    monkeypatch.setattr(nvml, "available", lambda: False)


def invoke(*args):
    # A wide terminal: rich must not wrap an error's file:line or a sentence across lines.
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "400"})


def stderr_of(result) -> str:
    try:
        return result.stderr
    except ValueError:  # click < 8.2 mixes stderr into output unless told otherwise
        return result.output


def flat(text: str) -> str:
    return " ".join(text.split())


def run_json(*args) -> dict:
    r = invoke("run", *args, "--json")
    assert r.exit_code == 0, stderr_of(r) + repr(r.exception)
    return json.loads(r.stdout)


# ------------------------------------------------------------------------------------ run

def test_run_static_json_schema_rows_and_files(no_gpu, tmp_path):
    out = tmp_path / "results"
    d = run_json("--op", "vector_add", "--results-dir", out)
    assert d["schema"] == SCHEMA == "kernelab.results/1"
    assert d["mode"] == "static"
    assert d["device"]["name"] == "H200" and d["device"]["arch"] == "sm_90"
    assert any("timing needs a GPU" in n for n in d["notes"])
    assert d["selection"]["ops"] == ["vector_add"] and d["wall_s"] > 0
    assert d["environment"]["nvrtc"] and d["compiler"]["name"] == "nvrtc"

    rows = d["rows"]
    assert len(_VA.bench_cases()) == N_CASES and len(rows) == n_rows(_VA.bench_cases()) >= 4 * N_CASES
    pairs = {(r["name"], r["case"]["label"]) for r in rows}
    assert len(pairs) == len(rows)  # one row per variant x case, no duplicates
    assert {r["name"] for r in rows} == set(VARIANTS)
    for r in rows:
        assert r["op"] == "vector_add" and r["kind"] == "variant" and r["status"] == "static"
        assert "timing needs a GPU" in r["detail"]
        assert r["metrics"]["predicted_for"] == "H200"
        assert r["metrics"]["floor_s"] > 0 and "time_s" not in r["metrics"]  # nothing was timed
        assert r["measurement"] is None
        assert r["resources"] and all(k["registers"] > 0 and k["arch"] == "sm_90" for k in r["resources"].values())
        assert re.fullmatch(r"[0-9a-f]{64}", r["binary_sha256"])
        assert 0 < r["occupancy"]["occupancy"] <= 1
    # The floor is bytes / 4.8 TB/s (vector_add is memory-bound by three orders of magnitude).
    r = next(r for r in rows if r["case"]["label"] == "268435456 float32")
    assert r["work"]["bytes"] == 3 * 4 * 2**28
    assert r["metrics"]["floor_s"] == pytest.approx(3 * 4 * 2**28 / 4.8e12, rel=1e-6)

    files = sorted(out.iterdir())
    assert [p.suffix for p in files] == [".csv", ".json", ".md"]
    assert len({p.stem for p in files}) == 1 and files[0].stem.startswith("h200-")
    saved = json.loads(files[1].read_text())
    assert saved["rows"] == rows  # stdout and the file are the same document
    assert len(files[0].read_text().splitlines()) == len(rows) + 1  # CSV: header + a line per row
    assert "v3_ticket" in files[2].read_text()


def test_run_quick_and_narrowing(no_gpu, tmp_path):
    quick = run_json("--op", "vector_add", "--quick", "--results-dir", tmp_path / "q")
    assert len(quick["rows"]) == n_rows(_VA.quick_cases()) < n_rows(_VA.bench_cases())
    assert {r["case"]["label"] for r in quick["rows"]} == {"268435456 float32", "268435456 bfloat16"}
    assert quick["selection"]["quick"] is True and quick["selection"]["head_to_head"] is True
    off = run_json("--op", "vector_add", "--quick", "--no-head-to-head", "--results-dir", tmp_path / "o")
    assert off["selection"]["head_to_head"] is False and len(off["rows"]) == len(quick["rows"])

    narrow = run_json("--op", "vector_add", "--variant", "v1", "--dtype", "float32",
                      "--results-dir", tmp_path / "n")
    assert [(r["name"], r["case"]["dtype"]) for r in narrow["rows"]] == [("v1_vec16", "float32")] * 3
    assert [r["case"]["shape"][0] for r in narrow["rows"]] == [2**20, 2**24, 2**28]

    shape = run_json("--op", "vector_add", "--variant", "v0", "--shape", "16777216", "--results-dir", tmp_path / "s")
    assert sorted(r["case"]["label"] for r in shape["rows"]) == ["16777216 bfloat16", "16777216 float32"]


def test_run_static_for_another_device(no_gpu, tmp_path):
    d = run_json("--op", "vector_add", "--variant", "v0", "--quick", "--device", "A100",
                 "--results-dir", tmp_path)
    assert d["device"]["name"] == "A100 SXM4 80GB" and d["device"]["arch"] == "sm_80"
    for r in d["rows"]:
        assert r["metrics"]["predicted_for"] == "A100 SXM4 80GB"
        assert {k["arch"] for k in r["resources"].values()} == {"sm_80"}
        # 2,039 GB/s instead of 4.8 TB/s
        assert r["metrics"]["floor_s"] == pytest.approx(r["work"]["bytes"] / 2.039e12, rel=1e-6)


def test_run_tables_without_json(no_gpu, tmp_path):
    r = invoke("run", "--op", "vector_add", "--quick", "--results-dir", tmp_path)
    assert r.exit_code == 0, stderr_of(r)
    text = flat(r.output)
    assert "No GPU here" in text and "Timing needs a GPU" in text
    assert "compiled for sm_90" in text and "predicted floors on H200" in text
    for v in VARIANTS:
        assert v in text
    assert "2^28 f32" in text and "671.1" in text  # floor µs of 3 * 4 * 2^28 B at 4.8 TB/s
    m = re.search(r"results: (\S+\.json)", text)
    assert m and Path(m[1]).is_file() and Path(m[1]).parent == tmp_path


def test_run_unknown_op_names_the_known_ones(no_gpu, tmp_path):
    r = invoke("run", "--op", "nonexistent", "--results-dir", tmp_path)
    assert r.exit_code == 2
    err = flat(stderr_of(r))
    assert "nonexistent" in err and "known ops" in err
    for name in ("vector_add", "gemm", "rmsnorm"):
        assert name in err
    assert not list(tmp_path.iterdir())  # nothing written


def test_run_nothing_selected(no_gpu, tmp_path):
    r = invoke("run", "--op", "vector_add", "--shape", "nomatch", "--results-dir", tmp_path)
    assert r.exit_code == 2
    assert "nothing selected" in flat(stderr_of(r))
    assert not list(tmp_path.iterdir())


def test_run_unknown_variant_is_an_error(no_gpu, tmp_path):
    r = invoke("run", "--op", "vector_add", "--variant", "v1_typo", "--json", "--results-dir", tmp_path)
    assert r.exit_code == 2
    err = flat(stderr_of(r))
    assert "v1_typo" in err and "v1_vec16" in err


def test_run_ops_dir_missing_folder(no_gpu, tmp_path):
    r = invoke("run", "--ops-dir", tmp_path / "absent", "--results-dir", tmp_path)
    assert r.exit_code == 2
    assert "is not a folder" in flat(stderr_of(r))


def _copy_op(dest: Path) -> None:
    shutil.copytree(VECTOR_ADD, dest, ignore=shutil.ignore_patterns("__pycache__"))


def test_run_ops_dir_user_op(no_gpu, tmp_path):
    """A user's own op folder: the op is named by OP.name (the folder name only when that is
    empty), so the copy renames it, and adds a kernel of its own."""
    ops = tmp_path / "ops"
    _copy_op(ops / "my_add")
    op_py = ops / "my_add" / "op.py"
    op_py.write_text(op_py.read_text().replace('name = "vector_add"', 'name = "my_add"'))
    mine = (VECTOR_ADD / "v0_naive.cu").read_text().replace("// v0_naive:", "// v9_mine: a user's kernel;")
    (ops / "my_add" / "v9_mine.cu").write_text(mine)

    d = run_json("--ops-dir", ops, "--quick", "--results-dir", tmp_path / "res")
    assert d["selection"]["ops_dir"] == str(ops)
    assert {r["op"] for r in d["rows"]} == {"my_add"}
    names = {r["name"] for r in d["rows"]}
    assert names == set(VARIANTS) | {"v9_mine"}
    v9 = [r for r in d["rows"] if r["name"] == "v9_mine"]
    assert len(v9) == N_QUICK and all(r["status"] == "static" and r["metrics"]["floor_s"] > 0 for r in v9)
    # The same code as the library's v0 gets the same registers; the binary differs (-lineinfo
    # records the file it came from), so each binary is told apart by its hash.
    lib = run_json("--op", "vector_add", "--variant", "v0", "--quick", "--results-dir", tmp_path / "lib")
    regs = lambda r: {k: x["registers"] for k, x in r["resources"].items()}  # noqa: E731
    assert regs(v9[0]) == regs(lib["rows"][0])
    assert {r["binary_sha256"] for r in v9}.isdisjoint(r["binary_sha256"] for r in lib["rows"])


def test_run_ops_dir_copy_keeps_its_declared_name(no_gpu, tmp_path):
    """An unedited copy in a folder named differently is still the op its op.py declares."""
    _copy_op(tmp_path / "ops" / "my_add")
    r = invoke("run", "--ops-dir", tmp_path / "ops", "--op", "my_add", "--results-dir", tmp_path / "res")
    assert r.exit_code == 2
    assert "known ops: vector_add" in flat(stderr_of(r))


def test_run_json_stdout_is_pure_json_in_a_process(tmp_path):
    """As a process (python -m kernelab), `run --json` writes one JSON document on stdout and
    nothing else (no progress bar, no banner). CUDA_VISIBLE_DEVICES="" hides any GPU."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "400"}
    p = subprocess.run([sys.executable, "-m", "kernelab", "run", "--op", "vector_add", "--variant", "v1",
                        "--quick", "--json", "--results-dir", str(tmp_path)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["mode"] == "static" and len(d["rows"]) == N_QUICK
    assert len(list(tmp_path.glob("*.json"))) == 1


# -------------------------------------------------------------------------------- inspect

def test_inspect_op(no_gpu):
    r = invoke("inspect", "--op", "vector_add", "--arch", "sm_90", "--json")
    assert r.exit_code == 0, stderr_of(r)
    items = json.loads(r.stdout)
    variants = {i["variant"] for i in items}
    assert variants == {f"vector_add/{v}" for v in VARIANTS}
    for v in _VA.variants():  # a kernel per dtype: vector_add_f32, vector_add_bf16
        kernels = {i["name"] for i in items if i["variant"] == f"vector_add/{v.name}"}
        assert kernels == {f"vector_add_{'f32' if d == 'float32' else 'bf16'}" for d in v.dtypes(_VA)}
    for i in items:
        assert i["arch"] == "sm_90" and i["resources"]["registers"] > 0
        assert 0 < i["occupancy"]["occupancy"] <= 1 and i["occupancy"]["blocks_per_sm"] >= 1
        assert i["mix"]["total"] > 0 and i["mix"]["ldg"] >= 1 and i["mix"]["stg"] >= 1
    # v1_vec16 loads 16 bytes per thread per input: 128-bit loads in fp32.
    f32 = next(i for i in items if i["variant"] == "vector_add/v1_vec16" and i["name"].endswith("f32"))
    assert f32["mix"]["widest_load_bits"] == 128


def test_inspect_unknown_op(no_gpu):
    r = invoke("inspect", "--op", "nope", "--json")
    assert r.exit_code == 2 and "known" in stderr_of(r) and "vector_add" in stderr_of(r)


def test_inspect_needs_a_target(no_gpu):
    r = invoke("inspect")
    assert r.exit_code == 2 and "give a .cu file" in flat(stderr_of(r))


SCALE = """
extern "C" __global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
"""


def test_inspect_cu_file(no_gpu, tmp_path):
    f = tmp_path / "scale.cu"
    f.write_text(SCALE)
    r = invoke("inspect", f, "--arch", "sm_80", "--threads", "128", "--json")
    assert r.exit_code == 0, stderr_of(r)
    (k,) = json.loads(r.stdout)
    assert k["name"] == "scale" and k["arch"] == "sm_80"
    assert 0 < k["resources"]["registers"] <= 32 and k["resources"]["spill_stores"] == 0
    occ = k["occupancy"]
    assert occ["threads"] == 128 and occ["cc"] == [8, 0]
    # sm_80: 32 blocks/SM and 2048 threads/SM: 128-thread blocks are capped at 16 by warps.
    assert occ["blocks_per_sm"] == 16 and occ["occupancy"] == 1.0
    assert k["mix"]["ldg"] == 1 and k["mix"]["stg"] == 1

    text = invoke("inspect", f, "--arch", "sm_80")
    assert text.exit_code == 0 and "scale [sm_80]" in text.stdout and "occupancy:" in text.stdout


def test_inspect_missing_files(no_gpu, tmp_path):
    r = invoke("inspect", tmp_path / "absent.cu", "--json")
    assert r.exit_code == 2 and "no such CUDA source file" in flat(stderr_of(r)) and "absent.cu" in stderr_of(r)
    r = invoke("inspect", tmp_path / "absent.cubin", "--json")
    assert r.exit_code == 2 and "no such file" in flat(stderr_of(r))


def test_inspect_compile_error_names_file_and_line(no_gpu, tmp_path):
    f = tmp_path / "bad.cu"
    f.write_text('extern "C" __global__ void broken(float* x) {\n  x[0] = undefined_thing;\n}\n')
    r = invoke("inspect", f, "--arch", "sm_80", "--json")
    assert r.exit_code == 2
    err = stderr_of(r)
    assert f"{f}:2" in err and "undefined_thing" in err
    assert r.stdout.strip() == ""  # no half-written JSON


# ------------------------------------------------------------------------------ occupancy

def test_occupancy_hand_computed(no_gpu):
    """cc 9.0 (H100/H200), 256 threads, 40 registers, 64 KiB shared memory per block:
      warps:     2048 threads/SM / 256 = 8 blocks
      registers: 40 x 32 = 1280 per warp (already a multiple of 256); 65536 / 4 sub-partitions
                 = 16384 per sub-partition -> 12 warps each, 48 warps per SM / 8 per block = 6 blocks
      shared:    65536 + 1024 reserve = 66560 B per block; 228 KiB = 233472 B per SM -> 3 blocks
      blocks:    32
    -> 3 blocks/SM, limited by shared memory: 24 of 64 warps = 37.5 %."""
    r = invoke("occupancy", "--cc", "9.0", "--threads", "256", "--regs", "40", "--smem", "65536", "--json")
    assert r.exit_code == 0, stderr_of(r)
    o = json.loads(r.stdout)
    assert o["blocks_per_sm"] == 3 and o["limiter"] == "shared_memory"
    assert o["block_limits"]["warps"] == 8 and o["block_limits"]["registers"] == 6
    assert o["block_limits"]["shared_memory"] == 3 and o["block_limits"]["blocks"] == 32
    assert o["regs_per_warp"] == 1280 and o["smem_alloc_per_block"] == 66560
    assert o["active_warps"] == 24 and o["occupancy"] == pytest.approx(0.375)

    text = invoke("occupancy", "--cc", "9.0", "--threads", "256", "--regs", "40", "--smem", "65536")
    assert text.exit_code == 0 and "shared_memory 3" in text.stdout


def test_occupancy_bad_input(no_gpu):
    r = invoke("occupancy", "--cc", "9.0", "--threads", "256", "--regs", "300", "--json")
    assert r.exit_code == 2 and "regs_per_thread" in stderr_of(r)


# ------------------------------------------------------------------------------- ceilings

def test_ceilings_without_gpu(no_gpu):
    r = invoke("ceilings", "--json")
    assert r.exit_code == 0, stderr_of(r)
    d = json.loads(r.stdout)
    assert "no GPU" in d["error"] and "Nominal figures for H200" in d["error"]
    assert d["nominal"]["name"] == "H200" and d["nominal"]["memory_bandwidth"] == pytest.approx(4.8e12)
    assert d["nominal"]["peak_flops"]["bf16"] > d["nominal"]["peak_flops"]["fp32"] > 0

    text = invoke("ceilings")
    assert text.exit_code == 0 and "no GPU here" in text.stdout and "memory_bandwidth" in text.stdout


# -------------------------------------------------------------------------------- compare

def _measurement(samples) -> dict:
    from kernelab.bench import Measurement
    from kernelab.bench.stats import summarize

    return Measurement(name="m", mode="cold", l2="cold", samples_s=[float(x) for x in samples],
                       stats=summarize(samples)).to_dict()


def _timed_row(name: str, samples) -> Row:
    n = 1 << 24
    return Row("vector_add", name, "variant", {"label": f"{n} float32", "dtype": "float32", "shape": [n]},
               work={"bytes": 12 * n, "flops": n, "flop_unit": "fp32"}, measurement=_measurement(samples),
               metrics={"time_s": float(np.median(samples)), "gbps": 12 * n / float(np.median(samples)) / 1e9})


def _results(rows) -> Results:
    return Results(mode="gpu", device={"name": "NVIDIA H200", "arch": "sm_90"}, environment={"driver": "580.159.04"},
                   compiler={"version": "nvrtc-13.0"}, rows=rows, wall_s=1.0)


def _compare_pair(tmp_path) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    base = 1e-4 * (1 + 0.002 * rng.standard_normal(40))  # 0.2 % noise
    other = 1e-4 * (1 + 0.002 * rng.standard_normal(40))
    a = _results([
        _timed_row("v0_naive", base),                    # B: 20 % faster
        _timed_row("v1_vec16", base),                    # B: the very same samples
        _timed_row("v2_persistent", base),               # B: failed
        _timed_row("v3_ticket", other),                  # B: 25 % slower
        _timed_row("v4_few", base[:3]),                  # too few samples to say
        _timed_row("v5_only_in_a", base),                # no partner in B: not listed
    ])
    failed = Row("vector_add", "v2_persistent", "variant", dict(a.rows[2].case), status="failed",
                 reason="mismatch", detail="3 elements differ")
    b = _results([
        _timed_row("v0_naive", 0.8 * other),
        _timed_row("v1_vec16", base),
        failed,
        _timed_row("v3_ticket", 1.25 * base),
        _timed_row("v4_few", 0.9 * base[:3]),
        _timed_row("v6_only_in_b", base),
    ])
    return a.save(tmp_path, "A.json"), b.save(tmp_path, "B.json")


def test_compare_verdicts(tmp_path):
    pa, pb = _compare_pair(tmp_path)
    r = invoke("compare", pa, pb, "--json")
    assert r.exit_code == 0, stderr_of(r)
    rows = json.loads(r.stdout)
    verdicts = {x["name"]: x["verdict"] for x in rows}
    assert verdicts == {"v0_naive": "faster", "v1_vec16": "same", "v2_persistent": "n/a",
                        "v3_ticket": "slower", "v4_few": "unclear"}
    by = {x["name"]: x for x in rows}
    assert by["v0_naive"]["ratio"] == pytest.approx(0.8, rel=0.01)  # median(B) / median(A)
    assert by["v0_naive"]["ci"][1] < 1
    assert by["v1_vec16"]["ratio"] == 1.0 and 0.99 <= by["v1_vec16"]["ci"][0] <= 1 <= by["v1_vec16"]["ci"][1] <= 1.01
    assert by["v2_persistent"]["ratio"] is None and "B failed" in by["v2_persistent"]["detail"]
    assert by["v3_ticket"]["ratio"] == pytest.approx(1.25, rel=0.01)
    assert "too few samples" in by["v4_few"]["detail"]
    assert by["v0_naive"]["a_s"] > by["v0_naive"]["b_s"]

    text = invoke("compare", pa, pb)
    assert text.exit_code == 0
    for word in ("faster", "same", "n/a", "slower", "unclear", f"{by['v0_naive']['ratio']:.3f}"):
        assert word in text.stdout
    assert "v5_only_in_a" not in text.stdout and "v6_only_in_b" not in text.stdout


def test_compare_missing_file(tmp_path):
    pa, _ = _compare_pair(tmp_path)
    r = invoke("compare", pa, tmp_path / "missing.json")
    assert r.exit_code == 2
    err = flat(stderr_of(r))
    assert "no results file at" in err and "missing.json" in err


def test_compare_refuses_other_json(tmp_path):
    pa, _ = _compare_pair(tmp_path)
    other = tmp_path / "other.json"
    other.write_text('{"schema": "something-else"}')
    r = invoke("compare", pa, other)
    assert r.exit_code == 2 and "not a kernelab results file" in flat(stderr_of(r))


# --------------------------------------------------------------------------------- report

def test_report_regenerates_files_and_sections(tmp_path):
    pa, _ = _compare_pair(tmp_path)
    results = tmp_path / "runs" / "R.json"
    results.parent.mkdir()
    shutil.copy(pa, results)
    bm = tmp_path / "BM.md"
    bm.write_text("# Benchmarks\n\nHand-written prose.\n")

    r = invoke("report", results, "--benchmarks", bm, "--section", "s")
    assert r.exit_code == 0, stderr_of(r)
    printed = [Path(line) for line in r.stdout.split()]
    for p in (results.with_suffix(".md"), results.with_suffix(".csv"), bm):
        assert p in printed and p.is_file()
    assert any(p.name.startswith("R-roofline") and p.is_file() for p in printed)  # timed rows: a roofline plot
    assert len(results.with_suffix(".csv").read_text().splitlines()) == 1 + 6
    assert "NVIDIA H200" in results.with_suffix(".md").read_text()
    text = bm.read_text()
    assert "Hand-written prose." in text
    assert text.count("<!-- kernelab:begin s -->") == 1 and text.count("<!-- kernelab:end s -->") == 1
    section = text.split("<!-- kernelab:begin s -->")[1].split("<!-- kernelab:end s -->")[0]
    assert f"kernelab report {results}" in section and "v3_ticket" in section

    r2 = invoke("report", results, "--benchmarks", bm, "--section", "t")
    assert r2.exit_code == 0
    text = bm.read_text()
    assert text.count("<!-- kernelab:begin s -->") == 1 and text.count("<!-- kernelab:begin t -->") == 1
    assert "Hand-written prose." in text
    # Re-running section s replaces it in place and keeps t.
    assert invoke("report", results, "--benchmarks", bm, "--section", "s").exit_code == 0
    again = bm.read_text()
    assert again.count("<!-- kernelab:begin s -->") == 1 and again.count("<!-- kernelab:begin t -->") == 1
    assert again.index("kernelab:begin s") < again.index("kernelab:begin t")


def test_report_missing_file(tmp_path):
    r = invoke("report", tmp_path / "nope.json")
    assert r.exit_code == 2 and "no results file at" in flat(stderr_of(r))


# --------------------------------------------------------------------------------- doctor

def test_doctor_without_gpu(no_gpu):
    from kernelab.gpu import toolchain

    r = invoke("doctor", "--json")
    d = json.loads(r.stdout)
    findings = d["findings"]
    gpu = [f for f in findings if f["topic"] == "gpu"]
    assert len(gpu) == 1 and gpu[0]["level"] == "info" and "no NVIDIA GPU" in gpu[0]["message"]
    assert gpu[0]["fix"]  # a problem comes with its fix
    assert d["environment"]["torch_sees_gpu"] is False and d["environment"]["gpus"] == []
    # The toolchain is still reported: NVRTC's version, as the toolchain module reads it.
    major, minor = toolchain.nvrtc_version()
    assert d["environment"]["nvrtc"] == f"{major}.{minor}"
    assert any(f["topic"] == "nvrtc" and f"NVRTC {major}.{minor}" in f["message"] for f in findings)
    # Exit policy (doctor.exit_code): 1 when any finding is an error, else 0. A missing GPU alone
    # is "info", so it does not fail the doctor.
    errors = [f for f in findings if f["level"] == "error"]
    assert r.exit_code == (1 if errors else 0), errors

    text = invoke("doctor")
    assert text.exit_code == r.exit_code
    assert "no NVIDIA GPU" in flat(text.stdout) and "NVRTC" in text.stdout


# ------------------------------------------------------------------------------------ lab

def test_lab_list():
    r = invoke("lab", "list", "--json")
    assert r.exit_code == 0, stderr_of(r)
    exps = json.loads(r.stdout)
    assert len(exps) >= 16
    assert len({e["name"] for e in exps}) == len(exps)
    for e in exps:
        assert re.fullmatch(r"[a-z0-9_]+", e["name"]), e
        assert len(e["claim"]) > 20 and e["title"], e
        assert re.search(r"seeds/\d{3}", e["source"]), e  # the seed file the claim comes from

    text = invoke("lab", "list")
    assert text.exit_code == 0 and "l2_flush" in text.stdout


def test_lab_run_unknown_experiment():
    r = invoke("lab", "run", "no_such_experiment")
    assert r.exit_code == 2 and "unknown experiment" in flat(stderr_of(r)) and "l2_flush" in stderr_of(r)


# -------------------------------------------------------------------------------- version

def test_version():
    r = invoke("version")
    assert r.exit_code == 0 and r.stdout.strip() == kernelab.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", kernelab.__version__)


def test_version_as_a_process():
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(ROOT / "src")}
    p = subprocess.run([sys.executable, "-m", "kernelab", "version"], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == kernelab.__version__


# ---------------------------------------------------------------------------- JSON schema

def test_results_schema_round_trips_timings_and_phases(tmp_path):
    row = Row("vector_add", "v1_vec16", "variant", {"label": "1048576 float32"}, status="ok",
              measurement=_measurement([1e-5] * 10), metrics={"time_s": 1e-5},
              timings={"setup_s": 0.12, "check_s": 0.5, "bench_s": 1.5, "verify_s": 0.01, "total_s": 2.13})
    res = _results([row])
    res.phases = {"ceilings_s": 3.0, "precompile": {"compiled": 4, "cached": 0, "failed": 0, "wall_s": 1.2},
                  "ops_s": 10.0, "per_op_s": {"vector_add": 10.0}, "per_op_peak_gpu_memory_bytes": {"vector_add": 2**30}}
    path = res.save(tmp_path, "r.json")
    data = json.loads(path.read_text())
    assert data["schema"] == SCHEMA
    assert data["rows"][0]["timings"]["total_s"] == 2.13 and data["phases"]["per_op_s"] == {"vector_add": 10.0}
    back = load(path)
    assert back.rows[0].timings == row.timings and back.phases == res.phases
    assert back.to_dict()["rows"] == res.to_dict()["rows"]

    # A file written before timings/phases existed still loads, with empty ones.
    for r in data["rows"]:
        del r["timings"]
    del data["phases"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    back = load(old)
    assert back.rows[0].timings == {} and back.phases == {} and back.rows[0].metrics["time_s"] == 1e-5
    # Unknown future fields are ignored rather than fatal.
    data["rows"][0]["from_the_future"] = 1
    data["also_new"] = True
    old.write_text(json.dumps(data))
    assert load(old).rows[0].name == "v1_vec16"
