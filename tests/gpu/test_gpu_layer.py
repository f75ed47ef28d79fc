"""The CUDA layer on a real GPU: load, launch on torch's current stream, side streams,
graph capture, argument checks, and faults turned into KernelFault."""

import subprocess
import sys
import textwrap

import pytest
import torch

from kernelab.gpu import ArgumentError, LaunchError, device_info, load
from kernelab.ops import discover, run_variant

pytestmark = pytest.mark.gpu

OP = discover()["vector_add"]


def _check(case, variant, seed=0):
    inputs = OP.make_inputs(case, seed, "cuda")
    outputs = OP.make_outputs(case, inputs)
    outputs["c"].fill_(float("nan"))
    run_variant(OP, variant, case, inputs, outputs)
    torch.cuda.synchronize()
    ref = OP.reference(case, inputs)["c"].to(outputs["c"].dtype)
    torch.testing.assert_close(outputs["c"], ref, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("variant", [v.name for v in OP.variants()])
def test_vector_add_every_variant_dtype_and_test_case(variant):
    v = OP.variant(variant)
    for case in OP.test_cases():
        _check(case, v)


def test_misaligned_view_is_really_misaligned():
    x = torch.empty(1001, dtype=torch.bfloat16, device="cuda")[1:]
    assert x.is_contiguous() and x.data_ptr() % 16 == 2


def test_launch_on_side_stream_and_in_cuda_graph():
    v = OP.variant(OP.best_variant)
    case = next(c for c in OP.test_cases() if c.shape == (1_000_003,) and c.dtype == "float32" and not c.offset)
    inputs = OP.make_inputs(case, 1, "cuda")
    ref = inputs["a"] + inputs["b"]

    side = torch.cuda.Stream()
    out = OP.make_outputs(case, inputs)
    out["c"].fill_(float("nan"))
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        run_variant(OP, v, case, inputs, out)
    side.synchronize()
    torch.testing.assert_close(out["c"], ref, rtol=0, atol=0)

    out["c"].fill_(float("nan"))
    run_variant(OP, v, case, inputs, out)  # warm: module load outside capture
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    out["c"].fill_(float("nan"))
    with torch.cuda.graph(g):
        run_variant(OP, v, case, inputs, out)
    torch.cuda.synchronize()
    assert torch.isnan(out["c"]).all(), "capture must record, not run"
    inputs["a"].add_(1.0)  # replay reads the new contents of the captured buffers
    g.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out["c"], inputs["a"] + inputs["b"], rtol=0, atol=0)


SRC = r"""
extern "C" __global__ void scale(const float* x, float* y, unsigned long long n, float s) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * s;
}
"""


def test_scalar_types_reach_the_kernel_exactly():
    k = load(SRC).kernel("scale")
    x = torch.randn(1000, device="cuda")
    y = torch.empty_like(x)
    k(x, y, 1000, 3, grid=4, block=256)  # int 3 -> float 3.0f, 1000 -> uint64
    torch.cuda.synchronize()
    torch.testing.assert_close(y, x * 3)


def test_argument_errors_on_gpu():
    k = load(SRC).kernel("scale")
    x = torch.randn(8, device="cuda")
    with pytest.raises(ArgumentError, match="takes 4 arguments"):
        k(x, x, 8, grid=1, block=32)
    with pytest.raises(ArgumentError, match="dtype torch.float16"):
        k(x.half(), x, 8, 1.0, grid=1, block=32)
    with pytest.raises(ArgumentError, match="not contiguous"):
        k(torch.randn(8, 8, device="cuda").t(), x, 8, 1.0, grid=1, block=32)
    with pytest.raises(LaunchError, match="1024"):
        k(x, x, 8, 1.0, grid=1, block=2048)
    with pytest.raises(LaunchError, match="zero"):
        k(x, x, 8, 1.0, grid=0, block=32)


def test_device_info_is_live():
    d = device_info()
    assert d.sm_count > 0 and d.l2_bytes > 0 and d.smem_per_block_optin >= d.smem_per_block
    assert d.cc == torch.cuda.get_device_capability()
    assert d.nominal_bandwidth > 1e11


def test_illegal_address_becomes_kernel_fault_in_child():
    """The fault is sticky, so it runs in a child process; the parent's context stays healthy."""
    code = textwrap.dedent('''
        import torch
        from kernelab.gpu import load, synchronize, KernelFault
        k = load('extern "C" __global__ void boom(float* p) { p[threadIdx.x + (1ull << 40)] = 1.0f; }').kernel("boom")
        x = torch.zeros(4, device="cuda")
        k(x, grid=1, block=32)
        try:
            synchronize()
        except KernelFault as e:
            print("FAULT", e.kernel, "unusable" in str(e))
    ''')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "PYTHONPATH": str(__import__("pathlib").Path(__file__).parents[2] / "src")})
    assert "FAULT boom True" in out.stdout, out.stdout + out.stderr
