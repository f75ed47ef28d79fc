"""On-disk cubin cache: `<dir>/<key>.cubin` plus `<key>.json` (log and resources).

The key (made by the compiler module) covers the source, the text of every quoted include,
the flags, the arch and the compiler's version, so a hit never needs the compiler. The
folder is $KERNELAB_CACHE_DIR, else $XDG_CACHE_HOME/kernelab, else ~/.cache/kernelab.
Writes go through a temporary file and a rename, so concurrent workers never read half a file.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def cache_dir() -> Path:
    if os.environ.get("KERNELAB_CACHE_DIR"):
        return Path(os.environ["KERNELAB_CACHE_DIR"])
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "kernelab" / "cubins"


def load(key: str) -> tuple[bytes, dict] | None:
    d = cache_dir()
    cubin, meta = d / f"{key}.cubin", d / f"{key}.json"
    try:
        return cubin.read_bytes(), json.loads(meta.read_text())
    except (OSError, ValueError):
        return None


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def store(key: str, cubin: bytes, meta: dict) -> None:
    d = cache_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        _atomic_write(d / f"{key}.cubin", cubin)
        _atomic_write(d / f"{key}.json", json.dumps(meta).encode())
    except OSError:
        pass  # a read-only home must not stop a compile; the next call compiles again


def clear() -> int:
    n = 0
    for p in cache_dir().glob("*"):
        if p.suffix in (".cubin", ".json"):
            p.unlink(missing_ok=True)
            n += 1
    return n
