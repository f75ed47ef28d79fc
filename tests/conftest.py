"""Shared test set-up. Tests marked `gpu` skip, with the reason, where torch sees no GPU."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def _has_gpu() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


HAS_GPU = _has_gpu()


def pytest_collection_modifyitems(config, items):
    if HAS_GPU:
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU (torch.cuda.is_available() is False)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory):
    """Tests get their own cubin cache unless KERNELAB_CACHE_DIR says otherwise."""
    if "KERNELAB_CACHE_DIR" not in os.environ:
        os.environ["KERNELAB_CACHE_DIR"] = str(tmp_path_factory.mktemp("kernelab-cache"))
    yield
