"""L2 persistence control: the one L2 operation torch.cuda has no API for.

A kernel (or library) that sets a stream access-policy window can leave lines marked
"persisting" in L2; a memset flush does not evict them, so a cold-L2 timing would still
hit them. kernelab.bench calls `reset_persisting_l2()` before each cold sample.
"""

from __future__ import annotations

_state: dict = {"bound": None, "supported": True, "error": None}


def reset_persisting_l2(index: int | None = None) -> bool:
    """Reset every persisting L2 line of the current context to normal (cuCtxResetPersistingL2Cache,
    the driver-API form of cudaCtxResetPersistingL2Cache). Takes effect when the call returns.

    Returns True when the reset ran. Returns False where it cannot (CUDA_ERROR_NOT_SUPPORTED on
    GPUs before Ampere, or any other error, kept in `reset_error()`); after one failure it is not
    retried, so a timing run goes on and records that the reset did not happen.
    Raises NoGPUError without a GPU.
    """
    if not _state["supported"]:
        return False
    from cuda.bindings import driver

    from .device import cc_device

    if index is None:
        import torch

        index = torch.cuda.current_device()
    if _state["bound"] != index:
        cc_device(index)  # make torch's primary context current on this thread (once per device)
        _state["bound"] = index
    (err,) = driver.cuCtxResetPersistingL2Cache()
    if err == driver.CUresult.CUDA_SUCCESS:
        return True
    _state["supported"] = False
    _state["error"] = f"cuCtxResetPersistingL2Cache: {err!r}"
    return False


def reset_error() -> str | None:
    """Why the last reset_persisting_l2() returned False, or None."""
    return _state["error"]
