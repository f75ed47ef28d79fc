"""Issue 7's table: the best kernelab variant of each memory-bound case in a `kernelab run` results
JSON, with its time, bandwidth, ratio to the copy ceiling measured in that run and ratio to the
best peer (torch eager / torch.compile; the transpose baseline `copy_(m.t())` is not a peer), and,
where the run timed them head to head (kernelab/head_to_head.py), the paired ratios: the variant
against a same-bytes copy and against the best peer, interleaved, with the 95% CI and the verdict.

Usage: python3 scripts/membound_table.py docs/runs/nvidia-h200-<stamp>.json
"""

from __future__ import annotations

import collections
import sys

from kernelab.head_to_head import format_paired
from kernelab.report.results import read_json  # .json or .json.gz

OPS = ("gelu_bias", "layernorm", "rmsnorm", "softmax", "sum", "transpose")
NOT_PEERS = ("copy_(m.t())",)  # runs before the suite knew OpSpec.baselines counted it as a peer


def table(run: dict) -> str:
    copy = run["ceilings"]["copy_bytes_per_s"]
    cases = collections.defaultdict(list)
    for r in run["rows"]:
        if r["status"] == "ok" and r["op"] in OPS:
            cases[(r["op"], r["case"]["label"])].append(r)
    lines = ["| op | case | best variant | us | TB/s | x copy | x best peer (peer) | x copy, paired | x peer, paired |",
             "|---|---|---|---|---|---|---|---|---|"]
    for (op, label), rows in cases.items():
        peers = {r["name"]: r["measurement"]["median_s"] for r in rows if r["kind"] == "peer" and r["name"] not in NOT_PEERS}
        variants = {r["name"]: r for r in rows if r["kind"] == "variant"}
        if not variants or not peers:
            continue
        best = min(variants, key=lambda n: variants[n]["measurement"]["median_s"])
        t = variants[best]["measurement"]["median_s"]
        peer = min(peers, key=peers.get)
        moved = rows[0]["work"]["bytes"]
        mode = " (graph)" if variants[best]["measurement"]["mode"] == "graph" else ""
        paired = variants[best].get("metrics", {}).get("paired") or {}  # runs before session 16 have none
        x_copy, x_peer = (format_paired(paired.get(rival), unit="") for rival in ("copy", peer))  # header says x
        lines.append(f"| {op} | {label}{mode} | {best} | {t * 1e6:.1f} | {moved / t / 1e12:.2f} | {moved / t / copy:.3f} | "
                     f"{peers[peer] / t:.3f} ({peer}) | {x_copy} | {x_peer} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(read_json(sys.argv[1])))
