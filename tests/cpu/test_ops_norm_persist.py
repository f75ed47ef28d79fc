"""rmsnorm and layernorm v3 (`@grid persistent`) without a GPU: the launch caps the grid at what
the GPU holds (SMs x resident blocks x `@waves`) and never above one group per row; the kernels
it names exist; every instance compiles for the CI archs with no spills; the next row's loads sit
above the first barrier in the SASS (the prefetch the header claims)."""

from __future__ import annotations

import re
import subprocess
import tempfile

import pytest

from kernelab.check.inputs import DTYPES
from kernelab.gpu import CI_ARCHS, parse_signatures, toolchain
from kernelab.ops import Case, compile_variant, discover

OPS = discover()
V3 = [(OPS[o], OPS[o].variant("v3_persist_prefetch")) for o in ("rmsnorm", "layernorm")]


class _Kernel:
    def __init__(self, module, name):
        assert name in module.signatures, f"{name} is not a kernel of the variant"
        self.module, self.name = module, name

    def __call__(self, *args, grid, block):
        self.module.calls.append((self.name, args, grid, block))


class _Module:
    def __init__(self, op, v):
        self.signatures = parse_signatures(v.path.read_text(), op.defines(v))
        self.calls = []

    def kernel(self, name):
        return _Kernel(self, name)


def _launch(op, v, case, monkeypatch, resident):
    from kernelab.ops.rmsnorm import op as rms_op  # layernorm's launch is RowNorm's, in rmsnorm/op.py

    monkeypatch.setattr(rms_op, "resident_blocks", lambda kernel, block: resident)
    inputs = op.make_inputs(case, 0, "cpu")
    outputs = op.make_outputs(case, inputs)
    m = _Module(op, v)
    op.launch(m.kernel(op.kernel_name(case.dtype)), v, case, inputs, outputs)
    return m.calls


@pytest.mark.parametrize("op,v", V3, ids=lambda x: getattr(x, "name", ""))
def test_persistent_grid_is_capped_by_residency_and_rows(op, v, monkeypatch):
    assert v.meta["grid"] == "persistent" and v.meta["strategy"] == "fast_rows"
    for dt, block in (("bfloat16", 512), ("float32", 1024)):  # N = 8192 at E = 16 bf16 / 8 fp32
        ((name, args, grid, blk),) = _launch(op, v, Case((600, 8192), dt), monkeypatch, resident=264)
        assert name == f"{op.name}_block_t{block}_{DTYPES[dt]}" and blk == block and grid == 264
        ((_, _, grid, _),) = _launch(op, v, Case((5, 8192), dt), monkeypatch, resident=264)
        assert grid == 5  # never more groups than rows
        # warp instances: 8 rows per block; the stream kernel (wide rows) is not persistent: grid = M
        ((name, _, grid, _),) = _launch(op, v, Case((1000, 1000), dt), monkeypatch, resident=33)
        assert name.startswith(f"{op.name}_warp_e32") and grid == 33
        ((name, _, grid, _),) = _launch(op, v, Case((33, 40000), dt), monkeypatch, resident=1)
        assert name.startswith(f"{op.name}_stream_t512") and grid == 33
    waves = type(v)(**{**v.__dict__, "meta": {**v.meta, "waves": "2"}})
    ((_, _, grid, _),) = _launch(op, waves, Case((600, 8192), "bfloat16"), monkeypatch, resident=264)
    assert grid == 528


@pytest.mark.parametrize("arch", CI_ARCHS)
def test_v3_instances_compile_without_spills(arch):
    for op, v in V3:
        m = compile_variant(op, v, arch=arch)
        for dt in op.dtypes:
            for n in (256, 512, 1024, 8192, 16384, 40000):
                p = op.plan(v, n, dt)
                assert f"{p.name}_{DTYPES[dt]}" in m.resources, f"{v.id}: {p.name} missing"
        for k, r in m.resources.items():
            assert r.spills == 0 and r.stack_frame == 0, f"{v.id} {k} [{arch}]: {r}"


@pytest.mark.skipif(toolchain.cuobjdump_path() is None, reason="no cuobjdump (pip install nvidia-cuda-cuobjdump)")
@pytest.mark.parametrize("op,v", V3, ids=lambda x: getattr(x, "name", ""))
def test_next_row_loads_are_issued_before_the_first_barrier(op, v):
    """The prefetch: in the bench instance's SASS, the loop's 16-byte loads of x (the row after the
    one being reduced) come before the loop's first BAR.SYNC, not after the reductions."""
    m = compile_variant(op, v, arch="sm_90")
    name = f"{op.name}_block_t512_bf16"
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(m.cubin)
        f.flush()
        sass = subprocess.run([toolchain.cuobjdump_path(), "-sass", "-fun", name, f.name], capture_output=True,
                              text=True, check=True).stdout
    ops = [ln for ln in sass.splitlines() if re.search(r"LDG\.E\.128|BAR\.SYNC", ln)]
    first_bar = next(i for i, ln in enumerate(ops) if "BAR.SYNC" in ln)
    k = v.meta_int("elems_bf16") // 8  # 16-byte vectors of bf16 per thread per row
    # Before the first barrier: the first row's K loads, its params' 2K (weight, bias) or K, and the next row's K.
    params = 2 if op.name == "layernorm" else 1
    assert first_bar >= k * (2 + params), f"{name}: only {first_bar} LDG.128 before the first barrier:\n" + "\n".join(ops[:12])
