"""kernelab: a workbench for GPU kernel engineering.

Compile a CUDA C++ kernel from Python, prove it computes the right function, time it with a
protocol that cannot be fooled, and place it on the roofline of the GPU it runs on.

    k = kernelab.load("my_kernel.cu").kernel("my_kernel")     # compile (NVRTC, cached) and load
    kernelab.check(candidate, reference, make_inputs)          # correctness and integrity
    kernelab.bench(fn)                                         # the measurement protocol
    kernelab.roofline(seconds, bytes=..., flops=...)           # where it sits, and the gap
"""

__version__ = "0.1.0"

from .api import FunctionOp, check, roofline  # noqa: E402
from .bench import bench, compare  # noqa: E402
from .gpu import compile_file, compile_source, load  # noqa: E402
from .ops.base import Case, OpSpec, Work  # noqa: E402

__all__ = ["__version__", "bench", "check", "compare", "compile_file", "compile_source", "load", "roofline",
           "Case", "FunctionOp", "OpSpec", "Work"]
