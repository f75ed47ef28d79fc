"""kernelab: a workbench for GPU kernel engineering.

Compile a CUDA C++ kernel from Python, prove it computes the right function, time it with a
protocol that cannot be fooled, and place it on the roofline of the GPU it runs on.
"""

__version__ = "0.1.0"

from .gpu import compile_file, compile_source, load  # noqa: E402

__all__ = ["__version__", "compile_file", "compile_source", "load"]
