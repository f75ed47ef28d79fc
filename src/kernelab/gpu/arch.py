"""GPU architectures as compile targets: `sm_90`, `sm_90a`, `compute_80`, ...

An `Arch` is what a cubin is built for. `default_arch()` is the current GPU's, or sm_90
(Hopper: the H100 and H200 this project measures on) when there is none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import KernelabError

_ARCH = re.compile(r"^(?:sm_|compute_)?(?P<major>\d{1,2})(?P<minor>\d)(?P<suffix>[af]?)$")

# Architectures the project compiles every library kernel for in CI.
CI_ARCHS = ("sm_80", "sm_90", "sm_100", "sm_120")
DEFAULT_ARCH = "sm_90"


@dataclass(frozen=True, order=True)
class Arch:
    major: int
    minor: int
    suffix: str = ""  # "a": arch-specific features (wgmma, setmaxnreg); "f": family-specific

    @classmethod
    def parse(cls, value: "str | Arch | tuple[int, int]") -> "Arch":
        if isinstance(value, Arch):
            return value
        if isinstance(value, tuple):
            return cls(int(value[0]), int(value[1]))
        m = _ARCH.match(str(value).strip().lower().replace(".", ""))
        if not m:
            raise KernelabError(f"not a GPU architecture: {value!r}. Write it as sm_90, sm_90a, 9.0 or 90.")
        return cls(int(m["major"]), int(m["minor"]), m["suffix"])

    @property
    def sm(self) -> str:
        return f"sm_{self.major}{self.minor}{self.suffix}"

    @property
    def compute(self) -> str:
        return f"compute_{self.major}{self.minor}{self.suffix}"

    @property
    def cc(self) -> tuple[int, int]:
        return (self.major, self.minor)

    @property
    def number(self) -> int:
        return self.major * 10 + self.minor

    def nvcc_gencode(self) -> str:
        # The -gencode form: `-arch=sm_90a` alone also ran a plain sm_90 pass that rejected wgmma (HOPPER.md).
        return f"-gencode=arch={self.compute},code={self.sm}"

    def __str__(self) -> str:
        return self.sm


def default_arch() -> Arch:
    from .device import current_arch

    live = current_arch()
    return live if live is not None else Arch.parse(DEFAULT_ARCH)
