"""The analysis package's error: bad input, a missing tool, an unknown device."""

from __future__ import annotations

from ..gpu.errors import KernelabError


class AnalysisError(KernelabError, ValueError):
    """Raised for input the analysis cannot use; the message names the problem and the fix."""
