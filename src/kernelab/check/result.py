"""What a check says: one verdict, one primary reason code, a readable detail, and the numbers.

Reason codes are a closed set (REASONS) so that suites, reports and the known-wrong kernels'
`// @expect <reason>` headers all speak the same words.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

# code -> what it means. The order is the order of precedence when a run breaks several rules.
REASONS: dict[str, str] = {
    "compile_error": "the kernel did not compile",
    "crash": "a sticky CUDA error (illegal or misaligned address, device assert, trap) or the process died",
    "hang": "the candidate did not finish before the watchdog's timeout and was killed",
    "out_of_bounds": "a write landed outside an output (in the guard band around it)",
    "input_mutated": "an input's memory changed during the call",
    "unwritten": "output elements still hold the poison written before the call",
    "stale_read": "the output depends on what the output buffer held before the call",
    "cached_result": "the output is the result for earlier inputs (cached or skipped work across calls)",
    "async_work": "the work is not ordered on the launch stream (another stream or a CPU thread)",
    "precision": "right to a lower precision (bf16/fp16/tf32 math) but not to the output dtype's tolerance",
    "constant_output": "the output is constant (e.g. all zeros) while the reference is not",
    "nan": "NaN/Inf where the reference is finite, or a NaN reference the op does not define",
    "mismatch": "values differ from the float64 reference beyond the tolerance",
    "leak": "GPU memory did not return to its baseline after the task",
    "impossible_time": "a time below the physical floor (bytes / peak bandwidth or FLOPs / peak rate)",
    "refused": "the candidate raised a clear error for this case instead of answering (allowed: not a wrong answer)",
    "error": "the candidate raised an unexpected exception",
    "unsupported": "the variant declares that it cannot run this case (skipped, not failed)",
}


def _json_float(x):
    """JSON has no inf/nan: write them as strings, keep finite floats as they are."""
    if x is None:
        return None
    x = float(x)
    if math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def _from_json_float(x):
    if isinstance(x, str):
        return float(x)
    return x


@dataclass
class Mismatch:
    """One element that failed: where it is (index into the output's logical shape) and its values."""

    output: str
    index: tuple[int, ...]
    got: float
    expected: float
    abs_err: float
    rel_err: float
    got_bits: str = ""  # the raw bits, hex: tells a poison value from a computed NaN

    def __str__(self) -> str:
        idx = ", ".join(str(i) for i in self.index)
        bits = f" ({self.got_bits})" if self.got_bits else ""
        return f"{self.output}[{idx}]: got {self.got:.9g}{bits}, expected {self.expected:.9g}"

    def to_dict(self) -> dict:
        return {"output": self.output, "index": list(self.index), "got": _json_float(self.got),
                "expected": _json_float(self.expected), "abs_err": _json_float(self.abs_err),
                "rel_err": _json_float(self.rel_err), "got_bits": self.got_bits}

    @classmethod
    def from_dict(cls, d: dict) -> "Mismatch":
        return cls(output=d["output"], index=tuple(d["index"]), got=_from_json_float(d["got"]),
                   expected=_from_json_float(d["expected"]), abs_err=_from_json_float(d["abs_err"]),
                   rel_err=_from_json_float(d["rel_err"]), got_bits=d.get("got_bits", ""))


@dataclass
class CheckResult:
    """The verdict on one candidate for one case.

    ok: every check passed. reason: the primary reason code when not ok (see REASONS).
    detail: one readable paragraph: what failed, where, and the evidence.
    The numbers describe the failing comparison (or, when ok, the worst error seen over all runs).
    """

    ok: bool
    reason: str | None = None
    detail: str = ""
    name: str = ""  # what was checked: "vector_add/v1_vec16", "torch", a callable's name
    case: dict | None = None
    output: str | None = None  # the output that failed
    seed: int | None = None  # the trial that failed
    dist: str | None = None
    phase: str | None = None  # e.g. "run A (NaN poison, before the reference)", "repeat", "stream order"
    mismatches: int = 0
    numel: int = 0
    first_mismatches: list[Mismatch] = field(default_factory=list)
    max_abs: float | None = None
    max_rel: float | None = None
    nan_mismatches: int = 0
    inf_mismatches: int = 0
    rtol: float | None = None
    atol: float | None = None
    out_of_bounds: dict | None = None  # {"output", "bytes", "elements", "first_offset", "last_offset"}
    trials: int = 0
    checks: list[str] = field(default_factory=list)  # which integrity checks ran
    stream: dict | None = None  # {"device_lag_s": ...} from the stream-order check
    wall_s: float = 0.0
    skipped: bool = False

    def __post_init__(self):
        if self.reason is not None and self.reason not in REASONS:
            raise ValueError(f"unknown reason code {self.reason!r}; use one of {', '.join(REASONS)}")

    @property
    def status(self) -> str:
        """passed | skipped | refused | failed: what a suite table shows."""
        if self.ok:
            return "passed"
        if self.skipped:
            return "skipped"
        if self.reason == "refused":
            return "refused"
        return "failed"

    def __str__(self) -> str:
        head = f"{self.name}: " if self.name else ""
        if self.ok:
            return f"{head}passed ({self.detail})" if self.detail else f"{head}passed"
        return f"{head}{self.reason}: {self.detail}"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["first_mismatches"] = [m.to_dict() for m in self.first_mismatches]
        d["max_abs"], d["max_rel"] = _json_float(self.max_abs), _json_float(self.max_rel)
        d["status"] = self.status
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "CheckResult":
        d = dict(d)
        d.pop("status", None)
        d["first_mismatches"] = [Mismatch.from_dict(m) for m in d.get("first_mismatches", [])]
        d["max_abs"], d["max_rel"] = _from_json_float(d.get("max_abs")), _from_json_float(d.get("max_rel"))
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})


def failure(reason: str, detail: str, **kw: Any) -> CheckResult:
    return CheckResult(ok=False, reason=reason, detail=detail, **kw)
