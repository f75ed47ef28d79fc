"""Sweep of gemm v9_sgemm_tuned's macro knobs: fp32 FFMA GEMM at 4096^3 against cuBLAS (no TF32).

    PYTHONPATH=src python3 scripts/sweep_gemm_fp32.py --out $OUT/sweep_gemm_fp32.json
    PYTHONPATH=src python3 scripts/sweep_gemm_fp32.py --list                 # the settings, no GPU
    PYTHONPATH=src python3 scripts/sweep_gemm_fp32.py --dry-run              # compile all, SASS mix, no GPU
    PYTHONPATH=src python3 scripts/sweep_gemm_fp32.py --only t8x8_128x128_k32,regs_intl --out x.json

Per setting (CONFIGS, in priority order; --budget-s cuts the tail, never the head):
  1. compile v9 with its -D defines (NVRTC, the current GPU's arch): registers, spills;
  2. check before timing, on NaN-filled C: a full float64 comparison at 1024^3 and at
     4097 x 4095 x 1003 (every edge: M, N and K tails, K % 4 = 3), and at 4096^3 on 64 random
     rows and 64 random columns, with the op's tolerance (ops/gemm/op.py: atol = 8 u K^(3/4));
  3. time 4096^3 with kernelab.bench (cold L2; >= 10 samples, to a 1% CI of the median or
     --max-wall-s).
cuBLAS (torch.mm(a, b.T), allow_tf32 = False) is timed at the start, the middle and the end, so
clock drift shows; a setting's ratio is to the mean of those medians. v5 (measured 0.76x) is
timed too: `x v5` is the gain over it in the same process. Then, budget left: the fastest
setting against cuBLAS interleaved sample by sample (kernelab.bench.compare, with a 95% CI),
and the three fastest at 2048^3 and 1024^3. ~45-75 s on an H200 (11 settings and v5). JSON to
--out (every Measurement in full); a table sorted by ratio to cuBLAS is printed last.

Reading the table: `x cuBLAS` is the ratio of medians (higher is better; the goal is >= 0.90);
the `paired` line is the decisive figure for the winner. `MHz` is the mean SM clock during the
samples: FFMA-heavy kernels can run below the boost clock, so compare TF/GHz (TFLOP/s per GHz)
when clocks differ. `regs` and `blk/SM` come from the cubin and the occupancy API. A setting
whose check fails is never timed, and its row says why (NaN = unwritten output).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
V9 = ROOT / "src" / "kernelab" / "ops" / "gemm" / "v9_sgemm_tuned.cu"
V5 = ROOT / "src" / "kernelab" / "ops" / "gemm" / "v5_warptile_dbuf.cu"
SHAPE = (4096, 4096, 4096)  # timed, and checked on SAMPLED random rows and columns
CHECK_SHAPES = ((1024, 1024, 1024), (4097, 4095, 1003))  # checked in full, before SHAPE
SMALL_SHAPES = ((2048, 2048, 2048), (1024, 1024, 1024))  # timed for the three fastest settings
SAMPLED = 64
DEVICE = "cuda"  # tests/cpu/test_gemm_fp32_tuned.py drives the sweep's logic on "cpu" with fakes

def knobs(**kw) -> dict:
    """A full setting: every geometry knob spelled out, so a name keeps its meaning when v9's
    defaults change. Base: 128x128x8 C tile, 3-stage cp.async, interleaved lanes, 2 blocks/SM."""
    base = dict(BM=128, BN=128, BK=8, WARPS_M=2, WARPS_N=2, TM=16, TN=8, LANES_M=4, LANE_MAP=1, LOADER=1,
                STAGES=3, MIN_BLOCKS=2, GROUP_M=0, FMA_ORDER=0)
    base.update(kw)
    return base


T8X8 = dict(WARPS_M=4, WARPS_N=2, TM=8, TN=8)  # 8 warps of 32x64, lanes 4x8, 8x8 per thread (CUTLASS's SIMT)

W2X4 = dict(WARPS_M=2, WARPS_N=4, TM=8, TN=8, LANES_M=8)  # regs_intl's geometry: 8 warps of 64x32, lanes 8x4
REGS = dict(LOADER=0, STAGES=2)  # v5's loader: LDG.128 + transposed STS.32, 2 stages

# (name, -D defines, why). Order = priority (the budget drops the tail). One of them must equal
# v9's defaults (tests/cpu/test_gemm_fp32_tuned.py checks it), so the registered variant is always
# measured. "instr / FFMA": SASS instructions of the hot k-loop per FFMA (NVRTC 13.0, sm_90; --dry-run
# prints them). Round 1 (docs/runs/2026-11-30-h200-sweep_gemm_fp32.json) measured 15 settings; its
# losers are gone (16x8 tiles at 2 blocks/SM and 1 block/SM, 128x256 and 256x128 blocks, v5's lane
# order, 4 stages); the numbers in `why` are round 1's ratios to cuBLAS. Rounds 2 and 3's losers
# (_r2.json, _r3.json: BK 32 at 3 stages, BK 40, warps 2x4 at BK 8-32 with 3 stages, GROUP_M 16 at
# BK 16, regs_intl grouped) are gone too.
CONFIGS: list[tuple[str, dict, str]] = [
    ("t8x8_k32_s2_serp_g16", knobs(**T8X8, BK=32, STAGES=2, FMA_ORDER=1, GROUP_M=16),
     "the default since round 4 (0.903x there, paired): serpentine FFMA order in grouped block order "
     "(16 tile-rows), BK 32, 2 stages"),
    ("t8x8_128x128_k32_s2", knobs(**T8X8, BK=32, STAGES=2),
     "the default of round 3 (0.888x in rounds 2-4): row order, launch order, BK 32 with 2 stages (66 KB)"),
    ("t8x8_k32_s2_g16", knobs(**T8X8, BK=32, STAGES=2, GROUP_M=16),
     "control for round 4's winner: grouped order in row FFMA order (at 3 stages it lost 2.4%)"),
    ("t8x8_k32_s2_serp_g8", knobs(**T8X8, BK=32, STAGES=2, FMA_ORDER=1, GROUP_M=8),
     "round 4's winner with 8 tile-rows per group"),
    ("t8x8_k32_s2_serp_g32", knobs(**T8X8, BK=32, STAGES=2, FMA_ORDER=1, GROUP_M=32),
     "round 4's winner with 32 tile-rows per group (4096^3: one group spans all 32 tile-rows)"),
    ("t8x8_k32_s3_serp_g16", knobs(**T8X8, BK=32, STAGES=3, FMA_ORDER=1, GROUP_M=16),
     "round 4's winner with 3 stages (99 KB, still 2 blocks/SM)"),
    ("t8x8_k16_s3_serp_g16", knobs(**T8X8, BK=16, STAGES=3, FMA_ORDER=1, GROUP_M=16),
     "serpentine and grouped at BK 16, 3 stages (round 4: 0.889x in launch order)"),
    ("w2x4_k32_s2_serp_g16", knobs(**W2X4, BK=32, STAGES=2, FMA_ORDER=1, GROUP_M=16),
     "round 4's winner with warps 2x4 of 64x32 (lanes 8x4)"),
    # Round 4 (session 4): ncu on the H200 (docs/runs/ncu/gemm_fp32_*) put cuBLAS at 87% issue slots busy
    # and v9 at 75%, with 0.68 cycles of dispatch stall per issued instruction against cuBLAS's 0.10.
    # The FFMA order decides which operand the reuse cache serves: in v9's sm_90 SASS 384 of 4096
    # FFMAs read all three registers from one bank (reg % 2) without reuse; in serpentine order 15.
    ("t8x8_k32_s2_serp", knobs(**T8X8, BK=32, STAGES=2, FMA_ORDER=1),
     "the default in serpentine FFMA order (CUTLASS's MmaSimt): 15 three-operand bank clashes of 4096 "
     "instead of 384, 118 registers. Predicted +2-5% if the dispatch stalls are bank conflicts"),
    ("t8x8_k32_s2_colserp", knobs(**T8X8, BK=32, STAGES=2, FMA_ORDER=3),
     "serpentine by columns: 14 clashes of 4096, 127 registers"),
    ("t16x8_k8_colserp", knobs(FMA_ORDER=3),
     "cuBLAS's tile (4 warps of 64x64, 16x8 per thread, 128x128x8, 3 stages) in serpentine column order: "
     "211 registers instead of 255 and 7 clashes of 1024 (0.826x in row order in round 1)"),
    ("w2x4_k32_s2_serp", knobs(**W2X4, BK=32, STAGES=2, FMA_ORDER=1),
     "warps 2x4 of 64x32 at BK 32, 2 stages, serpentine"),
    ("t8x8_k16_s3_serp", knobs(**T8X8, BK=16, STAGES=3, FMA_ORDER=1),
     "serpentine at round 1's BK 16, 3 stages"),
    ("t8x8_128x128_k16", knobs(**T8X8, BK=16),
     "the default until round 3 (round 1: 0.872x): 8 warps of 32x64, lanes 4x8 interleaved, 8x8 per thread, 128x128x16, "
     "3-stage cp.async, 2 blocks/SM; 1157 instr / 1024 FFMA"),
    ("regs_intl", knobs(**REGS, LANE_MAP=1, LANES_M=8, WARPS_M=2, WARPS_N=4, TM=8, TN=8),
     "control, round 1's best (0.873x): v5's geometry (warps 2x4 of 64x32, lanes 8x4) and register-staged "
     "loads at BK 8, with the clean hot loop and interleaved lanes; 583 / 512"),
    ("t16x8_128x128", knobs(),
     "control (0.826x): cuBLAS's own tile (128x128x8, 4 warps of 64x64, 3 stages), 16x8 per thread, 255 regs"),
    ("t8x8_128x128_k32_g16", knobs(**T8X8, BK=32, GROUP_M=16),
     "BK 32 and grouped order together: the predicted best (+2-3%, 0.89-0.90x)"),
    # Round 3: round 2's winner was BK 32 with 2 stages (0.888x; BK 16 0.872x, BK 32 3 stages 0.883x):
    # fewer barriers per FFMA paid, the third stage did not. Longer k-tiles at 2 stages, 2 blocks/SM.
    ("w2x4_k32_s2", knobs(**W2X4, BK=32, STAGES=2),
     "regs_intl's warp layout at BK 32 with 2 stages (w2x4_k32 0.883x = t8x8 k32's 0.883x at 3 stages)"),
    ("t8x8_128x128_k32_s2_g8", knobs(**T8X8, BK=32, STAGES=2, GROUP_M=8),
     "the winner in grouped order of 8 tile-rows (16 lost 1-2% in round 2: a diagnostic of the tile order)"),
]

_DEFAULT = re.compile(r"^#ifndef (\w+)\s*\n#define \1 ([^\n/]+?)\s*(?://.*)?$", re.MULTILINE)


def macro_defaults(path: Path = V9) -> dict[str, str]:
    """{knob: default} from the `#ifndef X / #define X value` pairs of the kernel file."""
    return dict(_DEFAULT.findall(path.read_text()))


def params(defines: dict, path: Path = V9) -> dict[str, int]:
    """Every knob's integer value for these defines (defaults filled in, names resolved)."""
    merged = {k: str(v) for k, v in macro_defaults(path).items()}
    merged.update({k: str(v) for k, v in defines.items()})

    def value(k, depth=0):
        v = merged[k]
        if re.fullmatch(r"-?\d+", v):
            return int(v)
        if v in merged and depth < 8:
            return value(v, depth + 1)
        raise ValueError(f"{k} = {v!r}: not an integer or another knob's name")

    return {k: value(k) for k in merged}


def geometry(p: dict) -> dict:
    """Launch geometry of one setting: threads per block, C tile, dynamic shared memory."""
    return {"block": p["WARPS_M"] * p["WARPS_N"] * 32, "tile": (p["BM"], p["BN"]),
            "smem": p["STAGES"] * p["BK"] * (p["BM"] + p["PAD"] + p["BN"] + p["PAD"]) * 4}


def tag(p: dict | None) -> str:
    """A setting in one short word: tile x BK, thread tile, warps, loader+stages, lane order."""
    if p is None:
        return "v5: 128x128x8 t8x8 w2x4 regs2 rowmaj"
    return (f"{p['BM']}x{p['BN']}x{p['BK']} t{p['TM']}x{p['TN']} w{p['WARPS_M']}x{p['WARPS_N']} "
            f"{'cp' if p['LOADER'] else 'regs'}{p['STAGES']} {'intl' if p['LANE_MAP'] else 'rowmaj'}"
            + (f" g{p['GROUP_M']}" if p.get("GROUP_M") else ""))


def v5_geometry() -> dict:
    return {"block": 256, "tile": (128, 128), "smem": 0}


# ---- no GPU: compile every setting and read its SASS ------------------------------------------

_SASS_INSTR = re.compile(r"/\*([0-9a-f]{4,})\*/\s+([^;]*);")


def hot_loop(sass: str) -> list[str]:
    """The instructions of the densest loop that holds FFMAs (the span of a backward branch with the
    highest FFMA share): the k-loop, fully unrolled over one k-tile (NVRTC may unroll two)."""
    ins = [(int(m[1], 16), m[2].strip()) for m in _SASS_INSTR.finditer(sass)]
    best: list[str] = []
    best_share = 0.0
    for addr, text in ins:
        m = re.search(r"BRA (0x[0-9a-f]+)", text)
        if m and int(m[1], 16) < addr:
            body = [t for a, t in ins if int(m[1], 16) <= a <= addr]
            share = sum(_opcode(t) == "FFMA" for t in body) / len(body)
            if share > best_share:
                best, best_share = body, share
    return best


def _opcode(text: str) -> str:
    return re.sub(r"^@!?U?P\w+\s+", "", text).split()[0].split(".")[0]


_FFMA = re.compile(r"^(?:@!?U?P\w+\s+)?FFMA\S*\s+R\d+,\s*-?R(\d+)(\.reuse)?,\s*-?R(\d+)(\.reuse)?,\s*-?R(\d+)(\.reuse)?")


def ffma_bank_clash(text: str) -> bool:
    """An FFMA whose three source registers all come from one register bank: none is served by the
    operand reuse cache (`.reuse`) and all are even or all odd (two banks, reg % 2: the Volta-and-
    later model of Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via
    Microbenchmarking", 2018). Such an instruction needs two cycles to read its operands. A static
    indicator to compare settings by, not a measured cost."""
    m = _FFMA.match(text)
    if not m or any(m[i] for i in (2, 4, 6)):
        return False
    return len({int(m[i]) % 2 for i in (1, 3, 5)}) == 1


def loop_mix(body: list[str]) -> dict:
    """Instruction classes of the hot loop: FFMA, shared reads, copies, barriers, the rest."""
    full = [re.sub(r"^@!?U?P\w+\s+", "", t).split()[0] for t in body]
    mix = {"instr": len(body), "ffma": sum(o == "FFMA" for o in full), "lds128": sum(o == "LDS.128" for o in full),
           "lds_other": sum(o.startswith("LDS") and o != "LDS.128" for o in full),
           "ldgsts": sum(o.startswith("LDGSTS") for o in full), "ldg": sum(o.startswith("LDG.") for o in full),
           "sts": sum(o.startswith("STS") for o in full), "bar": sum(o.startswith("BAR") for o in full)}
    mix["other"] = mix["instr"] - sum(v for k, v in mix.items() if k != "instr")
    mix["clash"] = sum(ffma_bank_clash(t) for t in body)
    mix["ffma_share"] = mix["ffma"] / mix["instr"] if mix["instr"] else 0.0
    return mix


def dry_run(arch: str = "sm_90", names: list[str] | None = None) -> int:
    """Compile every setting (NVRTC, no GPU), print registers, spills, occupancy and the hot loop's
    instruction mix; 1 if any setting fails to build or spills."""
    from kernelab.analysis import occupancy
    from kernelab.analysis.sass import disassemble
    from kernelab.gpu import compile_file

    rc = 0
    print(f"{'setting':22s} {'regs':>4s} {'spill':>5s} {'smem':>6s} {'blk/SM':>6s} {'loop':>5s} {'FFMA':>5s} "
          f"{'share':>5s} {'LDS128':>6s} {'LDGSTS':>6s} {'LDG':>3s} {'STS':>3s} {'other':>5s} {'clash':>5s}  {arch}, "
          f"hot k-loop per unrolled k-tile")
    for name, defines, _ in CONFIGS:
        if names and name not in names:
            continue
        p = params(defines)
        g = geometry(p)
        try:
            m = compile_file(V9, arch=arch, defines=dict(defines))
        except Exception as e:
            print(f"{name:22s} COMPILE ERROR {str(e)[-300:]}")
            rc = 1
            continue
        r = m.resources["gemm_f32"]
        spill = r.spill_stores + r.spill_loads + r.stack_frame
        occ = occupancy(arch, g["block"], r.registers, g["smem"], barriers=r.barriers)
        mix = loop_mix(hot_loop(disassemble(m.cubin)))
        flag = "  SPILLS" if spill else ("  < MIN_BLOCKS" if occ.blocks_per_sm < p["MIN_BLOCKS"] else "")
        print(f"{name:22s} {r.registers:4d} {spill:5d} {g['smem']:6d} {occ.blocks_per_sm:6d} {mix['instr']:5d} "
              f"{mix['ffma']:5d} {mix['ffma_share']:5.3f} {mix['lds128']:6d} {mix['ldgsts']:6d} {mix['ldg']:3d} "
              f"{mix['sts']:3d} {mix['other']:5d} {mix['clash']:5d}  {tag(p)}{flag}", flush=True)
        if spill or occ.blocks_per_sm < p["MIN_BLOCKS"]:
            rc = 1
    return rc


# ---- GPU part ---------------------------------------------------------------------------------

class Runner:
    def __init__(self, args):
        import torch

        from kernelab.analysis.devices import spec_for
        from kernelab.analysis.roofline import floor_seconds
        from kernelab.bench import WarmupRule
        from kernelab.gpu import device_info
        from kernelab.ops import Case, discover

        self.torch, self.args = torch, args
        self.t0 = time.perf_counter()
        torch.backends.cuda.matmul.allow_tf32 = False  # cuBLAS SGEMM, not TF32 (and torch's fp64 refs are exact)
        torch.backends.cudnn.allow_tf32 = False
        self.op = discover()["gemm"]
        self.Case = Case
        self.info = device_info()
        self.spec = spec_for()
        self.floor = lambda shape: floor_seconds(self.op.work(Case(shape, "float32")), self.spec)
        # Warm-up: >= 6 samples and 20 ms, stable within 1% over two 10 ms windows, at most 0.3 s.
        self.warmup = WarmupRule(min_count=6, min_s=0.02, max_s=0.3, window_s=0.01, tol=0.01)
        self.inputs: dict = {}
        self.refs: dict = {}

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def data(self, shape, seed=0):
        key = (shape, seed)
        if key not in self.inputs:
            case = self.Case(shape, "float32")
            self.inputs[key] = self.op.make_inputs(case, seed, DEVICE)
        return self.inputs[key]

    def reference(self, shape):
        """Float64 reference: the full C, or for SHAPE, SAMPLED random rows and columns."""
        torch = self.torch
        if shape in self.refs:
            return self.refs[shape]
        x = self.data(shape)
        a, b = x["a"], x["b"]
        if shape == SHAPE:
            g = torch.Generator(device="cpu").manual_seed(7)
            rows = torch.randperm(shape[0], generator=g)[:SAMPLED].to(DEVICE)
            cols = torch.randperm(shape[1], generator=g)[:SAMPLED].to(DEVICE)
            bd = b.double()
            ref = {"rows": rows, "cols": cols, "r": a[rows].double() @ bd.t(), "c": a.double() @ bd[cols].t()}
            del bd
        else:
            ref = {"full": self.op.reference(self.Case(shape, "float32"), x)["c"]}
        self.refs[shape] = ref
        return ref

    def launcher(self, kernel, geo, shape, c):
        m, n, k = shape
        bm, bn = geo["tile"]
        grid = (-(-n // bn), -(-m // bm))
        x = self.data(shape)
        a, b = x["a"], x["b"]
        block, smem = geo["block"], geo["smem"]
        return lambda: kernel(a, b, c, m, n, k, grid=grid, block=block, shared_mem=smem)

    def check(self, kernel, geo) -> dict:
        """Every check shape; ok only if all pass. worst = max(|err| - rtol |ref|) / atol (<= 1 passes)."""
        torch = self.torch
        from kernelab.gpu import synchronize

        out = {"ok": True, "shapes": {}}
        for shape in CHECK_SHAPES + (SHAPE,):
            m, n, k = shape
            c = torch.full((m, n), float("nan"), device=DEVICE)
            self.launcher(kernel, geo, shape, c)()
            synchronize()
            ref = self.reference(shape)
            rtol, atol = self.op.tolerance(self.Case(shape, "float32"))
            if "full" in ref:
                pairs = [(c.double(), ref["full"])]
            else:
                pairs = [(c[ref["rows"]].double(), ref["r"]), (c[:, ref["cols"]].double(), ref["c"])]
            worst, nan = 0.0, 0
            for got, want in pairs:
                nan += int(torch.isnan(got).sum().item())
                err = ((got - want).abs() - rtol * want.abs()) / atol
                worst = max(worst, float(torch.nan_to_num(err, nan=math.inf).max().item()))
            ok = nan == 0 and worst <= 1.0
            out["shapes"]["x".join(map(str, shape))] = {"ok": ok, "worst_over_atol": worst, "nan": nan, "atol": atol}
            if not ok:
                out["ok"] = False
                out["reason"] = f"{m}x{n}x{k}: " + (f"{nan} NaN (unwritten)" if nan else f"error {worst:.3g} x atol")
                break
            del c
        return out

    def time(self, fn, name, shape=SHAPE):
        from kernelab.bench import bench

        m = bench(fn, mode="cold", target_rel=0.01, min_samples=10, max_wall_s=self.args.max_wall_s,
                  warmup=self.warmup, floor_s=self.floor(shape), name=name)
        flops = 2 * shape[0] * shape[1] * shape[2]
        return {"median_s": m.median_s, "tflops": flops / m.median_s / 1e12, "mhz": m.mean_sm_clock_mhz,
                "n": m.stats.n, "stdrel": m.stats.stdrel, "throttled": len(m.throttled), "measurement": m.to_dict()}

    def kernel_names(self, fn) -> list[str] | str:
        """The GPU kernels one call of fn launches (torch.profiler): which tile cuBLAS picked.
        Best effort: a profiler problem is recorded, never fatal."""
        if DEVICE != "cuda":
            return "not profiled (no GPU)"
        try:
            from torch.profiler import ProfilerActivity, profile

            fn()
            self.torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                fn()
                self.torch.cuda.synchronize()
            return sorted({e.key for e in prof.key_averages() if "memset" not in e.key.lower()
                           and "memcpy" not in e.key.lower() and getattr(e, "device_type", None) is not None
                           and str(e.device_type).endswith("CUDA")})
        except Exception as e:
            return f"profiler failed: {type(e).__name__}: {str(e)[:200]}"

    def cublas(self, shape=SHAPE):
        torch = self.torch
        x = self.data(shape)
        a, b = x["a"], x["b"]
        c = torch.empty(shape[0], shape[1], device=DEVICE)
        return lambda: torch.mm(a, b.t(), out=c)


def build(name, defines):
    """Compile (cached) and load one setting on the current GPU: (module, params, geometry)."""
    from kernelab.gpu import load

    if name == "v5":
        return load(V5), None, v5_geometry()
    p = params(defines)
    return load(V9, defines=dict(defines)), p, geometry(p)


def run(args, out: dict) -> None:
    """Fill `out` as the run goes, so a crash part-way still leaves everything measured so far."""
    import torch

    from kernelab.bench import ImpossibleResult
    from kernelab.gpu import synchronize

    r = Runner(args)
    out.update({"device": r.info.to_dict(), "torch": torch.__version__, "shape": SHAPE, "cublas": [],
                "settings": [], "args": vars(args)})
    out["wall_s"] = 0.0
    selected = [c for c in CONFIGS if not args.only or c[0] in args.only.split(",")]
    settings = [("v5", {}, "anchor: the measured 0.76x variant, timed in this process")] + selected

    def time_cublas(label):
        t = r.time(r.cublas(), f"cublas-{label}")
        t["when"] = label
        out["cublas"].append(t)
        print(f"[{r.elapsed():5.1f}s] cuBLAS ({label}): {t['median_s'] * 1e6:8.1f} us  {t['tflops']:5.1f} TFLOP/s",
              flush=True)

    print(f"[{r.elapsed():5.1f}s] {r.info.name}, torch {torch.__version__}: {len(settings)} settings, "
          f"budget {args.budget_s:.0f} s", flush=True)
    r.reference(SHAPE)
    out["cublas_kernels"] = r.kernel_names(r.cublas())
    print(f"[{r.elapsed():5.1f}s] cuBLAS runs: {out['cublas_kernels']}", flush=True)
    time_cublas("start")
    middle = 1 + len(selected) // 2
    for i, (name, defines, why) in enumerate(settings):
        if i == middle:
            time_cublas("middle")
        rec = {"name": name, "defines": defines, "why": why}
        out["settings"].append(rec)
        if r.elapsed() > args.budget_s:
            rec["skipped"] = f"budget: {r.elapsed():.0f} s > --budget-s {args.budget_s:.0f}"
            continue
        try:
            mod, p, geo = build(name, defines)
        except Exception as e:  # a static_assert or a ptxas error: report it, go on
            rec["error"] = f"compile: {str(e)[-600:]}"
            print(f"[{r.elapsed():5.1f}s] {name}: compile error {str(e)[-200:]}", flush=True)
            continue
        res = mod.compiled.resources.get("gemm_f32")
        rec.update(params=p, geometry=geo, registers=res.registers if res else None,
                   spills=(res.spill_stores + res.spill_loads) if res else None,
                   compile_s=mod.compiled.compile_seconds)
        kernel = mod.kernel("gemm_f32")
        try:
            rec["blocks_per_sm"] = kernel.max_active_blocks_per_sm(geo["block"], geo["smem"])
            rec["check"] = r.check(kernel, geo)
        except Exception as e:
            rec["error"] = f"check: {type(e).__name__}: {str(e)[-600:]}"
            print(f"[{r.elapsed():5.1f}s] {name}: {rec['error'][:200]}", flush=True)
            if "KernelFault" in type(e).__name__ or "illegal" in str(e).lower():
                break  # the context is gone; later launches would fail too
            continue
        if not rec["check"]["ok"]:
            print(f"[{r.elapsed():5.1f}s] {name}: CHECK FAILED {rec['check']['reason']}", flush=True)
            continue
        c = torch.empty(SHAPE[0], SHAPE[1], device=DEVICE)
        try:
            rec["time"] = r.time(r.launcher(kernel, geo, SHAPE, c), name)
        except ImpossibleResult as e:
            rec["error"] = f"impossible time: {e}"
            continue
        synchronize()
        t = rec["time"]
        print(f"[{r.elapsed():5.1f}s] {name:22s} {t['median_s'] * 1e6:8.1f} us  {t['tflops']:5.1f} TFLOP/s  "
              f"regs {rec['registers']}  blk/SM {rec['blocks_per_sm']}", flush=True)
        rec["_kernel"] = (kernel, geo)
    time_cublas("end")
    ratios(out)

    ranked = sorted((s for s in out["settings"] if "time" in s and s["name"] != "v5"),
                    key=lambda s: s["time"]["median_s"])
    # The winner against cuBLAS once more, interleaved sample by sample (kernelab.bench.compare):
    # clock drift hits both alike, and the ratio comes with a confidence interval.
    if ranked and r.elapsed() < args.budget_s + 10:
        from kernelab.bench import compare

        best = ranked[0]
        kernel, geo = best["_kernel"]
        c = torch.empty(SHAPE[0], SHAPE[1], device=DEVICE)
        cmp = compare(r.launcher(kernel, geo, SHAPE, c), r.cublas(), names=(best["name"], "cublas"),
                      target_rel=0.01, max_wall_s=3.0, warmup=r.warmup)
        out["paired"] = {"setting": best["name"], "verdict": cmp.verdict, "time_ratio": cmp.ratio,
                         "ci": list(cmp.ci), "x_cublas": 1.0 / cmp.ratio,
                         "x_cublas_ci": [1.0 / cmp.ci[1], 1.0 / cmp.ci[0]], "text": str(cmp)}
        print(f"[{r.elapsed():5.1f}s] paired: {cmp}", flush=True)

    # Smaller squares for the three fastest settings (the bench cases' other fp32 sizes).
    out["small"] = []
    for shape in SMALL_SHAPES:
        if r.elapsed() > args.budget_s + 10:
            break
        # each timing at its own shape's floor (the first H200 run held 2048^3 to 4096^3's floor)
        row = {"shape": shape, "cublas": r.time(r.cublas(shape), f"cublas-{shape[0]}", shape)}
        for s in ranked[:3]:
            kernel, geo = s["_kernel"]
            c = torch.empty(shape[0], shape[1], device=DEVICE)
            row[s["name"]] = r.time(r.launcher(kernel, geo, shape, c), f"{s['name']}-{shape[0]}", shape)
        out["small"].append(row)
    for row in out["small"]:
        for key, val in row.items():
            if isinstance(val, dict):
                val.pop("measurement", None)  # keep the small-shape rows short; the 4096^3 ones keep theirs
    out["wall_s"] = r.elapsed()


def ratios(out: dict) -> None:
    """ratio_cublas against the mean of the cuBLAS medians; ratio_v5 against v5 in this run."""
    if not out.get("cublas"):
        return
    base = sum(t["median_s"] for t in out["cublas"]) / len(out["cublas"])
    v5 = next((s["time"]["median_s"] for s in out["settings"] if s["name"] == "v5" and "time" in s), None)
    for s in out["settings"]:
        if "time" in s:
            s["ratio_cublas"] = base / s["time"]["median_s"]
            s["ratio_v5"] = v5 / s["time"]["median_s"] if v5 else None
            mhz = s["time"]["mhz"]
            s["tflops_per_ghz"] = s["time"]["tflops"] / (mhz / 1000) if mhz else None
    out["cublas_mean_median_s"] = base


def table(out: dict) -> str:
    kernels = out.get("cublas_kernels")
    lines = [f"cuBLAS kernel: {kernels}"] if kernels else []
    lines += [f"gemm fp32 {'x'.join(map(str, out['shape']))} on {out.get('device', {}).get('name', '?')}: cuBLAS "
             + ", ".join(f"{t['when']} {t['median_s'] * 1e6:.0f} us ({t['tflops']:.1f} TFLOP/s, "
                         f"{t['mhz'] or 0:.0f} MHz)" for t in out["cublas"]),
             f"{'setting':22s} {'us':>8s} {'TFLOP/s':>7s} {'x cuBLAS':>8s} {'x v5':>6s} {'MHz':>5s} "
             f"{'TF/GHz':>6s} {'regs':>4s} {'blk/SM':>6s}  tile x BK, thread tile, warps, loader+stages, lanes"]
    timed = sorted((s for s in out["settings"] if "time" in s), key=lambda s: -s.get("ratio_cublas", 0))
    for s in timed:
        t = s["time"]
        lines.append(f"{s['name']:22s} {t['median_s'] * 1e6:8.1f} {t['tflops']:7.1f} {s.get('ratio_cublas', 0):8.3f} "
                     f"{(s.get('ratio_v5') or 0):6.3f} {(t['mhz'] or 0):5.0f} {(s.get('tflops_per_ghz') or 0):6.1f} "
                     f"{s['registers'] or 0:4d} {s.get('blocks_per_sm', 0):6d}  {tag(s.get('params'))}")
    for s in out["settings"]:
        if "time" not in s:
            why = s.get("skipped") or s.get("error") or (s.get("check") or {}).get("reason", "?")
            lines.append(f"{s['name']:22s} not timed: {why[:150]}")
    if out.get("paired"):
        pr = out["paired"]
        lines.append(f"paired, interleaved: {pr['setting']} = {pr['x_cublas']:.3f}x cuBLAS "
                     f"(95% CI {pr['x_cublas_ci'][0]:.3f}-{pr['x_cublas_ci'][1]:.3f}; {pr['verdict']})")
    for row in out.get("small", []):
        cb = row["cublas"]["median_s"]
        parts = [f"{k} {cb / v['median_s']:.3f}x" for k, v in row.items() if isinstance(v, dict) and k != "cublas"]
        lines.append(f"{row['shape'][0]}^3: cuBLAS {cb * 1e6:.0f} us; " + ", ".join(parts))
    lines.append(f"wall {out.get('wall_s', 0):.0f} s")
    if out.get("fatal"):
        lines.append("FATAL: " + out["fatal"].strip().splitlines()[-1])
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "sweep_gemm_fp32.json"))
    ap.add_argument("--only", default="", help="comma-separated setting names (default: all, in order)")
    ap.add_argument("--budget-s", type=float, default=55.0,
                    help="start no new setting after this many seconds from start-up; the paired comparison "
                         "and the small shapes get 10 s more (worst case ~75 s in all on an H200)")
    ap.add_argument("--max-wall-s", type=float, default=1.5, help="cap on one timing's sampling (bench max_wall_s)")
    ap.add_argument("--list", action="store_true", help="print the settings and their geometry; no GPU needed")
    ap.add_argument("--dry-run", action="store_true",
                    help="compile every setting here (NVRTC, no GPU) and print registers, spills, blocks/SM and "
                         "the hot loop's instruction mix; exit 1 if any spills")
    ap.add_argument("--arch", default="sm_90", help="--dry-run's target (default sm_90, the H200)")
    args = ap.parse_args(argv)
    if args.dry_run:
        return dry_run(args.arch, list(filter(None, args.only.split(","))) or None)
    if args.list:
        for name, defines, why in CONFIGS:
            g = geometry(params(defines))
            print(f"{name:22s} block {g['block']:3d} tile {g['tile'][0]}x{g['tile'][1]} smem {g['smem']:6d}  "
                  f"{defines}\n    {why}")
        return 0
    unknown = set(filter(None, args.only.split(","))) - {c[0] for c in CONFIGS}
    if unknown:
        ap.error(f"unknown setting(s) {sorted(unknown)}; --list shows them")
    out: dict = {"shape": SHAPE, "cublas": [], "settings": []}
    rc = 0
    try:
        run(args, out)
    except Exception:  # keep what was measured; the traceback goes into the JSON and the table
        import traceback

        out["fatal"] = traceback.format_exc()
        print(out["fatal"], file=sys.stderr)
        ratios(out)
        rc = 1
    for s in out["settings"]:
        s.pop("_kernel", None)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1, default=str)
    print(table(out))
    print(f"JSON: {args.out}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
