"""Issue 7, session 14: sweeps on top of scripts/sweep_membound.py (same checks, timing and table).

Usage (GPU machine): SWEEP_SET=widths PYTHONPATH=src python3 scripts/sweep_membound_s14.py --ops softmax --out F
    widths:    softmax v4_dispatch at the row widths its table covers by proximity only (bf16 49152,
               98304, 196608; fp32 49152, 98304, 196608: 384-768 MiB each), against the variants v4
               sends the measured neighbours to (v12_dynamic_rows, v13_packed_regs, v14_split_grid)
               and v2_online, each at its header's defaults. Checked at 256 rows.
Without a GPU, --dry-run compiles every candidate (sweep_membound.py's)."""
import os
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import sweep_membound as sm
from sweep_membound import Candidate, Sweep, Case

# (rows, width, dtype) -> the variants beside v4_dispatch; v4's own pick at that width is named in
# the comment (op.py DISPATCH_SM90), so the table says whether the pick is the fastest there.
WIDTHS = {
    (4096, 49152, "bfloat16"): ("v12_dynamic_rows", "v13_packed_regs", "v14_split_grid", "v2_online"),  # dynamic
    (2048, 98304, "bfloat16"): ("v12_dynamic_rows", "v13_packed_regs", "v14_split_grid"),  # split
    (1024, 196608, "bfloat16"): ("v12_dynamic_rows", "v14_split_grid"),  # split
    (2048, 49152, "float32"): ("v12_dynamic_rows", "v13_packed_regs", "v2_online"),  # packed_regs
    (1024, 98304, "float32"): ("v12_dynamic_rows", "v13_packed_regs", "v14_split_grid"),  # dynamic_e32
    (1024, 196608, "float32"): ("v12_dynamic_rows", "v14_split_grid"),  # dynamic
}


def widths_sweeps(selected):
    if "softmax" not in selected:
        return []
    v4 = "v4_dispatch"
    return [Sweep("softmax", Case((m, n), dt), "cold", Case((256, n), dt),
                  [Candidate("torch.compile", "peer"), Candidate(v4, "existing", v4)]
                  + [Candidate(v, "new", v) for v in others] + [Candidate(f"{v4} again", "existing", v4)])
            for (m, n, dt), others in WIDTHS.items()]


sm.sweeps = {"widths": widths_sweeps}[os.environ.get("SWEEP_SET", "widths")]
if __name__ == "__main__":
    sys.exit(sm.main())
