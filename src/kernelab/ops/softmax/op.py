"""softmax over the last dimension of x [M, N]: y_i = exp(x_i - max x) / sum_j exp(x_j - max x).

fp32 and bf16 in and out, fp32 math. Rows from 1 to 262144 wide (and wider, through the
online variant). Variants keep the row in one warp (v0), one block (v1), or a cluster of
blocks (v3) on chip, or stream it twice (v2); v5 does v0/v1/v3's work with a persistent grid
that loads the next row while it reduces the current one; v6 is v0/v1 with plain read-only
loads, bf16 rows kept packed (twice the rows an SM) and small warp-row blocks; v7 (sm_90+, rows
of 2049..262144) is v5's persistent clusters with the next rows staged in shared memory by bulk
async copies; v8 (sm_90+, same widths) runs one persistent block an SM, a ring of bulk-copied
chunks refilled by a producer warp plus the rest of the row read twice through L2; v9 (sm_90+,
same widths) is v7's ring with a row's C blocks an ordinary group of a cooperative grid (any C of
1..16, chosen to fill every SM) exchanging (max, sum) through global memory; v10 (sm_90+, same
widths) is v7's ring read once into registers, where the exps are kept (one shared-memory sweep,
one exp an element, the stage refilled before the exchange); v11 (sm_90+, same widths) is v10's
rows in v9's cooperative groups (any C, every SM); v12 (sm_90+, same widths) is v10 with each
cluster's next row taken from a global counter at run time; v13 (sm_90+, same widths) holds a
block's share as raw 16-byte vectors in the registers of 1024 threads (clusters of 2 fill every SM
at 131072 bf16), the exps computed twice; v4 picks among them
by N, dtype and GPU (the table DISPATCH_SM90 below, with the measurements behind it).

Work: read x once, write y once: 2 * M * N * element size bytes. About 5 fp32 operations per
element (max, subtract, scale, sum, multiply) plus one exp2 on the special-function unit;
the FLOPs are negligible (intensity ~1.25 FLOP/B in bf16), so the floor is bandwidth.

Special values follow torch.softmax (the op declares the "special" distribution): -inf
entries give 0 (a masked softmax, case param mask=True), a row that is -inf everywhere gives
NaN (0 / 0), a row holding NaN or +inf is NaN everywhere.
"""

from __future__ import annotations

import dataclasses
import functools
import weakref

from kernelab.check.inputs import DTYPES
from kernelab.ops.base import Case, OpSpec, StreamCounters, Work

from . import rows
from .rows import Plan

TEST_WIDTHS = (1, 2, 31, 32, 33, 1000, 1024, 1025, 4097, 8192, 16384, 32769, 65537, 131072, 262144)


def _rows_for(n: int) -> int:
    """Small M, but more than one row (and not a multiple of the 8 rows of a warp-kernel block)."""
    return 7 if n <= 1025 else 3 if n <= 32769 else 2


class Softmax(OpSpec):
    name = "softmax"
    dtypes = ("float32", "bfloat16")
    kernel_entry = "softmax"
    best_variant = "v4_dispatch"
    # fp32: exp2 of (x - m) * log2(e) carries |x - m| * 2^-24 relative error (~2e-6 at |x - m| = 20)
    # plus ~1e-6 from the sum and the scale. bf16: the output rounding, 2^-8 relative.
    tolerances = {"float32": (2e-5, 1e-7), "bfloat16": (1e-2, 1e-6)}
    # "special" (NaN, +-inf, -0.0, denormals sprinkled in): NaN results are defined, as in
    # torch.softmax: a row with NaN or +inf is NaN everywhere, -inf entries give 0.
    distributions = ("normal", "uniform", "large", "special")

    # ---- shapes -------------------------------------------------------------------------
    def test_cases(self) -> list[Case]:
        cases = []
        for dt in self.dtypes:
            cases += [Case((_rows_for(n), n), dt) for n in TEST_WIDTHS]
            cases += [
                Case((1, 1024), dt),  # one row: 7 idle warps in the warp kernel's block
                Case((257, 1000), dt),  # many rows, a partial last block of 8 rows
                # Misaligned row starts: x is a view `offset` elements into its allocation.
                # Co-aligned (y has the same offset): 16-byte accesses after a scalar head.
                Case((5, 1000), dt, offset=1),
                Case((3, 4097), dt, offset=3),
                Case((3, 40000), dt, offset=1),
                Case((2, 131072), dt, offset=3),
                # Mixed: y is aligned and x is not, so stores must fall back to scalars.
                Case((3, 1024), dt, offset=1, layout="mixed_alignment"),
                Case((3, 8192), dt, offset=3, layout="mixed_alignment"),
                Case((2, 100000), dt, offset=1, layout="mixed_alignment"),
                # Masked: -inf entries, and row 1 -inf everywhere (NaN, as in torch).
                Case((7, 1000), dt, params=(("mask", True),)),
                Case((4, 5000), dt, params=(("mask", True),)),
                Case((3, 70000), dt, params=(("mask", True),)),
            ]
        return cases

    def bench_cases(self) -> list[Case]:
        bf16 = [Case(s, "bfloat16") for s in ((32768, 8192), (262144, 1024), (8192, 32768), (2048, 131072))]
        return bf16 + [Case((32768, 8192), "float32"), Case((2048, 131072), "float32")]

    # ---- data ---------------------------------------------------------------------------
    def make_inputs(self, case, seed, device="cuda", dist="normal"):
        import torch

        m, n = case.shape
        x = self.tensor((m, n), case.dtype, seed, device, dist, offset=case.offset)
        if case.param("mask", False):
            g = torch.Generator(device=device)
            g.manual_seed(int(seed) + 7919)
            masked = torch.rand((m, n), generator=g, device=device) < 0.25
            x.masked_fill_(masked, float("-inf"))
            if m > 1:
                x[1].fill_(float("-inf"))
        return {"x": x}

    def make_outputs(self, case, inputs):
        import torch

        m, n = case.shape
        off = 0 if case.layout == "mixed_alignment" else case.offset
        buf = torch.empty(m * n + off, dtype=inputs["x"].dtype, device=inputs["x"].device)
        return {"y": buf[off:].view(m, n)}

    def reference(self, case, inputs):
        import torch

        return {"y": torch.softmax(inputs["x"].double(), dim=-1)}

    def work(self, case) -> Work:
        m, n = case.shape
        itemsize = 4 if case.dtype == "float32" else 2
        return Work(bytes=2 * m * n * itemsize, flops=5 * m * n, flop_unit="fp32")

    def peers(self, case):
        import torch

        def eager(inputs):
            return {"y": torch.softmax(inputs["x"], dim=-1)}

        return {"torch": eager, "torch.compile": torch.compile(eager, dynamic=False)}

    # ---- kernels ------------------------------------------------------------------------
    def plan(self, variant, n: int, cc: tuple[int, int] = (9, 0), dtype: str = "bfloat16") -> Plan | None:
        """The kernel instance and geometry `variant` uses for rows of width n of `dtype` on a GPU
        of compute capability cc (None: the variant cannot hold such rows)."""
        strategy = variant.meta.get("strategy", "rows")
        if strategy not in STRATEGIES:
            raise ValueError(f"{variant.path.name}: unknown `@strategy {strategy}`; use one of {', '.join(STRATEGIES)}")
        if dtype not in self.dtypes:
            raise ValueError(f"softmax has no {dtype!r} kernels; use one of {', '.join(self.dtypes)}")
        if strategy == "packed":
            return packed_plan(n, *packed_knobs(variant), dtype=dtype)
        if strategy == "bulk":
            return bulk_plan(n, tuple(cc), dtype, *bulk_knobs(variant))
        if strategy == "dynamic":  # v12: v10's plan, its own instances
            return dynamic_plan(bulk_plan(n, tuple(cc), dtype, *bulk_knobs(variant)))
        if strategy == "overlap":  # v17
            return overlap_plan(n, tuple(cc), dtype, *bulk_knobs(variant))
        if strategy == "packed_regs":  # v13
            return packed_regs_plan(n, tuple(cc), dtype)
        if strategy == "any_cluster":  # v15
            return any_cluster_plan(n, tuple(cc), dtype)
        if strategy == "half_blocks":  # v16
            return half_blocks_plan(n, tuple(cc), dtype)
        if strategy == "split_grid":  # v14: the main grid's plan (the launch adds the side grid)
            return split_main_plan(n, tuple(cc), dtype)
        if strategy == "sm_rows":
            return sm_rows_plan(n, tuple(cc), dtype, *sm_rows_knobs(variant)[:5])
        if strategy == "grid_groups":  # without M and the SM count: the smallest group that fits (launch re-plans)
            return grid_groups_plan(n, None, tuple(cc), dtype, None, *grid_groups_knobs(variant))
        if strategy == "group_regs":  # the same for v11
            return group_regs_plan(n, None, tuple(cc), dtype, None, *group_regs_knobs(variant))
        threads = variant.meta.get("threads", "auto").split()[0]
        if threads != "auto" and int(threads) not in PERSISTENT_WIDE_THREADS:
            raise ValueError(f"{variant.path.name}: `@threads {threads}`: the persistent cluster instances have "
                             f"{' or '.join(map(str, PERSISTENT_WIDE_THREADS))} threads (or `auto`)")
        elems = variant.meta_int("elems", 0)
        if elems not in (0, 32, 64):
            raise ValueError(f"{variant.path.name}: `@elems {elems}`: the persistent instances hold 32 or 64 "
                             f"elements per thread")
        only = variant.meta.get("dispatch_only", "").split()[:1]
        if strategy == "dispatch" and only:  # a sweep's v4 with one table entry for every width
            if only[0] not in DISPATCH_ENTRIES:
                raise ValueError(f"{variant.path.name}: `@dispatch_only {only[0]}`: one of "
                                 f"{', '.join(DISPATCH_ENTRIES)} (v6 and v14 are timed as themselves)")
            return _by_strategy(only[0], n, tuple(cc), 0, DISPATCH_PERSISTENT_ELEMS[dtype], dtype) or ONLINE
        return _plan(strategy, variant.meta_int("block", 256), variant.meta_int("rows_per_block", 1), n, tuple(cc),
                     dtype, 0 if threads == "auto" else int(threads), elems)

    def defines(self, variant):
        """v6_packed_rows', v7_bulk_smem's and v8_sm_rows' header knobs, as the macros their kernels
        are built with (one source of truth: the plan reads the same header values)."""
        if variant.meta.get("strategy") == "grid_groups":
            return {"GG_THREADS": grid_groups_knobs(variant)[1]}  # the ring's depth is the launch's
        if variant.meta.get("strategy") in ("bulk", "dynamic", "overlap"):
            stages, threads, per_sm, _, elems = bulk_knobs(variant)
            return bulk_defines(stages, threads, per_sm, 1, elems)
        if variant.meta.get("strategy") == "group_regs":
            stages, threads, per_sm, elems, _ = group_regs_knobs(variant)
            return bulk_defines(stages, threads, per_sm, 1, elems)
        if variant.meta.get("strategy") == "sm_rows":
            chunk_kib, chunks, threads, _, _, store = sm_rows_knobs(variant)
            return {"SR_CHUNK_KIB": chunk_kib, "SR_CHUNKS": chunks, "SR_THREADS": threads, "SR_STORE": store}
        if variant.meta.get("strategy") == "dispatch":  # v4: v12's instances built so, and its optional lists
            t128 = {"V4_T128_STAGES": DISPATCH_BULK_T128[0], "V4_T128_ELEMS": DISPATCH_BULK_T128[4]}
            return {**bulk_defines(*DISPATCH_BULK), **t128, **dispatch_lists(variant)}
        if variant.meta.get("strategy") == "split_grid":  # v14: v12's instances, built so
            return bulk_defines(*DISPATCH_BULK)
        if variant.meta.get("strategy") != "packed":
            return {}
        w, lanes, e = packed_knobs(variant)
        return {"PK_WARPS_PER_BLOCK": w, "PK_LANES_PER_ROW": lanes, "PK_BLOCK_ELEMS": e}

    def supports(self, variant, case):
        reason = super().supports(variant, case)
        if reason:
            return reason
        n = case.shape[-1]
        # Arch-independent question: can any GPU this variant builds for hold the row?
        if self.plan(variant, n, (9, 0), case.dtype) is None:
            return (f"{variant.name} ({variant.meta.get('strategy')}) holds rows of at most "
                    f"{_limit(variant, case.dtype)} elements; N = {n}")
        return None

    def launch(self, kernel, variant, case, inputs, outputs):
        m, n = case.shape
        if m == 0 or n == 0:
            return
        if n >= 2**31 or m >= 2**31:
            raise ValueError(f"softmax: M = {m} and N = {n} must each be < 2^31 (the kernels index rows with int)")
        if variant.meta.get("strategy") in ("grid_groups", "group_regs"):
            return grid_groups_launch(kernel, variant, case, inputs["x"], outputs["y"])
        p = self.plan(variant, n, rows.arch_cc(kernel), case.dtype)
        if p is None:
            raise ValueError(f"{variant.id} cannot run rows of {n} elements (at most {_limit(variant, case.dtype)}); "
                             f"use {self.best_variant}, which handles any width")
        full = dynamic_full(p, n, inputs["x"], outputs["y"], kernel.module, case.dtype)
        if not full and getattr(p, "misaligned", None) is not None:
            p = p.misaligned  # v4's t128 plan is for its `_full` instance only (sweep t128_29: general +9%)
        if isinstance(p, BulkPlan) and p.side:  # v14's grids (v14 itself, or v4_dispatch's "split" entries)
            return split_grid_launch(kernel, variant, case, inputs["x"], outputs["y"])
        name = p.name
        if full or packed_full(p, n, inputs["x"], outputs["y"]):
            name += "_full"  # rows of exactly the instance's width, 16-byte aligned (v6; v4's t128 fp32 rows)
        k = kernel if name is None else kernel.module.kernel(f"{name}_{DTYPES[case.dtype]}")
        grid = persistent_grid(k, p, m) if p.persistent else p.grid(m)
        ring = {"shared_mem": p.smem} if isinstance(p, BulkPlan) else {}  # v7: its stages are dynamic shared memory
        extra = (dynamic_work(inputs["x"].device),) if isinstance(p, BulkPlan) and p.work else ()
        k(inputs["x"], outputs["y"], m, n, *extra, grid=grid, block=p.block, cluster=p.cluster, **ring)


ONLINE = Plan("softmax_online_t512", 512)
STRATEGIES = ("warp", "block", "online", "cluster", "persistent", "dispatch", "rows", "packed", "bulk", "sm_rows",
              "grid_groups", "group_regs", "dynamic", "dynamic_e32", "dynamic_t128", "packed_regs", "split_grid",
              "split", "wide", "any_cluster", "half_blocks", "overlap")

# ---- v4_dispatch: which strategy serves which widths ---------------------------------------------
# (widest N, strategy) in order; the first entry whose N >= the row width wins. Strategies: "warp"
# (v0), "block" (v1), "online" (v2), "cluster" (v3, sm_90+), "persistent" (v5: warps, blocks, and
# clusters on sm_90+), "packed" (v6), "dynamic" (v12 with DISPATCH_BULK's knobs, sm_90+), "dynamic_e32"
# (v12 with DISPATCH_BULK_E32's), "dynamic_t128" (v12 with DISPATCH_BULK_T128's), "any_cluster" (v15: v13's
# kernel in clusters of 1-8, sm_90+), "split" (v14: v12's and v13's grids, sm_90+), "wide" (one of v12's,
# v14's, v15's and v16's plans by the share and ring sizes:
# wide_plan, sm_90+). Change an entry when a sweep (scripts/sweep_softmax.py, sweep_membound_s14.py)
# says so; the instances every strategy can pick are compiled into v4_dispatch.cu, which includes each
# strategy's list from the *_instances.cuh its own variant includes (persistent_instances.cuh,
# split_grid_instances.cuh: without the instances only v5's and v14's knobs take).
# Evidence, H200, cold L2, us (2026-11-30, full suite run; copy rate 4.27 TB/s):
#   bf16 262144 x 1024:  v0 266.6 (torch.compile 252.6)
#   bf16 32768 x 8192:   v1 271.9 (torch.compile 609.7)
#   bf16 8192 x 32768:   v2 266.2, v1 303.0, v3 362.0 -> online, not cluster (v4 picked v3: wrong)
#   bf16 2048 x 131072:  v3 370.1 (torch.compile 543.4)
#   fp32 32768 x 8192:   v2 515.1, v1 542.1 -> online from 8192 (4097..8191 by proximity: unmeasured)
#   fp32 2048 x 131072:  v3 652.1 (torch.compile 782.8)
# v2's second read of a row comes from L2 at these widths (a 64 KiB row is re-read while ~264 rows,
# 17 MiB, are in flight), so it costs ~no DRAM bytes and no barrier idles the SM as in v1/v3.
# The softmax sweep (docs/runs/2026-11-30-h200-sweep_softmax.json, one process, copy 505 us):
#   bf16 2048 x 131072:  v5 (64 elements/thread, clusters of 8 x 256) 294.9, v5 (32) 325.7, v3 373.2
#   bf16 4096 x 65536:   v5 (64) 301.5, v2 303.7, v3 372.4
#   fp32 2048 x 131072:  v5 (32, clusters of 8 x 512) 570.6, v5 (64) 578.7, v3 651.8
#   v5 lost where rows fit a block or a warp (32768 x 8192: 298.0 vs v1 273.4; 262144 x 1024: 279.3
#   vs v0 268.0), so it takes only the widths past 32768.
# Session 4 (docs/runs/2026-11-30-h200-sweep_softmax_v6.json, same process): v6_packed_rows (bf16
#   kept as raw 16-byte vectors, __ldg, exp recomputed at the store) 262144 x 1024 250.8 us (v0
#   266.1, torch.compile 250.6), 32768 x 8192 258.8 (v1 271.7, torch.compile 608.9): v6 takes bf16
#   rows of up to 1024 and of 4097-8192 (the widths measured); 1025-4096 stay v1's.
# Session 6 (docs/runs/2026-11-30-h200-sweep_membound_s6_wide.json, one process): 8192 x 32768 bf16
#   v6's 32-element 1024-thread instance 257.7 us (0.97x a copy), v2 (v4's pick until then) 262.8,
#   v7 272.6, v8 324.1: v6 takes bf16 4097-32768 (8193-16384, its 16-element 1024-thread
#   instance, by proximity: unmeasured).
# Session 8 (docs/runs/2026-11-30-h200-sweep_membound_s8_dynamic.json, one process): v12_dynamic_rows
#   (v10 with rows taken from a counter) bf16 2048 x 131072 276.4 us (v10 283.6 / 284.6, v4's then
#   pick), 4096 x 65536 268.8 (v5, v4's then pick, 298.3; v10 284.1); fp32 2048 x 131072 549.6 vs v10
#   547.0 / 548.7 (the same): v12 takes bf16 32769-262144 (32769-65535 by proximity: unmeasured) and
#   fp32 65537-262144, so v4 holds one set of bulk instances.
# Session 12 (docs/runs/2026-12-01-h200-sweep_membound_s12_v13{a,b}.json, one process each, copy 502 us):
#   v13_packed_regs (1024-thread blocks holding raw vectors; clusters of 2 on all 132 SMs) fp32
#   4096 x 65536 535.3 / 535.2 us vs v4's then pick v5 574.7 / 573.3 (-6.8%): v13 takes fp32
#   32769-65536 (32769-65535 by proximity: unmeasured). It lost elsewhere: bf16 2048 x 131072 289.6
#   vs v12 277.0, bf16 4096 x 65536 277.7 vs 268.4, fp32 2048 x 131072 543.0 vs 526.2.
# Session 13 (docs/runs/2026-12-01-h200-sweep_membound_s13_split.json, one process): v14_split_grid
#   (v12's clusters plus v13's on the SMs they leave, one row counter) bf16 2048 x 131072 268.0 / 267.7
#   us vs v12 275.7 / 275.4, 1024 x 262144 286.6 / 287.7 vs 303.6 / 303.8: v14 ("split") takes bf16
#   65537-262144 (the widths between by proximity: unmeasured). No gain at bf16 4096 x 65536 (269.5
#   / 268.8 vs 268.3 / 267.6) nor fp32 2048 x 131072 (526.4 / 526.7 vs 527.8 / 526.6): those stay.
# Session 14 (docs/runs/2026-12-01-h200-sweep_membound_s14_grid.json.gz, scripts/sweep_membound_s14.py
#   SWEEP_SET=grid, one process, 384 MiB each way, floor 188 us at the 4.28 TB/s copy rate): v4 with
#   one entry at every width (`@dispatch_only`), 12 widths 40960-262144 in each dtype. The proximity
#   picks lost up to 1.4x off the powers of two: bf16 4915 x 40960 v12 287.4 us vs v13 204.8,
#   2457 x 81920 v14 275.0 vs v13 223.7, 1228 x 163840 301.5 vs 243.2; fp32 384 x 262144 v12 244.4 vs
#   v13 212.8. v12's clusters win only where (a) each block's share of a row is a full 32 KiB stage
#   (bf16 shares of 20-28 KiB: v13 1-30% faster; fp32 shares are 32-57 KiB at every width past
#   32768: v12 1-3% faster than v13) and (b) two of its blocks share an SM (fp32 131072 and 262144
#   put one 128 KiB ring an SM, so a cluster of 8 or 16 needs that many SMs of one GPC: 211.7 vs
#   e32's 200.0, 244.4 vs v13's 212.8; clusters of 4 place: fp32 65536 201.2 vs v13 205.3). The
#   "wide" entry is that rule (wide_plan).
# Session 15 (docs/runs/2026-12-01-h200-sweep_membound_s15_anyc.json, SWEEP_SET=anyc, one process):
#   v15_any_cluster (v13's kernel in the fewest blocks that hold a row, non-power-of-two clusters
#   allowed) bf16 1325 x 151936 238.5 / 238.1 us vs v4 (v13 in clusters of 4) 253.2 / 253.6, 1228 x
#   163840 231.9 / 231.9 vs 244.0 / 243.4, 1024 x 196608 226.6 / 225.6 vs 232.3 / 231.9 (all clusters
#   of 3 where v13 took 4): "wide" takes v15's plan where it took v13's (the same kernel and C at the
#   other widths). fp32 98304-229376 (v15's C = 3, 5, 6, 7) lost to v4's v12 by 3-6%: unchanged.
#   The H200 holds only 39 of v15's clusters of 3 (117 SMs; scripts/v15_cluster_fit.py), so v16_half_blocks
#   runs v15 in 512-thread blocks, two an SM (docs/runs/2026-12-01-h200-sweep_membound_s15_half.json,
#   SWEEP_SET=half, one process): bf16 1325 x 151936 215.7 / 215.0 us vs v4 (v15) 235.8 / 235.8; 1228 x
#   163840 210.4 / 210.1 vs 230.9 / 230.3; 1024 x 196608 209.7 / 210.0 vs 223.9 / 223.7; 2048 x 98304
#   209.5 / 208.6 vs 216.5 / 215.9; v15 itself 1-7% behind v16 at every width measured (bf16 65536-
#   262144, fp32 65536-131072): "wide" takes v16's plan where it took v15's, v15's where v16 has
#   none (fp32 past 131072). v16 lost to v12 / v14's full stages (bf16 65536 207.1 vs 204.6, 131072
#   209.1 vs 204.1) and tied fp32's (201.1-202.1 vs 201.3-202.2), but won at bf16 768 x 262144 (210.4 /
#   211.7 vs v14 218.7 / 218.8): that width still takes v14 (one point; a follow-up).
#   Session 16 (docs/runs/2026-12-01-h200-sweep_membound_s16_w262k.json, SWEEP_SET=w262k, one process):
#   bf16 262144 v16 / v4 (v14) 144.1 / 151.0 us at 512 rows, 209.8 / 218.3 at 768, 276.2 / 287.6 at
#   1024, 408.5 / 423.8 at 1536 (3.5-4.6%, both runs of each); 768 x 262143 (v14's rounded-up full
#   stage) 218.6 / 236.0; 878 x 229376 (v16 already) 213.1 / 212.7. So bf16 rows past
#   DISPATCH_HALF_BLOCKS_MIN_BF16 take v16 whatever their stage.
DISPATCH_SM90 = {
    "bfloat16": ((1024, "packed"), (4096, "block"), (32768, "packed"), (rows.MAX_CLUSTER_N, "wide")),
    "float32": ((1024, "warp"), (4096, "block"), (12288, "online"), (rows.MAX_CLUSTER_N, "wide")),
}
# fp32 12289-32768 went to v2 ("online") by proximity to 8192 until session 14's mid set
# (docs/runs/2026-12-01-h200-sweep_membound_s14_mid.json, ~384 MiB each way): "wide" (v12's clusters
# of 1-2) 3072 x 32768 199.6 us vs v2 276.7 (v2's re-read of 264 rows of 128 KiB in flight, 33 MiB,
# misses L2), 4096 x 24576 200.2 vs 244.3, 6144 x 16384 197.4 vs 202.5; 8192 x 12288 199.3 vs 199.2
# (the same) and 12288 x 8192 198.7 vs 194.2 (v2 stays).
# "wide" (wide_plan): v12 (bf16 past 65536: v14, v12's grid plus v13's beside it) when its stage is
# at least DISPATCH_WIDE_MIN_STAGE bytes and its clusters place (C <= 4 or two rings an SM); else
# fp32 rows of up to 131072 take v12's clusters of 16 holding 32 values a thread ("dynamic_e32"; aligned rows
# of exactly 131072 the "dynamic_t128" `_full` instance since session 29: DISPATCH_T128_FULL), and the rest
# v15 (v13's kernel in the fewest blocks, 1-8, that hold a row).
# 30 KiB sits between the stages measured: 28 KiB (bf16 57344 / 114688 / 229376: v13 +4% / -1% / +5%
# against v12 or v14) and 32 KiB (65536 / 131072 / 262144: v12 / v14 0.2% / 8% / 2% faster).
DISPATCH_WIDE_MIN_STAGE = 30 * 1024
DISPATCH_HALF_BLOCKS_MIN_BF16 = 131072  # bf16 rows wider than this take v16 (session 16, above)
# Whether v4's "wide" entry runs full-stage bf16 rows of 65537-131072 as v14's two grids (True, sessions 13-26:
# 2048 x 131072 268.0 us against v12's 275.7) or as v12 alone (False). Session 27 (sweep split27,
# docs/runs/2026-12-02-h200-sweep_split27.json, three times alternating): once staged_rows.cuh's SB_FAST_EXP
# made v12's rows shorter, v12 266.0-266.5 us, v14 with its side grid off 265.7-266.4, v14 267.2-268.4, v4
# (v14) 267.6-268.3: the side grid's clusters now slow the main grid more than their rows add.
DISPATCH_WIDE_SPLIT = False
# v12_dynamic_rows's knobs for "dynamic" entries (v10's, which it keeps), (stages, threads,
# blocks_per_sm, min_cluster, elems): v4 compiles v12's instances with them (Softmax.defines).
# Session 7 (docs/runs/2026-11-30-h200-sweep_membound_s7_staged2.json, one process, 2048 x 131072,
# on v10): 256 threads x 64 values, 2 stages (clusters of 8, 2 blocks an SM) bf16 282.0 us, fp32
# 547.9; v5 294.2 / 568.0, v7 300.2 / 551.5. Session 8: 3 stages 278.6 / 551.6 vs 2's 276.4 / 549.6.
DISPATCH_BULK = (2, 256, 1, 1, 64)
# "dynamic_e32" entries: v12 in clusters of 16 (min_cluster) whose threads hold 32 values, built in
# v4 as the softmax_dy_e32_c16_* instances (the other knobs are DISPATCH_BULK's, compiled in).
# Session 8 (docs/runs/2026-11-30-h200-sweep_membound_s8_dynamic2.json, one process): fp32 2048 x
# 131072 527.4 us vs 546.9 at DISPATCH_BULK's (0.95x a copy vs 0.92); bf16 315.4 (so not for bf16).
# 32 x 256 values hold a 16th of a row of at most 131072: wider fp32 rows stay "dynamic".
DISPATCH_BULK_E32 = (2, 256, 1, 16, 32)
# "dynamic_t128" entries: v12 in clusters of 16 blocks of 128 threads, each thread holding 64 values, in rings of 3
# stages, built in v4 as the softmax_dy_t128_c16_* instances (stages and elems passed as V4_T128_STAGES /
# V4_T128_ELEMS; the threads and cluster are the instances' names). fp32 131072's 32 KiB shares then take 96 KiB
# rings, two blocks an SM with two stages in flight each (e32: three 64 KiB rings, one stage in flight each).
# Session 28 (docs/runs/2026-12-03-h200-sweep_t128_28.json, one process, v12 built with these knobs, which at that
# commit launched its `_full` kernels for rows of exactly C x block x elems, as 2048 x 131072's are): fp32 520.7 /
# 520.8 us against v4's e32 528.0 / 529.2 (-1.5%); 2 stages 526.5 / 527.4; bf16 (2 stages) 264.1 / 263.4 against
# v4's v12 265.1 / 264.4, 3 stages 265.3 / 265.1. The general kernels: DISPATCH_T128_FULL below.
DISPATCH_BULK_T128 = (3, 128, 1, 16, 64)
# Whether "wide" sends fp32 rows of exactly 16 x 128 x 64 = 131072 (x and y 16-byte aligned; misaligned rows keep
# e32: BulkPlan.misaligned) to "dynamic_t128"'s `_full` instance, softmax_dy_t128_c16_full_f32 (staged_rows.cuh's
# FULL: no row geometry, scalars or predicates). Session 29 (docs/runs/2026-12-03-h200-sweep_t128_29{,b}.json, one
# process each, v4 against `@dispatch_only dynamic_t128`, 1 GiB each way): the general t128 kernel is slower than
# e32 wherever its ring leaves two blocks an SM (fp32 114688 584.0 / 583.9 us against 538.7 / 533.9, 122880 575.6 /
# 576.2 against 523.7 / 523.8, 131072 574.5 / 574.3 against 526.4 / 526.8) and no faster at 65536-98304 (530.0-531.4
# against 518.5-519.5 at 65536, 523.1-523.7 against 525.8-526.5 at 98304); its `_full` instance at 2048 x 131072
# 520.5 / 520.3 / 520.7 against e32's 526.3 / 526.5 / 526.7 (-1.1%; session 28's t128_28, the same SASS, 520.7 /
# 520.8 against 528.0 / 529.2). With 4 warps a block and two blocks an SM, the row's ~260 fewer instructions a
# warp (1632 against 1896 SASS lines) count where e32's 16 warps an SM hid them (full28: e32's own `_full`, none).
DISPATCH_T128_FULL = True
# Elements per thread of the v5 instances that "persistent" entries take (32 or 64; v4 holds both).
DISPATCH_PERSISTENT_ELEMS = {"bfloat16": 64, "float32": 32}
# The side grid of v4's "split" entries (v14's `@side_grid`, whose default it also is).
DISPATCH_SPLIT_SIDE = "packed_regs"
# `@dispatch_only E` (sweeps: scripts/sweep_membound_s14.py) makes v4 take entry E at every width E can
# hold (v2's online rows where it cannot): the entries whose every instance v4 compiles. ("packed" and
# "split": v4 holds only the instances its table uses; time v6 and v14 themselves.)
DISPATCH_ENTRIES = ("warp", "block", "online", "cluster", "persistent", "dynamic", "dynamic_e32", "dynamic_t128",
                    "any_cluster", "half_blocks", "wide")


# Before sm_90 (no clusters): v1 holds up to 32768; wider rows stream through v2.
DISPATCH_OLDER = {
    "bfloat16": ((1024, "warp"), (rows.MAX_BLOCK_N, "block")),
    "float32": ((1024, "warp"), (rows.MAX_BLOCK_N, "block")),
}


def dispatch_lists(variant) -> dict[str, int]:
    """v4_dispatch's optional instance lists (V4_CLUSTER: v3's clusters, V4_PERSISTENT: v5's), each
    compiled only when an entry of DISPATCH_SM90 / DISPATCH_OLDER or the variant's `@dispatch_only`
    names its strategy (no other entry plans them): 48 of 152 kernels, a third of v4's compile time.
    V4_SPLIT: v14's six bf16 instances, only while the "wide" entry takes v14 (DISPATCH_WIDE_SPLIT) or an
    entry names "split"."""
    named = {s for table in (DISPATCH_SM90, DISPATCH_OLDER) for entries in table.values() for _, s in entries}
    named |= set(variant.meta.get("dispatch_only", "").split()[:1])
    return {"V4_CLUSTER": int("cluster" in named), "V4_PERSISTENT": int("persistent" in named),
            "V4_SPLIT": int(DISPATCH_WIDE_SPLIT or "split" in named)}


# ---- v5_persistent's instances -----------------------------------------------------------------
PERSISTENT_BLOCK_THREADS = (64, 128, 256, 512)  # C = 1: rows of 2048 .. 16384
PERSISTENT_WIDE_THREADS = (256, 512)  # clusters of C = 2, 4, 8, 16 blocks: 16384 .. 262144
PERSISTENT_CLUSTERS = (2, 4, 8, 16)
MAX_PERSISTENT_BLOCK_N = PERSISTENT_BLOCK_THREADS[-1] * rows.ELEMS_PER_THREAD
MAX_PERSISTENT_N = PERSISTENT_WIDE_THREADS[-1] * PERSISTENT_CLUSTERS[-1] * rows.ELEMS_PER_THREAD


def persistent_plan(n: int, cc: tuple[int, int], threads: int = 0, elems: int = 32) -> Plan | None:
    """v5's instance for rows of n: a warp (N <= 1024), a block (N <= 16384), else a cluster
    (sm_90+) of blocks of `threads` threads (0: the default order below). elems = 64: blocks and
    clusters whose threads hold 64 elements (256-thread blocks in clusters; `threads` is ignored)."""
    if elems == 64 and n > rows.MAX_WARP_N:
        for t in (64, 128, 256):
            if n <= t * 64:
                return Plan(f"softmax_pc_t{t}_e64_c1", t, capacity=t * 64, persistent=True)
        if cc < (9, 0):
            return None
        for c in PERSISTENT_CLUSTERS:
            if n <= 256 * 64 * c:
                return Plan(f"softmax_pc_t256_e64_c{c}", 256, 1, c, capacity=256 * 64 * c, persistent=True)
        return None
    if n <= rows.MAX_WARP_N:
        w = rows.warp_plan("softmax", n)
        return Plan(w.name.replace("softmax_warp", "softmax_pw"), w.block, w.rows_per_block, capacity=w.capacity,
                    persistent=True)
    if n <= MAX_PERSISTENT_BLOCK_N:
        for t in PERSISTENT_BLOCK_THREADS:
            if n <= t * rows.ELEMS_PER_THREAD:
                return Plan(f"softmax_pc_t{t}_c1", t, capacity=t * rows.ELEMS_PER_THREAD, persistent=True)
    if cc < (9, 0):
        return None
    # The instances v4_dispatch also holds (persistent_instances.cuh's first clusters), narrowest first:
    # 256-thread blocks (3 per SM, 768 threads) in clusters of 2, 4, 8; past 65536, 512-thread blocks in
    # clusters of 8, and 16 (non-portable) only for rows past 131072. `threads` (a sweep knob) takes the
    # fewest blocks of that size (v5's other clusters: PERSISTENT_ALL_CLUSTERS).
    if threads:
        order = [(threads, c) for c in PERSISTENT_CLUSTERS]
    else:
        order = [(256, 2), (256, 4), (256, 8), (512, 8), (512, 16)]
    for t, c in order:
        cap = t * c * rows.ELEMS_PER_THREAD
        if n <= cap:
            return Plan(f"softmax_pc_t{t}_c{c}", t, 1, c, capacity=cap, persistent=True)
    return None


# ---- v6_packed_rows' instances -------------------------------------------------------------------
# Warp rows up to 1024 (instances of 256, 512, 1024), then a block per row of 64..1024 threads
# holding `block_elems` elements each. Header knobs (defaults in PACKED_DEFAULTS), also passed to
# the compiler by Softmax.defines: `@warps_per_block` (threads of a warp-row block / 32),
# `@lanes_per_row` (32: a warp per row; 16: two rows per warp), `@block_elems` (16, 32, 64).
PACKED_WARP_CAPS = (256, 512, 1024)
PACKED_BLOCK_THREADS = (64, 128, 256, 512, 1024)
# block_elems 16 since session 5: 32768 x 8192 bf16 255.4 / 255.5 / 256.3 us vs 32's 259.3-260.3 in three
# sweeps (docs/runs/2026-11-30-h200-sweep_membound_s5.json, -s7.json): 512-thread rows, 2 EX2 per element
# spread over twice the threads.
PACKED_DEFAULTS = {"warps_per_block": 2, "lanes_per_row": 32, "block_elems": 16}


def packed_knobs(variant) -> tuple[int, int, int]:
    """(warps_per_block, lanes_per_row, block_elems) from a packed variant's header, checked."""
    w, lanes, e = (variant.meta_int(k, d) for k, d in PACKED_DEFAULTS.items())
    name = variant.path.name
    if not 1 <= w <= 32:
        raise ValueError(f"{name}: `@warps_per_block {w}`: a block holds 1 to 32 warps")
    if lanes not in (16, 32):
        raise ValueError(f"{name}: `@lanes_per_row {lanes}`: 32 (a warp per row) or 16 (two rows per warp)")
    if e not in (16, 32, 64):
        raise ValueError(f"{name}: `@block_elems {e}`: the block instances hold 16, 32 or 64 elements per thread")
    return w, lanes, e


def packed_block_elems(block_elems: int, dtype: str) -> int:
    """Elements a thread of v6's block instances holds: fp32 at most 32 (64 fp32 elements need
    ~80 registers, more than a 1024-thread block can have)."""
    return min(block_elems, 32) if dtype == "float32" else block_elems


def packed_plan(n: int, warps_per_block: int = PACKED_DEFAULTS["warps_per_block"],
                lanes_per_row: int = PACKED_DEFAULTS["lanes_per_row"], block_elems: int = PACKED_DEFAULTS["block_elems"],
                dtype: str = "bfloat16") -> Plan | None:
    """v6's instance for rows of n (None past packed_max_n). Launches take
    `<name>_full` instead when packed_full says so."""
    for cap in PACKED_WARP_CAPS:
        if n <= cap:
            return Plan(f"softmax_pk_warp_c{cap}", 32 * warps_per_block, warps_per_block * 32 // lanes_per_row,
                        capacity=cap)
    return next((p for p in packed_block_plans(block_elems, dtype) if n <= p.capacity), None)


@functools.lru_cache(maxsize=16)  # on the launch path: built once per (block_elems, dtype)
def packed_block_plans(block_elems: int, dtype: str) -> tuple[Plan, ...]:
    """v6's block-row instances, narrowest first: a block of t threads x e elements for each t,
    then, in bf16 below 32 elements a thread, the 32-element 1024-thread instance (rows of up to
    32768 whatever `@block_elems` is)."""
    e = packed_block_elems(block_elems, dtype)
    plans = [Plan(f"softmax_pk_block_t{t}", t, capacity=t * e) for t in PACKED_BLOCK_THREADS]
    if dtype == "bfloat16" and e < 32:
        plans.append(Plan("softmax_pk_block_t1024_e32", 1024, capacity=1024 * 32))
    return tuple(plans)


def packed_max_n(block_elems: int, dtype: str) -> int:
    """The widest row v6's instances hold at `block_elems`."""
    return packed_block_plans(block_elems, dtype)[-1].capacity


def packed_full(p: Plan, n: int, x, y) -> bool:
    """Whether a v6 launch may take the instance's `_full` kernel: N is exactly its width and x, y
    start 16-byte aligned, so every row does (N * element size is a multiple of 16) and each
    thread owns whole vectors only: no predicates, padding or scalars."""
    return (p.name is not None and p.name.startswith("softmax_pk_") and n == p.capacity
            and x.data_ptr() % 16 == 0 and y.data_ptr() % 16 == 0)


def dynamic_full(p: Plan, n: int, x, y, module, dtype: str) -> bool:
    """Whether a v12 launch may take its instance's `_full` kernel (staged_rows.cuh's FULL; only v4's
    softmax_dy_t128_c16_full_f32 has one): the row is exactly C x block x elems elements, so every thread holds
    whole vectors only, x and y start 16-byte aligned (then every row does: N x element size is a multiple of 16),
    and the module holds that kernel."""
    return (isinstance(p, BulkPlan) and p.work and p.elems > 0 and n == p.cluster * p.block * p.elems
            and x.data_ptr() % 16 == 0 and y.data_ptr() % 16 == 0
            and f"{p.name}_full_{DTYPES[dtype]}" in getattr(module, "signatures", ()))


def persistent_grid(kernel, p: Plan, m: int) -> int:
    """The grid of a persistent launch: what the GPU holds at once, capped by the work (rows for
    blocks and clusters, 8-row blocks for warps). With a cluster it counts clusters."""
    from kernelab.gpu import device_info, tensormap
    from kernelab.ops.base import resident_blocks

    if p.cluster:
        fit = tensormap.max_active_clusters(kernel, p.block, (p.cluster, 1, 1), getattr(p, "smem", 0))
        if not fit:  # the driver could not say: one cluster per C SMs (correct; maybe a second wave)
            fit = max(1, device_info().sm_count // p.cluster)
        return min(m, fit)
    return min(p.grid(m), resident_blocks(kernel, p.block))


# ---- v7_bulk_smem's instances -------------------------------------------------------------------
# A cluster of C blocks per row (C = 1 without an exchange), each block's chunk of the next rows
# staged in a ring of `@stages` stages of dynamic shared memory by bulk async copies. C is the
# smallest of BULK_CLUSTERS (at least `@min_cluster`) whose stages fit the block's share of the
# SM's shared memory. Header knobs (defaults in BULK_DEFAULTS; Softmax.defines passes the first
# three to the compiler as SB_STAGES, SB_THREADS, SB_BLOCKS_PER_SM).
BULK_CLUSTERS = (1, 2, 4, 8, 16)
BULK_THREADS = (128, 256, 512, 1024)
BULK_DEFAULTS = {"stages": 3, "threads": 512, "blocks_per_sm": 1, "min_cluster": 1}
BULK_ELEMS = (0, 16, 32, 64)  # v10's `@elems` (0: v7, whose shares are read from shared memory)
BULK_MIN_N = 2049  # narrower rows are v0/v1/v6's (a 4 KiB bf16 row is no work for a bulk copy)
BULK_MAX_N = 262144
# Shared memory an SM has for blocks and the most one block may opt in to (cudaDevAttr
# MaxSharedMemoryPerMultiprocessor / ...PerBlockOptin): sm_90 and sm_100 228 / 227 KiB, sm_120 100 / 99.
# Each resident block also takes 1 KiB the driver reserves, and v7 ~1 KiB of static shared memory
# (mbarriers, partial maxima and sums, cluster pairs).
BULK_SMEM = {9: (233472, 232448), 10: (233472, 232448)}
BULK_SMEM_OTHER = (102400, 101376)
BULK_BLOCK_RESERVED = 1024
BULK_STATIC_MAX = 1024


@dataclasses.dataclass(frozen=True)
class BulkPlan(Plan):
    """A v7 plan: also the dynamic shared memory (bytes) its launch asks for, whether the kernel
    takes v12's `work` counters (this stream's slot of dynamic_work) after M, N, and whether it is
    v14's main grid (the launch adds v14's side grid: split_grid_launch)."""

    smem: int = 0
    work: bool = False
    side: bool = False
    elems: int = 0  # fp32 values a thread holds (v10-v12's `@elems`; 0: v7): a `_full` row is C x block x elems
    # A plan taken for its `_full` instance only (v4's fp32 t128 rows): what to launch instead when the row
    # cannot take that instance (x or y not 16-byte aligned), where the general kernel would be slower.
    misaligned: Plan | None = None

    def __str__(self) -> str:
        return f"{self.name} (block {self.block}, cluster {self.cluster}, ring {self.smem} B)"


def check_ring_knobs(name: str, stages: int, threads: int, per_sm: int) -> None:
    """The header knobs v7 / v10 / v11 / v12 share (bulk_knobs.cuh's macros), or a ValueError naming
    the file and the allowed values."""
    if not 2 <= stages <= 8:
        raise ValueError(f"{name}: `@stages {stages}`: the ring holds 2 to 8 stages")
    if threads not in BULK_THREADS:
        raise ValueError(f"{name}: `@threads {threads}`: blocks of {', '.join(map(str, BULK_THREADS))} threads")
    if not 1 <= per_sm <= 4 or per_sm * threads > 2048:
        raise ValueError(f"{name}: `@blocks_per_sm {per_sm}`: 1 to 4 blocks an SM, at most 2048 threads")


def bulk_knobs(variant) -> tuple[int, int, int, int, int]:
    """(stages, threads, blocks_per_sm, min_cluster, elems) from a bulk variant's header, checked.
    elems: v10's fp32 values a thread holds (its share must fit threads x elems); 0 for v7 (no limit)."""
    stages, threads, per_sm, min_c = (variant.meta_int(k, d) for k, d in BULK_DEFAULTS.items())
    elems = variant.meta_int("elems", 0)
    name = variant.path.name
    if elems not in BULK_ELEMS:
        raise ValueError(f"{name}: `@elems {elems}`: a thread holds {', '.join(map(str, BULK_ELEMS[1:]))} values "
                         f"(or none: leave `@elems` out)")
    check_ring_knobs(name, stages, threads, per_sm)
    if min_c not in BULK_CLUSTERS:
        raise ValueError(f"{name}: `@min_cluster {min_c}`: one of {', '.join(map(str, BULK_CLUSTERS))}")
    return stages, threads, per_sm, min_c, elems


def bulk_defines(stages: int, threads: int, blocks_per_sm: int, min_cluster: int, elems: int) -> dict:
    """The macros v7 / v10 are built with (min_cluster is the plan's alone; SB_ELEMS only for v10)."""
    return {"SB_STAGES": stages, "SB_THREADS": threads, "SB_BLOCKS_PER_SM": blocks_per_sm,
            **({"SB_ELEMS": elems} if elems else {})}


def bulk_ring_budget(cc: tuple[int, int], blocks_per_sm: int) -> int:
    """Bytes of dynamic shared memory one block's ring may take with `blocks_per_sm` blocks an SM:
    its share of the SM (less the driver's reserve) or the per-block opt-in limit, less the static
    shared memory the kernels declare (v7-v12, bulk_plan / grid_groups_plan / group_regs_plan)."""
    per_sm, per_block = BULK_SMEM.get(cc[0], BULK_SMEM_OTHER)
    return min(per_block, per_sm // blocks_per_sm - BULK_BLOCK_RESERVED) - BULK_STATIC_MAX


def bulk_stage_bytes(n: int, cluster: int, dtype: str) -> int:
    """Bytes of one stage: the widest chunk a row of n gives a block, ceil(ceil(n / V) / C) 16-byte
    vectors (the kernel checks its dynamic shared memory against the same formula)."""
    v = 16 // (4 if dtype == "float32" else 2)
    return 16 * -(-n // (v * cluster))


def staged_pairs_bytes(cluster: int, threads: int) -> int:
    """Static shared memory v10 / v12's rows hold past BULK_STATIC_MAX: staged_rows.cuh's SB_WARP_XCHG (the default
    since session 27) keeps 2 x C x W pair slots where the block merge kept 2 x C, in blocks of at most 256 threads
    (W = threads / 32 warps; larger blocks keep the block merge). v7 shares bulk_plan and is held to it too
    (at most 1.8 KiB less ring, only in its 256-thread knob builds)."""
    return 2 * cluster * (threads // 32 - 1) * 8 if cluster > 1 and threads <= 256 else 0


def bulk_plan(n: int, cc: tuple[int, int], dtype: str = "bfloat16", stages: int = 3, threads: int = 512,
              blocks_per_sm: int = 1, min_cluster: int = 1, elems: int = 0) -> BulkPlan | None:
    """v7's (and v10's) instance for rows of n on a GPU of compute capability cc (None: before sm_90,
    rows outside BULK_MIN_N..BULK_MAX_N, or no cluster whose stages fit). elems > 0 (v10): the
    share must also fit the registers, threads x elems values."""
    if cc < (9, 0) or not BULK_MIN_N <= n <= BULK_MAX_N:
        return None
    budget = bulk_ring_budget(cc, blocks_per_sm)
    v = 16 // (4 if dtype == "float32" else 2)
    for c in BULK_CLUSTERS:
        stage = bulk_stage_bytes(n, c, dtype)
        fits = stages * stage <= budget - staged_pairs_bytes(c, threads)
        if c >= min_cluster and fits and (not elems or stage // 16 * v <= threads * elems):
            return BulkPlan(f"softmax_bk_c{c}", threads, 1, c, capacity=c * stage // 16 * v, persistent=True,
                            smem=stages * stage, elems=elems)
    return None


# ---- v12_dynamic_rows' work counters --------------------------------------------------------------
# Two int32 a (device, stream): rows taken and clusters finished (base.StreamCounters: zeroed once,
# left zero by every launch that completes, as the last cluster resets them).
dynamic_work = StreamCounters(width=2)


def overlap_pairs_bytes(cluster: int, threads: int, stages: int) -> int:
    """Static shared memory v17's rows hold past BULK_STATIC_MAX: overlap_rows.cuh's 4 buffers of C x W pairs,
    and 2 mbarriers a stage and one a row slot (2S + 2) beside v12's."""
    return 4 * cluster * (threads // 32) * 8 + (2 * stages + 4 + 2 * stages + 2) * 8


def overlap_plan(n: int, cc: tuple[int, int], dtype: str = "bfloat16", stages: int = 3, threads: int = 256,
                 blocks_per_sm: int = 2, min_cluster: int = 2, elems: int = 64) -> BulkPlan | None:
    """v17's instance for rows of n (None: before sm_90, rows outside BULK_MIN_N..BULK_MAX_N, or no cluster of
    2-16 whose `stages` stages fit the block's share of shared memory and whose share fits pass A's threads x
    elems values): bulk_plan's choice with v17's pair buffers off the budget, named softmax_ov_c*."""
    if cc < (9, 0) or not BULK_MIN_N <= n <= BULK_MAX_N or stages < 3:
        return None
    per_sm, per_block = BULK_SMEM.get(cc[0], BULK_SMEM_OTHER)
    v = 16 // (4 if dtype == "float32" else 2)
    for c in BULK_CLUSTERS:
        if c < max(2, min_cluster):
            continue
        stage = bulk_stage_bytes(n, c, dtype)
        static = BULK_STATIC_MAX + overlap_pairs_bytes(c, threads, stages)
        budget = min(per_block, per_sm // blocks_per_sm - BULK_BLOCK_RESERVED) - static
        if stages * stage <= budget and stage // 16 * v <= threads * (elems or 64):
            return BulkPlan(f"softmax_ov_c{c}", threads, 1, c, capacity=c * stage // 16 * v, persistent=True,
                            smem=stages * stage, work=True)
    return None


def dynamic_plan(p: BulkPlan | None, prefix: str = "softmax_dy_") -> BulkPlan | None:
    """v12's instance for a v10 plan: the same geometry, the `prefix` kernels (which take `work`)."""
    return None if p is None else dataclasses.replace(p, name=p.name.replace("softmax_bk_", prefix), work=True)


# ---- v13_packed_regs' instances -------------------------------------------------------------------
# One 1024-thread block an SM, a cluster of C blocks per row, each thread holding PACKED_REGS_VECS raw
# 16-byte vectors of its block's share; one stage of dynamic shared memory holds the next row's share.
# C is the smallest of PACKED_REGS_CLUSTERS whose share fits both the registers and the stage budget.
PACKED_REGS_THREADS = 1024
PACKED_REGS_VECS = 8
PACKED_REGS_CLUSTERS = (1, 2, 4, 8)


# v15_any_cluster: v13's kernel in clusters of any size 1-8 (the portable limit), so the smallest C
# whose share fits is taken, not the smallest power of two (bf16 151936: 3 x 99 KiB, not 4 x 74).
ANY_CLUSTERS = (1, 2, 3, 4, 5, 6, 7, 8)


def packed_regs_plan(n: int, cc: tuple[int, int], dtype: str = "bfloat16", clusters=PACKED_REGS_CLUSTERS,
                     prefix: str = "softmax_pr_c", threads: int = PACKED_REGS_THREADS) -> BulkPlan | None:
    """v13's instance for rows of n (None: before sm_90, or rows outside BULK_MIN_N..BULK_MAX_N);
    with clusters=ANY_CLUSTERS and prefix "softmax_ac_c", v15's; with threads=512 (two blocks an SM,
    each with half an SM's shared memory), prefix "softmax_hb_c", v16's."""
    if cc < (9, 0) or not BULK_MIN_N <= n <= BULK_MAX_N:
        return None
    budget = bulk_ring_budget(cc, PACKED_REGS_THREADS // threads)
    v = 16 // (4 if dtype == "float32" else 2)
    for c in clusters:
        stage = bulk_stage_bytes(n, c, dtype)
        if stage <= budget and stage // 16 <= threads * PACKED_REGS_VECS:
            return BulkPlan(f"{prefix}{c}", threads, 1, c, capacity=c * stage // 16 * v,
                            persistent=True, smem=stage, work=True)
    return None


def any_cluster_plan(n: int, cc: tuple[int, int], dtype: str = "bfloat16") -> BulkPlan | None:
    """v15's instance for rows of n: v13's plan over clusters of 1-8 blocks (softmax_ac_c*)."""
    return packed_regs_plan(n, cc, dtype, ANY_CLUSTERS, "softmax_ac_c")


# v16_half_blocks: v15 in blocks of 512 threads, two an SM, each holding at most 64 KiB of a row
# (8 vectors a thread): the driver places a cluster's blocks two to an SM, so clusters of 3, 5, 6, 7
# leave at most half an SM of a GPC idle, not up to two SMs (v15's 39 clusters of 3 use 117 of the
# H200's 132 SMs). Rows of up to 8 x 64 KiB: bf16 262144, fp32 131072.
HALF_BLOCK_THREADS = 512


def half_blocks_plan(n: int, cc: tuple[int, int], dtype: str = "bfloat16") -> BulkPlan | None:
    """v16's instance for rows of n: clusters of 1-8 blocks of 512 threads (softmax_hb_c*)."""
    return packed_regs_plan(n, cc, dtype, ANY_CLUSTERS, "softmax_hb_c", HALF_BLOCK_THREADS)


# ---- v14_split_grid: v12's clusters and v13's on the SMs they leave, one row counter ---------------
# The main grid is the v12 instance v4_dispatch would pick (DISPATCH_BULK, or DISPATCH_BULK_E32 for
# fp32 rows of up to 131072), named softmax_sg_a_*; the side grid is v13's plan, named softmax_sg_b_*.
def split_main_plan(n: int, cc: tuple[int, int], dtype: str = "bfloat16") -> BulkPlan | None:
    """v14's main grid for rows of n (None: before sm_90 or outside BULK_MIN_N..BULK_MAX_N)."""
    if dtype == "float32" and n <= 131072:
        p = dynamic_plan(bulk_plan(n, cc, dtype, *DISPATCH_BULK_E32), "softmax_sg_a_e32_")
    else:
        p = dynamic_plan(bulk_plan(n, cc, dtype, *DISPATCH_BULK), "softmax_sg_a_")
    return None if p is None else dataclasses.replace(p, side=True)


SPLIT_SIDES = ("online", "packed_regs")  # v14's `@side_grid`


def split_side_plan(n: int, cc: tuple[int, int], dtype: str = "bfloat16", side: str = "packed_regs",
                    pad_kib: int = 0) -> BulkPlan | None:
    """v14's side grid for rows of n: "packed_regs", v13's plan under v14's names (clusters of
    1024-thread blocks); "online", v2's 512-thread online rows taken from the counter (no cluster:
    any free SM, two blocks an SM; any width), launched with `pad_kib` KiB of dynamic shared memory
    it does not use (`@side_smem_kib`): more than an SM of the main grid has left keeps its blocks
    off the main grid's SMs."""
    if side not in SPLIT_SIDES:
        raise ValueError(f"v14_split_grid: `@side_grid {side}`: one of {', '.join(SPLIT_SIDES)}")
    if side == "online":
        return BulkPlan("softmax_sg_o", 512, persistent=True, work=True, smem=pad_kib * 1024)
    p = packed_regs_plan(n, cc, dtype)
    return None if p is None else dataclasses.replace(p, name=p.name.replace("softmax_pr_", "softmax_sg_b_"))


def split_grids(main_fit: int, main_per_sm: int, main_cluster: int, side_fit: int, side_cluster: int,
                sm_count: int, m: int, margin: int, side_per_sm: int = 1) -> tuple[int, int]:
    """(main clusters, side clusters) of one v14 launch of m rows. The main grid is v12's persistent
    one (what fits, at most m); the side grid gets the SMs it leaves (its clusters x C / blocks an
    SM, rounded up) x the side's blocks an SM, in clusters of the side's C, at most what the driver
    fits alone and the rows it may take (m - margin). 0 side clusters: the main grid runs alone, as v12."""
    main = max(1, min(m, main_fit))
    used = -(-main * main_cluster // max(1, main_per_sm))
    side = min(max(0, sm_count - used) * side_per_sm // side_cluster, side_fit, max(0, m - margin))
    return main, side


_split_streams: dict = {}  # device index -> (side stream, fork event, join event)


def _split_stream(device):
    """The side stream of `device` and the two events that fork it from, and join it to, the
    caller's stream (made on the first, eager, call: not inside a graph capture)."""
    import torch

    key = device.index if device.index is not None else torch.cuda.current_device()
    s = _split_streams.get(key)
    if s is None:
        s = _split_streams[key] = (torch.cuda.Stream(device), torch.cuda.Event(), torch.cuda.Event())
    return s


@dataclasses.dataclass(frozen=True)
class SplitLaunch:
    """One v14 geometry: the main grid's kernel, plan and clusters, the side grid's (side = 0: the
    main grid alone, kb None), and the rows the side grid leaves (`margin`)."""

    ka: object
    pa: BulkPlan
    main: int
    kb: object
    pb: BulkPlan | None
    side: int
    margin: int


_split_launches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # module -> {key: SplitLaunch}


def split_launch(module, variant, m: int, n: int, dtype: str) -> SplitLaunch:
    """v14's grids for m rows of n on `module`'s GPU (split_grid_launch's, the GPU test's and
    scripts/split_grid_probe.py's), from the variant's `@side_grid`, `@side_smem_kib` and
    `@side_margin`. Computed once per (module, variant knobs, shape): the occupancy queries stay
    off the launch path."""
    side_grid = variant.meta.get("side_grid", DISPATCH_SPLIT_SIDE).split()[0]
    pad, margin = variant.meta_int("side_smem_kib", 0), variant.meta_int("side_margin", 128)
    key = (str(variant.path), side_grid, pad, margin, m, n, dtype)
    per_module = _split_launches.setdefault(module, {})
    got = per_module.get(key)
    if got is not None:
        return got
    from kernelab.gpu import device_info

    cc = rows.arch_cc_of(module)
    pa, pb = split_main_plan(n, cc, dtype), split_side_plan(n, cc, dtype, side_grid, pad)
    if pa is None:
        raise ValueError(f"{variant.id} cannot run rows of {n} elements (at most {_limit(variant, dtype)}); "
                         f"use {OP.best_variant}, which handles any width")
    dt = DTYPES[dtype]
    ka, kb = module.kernel(f"{pa.name}_{dt}"), None
    fit_a = persistent_grid(ka, pa, 1 << 30)  # the clusters the driver fits (each grid alone)
    main, side = min(m, fit_a), 0
    if pb is not None and m > margin:  # else the side grid would get no rows: v12 alone
        kb = module.kernel(f"{pb.name}_{dt}")
        fit_b = persistent_grid(kb, pb, 1 << 30)
        main, side = split_grids(fit_a, ka.max_active_blocks_per_sm(pa.block, pa.smem), pa.cluster, fit_b,
                                 pb.cluster or 1, device_info().sm_count, m, margin,
                                 kb.max_active_blocks_per_sm(pb.block, pb.smem))
    got = per_module[key] = SplitLaunch(ka, pa, main, kb, pb, side, margin)
    return got


def split_grid_launch(kernel, variant, case, x, y) -> None:
    """v14: the main grid on the caller's stream, then (when the main grid leaves SMs free) the side
    grid on a second stream that waits for what the caller's stream held before and that the
    caller's stream then waits for. Both take rows from this stream's `work` counters."""
    import torch

    m, n = case.shape
    g = split_launch(kernel.module, variant, m, n, case.dtype)
    pa, pb = g.pa, g.pb
    work = dynamic_work(x.device)
    if g.side == 0:
        g.ka(x, y, m, n, work, 0, grid=g.main, block=pa.block, cluster=pa.cluster, shared_mem=pa.smem)
        return
    stream, fork, join = _split_stream(x.device)
    caller = torch.cuda.current_stream(x.device)
    fork.record(caller)
    g.ka(x, y, m, n, work, g.main + g.side, grid=g.main, block=pa.block, cluster=pa.cluster, shared_mem=pa.smem)
    stream.wait_event(fork)
    g.kb(x, y, m, n, work, g.main + g.side, m - g.margin, grid=g.side, block=pb.block,
         cluster=pb.cluster, shared_mem=pb.smem, stream=stream)
    join.record(stream)
    caller.wait_event(join)


# ---- v8_sm_rows' instances ---------------------------------------------------------------------
# One persistent block an SM (a cluster of C = 1, 2, 4 blocks per row); a block's share of a row is
# staged in a ring of `@chunks` x `@chunk_kib` of dynamic shared memory (clipped to what a block may
# have), and the rest of the share (the "L2 part") is read twice through L2. C is the smallest of
# SM_ROWS_CLUSTERS (at least `@min_cluster`) whose L2 part is at most `@max_l2_kib` KiB, else the
# largest. The block is `@threads` consumers + one producer warp. Header knobs (defaults in
# SM_ROWS_DEFAULTS; Softmax.defines passes chunk_kib, chunks, threads and store to the compiler as
# SR_CHUNK_KIB, SR_CHUNKS, SR_THREADS, SR_STORE).
SM_ROWS_CLUSTERS = (1, 2, 4)
SM_ROWS_DEFAULTS = {"chunk_kib": 16, "chunks": 13, "threads": 512, "max_l2_kib": 64, "min_cluster": 1, "store": 0}
SM_ROWS_PRODUCER = 32  # the producer warp, on top of `@threads`
SM_ROWS_MAX_CHUNKS = 24  # the kernel's full / empty mbarrier arrays (static shared memory < BULK_STATIC_MAX)


def sm_rows_knobs(variant) -> tuple[int, int, int, int, int, int]:
    """(chunk_kib, chunks, threads, max_l2_kib, min_cluster, store) from an sm_rows variant's header, checked."""
    chunk_kib, chunks, threads, max_l2, min_c, store = (variant.meta_int(k, d) for k, d in SM_ROWS_DEFAULTS.items())
    name = variant.path.name
    if not 1 <= chunk_kib <= 64:
        raise ValueError(f"{name}: `@chunk_kib {chunk_kib}`: chunks of 1 to 64 KiB")
    if not 1 <= chunks <= SM_ROWS_MAX_CHUNKS:
        raise ValueError(f"{name}: `@chunks {chunks}`: the ring holds 1 to {SM_ROWS_MAX_CHUNKS} chunks")
    if threads % 32 or not 128 <= threads <= 1024 - SM_ROWS_PRODUCER:
        raise ValueError(f"{name}: `@threads {threads}`: consumer threads, a multiple of 32 from 128 to "
                         f"{1024 - SM_ROWS_PRODUCER} (the block has a producer warp more)")
    if max_l2 < 0:
        raise ValueError(f"{name}: `@max_l2_kib {max_l2}`: KiB of a block's share read through L2, at least 0")
    if min_c not in SM_ROWS_CLUSTERS:
        raise ValueError(f"{name}: `@min_cluster {min_c}`: one of {', '.join(map(str, SM_ROWS_CLUSTERS))}")
    if store not in (0, 1, 2):
        raise ValueError(f"{name}: `@store {store}`: 0 (st.global), 1 (st.global.cs) or 2 (L2 evict-first policy)")
    return chunk_kib, chunks, threads, max_l2, min_c, store


def sm_rows_plan(n: int, cc: tuple[int, int], dtype: str = "bfloat16", chunk_kib: int = 16, chunks: int = 13,
                 threads: int = 512, max_l2_kib: int = 64, min_cluster: int = 1) -> BulkPlan | None:
    """v8's instance for rows of n on a GPU of compute capability cc (None: before sm_90, or rows
    outside BULK_MIN_N..BULK_MAX_N). smem is the ring: min(the widest share, chunks x chunk, what
    a block may have); the kernel stages min(share, ring) and reads the rest through L2."""
    if cc < (9, 0) or not BULK_MIN_N <= n <= BULK_MAX_N:
        return None
    budget = bulk_ring_budget(cc, 1) // 16 * 16
    ring = min(chunks * chunk_kib * 1024, budget)
    v = 16 // (4 if dtype == "float32" else 2)
    sizes = [c for c in SM_ROWS_CLUSTERS if c >= min_cluster]
    for c in sizes:
        share = bulk_stage_bytes(n, c, dtype)  # the widest share a row of n gives a block
        if share - ring <= max_l2_kib * 1024 or c == sizes[-1]:
            return BulkPlan(f"softmax_sr_c{c}", threads + SM_ROWS_PRODUCER, 1, c, capacity=c * share // 16 * v,
                            persistent=True, smem=min(share, ring))
    return None


# ---- v9_grid_groups' instances -------------------------------------------------------------------
# v7's ring of bulk-copied stages, but a row's C blocks are a group of ordinary blocks of a
# cooperative grid (no hardware cluster), exchanging (max, sum) through a zeroed global workspace;
# the block is `@threads` consumers + one exchange warp. C is any of GG_GROUPS. The rule
# (grid_groups_plan): the ring is `@stages` deep, or the deepest below it (down to 2) at which some C
# fits; among the C whose S stages of the widest share fit the block's shared memory (v7's budget),
# the least predicted time
#     ceil(M / Q) x (2 x stage bytes + GG_ROW_OVERHEAD),   Q = min(M, floor(resident blocks / C)) groups,
# i.e. rounds of the busiest group x the bytes one block moves a round (its share read and written)
# plus its fixed per-row cost; ties to the smaller C. Idle SMs (C x Q < resident) and the last,
# partial round count through ceil(M / Q) x share. `@group N` forces C = N. Header knobs (defaults in
# GG_DEFAULTS; Softmax.defines passes threads as GG_THREADS; the kernel takes S from its dynamic
# shared memory, so `@stages` needs no rebuild). H200 (132 SMs): bf16 2048 x 131072 -> C = 6
# (4 stages), fp32 -> C = 11; the CPU tests pin these and B200's, 4096 x 65536 and narrow rows.
GG_GROUPS = tuple(range(1, 17))
GG_DEFAULTS = {"stages": 4, "threads": 512}
GG_EXCHANGE_WARP = 32  # on top of `@threads`
# A block's fixed cost per row (2 consumer barriers, 2 hand-overs to and from the exchange warp, the
# refill, head / tail scalars: ~0.1 us), as the bytes the block would move in that time at 1/132 of
# 4.3 TB/s (~32 GB/s an SM x 0.12 us ~ 4 KiB). It only tips the choice when two C have nearly the
# same rounds x share: +3% at 64 KiB shares, +9% at 21 KiB.
GG_ROW_OVERHEAD = 4096
GG_COUNTER_STRIDE = 32  # unsigned counters per group: one 128-byte line each (the kernel's COUNTER_STRIDE)


@dataclasses.dataclass(frozen=True)
class GridGroupsPlan(Plan):
    """A v9 plan: groups of `group` ordinary blocks per row (cluster stays None), `groups` of them
    launched (0: not sized, a plan made without M or the SM count), `smem` bytes of ring a block."""

    smem: int = 0
    group: int = 1
    groups: int = 0

    @property
    def grid_blocks(self) -> int:
        return self.group * self.groups

    def __str__(self) -> str:
        sized = f", {self.groups} groups" if self.groups else ""
        return f"{self.name} (block {self.block}, group {self.group}{sized}, ring {self.smem} B)"


def group_knob(variant) -> int:
    """`@group` of a v9 / v11 header, checked: 0 for `auto` (the plan's rule), else the forced C."""
    raw = (variant.meta.get("group") or "auto").split()[0]
    if raw == "auto":
        return 0
    try:
        group = int(raw)
    except ValueError:
        group = -1
    if group not in GG_GROUPS:
        raise ValueError(f"{variant.path.name}: `@group {raw}`: `auto` or a group size of {GG_GROUPS[0]} to "
                         f"{GG_GROUPS[-1]} blocks per row")
    return group


def grid_groups_knobs(variant) -> tuple[int, int, int]:
    """(stages, threads, group) from a grid_groups variant's header, checked; group 0 = `@group auto`."""
    stages, threads = (variant.meta_int(k, d) for k, d in GG_DEFAULTS.items())
    name = variant.path.name
    group = group_knob(variant)
    if not 2 <= stages <= 8:
        raise ValueError(f"{name}: `@stages {stages}`: the ring holds 2 to 8 stages")
    if threads % 32 or not 128 <= threads <= 1024 - GG_EXCHANGE_WARP:
        raise ValueError(f"{name}: `@threads {threads}`: consumer threads, a multiple of 32 from 128 to "
                         f"{1024 - GG_EXCHANGE_WARP} (the block has an exchange warp more)")
    return stages, threads, group


@functools.lru_cache(maxsize=256)  # on v9's launch path (re-planned with M each call): a pure function
def grid_groups_plan(n: int, m: int | None, cc: tuple[int, int], dtype: str = "bfloat16", sms: int | None = None,
                     stages: int = GG_DEFAULTS["stages"], threads: int = GG_DEFAULTS["threads"], group: int = 0,
                     blocks_per_sm: int = 1) -> GridGroupsPlan | None:
    """v9's instance for M rows of n on a GPU of compute capability cc with `sms` SMs holding
    `blocks_per_sm` blocks each (None: before sm_90, rows outside BULK_MIN_N..BULK_MAX_N, or no
    group size whose stages fit). group 0 picks C by the rule above; m or sms None: the smallest C
    that fits, unsized (groups = 0)."""
    if cc < (9, 0) or not BULK_MIN_N <= n <= BULK_MAX_N:
        return None
    budget = bulk_ring_budget(cc, blocks_per_sm)
    for stages in range(stages, 1, -1):  # the deepest ring (at most `@stages`) that some group holds
        fits = [c for c in GG_GROUPS if (not group or c == group) and stages * bulk_stage_bytes(n, c, dtype) <= budget]
        if fits:
            break
    else:
        return None
    c, q = least_time_group(fits, n, m, dtype, None if sms is None else sms * blocks_per_sm)
    if q < 0:
        return None  # a forced group larger than the GPU holds at once
    v = 16 // (4 if dtype == "float32" else 2)
    stage = bulk_stage_bytes(n, c, dtype)
    return GridGroupsPlan(f"softmax_gg_c{c}", threads + GG_EXCHANGE_WARP, 1, None, capacity=c * stage // 16 * v,
                          persistent=True, smem=stages * stage, group=c, groups=q)


def least_time_group(fits: list[int], n: int, m: int | None, dtype: str, resident: int | None) -> tuple[int, int]:
    """(C, groups) by the rule above among the group sizes `fits` (ascending), for M rows of n on a
    GPU holding `resident` blocks at once; m or resident None: (the smallest C, 0); groups -1 when
    the chosen C is larger than the GPU holds."""
    if m is None or resident is None:
        return fits[0], 0

    def cost(c: int) -> tuple[float, int]:
        q = min(m, resident // c)
        rounds = -(-m // q) if q else float("inf")
        return rounds * (2 * bulk_stage_bytes(n, c, dtype) + GG_ROW_OVERHEAD), c

    c = min(fits, key=cost)
    q = min(m, resident // c)
    return c, q if q >= 1 else -1


# ---- v11_group_regs' instances -------------------------------------------------------------------
# v10's row loop (bulk-copied stages read once into `@elems` fp32 registers a thread) in v9's
# cooperative groups. C: v9's rule (least_time_group) among the C of GG_GROUPS whose `@stages`
# stages fit the block's part of shared memory at `@blocks_per_sm` blocks an SM (bulk_plan's
# budget) and whose share fits the registers (threads x elems values); `@group N` forces C. Header
# knobs (GR_DEFAULTS; Softmax.defines passes the first four as SB_STAGES, SB_THREADS,
# SB_BLOCKS_PER_SM, SB_ELEMS). H200 (132 SMs x 2 blocks): 2048 x 131072 bf16 -> C = 8, 33 groups;
# fp32 -> C = 11, 24 groups.
GR_DEFAULTS = {"stages": 2, "threads": 256, "blocks_per_sm": 2, "elems": 64}


def group_regs_knobs(variant) -> tuple[int, int, int, int, int]:
    """(stages, threads, blocks_per_sm, elems, group) from a group_regs variant's header, checked."""
    stages, threads, per_sm, elems = (variant.meta_int(k, d) for k, d in GR_DEFAULTS.items())
    name = variant.path.name
    check_ring_knobs(name, stages, threads, per_sm)
    if elems not in BULK_ELEMS[1:]:
        raise ValueError(f"{name}: `@elems {elems}`: a thread holds {', '.join(map(str, BULK_ELEMS[1:]))} values")
    return stages, threads, per_sm, elems, group_knob(variant)


@functools.lru_cache(maxsize=256)  # on v11's launch path (re-planned with M each call): a pure function
def group_regs_plan(n: int, m: int | None, cc: tuple[int, int], dtype: str = "bfloat16", sms: int | None = None,
                    stages: int = GR_DEFAULTS["stages"], threads: int = GR_DEFAULTS["threads"],
                    blocks_per_sm: int = GR_DEFAULTS["blocks_per_sm"], elems: int = GR_DEFAULTS["elems"],
                    group: int = 0) -> GridGroupsPlan | None:
    """v11's instance for M rows of n on a GPU of compute capability cc with `sms` SMs (None: before
    sm_90, rows outside BULK_MIN_N..BULK_MAX_N, or no group size whose stages fit shared memory and
    whose share fits the registers). m or sms None: the smallest C that fits, unsized (groups = 0)."""
    if cc < (9, 0) or not BULK_MIN_N <= n <= BULK_MAX_N:
        return None
    budget = bulk_ring_budget(cc, blocks_per_sm)
    v = 16 // (4 if dtype == "float32" else 2)
    fits = [c for c in GG_GROUPS if (not group or c == group) and stages * bulk_stage_bytes(n, c, dtype) <= budget
            and bulk_stage_bytes(n, c, dtype) // 16 * v <= threads * elems]
    if not fits:
        return None
    c, q = least_time_group(fits, n, m, dtype, None if sms is None else sms * blocks_per_sm)
    if q < 0:
        return None
    stage = bulk_stage_bytes(n, c, dtype)
    return GridGroupsPlan(f"softmax_gr_c{c}", threads, 1, None, capacity=c * stage // 16 * v, persistent=True,
                          smem=stages * stage, group=c, groups=q)


_gg_sms: dict[int, int] = {}
_gg_occupancy: dict = {}
_gg_workspaces: dict = {}
_gg_retired: list = []  # replaced workspaces, kept alive: a captured CUDA graph may still point at them


def grid_groups_workspace(device, groups: int, group: int):
    """(counters, slots) for one v9 launch on torch's current stream of `device`: counters zeroed
    (groups x GG_COUNTER_STRIDE int32, zero_() on that stream: one memset, captured by CUDA graphs)
    and slots (groups x 2 x group float2, as float32; written before read, never cleared). One
    buffer per (device, stream), so launches on one stream are ordered and two streams never share."""
    import torch

    idx = device.index if device.index is not None else torch.cuda.current_device()
    key = (idx, torch._C._cuda_getCurrentRawStream(idx))
    n_counters = groups * GG_COUNTER_STRIDE
    need = n_counters + groups * 2 * group * 2
    ws = _gg_workspaces.get(key)
    if ws is None or ws.numel() < need:
        if ws is not None:
            _gg_retired.append(ws)
        ws = _gg_workspaces[key] = torch.empty(max(need, 1 << 14), dtype=torch.int32, device=device)
    counters = ws[:n_counters]
    counters.zero_()
    return counters, ws[n_counters:need].view(torch.float32)


def grid_groups_launch(kernel, variant, case, x, y) -> None:
    """Plan v9 or v11 for this M, N and GPU, size the grid by the occupancy API (every block co-resident),
    zero the exchange counters and launch cooperatively."""
    from kernelab.gpu import LaunchError, device_info

    m, n = case.shape
    cc = rows.arch_cc(kernel)
    dev = kernel.module.device_index
    sms = _gg_sms.get(dev)
    if sms is None:
        sms = _gg_sms[dev] = device_info(dev).sm_count
    if variant.meta.get("strategy") == "group_regs":
        p = group_regs_plan(n, m, cc, case.dtype, sms, *group_regs_knobs(variant))
    else:
        p = grid_groups_plan(n, m, cc, case.dtype, sms, *grid_groups_knobs(variant))
    if p is None:
        raise ValueError(f"{variant.id} cannot run rows of {n} elements (at most {_limit(variant, case.dtype)}); "
                         f"use v4_dispatch, which handles any width")
    k = kernel.module.kernel(f"{p.name}_{DTYPES[case.dtype]}")
    okey = (id(kernel.module), k.name, p.block, p.smem)
    per_sm = _gg_occupancy.get(okey)
    if per_sm is None:
        per_sm = _gg_occupancy[okey] = k.max_active_blocks_per_sm(p.block, p.smem)
    groups = min(m, sms * per_sm // p.group)
    if groups < 1:
        raise LaunchError(f"{k.name}: a group of {p.group} blocks of {p.block} threads with {p.smem} B of ring each "
                          f"does not fit this GPU at once ({sms} SMs x {per_sm} blocks); its blocks wait for each "
                          f"other, so they must all be resident. Fix: fewer `@stages` or a smaller `@group`.")
    counters, slots = grid_groups_workspace(x.device, groups, p.group)
    k(x, y, m, n, counters, slots, grid=groups * p.group, block=p.block, shared_mem=p.smem, cooperative=True)


def _by_strategy(strategy: str, n: int, cc: tuple[int, int], threads: int = 0, elems: int = 32,
                 dtype: str = "bfloat16") -> Plan | None:
    if strategy == "warp":
        return rows.warp_plan("softmax", n)
    if strategy == "block":
        return rows.block_plan("softmax", n)
    if strategy == "online":
        return ONLINE
    if strategy == "cluster":
        return rows.cluster_plan("softmax", n) if cc >= (9, 0) else None
    if strategy == "persistent":
        return persistent_plan(n, cc, threads, elems or 32)
    if strategy == "packed":  # v6 with its default knobs (a dispatch entry needs v6's instances in v4)
        return packed_plan(n, dtype=dtype)
    if strategy == "dynamic":  # v12 with DISPATCH_BULK's knobs (v4 holds those instances)
        return dynamic_plan(bulk_plan(n, cc, dtype, *DISPATCH_BULK))
    if strategy == "dynamic_e32":  # v12, 32 values a thread in clusters of 16 (v4's softmax_dy_e32_c16_*)
        return dynamic_plan(bulk_plan(n, cc, dtype, *DISPATCH_BULK_E32), "softmax_dy_e32_")
    if strategy == "dynamic_t128":  # v12, 128 threads x 64 values, 3 stages, clusters of 16 (softmax_dy_t128_c16_*)
        return dynamic_plan(bulk_plan(n, cc, dtype, *DISPATCH_BULK_T128), "softmax_dy_t128_")
    if strategy == "any_cluster":  # v15, v13's kernel in clusters of 1-8 (v4 holds its instances)
        return any_cluster_plan(n, cc, dtype)
    if strategy == "half_blocks":  # v16, v15 in 512-thread blocks (v4 holds its instances)
        return half_blocks_plan(n, cc, dtype)
    if strategy == "split":  # v14's two grids (v4 holds the bf16 instances its plans take)
        return split_main_plan(n, cc, dtype)
    if strategy == "wide":
        return wide_plan(n, cc, dtype)
    raise ValueError(f"unknown softmax strategy {strategy!r}")


def wide_plan(n: int, cc: tuple[int, int], dtype: str = "bfloat16") -> BulkPlan | None:
    """v4's "wide" entry (DISPATCH_SM90's measurements): v12's plan where its stages are full
    (at least DISPATCH_WIDE_MIN_STAGE bytes a block) and its clusters place (two rings fit an SM,
    or clusters of at most 4: fp32 65536's one 128 KiB ring an SM in clusters of 4 is v12's best,
    201.2 us vs v13 205.3 and e32 233.2), alone since session 27 (DISPATCH_WIDE_SPLIT; before, as v14's
    main grid for bf16 rows of 65537-131072) (past
    DISPATCH_HALF_BLOCKS_MIN_BF16 v16 wins, full stages or not: 262144 3.5-4.6%); else v12's
    32-value clusters of 16 for fp32 rows they hold (aligned rows of exactly 16 x 128 x 64: the 128-thread
    clusters' `_full` instance, with e32's plan as its `misaligned`: DISPATCH_T128_FULL); else v16's plan,
    v13's kernel in the fewest 512-thread blocks (two an SM) that hold a row (bf16 1325 x 151936 in clusters
    of 5: 215.0 us vs v15's 3 x 1024 threads 235.8, v13's 4 253.2), and v15's (1024-thread blocks) for the rows v16
    cannot hold (fp32 past 131072) (None: before sm_90 or outside BULK_MIN_N..BULK_MAX_N)."""
    p = bulk_plan(n, cc, dtype, *DISPATCH_BULK)
    if p is None:
        return None
    if dtype == "bfloat16" and n > DISPATCH_HALF_BLOCKS_MIN_BF16:  # v16 3.5-4.6% ahead of v14 at 262144
        hb = half_blocks_plan(n, cc, dtype)
        if hb is not None:
            return hb
    placed = p.cluster <= 4 or p.smem <= bulk_ring_budget(cc, 2)  # C SMs of one GPC at one block an SM
    if p.smem // DISPATCH_BULK[0] >= DISPATCH_WIDE_MIN_STAGE and placed:
        split = DISPATCH_WIDE_SPLIT and dtype == "bfloat16" and n > 65536
        return split_main_plan(n, cc, dtype) if split else dynamic_plan(p)
    e32 = bulk_plan(n, cc, dtype, *DISPATCH_BULK_E32) if dtype == "float32" else None
    if e32 is not None:
        e32 = dynamic_plan(e32, "softmax_dy_e32_")
        t128 = dynamic_plan(bulk_plan(n, cc, dtype, *DISPATCH_BULK_T128), "softmax_dy_t128_")
        if (DISPATCH_T128_FULL and t128 is not None and n == t128.cluster * t128.block * t128.elems
                and t128.smem <= bulk_ring_budget(cc, 2)):  # two blocks an SM, as measured
            return dataclasses.replace(t128, misaligned=e32)
        return e32
    return half_blocks_plan(n, cc, dtype) or any_cluster_plan(n, cc, dtype)


@functools.lru_cache(maxsize=4096)
def _plan(strategy: str, block: int, rows_per_block: int, n: int, cc: tuple[int, int], dtype: str = "bfloat16",
          threads: int = 0, elems: int = 0) -> Plan | None:
    if strategy == "cluster":
        return rows.cluster_plan("softmax", n)  # v3 itself: @arch sm_90 keeps it off older GPUs
    if strategy in ("warp", "block", "online", "persistent"):
        return _by_strategy(strategy, n, cc, threads, elems)
    if strategy == "dispatch":
        table = (DISPATCH_SM90 if cc >= (9, 0) else DISPATCH_OLDER)[dtype]
        for widest, chosen in table:
            if n <= widest:
                p = _by_strategy(chosen, n, cc, 0, DISPATCH_PERSISTENT_ELEMS[dtype], dtype)
                if p is not None:
                    return p
        return ONLINE  # any width
    # "rows": the contract kernel with the header's `@block` / `@rows_per_block` (wrong/ kernels)
    return Plan(None, block, rows_per_block)


def _limit(variant, dtype: str = "bfloat16") -> str:
    if variant.meta.get("strategy") == "packed":
        return str(packed_max_n(packed_knobs(variant)[2], dtype))
    if variant.meta.get("strategy") in ("bulk", "dynamic", "split_grid", "overlap"):
        return f"{BULK_MAX_N} (and at least {BULK_MIN_N}, with stages that fit shared memory)"
    if variant.meta.get("strategy") in ("sm_rows", "packed_regs", "any_cluster"):
        return f"{BULK_MAX_N} (and at least {BULK_MIN_N})"
    if variant.meta.get("strategy") == "half_blocks":  # 8 blocks x 512 threads x 8 vectors of 16 bytes
        wide = ANY_CLUSTERS[-1] * HALF_BLOCK_THREADS * PACKED_REGS_VECS * 16 // (4 if dtype == "float32" else 2)
        return f"{min(wide, BULK_MAX_N)} (and at least {BULK_MIN_N})"
    if variant.meta.get("strategy") in ("grid_groups", "group_regs"):
        return f"{BULK_MAX_N} (and at least {BULK_MIN_N}, with stages of the group's share that fit shared memory)"
    return {"warp": str(rows.MAX_WARP_N), "block": str(rows.MAX_BLOCK_N), "cluster": str(rows.MAX_CLUSTER_N),
            "persistent": str(MAX_PERSISTENT_N)}.get(variant.meta.get("strategy", ""), "any")


OP = Softmax()
