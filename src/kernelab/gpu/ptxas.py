"""Parse the `ptxas -v` resource report into one record per kernel.

NVRTC puts the report in its program log; nvcc prints it on stderr. Both look like:

    ptxas info    : Compiling entry function 'add' for 'sm_90'
    ptxas info    : Function properties for add
    ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 12 registers, used 1 barriers, 1024 bytes smem, 380 bytes cmem[0]

Older toolkits print `Used 16 registers, 380 bytes cmem[0]` with no barrier count, and the
stack line without the `ptxas .` prefix. `Function properties for X` also appears for
non-inlined device functions; those are kept apart from entries.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field


@dataclass
class KernelResources:
    """What ptxas allocated for one entry function."""

    name: str
    arch: str = ""
    registers: int = 0
    spill_stores: int = 0  # bytes
    spill_loads: int = 0  # bytes
    stack_frame: int = 0  # bytes
    shared_static: int = 0  # bytes of `__shared__` arrays (dynamic shared memory is extra)
    barriers: int = 0
    constant: dict[int, int] = field(default_factory=dict)  # bank -> bytes

    @property
    def spills(self) -> int:
        return self.spill_stores + self.spill_loads

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "KernelResources":
        d = dict(d)
        d["constant"] = {int(k): v for k, v in d.get("constant", {}).items()}
        return cls(**d)


_ENTRY = re.compile(r"Compiling entry function '(?P<name>[^']+)' for '(?P<arch>[^']+)'")
_PROPS = re.compile(r"Function properties for (?P<name>\S+)")
_STACK = re.compile(r"(?P<stack>\d+) bytes stack frame, (?P<st>\d+) bytes spill stores, (?P<ld>\d+) bytes spill loads")
_USED = re.compile(r"Used (?P<regs>\d+) registers")
_BARRIERS = re.compile(r"used (?P<n>\d+) barriers")
_SMEM = re.compile(r"(?P<n>\d+) bytes smem")
_CMEM = re.compile(r"(?P<n>\d+) bytes cmem\[(?P<bank>\d+)\]")


def parse_ptxas_log(log: str) -> dict[str, KernelResources]:
    """Return {entry name: KernelResources}; device functions' stack lines are ignored."""
    kernels: dict[str, KernelResources] = {}
    current: KernelResources | None = None  # the entry being compiled
    props_target: str | None = None  # whose "Function properties" block we are in
    for raw in log.splitlines():
        line = raw.replace("\x00", "")
        if m := _ENTRY.search(line):
            current = kernels.setdefault(m["name"], KernelResources(m["name"], m["arch"]))
            current.arch = m["arch"]
            props_target = None
            continue
        if m := _PROPS.search(line):
            props_target = m["name"]
            continue
        if m := _STACK.search(line):
            target = kernels.get(props_target) if props_target else current
            if target is None and props_target:
                # nvcc prints all "Function properties" blocks before or after the entry; keep it for later.
                target = kernels.setdefault(props_target, KernelResources(props_target))
            if target is not None:
                target.stack_frame = int(m["stack"])
                target.spill_stores = int(m["st"])
                target.spill_loads = int(m["ld"])
            continue
        if (m := _USED.search(line)) and current is not None:
            current.registers = int(m["regs"])
            if b := _BARRIERS.search(line):
                current.barriers = int(b["n"])
            if s := _SMEM.search(line):
                current.shared_static = int(s["n"])
            current.constant = {int(c["bank"]): int(c["n"]) for c in _CMEM.finditer(line)}
    # Drop device-function records that never became entries (they have no arch).
    return {k: v for k, v in kernels.items() if v.arch}
