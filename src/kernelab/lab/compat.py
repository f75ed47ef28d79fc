"""Which binaries a GPU runs (seeds/000 §7.3): SASS of another major version, PTX through the
driver's JIT, and the GPU's own SASS.

The loads run in a child process with a fresh, private JIT cache (CUDA_CACHE_PATH, read when
the driver starts), so the first load of the PTX is a real JIT compile whatever this machine's
~/.nv/ComputeCache holds, and the later loads show what the cache saves. Load times are host
times through kernelab.bench (the first call's wall time, fn + synchronize, and the median of
the later calls), each call loading the module, getting the kernel and launching it once.
"""

from __future__ import annotations

import shutil
import tempfile

from ._common import EFFECT, fmt_time, host_measure, kernel_file, load_kernels, run_child
from .base import Check, Verdict, experiment

TARGET = "kernelab.lab.compat:arch_compat_task"
FOREIGN = "SASS of another major version refused with 'no kernel image'"
PTX_RUNS = "PTX for an older virtual arch JIT-compiled by the driver, right result"
NATIVE_RUNS = "SASS for this GPU loaded directly, right result"
JIT_EXTRA = "first load of the PTX / first load of the SASS"
JIT_SECONDS = "first load of the PTX (JIT compile), seconds"
JIT_CACHED = "first load of the PTX / later loads (JIT cache)"
SEED_JIT_S = (1.0, 100.0)  # seeds/000 §7.3: "第一次加载时几秒到几十秒的编译"


def foreign_arch(cc: tuple[int, int]) -> str:
    """A SASS target of another major version than `cc` (the rule the seeds state is about majors)."""
    return "sm_80" if cc[0] != 8 else "sm_90"


def virtual_arch_for(cc: tuple[int, int]) -> str:
    """compute_80 (the seeds' example) where the GPU is 8.0 or newer, else the GPU's own."""
    return "compute_80" if tuple(cc) >= (8, 0) else f"compute_{cc[0]}{cc[1]}"


def is_no_kernel_image(msg: str) -> bool:
    low = msg.lower()
    return "no kernel image" in low or "no_binary_for_gpu" in low


def compat_verdict(foreign_refused: bool, ptx_ok: bool, native_ok: bool, ptx_first_s: float, sass_first_s: float,
                   ptx_later_s: float) -> Verdict:
    return Verdict([
        Check(FOREIGN, float(foreign_refused), 1, 1),
        Check(PTX_RUNS, float(ptx_ok), 1, 1),
        Check(NATIVE_RUNS, float(native_ok), 1, 1),
        Check(JIT_EXTRA, ptx_first_s / sass_first_s, 1.0 + EFFECT, None, "x"),
        Check(JIT_SECONDS, ptx_first_s, *SEED_JIT_S, "s"),
        Check(JIT_CACHED, ptx_first_s / ptx_later_s, 1.0 + EFFECT, None, "x"),
    ], note="1 = yes, 0 = no. The probe is one small kernel (kernels/scale.cu): the JIT time grows with the amount "
            "of code, and the seeds' seconds are for whole applications")


def arch_compat_task(quick: bool) -> dict:
    """Child side (fresh CUDA_CACHE_PATH): try each kind of binary; time the loads."""
    import torch

    from ..check.worker import note
    from ..gpu import KernelabError, compile_file, device_info, toolchain
    from ..gpu.module import Module
    from ..gpu.ptx import compile_ptx, load_ptx

    info = device_info()
    cc = tuple(info.cc)
    path = kernel_file("scale")
    n = 1 << 20
    x = torch.randn(n, device="cuda")
    y = torch.empty(n, device="cuda")
    expected = torch.addcmul(torch.ones_like(x), x, torch.full_like(x, 2.0))
    grid = -(-n // 256)
    load_kernels("faults")  # the process's first module load (one-time costs) is not any of the measured ones
    out: dict = {"cc": list(cc), "driver": info.driver_version}

    foreign = foreign_arch(cc)
    note(f"loading {foreign} SASS")
    try:
        Module(compile_file(path, arch=foreign)).kernel("scale")(x, y, n, grid=grid, block=256)
        torch.cuda.synchronize()
        out["foreign"] = {"arch": foreign, "loaded": True, "error": None}
    except KernelabError as e:
        out["foreign"] = {"arch": foreign, "loaded": False, "error": str(e)}

    def right() -> bool:
        ok = bool(torch.allclose(y, expected, rtol=1e-6, atol=1e-6))
        y.fill_(float("nan"))
        return ok

    native = f"sm_{cc[0]}{cc[1]}"
    compiled = compile_file(path, arch=native)
    note(f"loading {native} SASS")

    def load_sass():
        Module(compiled).kernel("scale")(x, y, n, grid=grid, block=256)
    m = host_measure(load_sass, quick=quick, warmup=2, samples=10 if quick else 30, name=f"load {native} SASS")
    out["native"] = {"arch": native, "first_s": m.warmup["first_call_s"], "later_s": m.host_enqueue_s,
                     "correct": right()}

    virt = virtual_arch_for(cc)
    attempts = ["nvrtc"] + (["nvcc"] if toolchain.nvcc_path() else [])
    out["ptx"] = {"arch": virt, "attempts": []}
    for compiler in attempts:
        cp = compile_ptx(path.read_text(), arch=virt, name=str(path), compiler=compiler)
        note(f"loading {virt} PTX from {compiler} (.version {cp.ptx_version})")

        def load_jit(cp=cp):
            load_ptx(cp).kernel("scale")(x, y, n, grid=grid, block=256)
        try:
            m = host_measure(load_jit, quick=quick, warmup=2, samples=10 if quick else 30, name=f"load {virt} PTX")
        except KernelabError as e:  # e.g. PTX newer than the driver: try the toolkit's nvcc
            out["ptx"]["attempts"].append({"compiler": compiler, "version": cp.ptx_version, "error": str(e)})
            continue
        out["ptx"].update({"compiler": compiler, "version": cp.ptx_version, "target": cp.target,
                           "first_s": m.warmup["first_call_s"], "later_s": m.host_enqueue_s, "correct": right()})
        break
    return out


@experiment("arch_compat", title="SASS, PTX and the driver's JIT",
            claim="SASS runs only on GPUs of its own major version: an sm_80 cubin on a 9.0 GPU fails with 'no "
                  "kernel image is available'. compute_80 PTX is JIT-compiled by the driver for any newer GPU, at a "
                  "one-off cost of seconds to tens of seconds at first load (then cached in ~/.nv/ComputeCache); "
                  "sm_90 SASS loads directly.",
            source="seeds/000 §7.3")
def arch_compat(ctx):
    cache = tempfile.mkdtemp(prefix="kernelab-jit-cache-")
    try:
        o = run_child(TARGET, kwargs={"quick": ctx.quick}, env={"CUDA_CACHE_PATH": cache, "CUDA_CACHE_DISABLE": "0"},
                      timeout_s=300, task_id="arch compatibility")
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    if o.status != "ok":
        raise RuntimeError(f"the child loading the binaries ended as {o.status}: {o.detail}")
    r = o.result
    ctx.record("child", r)
    cc = tuple(r["cc"])
    f = r["foreign"]
    refused = (not f["loaded"]) and is_no_kernel_image(f["error"] or "")
    ctx.log(f"this GPU: {cc[0]}.{cc[1]}; {f['arch']} SASS: " + ("loaded" if f["loaded"] else f"refused: {f['error']}"))
    nat = r["native"]
    ctx.log(f"{nat['arch']} SASS: first load {fmt_time(nat['first_s'])}, later {fmt_time(nat['later_s'])}, "
            f"{'right' if nat['correct'] else 'WRONG'} result")
    p = r["ptx"]
    for a in p["attempts"]:
        ctx.log(f"{p['arch']} PTX from {a['compiler']} (.version {a['version']}) refused: {a['error']}")
    if "first_s" not in p:
        return Verdict([Check(FOREIGN, float(refused), 1, 1), Check(PTX_RUNS, 0.0, 1, 1),
                        Check(NATIVE_RUNS, float(nat["correct"]), 1, 1)],
                       note="the driver refused every PTX kernelab could make (see the log)")
    ctx.log(f"{p['arch']} PTX (.version {p['version']}, {p['compiler']}): first load (JIT) {fmt_time(p['first_s'])}, "
            f"later loads {fmt_time(p['later_s'])}, {'right' if p['correct'] else 'WRONG'} result")
    return compat_verdict(refused, bool(p["correct"]), bool(nat["correct"]), p["first_s"], nat["first_s"],
                          p["later_s"])
