"""The results file: `results/<device>-<timestamp>.json`, the source of truth for every figure.

One envelope (device, driver, clocks, toolchain, git commit, wall time, peak memory) and a
list of rows, one per op x variant-or-peer x case. Rows are plain dicts so that reports,
plots and `kernelab compare` work from stored files without importing the suite.
"""

from __future__ import annotations

import datetime as _dt
import gzip
import json
import os
import platform
import re
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path

SCHEMA = "kernelab.results/1"

# Row statuses. Only "ok" rows carry a time.
STATUSES = ("ok", "failed", "skipped", "crash", "hang", "leak", "compile_error", "static")


@dataclass
class Row:
    op: str
    name: str  # variant name (v2_persistent) or peer name (torch, torch.compile, cuBLAS)
    kind: str  # "variant" | "peer"
    case: dict
    status: str = "ok"
    reason: str | None = None  # short code when not ok (check reason, skip reason)
    detail: str = ""
    work: dict = field(default_factory=dict)  # bytes, flops, flop_unit
    measurement: dict | None = None  # bench Measurement.to_dict(): stats and every sample
    metrics: dict = field(default_factory=dict)  # time_s, gbps, tflops, pct_ceiling, x_best_peer, floor_s ...
    resources: dict = field(default_factory=dict)  # kernel -> ptxas resources
    occupancy: dict = field(default_factory=dict)
    binary_sha256: str | None = None
    check: dict = field(default_factory=dict)  # the correctness/integrity summary
    timings: dict = field(default_factory=dict)  # wall seconds per phase: setup, check, bench, verify, total

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.op, self.name, self.case.get("label", ""))

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Row":
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in known})


def git_commit(root: Path | None = None) -> dict:
    """The commit the code ran at: $KERNELAB_GIT_COMMIT (for copies of a tree without .git, such
    as a lent GPU machine's), else `git rev-parse HEAD`. Anything but a hex sha is recorded as None."""
    env = os.environ.get("KERNELAB_GIT_COMMIT", "").strip()
    if env:
        return {"commit": env if _is_sha(env) else None, "dirty": None, "source": "KERNELAB_GIT_COMMIT"}
    root = root or Path(__file__).resolve().parents[3]
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                                    capture_output=True, text=True, timeout=10).stdout.strip())
    except (OSError, subprocess.TimeoutExpired):
        return {"commit": None, "dirty": None}
    if not _is_sha(sha):
        return {"commit": None, "dirty": None}
    return {"commit": sha, "dirty": dirty}


def _is_sha(text: str) -> bool:
    return bool(re.fullmatch(r"[0-9a-f]{7,40}", text or ""))


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "device"


@dataclass
class Results:
    mode: str  # "gpu" or "static"
    device: dict
    environment: dict
    compiler: dict
    rows: list[Row] = field(default_factory=list)
    created: str = field(default_factory=now_iso)
    git: dict = field(default_factory=git_commit)
    clocks: dict = field(default_factory=dict)
    ceilings: dict = field(default_factory=dict)
    wall_s: float | None = None
    peak_gpu_memory_bytes: int | None = None
    phases: dict = field(default_factory=dict)  # wall seconds of the run's phases (ceilings, compile, each op)
    notes: list[str] = field(default_factory=list)
    selection: dict = field(default_factory=dict)
    schema: str = SCHEMA

    def to_dict(self) -> dict:
        d = asdict(self)
        d["rows"] = [r.to_dict() for r in self.rows]
        d["host"] = {"python": platform.python_version(), "machine": platform.machine()}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Results":
        if d.get("schema") != SCHEMA:
            raise ValueError(f"not a kernelab results file (schema {d.get('schema')!r}, expected {SCHEMA!r})")
        known = {f for f in cls.__dataclass_fields__}
        kw = {k: v for k, v in d.items() if k in known}
        kw["rows"] = [Row.from_dict(r) for r in d.get("rows", [])]
        return cls(**kw)

    def default_filename(self) -> str:
        stamp = self.created.replace(":", "").replace("-", "").replace("+0000", "Z")[:15]
        return f"{slug(self.device.get('name', 'device'))}-{stamp}.json"

    def save(self, folder: Path | str, filename: str | None = None) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / (filename or self.default_filename())
        path.write_text(json.dumps(self.to_dict(), indent=1, default=_json_default))
        return path


def _json_default(o):
    if hasattr(o, "to_dict"):
        return o.to_dict()
    if hasattr(o, "item"):
        return o.item()
    if isinstance(o, (set, tuple)):
        return list(o)
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"cannot serialise {type(o).__name__}")


def read_json(path: str | Path):
    """A results file's JSON, plain or gzipped (`.json.gz`: older runs under docs/runs are kept
    compressed, so the tree the GPU tool copies stays small)."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no results file at {p}; `kernelab run` writes them under results/")
    try:
        if p.suffix == ".gz":
            with gzip.open(p, "rt", encoding="utf-8") as f:
                return json.load(f)
        return json.loads(p.read_text())
    except (ValueError, gzip.BadGzipFile, EOFError) as e:  # not JSON, not gzip, cut short; I/O errors propagate
        raise ValueError(f"{p} is not valid JSON{' (gzip)' if p.suffix == '.gz' else ''}: {e}") from None


def load(path: str | Path) -> Results:
    return Results.from_dict(read_json(path))
