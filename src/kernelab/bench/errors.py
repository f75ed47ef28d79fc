"""Errors raised by the measurement protocol."""

from __future__ import annotations

from ..gpu.errors import KernelabError


class BenchError(KernelabError):
    """A timing request that cannot be honoured (bad arguments, fn not capturable, inputs too small)."""


class ImpossibleResult(KernelabError):
    """The median is below the physical floor: the kernel cannot have done the work it claims.

    Usual causes: work skipped (early exit, wrong size), results cached between calls, work moved
    to another stream (outside the event pair), or a wrong work model (bytes/FLOPs overstated).
    `.measurement` holds the full Measurement, so the caller can still record it.
    """

    def __init__(self, measurement, floor_s: float, floor_reason: str | None):
        from .stats import format_time

        self.measurement, self.floor_s, self.floor_reason = measurement, floor_s, floor_reason
        why = floor_reason or "the floor_s given"
        name = f"{measurement.name}: " if getattr(measurement, "name", "") else ""
        super().__init__(
            f"{name}impossible result: median {format_time(measurement.median_s)} is below the physical floor "
            f"{format_time(floor_s)} ({why}); no GPU can do that work in that time. Check that the kernel does "
            "all its work on the timed stream, does not reuse results from an earlier call, and that the work "
            "model (bytes moved, FLOPs) is right."
        )
