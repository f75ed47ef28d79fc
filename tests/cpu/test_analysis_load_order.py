"""analysis.load_order: the walk that finds a stream's first wide load issued after a wait it does
not need, on small listings written in `cuobjdump -sass`'s format, and on layernorm v5's real
SASS with and without session 19's fix (PASS1_PEEL)."""

from __future__ import annotations

import pytest

from kernelab.analysis.load_order import load_order, parse_instruction
from kernelab.gpu.toolchain import cuobjdump_path

needs_cuobjdump = pytest.mark.skipif(cuobjdump_path() is None,
                                     reason="no cuobjdump (pip install nvidia-cuda-cuobjdump)")


def listing(*body: str, name: str = "k") -> str:
    """A one-function listing; instruction i sits at address 0x10 * i, as cuobjdump prints it."""
    lines = ["\tcode for sm_90", f"\t\tFunction : {name}"]
    lines += [f"        /*{16 * i:04x}*/                   {ins} ;   /* 0x0000000000000000 */"
              for i, ins in enumerate(body)]
    return "\n".join(lines) + "\n"


def one(*body: str):
    (lo,) = load_order(listing(*body))
    return lo


PIVOT_FIRST = (
    "LDG.E.CONSTANT R26, desc[UR6][R4.64]",  # 0x00 the pivot
    "FADD R17, R17, -R26",  # 0x10 waits for it
    "LDG.E.128 R8, desc[UR4][R20.64]",  # 0x20 the stream's first vector: did not need the pivot
    "FADD R9, R8, -R26",
    "EXIT",
)


def test_a_vector_load_after_a_wait_it_does_not_need_is_found():
    lo = one(*PIVOT_FIRST)
    assert (lo.loads, lo.waits) == (2, 2)
    (late,) = lo.late_first_wide
    assert (late.load, late.wait, late.waited_on, late.waited_guard) == (0x20, 0x10, 0x00, None)
    assert "LDG.E.128 R8" in str(late) and "FADD R17, R17, -R26" in str(late)
    note = lo.note()
    assert note and "round trip" in note and "0x0020" in note
    assert lo.to_dict()["serialized"] == 1


def test_the_same_loads_in_one_batch_are_clean():
    lo = one(PIVOT_FIRST[0], PIVOT_FIRST[2], PIVOT_FIRST[1], *PIVOT_FIRST[3:])
    assert lo.loads == 2 and not lo.serialized and lo.note() is None


def test_a_predicated_wait_is_named_so():
    lo = one("@!P5 LDG.E.CONSTANT R26, desc[UR6][R4.64]", *PIVOT_FIRST[1:])
    assert lo.late_first_wide[0].waited_guard == "!P5" and "(predicated on !P5)" in lo.note()


def test_an_address_from_a_loaded_value_is_not_flagged():
    """A row handed out by a counter (ATOMG) needs the counter's value: that wait is the algorithm's."""
    lo = one("ATOMG.E.ADD.STRONG.GPU PT, R5, desc[UR6][R2.64], R7",
             "IMAD.WIDE R10, R5, 0x4, R12",
             "LDG.E.128 R16, desc[UR4][R10.64]",
             "EXIT")
    assert (lo.loads, lo.waits) == (2, 1) and not lo.serialized


def test_an_address_through_shared_memory_is_not_flagged():
    """The counter's value broadcast through shared memory (STS, barrier, LDS) is still data."""
    lo = one("ATOMG.E.ADD.STRONG.GPU PT, R5, desc[UR6][R2.64], R7",
             "STS [R0], R5",
             "BAR.SYNC.DEFER_BLOCKING 0x0",
             "LDS R6, [R0]",
             "IMAD.WIDE R10, R6, 0x4, R12",
             "LDG.E.128 R16, desc[UR4][R10.64]",
             "EXIT")
    assert not lo.serialized


def test_a_load_after_a_branch_on_loaded_data_is_not_flagged():
    lo = one("LDG.E R4, desc[UR6][R2.64]",
             "FSETP.GT.AND P0, PT, R4, RZ, PT",
             "@P0 BRA 0x50",
             "LDG.E.128 R8, desc[UR4][R20.64]",
             "FADD R9, R8, R4",
             "EXIT")
    assert lo.waits == 2 and not lo.serialized


def test_a_wait_a_forward_branch_may_skip_is_not_a_wait_on_every_path():
    """Aligned rows jump over the head scalars' code: the loads after it are not delayed then."""
    lo = one("@!P1 LDG.E R4, desc[UR6][R2.64]",
             "@P2 BRA 0x30",  # jumps over the use
             "FADD R5, R4, R6",
             "LDG.E.128 R8, desc[UR4][R20.64]",  # 0x30
             "EXIT")
    assert lo.waits == 1 and not lo.serialized


def test_an_unconditional_branch_starts_a_new_region():
    """Code after BRA / EXIT is reached from elsewhere: the wait before it does not hold there."""
    lo = one("LDG.E R4, desc[UR6][R2.64]",
             "FADD R5, R4, R6",
             "BRA 0x40",
             "EXIT",
             "LDG.E.128 R8, desc[UR4][R20.64]",
             "EXIT")
    assert not lo.serialized


def test_only_the_first_wide_load_of_a_region_is_the_finding():
    lo = one("LDG.E.128 R8, desc[UR4][R20.64]",
             "FADD R5, R8, R6",
             "LDG.E.128 R12, desc[UR4][R20.64+0x2000]",  # the next step: serialized, but not the first
             "EXIT")
    assert len(lo.serialized) == 1 and not lo.late_first_wide


def test_operands_dests_and_sources():
    ins = parse_instruction(0, "@!P3 LDG.E.128.CONSTANT R4, desc[UR12][R20.64+0x2000]")
    assert ins.guard == "!P3" and ins.dests == ("R4", "R5", "R6", "R7")
    assert ins.address_regs == ("UR12", "R20", "R21") and "P3" in ins.sources
    assert parse_instruction(0, "ISETP.GE.AND P0, PT, R3, UR8, PT").dests == ("P0",)
    assert parse_instruction(0, "SHFL.BFLY PT, R3, R2, 0x1, 0x1f").dests == ("R3",)
    assert parse_instruction(0, "IMAD.WIDE R10, R5, 0x4, R12").dests == ("R10", "R11")
    st = parse_instruction(0, "STG.E.128 desc[UR6][R36.64], R16")
    assert st.dests == () and {"R16", "R19", "R36", "R37"} <= set(st.sources)
    assert parse_instruction(0, "FADD R4, -R26.reuse, |R3|").sources == ("R26", "R3")
    assert parse_instruction(0, "@PT NOP").guard is None


def test_functions_are_walked_separately():
    text = listing(*PIVOT_FIRST, name="slow") + listing(PIVOT_FIRST[0], PIVOT_FIRST[2], PIVOT_FIRST[1],
                                                        name="fast").split("\n", 1)[1]
    got = {lo.name: bool(lo.late_first_wide) for lo in load_order(text)}
    assert got == {"slow": True, "fast": False}


@needs_cuobjdump
def test_layernorm_v5_without_the_peel_is_found_and_with_it_is_clean():
    """Session 19's bug, read back from the machine code: sm_90, fp32, 1536 threads an SM. Without
    PASS1_PEEL the pass-1 loop's first LDG.E.EL.128 issues after `x - pivot` waited for the pivot
    (512.5 us measured); with it (the default) the first region's vectors are in the first batch."""
    from kernelab.analysis.sass import disassemble
    from kernelab.gpu import compile_file
    from kernelab.ops import discover

    ln = discover()["layernorm"]
    v5 = ln.variant("v5_l2_two_pass")

    def order(peel: int):
        m = compile_file(v5.path, arch="sm_90", defines={**ln.defines(v5), "PASS1_PEEL_F32": peel})
        return {lo.name: lo for lo in load_order(disassemble(m.cubin))}["layernorm_f32"]

    before, after = order(0), order(1)
    assert before.late_first_wide and "LDG.E.EL.128" in before.late_first_wide[0].load_text
    assert "FADD" in before.late_first_wide[0].wait_text
    assert not any("LDG.E.EL.128" in s.load_text for s in after.late_first_wide)


@needs_cuobjdump
def test_inspect_says_so():
    """`kernelab inspect` carries the finding as a note and in its JSON."""
    from kernelab.analysis import inspect_module
    from kernelab.gpu import compile_source

    src = """
    extern "C" __global__ void pivot_first(const float* __restrict__ x, float* __restrict__ y, int n4) {
      const float pivot = x[0];                 // one scalar load ...
      float acc = x[1 + threadIdx.x] - pivot;   // ... used before the stream's loads
      for (int i = threadIdx.x; i < n4; i += blockDim.x) {
        const float4 v = reinterpret_cast<const float4*>(x)[i];
        acc += (v.x - pivot) + (v.y - pivot) + (v.z - pivot) + (v.w - pivot);
      }
      y[threadIdx.x] = acc;
    }"""
    (r,) = inspect_module(compile_source(src, name="pivot.cu", arch="sm_90"), threads=256)
    assert r.load_order is not None and r.load_order.late_first_wide
    assert any("round trip it does not need" in n for n in r.notes)
    assert r.to_dict()["load_order"]["late_first_wide"]


def test_the_largest_batch_a_thread_issues_before_it_waits():
    assert one(*PIVOT_FIRST).max_batch_bytes == 16  # 4 B, a wait, then 16 B
    assert one(PIVOT_FIRST[0], PIVOT_FIRST[2], PIVOT_FIRST[1], *PIVOT_FIRST[3:]).max_batch_bytes == 20
    from pathlib import Path

    fixture = Path(__file__).parents[1] / "fixtures" / "sass" / "nvrtc_sm_90.sass"  # tests/fixtures/sass/source.cu
    got = {lo.name: lo.max_batch_bytes for lo in load_order(fixture.read_text())}
    assert (got["copy_vec4"], got["copy_f64"], got["bytes_and_halves"]) == (16, 8, 3)  # a u8 and a half


def test_littles_law_note():
    """vector_add v0 on the H200 (8 B a thread, 2048 threads an SM) is capped near 2.9 TB/s of reads; 16 B a
    thread is not (5.8 TB/s: past the 0.9 x 4.8 TB/s the note stays quiet for); no spec or no loads: no note."""
    from kernelab.analysis import DEVICES, occupancy
    from kernelab.analysis.devices import spec_for_arch
    from kernelab.analysis.inspect import LOADED_DRAM_LATENCY_S, in_flight_note
    from kernelab.analysis.load_order import LoadOrder

    h200 = spec_for_arch("sm_90")
    assert h200 is DEVICES["H200"] and spec_for_arch("sm_80").name.startswith("A100")
    assert spec_for_arch("sm_75") is None and spec_for_arch("not an arch") is None
    full = occupancy((9, 0), 256, 16, 0)  # 8 blocks of 256
    note = in_flight_note(LoadOrder("k", max_batch_bytes=8), full, h200)
    bound = 8 * 2048 * 132 / LOADED_DRAM_LATENCY_S
    assert note and "16 KiB" in note and "2048 threads" in note and f"{bound / 1e12:.2f} TB/s" in note
    assert 2.3e12 < bound < 3.3e12  # above vector_add v0's measured 2.32 TB/s of reads: a ceiling
    assert in_flight_note(LoadOrder("k", max_batch_bytes=16), full, h200) is None
    assert in_flight_note(LoadOrder("k", max_batch_bytes=8), full, None) is None
    assert in_flight_note(LoadOrder("k"), full, h200) is None
    # a kernel that moves its rows with bulk copies (TMA) or cp.async: no LDG shows those bytes, no note
    from types import SimpleNamespace

    from kernelab.analysis import InstructionMix
    from kernelab.analysis.inspect import notes_for

    res = SimpleNamespace(spills=0, stack_frame=0)
    narrow = LoadOrder("k", max_batch_bytes=8)
    assert any("Little's law" in n for n in notes_for(res, full, InstructionMix(), narrow, h200))
    assert not any("Little's law" in n for n in notes_for(res, full, InstructionMix(tma=2), narrow, h200))
    assert not any("Little's law" in n for n in notes_for(res, full, InstructionMix(ldgsts=4), narrow, h200))


@needs_cuobjdump
def test_inspect_names_too_few_bytes_in_flight():
    from kernelab.analysis import inspect_module
    from kernelab.gpu import compile_source

    src = """
    extern "C" __global__ void add_u8(const unsigned char* __restrict__ a, unsigned char* __restrict__ b, int n) {
      const int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) b[i] = a[i] + 1;
    }
    extern "C" __global__ void add_vec(const uint4* __restrict__ a, uint4* __restrict__ b, int n) {
      const int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) { uint4 v = a[i]; v.x += 1; b[i] = v; }
    }"""
    reports = {r.name: r for r in inspect_module(compile_source(src, name="u8.cu", arch="sm_90"), threads=256)}
    assert any("Little's law" in n for n in reports["add_u8"].notes)
    assert not any("Little's law" in n for n in reports["add_vec"].notes)
    assert reports["add_u8"].to_dict()["load_order"]["max_batch_bytes"] == 1
