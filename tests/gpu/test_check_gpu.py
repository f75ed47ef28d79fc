"""The checker on a real GPU: honest variants pass, every known-wrong kernel is rejected with the reason its
header declares, crashes / hangs / leaks are contained by the worker, and compute-sanitizer finds the
planted bugs while the library kernels come out clean.

Some functions here are worker tasks: the worker's child imports this file by name (sys_path below).
"""

from pathlib import Path

import pytest
import torch

from kernelab.check import check_callable, check_task, check_variant, result_from_outcome
from kernelab.check.sanitize import TOOLS, find_compute_sanitizer, sanitize
from kernelab.check.worker import Task, read_results, run_tasks
from kernelab.ops import discover
from kernelab.ops.base import Case

pytestmark = pytest.mark.gpu

OP = discover()["vector_add"]
N = 100_003  # odd and not a multiple of 256: every tail bug shows
HERE = str(Path(__file__).resolve().parent)
MOD = Path(__file__).stem
WRONG = {v.name: v for v in OP.wrong_variants()}
IN_PROCESS = sorted(n for n, v in WRONG.items() if v.meta["expect"] not in ("crash", "hang"))


@pytest.mark.parametrize("variant", [v.name for v in OP.variants()])
def test_every_honest_variant_passes_every_test_case(variant):
    v = OP.variant(variant)
    failures = [str(r) for case in OP.test_cases()
                if not (r := check_variant(OP, v, case, seeds=(0, 1))).ok]
    assert not failures, "\n".join(failures[:5])


@pytest.mark.parametrize("variant", [v.name for v in OP.variants()])
def test_honest_variants_are_correctly_rounded(variant):
    """vector_add is exact (one rounding of a + b): (0, 0) tolerance, as the op may declare."""
    exact = {"float32": (0.0, 0.0), "bfloat16": (0.0, 0.0)}
    for case in (Case((N,), "float32"), Case((N,), "bfloat16", offset=3), Case((4097,), "float32", offset=1,
                                                                                layout="mixed_alignment")):
        r = check_variant(OP, variant, case, seeds=(3,), tolerances=exact)
        assert r.ok, str(r)
        assert r.stream and r.stream["device_lag_s"] < 5e-3


def test_a_torch_callable_passes_through_check_callable():
    case = Case((N,), "bfloat16")
    r = check_callable(lambda i, o: torch.add(i["a"], i["b"], out=o["c"]), OP, case, name="torch.add", seeds=(0,))
    assert r.ok, str(r)


@pytest.mark.parametrize("name", IN_PROCESS)
def test_wrong_kernel_is_rejected_with_its_declared_reason(name):
    v = WRONG[name]
    for dtype in v.dtypes(OP):
        r = check_variant(OP, v, Case((N,), dtype), seeds=(0, 1))
        print(f"| {name} | {dtype} | {v.meta['expect']} | {r.reason} | {r.detail[:160]} |")  # shown with -rP
        assert not r.ok and r.reason == v.meta["expect"], f"{name} {dtype}: {r}"


def test_wrong_kernel_evidence():
    past = check_variant(OP, "w5_past_end", Case((N,), "float32"))
    # the stored value is a[n] + b[n] (garbage): a byte of it may equal the canary by chance, hence 1..4
    assert past.out_of_bounds["first_offset"] == N and 1 <= past.out_of_bounds["bytes"] <= 4
    side = check_variant(OP, "w6_side_stream", Case((N,), "float32"))
    assert side.phase.startswith("stream order") and side.stream is not None
    unwritten = check_variant(OP, "w1_tail_unwritten", Case((N,), "bfloat16"))
    assert unwritten.mismatches == N % 256 and unwritten.first_mismatches[0].index == (N // 256 * 256,)


# ---- worker tasks (run in the child) -------------------------------------------------------

_KEPT = []


def task_fault(kind: str):
    from kernelab.gpu import load, synchronize

    body = {
        "trap": "if (threadIdx.x == 0) __trap();",
        # a 16-byte store 4 bytes into a 256-byte-aligned allocation
        "misaligned": "*reinterpret_cast<float4*>(reinterpret_cast<char*>(p) + 4) = make_float4(1.f, 1.f, 1.f, 1.f);",
    }[kind]
    x = torch.zeros(64, device="cuda")
    load(f'extern "C" __global__ void fault(float* p) {{ {body} }}').kernel("fault")(x, grid=1, block=32)
    synchronize()
    return {"ok": True, "detail": "no fault?"}


def task_leak(mib: int):
    _KEPT.append(torch.empty(mib << 20, dtype=torch.uint8, device="cuda"))
    return {"ok": True, "detail": f"kept {mib} MiB alive"}


def test_crashes_hangs_and_leaks_are_contained_and_recorded(tmp_path):
    results = tmp_path / "results.jsonl"
    case = Case((N,), "float32")
    tasks = [
        check_task("vector_add", "w9_illegal_address", case, seeds=(0,), timeout_s=60),
        check_task("vector_add", "w10_infinite_loop", case, seeds=(0,), timeout_s=10),
        check_task("vector_add", "v1_vec16", case, seeds=(0,), timeout_s=120),  # the parent went on
        Task(f"{MOD}:task_fault", args=["trap"], id="trap", timeout_s=60, gpu=True, sys_path=[HERE]),
        Task(f"{MOD}:task_fault", args=["misaligned"], id="misaligned", timeout_s=60, gpu=True, sys_path=[HERE]),
        Task(f"{MOD}:task_leak", args=[64], id="leak", timeout_s=60, gpu=True, sys_path=[HERE]),
    ]
    outcomes = run_tasks(tasks, results)
    by_id = {o.id: o for o in outcomes}
    summary = {o.id: (o.status, o.detail[:300]) for o in outcomes}
    assert [o.status for o in outcomes] == ["crash", "hang", "ok", "crash", "crash", "leak"], summary

    w9 = result_from_outcome(outcomes[0])
    assert w9.reason == "crash" and "illegal" in w9.detail.lower(), w9.detail
    w10 = result_from_outcome(outcomes[1])
    assert w10.reason == "hang" and "run A" in w10.detail, w10.detail  # the last step the child reached
    ok = result_from_outcome(outcomes[2])
    assert ok.ok and outcomes[2].memory["after"]["allocated"] <= outcomes[2].memory["before"]["allocated"] + (1 << 20)
    assert "misaligned" in by_id["misaligned"].detail.lower(), by_id["misaligned"].detail
    assert by_id["trap"].detail, "a trap must come back with the CUDA error text"
    assert "grew by 64.00 MiB" in by_id["leak"].detail
    lines = read_results(results)
    assert [l["id"] for l in lines] == [o.id for o in outcomes] and lines[1]["status"] == "hang"
    for o in outcomes:
        print(f"| {o.id} | {o.status} | {o.wall_s:.1f} s | {o.detail.splitlines()[0][:160] if o.detail else ''} |")


@pytest.mark.timeout(480)
def test_sanitizer_finds_the_planted_bugs_and_clears_the_library(tmp_path):
    tool = find_compute_sanitizer()
    if tool is None:
        pytest.skip("compute-sanitizer is not installed here (CUDA toolkit)")
    library = sanitize(["vector_add"], tools=TOOLS, jobs=12, timeout_s=240, log_dir=tmp_path / "library")
    bad = [f"{r.variant} {r.tool}: {r.status}: {r.detail}\n{r.log_tail[-1500:]}" for r in library.runs if not r.clean]
    assert library.ok and len(library.runs) == len(OP.variants()) * len(TOOLS), "\n\n".join(bad)
    # Small cases: every uninitialised read is a report, and initcheck slows down with each one.
    planted = sanitize(["vector_add"], variants=["w5_past_end", "w4_stale_read"], tools=("memcheck", "initcheck"),
                       jobs=4, timeout_s=240, max_numel=1 << 12, log_dir=tmp_path / "wrong")
    oob = planted.run("w5_past_end", "memcheck")
    assert oob.status == "errors" and oob.own_errors > 0, oob.log_tail[-3000:]
    own = [f for f in oob.findings if f.attribution == "own"]
    # w5 reads a[n], b[n] before it writes c[n], so memcheck may stop the kernel at the read.
    assert any("out of bounds" in f.text.lower() for f in own), "\n---\n".join(f.text for f in own[:3])
    uninit = planted.run("w4_stale_read", "initcheck")
    assert uninit.status == "errors" and uninit.own_errors > 0, uninit.log_tail[-3000:]
    print(library.table())
    print(planted.table())
