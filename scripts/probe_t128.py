"""Session 29 probe: v4_dispatch's softmax_dy_t128_c16_f32 against v12 built with the same knobs (threads 128,
3 stages), fp32 2048 x 131072: the plan, the clusters the driver says fit, and a warm-L2 timing of each (now
probe_full29.timed's hot mode; the figures in NOTES.md, session 29, are from its first form, 20 plain launches), then
v4's instance at grids of 6-16 clusters (the first form launched 16 times as many: `grid` counts clusters when
`cluster=` is given, so its grid figures are not recorded anywhere)."""
import dataclasses
import sys
from pathlib import Path

import torch

from kernelab.gpu import tensormap
from kernelab.ops import discover, load_variant
from kernelab.ops.base import Case
from kernelab.ops.softmax import op as sop

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_full29 import timed  # noqa: E402

OP = discover()["softmax"]
v12 = OP.variant("v12_dynamic_rows")
v4 = OP.variant("v4_dispatch")
builds = {"v12 t128 s3": dataclasses.replace(v12, meta={**v12.meta, "threads": "128", "stages": "3"}),
          "v4 only t128": dataclasses.replace(v4, meta={**v4.meta, "dispatch_only": "dynamic_t128"}),
          "v4": v4}
case = Case((2048, 131072), "float32")
inputs = OP.make_inputs(case, 0, "cuda")
outputs = OP.make_outputs(case, inputs)
cc = torch.cuda.get_device_capability()


for rnd in range(2):
    for label, v in builds.items():
        mod = load_variant(OP, v)
        p = OP.plan(v, 131072, cc, "float32")
        k = mod.kernel(f"{p.name}_f32")
        fit = tensormap.max_active_clusters(k, p.block, (p.cluster, 1, 1), p.smem)
        grid = sop.persistent_grid(k, p, 2048)
        kc = mod.kernel(OP.kernel_name("float32"))
        us = timed(lambda: OP.launch(kc, v, case, inputs, outputs), warm=True)
        print(f"{label:14s} {p} fit={fit} grid={grid} {us:.1f} us", flush=True)
    v = builds["v4 only t128"]
    mod = load_variant(OP, v)
    p = OP.plan(v, 131072, cc, "float32")
    k = mod.kernel(f"{p.name}_f32")
    work = sop.dynamic_work(inputs["x"].device)
    for clusters in (6, 7, 8, 10, 12, 14, 16):
        us = timed(lambda: k(inputs["x"], outputs["y"], 2048, 131072, work, grid=clusters, block=128,
                             cluster=16, shared_mem=p.smem), warm=True)  # with cluster=, grid counts clusters
        print(f"v4 t128 at {clusters:2d} clusters: {us:.1f} us", flush=True)
    ok = torch.allclose(outputs["y"], torch.softmax(inputs["x"], -1), rtol=1e-4, atol=1e-6)
    print("last output correct:", ok, "counters", work.tolist(), flush=True)
