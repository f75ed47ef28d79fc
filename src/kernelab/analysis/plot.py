"""Roofline plots (PNG and SVG) from result rows, so they can be redrawn from stored JSON.

A row is a plain dict, as the results JSON holds it. The keys read (first found wins):

    op                       "op"
    name                     "variant", "name", "impl", "peer"
    is it a peer?            "peer" (bool, or the peer's name), or "kind" == "peer"
    work                     "work": {"bytes", "flops", "flop_unit"}, or those keys at top level
    time (seconds)           "median_s", "time_s", "seconds", or "measurement"/"bench"/"timing": {"median_s"}

Rows without a time or a work model are left out (a failed check has no time). Each op x
variant is a point: x = arithmetic intensity (FLOP/byte), y = achieved FLOP/s, under the
nominal roofs (solid) and the measured ones (dashed) of each FLOP unit present. Variants are
circles, peers other markers (one per peer), one colour per op. Rows with no FLOPs (copies,
transposes) have no place on a log intensity axis; they go to a second panel of achieved
bandwidth against the bandwidth ceilings.

Drawing uses matplotlib's object API on the Agg canvas, never pyplot, so it sets no global
backend and works on a machine without a display.
"""

from __future__ import annotations

import math
from pathlib import Path

from .devices import unit_name
from .errors import AnalysisError
from .roofline import Ceilings, as_ceilings

PEER_MARKERS = ("^", "s", "D", "v", "P", "X", "<", ">")


def _time(row: dict) -> float | None:
    for k in ("median_s", "time_s", "seconds"):
        if isinstance(row.get(k), (int, float)):
            return float(row[k])
    for k in ("measurement", "bench", "timing"):
        sub = row.get(k)
        if isinstance(sub, dict) and isinstance(sub.get("median_s"), (int, float)):
            return float(sub["median_s"])
    return None


def _peer(row: dict) -> str | None:
    p = row.get("peer")
    if isinstance(p, str) and p:
        return p
    if p is True or row.get("kind") == "peer":
        return str(row.get("variant") or row.get("name") or row.get("impl") or "peer")
    return None


def point(row: dict) -> dict | None:
    """A row as {"op", "name", "peer", "bytes", "flops", "unit", "seconds", "intensity",
    "flops_per_s", "bytes_per_s"}, or None if it cannot be placed."""
    t = _time(row)
    work = row.get("work") if isinstance(row.get("work"), dict) else row
    b, f = work.get("bytes"), work.get("flops", 0) or 0
    if not t or t <= 0 or b is None:
        return None
    peer = _peer(row)
    name = str(row.get("variant") or row.get("name") or row.get("impl") or peer or "?")
    unit = work.get("flop_unit", "fp32")
    return {"op": str(row.get("op", "")), "name": name, "peer": peer, "bytes": int(b), "flops": int(f),
            "unit": unit_name(unit) if f else str(unit), "seconds": t,
            "intensity": (f / b) if b else math.inf, "flops_per_s": f / t, "bytes_per_s": b / t}


def plot_roofline(rows: list[dict], out: str | Path, ceilings=None, measured=None, *, title: str | None = None,
                  formats=("png", "svg"), dpi: int = 150) -> list[Path]:
    """Draw the roofline of `rows` and write `out`.png and `out`.svg (the suffix of `out` is ignored).

    ceilings: nominal roofs (a DeviceSpec, Ceilings or device name; default spec_for()).
    measured: measured roofs (MeasuredCeilings, its dict, or Ceilings), optional.
    Returns the files written."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    nominal = as_ceilings(ceilings)
    meas: Ceilings | None = None
    if measured is not None:
        if isinstance(measured, dict):
            from .ceilings import roofline_ceilings

            measured = roofline_ceilings(measured)
        meas = as_ceilings(measured)
    points = [p for p in (point(r) for r in rows) if p is not None]
    if not points:
        raise AnalysisError("no row has both a time and a work model (bytes, flops); nothing to plot")
    compute = [p for p in points if p["flops"] > 0 and p["bytes"] > 0]
    memory_only = [p for p in points if p["flops"] == 0]

    ops = sorted({p["op"] for p in points})
    colours = {op: f"C{i % 10}" for i, op in enumerate(ops)}
    peers = sorted({p["peer"] for p in points if p["peer"]})
    markers = {peer: PEER_MARKERS[i % len(PEER_MARKERS)] for i, peer in enumerate(peers)}

    panels = (1 if compute else 0) + (1 if memory_only else 0)
    fig = Figure(figsize=(7.5 * panels, 5.5), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, panels, squeeze=False)[0]
    k = 0
    if compute:
        ax = axes[k]
        k += 1
        units = sorted({p["unit"] for p in compute})
        xs = [p["intensity"] for p in compute]
        ridges = [c.ridge_point(u) for c in filter(None, (nominal, meas)) for u in units if c.has(u)]
        lo = min(xs + ridges) / 8
        hi = max(xs + ridges) * 8
        grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
        for c, style in ((nominal, "-"), (meas, "--")):
            if c is None:
                continue
            for j, u in enumerate(units):
                if not c.has(u):
                    continue
                ys = [min(c.peak(u), c.bandwidth * x) for x in grid]
                ax.plot(grid, ys, style, color="0.3" if style == "-" else "0.55", lw=1.2,
                        label=f"{c.kind} {u}: {c.peak(u) / 1e12:.0f} TFLOP/s, {c.bandwidth / 1e12:.2f} TB/s")
                ax.annotate(u, (grid[-1], c.peak(u)), fontsize=7, ha="right", va="bottom", color="0.3")
        for p in compute:
            ax.scatter(p["intensity"], p["flops_per_s"], marker=markers.get(p["peer"], "o"),
                       color=colours[p["op"]], s=36, zorder=3, edgecolors="black" if p["peer"] else "none",
                       linewidths=0.5)
            ax.annotate(f"{p['op']}/{p['name']}" if len(ops) > 1 else p["name"], (p["intensity"], p["flops_per_s"]),
                        fontsize=6, xytext=(3, 3), textcoords="offset points")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity (FLOP / byte of device memory)")
        ax.set_ylabel("achieved FLOP/s")
        ax.set_title("roofline" + (f": {nominal.name}" if nominal.name else ""))
        ax.grid(True, which="both", alpha=0.25)
        ax.legend(fontsize=6, loc="lower right")
    if memory_only:
        ax = axes[k]
        labels = [f"{p['op']}/{p['name']}" for p in memory_only]
        values = [p["bytes_per_s"] / 1e12 for p in memory_only]
        ys = list(range(len(memory_only)))
        ax.barh(ys, values, color=[colours[p["op"]] for p in memory_only],
                hatch=None, edgecolor=["black" if p["peer"] else "none" for p in memory_only])
        for y, p, v in zip(ys, memory_only, values):
            ax.scatter(v, y, marker=markers.get(p["peer"], "o"), color="white", edgecolors="black", s=24, zorder=3)
        ax.axvline(nominal.bandwidth / 1e12, color="0.3", ls="-", lw=1.2,
                   label=f"nominal {nominal.bandwidth / 1e12:.2f} TB/s")
        if meas is not None:
            ax.axvline(meas.bandwidth / 1e12, color="0.55", ls="--", lw=1.2,
                       label=f"measured {meas.bandwidth / 1e12:.2f} TB/s")
        ax.set_yticks(ys, labels, fontsize=7)
        ax.set_xlabel("achieved bandwidth (TB/s, bytes that must move / time)")
        ax.set_title("memory-bound work (no FLOPs)")
        ax.grid(True, axis="x", alpha=0.25)
        ax.legend(fontsize=7, loc="lower right")
    if peers:  # what the markers mean, as legend entries on the first panel
        from matplotlib.lines import Line2D

        ax = axes[0]
        handles, labels = ax.get_legend_handles_labels()
        for marker, label in [("o", "kernelab variant")] + [(markers[p], p) for p in peers]:
            handles.append(Line2D([], [], ls="none", marker=marker, color="0.5", markeredgecolor="black"))
            labels.append(label)
        ax.legend(handles, labels, fontsize=6, loc="lower right")
    if title:
        fig.suptitle(title)
    out = Path(out)
    stem = out.with_suffix("") if out.suffix.lower() in (".png", ".svg") else out
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in formats:
        path = Path(f"{stem}.{fmt}")
        fig.savefig(path, dpi=dpi, format=fmt)
        written.append(path)
    return written
