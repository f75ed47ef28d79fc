"""The GEMM progression table (variant -> TFLOP/s, ratio to cuBLAS in the same run) from a results
JSON of `kernelab run`, as Markdown: what NOTES.md and the issue's closing note quote.

Usage: python3 scripts/gemm_progression.py docs/runs/nvidia-h200-<stamp>.json
"""

from __future__ import annotations

import sys

from kernelab.report.results import read_json  # .json or .json.gz

SHAPES = {"float32": ("4096x4096x4096", "2048x2048x2048"), "bfloat16": ("4096x4096x4096", "8192x8192x8192")}


def progression(run: dict) -> str:
    times: dict = {}
    for r in run["rows"]:
        if r["op"] == "gemm" and r["status"] == "ok":
            times.setdefault((r["case"]["dtype"], r["case"]["label"].split()[0]), {})[r["name"]] = (
                r["measurement"]["median_s"], r["work"]["flops"])
    lines = [f"commit {run['git']['commit']}, {run['created'][:16]}: TFLOP/s (x cuBLAS, same run)", "",
             "| dtype | variant | first shape | second shape |", "|---|---|---|---|"]
    for dtype, shapes in SHAPES.items():
        lines.append(f"| {dtype} | shape | " + " | ".join(shapes) + " |")
        names = sorted({n for s in shapes for n in times.get((dtype, s), {})}, key=lambda n: (n != "cublas", n))
        for n in names:
            cells = []
            for s in shapes:
                t = times.get((dtype, s), {})
                if n not in t:
                    cells.append("")
                    continue
                sec, flops = t[n]
                ratio = "" if n == "cublas" else f" ({t['cublas'][0] / sec:.3f}x)"
                cells.append(f"{flops / sec / 1e12:.1f}{ratio}")
            lines.append(f"| {dtype} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(progression(read_json(sys.argv[1])))
