"""Issue 7, session 7: the sweeps behind docs/runs/2026-11-30-h200-sweep_membound_s7_*.json, as
candidate lists on top of scripts/sweep_membound.py (same checks, timing and table).

Usage (GPU machine): SWEEP_SET=ablate|staged|staged2|sum PYTHONPATH=src python3 scripts/sweep_membound_s7.py --ops ... --out F
    ablate: what holds wide-row softmax (2048 x 131072) under a copy. v7_bulk_smem with parts of a
            row's work removed (SB_ABLATE: 1 no cluster exchange, 2 no EX2, 4 no stats sweeps) and
            v5's register instance without its exchange (PS_ABLATE 1). Ablations compute a wrong
            softmax by design: they are timed, never checked, never picked (status "ablation").
    staged: softmax v10_staged_regs (v7's ring read once into registers, one EX2 an element) and
            its knobs at 2048 x 131072 bf16 / fp32 against v7 and v4_dispatch, and at the bench
            shapes that fit a block (8192 x 32768 bf16, 32768 x 8192 fp32) against v4_dispatch.
    staged2: v10 with 2+ blocks an SM (256 / 128 threads, 32 values a thread: clusters of 8 / 16 and
            small rings) at 2048 x 131072, after `staged` found 256 threads the fastest.
    sum:    sum bf16 cold at 2^28 and 2^29 elements (the same bytes as fp32 2^28): how much of
            2^28's time is fixed cost (launch, second pass, ramp) rather than bandwidth.
Without a GPU, --dry-run compiles every candidate (sweep_membound.py's)."""
import os
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import sweep_membound as sm
from sweep_membound import Candidate, Sweep, Case

P = [Candidate("torch", "peer"), Candidate("torch.compile", "peer")]


def ablated(label, variant, bits, macro, meta=None):
    return Candidate(f"{label} ABLATE={bits}", "new", variant, meta=meta or {}, defines={macro: bits}, check=False)


def ablate_sweeps(selected):
    out = []
    if "softmax" not in selected:
        return out
    v5, v7 = "v5_persistent", "v7_bulk_smem"
    c8s6 = {"min_cluster": "8", "stages": "6"}
    for dt in ("bfloat16", "float32"):
        bf = dt == "bfloat16"
        v5_meta = {"threads": "256", "elems": "64"} if bf else {"threads": "512"}  # v4_dispatch's instance
        cands = P + [
            Candidate("v4_dispatch", "existing", "v4_dispatch"),
            Candidate(v5, "new", v5, meta=v5_meta),
            ablated(v5, v5, 1, "PS_ABLATE", v5_meta),
            Candidate(v7, "existing", v7),
        ] + [ablated(v7, v7, b, "SB_ABLATE") for b in (1, 2, 3, 4, 5)] + [
            Candidate(f"{v7} c8 s6", "new", v7, meta=c8s6),
            ablated(f"{v7} c8 s6", v7, 1, "SB_ABLATE", c8s6),
            Candidate(f"{v7} c8 s3", "new", v7, meta={"min_cluster": "8"}),
            ablated(f"{v7} c8 s3", v7, 1, "SB_ABLATE", {"min_cluster": "8"}),
        ]
        out.append(Sweep("softmax", Case((2048, 131072), dt), "cold", Case((264, 131072), dt), cands))
    return out


def staged_sweeps(selected):
    out = []
    if "softmax" not in selected:
        return out
    v7, v10 = "v7_bulk_smem", "v10_staged_regs"
    for dt in ("bfloat16", "float32"):
        out.append(Sweep("softmax", Case((2048, 131072), dt), "cold", Case((264, 131072), dt), P + [
            Candidate("v4_dispatch", "existing", "v4_dispatch"),
            Candidate(v7, "existing", v7),
            Candidate(v10, "new", v10),
            Candidate(f"{v10} t1024 e32", "new", v10, meta={"threads": "1024", "elems": "32"}),
            Candidate(f"{v10} t256", "new", v10, meta={"threads": "256"}),
            Candidate(f"{v10} stages 2", "new", v10, meta={"stages": "2"}),
            Candidate(f"{v10} stages 4", "new", v10, meta={"stages": "4"}),
            Candidate(f"{v10} min_cluster 8", "new", v10, meta={"min_cluster": "8"}),
        ]))
    for shape, dt in (((8192, 32768), "bfloat16"), ((32768, 8192), "float32")):
        out.append(Sweep("softmax", Case(shape, dt), "cold", Case((264, shape[1]), dt), P + [
            Candidate("v4_dispatch", "existing", "v4_dispatch"),
            Candidate(v10, "new", v10),
            Candidate(f"{v10} t1024 e32", "new", v10, meta={"threads": "1024", "elems": "32"}),
        ]))
    return out


def staged2_sweeps(selected):
    out = []
    if "softmax" not in selected:
        return out
    v10 = "v10_staged_regs"
    knobs = [("t256", {"threads": "256"}), ("t256 e32", {"threads": "256", "elems": "32"}),
             ("t128", {"threads": "128"}), ("t256 stages 2", {"threads": "256", "stages": "2"}),
             ("t256 blocks_per_sm 2", {"threads": "256", "blocks_per_sm": "2"}),
             ("t512 min_cluster 8", {"min_cluster": "8"})]
    for dt in ("bfloat16", "float32"):
        out.append(Sweep("softmax", Case((2048, 131072), dt), "cold", Case((264, 131072), dt), P + [
            Candidate("v4_dispatch", "existing", "v4_dispatch"),
            Candidate("v7_bulk_smem", "existing", "v7_bulk_smem"),
        ] + [Candidate(f"{v10} {label}", "new", v10, meta=m) for label, m in knobs]))
    return out


def sum_sweeps(selected):
    out = []
    if "sum" not in selected:
        return out
    for n in (1 << 28, 1 << 29):
        out.append(Sweep("sum", Case((n,), "bfloat16"), "cold", Case((1 << 20,), "bfloat16"), P + [
            Candidate("v3_oneshot", "existing", "v3_oneshot"),
            Candidate("v2_vec_persistent", "new", "v2_vec_persistent"),
        ]))
    return out


sm.sweeps = {"ablate": ablate_sweeps, "staged": staged_sweeps, "staged2": staged2_sweeps, "sum": sum_sweeps}[os.environ.get("SWEEP_SET", "ablate")]
if __name__ == "__main__":
    sys.exit(sm.main())
