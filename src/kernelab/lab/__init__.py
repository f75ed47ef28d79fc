"""Experiments that measure each quantitative claim of the seeds on the user's own GPU.

    kernelab lab list
    kernelab lab run l2_flush
    kernelab lab run --all --quick --json
"""

from __future__ import annotations

import importlib
import pkgutil

from .base import REGISTRY, Check, Context, Experiment, Verdict, experiment, save


def load_all() -> dict[str, Experiment]:
    """Import every experiment module in this package (each registers itself)."""
    for info in pkgutil.iter_modules(__path__):
        if info.name not in ("base",) and not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    return dict(REGISTRY)


__all__ = ["REGISTRY", "Check", "Context", "Experiment", "Verdict", "experiment", "load_all", "save"]
