"""Reports from results: JSON is the source of truth; CSV, Markdown and plots are made from it."""

from __future__ import annotations

from pathlib import Path

from .results import Results, Row, load


def write_reports(results: Results, json_path: Path | str) -> list[Path]:
    """Write <stem>.csv, <stem>.md and <stem>-roofline.png/.svg next to the results JSON."""
    from .tables import to_csv, to_markdown

    json_path = Path(json_path)
    stem = json_path.with_suffix("")
    written = []
    csv_path = stem.with_suffix(".csv")
    csv_path.write_text(to_csv(results))
    written.append(csv_path)
    md_path = stem.with_suffix(".md")
    md_path.write_text(to_markdown(results))
    written.append(md_path)
    timed = [r for r in results.rows if r.metrics.get("time_s")]
    if timed:
        from ..analysis import plot_roofline

        from ..analysis import spec_for

        try:
            spec = spec_for(results.device.get("name"))
        except Exception:
            spec = None
        measured = results.ceilings if results.ceilings and "entries" in results.ceilings else None
        written += plot_roofline([r.to_dict() for r in timed], Path(f"{stem}-roofline"), spec, measured,
                                 title=f"{results.device.get('name', '')} — {results.created}")
    return written


__all__ = ["Results", "Row", "load", "write_reports"]
