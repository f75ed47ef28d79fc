"""Host side of v8_cluster_multicast: v7's tensor maps, except that B's box is half a panel
(128 x 64: each block of a 2-block cluster multicasts its half to both), and a persistent
grid of whole clusters: as many as the occupancy API says fit at once, capped by the number
of tile pairs."""

from __future__ import annotations

from kernelab.gpu import device_info, tensormap
from kernelab.ops.gemm.op import check_alignment


def launch(op, kernel, variant, case, inputs, outputs):
    m, n, k = case.shape
    if m == 0 or n == 0:
        return
    check_alignment(variant, inputs)
    a, b, c = inputs["a"], inputs["b"], outputs["c"]
    g = op.geometry(variant, case)
    bm, bn = g.tile
    bk = variant.meta_int("bk")
    cl = variant.meta_int("cluster")
    map_a = tensormap.tensor_map_2d(a, box_rows=bm, box_cols=bk, swizzle=128)
    map_b = tensormap.tensor_map_2d(b, box_rows=bn // cl, box_cols=bk, swizzle=128)
    tiles_m, tiles_n = -(-m // bm), -(-n // bn)
    pairs = -(-tiles_m // cl) * tiles_n  # cluster-sized units of work
    fit = tensormap.max_active_clusters(kernel, g.block, (cl, 1, 1), g.smem)
    if fit is None:  # the driver could not say: one cluster per pair of SMs (correct, maybe a short 2nd wave)
        fit = device_info(a.device.index).sm_count // cl
    grid = cl * min(pairs, fit)
    tensormap.launch(kernel, grid, g.block, map_a, map_b, c, m, n, k, shared_mem=g.smem, cluster=(cl, 1, 1))
