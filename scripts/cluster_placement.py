"""How many clusters (or blocks) the GPU holds at once for softmax v7's, v10's and v11's plans at
2048 x 131072 (the driver's max_active_clusters and the occupancy API), bf16 and fp32.

Usage (GPU machine): PYTHONPATH=src python3 scripts/cluster_placement.py"""
import sys

from kernelab.gpu import device_info, tensormap
from kernelab.ops import discover, load_variant


def main() -> int:
    op = discover()["softmax"]
    print("SMs", device_info().sm_count)
    for name in ("v7_bulk_smem", "v10_staged_regs", "v11_group_regs"):
        v = op.variant(name)
        mod = load_variant(op, v)
        for dt, suffix in (("bfloat16", "bf16"), ("float32", "f32")):
            p = op.plan(v, 131072, (9, 0), dt)
            k = mod.kernel(f"{p.name}_{suffix}")
            per_sm = k.max_active_blocks_per_sm(p.block, p.smem)
            if p.cluster:
                fit = tensormap.max_active_clusters(k, p.block, (p.cluster, 1, 1), p.smem)
                print(name, dt, p, "max_active_clusters", fit, "blocks/SM", per_sm)
            else:
                print(name, dt, p, "blocks/SM", per_sm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
