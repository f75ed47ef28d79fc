"""Correctness and integrity: is a kernel right, is it honest, and can it take the process down?

    from kernelab.check import check_variant, check_callable, compare_outputs, CheckResult
    r = check_variant(op, "v1_vec16", case)            # seeds x distributions, poison, guard bands...
    r.ok, r.reason, r.detail, r.mismatches, r.max_abs   # reason codes: kernelab.check.REASONS

    from kernelab.check import check_isolated           # the same, in a child process under a watchdog
    from kernelab.check.worker import Task, run_tasks    # any importable function, JSON lines out
    from kernelab.check.sanitize import sanitize         # compute-sanitizer over the library kernels

Importing this package does not import torch (ops/base.py imports check.inputs at start-up).
"""

from .compare import Comparison, compare_outputs, is_constant
from .harness import check_callable, check_time, check_variant, verify_outputs
from .result import REASONS, CheckResult, Mismatch
from .tasks import check_isolated, check_task, result_from_outcome
from .tolerances import DEFAULTS as DEFAULT_TOLERANCES
from .tolerances import tolerance

__all__ = [
    "CheckResult", "Comparison", "Mismatch", "REASONS", "DEFAULT_TOLERANCES",
    "check_callable", "check_isolated", "check_task", "check_time", "check_variant", "compare_outputs",
    "is_constant", "result_from_outcome", "tolerance", "verify_outputs",
]
