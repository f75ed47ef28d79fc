"""The occupancy calculator against vectors computed by hand from the rules of cuda_occupancy.h.

Each vector's comment shows the arithmetic. Notation: W = warps per block = ceil(threads/32);
per-warp registers RPW = regs * 32 rounded up to 256; warps per register sub-partition
= 16384 // RPW, four sub-partitions; shared memory per block = static + dynamic + reserve
(1 KiB on 8.0+), rounded up to 128 B (256 B on 7.5).
"""

import pytest

from kernelab.analysis import AnalysisError, occupancy, what_if
from kernelab.analysis.occupancy import ARCH_LIMITS, _smem_steps, limits_for, max_regs_for_blocks

KiB = 1024

# (cc, threads, regs, smem, kwargs, blocks, active warps, limiter)
VECTORS = [
    # --- 9.0 (Hopper: 64 warps, 32 blocks, 228 KiB, 1 KiB reserve) ---
    # seeds/003: alloc 64K+1K = 66560; 233472 // 66560 = 3; regs: RPW 1280, 12 warps/sub -> 48 -> 6; warps 64 // 8 = 8
    ((9, 0), 256, 40, 64 * KiB, {}, 3, 24, "shared_memory"),
    # RPW 4096 -> 4 warps/sub -> 16 warps -> 4 blocks of 4 warps
    ((9, 0), 128, 128, 0, {}, 4, 16, "registers"),
    # RPW 1024 -> 16/sub -> 64 warps -> 2 blocks; warps 64 // 32 = 2: a tie, full occupancy
    ((9, 0), 1024, 32, 0, {}, 2, 64, "warps"),
    # 1-warp blocks: warps allow 64, the block cap 32
    ((9, 0), 32, 16, 0, {}, 32, 32, "blocks"),
    # RPW ceil(255*32/256)*256 = 8192 -> 2/sub -> 8 warps -> 1 block of 8
    ((9, 0), 256, 255, 0, {}, 1, 8, "registers"),
    # 9 warps x 8192 = 73728 > 65536 registers per block: cannot launch
    ((9, 0), 288, 255, 0, {}, 0, 0, "registers"),
    # W = 3, RPW 5376 -> 3/sub -> 12 warps -> 4 blocks; warps 64 // 3 = 21
    ((9, 0), 96, 168, 0, {}, 4, 12, "registers"),
    # the opt-in maximum 227 KiB: alloc 228 KiB = the whole SM
    ((9, 0), 128, 32, 227 * KiB, {}, 1, 4, "shared_memory"),
    # one byte more: alloc 233600 > 227 KiB + 1 KiB per-block limit
    ((9, 0), 128, 32, 227 * KiB + 1, {}, 0, 0, "shared_memory"),
    # without opt-in the per-block limit is 48 KiB (+1 KiB reserve): 48 KiB fits, 233472 // 50176 = 4
    ((9, 0), 128, 32, 48 * KiB, {"opt_in": False}, 4, 16, "shared_memory"),
    ((9, 0), 128, 32, 48 * KiB + 1, {"opt_in": False}, 0, 0, "shared_memory"),
    # named barriers (9.0+): 2 slots per block slot = 64; 4 barriers -> 16 blocks
    ((9, 0), 32, 16, 0, {"barriers": 4}, 16, 16, "barriers"),
    ((9, 0), 32, 16, 0, {"barriers": 3}, 21, 21, "barriers"),
    ((9, 0), 32, 16, 0, {"barriers": 2}, 32, 32, "blocks"),  # 64 // 2 = 32: a tie with the block cap
    # carve-out preference 25%: 58368 B rounds up to the 64 KiB size; alloc 11136 -> 5 blocks
    ((9, 0), 256, 32, 10000, {"carveout": 25}, 5, 40, "shared_memory"),
    # carve-out 0% cannot hold one block: the driver takes the smallest size that does (16 KiB) -> 1
    ((9, 0), 256, 32, 10000, {"carveout": 0}, 1, 8, "shared_memory"),
    # no registers at all (an empty kernel): no register limit
    ((9, 0), 64, 0, 0, {}, 32, 64, "warps"),
    # --- 8.0 (A100: 64 warps, 32 blocks, 164 KiB) ---
    ((8, 0), 256, 40, 64 * KiB, {}, 2, 16, "shared_memory"),  # 167936 // 66560 = 2
    ((8, 0), 1024, 64, 0, {}, 1, 32, "registers"),  # RPW 2048 -> 8/sub -> 32 warps -> 1 block
    ((8, 0), 1024, 65, 0, {}, 0, 0, "registers"),  # RPW 2304 x 32 warps = 73728 > 65536
    ((8, 0), 64, 0, 0, {}, 32, 64, "warps"),  # warps 64 // 2 = 32 = the block cap: tie
    ((8, 0), 128, 32, 163 * KiB, {}, 1, 4, "shared_memory"),  # opt-in max 163 KiB + 1 KiB = 164 KiB
    ((8, 0), 192, 72, 0, {}, 4, 24, "registers"),  # W 6, RPW 2304 -> 7/sub -> 28 warps -> 4 blocks
    # --- 8.6 (GA10x: 48 warps, 16 blocks, 100 KiB) ---
    ((8, 6), 256, 40, 64 * KiB, {}, 1, 8, "shared_memory"),  # 102400 // 66560 = 1
    ((8, 6), 64, 32, 0, {}, 16, 32, "blocks"),  # warps 24, regs 32, block cap 16
    ((8, 6), 128, 64, 0, {}, 8, 32, "registers"),  # RPW 2048 -> 32 warps -> 8 blocks; warps 12
    ((8, 6), 768, 40, 0, {}, 2, 48, "warps"),  # W 24: warps 2; regs 48 warps -> 2: tie
    ((8, 6), 32, 16, 0, {"barriers": 8}, 16, 16, "blocks"),  # barriers do not count before 9.0
    # --- 8.9 (Ada: 48 warps, 24 blocks, 100 KiB) ---
    ((8, 9), 32, 16, 0, {}, 24, 24, "blocks"),
    ((8, 9), 256, 40, 32 * KiB, {}, 3, 24, "shared_memory"),  # 102400 // 33792 = 3
    ((8, 9), 512, 48, 0, {}, 2, 32, "registers"),  # RPW 1536 -> 10/sub -> 40 warps -> 2 of 16
    # --- 7.5 (Turing: 32 warps, 16 blocks, 64 KiB, no reserve, 256 B granularity) ---
    ((7, 5), 256, 40, 64 * KiB, {}, 1, 8, "shared_memory"),
    ((7, 5), 32, 16, 0, {}, 16, 16, "blocks"),
    ((7, 5), 32, 16, 4097, {}, 15, 15, "shared_memory"),  # 4097 -> 4352 B; 65536 // 4352 = 15
    ((7, 5), 32, 16, 100, {}, 16, 16, "blocks"),  # 100 -> 256 B: 256 blocks' worth
    ((7, 5), 1024, 64, 0, {}, 1, 32, "warps"),  # warps 1 = registers 1
    # --- 10.0 (Blackwell datacenter: as Hopper) ---
    ((10, 0), 256, 40, 64 * KiB, {}, 3, 24, "shared_memory"),
    ((10, 0), 128, 96, 0, {}, 5, 20, "registers"),  # RPW 3072 -> 5/sub -> 20 warps -> 5 blocks
    # --- 12.0 (Blackwell GeForce: 48 warps, 24 blocks, 100 KiB, 1 barrier slot per block slot) ---
    ((12, 0), 32, 16, 0, {}, 24, 24, "blocks"),  # barriers 24 // 1 = 24 ties
    ((12, 0), 32, 16, 0, {"barriers": 2}, 12, 12, "barriers"),
    ((12, 0), 256, 40, 64 * KiB, {}, 1, 8, "shared_memory"),
]


@pytest.mark.parametrize("cc, threads, regs, smem, kw, blocks, warps, limiter", VECTORS)
def test_hand_computed_vectors(cc, threads, regs, smem, kw, blocks, warps, limiter):
    o = occupancy(cc, threads, regs, smem, **kw)
    assert (o.blocks_per_sm, o.active_warps, o.limiter) == (blocks, warps, limiter), o
    lim = ARCH_LIMITS[cc]
    assert o.max_warps == lim.max_threads_per_sm // 32
    assert o.occupancy == pytest.approx(warps / o.max_warps)
    assert limiter in o.limiters
    assert (o.reason is None) == (blocks > 0)


def test_seeds_worked_example():
    """seeds/003: H100, 64 KB shared memory per block, 40 registers, 256 threads -> 3 blocks, 37.5%."""
    o = occupancy("9.0", 256, 40, 64 * KiB)
    assert o.blocks_per_sm == 3 and o.occupancy == 0.375 and o.limiter == "shared_memory"
    assert o.block_limits == {"warps": 8, "registers": 6, "shared_memory": 3, "blocks": 32, "barriers": 64}
    assert o.smem_alloc_per_block == 66560 and o.regs_per_warp == 1280 and o.regs_per_block == 10240
    # 3 x 66560 = 199680 B resident: the smallest carve-out that holds them is 196 KiB
    assert o.carveout_bytes == 196 * KiB
    assert "37.5%" in o.summary()


def test_cc_spellings_agree():
    ref = occupancy((9, 0), 256, 40, 64 * KiB)
    for cc in ("9.0", "sm_90", "sm_90a", 90, "90", limits_for("9.0")):
        assert occupancy(cc, 256, 40, 64 * KiB).blocks_per_sm == ref.blocks_per_sm


def test_ties_are_all_reported():
    o = occupancy((9, 0), 1024, 32, 0)
    assert o.limiters == ("warps", "registers") and o.limiter == "warps" and o.occupancy == 1.0


def test_register_subpartition_rule_beats_naive_division():
    # 65536 / (40 * 32) would say 51 warps; registers are given per sub-partition, so 4 x 12 = 48.
    o = occupancy((9, 0), 32, 40, 0)
    assert o.block_limits["registers"] == 48


def test_hardware_register_check_rounds_warps_to_four():
    # 200 registers: RPW 6400. 5 warps: 5 x 6400 = 32000 fits, and so does the hardware's 8 x 6400 = 51200;
    # 16384 // 6400 = 2 warps per sub-partition -> 8 warps -> 1 block of 5.
    assert occupancy((9, 0), 160, 200, 0).blocks_per_sm == 1
    # 9 warps x 6400 = 57600 fits the software check, but 12 warps x 6400 = 76800 fails the hardware one.
    o = occupancy((9, 0), 288, 200, 0)
    assert o.blocks_per_sm == 0 and "rounded up to 4" in o.reason


def test_zero_blocks_reasons_name_the_fix():
    o = occupancy((9, 0), 128, 32, 48 * KiB + 1, opt_in=False)
    assert o.blocks_per_sm == 0 and "opt in" in o.reason
    o = occupancy((9, 0), 2048, 16, 0)
    assert o.blocks_per_sm == 0 and o.limiter == "warps" and "1024" in o.reason


def test_carveout_reported_is_smallest_supported_size_that_holds_the_blocks():
    assert occupancy((7, 5), 32, 16, 1000).carveout_bytes == 32 * KiB  # 16 x 1024 B
    assert occupancy((7, 5), 32, 16, 4097).carveout_bytes == 64 * KiB  # 15 x 4352 = 65280 B
    assert occupancy((8, 0), 256, 32, 0).carveout_bytes == 8 * KiB  # 8 blocks x 1 KiB reserve
    assert occupancy((9, 0), 256, 32, 10000, carveout=25).carveout_bytes == 64 * KiB
    assert occupancy((9, 0), 256, 32, 10000, carveout=0).carveout_bytes == 16 * KiB


@pytest.mark.parametrize("cc", sorted(ARCH_LIMITS))
def test_table_is_consistent(cc):
    lim = ARCH_LIMITS[cc]
    assert lim.carveouts_kib[-1] * KiB == lim.smem_per_sm, "the largest carve-out is the SM's shared memory"
    assert lim.smem_per_block_optin + lim.smem_reserved_per_block <= lim.smem_per_sm
    assert lim.max_threads_per_sm % 32 == 0 and lim.regs_per_sm == 65536 and lim.reg_alloc_unit == 256
    assert lim.smem_reserved_per_block == (KiB if cc >= (8, 0) else 0)
    assert lim.smem_granularity == (128 if cc >= (8, 0) else 256)
    # A full SM of single-warp blocks at 0 registers is always limited by the block cap or the warps.
    assert occupancy(cc, 32, 0, 0).limiter in ("blocks", "warps")


def test_bad_input_is_refused_with_the_fix():
    with pytest.raises(AnalysisError, match="0..255"):
        occupancy((9, 0), 256, 256, 0)
    with pytest.raises(AnalysisError, match="at least 1"):
        occupancy((9, 0), 0, 32, 0)
    with pytest.raises(AnalysisError, match="percentage"):
        occupancy((9, 0), 256, 32, 0, carveout=150)
    with pytest.raises(AnalysisError, match="known"):
        occupancy((6, 1), 256, 32, 0)
    with pytest.raises(AnalysisError, match="compute capability"):
        occupancy("hopper", 256, 32, 0)
    with pytest.raises(AnalysisError, match="must be an int"):
        occupancy((9, 0), 256.0, 32, 0)


def test_what_if_sweeps_contain_the_current_configuration():
    w = what_if((9, 0), 256, 40, 64 * KiB)
    assert w.base.blocks_per_sm == 3
    assert [o.threads for o in w.by_block_size][:3] == [32, 64, 96] and 256 in [o.threads for o in w.by_block_size]
    regs = [o.regs_per_thread for o in w.by_registers]
    assert regs[0] == 8 and regs[-1] == 255 and 40 in regs
    rows = w.rows()
    assert sum(r["current"] for r in rows) == 3  # one current row per sweep
    assert {r["vary"] for r in rows} == {"threads", "registers", "shared_memory"}
    # Fewer registers never lower occupancy; more shared memory never raises it.
    occ_regs = [o.active_warps for o in w.by_registers]
    assert occ_regs == sorted(occ_regs, reverse=True)
    occ_smem = [o.blocks_per_sm for o in w.by_shared_memory]
    assert occ_smem == sorted(occ_smem, reverse=True)
    assert w.to_dict()["base"]["blocks_per_sm"] == 3


@pytest.mark.parametrize("cc", [(8, 0), (9, 0), (12, 0), (7, 5)])
def test_smem_steps_are_the_exact_thresholds(cc):
    lim = ARCH_LIMITS[cc]
    for s in _smem_steps(lim, True)[1:-1]:
        here = occupancy(lim, 32, 0, s).block_limits["shared_memory"]
        after = occupancy(lim, 32, 0, s + lim.smem_granularity).block_limits["shared_memory"]
        assert after < here, (s, here, after)


def test_max_regs_for_blocks():
    # 4 blocks of 8 warps need 32 warps: 8 per sub-partition -> RPW <= 2048 -> 64 registers
    assert max_regs_for_blocks((9, 0), 256, 4) == 64
    assert max_regs_for_blocks((9, 0), 256, 8) == 32
    assert max_regs_for_blocks((8, 6), 768, 2) == 40  # 48 warps: 12 per sub-partition -> RPW 1280


def test_to_dict_is_json_ready():
    import json

    d = occupancy((9, 0), 256, 40, 64 * KiB).to_dict()
    assert json.loads(json.dumps(d))["limiter"] == "shared_memory"


# ---- against NVIDIA's own cuda_occupancy.h -----------------------------------------------

HARNESS = r"""
#include <cstdio>
#include <cuda_occupancy.h>
// stdin lines: major minor threads regs static dynamic barriers optin carveout
int main() {
  int major, minor, threads, regs, barriers, optin, carve; long stat, dyn;
  while (scanf("%d %d %d %d %ld %ld %d %d %d", &major, &minor, &threads, &regs, &stat, &dyn, &barriers, &optin,
               &carve) == 9) {
    cudaOccDeviceProp p;
    p.computeMajor = major; p.computeMinor = minor; p.maxThreadsPerBlock = 1024; p.regsPerBlock = 65536;
    p.regsPerMultiprocessor = 65536; p.warpSize = 32; p.sharedMemPerBlock = 49152; p.numSms = 1;
    scanf("%d %zu %zu %zu", &p.maxThreadsPerMultiprocessor, &p.sharedMemPerMultiprocessor,
          &p.sharedMemPerBlockOptin, &p.reservedSharedMemPerBlock);
    cudaOccFuncAttributes a;
    a.maxThreadsPerBlock = 1024; a.numRegs = regs; a.sharedSizeBytes = stat;
    a.partitionedGCConfig = PARTITIONED_GC_OFF;
    a.shmemLimitConfig = optin ? FUNC_SHMEM_LIMIT_OPTIN : FUNC_SHMEM_LIMIT_DEFAULT;
    a.maxDynamicSharedSizeBytes = optin ? (p.sharedMemPerBlockOptin - stat) : (49152 - stat);
    a.numBlockBarriers = barriers; a.virtualResourceCount = 0;
    cudaOccDeviceState s; s.carveoutConfig = carve;
    cudaOccResult r;
    if (cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &s, threads, dyn) != CUDA_OCC_SUCCESS) { puts("ERR"); continue; }
    printf("%d %d %d %d %d %d\n", r.activeBlocksPerMultiprocessor, r.blockLimitWarps, r.blockLimitRegs,
           r.blockLimitSharedMem, r.blockLimitBlocks, r.blockLimitBarriers);
  }
}
"""


def _occupancy_header_harness(tmp_path):
    import shutil
    import subprocess
    from pathlib import Path

    from kernelab.gpu.toolchain import cuda_include_dirs

    cxx = shutil.which("g++") or shutil.which("c++")
    incs = [d for d in (*cuda_include_dirs(), "/usr/local/cuda/include") if (Path(d) / "cuda_occupancy.h").is_file()]
    if not cxx or not incs:
        pytest.skip("needs a C++ compiler and cuda_occupancy.h (torch's nvidia wheels or a CUDA toolkit)")
    src = tmp_path / "harness.cpp"
    src.write_text(HARNESS)
    exe = tmp_path / "harness"
    subprocess.run([cxx, "-O1", f"-I{incs[0]}", str(src), "-o", str(exe)], check=True, capture_output=True)
    return exe


def test_calculator_equals_cuda_occupancy_h(tmp_path):
    """20000 random configurations (every cc, threads 1..1024, registers 0..255, shared memory up to past
    the opt-in maximum, 0-16 named barriers, carve-out preferences, with and without opt-in) through the
    header's cudaOccMaxActiveBlocksPerMultiprocessor, compiled here, and through occupancy()."""
    import random
    import subprocess

    from kernelab.analysis.occupancy import UNLIMITED

    exe = _occupancy_header_harness(tmp_path)
    rng = random.Random(20261130)
    cases = []
    for _ in range(20000):
        cc = rng.choice(sorted(ARCH_LIMITS))
        lim = ARCH_LIMITS[cc]
        threads = rng.choice([rng.randint(1, 1024), rng.choice([32, 33, 64, 96, 128, 256, 512, 1000, 1024])])
        regs = rng.choice([rng.randint(0, 255), rng.choice([0, 16, 32, 40, 64, 65, 128, 168, 255])])
        total = rng.choice([rng.randint(0, lim.smem_per_block_optin + 3000), 0, 48 * KiB, 48 * KiB + 1,
                            lim.smem_per_block_optin, lim.smem_per_block_optin + 1, rng.randint(0, 4096)])
        static = rng.randint(0, min(total, 48 * KiB))
        cases.append((cc, threads, regs, static, total - static, rng.choice([0, 1, 1, 2, 3, 4, 7, 16]),
                      rng.choice([0, 1]), rng.choice([-1, -1, -1, 0, 5, 10, 25, 33, 50, 66, 75, 100])))
    lines = []
    for cc, t, r, s, d, b, o, cv in cases:
        lim = ARCH_LIMITS[cc]
        lines.append(f"{cc[0]} {cc[1]} {t} {r} {s} {d} {b} {o} {cv} {lim.max_threads_per_sm} {lim.smem_per_sm} "
                     f"{lim.smem_per_block_optin} {lim.smem_reserved_per_block}")
    out = subprocess.run([str(exe)], input="\n".join(lines), capture_output=True, text=True, check=True)
    results = out.stdout.splitlines()
    assert len(results) == len(cases) and "ERR" not in results
    bad = []
    for (cc, t, r, s, d, b, o, cv), line in zip(cases, results):
        o_ = occupancy(cc, t, r, s + d, None if cv < 0 else cv, barriers=b, opt_in=bool(o))
        lim = o_.block_limits
        mine = [o_.blocks_per_sm] + [UNLIMITED if lim[k] is None else lim[k]
                                     for k in ("warps", "registers", "shared_memory", "blocks", "barriers")]
        if mine != [int(x) for x in line.split()]:
            bad.append(f"{(cc, t, r, s, d, b, o, cv)}: header {line}, kernelab {mine}")
    assert not bad, f"{len(bad)} mismatches:\n" + "\n".join(bad[:20])


def test_kernel_block_size_limit():
    # __launch_bounds__(256): a 512-thread block cannot launch, a 256-thread one can
    assert occupancy((9, 0), 512, 32, 0, max_threads=256).blocks_per_sm == 0
    o = occupancy((9, 0), 512, 32, 0, max_threads=256)
    assert "launch_bounds" in o.reason and o.limiter == "warps"
    assert occupancy((9, 0), 256, 32, 0, max_threads=256).blocks_per_sm == 8
