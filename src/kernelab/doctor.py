"""`kernelab doctor`: the environment, diagnosed (seeds/004 §3.1 and §5).

The rules are pure functions of an Environment (gpu/environment.py reads it), so each one
is tested on made-up environments. A finding pairs a problem with its fix.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .gpu.environment import Environment


@dataclass
class Finding:
    level: str  # "ok" | "info" | "warn" | "error"
    topic: str
    message: str
    fix: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def _ver(s: str | None) -> tuple[int, int] | None:
    if not s:
        return None
    parts = s.split(".")
    try:
        return (int(parts[0]), int(parts[1]) if len(parts) > 1 else 0)
    except ValueError:
        return None


def diagnose(env: Environment) -> list[Finding]:
    f: list[Finding] = []
    # --- the GPU and the driver ---------------------------------------------------------
    if env.torch_sees_gpu:
        names = ", ".join(f"{g['name']} (cc {g['cc']})" for g in env.gpus)
        f.append(Finding("ok", "gpu", f"{env.gpu_count} GPU(s): {names}; driver {env.driver or '?'} "
                                      f"supports CUDA {env.driver_cuda or '?'}"))
    elif env.driver_cuda:
        f.append(Finding("error", "gpu", f"a driver is installed (CUDA {env.driver_cuda}) but torch sees no GPU",
                         "check CUDA_VISIBLE_DEVICES, that torch is a CUDA build (torch.version.cuda), and "
                         "that the driver and the device are healthy (nvidia-smi)"))
    else:
        f.append(Finding("info", "gpu", "no NVIDIA GPU or driver here: kernelab compiles, inspects and predicts, "
                                        "but timing and correctness checks need a GPU",
                         "run on a machine with an NVIDIA GPU and driver for `kernelab run` timings"))

    # --- torch's CUDA build against the driver (seeds/004 §5.1) -------------------------
    drv, tc = _ver(env.driver_cuda), _ver(env.torch_cuda)
    if env.torch and env.torch_cuda is None and not str(env.torch).startswith("import failed"):
        f.append(Finding("warn", "torch", f"torch {env.torch} is a CPU-only build",
                         "install a CUDA build of torch (pip install torch) to run kernels"))
    if drv and tc:
        if tc[0] > drv[0]:
            f.append(Finding("error", "driver", f"torch was built for CUDA {env.torch_cuda}, newer than the driver's "
                                                f"CUDA {env.driver_cuda}: 'CUDA driver version is insufficient'",
                             f"upgrade the NVIDIA driver to one for CUDA {tc[0]}.x, or install a torch built for "
                             f"CUDA {drv[0]}.x"))
        elif tc > drv:
            f.append(Finding("warn", "driver", f"torch's CUDA {env.torch_cuda} is newer than the driver's "
                                               f"{env.driver_cuda}: minor-version compatibility runs it, but PTX "
                                               "made by the newer toolkit cannot be JIT-compiled by this driver",
                             "ship cubins (SASS) for this GPU, which kernelab does, or upgrade the driver"))
        else:
            f.append(Finding("ok", "driver", f"torch's CUDA {env.torch_cuda} <= driver's CUDA {env.driver_cuda}"))
    if env.torch_sees_gpu and env.torch_arch_list and env.gpus:
        cc = env.gpus[0]["cc"].replace(".", "")
        if not any(a.endswith(cc) or a == f"sm_{cc}" for a in env.torch_arch_list):
            f.append(Finding("warn", "torch", f"torch {env.torch} has no SASS for sm_{cc} "
                                              f"({', '.join(env.torch_arch_list)}): its kernels JIT from PTX",
                             "install a torch wheel built for this GPU's architecture"))

    # --- compilers ---------------------------------------------------------------------
    nv = _ver(env.nvrtc)
    if not env.nvrtc:
        f.append(Finding("error", "nvrtc", "NVRTC not found: kernelab cannot compile",
                         "pip install 'cuda-core[cu13]' (it brings cuda-bindings and NVRTC)"))
    else:
        archs = ", ".join(f"sm_{a}" for a in env.nvrtc_archs[-6:]) if env.nvrtc_archs else "?"
        f.append(Finding("ok", "nvrtc", f"NVRTC {env.nvrtc} (newest targets: {archs})"))
        if drv and nv and nv > drv:
            f.append(Finding("info", "nvrtc", f"NVRTC {env.nvrtc} is newer than the driver's CUDA {env.driver_cuda}: "
                                              "its cubins load (seen on the H200), its PTX would not JIT",
                             "nothing to do: kernelab compiles to cubins"))
        if env.gpus:
            cc = int(env.gpus[0]["cc"].replace(".", ""))
            if env.nvrtc_archs and cc not in env.nvrtc_archs:
                f.append(Finding("error", "nvrtc", f"NVRTC {env.nvrtc} cannot target sm_{cc}",
                                 "upgrade cuda-core/NVRTC to a release that supports this GPU"))
    if not env.cuda_headers:
        f.append(Finding("error", "headers", "no CUDA headers (cuda_bf16.h) for NVRTC",
                         "pip install nvidia-cuda-runtime (torch brings it), or set KERNELAB_CUDA_INCLUDE"))
    if env.nvcc:
        f.append(Finding("ok", "nvcc", f"nvcc {env.nvcc} at {env.nvcc_path}"))
        if drv and _ver(env.nvcc) and _ver(env.nvcc)[0] > drv[0]:
            f.append(Finding("warn", "nvcc", f"nvcc {env.nvcc} is a newer major than the driver's CUDA {env.driver_cuda}: "
                                             "programs it builds against its runtime will not start",
                             "use an nvcc of the driver's major version, or upgrade the driver"))
    else:
        f.append(Finding("info", "nvcc", "no nvcc: NVRTC compiles everything; nvcc is optional",
                         "pip install 'kernelab[tools]' for nvcc and cuobjdump wheels"))
    if not env.cuobjdump:
        f.append(Finding("warn", "cuobjdump", "no cuobjdump: SASS instruction mixes are unavailable",
                         "pip install 'kernelab[tools]' (nvidia-cuda-cuobjdump) or install a CUDA toolkit"))

    # --- libraries actually loaded, and LD_LIBRARY_PATH conflicts (seeds/004 §3.1, §5.1) ----
    for lib, paths in env.loaded_libraries.items():
        if len(paths) > 1:
            f.append(Finding("error", "libraries", f"two copies of {lib} are loaded: {', '.join(paths)}",
                             "remove the stale one from LD_LIBRARY_PATH; keep the driver's libcuda from the system path"))
    cudas = env.ld_path_libraries.get("libcuda", [])
    if cudas:
        f.append(Finding("warn", "libraries", f"LD_LIBRARY_PATH provides libcuda: {', '.join(cudas)}; libcuda belongs "
                                              "to the driver, and a copy from a toolkit (stubs/) shadows it",
                         "drop that folder from LD_LIBRARY_PATH, or put the system library folder "
                         "(/usr/lib/x86_64-linux-gnu) before it"))
    cudarts = env.ld_path_libraries.get("libcudart", [])
    versions = {p.split(".so.")[-1].split(".")[0] for p in cudarts if ".so." in p}
    if len(versions) > 1:
        f.append(Finding("warn", "libraries", f"LD_LIBRARY_PATH holds libcudart of several majors ({', '.join(sorted(versions))})",
                         "keep one toolkit's lib64 on LD_LIBRARY_PATH (the one /usr/local/cuda points to)"))

    # --- NVML state ----------------------------------------------------------------------
    st = env.nvml_state or {}
    clocks = st.get("clocks") or {}
    if st:
        if clocks.get("throttled"):
            f.append(Finding("warn", "clocks", f"the GPU is throttled now: {', '.join(clocks.get('reasons', []))}",
                             "timings taken now will be flagged; let the GPU cool or check power limits (do not reset it)"))
        else:
            f.append(Finding("ok", "clocks", f"SM clock {clocks.get('sm_mhz')} MHz, memory {clocks.get('mem_mhz')} MHz, "
                                             f"not throttled"))
        if st.get("persistence_mode") is False:
            f.append(Finding("info", "nvml", "persistence mode is off: the first CUDA call after idle pays driver start-up",
                             "kernelab's warm-up absorbs it; an administrator can enable it (nvidia-smi -pm 1)"))
        if st.get("ecc_enabled") is not None:
            f.append(Finding("info", "nvml", f"ECC {'on' if st['ecc_enabled'] else 'off'}"))
    return f


def exit_code(findings: list[Finding]) -> int:
    return 1 if any(x.level == "error" for x in findings) else 0
