"""The kernelab command line (a thin layer over suite, bench, check and analysis)."""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)


@app.command()
def version() -> None:
    """Print kernelab's version."""
    from . import __version__

    print(__version__)


def main() -> None:
    app()
