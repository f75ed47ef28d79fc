"""The lab: each quantitative claim of the seeds becomes an experiment with a verdict.

An experiment states its claim in English with the seed file and section, measures on the
user's GPU through kernelab.bench (live, through `ctx.log`), and returns a Verdict:
"holds", or "differs" with by how much. Nothing printed comes from a constant: every
figure in a verdict is a measured value or computed from measured values.

    @experiment("l2_flush", claim="...", source="seeds/000 §9")
    def l2_flush(ctx):
        ...
        return expect_between("cold/hot time at n=2^20", ratio, lo=1.2, hi=None)
"""

from __future__ import annotations

import datetime as _dt
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

HOLDS, DIFFERS, NOT_RUN = "holds", "differs", "not run"


@dataclass
class Check:
    """One measured quantity against the claim's range."""

    what: str
    value: float
    lo: float | None = None
    hi: float | None = None
    unit: str = ""

    @property
    def holds(self) -> bool:
        return (self.lo is None or self.value >= self.lo) and (self.hi is None or self.value <= self.hi)

    @property
    def deviation(self) -> float:
        """Relative distance outside the range (0 when inside): how much the claim is off."""
        if self.lo is not None and self.value < self.lo:
            return (self.lo - self.value) / abs(self.lo) if self.lo else float("inf")
        if self.hi is not None and self.value > self.hi:
            return (self.value - self.hi) / abs(self.hi) if self.hi else float("inf")
        return 0.0

    def describe(self) -> str:
        rng = ("" if self.lo is None and self.hi is None else
               f" (claim: {'≥ ' + _fmt(self.lo) if self.hi is None else '≤ ' + _fmt(self.hi) if self.lo is None else _fmt(self.lo) + '–' + _fmt(self.hi)}{' ' + self.unit if self.unit else ''})")
        status = "holds" if self.holds else f"differs by {self.deviation * 100:.0f}%"
        return f"{self.what}: {_fmt(self.value)}{' ' + self.unit if self.unit else ''}{rng} — {status}"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["holds"], d["deviation"] = self.holds, self.deviation
        return d


def _fmt(x) -> str:
    if x is None:
        return "—"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


@dataclass
class Verdict:
    checks: list[Check] = field(default_factory=list)
    note: str = ""
    not_run_reason: str | None = None

    @property
    def status(self) -> str:
        if self.not_run_reason:
            return NOT_RUN
        return HOLDS if self.checks and all(c.holds for c in self.checks) else DIFFERS

    @property
    def deviation(self) -> float:
        return max((c.deviation for c in self.checks), default=0.0)

    def summary(self) -> str:
        if self.not_run_reason:
            return f"not run: {self.not_run_reason}"
        if self.status == HOLDS:
            return "holds"
        worst = max(self.checks, key=lambda c: c.deviation) if self.checks else None
        return f"differs: {worst.describe()}" if worst else "differs: nothing measured"

    def to_dict(self) -> dict:
        return {"status": self.status, "deviation": self.deviation, "summary": self.summary(), "note": self.note,
                "checks": [c.to_dict() for c in self.checks], "not_run_reason": self.not_run_reason}


@dataclass
class Context:
    """What an experiment gets: quick mode, a live log, and a place for its measurements."""

    quick: bool = False
    log: Callable[[str], None] = print
    data: dict = field(default_factory=dict)  # everything measured, written to the JSON

    def record(self, key: str, value) -> None:
        self.data[key] = value


@dataclass
class Experiment:
    name: str
    title: str
    claim: str
    source: str  # "seeds/000 §9"
    fn: Callable[[Context], Verdict]
    needs_gpu: bool = True

    def run(self, quick: bool = False, log: Callable[[str], None] = print) -> dict:
        from ..gpu import has_gpu

        ctx = Context(quick=quick, log=log)
        t0 = time.perf_counter()
        if self.needs_gpu and not has_gpu():
            verdict = Verdict(not_run_reason="needs an NVIDIA GPU")
        else:
            verdict = self.fn(ctx)
        return {
            "schema": "kernelab.lab/1", "name": self.name, "title": self.title, "claim": self.claim,
            "source": self.source, "quick": quick, "verdict": verdict.to_dict(), "measured": ctx.data,
            "wall_s": time.perf_counter() - t0,
            "created": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        }


REGISTRY: dict[str, Experiment] = {}


def experiment(name: str, *, title: str, claim: str, source: str, needs_gpu: bool = True):
    """Register an experiment function `fn(ctx) -> Verdict` under `name`."""
    def deco(fn):
        if name in REGISTRY:
            raise ValueError(f"experiment {name!r} registered twice")
        REGISTRY[name] = Experiment(name, title, claim, source, fn, needs_gpu)
        return fn
    return deco


def save(result: dict, folder: Path | str) -> Path:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = result["created"].replace(":", "").replace("-", "")[:15]
    path = folder / f"{result['name']}-{stamp}.json"
    path.write_text(json.dumps(result, indent=1, default=str))
    return path
