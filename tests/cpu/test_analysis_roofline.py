"""Device table, roofline math, measured-ceiling bookkeeping and the plot, without a GPU.

Worked numbers use the H200 (4.8 TB/s, 989.5 dense bf16 TFLOP/s, 67 fp32) and the times
measured on it in ANCHORS.md (vector add fp32 2^28: 741 us; bf16 GEMM 8192^3: 1510 us).
"""

import json

import pytest

import kernelab.gpu as gpu
from kernelab.analysis import (
    DEVICES, AnalysisError, Ceilings, MeasuredCeilings, arithmetic_intensity, floor_seconds, lookup,
    nominal_ceilings, percent_of_ceiling, place, plot_roofline, ridge_point, roofline_ceilings, spec_for,
)
from kernelab.analysis import ceilings as ceil
from kernelab.analysis.devices import derived_spec, unit_name, with_live
from kernelab.gpu.device import DeviceInfo
from kernelab.ops import Work

T = 1e12
H200 = DEVICES["H200"]
VADD = Work(bytes=3 * 2**28 * 4, flops=2**28, flop_unit="fp32")
GEMM = Work(bytes=3 * 8192 * 8192 * 2, flops=2 * 8192**3, flop_unit="bf16")


# ---- devices ---------------------------------------------------------------------------

def test_required_devices_are_in_the_table():
    for name in ("A100 SXM4 80GB", "H100 SXM", "H100 PCIe", "H200", "L40S", "RTX 4090", "B200"):
        s = DEVICES[name]
        assert s.sm_count > 0 and s.l2_bytes > 0 and s.memory_bandwidth > 5e11 and s.reference
        assert {"fp32", "tf32", "bf16", "fp16"} <= set(s.peak_flops)


@pytest.mark.parametrize("name", list(DEVICES))
def test_dense_rates_are_consistent(name):
    s = DEVICES[name]
    f = s.peak_flops
    assert f["bf16"] == f["fp16"]
    # TF32 runs at half the 16-bit rate, fp8 at twice it (datasheets round: the L40S one says TF32
    # 183 and BF16 362.05, 1.1% apart from exactly half)
    assert f["tf32"] == pytest.approx(f["bf16"] / 2, rel=0.02)
    if "fp8" in f:
        assert f["fp8"] == pytest.approx(2 * f["bf16"], rel=0.02) and s.cc >= (8, 9)
    else:
        assert s.cc < (8, 9)
    assert f["fp32"] < f["bf16"]


def test_datasheet_values_dense_not_sparse():
    assert DEVICES["H100 SXM"].peak("bf16") == 989.5 * T  # the datasheet's 1,979 is with sparsity
    assert DEVICES["H100 SXM"].memory_bandwidth == 3.35e12 and DEVICES["H100 SXM"].sm_count == 132
    assert DEVICES["H100 PCIe"].memory_bandwidth == 2.0e12 and DEVICES["H100 PCIe"].sm_count == 114
    assert DEVICES["A100 SXM4 80GB"].peak("tf32") == 156 * T and DEVICES["A100 SXM4 80GB"].cc == (8, 0)
    assert DEVICES["H200"].memory_bandwidth == 4.8e12 and DEVICES["H200"].l2_bytes == 60 * 2**20
    assert DEVICES["RTX 4090"].peak("bf16") == 165.2 * T  # fp32 accumulate: half the fp16-accumulate rate
    assert DEVICES["B200"].cc == (10, 0) and DEVICES["B200"].sm_count == 148


@pytest.mark.parametrize("name, expected", [
    ("H100", "H100 SXM"), ("NVIDIA H100 80GB HBM3", "H100 SXM"), ("NVIDIA H100 PCIe", "H100 PCIe"),
    ("NVIDIA H200", "H200"), ("NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB"), ("a100", "A100 SXM4 80GB"),
    ("NVIDIA GeForce RTX 4090", "RTX 4090"), ("NVIDIA L40S", "L40S"), ("NVIDIA B200", "B200"),
    ("NVIDIA H100 NVL", None), ("NVIDIA H200 NVL", None), ("Tesla T4", None), ("", None),
])
def test_lookup(name, expected):
    s = lookup(name)
    assert (s.name if s else None) == expected


def test_spec_for_without_gpu_is_the_h200(monkeypatch):
    monkeypatch.setattr(gpu, "has_gpu", lambda: False)
    assert spec_for() is DEVICES["H200"]
    assert spec_for("H100 PCIe").sm_count == 114
    with pytest.raises(AnalysisError, match="unknown device"):
        spec_for("Voodoo 5")


def _info(name, cc, sms, mem_mhz, bus, l2=60 * 2**20, clock=1980.0):
    return DeviceInfo(index=0, name=name, cc=cc, sm_count=sms, l2_bytes=l2, smem_per_sm=233472,
                      smem_per_block=49152, smem_per_block_optin=232448, regs_per_sm=65536, regs_per_block=65536,
                      max_threads_per_sm=2048, max_threads_per_block=1024, max_blocks_per_sm=32, warp_size=32,
                      sm_clock_max_mhz=clock, mem_clock_mhz=mem_mhz, bus_width_bits=bus,
                      total_memory_bytes=150 * 10**9, driver_version="580.159")


def test_live_values_take_precedence():
    live = spec_for(_info("NVIDIA H200", (9, 0), 132, 3201.0, 6144))
    assert live.source == "datasheet+live" and live.name == "NVIDIA H200"
    assert live.memory_bandwidth == pytest.approx(2 * 3201e6 * 6144 / 8)  # 4.92 TB/s from clock x bus
    assert live.peak("bf16") == H200.peak("bf16") and live.l2_bytes == 60 * 2**20
    half = with_live(DEVICES["H100 SXM"], _info("NVIDIA H100 80GB HBM3", (9, 0), 66, 2619.0, 5120))
    assert half.peak("bf16") == pytest.approx(989.5 * T / 2)  # FLOP/s scale with the SM count
    assert half.memory_bandwidth == pytest.approx(3.352e12, rel=1e-3)


def test_unknown_gpu_gets_a_derived_spec():
    s = spec_for(_info("NVIDIA H100 NVL", (9, 0), 132, 2619.0, 6144, clock=1785.0))
    assert s.source == "derived"
    assert s.peak("fp32") == pytest.approx(256 * 132 * 1785e6)
    assert s.peak("bf16") == pytest.approx(4096 * 132 * 1785e6)
    t4 = derived_spec("Tesla T4", (7, 5), 40, 1590.0, 320e9)
    assert t4.peak("fp16") == pytest.approx(1024 * 40 * 1590e6) and not t4.has("bf16")


def test_units():
    assert unit_name("bfloat16") == "bf16" and unit_name("float32") == "fp32" and unit_name("e4m3") == "fp8"
    with pytest.raises(AnalysisError, match="unknown FLOP unit"):
        unit_name("int4")
    with pytest.raises(AnalysisError, match="no fp8"):
        DEVICES["A100 SXM4 80GB"].peak("fp8")


# ---- roofline math ----------------------------------------------------------------------

def test_memory_bound_floor_and_percent():
    # 3 x 2^28 x 4 B = 3.2212 GB / 4.8 TB/s = 671.1 us; 2^28 FLOP / 67 TFLOP/s = 4 us
    assert floor_seconds(VADD, H200) == pytest.approx(3 * 2**30 / 4.8e12)
    assert percent_of_ceiling(VADD, 741e-6, H200) == pytest.approx(100 * 671.09e-6 / 741e-6, rel=1e-4)  # 90.6%
    assert arithmetic_intensity(VADD) == pytest.approx(1 / 12)


def test_compute_bound_floor_intensity_ridge():
    # 2 x 8192^3 = 1.0995e12 FLOP / 989.5e12 = 1.111 ms; bytes 402.7 MB / 4.8e12 = 83.9 us
    assert floor_seconds(GEMM, H200) == pytest.approx(2 * 8192**3 / 989.5e12)
    assert arithmetic_intensity(GEMM) == pytest.approx(8192 / 3)
    assert ridge_point(H200, "bf16") == pytest.approx(989.5 / 4.8)
    p = place(GEMM, 1510e-6, H200)
    assert p.nominal.bound == "compute" and p.nominal.percent == pytest.approx(73.58, abs=0.01)
    assert p.achieved_flops == pytest.approx(728e12, rel=1e-3)  # ANCHORS: 728 TFLOP/s


def test_work_as_dict_and_zero_flops():
    w = {"bytes": 1 << 30, "flops": 0, "flop_unit": "float32"}
    assert floor_seconds(w, H200) == pytest.approx((1 << 30) / 4.8e12)
    assert arithmetic_intensity({"bytes": 0, "flops": 0}) == 0.0
    p = place(w, 300e-6, H200)
    assert p.nominal.ridge_point is None and p.nominal.bound == "memory"


def test_bad_work_and_times():
    with pytest.raises(AnalysisError):
        floor_seconds({"bytes": -1}, H200)
    with pytest.raises(AnalysisError, match="positive"):
        percent_of_ceiling(VADD, 0.0, H200)
    with pytest.raises(AnalysisError, match="no nominal fp8 ceiling"):
        floor_seconds(Work(bytes=1, flops=1, flop_unit="fp8"), DEVICES["A100 SXM4 80GB"])


# ---- measured ceilings ------------------------------------------------------------------

def measured_h200(**overrides) -> MeasuredCeilings:
    """The ANCHORS.md numbers, as `kernelab ceilings` would store them."""
    e = {
        "copy": ceil.CeilingEntry("copy", "bandwidth", "torch copy_ of 2 GiB fp32", value=4.28e12, bytes=2 << 31,
                                  nominal=4.8e12, seconds=(2 << 31) / 4.28e12),
        "read": ceil.CeilingEntry("read", "bandwidth", "torch.sum of 2 GiB fp32", value=4.15e12, nominal=4.8e12),
        "write": ceil.CeilingEntry("write", "bandwidth", "fill_ of 2 GiB fp32", value=4.4e12, nominal=4.8e12),
        "gemm_bf16": ceil.CeilingEntry("gemm_bf16", "flops", "cuBLAS bf16", unit="bf16", value=728e12,
                                       nominal=989.5e12),
        "gemm_fp32": ceil.CeilingEntry("gemm_fp32", "flops", "cuBLAS fp32, TF32 off", unit="fp32", value=51e12,
                                       nominal=67e12),
        "gemm_fp8": ceil.CeilingEntry("gemm_fp8", "flops", "cuBLAS fp8", unit="fp8", skipped="no _scaled_mm"),
    }
    e.update(overrides)
    return MeasuredCeilings(device="NVIDIA H200", cc=(9, 0), driver="580.159", sm_count=132,
                            measured_at="2026-11-30T00:00:00+00:00", quick=False, entries=e)


def test_roofline_ceilings_from_measured():
    c = roofline_ceilings(measured_h200())
    assert c.kind == "measured" and c.bandwidth == 4.28e12
    assert c.flops == {"bf16": 728e12, "fp32": 51e12}  # fp8 was skipped; fp16/tf32 not measured
    assert "copy" in c.sources["bandwidth"]
    full = roofline_ceilings(measured_h200(), fallback=H200)
    assert full.flops["fp8"] == H200.peak("fp8") and full.sources["fp8"].startswith("nominal")
    # without a copy: the harmonic mean of read and write
    m = measured_h200()
    del m.entries["copy"]
    assert roofline_ceilings(m).bandwidth == pytest.approx(2 / (1 / 4.15e12 + 1 / 4.4e12))
    m.entries.clear()
    with pytest.raises(AnalysisError, match="ceilings --refresh"):
        roofline_ceilings(m)


def test_percent_of_measured_vs_nominal():
    p = place(VADD, 741e-6, H200, measured_h200())
    assert p.measured.percent == pytest.approx(100 * (3 * 2**30 / 4.28e12) / 741e-6)  # 101.6%: torch.add
    assert p.measured.percent > p.nominal.percent                 # ran at the copy ceiling
    g = place(GEMM, 1510e-6, H200, measured_h200())
    assert g.measured.percent == pytest.approx(100 * (2 * 8192**3 / 728e12) / 1510e-6)
    f8 = place(Work(bytes=1 << 20, flops=1 << 40, flop_unit="fp8"), 1.0, H200, measured_h200())
    assert f8.measured is None  # fp8 not measured: no measured roof to compare with


def test_measured_round_trip_and_rows():
    m = measured_h200()
    d = json.loads(json.dumps(m.to_dict()))
    back = MeasuredCeilings.from_dict(d)
    assert back.bandwidth == 4.28e12 and back.flops("bfloat16") == 728e12 and back.cc == (9, 0)
    rows = {r["name"]: r for r in back.rows()}
    assert rows["copy"]["percent_of_nominal"] == pytest.approx(100 * 4.28 / 4.8)
    assert rows["gemm_fp8"]["skipped"] and rows["gemm_fp8"]["value"] is None
    assert roofline_ceilings(d).bandwidth == 4.28e12  # the pure function takes the stored dict too


def test_cache_per_device_and_driver(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELAB_CEILINGS_DIR", str(tmp_path))
    m = measured_h200()
    path = ceil.save(m)
    assert path.parent == tmp_path and path.name == "NVIDIA_H200__driver-580.159.json"
    assert ceil.load_cached("NVIDIA H200", "580.159").bandwidth == 4.28e12
    assert ceil.load_cached("NVIDIA H200", "575.1") is None  # another driver: measure again
    assert ceil.load_cached("NVIDIA H100 PCIe", "580.159") is None
    monkeypatch.delenv("KERNELAB_CEILINGS_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ceil.cache_dir() == tmp_path / "xdg" / "kernelab" / "ceilings"


def test_get_ceilings_uses_the_cache_and_never_a_quick_one_for_a_full_request(monkeypatch):
    calls = []
    quick = measured_h200()
    quick.quick = True
    monkeypatch.setattr(ceil, "load_cached", lambda: quick)
    monkeypatch.setattr(ceil, "measure_ceilings", lambda quick=False: calls.append(quick) or measured_h200())
    monkeypatch.setattr(ceil, "save", lambda m: None)
    assert ceil.get_ceilings(quick=True) is quick and calls == []
    assert ceil.get_ceilings().quick is False and calls == [False]
    ceil.get_ceilings(refresh=True, quick=True)
    assert calls == [False, True]


def test_measuring_needs_a_gpu(monkeypatch):
    monkeypatch.setattr(gpu, "has_gpu", lambda: False)
    with pytest.raises(gpu.NoGPUError):
        ceil.measure_ceilings(quick=True)


def test_nominal_ceilings_and_as_ceilings():
    c = nominal_ceilings(H200)
    assert isinstance(c, Ceilings) and c.kind == "nominal" and c.peak("bf16") == 989.5e12
    assert Ceilings.from_dict(c.to_dict()) == c


# ---- plot -------------------------------------------------------------------------------

ROWS = [
    {"op": "gemm", "variant": "v3_wmma", "work": GEMM.to_dict(), "median_s": 2.4e-3},
    {"op": "gemm", "variant": "v5_wgmma", "work": GEMM.to_dict(), "measurement": {"median_s": 1.6e-3}},
    {"op": "gemm", "peer": "cuBLAS", "work": GEMM.to_dict(), "median_s": 1.51e-3},
    {"op": "vector_add", "variant": "v2_persistent", "bytes": VADD.bytes, "flops": VADD.flops,
     "flop_unit": "fp32", "time_s": 760e-6},
    {"op": "vector_add", "kind": "peer", "name": "torch", "work": VADD.to_dict(), "median_s": 741e-6},
    {"op": "transpose", "variant": "v1_tiled", "work": {"bytes": 2 * 16384**2 * 4, "flops": 0}, "median_s": 2.0e-3},
    {"op": "transpose", "peer": "torch", "work": {"bytes": 2 * 16384**2 * 4, "flops": 0}, "median_s": 1.844e-3},
    {"op": "softmax", "variant": "v1", "work": {"bytes": 10, "flops": 10}},  # failed check: no time, left out
]


def test_plot_writes_png_and_svg(tmp_path):
    files = plot_roofline(ROWS, tmp_path / "plots" / "roofline.v1", H200, measured_h200(), title="H200")
    assert [f.name for f in files] == ["roofline.v1.png", "roofline.v1.svg"]
    assert files[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and files[0].stat().st_size > 10_000
    svg = files[1].read_text()
    assert "<svg" in svg and "v5_wgmma" in svg and "cuBLAS" in svg and "transpose/v1_tiled" in svg
    assert "softmax" not in svg


def test_plot_from_stored_json_only_memory_rows(tmp_path):
    rows = json.loads(json.dumps(ROWS[5:7]))
    (png,) = plot_roofline(rows, tmp_path / "mem.png", "H100 SXM", formats=("png",))
    assert png.name == "mem.png" and png.stat().st_size > 5_000


def test_plot_refuses_rows_without_times(tmp_path):
    with pytest.raises(AnalysisError, match="nothing to plot"):
        plot_roofline([ROWS[-1]], tmp_path / "x", H200)
