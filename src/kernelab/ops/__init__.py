"""The kernel library: one folder per op, numbered variants, known-wrong kernels.

    from kernelab.ops import discover
    ops = discover()                 # {"vector_add": <op>, ...}
    ops["vector_add"].variants()     # [v0_naive, v1_vec16, v2_persistent]
"""

from .base import Case, OpSpec, Variant, Work, discover
from .build import compile_variant, load_variant, run_variant

__all__ = ["Case", "OpSpec", "Variant", "Work", "discover", "compile_variant", "load_variant", "run_variant"]
