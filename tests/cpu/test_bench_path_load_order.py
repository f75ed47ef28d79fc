"""The kernels the bench shapes launch (each op's best variant for the dtype, sm_90) read back with
analysis.load_order: no stream's first wide load waits a memory round trip it does not need, but
for three reviewed waits on head/tail scalars, which aligned rows (every bench shape) predicate off.

Session 19's layernorm v5 bug (the pivot's use before pass 1's vectors: 512.5 us against 499) was
found by hand after four sweeps; this test finds the next one when it is compiled. A new finding
fails here: read the SASS (`kernelab inspect --op OP --arch sm_90`), then fix the order or add the
kernel below with the reason it costs nothing on the bench shapes."""

from __future__ import annotations

import pytest
import torch

from kernelab.analysis.load_order import load_order
from kernelab.analysis.sass import disassemble
from kernelab.gpu.toolchain import cuobjdump_path
from kernelab.ops import OpSpec, compile_variant, discover

from ._launch_recorder import h200_blocks_per_sm, patch_h200, record_launches

pytestmark = pytest.mark.skipif(cuobjdump_path() is None, reason="no cuobjdump (pip install nvidia-cuda-cuobjdump)")

MEMORY_BOUND = ("sum", "transpose", "softmax", "rmsnorm", "layernorm", "gelu_bias", "vector_add")

# kernel -> why its finding costs no trip on the bench shapes. Each waits on a head or tail scalar
# (`tid < head`, `tid < tail`): rows whose start is 16-byte aligned and whose width is a multiple of
# the vector (all bench shapes) load none, so the wait is on a load that was not issued.
REVIEWED = {
    "softmax_online_t512_f32": "v2's pass 1 merges the head/tail scalars before the vector loop",
    "rmsnorm_bf16": "v4's pass 1 sums the head/tail squares before the first vector step",
    "rmsnorm_f32": "v4's pass 2 stores the head/tail scalars (x * w) before its vector loop",
}


@pytest.fixture
def fake_h200(monkeypatch):
    """What launches ask of the GPU, as an H200 answers (132 SMs; v14's cluster counts), and inputs
    that are allocations without values (the launch reads no value; 1 GiB of random numbers would
    cost CI seconds each)."""
    from kernelab.ops.softmax import op as softmax_op

    class Stream:
        def wait_event(self, e):
            pass

    class Event:
        def record(self, stream):
            pass

    def empty_view(shape, dtype, seed, device, dist="normal", offset=0, scale=1.0):
        n = 1
        for s in shape:
            n *= s
        return torch.empty(n + offset, dtype=getattr(torch, dtype), device=device)[offset:].view(tuple(shape))

    patch_h200(monkeypatch)
    monkeypatch.setattr(softmax_op, "_split_stream", lambda device: (Stream(), Event(), Event()))
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: Stream())
    monkeypatch.setattr(OpSpec, "tensor", staticmethod(empty_view))


def bench_path_kernels() -> dict[str, set[str]]:
    """{variant id: names of the kernels its bench cases launch}, over every memory-bound op."""
    ops = discover()
    launched: dict[str, set[str]] = {}
    for name in MEMORY_BOUND:
        op = ops[name]
        for case in op.bench_cases():
            v = op.variant(op.best_variant_for(case.dtype))
            calls = record_launches(op, [(v, case)], blocks_per_sm=h200_blocks_per_sm)
            launched.setdefault(v.id, set()).update(c[0] for c in calls)
    return launched


def test_no_bench_path_kernel_waits_before_its_stream(fake_h200):
    ops = discover()
    launched = bench_path_kernels()
    assert {"softmax/v4_dispatch", "layernorm/v5_l2_two_pass", "transpose/v4_grouped_order"} <= set(launched)
    found, checked = {}, 0
    for vid, kernels in launched.items():
        op_name, v_name = vid.split("/")
        op = ops[op_name]
        orders = {lo.name: lo for lo in load_order(disassemble(compile_variant(op, op.variant(v_name),
                                                                               arch="sm_90").cubin))}
        for k in kernels:
            assert k in orders, f"{vid} launched {k}, which its sm_90 cubin does not hold"
            checked += 1
            if orders[k].late_first_wide:
                found[k] = orders[k].late_first_wide[0]
    assert checked >= 20
    new = {k: str(s) for k, s in found.items() if k not in REVIEWED}
    assert not new, f"a bench shape's kernel issues its first wide load after a wait it does not need: {new}"
    for k, s in found.items():  # the reviewed ones still wait on a predicated (head/tail) load
        assert s.waited_guard, f"{k}: {s}"
