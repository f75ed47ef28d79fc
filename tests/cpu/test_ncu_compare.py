"""scripts/ncu_compare.py without a GPU: it reads the numbers out of real ncu reports (two recorded
on the H200, docs/runs/ncu/) and builds the profiling command and the side-by-side table."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("ncu_compare", ROOT / "scripts" / "ncu_compare.py")
NCU = importlib.util.module_from_spec(spec)
spec.loader.exec_module(NCU)
REPORTS = ROOT / "docs" / "runs" / "ncu"


def test_parses_the_recorded_reports():
    v1 = NCU.parse_report((REPORTS / "2026-11-30-h200-attention-v1.txt").read_text())
    fa2 = NCU.parse_report((REPORTS / "2026-11-30-h200-attention-fa2-backend.txt").read_text())
    assert v1["Executed Ipc Active"] == pytest.approx(1.64) and fa2["Executed Ipc Active"] == pytest.approx(1.81)
    assert v1["No Eligible"] == pytest.approx(58.95) and v1["Warp Cycles Per Issued Instruction"] == pytest.approx(4.86)
    assert fa2["L1/TEX Hit Rate"] == pytest.approx(31.89)
    text = NCU.table({"v1": v1, "sdpa[flash]": fa2})
    ipc = next(line for line in text.splitlines() if line.startswith("Executed Ipc Active"))
    assert "1.64" in ipc and "1.81" in ipc


def test_stall_metrics_become_reasons_and_rank_by_their_largest_value():
    text = """
  gemm_f32 (32, 32, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 9.0
    Section: Warp State Statistics
    ---------------------------------------------------------------------- ----------- ------------
    Warp Cycles Per Issued Instruction                                           cycle         9.10
    ---------------------------------------------------------------------- ----------- ------------
    smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio              inst         0.42
    smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio      inst         2.50
    smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio         inst         1,250.5
"""
    rep = NCU.parse_report(text)
    assert rep == {"Warp Cycles Per Issued Instruction": 9.10, "stall:barrier": 0.42, "stall:long_scoreboard": 2.50,
                   "stall:mio_throttle": 1250.5}
    rows = NCU.table({"a": rep, "b": {"stall:barrier": 3.0}}, top_stalls=2).splitlines()
    assert [r.split()[0] for r in rows[1:]] == ["Warp", "stall:mio_throttle", "stall:barrier"]
    assert rows[3].split()[1:] == ["0.42", "3"] and rows[2].split()[1:] == ["1250", "-"]


def test_command_profiles_the_second_matching_launch_of_one_target():
    args = type("A", (), {"op": "gemm", "shape": "4096,4096,4096", "dtype": "float32", "params": ""})()
    cmd = NCU.ncu_command("/usr/bin/ncu", "cublas", "gemm", args)
    assert cmd[:9] == ["/usr/bin/ncu", "--clock-control", "none", "--profile-from-start", "off", "--launch-count",
                       "1", "--kernel-name", "regex:gemm"]
    assert cmd[cmd.index("--metrics") + 1] == NCU.STALLS and "--child" in cmd and "cublas" in cmd
    assert all(s in cmd for s in NCU.SECTIONS)


def test_a_peer_without_a_kernel_regex_is_refused(capsys, monkeypatch):
    monkeypatch.setattr(NCU.shutil, "which", lambda name: "/usr/bin/ncu")
    assert NCU.main(["--op", "gemm", "--shape", "64,64,64", "--dtype", "float32", "--targets", "cublas"]) == 2
    assert "--kernel cublas=REGEX" in capsys.readouterr().err


def test_a_target_with_knobs_names_its_variant_and_macros():
    assert NCU.split_target("v5_l2_two_pass[SM_THREADS=1024;X2_AHEAD=4]") == (
        "v5_l2_two_pass", {"SM_THREADS": 1024, "X2_AHEAD": 4})
    assert NCU.split_target("torch.compile") == ("torch.compile", {})
    assert NCU.split_target("v4[]") == ("v4", {})


def test_long_target_names_head_their_columns_by_number_with_a_legend():
    text = NCU.table({"v5_l2_two_pass[@block=256;SM_THREADS=1536]": {"Duration": 1.0},
                      "torch.compile": {"Duration": 2.0}})
    lines = text.splitlines()
    assert lines[:2] == ["[1] v5_l2_two_pass[@block=256;SM_THREADS=1536]", "[2] torch.compile"]
    assert lines[2].split() == ["[1]", "[2]"] and lines[3].split() == ["Duration", "1", "2"]


def test_an_at_knob_overrides_the_header_not_a_macro():
    name, knobs = NCU.split_target("v5_l2_two_pass[@block=256;SM_THREADS=1024]")
    assert name == "v5_l2_two_pass"
    assert NCU.split_knobs(knobs) == ({"block": "256"}, {"SM_THREADS": 1024})


def test_extra_metrics_are_asked_for_and_get_rows_in_bytes():
    args = type("A", (), {"op": "transpose", "shape": "64,64", "dtype": "float32", "params": "",
                          "metrics": ["dram__bytes_read.sum", "lts__t_requests_srcunit_tex_op_write.sum"]})()
    cmd = NCU.ncu_command("/usr/bin/ncu", "v4", "transpose", args)
    asked = NCU.STALLS + ",dram__bytes_read.sum,lts__t_requests_srcunit_tex_op_write.sum"
    assert cmd[cmd.index("--metrics") + 1] == asked
    text = """
    dram__bytes_read.sum                                                         Gbyte         1.07
    dram__bytes_write.sum                                                        Mbyte       512.50
    lts__t_requests_srcunit_tex_op_write.sum                                   request    8,388,608
"""
    rep = NCU.parse_report(text)
    assert rep == pytest.approx({"dram__bytes_read.sum": 1.07e9, "dram__bytes_write.sum": 512.5e6,
                                 "lts__t_requests_srcunit_tex_op_write.sum": 8388608})
    rows = NCU.table({"v4": rep}, extra=tuple(args.metrics)).splitlines()
    assert [r.split()[0] for r in rows[1:]] == args.metrics  # only the metrics asked for, in that order


def test_source_page_ranks_instructions_by_stall_samples():
    # The shape of ncu's `--page source --csv --print-source sass` output: a note line, then one row an
    # instruction (the per-reason column names vary by ncu version; any with "stall" in it counts).
    csv_text = """==PROF== note before the table
"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)",\
"stall_long_sb","stall_wait"
"0x10","LDS.128 R24, [R68]","10","8","1","7"
"0x20","MUFU.EX2 R8, R8","30","20","0","12"
"0x30","STG.E.128 desc[UR6][R2.64], R24","60","55","50","3"
"""
    cols, rows = NCU.source_rows(csv_text)
    assert cols[0] == "Address" and len(rows) == 3
    text = NCU.top_stalled(csv_text, 2).splitlines()
    assert text[0].startswith("3 instructions, 100 samples")
    assert "STG.E.128" in text[1] and "60.0%" in text[1] and "stall_long_sb=50" in text[1]
    assert "MUFU.EX2" in text[2] and "LDS" not in "".join(text)
    assert NCU.top_stalled("no table here", 5).startswith("(no per-instruction")


def test_source_mode_exports_one_report_with_source_counters(tmp_path):
    import argparse

    args = argparse.Namespace(op="softmax", shape="8,8", dtype="bfloat16", params="", metrics=[])
    cmd = NCU.ncu_command("ncu", "v12", "softmax_dy", args, export=tmp_path / "r.ncu-rep")
    assert cmd[cmd.index("--export") + 1] == str(tmp_path / "r.ncu-rep") and "SourceCounters" in cmd
    assert "SourceCounters" not in NCU.ncu_command("ncu", "v12", "softmax_dy", args)


def test_ncu_leaves_the_clocks_alone():
    import argparse

    args = argparse.Namespace(op="softmax", shape="8,8", dtype="bfloat16", params="", metrics=[])
    cmd = NCU.ncu_command("ncu", "v12", "softmax_dy", args)
    assert cmd[cmd.index("--clock-control") + 1] == "none"
