"""Issue 7, session 8: the sweeps behind docs/runs/2026-11-30-h200-sweep_membound_s8_*.json, as
candidate lists on top of scripts/sweep_membound.py (same checks, timing and table).

Usage (GPU machine): SWEEP_SET=groups PYTHONPATH=src python3 scripts/sweep_membound_s8.py --ops softmax --out F
    groups: softmax v11_group_regs (v10's register rows in v9's cooperative groups: any C, every
            SM) and its knobs at 2048 x 131072 bf16 / fp32 against v10 and v4_dispatch (v10's
            clusters of 8 blocks place 30 at once: 120 of 132 SMs).
    groups2: softmax v9_grid_groups (v7's smem ring, exchange warp, the exchange of row i hidden under
            row i + 1's stats) at 2-4 blocks an SM (63 registers: shared memory decides), against
            v10 and v11, after `groups` found v11's exchange exposed (~2 us a row).
    pdl:    sum v5_pdl_finish (v3 with its finish as a programmatic dependent launch) against v3 and
            torch.compile: 2^28 / 2^29 bf16 and 2^28 fp32 cold, 2^18 bf16 / fp32 in graph mode.
    dynamic: softmax v12_dynamic_rows (v10 with rows taken from a counter at run time) against v10
            and v4_dispatch at 2048 x 131072 bf16 / fp32 and 4096 x 65536 bf16, after the copy
            experiment (a counter-driven persistent copy 257.9 us vs a static one 269.7).
    dynamic2: v12's knobs at 2048 x 131072 (clusters of 16, 512 threads, 3 stages), fp32 first.
    e32:    v4_dispatch with fp32 65537-131072 on v12's 32-value clusters of 16, against v12's default
            and that knob set, fp32 2048 x 131072.
Without a GPU, --dry-run compiles every candidate (sweep_membound.py's)."""
import os
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import sweep_membound as sm
from sweep_membound import Candidate, Sweep, Case

P = [Candidate("torch", "peer"), Candidate("torch.compile", "peer")]


def groups_sweeps(selected):
    out = []
    if "softmax" not in selected:
        return out
    v10, v11 = "v10_staged_regs", "v11_group_regs"
    knobs = {
        "bfloat16": [("stages 3", {"stages": "3"}), ("group 11", {"group": "11"}),
                     ("t512 bps1", {"threads": "512", "blocks_per_sm": "1"}),
                     ("e32 bps3 group 16", {"elems": "32", "blocks_per_sm": "3", "group": "16"})],
        "float32": [("group 12", {"group": "12"}), ("group 10", {"group": "10"}),
                    ("t512 bps1", {"threads": "512", "blocks_per_sm": "1"})],
    }
    for dt in ("bfloat16", "float32"):
        out.append(Sweep("softmax", Case((2048, 131072), dt), "cold", Case((264, 131072), dt), P + [
            Candidate("v4_dispatch", "existing", "v4_dispatch"),
            Candidate(v10, "existing", v10),
            Candidate(v11, "new", v11),
        ] + [Candidate(f"{v11} {label}", "new", v11, meta=m) for label, m in knobs[dt]]))
    return out


def groups2_sweeps(selected):
    out = []
    if "softmax" not in selected:
        return out
    v9 = "v9_grid_groups"
    knobs = {
        "bfloat16": [("t256 g8 s3", {"threads": "256", "group": "8", "stages": "3"}),
                     ("t128 g16 s3", {"threads": "128", "group": "16", "stages": "3"}),
                     ("t256 g12 s3", {"threads": "256", "group": "12", "stages": "3"}),
                     ("t256 g16 s4", {"threads": "256", "group": "16", "stages": "4"}),
                     ("t512 g4 s3", {"threads": "512", "group": "4", "stages": "3"})],
        "float32": [("t256 g16 s3", {"threads": "256", "group": "16", "stages": "3"}),
                    ("t128 g16 s3", {"threads": "128", "group": "16", "stages": "3"}),
                    ("t512 g11 s3", {"threads": "512", "group": "11", "stages": "3"})],
    }
    for dt in ("bfloat16", "float32"):
        out.append(Sweep("softmax", Case((2048, 131072), dt), "cold", Case((264, 131072), dt), P + [
            Candidate("v10_staged_regs", "existing", "v10_staged_regs"),
            Candidate("v11_group_regs", "new", "v11_group_regs"),
        ] + [Candidate(f"{v9} {label}", "new", v9, meta=m) for label, m in knobs[dt]]))
    return out


def pdl_sweeps(selected):
    out = []
    if "sum" not in selected:
        return out
    cands = P + [Candidate("v3_oneshot", "existing", "v3_oneshot"), Candidate("v5_pdl_finish", "new", "v5_pdl_finish"),
                 Candidate("v3_oneshot again", "existing", "v3_oneshot")]
    for n, dt in ((1 << 28, "bfloat16"), (1 << 29, "bfloat16"), (1 << 28, "float32")):
        out.append(Sweep("sum", Case((n,), dt), "cold", Case((1 << 20,), dt), cands))
    small = P + [Candidate("v1_warp_shuffle", "existing", "v1_warp_shuffle"),
                 Candidate("v4_ticket", "existing", "v4_ticket")] + cands[2:]
    for dt in ("bfloat16", "float32"):
        out.append(Sweep("sum", Case((1 << 18,), dt), "graph", Case((1 << 18,), dt), small))
    return out


def dynamic_sweeps(selected):
    out = []
    if "softmax" not in selected:
        return out
    v10, v12 = "v10_staged_regs", "v12_dynamic_rows"
    for shape, dt in (((2048, 131072), "bfloat16"), ((2048, 131072), "float32"), ((4096, 65536), "bfloat16")):
        extra = [Candidate(f"{v12} stages 3", "new", v12, meta={"stages": "3"})] if shape[1] == 131072 else []
        out.append(Sweep("softmax", Case(shape, dt), "cold", Case((264, shape[1]), dt), P + [
            Candidate("v4_dispatch", "existing", "v4_dispatch"),
            Candidate(v10, "existing", v10),
            Candidate(v12, "new", v12),
        ] + extra + [Candidate(f"{v10} again", "existing", v10)]))
    return out


def dynamic2_sweeps(selected):
    out = []
    if "softmax" not in selected:
        return out
    v12 = "v12_dynamic_rows"
    knobs = [("c16", {"min_cluster": "16"}), ("c16 s3", {"min_cluster": "16", "stages": "3"}),
             ("t512", {"threads": "512"}), ("t512 s3", {"threads": "512", "stages": "3"}),
             ("e32 c16", {"elems": "32", "min_cluster": "16"})]
    for dt in ("float32", "bfloat16"):
        out.append(Sweep("softmax", Case((2048, 131072), dt), "cold", Case((264, 131072), dt), P + [
            Candidate(v12, "existing", v12),
        ] + [Candidate(f"{v12} {label}", "new", v12, meta=m) for label, m in knobs]))
    return out


def e32_sweeps(selected):
    if "softmax" not in selected:
        return []
    v12 = "v12_dynamic_rows"
    return [Sweep("softmax", Case((2048, 131072), "float32"), "cold", Case((264, 131072), "float32"), P + [
        Candidate("v4_dispatch", "existing", "v4_dispatch"),
        Candidate(v12, "existing", v12),
        Candidate(f"{v12} e32 c16", "new", v12, meta={"elems": "32", "min_cluster": "16"}),
        Candidate("v4_dispatch again", "existing", "v4_dispatch"),
    ])]


sm.sweeps = {"groups": groups_sweeps, "groups2": groups2_sweeps, "pdl": pdl_sweeps, "dynamic": dynamic_sweeps,
             "dynamic2": dynamic2_sweeps, "e32": e32_sweeps}[os.environ.get("SWEEP_SET", "groups")]
if __name__ == "__main__":
    sys.exit(sm.main())
