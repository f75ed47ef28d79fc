"""Launch overhead (seeds/000 §5 and §9.5 (2); seeds/003 "streams and graphs"; seeds/004 §4.3).

Three numbers, each through kernelab.bench:
- host time to launch one kernel (Measurement.host_enqueue_s of a near-empty kernel: the
  median of the eager calls graph mode makes before it captures);
- what a kernel with about 10 us of memory work loses to the fixed cost of a launch (the
  GPU-side latency before its first warp and the tail after its last): the same kernel at two
  sizes, t = a + b x bytes, loss = a / t at the 10 us size;
- the cost of one launch inside a replayed CUDA graph (graph mode's time per launch).
"""

from __future__ import annotations

from ._common import about, fmt_time, load_kernels, pick, pow2, timed, vector_add
from .base import Check, Verdict, experiment

HOST_LAUNCH = "host time to launch one kernel (kernelab, eager)"
LOSS = "share of a ~10 us kernel's time lost to launch latency and tail"
GRAPH_LAUNCH = "time per launch of a tiny kernel inside a replayed CUDA graph"

HOST_RANGE_US = (5.0, 10.0)  # seeds/003 "每次约 5–10 µs"; seeds/004 §4.3 "开销约5-10微秒"
LOSS_PCT = 50.0  # seeds/000 §9.5 (2): "对一个 10 µs 的小 kernel（decode 阶段的典型情形）就是 50%"
GRAPH_MAX_US = 1.0  # seeds/004 §4.3: graph launch overhead "降至亚微秒级"
TARGET_WORK_S = 10e-6


def fixed_cost(t_small: float, bytes_small: float, t_large: float, bytes_large: float) -> tuple[float, float]:
    """(a, b) of t = a + b * bytes through two measured points: a is the fixed cost of one launch."""
    b = (t_large - t_small) / (bytes_large - bytes_small)
    return t_small - b * bytes_small, b


def launch_verdict(host_launch_s: float, loss_fraction: float, graph_launch_s: float) -> Verdict:
    lo, hi = about(LOSS_PCT)
    return Verdict([
        Check(HOST_LAUNCH, host_launch_s * 1e6, *HOST_RANGE_US, "us"),
        Check(LOSS, 100.0 * loss_fraction, lo, min(hi, 100.0), "%"),
        Check(GRAPH_LAUNCH, graph_launch_s * 1e6, None, GRAPH_MAX_US, "us"),
    ])


@experiment("launch_overhead", title="What a kernel launch costs, and what CUDA graphs save",
            claim="Launching a kernel costs about 5-10 us of host time; a kernel with about 10 us of work loses "
                  "about half its time to launch latency and tail effects; replaying launches from a CUDA graph "
                  "cuts the per-launch cost below a microsecond.",
            source="seeds/000 §9.5 (2); seeds/003 §sync and streams; seeds/004 §4.3")
def launch_overhead(ctx):
    import torch

    x = torch.zeros(1, device="cuda")
    touch = load_kernels("launch").kernel("touch")

    def one_launch():
        touch(x, grid=1, block=32)
    one_launch.__name__ = "touch (1 block, near-empty)"
    g = timed(ctx, one_launch, "near-empty kernel", mode="graph", key="touch_graph")
    host = g.host_enqueue_s
    ctx.log(f"host time per eager launch (kernelab): {fmt_time(host)}")
    tg = timed(ctx, lambda: x.add_(1.0), "torch x.add_(1) (one elementwise kernel)", mode="graph", key="torch_graph")
    ctx.log(f"host time per eager launch (torch): {fmt_time(tg.host_enqueue_s)}")

    n_large = pick(ctx, quick=1 << 26, full=1 << 28)
    large = vector_add("v2", n_large)
    ml = timed(ctx, large, f"vector_add v2 n={pow2(n_large)}", work_bytes=large.bytes, key="v2_large")
    per_byte = ml.median_s / large.bytes
    n_small = max(4096, int(TARGET_WORK_S / per_byte / 12) // 4096 * 4096)  # 12 bytes per fp32 element
    small = vector_add("v2", n_small)
    ms = timed(ctx, small, f"vector_add v2 n={n_small:,} (~10 us of memory work)", work_bytes=small.bytes,
               key="v2_10us")
    a, b = fixed_cost(ms.median_s, small.bytes, ml.median_s, large.bytes)
    loss = a / ms.median_s
    ctx.log(f"fixed cost per launch (GPU side): {fmt_time(a)}; the ~{fmt_time(b * small.bytes)} kernel takes "
            f"{fmt_time(ms.median_s)}: {100 * loss:.0f}% lost")
    ctx.record("host_launch_s", host)
    ctx.record("torch_host_launch_s", tg.host_enqueue_s)
    ctx.record("fixed_cost_s", a)
    ctx.record("seconds_per_byte", b)
    ctx.record("n_10us", n_small)
    return launch_verdict(host, loss, g.median_s)
