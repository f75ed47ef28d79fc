"""compute-sanitizer support without a GPU: the output parser, the verdict rules, and the orchestration
(command line, environment, parallel children, per-run verdicts) against a fake tool."""

import os
import stat
import sys
import textwrap

import pytest

from kernelab.check.sanitize import (TOOLS, ToolRun, _command, _env, _verdict, find_compute_sanitizer,
                                     parse_sanitizer_output, sanitize)

KERNELS = ["vector_add_bf16", "vector_add_f32"]

MEMCHECK_OOB = """\
========= COMPUTE-SANITIZER
program output that is not the tool's
========= Invalid __global__ write of size 4 bytes
=========     at vector_add_f32+0x1b0 in /src/kernelab/ops/vector_add/wrong/w5_past_end.cu:25
=========     by thread (163,0,0) in block (195,0,0)
=========     Address 0x7f5c92600fa0 is out of bounds
=========     and is 0 bytes after the nearest allocation at 0x7f5c92600000 of size 400012 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: cuLaunchKernel [0x2cc8f5] in libcuda.so.1
=========
========= Invalid __global__ read of size 4 bytes
=========     at vector_add_f32+0x190 in /src/kernelab/ops/vector_add/wrong/w5_past_end.cu:25
=========     by thread (163,0,0) in block (195,0,0)
=========     Address 0x7f5c92400fa0 is out of bounds
=========
========= ERROR SUMMARY: 2 errors
"""

INITCHECK_TORCH_NOISE = """\
========= COMPUTE-SANITIZER
========= Uninitialized __global__ memory read of size 4 bytes
=========     at void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char *, 1>>(int, T2, T3)+0x80
=========     by thread (0,0,0) in block (0,0,0)
=========     Address 0x7f3c7ec000fc
=========
========= ERROR SUMMARY: 1 error
"""

RACECHECK_CLEAN = """\
========= COMPUTE-SANITIZER
========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)
"""

OLD_STYLE = """\
========= Barrier error detected. Divergent thread(s) in block
=========     at 0x2c8 in vector_add_bf16
=========     by thread (0,0,0) in block (0,0,0)
========= Error: Race reported between Write access at 0x50 in kernel(float *) and Read access at 0x90 in kernel(float *)
========= ERROR SUMMARY: 2 errors
"""


def test_parser_attributes_errors_to_our_kernels():
    p = parse_sanitizer_output(MEMCHECK_OOB, KERNELS)
    assert p["summary_errors"] == 2 and len(p["findings"]) == 2
    assert all(f.attribution == "own" and f.kernel == "vector_add_f32" for f in p["findings"])
    assert p["findings"][0].kind == "Invalid __global__ write of size 4 bytes"
    assert "0 bytes after the nearest allocation" in p["findings"][0].text


def test_parser_tells_torch_noise_and_old_formats_apart():
    noise = parse_sanitizer_output(INITCHECK_TORCH_NOISE, KERNELS)
    (f,) = noise["findings"]
    assert f.attribution == "other" and "vectorized_elementwise_kernel" in f.kernel
    old = parse_sanitizer_output(OLD_STYLE, KERNELS)
    assert [f.attribution for f in old["findings"]] == ["own", "other"]
    assert old["findings"][0].kernel == "vector_add_bf16"


def test_parser_reads_racecheck_summary_and_ignores_program_output():
    p = parse_sanitizer_output(RACECHECK_CLEAN + "hello from the program\n", KERNELS)
    assert p["findings"] == [] and p["race_hazards"] == 0 and p["race_errors"] == 0 and p["summary_errors"] is None


def _run(tool="memcheck", variant="v0_naive", wrong=False):
    return ToolRun(tool=tool, op="vector_add", variant=variant, wrong=wrong, status="failed", kernels=KERNELS)


CHILD_OK = {"cases": ["4097 float32", "4097 bfloat16"], "errors": []}


def test_verdict_rules():
    r = _run()
    _verdict(r, parse_sanitizer_output(MEMCHECK_OOB, KERNELS), CHILD_OK, False, 60)
    assert r.status == "errors" and r.own_errors == 2 and "vector_add_f32" in r.detail
    r = _run("initcheck")
    _verdict(r, parse_sanitizer_output(INITCHECK_TORCH_NOISE, KERNELS), CHILD_OK, False, 60)
    assert r.status == "clean" and r.other_errors == 1 and "noise" in r.detail
    r = _run("racecheck")
    _verdict(r, parse_sanitizer_output(RACECHECK_CLEAN, KERNELS), CHILD_OK, False, 60)
    assert r.status == "clean" and r.cases == CHILD_OK["cases"]
    # an absence must be proven: no summary, a dead child, an unparsed error, a timeout all fail
    r = _run()
    _verdict(r, parse_sanitizer_output("========= COMPUTE-SANITIZER\n", KERNELS), CHILD_OK, False, 60)
    assert r.status == "failed" and "no summary" in r.detail
    r = _run()
    _verdict(r, parse_sanitizer_output("========= ERROR SUMMARY: 0 errors\n", KERNELS), None, False, 60)
    assert r.status == "failed" and "no result" in r.detail
    r = _run()
    _verdict(r, parse_sanitizer_output("========= ERROR SUMMARY: 3 errors\n", KERNELS), CHILD_OK, False, 60)
    assert r.status == "failed" and r.unknown_errors == 3
    r = _run()
    _verdict(r, parse_sanitizer_output("========= ERROR SUMMARY: 0 errors\n", KERNELS),
             {"cases": ["1 float32"], "errors": ["4097 float32: RuntimeError: boom"]}, False, 60)
    assert r.status == "failed" and "boom" in r.detail
    r = _run()
    _verdict(r, parse_sanitizer_output("========= ERROR SUMMARY: 0 errors\n", KERNELS), CHILD_OK, True, 60)
    assert r.status == "failed" and "timed out" in r.detail


def test_command_and_environment():
    cmd = _command("/opt/cs", "initcheck", ["--out", "x.json"])
    assert cmd[:3] == ["/opt/cs", "--tool", "initcheck"]
    i = cmd.index("--report-api-errors")
    assert cmd[i + 1] == "no" and "--destroy-on-device-error" not in cmd
    assert "--destroy-on-device-error" in _command("/opt/cs", "memcheck", [])
    assert cmd[cmd.index(sys.executable):][:4] == [sys.executable, "-m", "kernelab.check.sanitize", "--child"]
    env = _env()
    assert env["PYTORCH_NO_CUDA_MEMORY_CACHING"] == "1"
    assert env["PYTHONPATH"].split(os.pathsep)[0].endswith("src")


def _fake_tool(tmp_path):
    """A stand-in for compute-sanitizer: acts as the tool and the child, with canned reports."""
    script = tmp_path / "compute-sanitizer"
    script.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import json, os, sys
        argv = sys.argv[1:]
        tool = argv[argv.index("--tool") + 1]
        out = argv[argv.index("--out") + 1]
        variant = argv[argv.index("--variant") + 1]
        print("========= COMPUTE-SANITIZER")
        if os.environ.get("FAKE_SANITIZER_HANG"):
            import time
            time.sleep(600)
        print("ENV PYTORCH_NO_CUDA_MEMORY_CACHING=" + os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING", "unset"))
        if variant == "v2_persistent" and tool == "synccheck":
            sys.exit(7)  # the tool died before its summary
        json.dump({{"cases": ["4097 float32"], "errors": []}}, open(out, "w"))
        if variant.startswith("w5") and tool == "memcheck":
            print({MEMCHECK_OOB!r})
        elif tool == "racecheck":
            print("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)")
        else:
            print("========= ERROR SUMMARY: 0 errors")
        """))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def test_sanitize_orchestration_against_a_fake_tool(tmp_path):
    fake = _fake_tool(tmp_path)
    report = sanitize(["vector_add"], variants=["v0", "v2", "w5"], sanitizer=fake, jobs=4, log_dir=tmp_path / "logs",
                      timeout_s=60)
    assert len(report.runs) == 3 * len(TOOLS)
    assert report.run("v0", "memcheck").status == "clean"
    assert all(report.run("v0_naive", t).clean for t in TOOLS)
    w5 = report.run("w5", "memcheck")
    assert w5.wrong and w5.status == "errors" and w5.own_errors == 2
    assert report.run("v2", "synccheck").status == "failed" and report.run("v2", "synccheck").returncode == 7
    assert not report.ok  # v2 failed under synccheck; w5's errors alone would not count
    assert "ENV PYTORCH_NO_CUDA_MEMORY_CACHING=1" in report.run("v0", "initcheck").log_tail
    assert (tmp_path / "logs" / "vector_add.w5_past_end.memcheck.log").is_file()
    assert "| vector_add | w5_past_end (known wrong) | memcheck | errors | 2 |" in report.table()
    d = report.to_dict()
    assert d["ok"] is False and len(d["runs"]) == 12


def test_a_hung_tool_is_killed_and_fails_the_run(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_SANITIZER_HANG", "1")
    report = sanitize(["vector_add"], variants=["v0"], tools=("memcheck",), sanitizer=_fake_tool(tmp_path),
                      timeout_s=1.0)
    (run,) = report.runs
    assert run.status == "failed" and "timed out after 1 s" in run.detail and run.wall_s < 30


def test_sanitize_argument_errors(tmp_path):
    fake = _fake_tool(tmp_path)
    with pytest.raises(ValueError, match="unknown sanitizer tool"):
        sanitize(["vector_add"], tools=("valgrind",), sanitizer=fake)
    with pytest.raises(KeyError, match="no op"):
        sanitize(["nonesuch"], sanitizer=fake)
    with pytest.raises(KeyError, match="no variant matches"):
        sanitize(["vector_add"], variants=["v99"], sanitizer=fake)


def test_find_compute_sanitizer(tmp_path, monkeypatch):
    fake = _fake_tool(tmp_path)
    monkeypatch.setenv("KERNELAB_COMPUTE_SANITIZER", fake)
    assert find_compute_sanitizer() == fake
    monkeypatch.setenv("KERNELAB_COMPUTE_SANITIZER", str(tmp_path / "missing"))
    assert find_compute_sanitizer() is None
    monkeypatch.delenv("KERNELAB_COMPUTE_SANITIZER")
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    assert find_compute_sanitizer() == fake
