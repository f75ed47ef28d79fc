"""`kernelab compare A.json B.json`: per row, is B faster, slower, the same, or unclear?

Rows are matched by (op, name, case label). The verdict comes from the bench module's
statistics on the stored samples of both runs (every sample is kept in the JSON), in the
spirit of nvbench's compare script: a difference inside the noise is "same" or "unclear",
never a speed-up.
"""

from __future__ import annotations

from .results import Results


def compare_results(a: Results, b: Results) -> list[dict]:
    from ..bench import Measurement, compare_measurements

    index = {r.key: r for r in a.rows}
    out = []
    for rb in b.rows:
        ra = index.get(rb.key)
        if ra is None:
            continue
        row = {"op": rb.op, "name": rb.name, "kind": rb.kind, "case": rb.case.get("label", ""),
               "a_s": ra.metrics.get("time_s"), "b_s": rb.metrics.get("time_s")}
        if ra.status != "ok" or rb.status != "ok" or not ra.measurement or not rb.measurement:
            row.update(verdict="n/a", ratio=None, detail=f"A {ra.status}, B {rb.status}")
        else:
            # B relative to A: ratio = median(B) / median(A); "faster" means B is faster.
            c = compare_measurements(Measurement.from_dict(rb.measurement), Measurement.from_dict(ra.measurement))
            row.update(verdict=c.verdict, ratio=c.ratio, ci=list(c.ci), detail=c.note)
        out.append(row)
    return out
