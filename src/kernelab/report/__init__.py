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

        written += plot_roofline([r.to_dict() for r in timed], results.device, results.ceilings,
                                 Path(f"{stem}-roofline"))
    return written


__all__ = ["Results", "Row", "load", "write_reports"]
