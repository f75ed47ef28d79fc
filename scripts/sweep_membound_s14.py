"""Issue 7, session 14: sweeps on top of scripts/sweep_membound.py (same checks, timing and table).

Usage (GPU machine): SWEEP_SET=widths PYTHONPATH=src python3 scripts/sweep_membound_s14.py --ops softmax --out F
    widths:    softmax v4_dispatch at the row widths its table covers by proximity only (bf16 49152,
               98304, 196608; fp32 49152, 98304, 196608: 384-768 MiB each), against the variants v4
               sends the measured neighbours to (v12_dynamic_rows, v13_packed_regs, v14_split_grid)
               and v2_online, each at its header's defaults. Checked at 256 rows.
    grid:      v4_dispatch's wide-row entries on a grid of widths (40960..262144 in steps of 8192-32768,
               bf16 and fp32, 384 MiB each way): v4 as it stands, v4 with one entry at every width
               (`@dispatch_only online | dynamic | dynamic_e32 | packed_regs`) and v14_split_grid
               (bf16), so the table can be written from measurements instead of proximity.
    vocab:     softmax over LLM vocabulary widths (32000, 50257, 128256, 151936; 50257 rows are 2-byte
               aligned only), bf16 and fp32, ~384 MiB each way: v4_dispatch against torch.compile and
               the wide-row variants v4 chooses among.
    mid:       softmax fp32 rows of 8192-32768 (v4's "online" entry: v2, measured at 8192 only; 3145 x
               32000 fp32 ran 273.9 us, 0.69x a copy) against v4 with its "wide" entry, v12's and
               v13's plans there (`@dispatch_only`), ~384 MiB each way.
    anyc:      softmax v15_any_cluster (v13's kernel in clusters of 1-8, not only powers of two) against
               v4_dispatch and v13 at the widths where its cluster differs (bf16 151936 / 163840 / 196608:
               C = 3; fp32 98304 / 163840 / 196608 / 229376: C = 3 / 5 / 6 / 7), ~384 MiB each way.
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


GRID_WIDTHS = (40960, 49152, 57344, 65536, 81920, 98304, 114688, 131072, 163840, 196608, 229376, 262144)


def grid_sweeps(selected):
    if "softmax" not in selected:
        return []
    v4 = "v4_dispatch"

    def only(entry):
        return Candidate(f"{v4} only {entry}", "new", v4, meta={"dispatch_only": entry})
    out = []
    for dt, size in (("bfloat16", 2), ("float32", 4)):
        for n in GRID_WIDTHS:
            m = 3 * 2**27 // (n * size)  # 384 MiB each way
            entries = ["online", "dynamic", "packed_regs"]
            if dt == "float32" and n <= 131072:
                entries.append("dynamic_e32")
            cands = [Candidate(v4, "existing", v4)] + [only(e) for e in entries]
            if dt == "bfloat16":
                cands.append(Candidate("v14_split_grid", "new", "v14_split_grid"))
            out.append(Sweep("softmax", Case((m, n), dt), "cold", Case((256, n), dt),
                             cands + [Candidate(f"{v4} again", "existing", v4)]))
    return out


VOCAB = (32000, 50257, 128256, 151936)


def vocab_sweeps(selected):
    if "softmax" not in selected:
        return []
    v4 = "v4_dispatch"
    out = []
    for dt, size in (("bfloat16", 2), ("float32", 4)):
        for n in VOCAB:
            m = 3 * 2**27 // (n * size)
            if n <= 32768:
                others = ("v2_online",) + (("v6_packed_rows",) if dt == "bfloat16" else ())
            else:
                others = ("v12_dynamic_rows", "v13_packed_regs", "v14_split_grid", "v2_online")
            out.append(Sweep("softmax", Case((m, n), dt), "cold", Case((256, n), dt),
                             [Candidate("torch.compile", "peer"), Candidate(v4, "existing", v4)]
                             + [Candidate(v, "new", v) for v in others] + [Candidate(f"{v4} again", "existing", v4)]))
    return out


def mid_sweeps(selected):
    if "softmax" not in selected:
        return []
    v4 = "v4_dispatch"

    def only(entry):
        return Candidate(f"{v4} only {entry}", "new", v4, meta={"dispatch_only": entry})
    return [Sweep("softmax", Case((3 * 2**25 // n, n), "float32"), "cold", Case((256, n), "float32"),
                  [Candidate("torch.compile", "peer"), Candidate(v4, "existing", v4), only("wide"), only("dynamic"),
                   only("packed_regs"), Candidate(f"{v4} again", "existing", v4)])
            for n in (8192, 12288, 16384, 24576, 32000, 32768)]


def anyc_sweeps(selected):
    if "softmax" not in selected:
        return []
    v4 = "v4_dispatch"
    out = []
    sets = (("bfloat16", 2, (151936, 163840, 196608)), ("float32", 4, (98304, 163840, 196608, 229376)))
    for dt, size, widths in sets:
        for n in widths:
            out.append(Sweep("softmax", Case((3 * 2**27 // (n * size), n), dt), "cold", Case((256, n), dt),
                             [Candidate("torch.compile", "peer"), Candidate(v4, "existing", v4),
                              Candidate("v13_packed_regs", "new", "v13_packed_regs"),
                              Candidate("v15_any_cluster", "new", "v15_any_cluster"),
                              Candidate(f"{v4} again", "existing", v4),
                              Candidate("v15_any_cluster again", "new", "v15_any_cluster")]))
    return out


SETS = {"widths": widths_sweeps, "grid": grid_sweeps, "vocab": vocab_sweeps, "mid": mid_sweeps, "anyc": anyc_sweeps}
sm.sweeps = SETS[os.environ.get("SWEEP_SET", "widths")]
if __name__ == "__main__":
    sys.exit(sm.main())
