"""The physical floor: the least time the work can take on this device.

    floor_s, reason = physical_floor(bytes=3 * n * 4, bandwidth=info.nominal_bandwidth)
    bench(fn, floor_s=floor_s, floor_reason=reason)      # raises ImpossibleResult below it

The floor is the larger of bytes / peak bandwidth and FLOPs / peak rate. Use nominal peaks
(no kernel beats them), not measured ones (a good kernel may beat a measured copy).
"""

from __future__ import annotations

from .errors import BenchError, ImpossibleResult
from .stats import format_time


def physical_floor(*, bytes: int = 0, bandwidth: float | None = None, flops: int = 0,
                   peak_flops: float | None = None, flop_unit: str = "") -> tuple[float, str]:
    """(floor seconds, reason) for moving `bytes` at `bandwidth` B/s and doing `flops` at `peak_flops`."""
    if bytes and not bandwidth:
        raise BenchError("physical_floor: bytes given without bandwidth (bytes/s); pass e.g. device_info().nominal_bandwidth")
    if flops and not peak_flops:
        raise BenchError("physical_floor: flops given without peak_flops (FLOP/s); pass the device's peak for that unit")
    if bytes < 0 or flops < 0 or (bandwidth is not None and bandwidth <= 0) or (peak_flops is not None and peak_flops <= 0):
        raise BenchError("physical_floor: bytes, flops, bandwidth and peak_flops must be positive")
    candidates = []
    if bytes:
        t = bytes / bandwidth
        candidates.append((t, f"bytes/bandwidth: {bytes / 1e6:.4g} MB / {bandwidth / 1e12:.4g} TB/s = {format_time(t)}"))
    if flops:
        t = flops / peak_flops
        unit = f" {flop_unit}" if flop_unit else ""
        candidates.append((t, f"FLOPs/peak: {flops / 1e9:.4g} GFLOP / {peak_flops / 1e12:.4g} TFLOP/s{unit} = {format_time(t)}"))
    if not candidates:
        raise BenchError("physical_floor: give bytes (with bandwidth) and/or flops (with peak_flops)")
    return max(candidates)


def check_floor(measurement, floor_s: float | None, floor_reason: str | None) -> None:
    """Raise ImpossibleResult when the measurement's median is below `floor_s`."""
    if floor_s is not None and measurement.median_s < floor_s:
        raise ImpossibleResult(measurement, floor_s, floor_reason)
