"""Will this binary run on GPU X? The driver's choice when it loads a fatbin (seeds/000 §3):

1. SASS built for the GPU's exact compute capability: loads as is.
2. Else SASS of the same major version and a lower minor (sm_80 on an 8.6 or 8.9 GPU):
   loads as is. Never across majors: sm_80 SASS does not run on 9.0 (H100).
   Arch-specific SASS (sm_90a, sm_100a) runs only on exactly that compute capability;
   family SASS (sm_100f) runs on its major version at the same or a higher minor.
3. Else PTX for a virtual arch at or below the GPU (compute_80 on a 9.0 GPU): the driver
   JIT-compiles it at first load (seconds to tens of seconds, cached in ~/.nv/ComputeCache),
   without the newer GPU's own instructions. compute_90a PTX only JITs for exactly 9.0;
   compute_100f only within major 10. The driver must also be at least as new as the
   toolkit that wrote the PTX.
4. Else: "no kernel image is available for execution on the device"
   (cudaErrorNoKernelImageForDevice / CUDA_ERROR_NO_BINARY_FOR_GPU).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Iterable

from .errors import AnalysisError

_TARGET = re.compile(r"^(?P<kind>sm|compute)_(?P<major>\d+?)(?P<minor>\d)(?P<suffix>[af]?)$")


@dataclass(frozen=True, order=True)
class _Code:
    major: int
    minor: int
    suffix: str
    kind: str  # "sm" or "compute"

    @property
    def name(self) -> str:
        return f"{self.kind}_{self.major}{self.minor}{self.suffix}"

    def sass_runs_on(self, cc: tuple[int, int]) -> bool:
        if self.suffix == "a":
            return (self.major, self.minor) == cc
        return self.major == cc[0] and self.minor <= cc[1]

    def ptx_jits_for(self, cc: tuple[int, int]) -> bool:
        if self.suffix == "a":
            return (self.major, self.minor) == cc
        if self.suffix == "f":
            return self.major == cc[0] and self.minor <= cc[1]
        return (self.major, self.minor) <= cc


def _parse_code(name: str) -> _Code:
    m = _TARGET.match(name.strip().lower())
    if not m:
        raise AnalysisError(f"not a SASS or PTX target: {name!r}. Write sm_80, sm_90a, sm_100f or compute_90.")
    return _Code(int(m["major"]), int(m["minor"]), m["suffix"], m["kind"])


def _target_cc(target) -> tuple[int, int]:
    """A GPU as (major, minor): a cc tuple, "9.0", "sm_90", a DeviceInfo/DeviceSpec, or a device name ("H100 SXM")."""
    if hasattr(target, "cc") and isinstance(target.cc, tuple):
        return tuple(target.cc)
    if isinstance(target, tuple):
        return int(target[0]), int(target[1])
    text = str(target).strip()
    if re.match(r"^(sm_)?\d+(\.\d)?[af]?$", text.lower()):
        from .occupancy import _cc

        return _cc(text)
    from .devices import lookup

    spec = lookup(text)
    if spec is None:
        raise AnalysisError(f"unknown GPU {target!r}: give a compute capability (9.0, sm_90) or a known device name "
                            "(see kernelab.analysis.devices.DEVICES)")
    return spec.cc


@dataclass(frozen=True)
class Verdict:
    """How (and whether) a binary runs on one GPU."""

    target: str  # the GPU's compute capability, "9.0"
    runs: bool
    how: str  # "sass" (loads as is), "jit" (PTX compiled at first load) or "none"
    image: str | None  # the SASS or PTX the driver takes
    reason: str

    def __str__(self) -> str:
        return f"{self.target}: {self.reason}"

    def to_dict(self) -> dict:
        return asdict(self)


def will_it_run(contents, target) -> Verdict:
    """The driver's verdict for a binary holding `contents` on a GPU of compute capability `target`.

    contents: a FatbinListing (sass.list_fatbin) or an iterable of target names
              ({"sm_80", "sm_90a", "compute_90"}).
    target:   (9, 0), "9.0", "sm_90", a DeviceInfo/DeviceSpec or a device name.
    """
    names: Iterable[str] = contents.targets if hasattr(contents, "targets") else contents
    if isinstance(names, str):
        names = [names]
    codes = [_parse_code(n) for n in names]
    cc = _target_cc(target)
    label = f"{cc[0]}.{cc[1]}"
    have = ", ".join(c.name for c in sorted(codes)) or "nothing"

    sass = [c for c in codes if c.kind == "sm" and c.sass_runs_on(cc)]
    if sass:
        # Exact compute capability first (arch-specific before family before plain), else the highest minor.
        best = max(sass, key=lambda c: (c.minor, {"a": 2, "f": 1, "": 0}[c.suffix]))
        if (best.major, best.minor) == cc:
            why = f"SASS {best.name} matches {label}; loads as is"
        else:
            why = (f"SASS {best.name} runs on {label} (same major version {cc[0]}, minor {best.minor} <= {cc[1]}); "
                   f"loads as is, without {label}-specific tuning")
        return Verdict(label, True, "sass", best.name, why)

    ptx = [c for c in codes if c.kind == "compute" and c.ptx_jits_for(cc)]
    if ptx:
        best = max(ptx, key=lambda c: (c.major, c.minor, {"a": 2, "f": 1, "": 0}[c.suffix]))
        skipped = [c.name for c in codes if c.kind == "sm"]
        why = (f"no SASS for {label}" + (f" ({', '.join(skipped)} cannot run there)" if skipped else "")
               + f"; the driver JIT-compiles PTX {best.name} at first load (seconds to tens of seconds, then cached "
               f"in ~/.nv/ComputeCache; needs a driver at least as new as the toolkit that wrote the PTX)")
        return Verdict(label, True, "jit", best.name, why)

    hints = []
    for c in codes:
        if c.kind == "sm" and c.suffix == "a":
            hints.append(f"{c.name} is arch-specific: it runs only on {c.major}.{c.minor}")
        elif c.kind == "sm" and c.major != cc[0]:
            hints.append(f"{c.name} SASS does not cross major versions")
        elif c.kind == "sm":
            hints.append(f"{c.name} SASS needs minor >= {c.minor}")
        elif c.suffix == "a":
            hints.append(f"{c.name} PTX only JITs for exactly {c.major}.{c.minor}")
        elif c.suffix == "f":
            hints.append(f"{c.name} PTX only JITs within family {c.major}.x")
        else:
            hints.append(f"{c.name} PTX is newer than {label}")
    why = (f"no kernel image is available for execution on the device (cudaErrorNoKernelImageForDevice): "
           f"the binary holds {have}" + (f" ({'; '.join(hints)})" if hints else "")
           + f". Fix: rebuild with -gencode arch=compute_{cc[0]}{cc[1]},code=sm_{cc[0]}{cc[1]}, or embed PTX "
           f"(code=compute_XY with XY <= {cc[0]}{cc[1]}).")
    return Verdict(label, False, "none", None, why)


def compatibility_table(contents, targets) -> list[Verdict]:
    """will_it_run for several GPUs (names or compute capabilities)."""
    return [will_it_run(contents, t) for t in targets]
