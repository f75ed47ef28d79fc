"""Issue 7 sweep: the memory-bound ops' new variants and their knobs against the existing best
variant and torch eager / torch.compile, at the bench shapes, in one process on one GPU.

For each (op, case): the peers (torch eager, torch.compile), the op's current best variant, and
each new variant at a few knob settings (header values overridden through a copy of the Variant,
extra #ifndef macros passed as defines). Every kernelab candidate is checked against the op's
float64 reference before it is timed (kernelab.check.check_callable on a smaller case that takes
the same kernel instance, one seed, normal inputs), and the outputs its timed launches left at
the bench shape are verified again (all of them for sum, 256 spread rows for the 2-D ops).
Timing is kernelab.bench.bench (cold L2 at the bench shapes; graph replay for the launch-bound
small shapes: sum 2^18, gelu_bias 256 x 1024, transpose 256 x 512, in bf16 and fp32).

Usage (GPU machine, < 120 s on an H200, < 12 GiB of GPU memory):
    PYTHONPATH=src python3 scripts/sweep_membound.py --out $OUT/sweep_membound.json
    ... --ops rmsnorm,sum          only these ops        ... --quick   defaults of new variants only
    (ops: rmsnorm, layernorm, sum, gelu_bias, transpose, softmax)
Without a GPU, --dry-run compiles every candidate for --arch (default sm_90) and prints the
plan, registers and spills of the kernel instance each one would launch.
Results: JSON at --out (rows with the Measurement, check, resources, knobs); a table last.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from kernelab.ops import Case, discover  # noqa: E402  (no torch, no CUDA at import)
from kernelab.ops.build import launch_variant  # noqa: E402

OPS_ORDER = ("rmsnorm", "layernorm", "sum", "gelu_bias", "transpose", "softmax")
NORM_N = 8192


@dataclasses.dataclass
class Candidate:
    """One thing to time on one case: a peer, the op's current best variant, or a new variant with knobs."""

    label: str
    kind: str  # "peer" | "existing" | "new"
    variant: str | None = None
    meta: dict = dataclasses.field(default_factory=dict)  # header values overridden (plan/geometry)
    defines: dict = dataclasses.field(default_factory=dict)  # extra #ifndef macros
    quick: bool = True  # part of --quick
    check: bool = True  # False only for ablations (wrong output by design): timed, never checked or picked


@dataclasses.dataclass
class Sweep:
    op: str
    case: Case
    mode: str  # "cold" | "graph"
    check_case: Case | None  # where the candidates are checked before timing (same kernel instance)
    candidates: list


def _only_block(elems: int) -> int:
    """The fast_rows block instance that holds N = 8192 at `elems` per thread (rmsnorm op.py's plan)."""
    for t in (64, 128, 256, 512, 1024):
        if NORM_N <= t * elems:
            return t
    raise ValueError(elems)


def l2_two_pass_candidates(op_name: str) -> list:
    """rmsnorm v4_l2_two_pass / layernorm v5_l2_two_pass: torch.compile's looped two-pass row (pass 1
    reads x with an L2 evict-last policy, pass 2 re-reads it from L1/L2 with evict-first), at the
    header's default (512 threads per row, UNROLL 4, the Triton hints; 32 registers on sm_90, 0
    spills) and six knob settings. The geometry rows override `@block` / `@rows_per_block` (the op
    passes them to the kernel as BLOCK / ROWS_PER_BLOCK); the rest are norm_l2.cuh's macros."""
    new = "v4_l2_two_pass" if op_name == "rmsnorm" else "v5_l2_two_pass"

    def c(label, quick=False, meta=None, **macros):
        # a `block` override reaches rmsnorm v4's per-dtype blocks too (variant_for)
        return Candidate(f"{new} {label}", "new", new, meta=dict(meta or {}), defines=macros, quick=quick)

    return [
        c("default", quick=True),
        # Threads per row: 256 doubles the rows in flight (L2 holds 8 x 132 rows: 17 MB bf16, 34 MB
        # fp32), 1024 halves them and the loads in flight per thread (bf16: one vector each).
        c("block=256", meta={"block": "256"}),
        c("block=1024", meta={"block": "1024"}),
        # Two rows of 512 threads per block: the default's row, half the blocks, one shared barrier.
        c("block=1024 rows_per_block=2", meta={"block": "1024", "rows_per_block": "2"}),
        # 37-40 registers, 1536 threads per SM: at 32 ptxas gives later pass-1 vectors the registers
        # of earlier ones (layernorm fp32, 4 vectors per thread: 2 in flight, then 2; rmsnorm fp32
        # issues all 4 at 32); at 40 all 4 leave together.
        c("SM_THREADS=1536 (40 regs)", SM_THREADS=1536),
        # No hints at all (rmsnorm v2's ld.global.nc in both passes): what the evict policies buy.
        c("X1_HINT=0 X2_HINT=0 (no hints)", X1_HINT=0, X2_HINT=0),
        # Streaming stores of y (st.global.cs).
        c("Y_STORE=1 (st.global.cs)", Y_STORE=1),
    ]


def layernorm_candidates(dtype: str) -> list:
    """layernorm: v1 (the best so far) and v4_pinned_onebar at its default and four knob settings.
    v2 (Chan merge) and v3 (persistent rows) were timed in the 2026-11-30 sweeps (0.65x / 0.66x
    torch.compile in bf16) and are not repeated. Every v4 row runs the instance that holds
    N = 8192 at the header's elements per thread (bf16: 256 threads x 32, fp32: 512 x 16;
    64 registers, 0 spills on sm_90, NVRTC 13.0)."""
    new = "v4_pinned_onebar"
    elems = 32 if dtype == "bfloat16" else 16  # the header's @elems_bf16 / @elems_f32

    def v4(label, quick=False, **macros):
        return Candidate(f"{new} {label}", "new", new, defines={"ONLY_BLOCK_T": _only_block(elems), **macros},
                         quick=quick)

    return [
        Candidate("v1_vec_regs", "existing", "v1_vec_regs"),
        v4("default", quick=True),
        # v1's two block sums (two barriers) instead of the one-barrier merge of per-warp moments.
        v4("LN_ONE_BARRIER=0 (two barriers)", LN_ONE_BARRIER=0),
        # (all K vectors of both parameters in one batch, PARAMS_AHEAD 4, spills 12 bytes since the
        # weight comes with x; measured in session 4 at 257.4 / 509.3 us before that.)
        # the default since session 4 is the weight loaded with x (PARAMS_EARLY 1, fp32 -1.3%):
        # both late, after the per-warp sums, was the first default.
        v4("PARAMS_EARLY=0 (weight and bias late)", PARAMS_EARLY=0),
        # v1's evict-first hint on x put back: how much of v4's gain is the hint (rmsnorm v2: ~5%).
        v4("X_LOAD=2 (v1's .cs hint)", X_LOAD=2),
    ] + l2_two_pass_candidates("layernorm")


def norm_candidates(op_name: str, dtype: str) -> list:
    """The op's best so far (rmsnorm v2, layernorm v1; v2's knob rows were timed in the
    2026-11-30 sweep and are not repeated) and v3_persist_prefetch at a few knob settings;
    layernorm: layernorm_candidates (v4)."""
    if op_name == "layernorm":
        return layernorm_candidates(dtype)
    new = "v3_persist_prefetch"
    key = "elems_bf16" if dtype == "bfloat16" else "elems_f32"
    default_e = 16 if dtype == "bfloat16" else 8

    def v3(label, elems=default_e, quick=False, meta=None, **macros):
        d = {"ONLY_BLOCK_T": _only_block(elems), **macros}
        return Candidate(f"{new} {label}", "new", new, meta={key: str(elems), **(meta or {})}, defines=d, quick=quick)

    existing = "v2_nc_prefetch" if op_name == "rmsnorm" else "v1_vec_regs"
    sm_key = "SM_THREADS_BF16" if dtype == "bfloat16" else "SM_THREADS_F32"
    return [
        Candidate(existing, "existing", existing),
        v3("default", quick=True),
        v3("PREFETCH=0 (persistent only)", PREFETCH=0),
        v3("waves=2 (2x resident grid)", meta={"waves": "2"}),
        # Twice the elements per thread (half the threads per row), prefetch kept at K = 4:
        # x + next x + params need ~80 registers, so 512 threads per SM.
        v3(f"E={2 * default_e} PF_MAX_K=4 512 thr/SM", elems=2 * default_e, PF_MAX_K=4, **{sm_key: 512}),
    ] + l2_two_pass_candidates(op_name)


def sweeps(selected) -> list:
    out = []
    for op_name in ("rmsnorm", "layernorm"):
        if op_name not in selected:
            continue
        for dt in ("bfloat16", "float32"):
            # Checked on 1000 rows: more than the persistent grid's 264 (bf16) / 132 (fp32) groups,
            # so v3's row loop (prefetch, params kept across rows) runs before it is timed.
            out.append(Sweep(op_name, Case((32768, NORM_N), dt), "cold", Case((1000, NORM_N), dt),
                             [Candidate("torch", "peer"), Candidate("torch.compile", "peer")] +
                             norm_candidates(op_name, dt)))
    if "sum" in selected:
        # 2^28: v3 at the same chunk per block (BLOCK x U x 16 B = 32 KiB, so the same partials and
        # the same second pass) with fewer bytes in flight per SM: U=8 at 256 threads holds 6
        # blocks x 32 KiB = 192 KiB (40 registers), U=4 at 512 128 KiB, U=2 at 1024 64 KiB (Little
        # asks ~33 KiB); and the L1::no_allocate load (124.2 vs 124.5 us bf16 in the first sweep).
        def v3_knobs(quick: bool) -> list:
            v3 = "v3_oneshot"
            return [Candidate(v3, "existing", v3),
                    Candidate(f"{v3} U=8 X_LOAD=3", "new", v3, defines={"X_LOAD": 3}, quick=quick),
                    Candidate(f"{v3} U=4 block=512", "new", v3, meta={"vectors_per_thread": "4", "block": "512"},
                              quick=quick),
                    Candidate(f"{v3} U=2 block=1024", "new", v3, meta={"vectors_per_thread": "2", "block": "1024"},
                              quick=quick)]
        for dt in ("float32", "bfloat16"):
            out.append(Sweep("sum", Case((1 << 28,), dt), "cold", Case(((1 << 22) + 3,), dt), [
                Candidate("torch", "peer"), Candidate("torch.compile", "peer")] + v3_knobs(dt == "bfloat16")))
        # The same in graph mode: the full run (nvidia-h200-20261130T090909) timed torch.compile's
        # bf16 2^28 row in graph mode (its host enqueue read >= its GPU time, so the suite switched)
        # and v3 cold: a replayed graph hides the gap before each kernel (v3 runs two, so does the
        # compiled split reduction). Same mode for everyone here.
        out.append(Sweep("sum", Case((1 << 28,), "bfloat16"), "graph", Case(((1 << 22) + 3,), "bfloat16"), [
            Candidate("torch", "peer"), Candidate("torch.compile", "peer")] + v3_knobs(False)))
        # The graph-mode small shape (1.1x target): one launch instead of two, and its geometry.
        for dt in ("bfloat16", "float32"):
            small = Case((1 << 18,), dt)
            new = "v4_ticket"
            out.append(Sweep("sum", small, "graph", small, [
                Candidate("torch", "peer"), Candidate("torch.compile", "peer"),
                Candidate("v1_warp_shuffle", "existing", "v1_warp_shuffle"),
                Candidate("v3_oneshot", "existing", "v3_oneshot"),
                Candidate(f"{new} U=2 (default)", "new", new),
                Candidate(f"{new} U=1", "new", new, meta={"vectors_per_thread": "1"}, quick=False),
                Candidate(f"{new} U=4", "new", new, meta={"vectors_per_thread": "4"}, quick=False),
                Candidate(f"{new} U=1 block=512", "new", new, meta={"vectors_per_thread": "1", "block": "512"},
                          quick=False),
            ] + ([Candidate(f"{new} U=2 FENCE=1 (threadfence)", "new", new, defines={"FENCE": 1}, quick=False)]
                 if dt == "bfloat16" else [])))
    if "gelu_bias" in selected:
        def v5_candidates(dtype: str, small: bool = False) -> list:
            """gelu_bias v5_short_fit (bf16: degree-5 fit, persistent grid, R = 4 rows per thread;
            fp32: v4's one-shot R = 4 with the 9-term fit) at its defaults and a few knob settings
            (all without spills on sm_90, NVRTC 13.0). Bench shapes: bytes in flight per SM at the
            same math; the graph-mode 256 x 1024: block size (one row per thread whatever R is)."""
            v5 = "v5_short_fit"
            default = Candidate(f"{v5} (default)", "new", v5)
            if small:
                return [default,
                        Candidate(f"{v5} block=256", "new", v5, meta={"block": "256"}, quick=False),
                        Candidate(f"{v5} block=64", "new", v5, meta={"block": "64"}, quick=False)]
            if dtype == "float32":  # the don't-regress check against v4 (502.5 us), and the persistent grid
                return [default,
                        Candidate(f"{v5} grid=persistent", "new", v5, meta={"grid": "persistent"}, quick=False)]
            return [
                default,
                # v3's 2048 threads per SM (32 registers), each with the next row's load in flight
                # during this row's math (issued 45 instructions into the 151 of the loop, in the
                # SASS): 32-64 KiB per SM.
                Candidate(f"{v5} R=1 PREFETCH=1 MIN_BLOCKS=16", "new", v5, meta={"rows_per_thread": "1"},
                          defines={"PREFETCH": 1, "MIN_BLOCKS": 16}, quick=False),
                Candidate(f"{v5} R=8 (128 KiB per SM per burst)", "new", v5, meta={"rows_per_thread": "8"},
                          quick=False),
                # the one-shot grid is the default since session 4 (254.6 us vs 274.4 persistent)
                Candidate(f"{v5} grid=persistent (v3's grid)", "new", v5, meta={"grid": "persistent"}, quick=False),
                # v3's geometry (2048 threads, one row at a time, 32 registers) with v5's math: the
                # math's share of the gain.
                Candidate(f"{v5} R=1 MIN_BLOCKS=16", "new", v5, meta={"rows_per_thread": "1"},
                          defines={"MIN_BLOCKS": 16}, quick=False),
            ]

        new = "v4_oneshot_rows"
        out.append(Sweep("gelu_bias", Case((32768, 8192), "bfloat16"), "cold", Case((1024, 8192), "bfloat16"), [
            Candidate("torch", "peer"), Candidate("torch.compile", "peer"),
            Candidate("v3_early_load", "existing", "v3_early_load"),
            # 128-thread blocks won 9% at 256 x 1024 (below); is it free here? (16 blocks per SM)
            Candidate("v3_early_load block=128", "new", "v3_early_load", meta={"block": "128"}),
            Candidate(f"{new} R=4 (default)", "new", new)] + v5_candidates("bfloat16")))
        out.append(Sweep("gelu_bias", Case((32768, 8192), "float32"), "cold", Case((1024, 8192), "float32"), [
            Candidate("torch", "peer"), Candidate("torch.compile", "peer"),
            Candidate("v3_early_load", "existing", "v3_early_load"),
            Candidate("v3_early_load block=128", "new", "v3_early_load", meta={"block": "128"}),
            Candidate(f"{new} R=4 (default)", "new", new),
            Candidate(f"{new} R=2", "new", new, meta={"rows_per_thread": "2"}, quick=False),
            Candidate(f"{new} R=1 MIN_BLOCKS=8", "new", new, meta={"rows_per_thread": "1"}, defines={"MIN_BLOCKS": 8},
                      quick=False)] + v5_candidates("float32")))
        for dt in ("bfloat16", "float32"):
            small = Case((256, 1024), dt)
            out.append(Sweep("gelu_bias", small, "graph", small, [
                Candidate("torch", "peer"), Candidate("torch.compile", "peer"),
                Candidate("v3_early_load", "existing", "v3_early_load"),
                Candidate("v3_early_load block=128", "new", "v3_early_load", meta={"block": "128"}),
                Candidate(f"{new} R=1", "new", new, meta={"rows_per_thread": "1"}),
                Candidate(f"{new} R=1 block=128", "new", new, meta={"rows_per_thread": "1", "block": "128"},
                          defines={"MIN_BLOCKS": 8}, quick=False),
                Candidate(f"{new} R=4 (default)", "new", new, quick=False)] + v5_candidates(dt, small=True)))
    if "transpose" in selected:
        new = "v4_grouped_order"

        def v4(label, quick=False, meta=None, **macros):
            return Candidate(f"{new} {label}", "new", new, meta=meta or {}, defines=macros, quick=quick)

        # Bench sizes: the tile order (GROUP row tiles per group; 1 = v3's order, 2^20 = column-major,
        # both should match v3 if the DRAM row locality of the writes is what v3 lacks), the tile's
        # bytes per row in bf16 (128 x 128: 256 B per row segment each side, as fp32 64 x 64), hints.
        # Checked on 2117 x 449: a last group of 2 row tiles, edge tiles on both sides.
        for dt in ("float32", "bfloat16"):
            for n in (16384, 4096):
                big = n == 16384
                cands = [Candidate("torch", "peer"), Candidate("torch.compile", "peer"),
                         Candidate("v3_vec_swizzle", "existing", "v3_vec_swizzle"),
                         v4("(default: column-major)", quick=True)]
                if big:
                    # GROUP 8-64 (grouped orders) measured 545-553 us fp32 in session 4, slower than
                    # column-major (524.9) and v3's order (545.9); not repeated.
                    cands += [v4("GROUP=1 (v3's order)", quick=True, GROUP=1)]
                    if dt == "bfloat16":
                        cands += [v4("bf16 64x64 tiles (v3's; the first default)", quick=True,
                                     meta={"tile_rows_bf16": "64", "tile_cols_bf16": "64"})]
                out.append(Sweep("transpose", Case((n, n), dt), "cold", Case((2117, 449), dt), cands))
        # The graph-mode small shape (256 x 512, L2-resident): v2 (the best so far) and its best
        # geometry from the last sweep (block=512), against v4 with small tiles and 16-byte accesses:
        # fp32 32 x 32 at 256 threads = 128 blocks, one 16-byte load + one store per thread; bf16
        # 32 x 32 at 128 threads = 128 blocks, one each; 32 x 64 / 64 x 32 at 256 = 64 blocks.
        for dt in ("bfloat16", "float32"):
            small = Case((256, 512), dt)
            t32 = {"tile_rows": "32", "tile_cols": "32", "tile_rows_bf16": "32", "tile_cols_bf16": "32"}
            cands = [Candidate("torch", "peer"), Candidate("torch.compile", "peer"),
                     Candidate("v2_smem_padded", "existing", "v2_smem_padded"),
                     Candidate("v2_smem_padded block=512", "new", "v2_smem_padded", meta={"block": "512"})]
            if dt == "float32":
                cands += [v4("32x32 block=256", quick=True, meta=t32),
                          v4("32x32 block=128", meta={**t32, "block": "128"}),
                          v4("32x64 block=256", meta={"tile_rows": "32", "tile_cols": "64", "tile_rows_bf16": "32", "tile_cols_bf16": "64"}),
                          v4("64x32 block=256", meta={"tile_rows": "64", "tile_cols": "32", "tile_rows_bf16": "64", "tile_cols_bf16": "32"})]
            else:
                cands += [v4("32x32 block=128", quick=True, meta={**t32, "block": "128"}),
                          v4("32x64 block=256", meta={"tile_rows": "32", "tile_cols": "64", "tile_rows_bf16": "32", "tile_cols_bf16": "64"}),
                          v4("64x32 block=256", meta={"tile_rows": "64", "tile_cols": "32", "tile_rows_bf16": "64", "tile_cols_bf16": "32"}),
                          v4("16x32 block=64", meta={"tile_rows": "16", "tile_cols": "32", "tile_rows_bf16": "16", "tile_cols_bf16": "32", "block": "64"})]
            out.append(Sweep("transpose", small, "graph", small, cands))
    if "softmax" in selected:
        for shape in ((32768, 8192), (2048, 131072)):
            out.append(Sweep("softmax", Case(shape, "bfloat16"), "cold", None, [
                Candidate("torch", "peer"), Candidate("torch.compile", "peer"),
                Candidate("v4_dispatch", "existing", "v4_dispatch")]))
    return out


# ---- building kernelab candidates -----------------------------------------------------------------

def variant_for(op, cand: Candidate):
    v = op.variant(cand.variant)
    if cand.meta:
        meta = dict(cand.meta)
        if "block" in meta:  # a candidate's `block` sets every dtype's (headers with `@block_f32`, `@block_bf16`)
            meta = {**{f"block_{s}": meta["block"] for s in ("f32", "bf16") if f"block_{s}" in v.meta}, **meta}
        v = dataclasses.replace(v, meta={**v.meta, **meta})
    return v


def compile_args(op, cand: Candidate, arch):
    """(path, arch, defines) exactly as the parent compiles it (the cache key must match)."""
    from kernelab.ops.build import target_arch

    v = variant_for(op, cand)
    return str(v.path), target_arch(v, arch).sm, {**op.defines(v), **{k: v_ for k, v_ in cand.defines.items()}}


def _compile_job(args):
    path, arch, defines = args
    from kernelab.gpu import compile_file

    t0 = time.perf_counter()
    m = compile_file(path, arch=arch, defines=defines)
    return time.perf_counter() - t0, m.cache_hit


def precompile(jobs: list, workers: int) -> float:
    """Fill kernelab's on-disk cubin cache in parallel (spawned processes: NVRTC runs ~0.1-2 s
    per module, one core each); the sweep's own compiles are then cache hits. Returns wall s."""
    import concurrent.futures as cf
    import multiprocessing as mp

    uniq = list({(p, a, tuple(sorted(d.items()))): (p, a, d) for p, a, d in jobs}.values())
    t0 = time.perf_counter()
    try:
        with cf.ProcessPoolExecutor(max_workers=min(workers, len(uniq)), mp_context=mp.get_context("spawn")) as ex:
            list(ex.map(_compile_job, uniq))
    except Exception as e:  # the serial path below compiles whatever is missing
        print(f"parallel precompile failed ({e!r}); each module compiles when the sweep reaches it", flush=True)
    return time.perf_counter() - t0


def instance_name(op, v, case) -> list:
    """Kernel names a launch of `v` on `case` runs (for registers and spills in the results)."""
    if op.name in ("rmsnorm", "layernorm"):
        return [op.static_kernel(v, case)[0]]  # the plan's instance, `@vec_kernel`'s build or the contract kernel
    if op.name == "sum":
        finish = v.meta.get("finish", "sum_finish").split()[0]
        return [op.kernel_name(case.dtype)] + ([] if finish in ("recursive", "ticket") else [finish])
    if op.name == "softmax":
        return []
    return [op.kernel_name(case.dtype)]


def resources_of(compiled, names) -> dict:
    out = {}
    for n in names:
        r = compiled.resources.get(n)
        if r is not None:
            out[n] = {"registers": r.registers, "spill_stores": r.spill_stores, "spill_loads": r.spill_loads,
                      "stack_frame": r.stack_frame, "shared_static": r.shared_static}
    return out


# ---- checks -------------------------------------------------------------------------------------

def verify_timed_outputs(op, case, inputs, outputs, rows: int = 256):
    """The outputs the timed launches left: every element for sum, `rows` spread rows for 2-D ops
    (a float64 reference of a whole 32768 x 8192 output would take ~8 GiB)."""
    import torch

    from kernelab.check import compare_outputs, tolerance, verify_outputs

    if len(case.shape) == 1:
        r = verify_outputs(op, case, inputs, outputs)
        return r.ok, r.detail
    m = case.shape[0]
    idx = torch.linspace(0, m - 1, min(rows, m), device=outputs[next(iter(outputs))].device).long().unique()
    sub_inputs = {k: (t.index_select(0, idx).contiguous() if t.dim() == 2 else t) for k, t in inputs.items()}
    sub_case = Case((len(idx),) + tuple(case.shape[1:]), case.dtype, params=case.params)
    ref = op.reference(sub_case, sub_inputs)
    nan_ok = "special" in tuple(getattr(op, "distributions", ()))
    for name, got in outputs.items():
        rtol, atol = tolerance(op, got.dtype)
        # transpose: input row i is output column i, so the sampled rows are columns of the output
        picked = got.index_select(1, idx) if op.name == "transpose" else got.index_select(0, idx)
        cmp = compare_outputs(picked, ref[name], rtol, atol, nan_ok=nan_ok, name=name)
        if not cmp.ok:
            return False, cmp.summary()
    return True, f"{len(idx)} rows of {m} within tolerance"


# ---- the run --------------------------------------------------------------------------------------

def measure_copy_ceiling(results: dict, max_wall: float) -> None:
    """The copy ceiling of this run into `results` (`copy_ceiling_bps`, or `copy_ceiling_error`
    when it could not be measured): torch copy_ of 1 GiB fp32 (reads 1 GiB, writes 1 GiB)."""
    import torch

    from kernelab.bench import bench

    try:
        a = torch.empty(1 << 28, dtype=torch.float32, device="cuda").normal_()
        b = torch.empty_like(a)
        m = bench(lambda: b.copy_(a), mode="cold", target_rel=0.01, max_wall_s=max_wall, name="copy")
        results["copy_ceiling_bps"] = 2 * a.numel() * 4 / m.median_s
        print(f"copy ceiling: {results['copy_ceiling_bps'] / 1e12:.3f} TB/s ({m.median_s * 1e6:.1f} us)", flush=True)
        del a, b
    except Exception as e:
        results["copy_ceiling_error"] = repr(e)


def run(args) -> int:
    import torch

    from kernelab.bench import bench
    from kernelab.check import check_callable
    from kernelab.gpu import KernelFault, Module, compile_file, default_arch, device_info, last_launched_kernel
    from kernelab.gpu.errors import is_sticky_message
    from kernelab.ops import load_variant, run_variant

    t_start = time.perf_counter()
    ops = discover()
    plan = sweeps(args.ops)
    arch = default_arch()
    for sw in plan:
        sw.candidates = [c for c in sw.candidates if c.quick or not args.quick]

    jobs = []
    for sw in plan:
        op = ops[sw.op]
        for c in sw.candidates:
            if c.kind != "peer":
                jobs.append(compile_args(op, c, arch))
    pre_s = precompile(jobs, args.workers) if args.workers > 1 else 0.0
    print(f"precompiled {len(jobs)} modules in {pre_s:.1f} s ({args.workers} workers)", flush=True)

    info = device_info()
    results = {"schema": "kernelab.sweep_membound/1", "device": info.name, "arch": arch.sm,
               "torch": torch.__version__, "quick": args.quick, "max_wall_s": args.max_wall,
               "precompile_s": pre_s, "rows": []}

    measure_copy_ceiling(results, args.max_wall)

    for sw in plan:
        op = ops[sw.op]
        case = sw.case
        work = op.work(case)
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        inputs = op.make_inputs(case, 0, "cuda")
        peers = op.peers(case)
        case_rows = []
        print(f"\n== {op.name} {case.label} ({sw.mode})", flush=True)
        for c in sw.candidates:
            row = {"op": op.name, "case": case.to_dict(), "candidate": c.label, "kind": c.kind, "mode": sw.mode,
                   "variant": c.variant, "meta": c.meta, "defines": c.defines,
                   "status": "ok" if c.check else "ablation (unchecked)"}
            t0 = time.perf_counter()
            try:
                if c.kind == "peer":
                    peer = peers[c.label.removesuffix(" again")]  # "torch again": a second timing, for pairing
                    peer(inputs)  # torch.compile compiles here, outside the timing
                    torch.cuda.synchronize()

                    def fn(peer=peer):
                        peer(inputs)
                    outputs = None
                else:
                    v = variant_for(op, c)
                    why = op.supports(v, case)
                    if why:
                        raise RuntimeError(f"unsupported: {why}")
                    if c.kind == "existing" and not c.meta and not c.defines:
                        module = load_variant(op, v)

                        def runner_for(cs, v=v):
                            return lambda i, o: run_variant(op, v, cs, i, o)
                    else:
                        path, tarch, defines = compile_args(op, c, arch)
                        compiled = compile_file(path, arch=tarch, defines=defines)
                        module = Module(compiled, defines)
                        row["compile_cache_hit"] = compiled.cache_hit

                        def runner_for(cs, v=v, module=module):
                            k = module.kernel(op.kernel_name(cs.dtype))
                            return lambda i, o: launch_variant(op, k, v, cs, i, o)
                    names = instance_name(op, v, case)
                    row["kernels"] = names
                    row["resources"] = resources_of(module.compiled, names)
                    if (c.kind == "new" or args.check_existing) and c.check:
                        chk_case = sw.check_case or case
                        r = check_callable(runner_for(chk_case), op, chk_case, seeds=(0,), dists=("normal",),
                                           name=c.label)
                        row["check"] = {"ok": r.ok, "reason": r.reason, "case": chk_case.label,
                                        "detail": r.detail[:500], "max_abs": r.max_abs, "max_rel": r.max_rel}
                        if not r.ok:
                            row["status"] = f"failed check: {r.reason}"
                            raise _Skip(r.detail[:300])
                    outputs = op.make_outputs(case, inputs)
                    launch = runner_for(case)

                    def fn(launch=launch, outputs=outputs):
                        launch(inputs, outputs)
                m = bench(fn, mode=sw.mode, target_rel=0.01, max_wall_s=args.max_wall, name=f"{op.name}/{c.label}")
                torch.cuda.synchronize()
                if c.kind != "peer":  # the kernel the timed launches ran (session 28's t128_28 timed a `_full`
                    row["launched"] = last_launched_kernel()  # instance its record did not name)
                    if not row.get("resources") and row["launched"]:
                        row["resources"] = resources_of(module.compiled, [row["launched"]])
                row["median_s"] = m.median_s
                row["gbps"] = work.bytes / m.median_s / 1e9
                row["measurement"] = m.to_dict()
                if outputs is not None and c.check:
                    ok, detail = verify_timed_outputs(op, case, inputs, outputs)
                    row["verify_after_timing"] = {"ok": ok, "detail": detail[:500]}
                    if not ok:
                        row["status"] = "failed: timed outputs wrong"
            except _Skip as e:
                row["detail"] = str(e)
            except Exception as e:  # one candidate's failure must not lose the others
                row["status"] = f"error: {type(e).__name__}"
                row["detail"] = "".join(traceback.format_exception_only(type(e), e))[-800:]
                if isinstance(e, KernelFault) or is_sticky_message(str(e)):
                    row["detail"] += " (CUDA context lost: the remaining rows are skipped)"
                    case_rows.append(row)
                    results["rows"].extend(case_rows)
                    _finish(results, args, t_start)
                    return 1
            fn = launch = outputs = None  # release this candidate's output before the next one allocates
            row["wall_s"] = time.perf_counter() - t0
            case_rows.append(row)
            us = f"{row['median_s'] * 1e6:9.1f} us" if "median_s" in row else row["status"]
            print(f"  {c.label:44s} {us}  ({row['wall_s']:.1f} s)", flush=True)
        peer_times = [r["median_s"] for r in case_rows if r["kind"] == "peer" and "median_s" in r]
        best_peer = min(peer_times) if peer_times else None
        for r in case_rows:
            r["x_best_peer"] = best_peer / r["median_s"] if best_peer and "median_s" in r else None
            r["peak_mem_gib"] = torch.cuda.max_memory_allocated() / 2**30
        results["rows"].extend(case_rows)
        del inputs, peers
    return _finish(results, args, t_start)


class _Skip(Exception):
    pass


def _finish(results, args, t_start) -> int:
    results["wall_s"] = time.perf_counter() - t_start
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1, default=str))
    print_table(results)
    print(f"\nwrote {out} ({results['wall_s']:.0f} s wall)")
    return 0


def print_table(results) -> None:
    ceiling = results.get("copy_ceiling_bps")
    print(f"\n{'op':10s} {'shape':22s} {'candidate':44s} {'us':>9s} {'GB/s':>7s} {'%copy':>6s} {'x peer':>7s}  notes")
    last = None
    rows = results["rows"]
    for i, r in enumerate(rows):
        key = (r["op"], r["case"]["label"])
        if key != last and last is not None:
            _best_line(rows, last)
        last = key
        us = f"{r['median_s'] * 1e6:9.1f}" if "median_s" in r else " " * 9
        gbps = f"{r['gbps']:7.0f}" if "gbps" in r else " " * 7
        pct = f"{100 * r['gbps'] * 1e9 / ceiling:5.0f}%" if ceiling and "gbps" in r else " " * 6
        x = f"{r['x_best_peer']:6.2f}x" if r.get("x_best_peer") else " " * 7
        notes = [] if r["status"] == "ok" else [r["status"]]
        for k, res in (r.get("resources") or {}).items():
            spill = f" SPILL {res['spill_stores']}" if res["spill_stores"] else ""
            notes.append(f"{k} {res['registers']}r{spill}")
        if r["mode"] == "graph":
            notes.append("graph")
        print(f"{r['op']:10s} {r['case']['label']:22s} {r['candidate']:44s} {us} {gbps} {pct} {x}  {'; '.join(notes)}")
    if last is not None:
        _best_line(rows, last)


def _best_line(rows, key) -> None:
    """The fastest kernelab candidate of one (op, case) that passed its checks, against the best peer."""
    mine = [r for r in rows if (r["op"], r["case"]["label"]) == key and r["kind"] != "peer" and r["status"] == "ok"
            and "median_s" in r]
    if mine:
        b = min(mine, key=lambda r: r["median_s"])
        x = f"{b['x_best_peer']:.2f}x the best peer" if b.get("x_best_peer") else "no peer time"
        print(f"{'':10s} {'':22s} -> fastest kernelab: {b['candidate']} ({b['median_s'] * 1e6:.1f} us, {x})")
    print()


class _FakeKernel:
    """Stands in for a loaded kernel in --dry-run: checks the launch against the C signature
    kernelab parses from the source (what Module.kernel would accept) and records it."""

    def __init__(self, module, name):
        if name not in module.signatures:
            raise KeyError(f"{name} is not a launchable kernel of {module.path.name} (parsed signatures: "
                           f"{sorted(module.signatures)})")
        self.module, self.name, self.params = module, name, module.signatures[name]

    def __call__(self, *args, grid, block, **kw):
        if len(args) != len(self.params):
            raise TypeError(f"{self.name} takes {len(self.params)} arguments, got {len(args)}")
        self.module.calls.append((self.name, grid, block))

    def max_active_blocks_per_sm(self, block, dynamic_smem=0):
        return 2048 // block


class _FakeModule:
    def __init__(self, path, defines, arch):
        from types import SimpleNamespace

        from kernelab.gpu import parse_signatures

        self.path = Path(path)
        self.signatures = parse_signatures(self.path.read_text(), defines, [self.path.parent])
        self.compiled = SimpleNamespace(arch=arch)  # softmax's plan asks which arch the module is for
        self.calls = []

    def kernel(self, name):
        return _FakeKernel(self, name)


def dry_run(args) -> int:
    """No GPU: compile every kernelab candidate for --arch, replay its launches at the bench and
    check shapes against the parsed signatures (CPU tensors, a fake kernel), print the instances."""
    from kernelab.gpu import compile_file, tensormap

    # Persistent cluster launches (softmax v5/v7/v8) ask the driver how many clusters fit; with no
    # driver here, an H200's 132 SMs with one block each stand in (the grid only, not the kernel).
    tensormap.max_active_clusters = lambda kernel, block, cluster, shared_mem=0: 132 // (
        cluster[0] if isinstance(cluster, tuple) else cluster)
    ops = discover()
    total, bad = 0.0, 0
    for sw in sweeps(args.ops):
        op = ops[sw.op]
        for c in sw.candidates:
            if c.kind == "peer" or (args.quick and not c.quick):
                continue
            v = variant_for(op, c)
            path, tarch, defines = compile_args(op, c, args.arch)
            t0 = time.perf_counter()
            m = compile_file(path, arch=tarch, defines=defines)
            total += time.perf_counter() - t0
            names = instance_name(op, v, sw.case)
            problems = [f"not compiled: {n}" for n in names if n not in m.resources]
            for case in {sw.case, sw.check_case or sw.case}:
                fake = _FakeModule(path, defines, tarch)
                small = Case((min(case.shape[0], 4),) + tuple(case.shape[1:]), case.dtype) if len(case.shape) == 2 \
                    else Case((min(case.shape[0], (1 << 22) + 3),), case.dtype)
                try:
                    inputs = op.make_inputs(small, 0, "cpu")
                    outputs = op.make_outputs(small, inputs)
                    # Every ops module that sizes grids by the GPU (layernorm's launch is rmsnorm's), and
                    # the variant's own launcher (vN_name.py: not in sys.modules, so by its globals).
                    spaces = [vars(md) for name, md in list(sys.modules.items())
                              if name.startswith("kernelab.ops") and hasattr(md, "resident_blocks")]
                    if v.launcher is not None and "resident_blocks" in v.launcher.__globals__:
                        spaces.append(v.launcher.__globals__)
                    saved = [ns["resident_blocks"] for ns in spaces]
                    for ns in spaces:
                        ns["resident_blocks"] = lambda kernel, block: 132 * kernel.max_active_blocks_per_sm(block)
                    try:
                        launch_variant(op, fake.kernel(op.kernel_name(small.dtype)), v, small, inputs, outputs)
                    finally:
                        for ns, fn in zip(spaces, saved):
                            ns["resident_blocks"] = fn
                    launched = [n for n, _, _ in fake.calls]
                    problems += [f"launches {n}, not compiled" for n in launched if n not in m.resources]
                except Exception as e:
                    problems.append(f"launch replay on {small.label}: {type(e).__name__}: {e}")
            res = resources_of(m, names)
            desc = ", ".join(f"{k} {r['registers']}r spill {r['spill_stores']}/{r['spill_loads']}" for k, r in res.items())
            print(f"{op.name:10s} {sw.case.label:22s} {c.label:44s} {desc}")
            if any(r["spill_stores"] or r["spill_loads"] for r in res.values()):
                problems.append("spills")
            for p in problems:
                bad += 1
                print(f"  ^ {p}")
    print(f"compile time {total:.1f} s; {bad} problem(s)")
    return 1 if bad else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "sweep_membound.json"))
    ap.add_argument("--ops", default=",".join(OPS_ORDER), help=f"comma-separated subset of {', '.join(OPS_ORDER)}")
    ap.add_argument("--quick", action="store_true", help="peers, the existing best and each new variant's default only")
    ap.add_argument("--max-wall", type=float, default=1.0, help="bench max_wall_s per candidate")
    ap.add_argument("--workers", type=int, default=min(16, os.cpu_count() or 1), help="parallel NVRTC compiles")
    ap.add_argument("--check-existing", action="store_true", help="also check the existing best variants")
    ap.add_argument("--dry-run", action="store_true", help="no GPU: compile the candidates for --arch, print them")
    ap.add_argument("--arch", default="sm_90", help="--dry-run's target")
    args = ap.parse_args(argv)
    args.ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    unknown = [o for o in args.ops if o not in OPS_ORDER]
    if unknown:
        ap.error(f"unknown op(s) {unknown}; choose from {', '.join(OPS_ORDER)}")
    return dry_run(args) if args.dry_run else run(args)


if __name__ == "__main__":
    sys.exit(main())
