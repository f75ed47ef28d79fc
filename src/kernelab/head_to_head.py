"""Head to head: the close calls of a run, settled by paired, interleaved timing.

The suite times each candidate on its own, one after another. Two candidates at the same
DRAM ceiling then differ by the run's drift, not by their code: session 14's layernorm fp32
read 0.989x torch.compile in the timed run and 1.03x under ncu, in the reverse order. And the
"x copy" column divides by a copy ceiling measured once per device (cached), not beside the
kernel. So after the main pass, for each case's best variant the suite times:

- against the best peer, when the two are within PEER_WINDOW (12%) of each other (a close call);
- against a device-to-device copy that moves the same bytes (`torch` copy_ of fp32, half the
  case's bytes each way), when the case is memory-bound and moves at least COPY_MIN_BYTES
  (the issue's "bench size": 256 MiB);

each with bench.compare(): A and B alternate in random order within each round, in the mode
the variant was timed in (cold: L2 flushed before each sample), and the ratio's CI comes from
resampling the pairs, so drift that moves both cancels. The result lands in the variant row's
metrics["paired"][rival] = {speedup, ci (of the speedup), verdict, n, ...}; "speedup" > 1
means the variant is faster.

Pairs run as candidates of kind "h2h" named "VARIANT vs RIVAL" through the suite's worker, so a
pair that crashes or hangs costs only itself; their rows are folded into the variant rows and
not kept as rows of their own.
"""

from __future__ import annotations

import time

from .report.results import Row

COPY = "copy"  # the rival name of the same-bytes device-to-device copy
COPY_MIN_BYTES = 256 << 20  # a copy pair only for cases that move at least this much
# A peer pair only when x_best_peer is within 1 +- this: 12% covers the small-shape target (graph-mode
# time within 1.1x torch's: x_best_peer >= 0.91), where an unpaired gelu_bias 256 x 1024 bf16 read
# 0.913 in one run and 0.898 in the next.
PEER_WINDOW = 0.12
SEP = " vs "


def pair_name(variant: str, rival: str) -> str:
    return f"{variant}{SEP}{rival}"


def mode_key(label: str, name: str) -> str:
    """The key of CandidateTask.modes: a pair's timing mode, per case label and pair name."""
    return f"{label}|{name}"


def split_pair(name: str) -> tuple[str, str]:
    if SEP not in name:
        raise ValueError(f"not a head-to-head pair name: {name!r} (expected 'VARIANT{SEP}RIVAL')")
    variant, rival = name.split(SEP, 1)
    return variant, rival


def best_variants(rows: list[Row]) -> dict[tuple[str, str], Row]:
    """(op, case label) -> the fastest ok variant row of that case."""
    best: dict[tuple[str, str], Row] = {}
    for r in rows:
        t = r.metrics.get("time_s")
        if r.kind != "variant" or r.status != "ok" or not t:
            continue
        key = (r.op, r.case.get("label", ""))
        if key not in best or t < best[key].metrics["time_s"]:
            best[key] = r
    return best


def plan_pairs(rows: list[Row], copy_min_bytes: int | None = None,
               peer_window: float | None = None) -> list[tuple[str, dict, str, str]]:
    """The pairs worth timing head to head: (op, case dict, pair name, mode) per pair."""
    copy_min_bytes = COPY_MIN_BYTES if copy_min_bytes is None else copy_min_bytes
    peer_window = PEER_WINDOW if peer_window is None else peer_window
    pairs = []
    for (op, _), r in best_variants(rows).items():
        mode = r.metrics.get("mode") or "cold"
        x, peer = r.metrics.get("x_best_peer"), r.metrics.get("best_peer")
        if x is not None and peer and abs(x - 1.0) <= peer_window:
            pairs.append((op, r.case, pair_name(r.name, peer), mode))
        if r.metrics.get("bound") == "memory" and r.work.get("bytes", 0) >= copy_min_bytes:
            pairs.append((op, r.case, pair_name(r.name, COPY), mode))
    return pairs


def fold(rows: list[Row], pair_rows: list[Row]) -> int:
    """Attach each pair's result to its variant's row (metrics["paired"][rival]); returns how many
    were attached. A pair that failed leaves {"status", "detail"} in place of a result."""
    by_key = {(r.op, r.case.get("label", ""), r.name): r for r in rows if r.kind == "variant"}
    n = 0
    for p in pair_rows:
        variant, rival = split_pair(p.name)
        target = by_key.get((p.op, p.case.get("label", ""), variant))
        if target is None:
            continue
        paired = target.metrics.setdefault("paired", {})
        paired[rival] = dict(p.metrics) if p.status == "ok" else {"status": p.status, "detail": p.detail[:500]}
        n += 1
    return n


def format_paired(result: dict | None, *, unit: str = "x", ci: bool = True) -> str:
    """One pair's result (metrics["paired"][rival]) as text, for every table that shows one:
    '1.003x [0.998, 1.008] same' is the variant's speedup over the rival, its 95% CI and the verdict.

    unit follows each number ('' where the column header already says x); ci=False leaves out the
    bracket (scripts/paired_repeats.py: one narrow column per run). A pair that failed gives its
    status ('hang'; '?' if it has none); no pair timed (None) gives ''.
    """
    if result is None:
        return ""
    if "speedup" not in result:
        return result.get("status") or "?"
    text = f"{result['speedup']:.3f}{unit}"
    if ci:
        lo, hi = result["ci"]
        text += f" [{lo:.3f}, {hi:.3f}]"
    return f"{text} {result['verdict']}"


# ----------------------------------------------------------------------------- in the worker

def _copy_twin(n_bytes: int):
    """A torch copy_ that moves `n_bytes` in all: fp32, half of them read and half written."""
    import torch

    n = max(1, n_bytes // 8)  # fp32 elements each way
    src = torch.empty(n, dtype=torch.float32, device="cuda").normal_()
    dst = torch.empty_like(src)

    def fn():
        dst.copy_(src)
    return fn


def _inverse(x: float) -> float:
    return 1.0 / x if x and x > 0 else float("inf")


def measure_pair(op, case, name: str, mode: str, seed: int, quick: bool, peers: dict) -> Row:
    """Time one pair interleaved; returns a Row of kind "h2h" whose metrics hold the speedup of the
    variant over the rival (> 1: the variant is faster), its CI, the verdict and the sample counts.
    `peers` is the case's peers (name -> callable), built once per case by the worker."""
    from .bench import compare
    from .check import verify_outputs
    from .ops.build import run_variant

    t0 = time.perf_counter()
    row = Row(op.name, name, "h2h", case.to_dict())
    variant_name, rival = split_pair(name)
    variant = op.variant(variant_name)
    inputs = op.make_inputs(case, seed, "cuda")
    outputs = op.make_outputs(case, inputs)

    def fa():
        run_variant(op, variant, case, inputs, outputs)

    moved = op.work(case).bytes
    if rival == COPY:
        fb = _copy_twin(moved)
    else:
        if rival not in peers:
            row.status, row.reason, row.detail = "skipped", "unavailable", f"no peer {rival!r} for this case"
            return row
        peer = peers[rival]

        def fb():
            peer(inputs)
    # One eager call each first: torch.compile compiles on its first call, which must not fall
    # inside a graph capture (mode "graph") nor into the warm-up's timing.
    import torch

    fa()
    fb()
    torch.cuda.synchronize()
    budget = dict(target_rel=0.01, max_wall_s=1.5) if quick else dict(target_rel=0.002, max_wall_s=2.5)
    c = compare(fa, fb, mode=mode, names=(variant_name, rival), min_samples=20, seed=seed, **budget)
    after = verify_outputs(op, case, inputs, outputs)
    if not after.ok:  # the variant was checked in the main pass; this guards the interleaved samples
        row.status, row.reason = "failed", after.reason or "mismatch"
        row.detail = f"the outputs of the paired iterations are wrong: {after.detail}"
        return row
    lo, hi = c.ci  # of median(variant) / median(rival); the verdict is the variant's ("faster": it wins)
    row.metrics = {
        "speedup": c.speedup, "ci": [_inverse(hi), _inverse(lo)], "verdict": c.verdict,
        "median_s": c.median_a_s, "rival_median_s": c.median_b_s, "n": min(c.n_a, c.n_b), "mode": mode,
        "tol": c.tol, "confidence": c.confidence,
    }
    if rival == COPY:
        row.metrics["copy_bytes"] = moved // 8 * 8
    row.timings["total_s"] = time.perf_counter() - t0
    return row
