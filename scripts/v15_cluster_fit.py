"""How many clusters of v15_any_cluster's instances (C x 1024 threads, one stage of dynamic shared
memory) the GPU holds at once (the driver's occupancy query, as the launch sizes its grid), per width.

Usage (GPU machine): PYTHONPATH=src python3 scripts/v15_cluster_fit.py
Session 15, H200: clusters of 3 fit 39 times (117 of 132 SMs), 5 22 (110), 6 17 (102), 7 15 (105),
8 15 (120); 1 and 2 use all 132 (docs/runs/2026-12-01-h200-v15_cluster_fit.txt)."""
import torch
from kernelab.ops import discover, load_variant
from kernelab.ops.softmax import op as so
from kernelab.gpu import device_info
OP = discover()["softmax"]; V15 = OP.variant("v15_any_cluster"); mod = load_variant(OP, V15)
cc = torch.cuda.get_device_capability()
print("SMs", device_info().sm_count)
for n, dt in ((65536, "bfloat16"), (131072, "bfloat16"), (151936, "bfloat16"), (196608, "bfloat16"),
              (163840, "float32"), (196608, "float32"), (229376, "float32"), (262144, "float32")):
    p = so.any_cluster_plan(n, cc, dt)
    k = mod.kernel(f"{p.name}_{'bf16' if dt == 'bfloat16' else 'f32'}")
    g = so.persistent_grid(k, p, 10**6)
    print(f"{dt} {n}: C={p.cluster} smem={p.smem} clusters={g} SMs used={g * p.cluster}")
