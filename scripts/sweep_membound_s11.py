"""Issue 7, session 11: sweeps prepared without a GPU (run them on the H200), as candidate lists on
top of scripts/sweep_membound.py (same checks, timing and table).

Usage (GPU machine): SWEEP_SET=regcap PYTHONPATH=src python3 scripts/sweep_membound_s11.py --ops softmax --out F
    regcap: v4_dispatch's v12 rows built with a 128-register cap on sm_90 (SB_MIN_BLOCKS=2), against
            the measured build (SB_MIN_BLOCKS = the header's 1). The cap changes the sm_90 SASS
            although ptxas already stays within 128 there (fp32 instances 113 -> 99 registers, bf16 127
            -> 127 with other scheduling); staged_rows.cuh applies it off sm_90 only until this says
            whether the H200 gains or loses. Each build is timed twice (before and after) to show the run's drift.
Without a GPU, --dry-run compiles every candidate (sweep_membound.py's)."""
import os
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import sweep_membound as sm
from sweep_membound import Candidate, Sweep, Case

P = [Candidate("torch", "peer"), Candidate("torch.compile", "peer")]


def regcap_sweeps(selected):
    if "softmax" not in selected:
        return []
    v4, cap = "v4_dispatch", {"SB_MIN_BLOCKS": "2"}
    out = []
    # (shape, dtype): the v12 instance v4 picks there (H200), its sm_90 registers without / with the cap
    for shape, dt in (((2048, 131072), "bfloat16"),  # softmax_dy_c8_bf16, 127 / 127
                      ((4096, 65536), "bfloat16"),  # softmax_dy_c4_bf16, 127 / 127
                      ((2048, 131072), "float32"),  # softmax_dy_e32_c16_f32, 85 / 80
                      ((1024, 262144), "float32")):  # softmax_dy_c16_f32, 113 / 99 (one block an SM: the ring)
        out.append(Sweep("softmax", Case(shape, dt), "cold", Case((64, shape[1]), dt), P + [
            Candidate(v4, "existing", v4), Candidate(f"{v4} regcap", "new", v4, defines=cap),
            Candidate(f"{v4} again", "existing", v4), Candidate(f"{v4} regcap again", "new", v4, defines=cap)]))
    return out


sm.sweeps = {"regcap": regcap_sweeps}[os.environ.get("SWEEP_SET", "regcap")]
if __name__ == "__main__":
    sys.exit(sm.main())
