"""Exceptions raised by kernelab's CUDA layer. Each message names the problem and the fix."""

from __future__ import annotations

import re
from dataclasses import dataclass


class KernelabError(Exception):
    """Base class for every error kernelab raises on purpose."""


class NoGPUError(KernelabError):
    """Raised when an operation needs a CUDA device and none is visible."""

    def __init__(self, what: str = "this operation"):
        super().__init__(
            f"{what} needs an NVIDIA GPU, and torch sees none (torch.cuda.is_available() is False). "
            "Compiling, resource reports, occupancy and predicted floors work without one: "
            "try `kernelab inspect --all` or `kernelab run` (static mode)."
        )


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int
    severity: str  # "error", "warning", "catastrophic error"
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.severity}: {self.message}"


# NVRTC and nvcc (cudafe) both write `file(line): error: message`.
_DIAG = re.compile(r"^(?P<file>[^\s()][^()]*?)\((?P<line>\d+)\): (?P<sev>catastrophic error|error|warning)(?: #\d+-D)?: (?P<msg>.*)$")


def parse_diagnostics(log: str) -> list[Diagnostic]:
    out = []
    for line in log.splitlines():
        m = _DIAG.match(line.strip())
        if m:
            out.append(Diagnostic(m["file"], int(m["line"]), m["sev"], m["msg"].strip()))
    return out


class CompileError(KernelabError):
    """The compiler refused the source. `.log` is its full output; `.diagnostics` the parsed lines."""

    def __init__(self, name: str, compiler: str, arch: str, log: str):
        self.name, self.compiler, self.arch, self.log = name, compiler, arch, log
        self.diagnostics = parse_diagnostics(log)
        errors = [d for d in self.diagnostics if d.severity != "warning"] or self.diagnostics
        head = "\n".join(f"  {d}" for d in errors[:10]) or "\n".join("  " + l for l in log.strip().splitlines()[:20])
        super().__init__(f"{compiler} could not compile {name} for {arch}:\n{head}")


class ArgumentError(KernelabError, TypeError):
    """A kernel argument does not match the kernel's C parameter."""


class LaunchError(KernelabError):
    """The launch itself was refused (bad grid/block, too much shared memory, ...)."""


class KernelFault(KernelabError):
    """A kernel faulted on the device (illegal address, trap, assert, ...).

    These errors are sticky: the CUDA context of this process is now unusable, and every
    later CUDA call fails the same way. Only a new process recovers; kernelab's isolation
    worker (kernelab.check.worker) runs candidates in one for exactly this reason.
    """

    def __init__(self, kernel: str | None, cuda_message: str):
        self.kernel, self.cuda_message = kernel, cuda_message
        where = f"kernel {kernel!r}" if kernel else "a kernel launched earlier"
        super().__init__(
            f"{where} faulted on the GPU: {cuda_message.strip()}. The CUDA context of this process is now "
            "unusable (the error is sticky): restart the process. To find the faulting line, run under "
            "`compute-sanitizer` (kernelab sanitize), or set KERNELAB_LAUNCH_BLOCKING=1 to synchronise after each launch."
        )


_STICKY_MARKERS = (
    "illegal memory access", "illegal address", "misaligned address", "device-side assert",
    "unspecified launch failure", "an illegal instruction", "trap", "hardware stack error",
    "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_ASSERT",
    "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_HARDWARE_STACK_ERROR",
    "CUDA_ERROR_INVALID_PC", "CUDA_ERROR_LAUNCH_TIMEOUT",
)


def is_sticky_message(msg: str) -> bool:
    low = msg.lower()
    return any(m.lower() in low for m in _STICKY_MARKERS)
