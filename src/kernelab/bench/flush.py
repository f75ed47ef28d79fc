"""Cold L2 before a sample: a memset of a buffer at least twice the device's L2, on the timed
stream, before the start event; and persisting L2 lines reset (kernelab.gpu.l2).

Why 2x: L2 replacement is not strict LRU, so writing exactly L2-size bytes leaves some old
lines resident; twice the size leaves (almost) none. On an H200 (60 MiB L2) that is 120 MiB,
about 30 us of memset at HBM speed, outside the event pair.

Method "memset" (what the seeds, nvbench and triton.testing.do_bench do) leaves L2 full of
dirty lines of the flush buffer; the timed kernel's first misses then also write those back to
HBM (at most one L2 of writes). Method "memset_read" (the default) reads the buffer after the
memset, so L2 holds clean lines and the kernel starts on a clean cache, the state ncu's
--cache-control all gives. scripts/bench_accuracy.py measures both against ncu: on the H200
(2026-11-30) memset read +2.4% and memset_read +0.04% against ncu for a 230 us kernel, and
+26% and +6% for a 24 us one (docs/runs/2026-11-30-h200-bench_accuracy.json).
"""

from __future__ import annotations

FLUSH_METHODS = ("memset", "memset_read")
MIB = 1 << 20

_flushers: dict = {}


def flush_bytes(l2_bytes: int) -> int:
    """Bytes to memset: 2 x L2, rounded up to a MiB (at least 2 MiB)."""
    return max(2 * MIB, -(-2 * int(l2_bytes) // MIB) * MIB)


class L2Flusher:
    """One flush buffer per (device, method), reused by every run in the process."""

    def __init__(self, device_index: int, l2_bytes: int, method: str = "memset"):
        import torch

        if method not in FLUSH_METHODS:
            raise ValueError(f"unknown L2 flush method {method!r}; choose one of {', '.join(FLUSH_METHODS)}")
        self.device_index, self.l2_bytes, self.method = device_index, l2_bytes, method
        self.nbytes = flush_bytes(l2_bytes)
        self.buffer = torch.empty(self.nbytes, dtype=torch.uint8, device=f"cuda:{device_index}")
        if method == "memset_read":
            self._rows = self.buffer.view(torch.float32).view(256, -1)
            self._sums = torch.empty(256, dtype=torch.float32, device=self.buffer.device)

    @classmethod
    def for_device(cls, device_index: int, method: str = "memset") -> "L2Flusher":
        key = (device_index, method)
        if key not in _flushers:
            from ..gpu import device_info

            _flushers[key] = cls(device_index, device_info(device_index).l2_bytes, method)
        return _flushers[key]

    def flush(self) -> None:
        """Enqueue the flush on torch's current stream (the timed one)."""
        self.buffer.zero_()
        if self.method == "memset_read":
            import torch

            torch.sum(self._rows, dim=1, out=self._sums)

    def info(self) -> dict:
        return {"flush_bytes": self.nbytes, "flush_method": self.method, "l2_bytes": self.l2_bytes}


def cache_state_info(reset_ok, flusher) -> dict:
    """What a timer reports about L2 preparation: the persisting-line reset and the flush."""
    d = {"persisting_l2_reset": reset_ok}
    if reset_ok is False:
        from ..gpu.l2 import reset_error

        d["persisting_l2_reset_error"] = reset_error()
    if flusher is not None:
        d.update(flusher.info())
    return d
