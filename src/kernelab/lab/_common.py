"""What the lab's experiments share: how a seed's wording becomes a range, bench options for
quick and full runs, the lab's own kernels, and figures several experiments measure once.

Reading a seed's words as a range (the only numbers here that are not measured; each is how
we read the claim, never a result):
- "about X" (约, 大约, 左右, "~"): X / ABOUT .. X * ABOUT, a factor of 1.5 either way;
- "an effect" (faster, slower, changes): a ratio of medians beyond 1 + EFFECT, i.e. more than
  the 5% by which two quick medians of the same kernel can differ on a shared machine;
- "no cost", "no difference": a ratio within 1 +- SAME (10%).
Everything else in a range comes from the seed's own numbers (80-92%, 5-10 us) or from the
device's nominal figures (kernelab.analysis.spec_for), and every value is measured.

Timing goes through kernelab.bench only. `host_measure` times host-side calls (cudaMalloc,
a module load) with bench's event timer with its pacer switched off: bench's pacer keeps the
GPU busy while the host enqueues, which is right for kernels and wrong for a call that waits
for the GPU (cudaFree would wait for the pacer). See the report: a `bench.host_time` would
make this a public API.
"""

from __future__ import annotations

import math
from pathlib import Path

ABOUT = 1.5
EFFECT = 0.05
SAME = 0.10

KERNELS = Path(__file__).resolve().parent / "kernels"


def about(x: float, factor: float = ABOUT) -> tuple[float, float]:
    """The range a seed's "about x" stands for."""
    return x / factor, x * factor


def pick(ctx, *, quick, full):
    """The quick-mode or the full-mode value of a size or count."""
    return quick if ctx.quick else full


def pow2(n: int) -> str:
    """'2^28' for a power of two, else the number with thousands separators."""
    if n > 0 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return f"{n:,}"


def fmt_time(seconds: float | None) -> str:
    from ..bench import format_time

    return format_time(seconds)


def fmt_bw(bytes_per_s: float | None) -> str:
    if bytes_per_s is None or not math.isfinite(bytes_per_s):
        return "n/a"
    return f"{bytes_per_s / 1e12:.2f} TB/s" if bytes_per_s >= 1e11 else f"{bytes_per_s / 1e9:.1f} GB/s"


# ---- timing -------------------------------------------------------------------------------

def bench_options(ctx) -> dict:
    """bench() keywords: the protocol's defaults in a full run; ~2% spread and ~1 s caps in a quick one."""
    from ..bench import WarmupRule

    if ctx.quick:
        return dict(target_rel=0.02, max_wall_s=1.0, min_samples=10,
                    warmup=WarmupRule(min_count=6, min_s=0.01, max_s=0.3, window_s=0.005))
    return dict(max_wall_s=4.0)


def summary(m) -> dict:
    """The numbers of a Measurement worth keeping in an experiment's JSON (all samples when few)."""
    s = m.stats
    d = {"name": m.name, "mode": m.mode, "l2": m.l2, "median_s": s.median, "p10_s": s.p10, "p90_s": s.p90,
         "min_s": s.min, "n": s.n, "spread_rel": m.spread_rel, "stop_reason": m.stop_reason,
         "host_enqueue_s": m.host_enqueue_s, "launch_bound": m.launch_bound,
         "launches_per_sample": m.launches_per_sample, "mean_sm_clock_mhz": m.mean_sm_clock_mhz,
         "throttled_samples": len(m.throttled), "first_call_s": m.warmup.get("first_call_s")}
    if s.n <= 256:
        d["samples_s"] = list(m.samples_s)
    return d


def timed(ctx, fn, what: str, *, mode: str = "cold", work_bytes: int | None = None, key: str | None = None, **kw):
    """bench(fn) with the run's options; logs the median live and records the measurement under `key`."""
    from ..bench import bench

    opts = bench_options(ctx)
    opts.update(kw)
    m = bench(fn, mode=mode, name=what, **opts)
    line = f"{what}: {fmt_time(m.median_s)}"
    if mode == "graph":
        line += " per launch (graph replay)"
    if work_bytes:
        line += f", {fmt_bw(work_bytes / m.median_s)}"
    ctx.log(line)
    ctx.record(key or what, summary(m) | ({"bytes": work_bytes} if work_bytes else {}))
    return m


def host_measure(fn, *, quick: bool, warmup: int | None = None, samples: int | None = None, name: str = ""):
    """Host seconds of fn() with the GPU idle before each call (kernelab.bench.host_time); exactly
    1 + warmup + samples calls of fn, so a test can hand fn a pool of that many objects."""
    from ..bench import host_time

    warmup = HOST_WARMUP[bool(quick)] if warmup is None else warmup
    samples = HOST_SAMPLES[bool(quick)] if samples is None else samples
    return host_time(fn, warmup=warmup, samples=samples, name=name)


HOST_WARMUP = {True: 5, False: 20}  # quick -> calls; host calls settle after a few (no clocks to ramp)
HOST_SAMPLES = {True: 30, False: 200}


def host_calls(quick: bool, warmup: int | None = None, samples: int | None = None) -> int:
    """How many times host_measure calls fn."""
    w = HOST_WARMUP[bool(quick)] if warmup is None else warmup
    return 1 + w + (HOST_SAMPLES[bool(quick)] if samples is None else samples)


# ---- the lab's kernels ---------------------------------------------------------------------

_modules: dict = {}


def kernel_file(name: str) -> Path:
    p = KERNELS / f"{name}.cu"
    if not p.is_file():
        raise FileNotFoundError(f"no lab kernel {p}")
    return p


def load_kernels(name: str, defines: dict | None = None, arch=None, max_registers: int | None = None):
    """Compile (cached on disk) and load kernels/<name>.cu on the current GPU, once per process."""
    import torch

    from ..gpu import compile_file
    from ..gpu.module import Module

    key = (name, tuple(sorted((defines or {}).items())), str(arch), max_registers, torch.cuda.current_device())
    if key not in _modules:
        compiled = compile_file(kernel_file(name), arch=arch, defines=defines, max_registers=max_registers)
        _modules[key] = Module(compiled, defines)
    return _modules[key]


def vector_add(variant: str, n: int, dtype: str = "float32", seed: int = 0):
    """fn() launching the vector_add op's `variant` on fresh inputs (kept alive by the closure)."""
    from ..ops import Case, discover, run_variant

    op = discover()["vector_add"]
    case = Case((n,), dtype)
    inputs = op.make_inputs(case, seed, "cuda")
    outputs = op.make_outputs(case, inputs)
    v = op.variant(variant)

    def fn():
        run_variant(op, v, case, inputs, outputs)
    fn.__name__ = f"vector_add/{v.name}/{dtype}/n={n}"
    fn.bytes = op.work(case).bytes
    fn.inputs, fn.outputs = inputs, outputs
    return fn


# ---- figures measured once per process -----------------------------------------------------

_measured: dict = {}


def nominal_bandwidth() -> float:
    from ..analysis import spec_for

    return spec_for().memory_bandwidth


def achievable_bandwidth(ctx) -> float:
    """A device copy's bandwidth (read + write bytes), the roof an elementwise kernel can reach
    (seeds/000 §9.5 (1)); measured through kernelab.analysis's ceilings, once per process."""
    import torch

    from ..analysis import measure_ceilings

    key = ("copy", torch.cuda.current_device(), bool(ctx.quick))
    if key not in _measured:
        stream = (512 << 20) if ctx.quick else (2 << 30)
        m = measure_ceilings(quick=ctx.quick, which=("copy",), stream_bytes=stream)
        e = m.entries["copy"]
        if e.value is None:
            raise RuntimeError(f"the copy ceiling could not be measured: {e.skipped}")
        _measured[key] = (e.value, e.to_dict())
        ctx.log(f"achievable bandwidth (torch copy_ of {stream >> 20} MiB, read + write): {fmt_bw(e.value)}")
    value, entry = _measured[key]
    ctx.record("achievable_bandwidth", {"bytes_per_s": value, "how": entry["what"], "seconds": entry["seconds"]})
    return value


# ---- worker tasks ---------------------------------------------------------------------------

def run_child(target: str, *, kwargs: dict | None = None, timeout_s: float = 60.0, env: dict | None = None,
              task_id: str = "", step_timeout_s: float | None = None):
    """Run `target` ("kernelab.lab.<module>:<function>") in a child process under the worker's watchdog
    (step_timeout_s: see kernelab.check.worker.Task)."""
    from ..check.worker import Task, run_task

    return run_task(Task(target, kwargs=kwargs or {}, id=task_id or target, timeout_s=timeout_s, env=env or {},
                         step_timeout_s=step_timeout_s))


def parent_healthy() -> tuple[bool, str]:
    """Run a kernel in this process and check its result: is this process's CUDA context still good?"""
    import torch

    from ..gpu import synchronize

    try:
        mod = load_kernels("faults")
        n = 1 << 16
        x = torch.empty(n, device="cuda")
        mod.kernel("fill")(x, 3.0, n, grid=(n + 255) // 256, block=256)
        synchronize()
        ok = bool((x == 3.0).all().item())
        return ok, "a kernel launched in this process after the child's fault ran and wrote the right values" if ok \
            else "a kernel launched in this process wrote wrong values"
    except Exception as e:  # the point of the check: report, do not raise
        return False, f"{type(e).__name__}: {e}"
