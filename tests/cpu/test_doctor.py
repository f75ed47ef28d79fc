"""`kernelab doctor` rules on made-up environments (each problem must come with its fix)."""

from kernelab.doctor import diagnose, exit_code
from kernelab.gpu.environment import Environment, probe


def env(**kw):
    base = dict(python="3.11", platform="Linux x86_64", torch="2.11.0+cu130", torch_cuda="13.0",
                torch_arch_list=["sm_80", "sm_90", "sm_100"], torch_sees_gpu=True, gpu_count=1,
                gpus=[{"index": 0, "name": "NVIDIA H200", "cc": "9.0", "memory_gib": 139.8}],
                driver="580.159.04", driver_cuda="13.0", nvrtc="13.0", nvrtc_archs=[75, 80, 86, 89, 90, 100, 120],
                nvcc="13.0", nvcc_path="/usr/local/cuda/bin/nvcc", cuobjdump="/usr/local/cuda/bin/cuobjdump",
                cuda_headers="/usr/local/cuda/include")
    base.update(kw)
    return Environment(**base)


def levels(findings, topic):
    return [f.level for f in findings if f.topic == topic]


def test_healthy_h200_has_no_errors():
    f = diagnose(env())
    assert exit_code(f) == 0 and not [x for x in f if x.level in ("warn", "error")]


def test_runtime_newer_major_than_driver_is_an_error_with_fix():
    f = diagnose(env(torch_cuda="13.0", driver_cuda="12.4"))
    err = [x for x in f if x.topic == "driver" and x.level == "error"]
    assert err and "insufficient" in err[0].message and "upgrade the NVIDIA driver" in err[0].fix
    assert exit_code(f) == 1


def test_minor_newer_runtime_is_a_warning_about_ptx():
    f = diagnose(env(torch_cuda="13.1", driver_cuda="13.0"))
    assert "warn" in levels(f, "driver")


def test_nvrtc_newer_than_driver_is_only_info():
    f = diagnose(env(nvrtc="13.5"))
    assert levels(f, "nvrtc").count("info") == 1 and exit_code(f) == 0


def test_no_gpu_reports_toolchain_and_exits_zero():
    f = diagnose(env(torch_sees_gpu=False, gpu_count=0, gpus=[], driver=None, driver_cuda=None))
    assert levels(f, "gpu") == ["info"] and "ok" in levels(f, "nvrtc") and exit_code(f) == 0


def test_duplicate_libcudart_loaded_is_an_error():
    f = diagnose(env(loaded_libraries={"libcudart": ["/usr/local/cuda-11.8/lib64/libcudart.so.11.0",
                                                      "/opt/x/libcudart.so.13"]}))
    assert "error" in levels(f, "libraries")


def test_libcuda_on_ld_library_path_is_flagged():
    f = diagnose(env(ld_path_libraries={"libcuda": ["/usr/local/cuda/lib64/stubs/libcuda.so"]}))
    w = [x for x in f if x.topic == "libraries"]
    assert w and w[0].level == "warn" and "LD_LIBRARY_PATH" in w[0].fix


def test_throttled_clock_warns():
    f = diagnose(env(nvml_state={"clocks": {"throttled": True, "reasons": ["sw_power_cap"], "sm_mhz": 1200}}))
    assert "warn" in levels(f, "clocks")


def test_missing_nvrtc_and_headers_are_errors():
    f = diagnose(env(nvrtc=None, cuda_headers=None))
    assert "error" in levels(f, "nvrtc") and "error" in levels(f, "headers")


def test_gpu_arch_unknown_to_nvrtc():
    f = diagnose(env(gpus=[{"index": 0, "name": "Future", "cc": "13.0", "memory_gib": 1}]))
    assert "error" in levels(f, "nvrtc")


def test_probe_runs_here():
    e = probe()
    assert e.python and e.nvrtc, "NVRTC comes with cuda-core, which is a dependency"
    assert e.cuda_headers, "torch's wheels bring the CUDA headers"
