"""Where torch.compile's transpose beats ours at 256 x 512 (graph mode, issue 7's 1.1x target).

Runs torch.compile's `m.t().contiguous()` and kernelab's transpose variants (default: v2_smem_padded
and v8_lean_tiles) at 256 x 512, bf16 then fp32, 3 warm-up rounds and 5 timed ones, so that ncu can
compare what each kernel issues. On the GPU machine (clocks and caches left alone; the shapes live
in L2 across graph replays, so --cache-control none is the closer match):

    PYTHONPATH=src ncu --clock-control none --cache-control none -k regex:"triton|transpose" \\
        --metrics gpu__time_duration.sum,smsp__inst_executed.sum,launch__grid_size,launch__block_size,\\
launch__registers_per_thread,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic \\
        --csv python3 scripts/probe_small_transpose.py [variant ...] > ncu.csv

Session 10 (H200, v2 only): 136,192 warp instructions for v2 bf16 against torch.compile's 27,136
(docs/runs/2026-12-01-h200-ncu_small_transpose.csv); v8_lean_tiles is the answer."""
import sys

import torch

from kernelab.ops import discover, run_variant
from kernelab.ops.base import Case


def main(names: list[str]) -> int:
    if not torch.cuda.is_available():
        print("probe_small_transpose: needs a GPU (it exists to be profiled)", file=sys.stderr)
        return 2
    op = discover()["transpose"]
    variants = [op.variant(n) for n in (names or ["v2_smem_padded", "v8_lean_tiles"])]
    for dt in ("bfloat16", "float32"):
        case = Case((256, 512), dt)
        inputs = op.make_inputs(case, 0)
        outputs = op.make_outputs(case, inputs)
        compiled = op.peers(case)["torch.compile"]
        for rounds in (3, 5):  # warm-up (compiles, autotunes), then the rounds ncu is for
            for _ in range(rounds):
                compiled(inputs)
                for v in variants:
                    run_variant(op, v, case, inputs, outputs)
            torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
