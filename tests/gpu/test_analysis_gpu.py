"""Static analysis checked against the real GPU.

- The occupancy table equals the device's attributes, and the calculator equals the
  driver's occupancy API (cuOccupancyMaxActiveBlocksPerMultiprocessor through cuda.core)
  exactly, for every library kernel and for a grid of synthetic kernels (static shared
  memory, registers pinned with max_registers, named barriers; block sizes; dynamic shared
  memory up to the opt-in maximum). Every mismatch is printed as a table (and written to
  $OUT/occupancy_mismatches.txt when $OUT is set) before the test fails, so one run says
  what to fix.
- "Will it run" verdicts match what loading a cubin does.
- A short ceilings run: copy at 50-100% of nominal bandwidth, bf16 GEMM > 300 TFLOP/s on an
  H100/H200-class GPU; the table is printed and written to $OUT/analysis_ceilings.json.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kernelab.analysis import (
    floor_seconds, inspect_module, list_fatbin, limits_for, lookup, measure_ceilings, occupancy,
    place, roofline_ceilings, spec_for, will_it_run,
)
from kernelab.analysis import ceilings as ceil
from kernelab.gpu import KernelabError, compile_source, device_info, load
from kernelab.gpu.module import DEFAULT_SMEM_LIMIT, Module
from kernelab.ops import Case, compile_variant, discover, load_variant, run_variant

pytestmark = pytest.mark.gpu

KiB = 1024
BLOCKS = (32, 33, 64, 96, 100, 128, 160, 192, 256, 384, 512, 640, 768, 1000, 1024)


def _out(name: str) -> Path | None:
    out = os.environ.get("OUT")
    return Path(out) / name if out else None


def _attr(k, name):
    v = getattr(k.attributes, name)
    return v() if callable(v) else v


def _driver_blocks(kernel, block: int, dyn: int) -> int:
    """The driver's answer; a refused query counts as 0 blocks (the config cannot launch)."""
    try:
        return int(kernel.max_active_blocks_per_sm(block, dyn))
    except Exception:
        return 0


def _opt_in(kernel, static: int, optin: int) -> bool:
    """Raise the kernel's dynamic shared-memory limit to the opt-in maximum, as kernelab.gpu
    does for any launch asking more than 48 KiB. Returns False if it cannot (static too big)."""
    ask = DEFAULT_SMEM_LIMIT + 128
    if static + ask > optin:
        return False
    kernel.max_active_blocks_per_sm(32, ask)
    return True


def _compare(kernel, label: str, cc, dyns, blocks=BLOCKS, opt_in=True) -> tuple[list[str], int]:
    """Driver vs kernelab for every (dynamic smem, block) that can launch: blocks up to the kernel's
    own max_threads_per_block (__launch_bounds__, registers), shared memory up to the opt-in maximum."""
    regs, static = _attr(kernel, "num_regs"), _attr(kernel, "shared_size_bytes")
    max_threads = _attr(kernel, "max_threads_per_block")
    barriers = kernel.resources.barriers if kernel.resources else 1
    optin = device_info().smem_per_block_optin
    bad, n = [], 0
    for dyn in dyns:
        if static + dyn > optin:
            continue
        for b in blocks:
            if b > max_threads:
                continue
            want = _driver_blocks(kernel, b, dyn)
            got = occupancy(cc, b, regs, static + dyn, barriers=barriers, opt_in=opt_in, max_threads=max_threads)
            n += 1
            if got.blocks_per_sm != want:
                bad.append(f"{label:40s} regs={regs:3d} static={static:6d} dyn={dyn:6d} bars={barriers} block={b:4d} "
                           f"opt_in={opt_in!s:5s} driver={want:3d} kernelab={got.blocks_per_sm:3d} "
                           f"({got.limiter}; limits {got.block_limits})")
    return bad, n


def _report(bad: list[str], n: int, what: str) -> None:
    head = f"{what}: {len(bad)} of {n} configurations differ from the driver"
    text = "\n".join([head, *bad])
    print(text)
    path = _out("occupancy_mismatches.txt")
    if path is not None and bad:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as f:
            f.write(text + "\n\n")
    assert not bad, "\n".join([head, *bad[:40]])


def test_table_matches_the_device():
    info = device_info()
    lim = limits_for(info.cc)
    live = {"max_threads_per_sm": info.max_threads_per_sm, "max_blocks_per_sm": info.max_blocks_per_sm,
            "smem_per_sm": info.smem_per_sm, "smem_per_block_optin": info.smem_per_block_optin,
            "smem_per_block_default": info.smem_per_block, "regs_per_sm": info.regs_per_sm,
            "regs_per_block": info.regs_per_block, "max_threads_per_block": info.max_threads_per_block}
    table = {k: getattr(lim, k) for k in live}
    print("device", info.name, info.cc, live)
    assert table == live


def _library_kernels():
    """(label, Kernel) for every kernel of every variant that builds for this GPU."""
    from kernelab.ops.build import target_arch

    for op in discover().values():
        for v in op.variants():
            try:
                target_arch(v)  # an sm_90a-only variant on another GPU: not buildable here
            except ValueError:
                continue
            mod = load_variant(op, v)
            for name in mod.kernel_names():
                k = mod.kernel(name)
                try:
                    cluster = _attr(k, "required_cluster_width")
                except Exception:
                    cluster = 0
                if cluster:  # a cluster kernel's residency is cuOccupancyMaxActiveClusters' question
                    print(f"skip {v.id} {name}: compiled with a cluster of {cluster}")
                    continue
                yield f"{v.id} {name}", k


def test_occupancy_matches_driver_for_every_library_kernel():
    info = device_info()
    dyns = (0, 1, 4 * KiB, 20 * KiB, 47 * KiB, 64 * KiB, 100 * KiB, 160 * KiB, 200 * KiB, info.smem_per_block_optin)
    bad, n, kernels = [], 0, 0
    for label, k in _library_kernels():
        # ptxas' report is what the static analysis reads; it must be what the driver sees
        if k.resources is not None:
            assert k.resources.registers == _attr(k, "num_regs"), label
            assert k.resources.shared_static == _attr(k, "shared_size_bytes"), label
        static = _attr(k, "shared_size_bytes")
        if _opt_in(k, static, info.smem_per_block_optin):
            b, m = _compare(k, label, info.cc, dyns)
        else:
            b, m = _compare(k, label, info.cc, [d for d in dyns if static + d <= DEFAULT_SMEM_LIMIT], opt_in=False)
        bad += b
        n += m
        kernels += 1
    assert kernels > 0
    _report(bad, n, f"library kernels ({kernels})")


SYNTH = r"""
// Holds NACC values live so ptxas uses every register max_registers allows; SMEM bytes of static shared memory.
extern "C" __global__ void synth(const float* __restrict__ x, float* __restrict__ y, int n) {
#if SMEM > 0
  __shared__ float buf[SMEM / 4];
  buf[threadIdx.x % (SMEM / 4)] = x[threadIdx.x];
  __syncthreads();
#endif
  float acc[NACC];
#pragma unroll
  for (int k = 0; k < NACC; ++k) acc[k] = x[threadIdx.x + k * n];
  float s = 0.f;
#pragma unroll
  for (int r = 1; r < 3; ++r)
#pragma unroll
    for (int k = 0; k < NACC; ++k) s += acc[k] * acc[(k * r + 7) % NACC];
#if SMEM > 0
  s += buf[(threadIdx.x + 1) % (SMEM / 4)];
#endif
  y[threadIdx.x] = s;
}
"""

NAMED_BARRIERS = r"""
// Three named barriers besides barrier 0 (ptxas: "used 4 barriers"): 9.0+ counts them.
extern "C" __global__ void named(float* y) {
  __syncthreads();
  asm volatile("bar.sync 1, 64;");
  y[threadIdx.x] = 1.f;
  asm volatile("bar.sync 2, 64;");
  y[threadIdx.x + 64] = 2.f;
  asm volatile("bar.sync 3, 64;");
}
"""


def test_occupancy_matches_driver_for_synthetic_kernels():
    info = device_info()
    dyns = (0, 1, 1000, 8 * KiB, 30000, 48 * KiB, 70000, 100000, 150000, 200000, info.smem_per_block_optin)
    bad, n, regs_seen = [], 0, set()
    # Registers only move the register limit and static shared memory the shared-memory one, so
    # every register cap runs without static shared memory, and three caps with each static size.
    grid = [(0, cap) for cap in (24, 32, 40, 56, 64, 72, 96, 128, 168, 255)]
    grid += [(smem, cap) for smem in (4096, 20000, 48 * KiB) for cap in (32, 72, 255)]
    for smem, cap in grid:
        k = load(SYNTH, defines={"SMEM": smem, "NACC": 160}, max_registers=cap).kernel("synth")
        regs_seen.add(_attr(k, "num_regs"))
        label = f"synth smem={smem} maxrreg={cap}"
        if _opt_in(k, smem, info.smem_per_block_optin):
            b, m = _compare(k, label, info.cc, dyns)
        else:
            b, m = _compare(k, label, info.cc, [d for d in dyns if smem + d <= DEFAULT_SMEM_LIMIT], opt_in=False)
        bad += b
        n += m
    # Before any opt-in the per-block limit is 48 KiB (static + dynamic). kernelab.gpu.Kernel opts a
    # kernel in by itself when a request needs more, so only requests within 48 KiB see the
    # un-opted-in kernel: static 20000 + dynamic up to 29000 (= 49000 <= 49152).
    fresh = load(SYNTH, defines={"SMEM": 20000, "NACC": 8, "FRESH": 1}).kernel("synth")
    b, m = _compare(fresh, "synth smem=20000 not opted in", info.cc, (0, 20000, 29000), opt_in=False)
    bad += b
    n += m
    named = load(NAMED_BARRIERS).kernel("named")
    assert named.resources.barriers == 4
    b, m = _compare(named, "named barriers x4", info.cc, (0, 1000), blocks=(32, 64, 96, 128))
    bad += b
    n += m
    print(f"registers covered: {sorted(regs_seen)}")
    assert len(regs_seen) >= 6, "max_registers must spread the register counts"
    _report(bad, n, "synthetic kernels")


def test_seeds_example_on_this_gpu_if_hopper():
    """seeds/003 with a real kernel: 40 registers, 64 KiB shared memory, 256 threads on 9.0."""
    info = device_info()
    if info.cc != (9, 0):
        pytest.skip(f"the seeds' example is for 9.0 (H100/H200); this GPU is {info.cc}")
    for cap in (40, 48, 56):
        k = load(SYNTH, defines={"SMEM": 0, "NACC": 160}, max_registers=cap).kernel("synth")
        if _attr(k, "num_regs") == 40:
            break
    else:
        pytest.fail("no max_registers setting gave a 40-register kernel")
    assert k.max_active_blocks_per_sm(256, 64 * KiB) == 3
    assert occupancy(info.cc, 256, 40, 64 * KiB).blocks_per_sm == 3
    # For the record: the carve-out preference the driver holds for a kernel nobody configured (-1 = none)
    print("function attributes:", {n: _attr(k, n) for n in ("preferred_shared_memory_carveout",
                                                            "max_dynamic_shared_size_bytes", "max_threads_per_block")})


def test_will_it_run_matches_loading():
    info = device_info()
    src = 'extern "C" __global__ void k(float* y) { y[threadIdx.x] = 1.f; }'
    archs = ["sm_80", f"sm_{info.cc[0]}{info.cc[1]}"]
    if info.cc == (9, 0):
        archs.append("sm_90a")
    if info.cc[0] >= 9:
        archs.append("sm_89")
    for arch in archs:
        compiled = compile_source(src, arch=arch)
        verdict = will_it_run({compiled.arch}, info)
        try:
            Module(compiled).kernel("k")
            loaded, why = True, ""
        except KernelabError as e:  # "no kernel image" (CUDA_ERROR_NO_BINARY_FOR_GPU)
            loaded, why = False, str(e)
        print(arch, "->", verdict, "| loaded:", loaded, why)
        assert loaded == verdict.runs, (arch, verdict)


def test_list_fatbin_reads_cubins_with_this_machines_cuobjdump():
    """cuobjdump 12.8 (triton 3.6) names an sm_90a cubin sm_90: compare compute capabilities."""
    from kernelab.gpu.arch import Arch

    info = device_info()
    for arch in ("sm_80", f"sm_{info.cc[0]}{info.cc[1]}"):
        compiled = compile_source('extern "C" __global__ void k(float* y) { y[0] = 1.f; }', arch=arch)
        listing = list_fatbin(compiled.cubin)
        assert [Arch.parse(a).cc for a in listing.sass] == [Arch.parse(arch).cc] and listing.ptx == ()


def test_spec_for_this_gpu_is_live():
    info = device_info()
    spec = spec_for()
    print(spec)
    assert spec.sm_count == info.sm_count and spec.cc == info.cc and spec.l2_bytes == info.l2_bytes
    assert spec.memory_bandwidth == pytest.approx(info.nominal_bandwidth)
    table = lookup(info.name)
    if table is not None:
        assert spec.source == "datasheet+live"
        # the live bandwidth (memory clock x bus width) is within 10% of the datasheet's
        assert spec.memory_bandwidth == pytest.approx(table.memory_bandwidth, rel=0.10)


@pytest.fixture(scope="module")
def measured():
    m = measure_ceilings(quick=True)
    rows = m.rows()
    print(f"\nceilings of {m.device} (driver {m.driver}, quick):")
    for r in rows:
        best = "" if r["best"] is None else f" (best {r['best']:.3f})"
        v = "-" if r["value"] is None else f"{r['value']:.3f} {r['unit']}{best}"
        pct = "" if r["percent_of_nominal"] is None else f" = {r['percent_of_nominal']:.1f}% of {r['nominal']:.3f}"
        print(f"  {r['name']:10s} {v}{pct}  {r['skipped'] or ''}  [{r['what']}]")
    path = _out("analysis_ceilings.json")
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(m.to_dict(), indent=1))
    return m


def test_ceilings_are_sane(measured):
    m = measured
    nominal_bw = spec_for().memory_bandwidth
    copy = m.entries["copy"]
    assert copy.skipped is None, copy.skipped
    assert 0.5 * nominal_bw <= copy.value <= nominal_bw, f"copy {copy.value / 1e12:.2f} TB/s"
    for name in ("read", "write"):
        e = m.entries[name]
        assert e.skipped is None and 0.4 * nominal_bw <= e.value <= nominal_bw, (name, e.value)
    bf16 = m.entries["gemm_bf16"]
    assert bf16.skipped is None
    info = device_info()
    if info.cc in ((9, 0), (10, 0)) and info.sm_count >= 114:  # H100 / H200 / B200 class
        assert bf16.value > 300e12, f"bf16 GEMM {bf16.value / 1e12:.0f} TFLOP/s"
        assert m.entries["gemm_fp16"].value > 300e12
    assert m.entries["gemm_tf32"].value > m.entries["gemm_fp32"].value, "TF32 on must beat TF32 off"
    fp8 = m.entries["gemm_fp8"]
    assert fp8.value or fp8.skipped, "fp8 is measured or skipped with a reason"
    if info.cc >= (8, 9) and fp8.value:
        assert fp8.value > bf16.value
    for e in m.entries.values():
        if e.value is not None:
            assert e.measurement and e.seconds > 0
            if e.nominal:
                assert e.value <= 1.05 * e.nominal, (e.name, e.value, e.nominal)


def test_ceilings_cache_and_roofline(measured, tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELAB_CEILINGS_DIR", str(tmp_path))
    path = ceil.save(measured)
    back = ceil.load_cached()
    assert back is not None and back.bandwidth == measured.bandwidth and path.is_file()
    c = roofline_ceilings(back, fallback=spec_for())
    assert c.bandwidth == measured.bandwidth and c.peak("bf16") == measured.flops("bf16")
    assert ceil.get_ceilings(quick=True).device == measured.device  # served from the cache


def test_vector_add_on_the_roofline(measured):
    """The library's best vector_add at 2^28 fp32, timed by the bench module, placed on both roofs."""
    from kernelab.bench import bench

    op = discover()["vector_add"]
    v = op.variant(op.best_variant)
    case = Case((1 << 28,), "float32")
    inputs = op.make_inputs(case, 0, "cuda")
    outputs = op.make_outputs(case, inputs)
    spec = spec_for()
    work = op.work(case)
    m = bench(lambda: run_variant(op, v, case, inputs, outputs), mode="cold", floor_s=floor_seconds(work, spec),
              floor_reason=f"{work.bytes} B at the nominal {spec.memory_bandwidth / 1e12:.2f} TB/s",
              name="vector_add v2 2^28")
    p = place(work, m.median_s, spec, measured)
    print(f"vector_add {v.name}: {m.median_s * 1e6:.0f} us, {p.achieved_bandwidth / 1e12:.2f} TB/s, "
          f"{p.nominal.percent:.1f}% of nominal, {p.measured.percent:.1f}% of measured")
    assert p.nominal.bound == "memory"
    assert 50 < p.nominal.percent <= 100
    assert 60 < p.measured.percent < 115  # torch.add reached 102% of the copy ceiling on the H200


def test_inspect_library_kernel_on_this_gpu():
    op = discover()["vector_add"]
    info = device_info()
    for v in op.variants():
        reports = inspect_module(compile_variant(op, v), threads=v.meta_int("block", 256), cc=info.cc)
        for r in reports:
            k = load_variant(op, v).kernel(r.name)
            assert r.occupancy.blocks_per_sm == k.max_active_blocks_per_sm(v.meta_int("block", 256))
            assert r.mix is not None and r.mix.total > 0
