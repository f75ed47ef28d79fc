"""gemm v9_sgemm_tuned without a GPU: its header against its macro defaults, the sweep's settings
(scripts/sweep_gemm_fp32.py), every setting's cubin (no spills, an FFMA-dense hot loop), and a
host emulation of the kernel's logic (tails, lane maps, the cp.async ring) on the CPU."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kernelab.analysis import occupancy, sass_mix
from kernelab.gpu import CI_ARCHS, compile_file, toolchain
from kernelab.ops import Case, compile_variant, discover

ROOT = Path(__file__).resolve().parents[2]
OP = discover()["gemm"]
V9 = OP.variant("v9")

_spec = importlib.util.spec_from_file_location("sweep_gemm_fp32", ROOT / "scripts" / "sweep_gemm_fp32.py")
SWEEP = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(SWEEP)
SETTINGS = {name: defines for name, defines, _ in SWEEP.CONFIGS}
DEFAULT = SWEEP.params({})

needs_cuobjdump = pytest.mark.skipif(toolchain.cuobjdump_path() is None, reason="cuobjdump not installed")


# ---- declarations -----------------------------------------------------------------------------

def test_header_geometry_is_the_macro_defaults():
    """@block/@tile/@smem (what op.py launches with) must describe the kernel the defaults build."""
    g = SWEEP.geometry(DEFAULT)
    geo = OP.geometry(V9, Case((4095, 4097, 1003), "float32"))
    assert geo.block == (g["block"],) and geo.tile == g["tile"] and geo.smem == g["smem"]
    assert geo.grid == (-(-4097 // g["tile"][1]), -(-4095 // g["tile"][0]))
    assert V9.dtypes(OP) == ("float32",)


def test_header_says_what_why_predicted_measured():
    text = V9.header
    assert V9.summary.startswith("v9_sgemm_tuned:")
    assert "What changed from v5" in text and re.search(r"Predicted: .*\d", text)
    assert text.rstrip().endswith("Measured: BENCHMARKS.md, gemm rows.")


def test_any_k_and_any_view_is_supported():
    """4-byte cp.async needs no K multiple and no 16-byte alignment: nothing to refuse."""
    assert "k_multiple" not in V9.meta and "align" not in V9.meta
    for shape, offset in (((17, 31, 45), 1), ((4095, 4097, 1003), 0), ((1, 1, 1), 0)):
        assert OP.supports(V9, Case(shape, "float32", offset=offset)) is None
    assert "no bfloat16 kernel" in OP.supports(V9, Case((64, 64, 64), "bfloat16"))


def test_sweep_settings_are_distinct_and_one_is_the_default():
    names = [n for n, _, _ in SWEEP.CONFIGS]
    assert len(names) == len(set(names)) and 8 <= len(names) <= 20
    full = [tuple(sorted(SWEEP.params(d).items())) for d in SETTINGS.values()]
    assert len(full) == len(set(full)), "two settings build the same kernel"
    assert sum(SWEEP.params(d) == DEFAULT for d in SETTINGS.values()) == 1, \
        "no sweep setting equals v9's defaults: the registered variant would go unmeasured"
    assert SWEEP.params({"LOADER": 0})["XFRAG"] == 0 and DEFAULT["XFRAG"] == DEFAULT["LOADER"]  # names resolve


def test_sweep_lists_without_a_gpu(capsys):
    assert SWEEP.main(["--list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in SETTINGS)


@needs_cuobjdump
def test_dry_run_compiles_and_prints_the_loop_mix(capsys):
    """--dry-run builds here (no GPU) and prints each setting's registers, spills and hot-loop mix."""
    assert SWEEP.main(["--dry-run", "--only", "t8x8_128x128_k32_s2,regs_intl"]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[1:]}
    assert set(rows) == {"t8x8_128x128_k32_s2", "regs_intl"}
    regs, spill, smem, blocks, loop, ffma = map(int, rows["t8x8_128x128_k32_s2"][1:7])
    assert spill == 0 and smem == SWEEP.geometry(DEFAULT)["smem"] and blocks == 2
    assert ffma == 8 * 8 * 32 and 0.85 <= ffma / loop < 1  # one k-tile: 8x8 FFMAs per k, 32 k
    assert int(rows["t8x8_128x128_k32_s2"][8]) == 128 and int(rows["regs_intl"][11]) == 8  # LDS.128; STS


def test_group_m_changes_the_block_order_only():
    """GROUP_M is a define the kernel reads (default 16 tile-rows per group since round 4; 0: launch order) and every setting spells out."""
    assert DEFAULT["GROUP_M"] == 16
    assert all("GROUP_M" in d for d in SETTINGS.values())
    assert any(d["GROUP_M"] for d in SETTINGS.values())
    g = SWEEP.geometry(SWEEP.params({"GROUP_M": 0}))
    assert g == SWEEP.geometry(DEFAULT)  # same grid, block and shared memory


def test_fma_order_is_a_define_every_setting_spells_out():
    assert DEFAULT["FMA_ORDER"] == 1 and all("FMA_ORDER" in d for d in SETTINGS.values())
    assert {d["FMA_ORDER"] for d in SETTINGS.values()} >= {0, 1, 3}


def test_bank_clash_counter():
    """Three source registers, none reused, all even (or all odd): a clash; a reuse flag or mixed
    banks: none. Non-FFMA lines never count."""
    clash = SWEEP.ffma_bank_clash
    assert clash("FFMA R90, R12, R42, R90")
    assert clash("@P0 FFMA R91, R13, -R43, R91")
    assert not clash("FFMA R90, R12, R42.reuse, R90")
    assert not clash("FFMA R90, R12, R43, R90")
    assert not clash("FADD R90, R12, R42")
    body = ["FFMA R0, R2, R4, R0", "FFMA R1, R3, R5.reuse, R1", "LDS.128 R4, [R2]"]
    assert SWEEP.loop_mix(body)["clash"] == 1


def test_sweep_logic_on_the_cpu_with_fakes(monkeypatch, tmp_path, capsys):
    """The sweep end to end except the GPU: every setting built (the real cubin), checked against
    float64 (a setting whose kernel errs must fail its check and go untimed), timed, ranked, the
    table printed and the JSON written. Fakes: the kernel is torch's a @ b.T on the CPU, and
    bench calls fn once and makes up a median from the name."""
    import json
    import types

    import kernelab.bench
    import kernelab.gpu

    bad = "w2x4_k32_s2"
    fake_median = {"v5": 3.5e-3, "cublas": 2.7e-3}

    class FakeKernel:
        def __init__(self, wrong):
            self.wrong = wrong

        def __call__(self, a, b, c, m, n, k, *, grid, block, shared_mem):
            assert grid[0] * SWEEP.geometry(DEFAULT)["tile"][1] >= n or block != 128  # a sane grid
            c.copy_(a @ b.t())
            if self.wrong:
                c[0, 0] += 1.0

        def max_active_blocks_per_sm(self, block, smem):
            return 2

    def fake_load(path, defines=None, **kw):
        compiled = compile_file(path, arch="sm_90", defines=defines or {})
        wrong = defines == SETTINGS[bad]
        return types.SimpleNamespace(compiled=compiled, kernel=lambda name: FakeKernel(wrong))

    def fake_bench(fn, *, name, **kw):
        fn()
        key = name.split("-")[0]
        med = fake_median.get(key, 2.5e-3 + 1e-4 * (sum(map(ord, name)) % 10))
        return types.SimpleNamespace(median_s=med, mean_sm_clock_mhz=1700.0, throttled=[],
                                     stats=types.SimpleNamespace(n=10, stdrel=0.01), to_dict=lambda: {"median_s": med})

    def fake_compare(fn_a, fn_b, *, names, **kw):
        fn_a(), fn_b()
        return types.SimpleNamespace(verdict="faster", ratio=0.9, ci=(0.88, 0.92), __str__=lambda self: "fake")

    info = types.SimpleNamespace(name="FakeGPU", to_dict=lambda: {"name": "FakeGPU"})
    monkeypatch.setattr(kernelab.gpu, "load", fake_load)
    monkeypatch.setattr(kernelab.gpu, "synchronize", lambda: None)
    monkeypatch.setattr(kernelab.gpu, "device_info", lambda *a: info)
    monkeypatch.setattr(kernelab.bench, "bench", fake_bench)
    monkeypatch.setattr(kernelab.bench, "compare", fake_compare)
    monkeypatch.setattr(SWEEP, "DEVICE", "cpu")
    monkeypatch.setattr(SWEEP, "SHAPE", (192, 160, 72))
    monkeypatch.setattr(SWEEP, "CHECK_SHAPES", ((64, 64, 64), (65, 63, 17)))
    monkeypatch.setattr(SWEEP, "SMALL_SHAPES", ((32, 32, 32),))
    monkeypatch.setattr(SWEEP, "SAMPLED", 16)
    out_path = tmp_path / "sweep.json"
    assert SWEEP.main(["--out", str(out_path), "--budget-s", "1000"]) == 0
    out = json.loads(out_path.read_text())
    recs = {s["name"]: s for s in out["settings"]}
    assert list(recs) == ["v5"] + [n for n, _, _ in SWEEP.CONFIGS]
    assert [t["when"] for t in out["cublas"]] == ["start", "middle", "end"]
    assert recs[bad]["check"]["ok"] is False and "time" not in recs[bad]
    assert "error" in recs[bad]["check"]["reason"]
    for name, rec in recs.items():
        if name != bad:
            assert rec["check"]["ok"], (name, rec["check"])
            assert rec["ratio_cublas"] == pytest.approx(2.7e-3 / rec["time"]["median_s"])
            assert rec["ratio_v5"] == pytest.approx(3.5e-3 / rec["time"]["median_s"])
            assert rec["registers"] > 0 and rec["spills"] == 0
    assert len(out["small"]) == 1 and len(out["small"][0]) == 5  # shape, cublas, the three fastest
    fastest = min((r for r in recs.values() if "time" in r and r["name"] != "v5"), key=lambda r: r["time"]["median_s"])
    assert out["paired"]["setting"] == fastest["name"] and out["paired"]["x_cublas"] == pytest.approx(1 / 0.9)
    table = capsys.readouterr().out
    assert "x cuBLAS" in table and f"{bad:22s} not timed" in table


# ---- compiled code ----------------------------------------------------------------------------

def _sass(cubin: bytes, tmp_path) -> str:
    path = tmp_path / "k.cubin"
    path.write_bytes(cubin)
    return subprocess.run([toolchain.cuobjdump_path(), "-sass", str(path)], capture_output=True, text=True,
                          check=True).stdout


def _hot_loop(sass: str) -> tuple[int, int]:
    """(instructions, FFMAs) of the densest loop (a backward branch's span) that holds FFMAs."""
    mix = SWEEP.loop_mix(SWEEP.hot_loop(sass))
    return mix["instr"], mix["ffma"]


def _assert_no_local_memory(m, what):
    r = m.resources["gemm_f32"]
    assert r.spill_stores == r.spill_loads == r.stack_frame == 0, f"{what}: {r}"
    mix = sass_mix(m.cubin)["gemm_f32"]
    assert mix.ldl == 0 and mix.stl == 0, f"{what}: {mix.ldl} LDL, {mix.stl} STL"
    return r, mix


@needs_cuobjdump
@pytest.mark.parametrize("name", list(SETTINGS))
def test_every_sweep_setting_builds_for_sm90_ffma_dense_without_spills(name, tmp_path):
    p = SWEEP.params(SETTINGS[name])
    g = SWEEP.geometry(p)
    m = compile_file(SWEEP.V9, arch="sm_90", defines=SETTINGS[name])
    r, mix = _assert_no_local_memory(m, name)
    # __launch_bounds__(NT, MIN_BLOCKS) holds: MIN_BLOCKS blocks fit by registers and shared memory.
    occ = occupancy((9, 0), g["block"], r.registers, g["smem"], barriers=r.barriers)
    assert occ.blocks_per_sm >= p["MIN_BLOCKS"], (name, occ)
    assert (mix.ldgsts > 0) == (p["LOADER"] == 1) and mix.hmma == mix.hgmma == 0
    n, ffma = _hot_loop(_sass(m.cubin, tmp_path))
    # One k-tile's FFMAs, fully unrolled; NVRTC 13.5 (the CI wheel) unrolls the register-staged loop
    # over two k-tiles, 13.0 over one: a whole number of k-tiles either way.
    assert ffma > 0 and ffma % (p["TM"] * p["TN"] * p["BK"]) == 0, (name, ffma)
    # Static share of FFMAs in the k-loop: 86% (8x8, BK 8) to 91.5% (16x8, BK 16) with NVRTC 13.0.
    assert ffma / n >= 0.85, f"{name}: hot loop is {ffma}/{n} FFMA"


@needs_cuobjdump
def test_default_hot_loop_budget(tmp_path):
    """The registered default: 1024 FFMAs per k-tile under ~114 other instructions (48 LDS.128,
    16 LDGSTS, addresses, ring bookkeeping, one barrier)."""
    m = compile_variant(OP, V9, arch="sm_90")
    n, ffma = _hot_loop(_sass(m.cubin, tmp_path))
    assert ffma == DEFAULT["TM"] * DEFAULT["TN"] * DEFAULT["BK"] and ffma / n >= 0.88, (n, ffma)


@pytest.mark.parametrize("name,arch", [("default", a) for a in CI_ARCHS] + [("regs_intl", "sm_90")])
def test_builds_for_every_ci_arch_without_spills(arch, name):
    """The variant as registered on every CI arch; the register-staged control (a sweep setting, not
    a library kernel) where the sweep runs it (under NVRTC 13.5 it spills 12 bytes on sm_80)."""
    if name == "default":
        m = compile_variant(OP, V9, arch=arch)
    else:
        m = compile_file(SWEEP.V9, arch=arch, defines=SETTINGS[name])
    _assert_no_local_memory(m, f"{name} {arch}")


def test_static_asserts_explain_bad_settings():
    from kernelab.gpu import CompileError

    with pytest.raises(CompileError, match="BM, BN must equal"):
        compile_file(SWEEP.V9, arch="sm_90", defines={"BM": 192})
    with pytest.raises(CompileError, match="exactly 2 stages"):
        compile_file(SWEEP.V9, arch="sm_90", defines={"LOADER": 0, "STAGES": 3})


# ---- the kernel's logic on the host -----------------------------------------------------------
# The .cu file compiled as C++20 by g++: one std::thread per CUDA thread, std::barrier for
# __syncthreads, shared memory filled with NaN before each block (a read of a word no copy wrote
# poisons C), and each cp.async performed at the latest moment the PTX allows: when a
# cp.async.wait_group retires its group (a wait one group too loose reads stale NaN). C sits
# between sentinel guard bands. This checks indexing, tails, lane maps, the ring's waits and
# barriers, not speed or the real memory model.

EMU_PRELUDE = r"""
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstddef>
#include <thread>
#include <barrier>
#include <vector>
#include <algorithm>
struct alignas(16) float4 { float x, y, z, w; };
static inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
struct I3 { int x = 0, y = 0, z = 0; };
thread_local I3 threadIdx;
I3 blockIdx, gridDim;
std::barrier<>* g_bar;
char* g_smem;
#define __syncthreads() g_bar->arrive_and_wait()
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__
#define __align__(n) alignas(n)
template <class T> static inline T __ldg(const T* p) { return *p; }
using std::min;
#define __cvta_generic_to_shared(p) ((size_t)((const char*)(p) - g_smem))
struct Copy { unsigned dst; const float* src; unsigned bytes; };
thread_local std::vector<std::vector<Copy>> g_groups;
thread_local std::vector<Copy> g_open;
static inline void emu_do(const Copy& c) { *(float*)(g_smem + c.dst) = c.bytes ? *c.src : 0.0f; }
static inline void emu_issue(unsigned dst, const float* src, unsigned bytes) { g_open.push_back({dst, src, bytes}); }
static inline void emu_commit() { g_groups.push_back(g_open); g_open.clear(); }
static inline void emu_wait(int n) {
  while ((int)g_groups.size() > n) { for (auto& c : g_groups.front()) emu_do(c); g_groups.erase(g_groups.begin()); }
}
"""

EMU_MAIN = r"""
int main(int argc, char** argv) {
  const int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]), off = atoi(argv[4]);
  const size_t smem_bytes = (size_t)STAGES * STAGE_BYTES;
  std::vector<float> abuf((size_t)M * K + 64), bbuf((size_t)N * K + 64), cbuf((size_t)M * N + 2048);
  float* A = (float*)(((size_t)abuf.data() + 15) & ~(size_t)15) + off;  // off = 1: not 16-byte aligned
  float* B = (float*)(((size_t)bbuf.data() + 15) & ~(size_t)15) + off;
  float* C = (float*)(((size_t)cbuf.data() + 15) & ~(size_t)15) + 256;
  const float SENT = 12288.0f;
  for (auto& x : cbuf) x = SENT;
  for (size_t i = 0; i < (size_t)M * N; ++i) C[i] = NAN;
  unsigned s = 12345u;
  auto rnd = [&]() { s = s * 1664525u + 1013904223u; return ((s >> 8) & 0xffff) / 65536.0f - 0.5f; };
  for (size_t i = 0; i < (size_t)M * K; ++i) A[i] = rnd();
  for (size_t i = 0; i < (size_t)N * K; ++i) B[i] = rnd();
  std::vector<char> smem(smem_bytes + 16);
  g_smem = (char*)(((size_t)smem.data() + 15) & ~(size_t)15);
  gridDim.x = (N + BN - 1) / BN; gridDim.y = (M + BM - 1) / BM;
  for (int by = 0; by < (M + BM - 1) / BM; ++by)
    for (int bx = 0; bx < (N + BN - 1) / BN; ++bx) {
      for (size_t i = 0; i < smem_bytes / 4; ++i) ((float*)g_smem)[i] = NAN;
      blockIdx.x = bx; blockIdx.y = by;
      std::barrier<> bar(NT);
      g_bar = &bar;
      std::vector<std::thread> th;
      for (int t = 0; t < NT; ++t)
        th.emplace_back([=]() {
          threadIdx.x = t; g_groups.clear(); g_open.clear();
          gemm_f32(A, B, C, M, N, K);
          if (!g_groups.empty() || !g_open.empty()) { printf("copies still in flight at exit\n"); exit(3); }
        });
      for (auto& x : th) x.join();
    }
  for (size_t i = 0; i < cbuf.size(); ++i) {
    const float* p = cbuf.data() + i;
    if ((p < C || p >= C + (size_t)M * N) && cbuf[i] != SENT) { printf("wrote outside C at %td\n", p - C); return 2; }
  }
  long bad = 0;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double r = 0;
      for (int k = 0; k < K; ++k) r += (double)A[(size_t)m * K + k] * B[(size_t)n * K + k];
      const double got = C[(size_t)m * N + n];
      if (!(std::fabs(got - r) <= 1e-5 * (1.0 + std::sqrt((double)K)))) {
        if (bad++ < 4) printf("C[%d][%d] = %g, expected %g\n", m, n, got, r);
      }
    }
  printf("%ld wrong of %d x %d\n", bad, M, N);
  return bad ? 1 : 0;
}
"""

# Each pattern is the kernel file's exact text; a change there fails loudly here.
EMU_SUBST = [
    (r'asm volatile\("cp\.async\.ca\.shared\.global \[%0\], \[%1\], 4;\\n" ::"r"\(dst\), "l"\(src\) : "memory"\);',
     "emu_issue(dst, src, 4u);"),
    (r'asm volatile\("cp\.async\.ca\.shared\.global \[%0\], \[%1\], 4, %2;\\n" ::"r"\(dst\), "l"\(src\), '
     r'"r"\(src_bytes\) : "memory"\);', "emu_issue(dst, src, src_bytes);"),
    (r'asm volatile\("cp\.async\.commit_group;\\n" ::: "memory"\);', "emu_commit();"),
    (r'asm volatile\("cp\.async\.wait_group %0;\\n" ::"n"\(N\) : "memory"\);', "emu_wait(N);"),
    (r'extern __shared__ __align__\(16\) float smem\[\];', "float* smem = (float*)g_smem;"),
    (r'extern "C" __global__', 'extern "C"'),
]
# Shapes: one element; K = 0 (C = 0); M, N, K tails with K % 4 != 0 (odd K: the partial
# k-tile goes first); many k-tiles (the ring wraps); K < BK; 1-element offset views (unaligned).
EMU_SHAPES = [(1, 1, 1, 0), (5, 9, 0, 0), (17, 31, 45, 0), (130, 260, 136, 0), (200, 72, 8, 0), (127, 129, 65, 1),
              (3, 300, 5, 0)]
# Sweep settings by name, plus two geometries the sweep no longer times: 256x128 blocks (BM != BN,
# 1 block/SM) and 32x128 blocks in groups of 3 tile-rows (GROUP_M with a partial last group: M = 200
# makes 7 tile-rows, grouped 3 + 3 + 1; a tile no block computes stays NaN).
EMU_SETTINGS = {name: SETTINGS[name] for name in ("t16x8_128x128", "regs_intl", "t8x8_128x128_k32_g16", "w2x4_k32_s2_serp",
                                                   "t8x8_k32_s2_serp_g16", "t16x8_k8_colserp")}
EMU_SETTINGS["t16x8_256x128_k16"] = SWEEP.knobs(WARPS_M=4, WARPS_N=2, TM=16, BM=256, MIN_BLOCKS=1, BK=16)
EMU_SETTINGS["g3_32x128"] = SWEEP.knobs(BM=32, WARPS_M=1, WARPS_N=2, TM=8, TN=8, GROUP_M=3)


def _emulator(defines: dict, tmp_path) -> Path:
    src = SWEEP.V9.read_text()
    for pat, new in EMU_SUBST:
        src, n = re.subn(pat, lambda _m, new=new: new, src)
        assert n >= 1, f"the kernel no longer contains {pat!r}: update EMU_SUBST"
    assert not re.search(r"\basm\b", re.sub(r"//.*", "", src)), "inline asm the emulator does not know"
    head = "".join(f"#define {k} {v}\n" for k, v in sorted(defines.items()))
    text = head + EMU_PRELUDE + src + EMU_MAIN
    exe = tmp_path / ("emu_" + hashlib.sha256(text.encode()).hexdigest()[:12])
    cpp = exe.with_suffix(".cpp")
    cpp.write_text(text)
    r = subprocess.run(["g++", "-O1", "-std=c++20", "-pthread", "-w", "-o", str(exe), str(cpp)],
                       capture_output=True, text=True)
    if r.returncode and "barrier" in r.stderr and "No such file" in r.stderr:
        pytest.skip("g++ has no C++20 <barrier>")
    assert r.returncode == 0, r.stderr[-3000:]
    return exe


@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++ to build the host emulation")
@pytest.mark.parametrize("name", list(EMU_SETTINGS))
def test_host_emulation_matches_float64(name, tmp_path):
    exe = _emulator(EMU_SETTINGS[name], tmp_path)
    for m, n, k, off in EMU_SHAPES:
        r = subprocess.run([str(exe), str(m), str(n), str(k), str(off)], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"{name} {m}x{n}x{k} offset {off}: {r.stdout[-800:]}"


@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++ to build the host emulation")
def test_host_emulation_catches_a_wait_one_group_too_loose(tmp_path, monkeypatch):
    """Test the tester: the ring's wait relaxed by one group must read stale (NaN) shared memory."""
    text = SWEEP.V9.read_text()
    bad = text.replace("cp_async_wait<STAGES - 2>();  // k-tile", "cp_async_wait<STAGES - 1>();  // k-tile")
    assert bad != text
    mutant = tmp_path / "v9_mutant.cu"
    mutant.write_text(bad)
    monkeypatch.setattr(SWEEP, "V9", mutant)
    exe = _emulator(SETTINGS["t16x8_128x128"], tmp_path)
    r = subprocess.run([str(exe), "130", "260", "136", "0"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "wrong" in r.stdout, r.stdout
