"""Issue 7, session 13: sweeps on top of scripts/sweep_membound.py (same checks, timing and table).

Usage (GPU machine): SWEEP_SET=split PYTHONPATH=src python3 scripts/sweep_membound_s13.py --ops softmax --out F
    split:     softmax v14_split_grid (v12's clusters of 8 on 120 SMs plus v13's clusters of 2 on the
               12 SMs they leave, both taking rows from one counter) against v4_dispatch (v12 at
               these shapes) at the wide bench shapes, for `@side_margin` 64, 128 and 256 rows left
               to the main grid, and a margin past M (the main grid alone: v12 with the shared
               counter's total, which must time as v12). Checked at 512 rows, where the side grid
               takes rows (at 64 rows a margin of 128 leaves it none).
    split2:    v14's two side grids: `@side_grid packed_regs` (v13's clusters of 1024-thread blocks)
               against `online` (v2's 512-thread online rows from the counter, two blocks on each free
               SM, no cluster), margins 64-256, against v4_dispatch (v14 packed_regs at bf16 rows past
               65536 since session 13; v12 elsewhere).
    fulltiles: session 12's (scripts/sweep_membound_s12.py): transpose v8's whole-tile instance.
Without a GPU, --dry-run compiles every candidate (sweep_membound.py's)."""
import os
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import sweep_membound as sm
_set = os.environ.pop("SWEEP_SET", None)  # s12 picks its own set on import: let it take its default
import sweep_membound_s12 as s12  # noqa: E402
if _set is not None:
    os.environ["SWEEP_SET"] = _set
from sweep_membound import Candidate, Sweep, Case

P = [Candidate("torch", "peer"), Candidate("torch.compile", "peer")]


def split_sweeps(selected):
    if "softmax" not in selected:
        return []
    v4, v14 = "v4_dispatch", "v14_split_grid"
    out = []
    for shape, dt in (((2048, 131072), "bfloat16"), ((2048, 131072), "float32"), ((4096, 65536), "bfloat16"),
                      ((1024, 262144), "bfloat16")):
        def margin(k, again=""):
            return Candidate(f"{v14} margin {k}{again}", "new", v14, meta={"side_margin": str(k)})
        out.append(Sweep("softmax", Case(shape, dt), "cold", Case((512, shape[1]), dt), P + [
            Candidate(v4, "existing", v4), margin(128), margin(64), margin(256), margin(1 << 20),
            Candidate(f"{v4} again", "existing", v4), margin(128, " again")]))
    return out


def split2_sweeps(selected):
    if "softmax" not in selected:
        return []
    v4, v14 = "v4_dispatch", "v14_split_grid"
    out = []
    for shape, dt in (((2048, 131072), "bfloat16"), ((2048, 131072), "float32"), ((1024, 262144), "bfloat16"),
                      ((4096, 65536), "bfloat16")):
        def side(grid, k, again=""):
            return Candidate(f"{v14} {grid} margin {k}{again}", "new", v14,
                             meta={"side_grid": grid, "side_margin": str(k)})
        out.append(Sweep("softmax", Case(shape, dt), "cold", Case((512, shape[1]), dt), P + [
            Candidate(v4, "existing", v4), side("packed_regs", 128), side("online", 128), side("online", 64),
            side("online", 256), Candidate(f"{v4} again", "existing", v4), side("packed_regs", 128, " again"),
            side("online", 128, " again")]))
    return out


def pad_sweeps(selected):
    """v14's online side grid with unused dynamic shared memory, so its blocks land only on the SMs
    the main grid leaves idle (split_grid_probe: v13's clusters of 2 reach 8 of the 12)."""
    if "softmax" not in selected:
        return []
    v4, v14 = "v4_dispatch", "v14_split_grid"

    def pad(k, again=""):
        return Candidate(f"{v14} online pad {k} KiB{again}", "new", v14,
                         meta={"side_grid": "online", "side_smem_kib": str(k)})
    return [Sweep("softmax", Case((2048, 131072), dt), "cold", Case((512, 131072), dt), [
        Candidate("torch.compile", "peer"), Candidate(v4, "existing", v4), pad(120), pad(100),
        Candidate(f"{v4} again", "existing", v4), pad(120, " again")]) for dt in ("bfloat16", "float32")]


sm.sweeps = {"split": split_sweeps, "pad": pad_sweeps, "split2": split2_sweeps,
             "fulltiles": s12.fulltiles_sweeps}[os.environ.get("SWEEP_SET", "split")]
if __name__ == "__main__":
    sys.exit(sm.main())
