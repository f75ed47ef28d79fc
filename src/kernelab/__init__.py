"""kernelab: a workbench for GPU kernel engineering.

Compile a CUDA C++ kernel from Python, prove it computes the right function, time it with a
protocol that cannot be fooled, and place it on the roofline of the GPU it runs on.

    k = kernelab.load("my_kernel.cu").kernel("my_kernel")     # compile (NVRTC, cached) and load
    kernelab.verify(candidate, reference, make_inputs)         # correctness and integrity (kernelab.check)
    kernelab.bench.bench(fn)                                   # the measurement protocol (kernelab.bench)
    kernelab.roofline(seconds, bytes=..., flops=...)           # where it sits, and the gap (kernelab.analysis)

The subpackages (gpu, bench, check, analysis, ops, lab, report) keep their names here.
"""

__version__ = "0.1.0"

from . import bench  # noqa: E402  (the subpackage: kernelab.bench.bench(fn))
from .api import FunctionOp, roofline, verify  # noqa: E402
from .gpu import compile_file, compile_source, load  # noqa: E402
from .ops.base import Case, OpSpec, Work  # noqa: E402

__all__ = ["__version__", "bench", "compile_file", "compile_source", "load", "roofline", "verify",
           "Case", "FunctionOp", "OpSpec", "Work"]
