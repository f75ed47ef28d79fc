"""Issue 7, session 12: sweeps on top of scripts/sweep_membound.py (same checks, timing and table).

Usage (GPU machine): SWEEP_SET=ablate PYTHONPATH=src python3 scripts/sweep_membound_s12.py --ops softmax --out F
    ablate: what holds softmax v12 (v4_dispatch's pick for 2048 x 131072) at 0.91x a copy, when the
            copy patterns of session 8 reach 0.98x on the same 120 SMs (240 blocks taking 32 KiB
            chunks from a counter). staged_rows.cuh's SB_ABLATE removes parts of a row's work: 1 the
            exchange between the cluster's blocks, 2 the EX2 (a linear stand-in), 8 the y stores.
            Bit 1 only on v10 (static rows): v12's row hand-out relies on the exchange to keep a
            cluster's blocks within a row of each other. Ablations compute a wrong softmax by design:
            timed, never checked, never picked.
    v13:    softmax v13_packed_regs (1024-thread blocks holding raw vectors in registers; clusters of 2
            on all 132 SMs at 2048 x 131072 bf16) against v4_dispatch at the wide bench shapes and
            their neighbours, each timed twice (alternating) to show the run's drift.
    fulltiles: transpose v8_lean_tiles' whole-tile instance (`@full_tiles 1`: no path tests, no edge
            path, 32-bit offsets; 16 instructions before the first load in bf16 against 48) against
            the default build and torch.compile at 256 x 512 in graph mode (the issue's small-shape
            bound: within 1.1x of torch's; the full run at 478f089 had bf16 at 1.101x), each twice,
            alternating; and at 4096 x 4096 (graph) and 16384 x 16384 (cold), where it also applies.
Without a GPU, --dry-run compiles every candidate (sweep_membound.py's)."""
import os
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import sweep_membound as sm
from sweep_membound import Candidate, Sweep, Case

P = [Candidate("torch", "peer"), Candidate("torch.compile", "peer")]


def ablated(label, variant, bits, meta=None):
    return Candidate(f"{label} ABLATE={bits}", "new", variant, meta=meta or {}, defines={"SB_ABLATE": bits}, check=False)


def ablate_sweeps(selected):
    if "softmax" not in selected:
        return []
    v4, v10, v12 = "v4_dispatch", "v10_staged_regs", "v12_dynamic_rows"
    out = []
    for dt in ("bfloat16", "float32"):
        # fp32: v4's instance there is v12 with 32 values a thread in clusters of 16
        m12 = {} if dt == "bfloat16" else {"elems": "32", "min_cluster": "16"}
        cands = P + [Candidate(v4, "existing", v4), Candidate(v12, "new", v12, meta=m12)]
        cands += [ablated(v12, v12, b, m12) for b in (2, 8, 10)]
        cands += [Candidate(v10, "new", v10)]
        cands += [ablated(v10, v10, b) for b in (1, 3, 11)]
        cands += [Candidate(f"{v4} again", "existing", v4)]
        out.append(Sweep("softmax", Case((2048, 131072), dt), "cold", Case((64, 131072), dt), cands))
    return out


def v13_sweeps(selected):
    if "softmax" not in selected:
        return []
    v4, v13 = "v4_dispatch", "v13_packed_regs"
    out = []
    for shape, dt in (((2048, 131072), "bfloat16"), ((2048, 131072), "float32"), ((4096, 65536), "bfloat16"),
                      ((4096, 65536), "float32"), ((8192, 32768), "bfloat16"), ((1024, 262144), "bfloat16")):
        out.append(Sweep("softmax", Case(shape, dt), "cold", Case((64, shape[1]), dt), P + [
            Candidate(v4, "existing", v4), Candidate(v13, "new", v13),
            Candidate(f"{v4} again", "existing", v4), Candidate(f"{v13} again", "new", v13)]))
    return out


def fulltiles_sweeps(selected):
    if "transpose" not in selected:
        return []
    v8, full = "v8_lean_tiles", {"full_tiles": "1"}
    out = []
    for shape, mode in (((256, 512), "graph"), ((4096, 4096), "graph"), ((16384, 16384), "cold")):
        for dt in ("bfloat16", "float32"):
            case = Case(shape, dt)
            check = case if shape[0] <= 4096 else Case((1024, 2048), dt)
            out.append(Sweep("transpose", case, mode, check, P + [
                Candidate(v8, "new", v8), Candidate(f"{v8} full tiles", "new", v8, meta=full),
                Candidate("torch.compile again", "peer"), Candidate(f"{v8} again", "new", v8),
                Candidate(f"{v8} full tiles again", "new", v8, meta=full)]))
    return out


sm.sweeps = {"ablate": ablate_sweeps, "v13": v13_sweeps, "fulltiles": fulltiles_sweeps}[os.environ.get("SWEEP_SET", "ablate")]
if __name__ == "__main__":
    sys.exit(sm.main())
