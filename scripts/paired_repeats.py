"""Issue 7's paired ratios across several runs (kernelab/head_to_head.py): for each case, the best
variant's speedup over a same-bytes copy and over the best peer, one column per run, so the
run-to-run spread of the paired figures is visible beside each target.

Usage: python3 scripts/paired_repeats.py RUN.json [RUN.json ...]
"""

from __future__ import annotations

import sys

from kernelab.head_to_head import format_paired
from kernelab.report.results import read_json  # .json or .json.gz


def best_pairs(run: dict) -> dict:
    """(op, case label) -> (variant, paired dict) for the fastest ok variant that has pairs."""
    best: dict = {}
    for r in run["rows"]:
        t = (r.get("metrics") or {}).get("time_s")
        if r["kind"] != "variant" or r["status"] != "ok" or not t:
            continue
        key = (r["op"], r["case"]["label"])
        if key not in best or t < best[key][0]:
            best[key] = (t, r["name"], r["metrics"].get("paired") or {})
    return {k: (name, paired) for k, (_, name, paired) in best.items() if paired}


def table(runs: list[dict], names: list[str]) -> str:
    per_run = [best_pairs(r) for r in runs]
    keys = list(dict.fromkeys(k for pr in per_run for k in pr))
    head = "| op | case | vs | " + " | ".join(names) + " |"
    lines = [head, "|" + "---|" * (3 + len(names))]
    for op, label in keys:
        rivals = list(dict.fromkeys(rv for pr in per_run for rv in pr.get((op, label), ("", {}))[1]))
        for rival in sorted(rivals, key=lambda x: x != "copy"):
            cells = [format_paired(pr.get((op, label), ("", {}))[1].get(rival), unit="", ci=False)
                     for pr in per_run]
            lines.append(f"| {op} | {label} | {rival} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    paths = sys.argv[1:]
    if not paths:
        sys.exit(__doc__)
    runs = [read_json(p) for p in paths]
    print(table(runs, [f"{r.get('git', {}).get('commit', '?')[:7]} {r.get('created', '')[:16]}" for r in runs]))
