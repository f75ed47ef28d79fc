"""Bandwidth claims of seeds/000 §9: the naive vector add against the roof, bf16 against fp32,
what the L2 flush changes, and why a small grid cannot fill the memory system.

Every kernel here is the vector_add op's (ops/vector_add: v0 is the seeds' kernel, one
element per thread; v2 adds 16-byte vectors and a grid-stride loop) except the pointer chase
(kernels/latency.cu). Bandwidth counts the bytes that must move: 3 n x element size.
"""

from __future__ import annotations

from ._common import EFFECT, about, achievable_bandwidth, fmt_bw, fmt_time, load_kernels, nominal_bandwidth, pick, \
    pow2, timed, vector_add
from .base import Check, Verdict, experiment

# ---- 1. the naive vector add against nominal and achievable bandwidth -------------------------

NAIVE_PCT = "naive v0 (1 element/thread) fp32, % of nominal bandwidth"
BEST_PCT = "v2 (16-byte vectors + grid-stride loop) fp32, % of achievable bandwidth"

# seeds/000 §9.5: "等效带宽 1.6–1.9 TB/s，即标称值的 80–92%";
# (4): "它们能把 elementwise kernel 从 80% 推到可达带宽的 95% 以上"
NAIVE_RANGE_PCT = (80.0, 92.0)
BEST_MIN_PCT = 95.0


def vector_add_verdict(nominal: float, achievable: float, bw_naive: float, bw_best: float) -> Verdict:
    """Checks from measured bandwidths (bytes/s) and the device's nominal figure."""
    return Verdict([
        Check(NAIVE_PCT, 100.0 * bw_naive / nominal, *NAIVE_RANGE_PCT, "%"),
        Check(BEST_PCT, 100.0 * bw_best / achievable, BEST_MIN_PCT, None, "%"),
    ], note="achievable = the bandwidth of a device copy (torch copy_) measured in the same run")


@experiment("vector_add_bandwidth", title="How close the naive vector add gets to the bandwidth roof",
            claim="The seeds' vector add (one element per thread) reaches 80-92% of the GPU's nominal memory "
                  "bandwidth; 16-byte vector loads plus a grid-stride loop push it past 95% of the achievable "
                  "bandwidth (a device-to-device copy).",
            source="seeds/000 §9.5 (1), (4)")
def vector_add_bandwidth(ctx):
    n = pick(ctx, quick=1 << 26, full=1 << 28)
    nominal = nominal_bandwidth()
    ctx.log(f"nominal bandwidth (spec_for: datasheet, or memory clock x bus width): {fmt_bw(nominal)}")
    achievable = achievable_bandwidth(ctx)
    bws = {}
    for variant in ("v0", "v1", "v2"):
        fn = vector_add(variant, n)
        label = f"vector_add {fn.__name__.split('/')[1]} fp32 n={pow2(n)}"
        m = timed(ctx, fn, label, work_bytes=fn.bytes, key=f"vector_add_{variant}")
        bws[variant] = fn.bytes / m.median_s
        del fn
    import torch

    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    m = timed(ctx, lambda: torch.add(a, b), f"torch.add fp32 n={pow2(n)}", work_bytes=12 * n, key="torch_add")
    bws["torch.add"] = 12 * n / m.median_s
    ctx.record("bandwidth_bytes_per_s", bws)
    ctx.record("nominal_bandwidth", nominal)
    ctx.log(f"v0 {100 * bws['v0'] / nominal:.1f}% of nominal; v2 {100 * bws['v2'] / achievable:.1f}% of achievable")
    return vector_add_verdict(nominal, achievable, bws["v0"], bws["v2"])


# ---- 2. bf16 against fp32 ---------------------------------------------------------------------

BF16_RATIO = "bf16 / fp32 time, naive v0"
# seeds/000 §9.5: fp32 "1.7–2.0 ms", bf16 "0.85–1.0 ms" (A100, n = 2^28): only their ratio carries over.
SEED_FP32_MS = (1.7, 2.0)
SEED_BF16_MS = (0.85, 1.0)


def bf16_ratio_range() -> tuple[float, float]:
    """The bf16/fp32 time ratios the seeds' two intervals allow: 0.425..0.588."""
    return SEED_BF16_MS[0] / SEED_FP32_MS[1], SEED_BF16_MS[1] / SEED_FP32_MS[0]


def bf16_verdict(t_fp32: float, t_bf16: float) -> Verdict:
    return Verdict([Check(BF16_RATIO, t_bf16 / t_fp32, *bf16_ratio_range(), "x")],
                   note="half the bytes should take half the time when the kernel is bandwidth-bound")


@experiment("bf16_vs_fp32", title="bf16 vector add against fp32",
            claim="The bf16 vector add moves half the bytes of the fp32 one and takes about half its time "
                  "(0.85-1.0 ms against 1.7-2.0 ms at n = 2^28 on an A100: a ratio of 0.43-0.59).",
            source="seeds/000 §9.5")
def bf16_vs_fp32(ctx):
    n = pick(ctx, quick=1 << 26, full=1 << 28)
    t = {}
    for variant in ("v0", "v2"):
        for dtype in ("float32", "bfloat16"):
            fn = vector_add(variant, n, dtype)
            m = timed(ctx, fn, f"vector_add {variant} {dtype} n={pow2(n)}", work_bytes=fn.bytes, key=f"{variant}_{dtype}")
            t[(variant, dtype)] = m.median_s
            del fn
    ratio_v2 = t[("v2", "bfloat16")] / t[("v2", "float32")]
    ctx.log(f"bf16/fp32: v0 {t[('v0', 'bfloat16')] / t[('v0', 'float32')]:.3f}, v2 (vectorised) {ratio_v2:.3f}")
    ctx.record("ratio_v2_vectorised", ratio_v2)
    return bf16_verdict(t[("v0", "float32")], t[("v0", "bfloat16")])


# ---- 3. the L2 flush ---------------------------------------------------------------------------

L2_SMALL = "cold / hot time at n=2^20 (12 MiB, fits in L2)"
L2_LARGE = "cold / hot time at n=2^28 (3 GiB)"


def l2_flush_verdict(cold_small: float, hot_small: float, cold_large: float, hot_large: float) -> Verdict:
    return Verdict([
        Check(L2_SMALL, cold_small / hot_small, 1.0 + EFFECT, None, "x"),
        Check(L2_LARGE, cold_large / hot_large, 1.0 / (1.0 + EFFECT), 1.0 + EFFECT, "x"),
    ], note="cold: the protocol flushes L2 (memset of >= 2 x L2) before every sample; hot: no flush")


@experiment("l2_flush", title="What the L2 flush changes",
            claim="Without a flush, a working set that fits in L2 (n = 2^20: three 4 MiB arrays) is served from "
                  "L2 and times faster than memory allows, so flushing L2 before each sample changes the result; "
                  "at n = 2^28 (3 GiB, far larger than L2) flushing makes no difference.",
            source="seeds/000 §9.2")
def l2_flush(ctx):
    import torch

    from ..gpu import device_info

    l2 = device_info().l2_bytes
    ctx.log(f"this GPU's L2: {l2 >> 20} MiB")
    res = {}
    for n in (1 << 20, 1 << 28):
        fn = vector_add("v0", n)
        cold = timed(ctx, fn, f"v0 fp32 n={pow2(n)} cold", mode="cold", work_bytes=fn.bytes, key=f"cold_{pow2(n)}")
        hot = timed(ctx, fn, f"v0 fp32 n={pow2(n)} hot", mode="hot", work_bytes=fn.bytes, key=f"hot_{pow2(n)}")
        res[n] = (cold.median_s, hot.median_s)
        ctx.record(f"working_set_bytes_{pow2(n)}", fn.bytes)
        del fn
        torch.cuda.empty_cache()
    ctx.record("l2_bytes", l2)
    (cs, hs), (cl, hl) = res[1 << 20], res[1 << 28]
    ctx.log(f"cold/hot: {cs / hs:.2f}x at 2^20, {cl / hl:.3f}x at 2^28; hot 2^20 reads at {fmt_bw(12 * 2**20 / hs)}")
    return l2_flush_verdict(cs, hs, cl, hl)


# ---- 5. a grid too small to fill the GPU ------------------------------------------------------

LATENCY = "memory load latency (pointer chase over random 128-byte lines, L2 flushed)"
LITTLE = "bandwidth at n=10^5 / Little's-law bound (bytes in flight / latency)"
SMALL_VS_LARGE = "bandwidth at n=10^5 / at n=2^28 (same kernel, v0)"
SEED_LATENCY_NS = 600.0  # seeds/000 §9.5 (3): "约 600 ns 的 HBM 延迟"
SMALL_N = 10**5


def little_bound(bytes_in_flight: float, latency_s: float) -> float:
    """Little's law: with at most `bytes_in_flight` outstanding, bandwidth <= bytes_in_flight / latency."""
    return bytes_in_flight / latency_s


def small_grid_verdict(latency_s: float, bw_small: float, bw_large: float, in_flight_bytes: float) -> Verdict:
    return Verdict([
        Check(LATENCY, latency_s * 1e9, *about(SEED_LATENCY_NS), "ns"),
        Check(LITTLE, bw_small / little_bound(in_flight_bytes, latency_s), None, 1.0 + EFFECT, "x"),
        Check(SMALL_VS_LARGE, bw_small / bw_large, None, 1.0 - EFFECT, "x"),
    ], note="bytes in flight at n=10^5: every thread's two 4-byte loads outstanding at once (all threads resident)")


def _pointer_chase(ctx, steps: int, span_bytes: int):
    """fn() chasing `steps` dependent loads through random 128-byte lines of a `span_bytes` buffer."""
    import torch

    mod = load_kernels("latency")
    lines = span_bytes // 128
    words_per_line = 128 // 8
    g = torch.Generator(device="cuda").manual_seed(0)
    order = torch.randperm(lines, device="cuda", generator=g)[: steps + 1] * words_per_line
    nxt = torch.zeros(lines * words_per_line, dtype=torch.int64, device="cuda")
    nxt[order[:-1]] = order[1:]
    out = torch.zeros(1, dtype=torch.int64, device="cuda")
    start = int(order[0].item())
    expected = int(order[-1].item())
    kern = mod.kernel("pointer_chase")

    def fn():
        kern(nxt, start, steps, out, grid=1, block=1)
    fn.check = lambda: int(out.item()) == expected
    fn.keep = (nxt, out)
    return fn


@experiment("small_grid", title="A grid too small to fill the GPU",
            claim="With n = 10^5 (400 blocks of 256) the grid holds too few loads in flight to cover memory "
                  "latency, so the naive kernel cannot reach full bandwidth: bytes in flight ~ bandwidth x "
                  "latency (about 600 ns of HBM latency).",
            source="seeds/000 §9.5 (3)")
def small_grid(ctx):
    from ..gpu import device_info

    info = device_info()
    steps = pick(ctx, quick=1000, full=4000)
    # Each line is visited once per chain and L2 is flushed before each sample, so every load
    # goes to memory; 64 MiB (32 pages of 2 MiB) keeps TLB misses out of the figure.
    span = 64 << 20
    chase = _pointer_chase(ctx, steps, span)
    m = timed(ctx, chase, f"pointer chase, {steps} dependent loads over {span >> 20} MiB", mode="cold", key="chase")
    if not chase.check():
        raise RuntimeError("the pointer chase did not end where its chain does: the kernel is wrong")
    latency = m.median_s / steps
    ctx.log(f"latency per load: {latency * 1e9:.0f} ns ({latency * info.sm_clock_max_mhz * 1e6:.0f} SM clocks at "
            f"{info.sm_clock_max_mhz:.0f} MHz)")
    small = vector_add("v0", SMALL_N)
    blocks = -(-SMALL_N // 256)
    ctx.log(f"n=10^5: {blocks} blocks of 256 on {info.sm_count} SMs ({blocks / info.sm_count:.1f} per SM)")
    ms = timed(ctx, small, "v0 fp32 n=10^5", work_bytes=small.bytes, key="v0_1e5")
    n_large = pick(ctx, quick=1 << 26, full=1 << 28)
    large = vector_add("v0", n_large)
    ml = timed(ctx, large, f"v0 fp32 n={pow2(n_large)}", work_bytes=large.bytes, key="v0_large")
    bw_small, bw_large = small.bytes / ms.median_s, large.bytes / ml.median_s
    in_flight = 8.0 * SMALL_N  # two 4-byte loads per thread, all outstanding together
    achievable = achievable_bandwidth(ctx)
    needed = achievable * latency
    ctx.log(f"to sustain {fmt_bw(achievable)} at {latency * 1e9:.0f} ns: {needed / 1e6:.2f} MB in flight "
            f"({needed / info.sm_count / 1e3:.1f} KB per SM); n=10^5 can have {in_flight / 1e6:.2f} MB in flight, "
            f"so at most {fmt_bw(little_bound(in_flight, latency))}; measured {fmt_bw(bw_small)} "
            f"({fmt_time(ms.median_s)})")
    ctx.record("latency_s", latency)
    ctx.record("bytes_in_flight_needed", needed)
    ctx.record("bytes_in_flight_n1e5", in_flight)
    ctx.record("blocks_n1e5", blocks)
    ctx.record("sm_count", info.sm_count)
    return small_grid_verdict(latency, bw_small, bw_large, in_flight)
