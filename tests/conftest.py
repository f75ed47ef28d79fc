"""Shared test set-up. Tests marked `gpu` skip, with the reason, where torch sees no GPU."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
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


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """Without a GPU, run the suite on every core (up to 4) when pytest-xdist is installed (the test extra brings
    it) and the command line chose no distribution of its own: `-n 0` or `-p no:xdist` keeps one process. Why: the
    CPU suite is mostly NVRTC compiles and cuobjdump runs, one core each; on CI's 2 cores it took 640-1110 s in one
    process (session 32), near the 20 minutes the project allows. With a GPU the suite stays in one process: GPU
    tests time kernels and hold device memory. The workers share one cubin cache (the controller's temporary
    folder, passed down in KERNELAB_CACHE_DIR; kernelab.gpu.cache writes by rename, so workers never read half a
    file), so a module compiled by one is a cache hit for the other."""
    opt = config.option
    if HAS_GPU or not config.pluginmanager.hasplugin("xdist") or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if getattr(opt, "numprocesses", None) is not None or getattr(opt, "dist", "no") != "no" or opt.collectonly:
        return
    workers = min(os.cpu_count() or 1, 4)
    if workers < 2:
        return
    opt.numprocesses, opt.dist, opt.tx = workers, "load", ["popen"] * workers
    if "KERNELAB_CACHE_DIR" not in os.environ:
        shared = tempfile.mkdtemp(prefix="kernelab-test-cache-")
        os.environ["KERNELAB_CACHE_DIR"] = shared
        config.add_cleanup(lambda: shutil.rmtree(shared, ignore_errors=True))


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory):
    """Tests get their own cubin cache unless KERNELAB_CACHE_DIR says otherwise."""
    if "KERNELAB_CACHE_DIR" not in os.environ:
        os.environ["KERNELAB_CACHE_DIR"] = str(tmp_path_factory.mktemp("kernelab-cache"))
    yield
