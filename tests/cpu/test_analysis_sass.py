"""The cuobjdump parsers against real outputs captured in tests/fixtures (see sass/capture.py,
tools in sass/TOOLS.txt: cuobjdump 13.1 from triton, NVRTC 13, nvcc 13.0).

fixtures/sass/nvrtc_sm_*.sass: `cuobjdump -sass` of source.cu compiled for sm_80, sm_90, sm_90a.
fixtures/fatbin/*.dump|.lelf|.lptx: the default dump and the -lelf / -lptx listings of three
fatbins built with `nvcc -fatbin -gencode ...` and of an executable built with -arch=sm_80.
"""

import re
from pathlib import Path

import pytest

from kernelab.analysis import AnalysisError, InstructionMix, list_fatbin, parse_sass, sass_mix
from kernelab.analysis.sass import parse_fatbin_dump, parse_file_list
from kernelab.gpu import parse_ptxas_log
from kernelab.gpu.toolchain import cuobjdump_path

FIX = Path(__file__).parents[1] / "fixtures"
SASS = FIX / "sass"
FATBIN = FIX / "fatbin"
KERNELS = {"copy_vec4", "copy_f64", "bytes_and_halves", "block_sum", "spiller", "mma_sync_bf16_s8"}

needs_cuobjdump = pytest.mark.skipif(cuobjdump_path() is None, reason="no cuobjdump (pip install nvidia-cuda-cuobjdump)")


def mixes(arch: str) -> dict[str, InstructionMix]:
    funcs = parse_sass((SASS / f"nvrtc_{arch}.sass").read_text())
    assert {f.arch for f in funcs} == {arch}
    return {f.name: f.mix for f in funcs}


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_90a"])
def test_every_kernel_is_found(arch):
    expected = KERNELS | ({"wgmma_bf16_fp8"} if arch == "sm_90a" else set())
    assert set(mixes(arch)) == expected


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_90a"])
def test_global_access_widths(arch):
    m = mixes(arch)
    v4 = m["copy_vec4"]
    assert (v4.ldg128, v4.stg128, v4.ldg, v4.stg) == (1, 1, 1, 1)
    assert v4.widest_load_bits == 128 and v4.widest_store_bits == 128
    f64 = m["copy_f64"]
    assert (f64.ldg64, f64.stg64, f64.ldg, f64.stg) == (1, 1, 1, 1)
    bh = m["bytes_and_halves"]
    assert (bh.ldg8, bh.ldg16, bh.ldg32) == (1, 1, 0)  # the u8 load is reused for f[i]
    assert (bh.stg8, bh.stg16, bh.stg32) == (1, 1, 1)
    assert bh.widest_load_bits == 16
    assert m["spiller"].ldg32 == 36  # 36 scalar loads of x


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_90a"])
def test_shared_barrier_shuffle_atomic(arch):
    b = mixes(arch)["block_sum"]
    assert b.shfl == 10  # 5 xor steps + 5 down steps
    assert b.bar == 1 and b.sts == 1 and b.lds == 1 and b.atomics == 1
    assert b.tensor_core == 0 and b.local_memory == 0


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_90a"])
def test_tensor_cores_ldmatrix_cp_async(arch):
    t = mixes(arch)["mma_sync_bf16_s8"]
    assert (t.hmma, t.imma, t.ldsm, t.ldgsts) == (1, 1, 1, 1)
    assert t.hgmma == t.qgmma == 0 and t.tensor_core == 2
    assert t.opcodes["HMMA.16816.F32.BF16"] == 1 and t.opcodes["IMMA.16832.S8.S8"] == 1


def test_hopper_wgmma_and_stmatrix():
    w = mixes("sm_90a")["wgmma_bf16_fp8"]
    assert (w.hgmma, w.qgmma, w.stsm, w.hmma) == (1, 1, 1, 0)
    assert w.opcodes["HGMMA.64x8x16.F32.BF16"] == 1 and w.opcodes["QGMMA.64x8x32.F32.E4M3.E4M3"] == 1
    assert w.bar == 3  # three __syncthreads


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_90a"])
def test_spills_show_as_local_memory_and_agree_with_ptxas(arch):
    m = mixes(arch)
    res = parse_ptxas_log((SASS / f"nvrtc_{arch}.ptxas.log").read_text())
    assert res["spiller"].spills > 0 and res["spiller"].registers == 32
    assert m["spiller"].stl > 0 and m["spiller"].ldl > 0
    for name, r in res.items():  # no spills and no stack: no local memory instructions
        if r.spills == 0 and r.stack_frame == 0:
            assert m[name].local_memory == 0, name


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_90a"])
def test_totals_match_an_independent_count(arch):
    text = (SASS / f"nvrtc_{arch}.sass").read_text()
    funcs = parse_sass(text)
    lines = re.findall(r"^\s+/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_.]+)", text, re.M)
    assert sum(f.lines for f in funcs) == len(lines)
    assert sum(f.mix.total for f in funcs) == sum(1 for op in lines if op != "NOP")
    for f in funcs:
        assert sum(f.mix.opcodes.values()) == f.lines
        assert f.mix.total == f.lines - f.mix.opcodes.get("NOP", 0)


def test_predicated_and_uniform_instructions():
    text = """
	code for sm_90
		Function : k
        /*0000*/               @P0 LDG.E.128 R4, desc[UR4][R2.64] ;   /* 0x0000000402040981 */
        /*0010*/              @!P1 STG.E.64 desc[UR4][R2.64], R4 ;    /* 0x0000000402009986 */
        /*0020*/              @!UP0 BAR.SYNC.DEFER_BLOCKING 0x0 ;     /* 0x0000000000008b1d */
        /*0030*/                   LDG.E.ENL2.256 R8, desc[UR4][R2.64] ; /* 0x0 */
        /*0040*/                   LDG.E.LTC128B.S16 R9, desc[UR4][R2.64] ; /* 0x0 */
        /*0050*/                   UTCHMMA gdesc[UR4], gdesc[UR6], tmem[UR8], tmem[UR10], idesc[UR12], UPT ; /* 0x0 */
        /*0060*/                   UTMALDG.2D [UR8], [UR4] ;          /* 0x0 */
        /*0070*/                   EXIT ;                             /* 0x000000000000794d */
        /*0080*/                   NOP;                               /* 0x0000000000007918 */
"""
    (f,) = parse_sass(text)
    m = f.mix
    assert (m.ldg128, m.stg64, m.bar, m.ldg256, m.ldg16) == (1, 1, 1, 1, 1)
    assert m.tcgen05_mma == 1 and m.tma == 1 and m.total == 8 and f.lines == 9


def test_instruction_before_function_is_an_error():
    with pytest.raises(AnalysisError, match="Function"):
        parse_sass("        /*0000*/   EXIT ;   /* 0x0 */\n")


def test_mix_round_trips_through_a_dict():
    m = mixes("sm_90")["copy_vec4"]
    d = m.to_dict()
    assert d["ldg"] == 1 and d["widest_load_bits"] == 128
    assert InstructionMix.from_dict(d) == m


# ---- fatbin listings --------------------------------------------------------------------

def test_multi_arch_fatbin_dump():
    e = parse_fatbin_dump((FATBIN / "saxpy_multi.dump").read_text())
    assert [(x.kind, x.arch) for x in e] == [("sass", "sm_80"), ("sass", "sm_86"), ("sass", "sm_90a"),
                                             ("ptx", "compute_90")]
    assert e[-1].compressed and e[-1].code_version == "[9,0]" and e[0].code_version == "[1,8]"


def test_family_fatbin_keeps_suffixes_that_lelf_drops():
    dump = parse_fatbin_dump((FATBIN / "saxpy_family.dump").read_text())
    assert sorted((x.kind, x.arch) for x in dump) == [("ptx", "compute_120"), ("ptx", "compute_90a"),
                                                      ("sass", "sm_100f"), ("sass", "sm_90a")]
    listed = parse_file_list((FATBIN / "saxpy_family.lelf").read_text())
    assert [x.arch for x in listed] == ["sm_90a", "sm_100"]  # cuobjdump -lelf loses the 'f'


def test_file_lists():
    ptx = parse_file_list((FATBIN / "saxpy_multi.lptx").read_text())
    assert [(x.kind, x.arch, x.name) for x in ptx] == [("ptx", "compute_90", "saxpy_multi.1.sm_90.ptx")]
    assert parse_file_list((FATBIN / "saxpy_sm80_only.lptx").read_text()) == []  # "No PTX file found"
    elf = parse_file_list((FATBIN / "app_sm80.lelf").read_text())
    assert [x.arch for x in elf] == ["sm_80", "sm_80"]


def test_executable_built_with_arch_sm_80():
    # nvcc -arch=sm_80 = sm_80 SASS + compute_80 PTX (seeds/000 §3)
    e = parse_fatbin_dump((FATBIN / "app_sm80.dump").read_text())
    kinds = {(x.kind, x.arch) for x in e}
    assert kinds == {("sass", "sm_80"), ("ptx", "compute_80")}


@needs_cuobjdump
@pytest.mark.parametrize("name", ["saxpy_multi", "saxpy_family", "saxpy_sm80_only"])
def test_list_fatbin_runs_cuobjdump_on_the_stored_fatbins(name):
    listing = list_fatbin(FATBIN / f"{name}.fatbin")
    expected = parse_fatbin_dump((FATBIN / f"{name}.dump").read_text())
    assert listing.entries == expected
    assert listing.to_dict()["sass"] == list(listing.sass)
    assert all(a.startswith("sm_") for a in listing.sass) and all(a.startswith("compute_") for a in listing.ptx)


@needs_cuobjdump
def test_live_cubin_from_nvrtc():
    """A cubin compiled now: listed through -lelf (no fatbin header) and disassembled."""
    from kernelab.gpu import compile_source

    m = compile_source((SASS / "source.cu").read_text(), name="source.cu", arch="sm_90")
    listing = list_fatbin(m.cubin)
    assert listing.sass == ("sm_90",) and listing.ptx == ()
    mix = sass_mix(m.cubin)
    assert set(mix) == KERNELS
    assert mix["copy_vec4"].ldg128 == 1 and mix["block_sum"].shfl == 10 and mix["spiller"].local_memory > 0


@needs_cuobjdump
def test_vector_add_variants_load_widths():
    """The library's vector_add: v0 loads 4 bytes per thread, v1 and v2 16 (LDG.E.128)."""
    from kernelab.ops import compile_variant, discover

    op = discover()["vector_add"]
    widths = {}
    for v in op.variants():
        mix = sass_mix(compile_variant(op, v, arch="sm_90").cubin)
        widths[v.name] = mix["vector_add_f32"].widest_load_bits
    assert widths["v0_naive"] == 32
    assert widths["v1_vec16"] == 128 and widths["v2_persistent"] == 128


@needs_cuobjdump
def test_sass_mix_of_a_fatbin_needs_an_arch():
    with pytest.raises(AnalysisError, match="several arches"):
        sass_mix(FATBIN / "saxpy_multi.fatbin")
    mix = sass_mix(FATBIN / "saxpy_multi.fatbin", arch="sm_86")
    assert set(mix) == {"saxpy"} and mix["saxpy"].ldg32 == 2
    with pytest.raises(AnalysisError, match="no SASS for sm_75"):
        sass_mix(FATBIN / "saxpy_multi.fatbin", arch="sm_75")


@needs_cuobjdump
def test_not_a_cuda_binary(tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"hello")
    with pytest.raises(AnalysisError, match="CUDA binary"):
        list_fatbin(junk)
    with pytest.raises(AnalysisError, match="no such file"):
        list_fatbin(tmp_path / "missing.fatbin")


def test_missing_cuobjdump_says_what_to_install(monkeypatch):
    from kernelab.gpu import toolchain

    monkeypatch.setattr(toolchain, "cuobjdump_path", lambda: None)
    with pytest.raises(AnalysisError, match="nvidia-cuda-cuobjdump"):
        sass_mix(b"\x7fELF")


# ---- an older cuobjdump (12.8, triton 3.6's, as on the lent H200) -------------------------

def test_cuobjdump_12_8_gives_the_same_mix_but_drops_the_a_suffix():
    old = {f.name: f for f in parse_sass((SASS / "cuobjdump12.8_nvrtc_sm_90a.sass").read_text())}
    new = {f.name: f for f in parse_sass((SASS / "nvrtc_sm_90a.sass").read_text())}
    assert set(old) == set(new)
    for name in new:
        assert old[name].mix == new[name].mix, name
        assert (old[name].arch, new[name].arch) == ("sm_90", "sm_90a")


def test_cuobjdump_12_8_fatbin_dump_drops_the_f_suffix():
    old = parse_fatbin_dump((FATBIN / "cuobjdump12.8_saxpy_family.dump").read_text())
    assert sorted((x.kind, x.arch) for x in old) == [("ptx", "compute_120"), ("ptx", "compute_90a"),
                                                     ("sass", "sm_100"), ("sass", "sm_90a")]


# ---- inspect: everything static per kernel ------------------------------------------------

def test_next_step_notes():
    from kernelab.analysis import occupancy
    from kernelab.analysis.inspect import _next_step_note

    # 128 registers x 256 threads: 2 blocks; 3 need 24 warps = 6 per sub-partition -> RPW <= 2730 -> 80 registers
    assert "at most 80 per thread" in _next_step_note(occupancy((9, 0), 256, 128, 0))
    assert "__launch_bounds__(256, 3)" in _next_step_note(occupancy((9, 0), 256, 128, 0))
    # 64 KiB: 3 blocks; 4 need 233472 // 4 = 58368 B each, less the 1 KiB reserve
    assert "at most 57344 B per block would fit 4" in _next_step_note(occupancy((9, 0), 256, 32, 64 * 1024))
    assert _next_step_note(occupancy((9, 0), 256, 32, 0)) is None  # full occupancy: nothing to lift


@needs_cuobjdump
def test_inspect_module_reports_and_notes():
    from kernelab.analysis import inspect_module
    from kernelab.gpu import compile_source

    m = compile_source((SASS / "source.cu").read_text(), name="source.cu", arch="sm_90a")
    reports = {r.name: r for r in inspect_module(m, threads={"spiller": 1024}, dynamic_smem={"block_sum": 100_000})}
    assert set(reports) == KERNELS | {"wgmma_bf16_fp8"}
    sp = reports["spiller"]
    assert sp.occupancy.threads == 1024 and sp.mix.local_memory > 0
    assert any("spilled" in n and "STL" in n for n in sp.notes)
    assert not any("global loads are at most" in n for n in reports["copy_vec4"].notes)
    assert any("at most 16-bit" in n for n in reports["bytes_and_halves"].notes)
    bs = reports["block_sum"]  # 128 B static + 100000 dynamic: 2 blocks of 101 KiB on 228 KiB
    assert bs.occupancy.blocks_per_sm == 2 and bs.occupancy.limiter == "shared_memory"
    assert any("shared memory binds" in n for n in bs.notes)
    d = bs.to_dict()
    assert d["occupancy"]["blocks_per_sm"] == 2 and d["mix"]["shfl"] == 10 and d["resources"]["barriers"] == 1
    assert reports["wgmma_bf16_fp8"].mix.hgmma == 1
