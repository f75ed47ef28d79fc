"""kernelab.gpu's cooperative and programmatic-dependent (PDL) launch flags without a GPU:
Kernel(..., cooperative=True) builds cuda.core's LaunchConfig with is_cooperative=True, and
Kernel(..., pdl=True) with programmatic_stream_serialization=True; each keeps a config of its own
in the cache (the key includes the flags, so a plain launch of the same geometry is not made
cooperative or programmatic, nor the reverse), and every launch without them builds the config
exactly as before (no new keyword at all). A cuda.core without the PDL field gets a LaunchError
that says what to do. cuda.core's LaunchConfig and launch are replaced by recorders: the real
LaunchConfig initialises the driver."""

from __future__ import annotations

import pytest

import cuda.core

from kernelab.gpu import LaunchError
from kernelab.gpu import module as gpu_module
from kernelab.gpu.params import Param


class _Config:
    def __init__(self, **kw):
        self.kw = kw


class _Compiled:
    resources: dict = {}
    name = "fake.cu"
    arch = "sm_90"


class _Module:
    device_index = 0
    compiled = _Compiled()


@pytest.fixture
def recorded(monkeypatch):
    """(kernel, calls): a Kernel of one `int n` parameter whose launches land in `calls`."""
    built, launched = [], []

    def config(**kw):
        built.append(kw)
        return _Config(**kw)

    def launch(stream, cfg, k, *args):
        launched.append((cfg, args))

    monkeypatch.setattr(cuda.core, "LaunchConfig", config)
    monkeypatch.setattr(gpu_module, "_launch_fn", lambda: launch)
    monkeypatch.setattr(gpu_module, "_cc_stream", lambda stream, index: "stream")
    k = object.__new__(gpu_module.Kernel)
    k.module, k.name, k._k = _Module(), "fake_kernel", object()
    k.params = [Param(0, "n", "int", "scalar", "int")]
    k._convert = [int]
    k._smem_optin = 48 * 1024
    k._configs = {}
    return k, built, launched


def test_cooperative_builds_is_cooperative_and_plain_launches_do_not(recorded):
    k, built, launched = recorded
    k(7, grid=4, block=128)
    assert built == [dict(grid=(4, 1, 1), block=(128, 1, 1), shmem_size=0)]  # unchanged: no new keyword
    k(7, grid=4, block=128, cooperative=True)
    assert built[1] == dict(grid=(4, 1, 1), block=(128, 1, 1), shmem_size=0, is_cooperative=True)
    assert launched[0][0].kw.get("is_cooperative") is None and launched[1][0].kw["is_cooperative"] is True
    assert launched[1][1] == (7,)


def test_cache_key_includes_the_flag(recorded):
    k, built, launched = recorded
    for coop in (False, True, False, True):
        k(1, grid=8, block=256, shared_mem=1024, cooperative=coop)
    assert len(built) == 2, "one config per (geometry, cooperative), built once each"
    assert set(k._configs) == {(8, 256, 1024, None, False, False), (8, 256, 1024, None, True, False)}
    assert [c.kw.get("is_cooperative", False) for c, _ in launched] == [False, True, False, True]


def test_launch_method_passes_the_flag(recorded):
    k, built, launched = recorded
    k.launch(2, 64, 5, cooperative=True)
    assert built[-1]["is_cooperative"] is True and launched[-1][1] == (5,)
    k.launch(2, 64, 5)
    assert "is_cooperative" not in built[-1]


@pytest.mark.parametrize("flags,says", [({"cooperative": True}, "cooperative launch"),
                                       ({"pdl": True}, r"programmatic \(pdl\) launch"),
                                       ({}, "launch")])
def test_refused_launch_names_the_kernel_and_its_kind(recorded, monkeypatch, flags, says):
    k, _, _ = recorded

    def refuse(stream, cfg, kern, *args):
        raise ValueError("The specified grid size (600) exceeds the limit (132)")

    monkeypatch.setattr(gpu_module, "_launch_fn", lambda: refuse)
    with pytest.raises(LaunchError, match=rf"fake_kernel: {says} with grid=600 .*exceeds the limit"):
        k(1, grid=600, block=544, **flags)


def test_pdl_builds_programmatic_serialization_and_plain_launches_do_not(recorded):
    k, built, launched = recorded
    k(3, grid=1, block=1024, pdl=True)
    assert built[0] == dict(grid=(1, 1, 1), block=(1024, 1, 1), shmem_size=0, programmatic_stream_serialization=True)
    k(3, grid=1, block=1024)
    assert "programmatic_stream_serialization" not in built[1]
    assert set(k._configs) == {(1, 1024, 0, None, False, True), (1, 1024, 0, None, False, False)}
    k.launch(1, 1024, 4, pdl=True)
    assert launched[-1][0].kw["programmatic_stream_serialization"] is True and launched[-1][1] == (4,)
    assert len(built) == 2, "the launch method reuses the cached PDL config"


def test_pdl_without_cuda_core_support_names_the_fix(recorded, monkeypatch):
    k, _, _ = recorded

    def old_config(grid=None, block=None, shmem_size=None, cluster=None, is_cooperative=False):
        return _Config(grid=grid)

    monkeypatch.setattr(cuda.core, "LaunchConfig", old_config)
    with pytest.raises(LaunchError, match=r"fake_kernel: a programmatic dependent launch \(pdl=True\) needs "
                                          r"cuda-core >= 1.2.*pip install -U cuda-core"):
        k(1, grid=1, block=32, pdl=True)
    k(1, grid=1, block=32)  # a plain launch still works with that cuda.core
