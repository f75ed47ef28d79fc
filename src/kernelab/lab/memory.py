"""Memory claims: coalescing (seeds/003, seeds/004 §2.2), shared-memory bank conflicts (seeds/003),
misaligned views (seeds/000 §4.2), and cudaMalloc/cudaFree against the caching allocator
(seeds/000 §4.2).

The two that can take a process down (a misaligned 16-byte load) or need a fresh allocator
(PYTORCH_NO_CUDA_MEMORY_CACHING is read once, at start-up) run their GPU part in a child
process through kernelab.check.worker; the parent only reads the child's report.
"""

from __future__ import annotations

from ._common import EFFECT, about, fmt_bw, fmt_time, host_calls, host_measure, load_kernels, pick, run_child, timed
from .base import Check, Verdict, experiment

# ---- the 32-bank model ------------------------------------------------------------------------

BANKS = 32


def bank_conflict_degree(word_addresses) -> int:
    """Wavefronts one warp-wide shared-memory access of 4-byte words takes: the largest number of
    distinct words that fall in one bank (equal words are a broadcast and cost nothing extra)."""
    per_bank: dict[int, set] = {}
    for w in word_addresses:
        per_bank.setdefault(w % BANKS, set()).add(w)
    return max((len(s) for s in per_bank.values()), default=0)


def column_read_degree(row_words: int, rows: int = 32, column: int = 0) -> int:
    """Conflict degree of 32 lanes reading tile[lane][column] from rows of `row_words` words."""
    return bank_conflict_degree(lane * row_words + column for lane in range(rows))


# ---- 6. coalescing ------------------------------------------------------------------------------

STRIDES = (1, 2, 4, 8, 16, 32)
COALESCING = "useful bandwidth, stride 1 / stride 32"
STRIDE_FALL = 32.0  # seeds/003: "跨步访问把一次传输拆成 32 次，带宽利用率掉 32 倍"


def coalescing_verdict(bw_by_stride: dict) -> Verdict:
    return Verdict([Check(COALESCING, bw_by_stride[1] / bw_by_stride[32], *about(STRIDE_FALL), "x")],
                   note="useful bytes = 8 per element (one 4-byte read, one 4-byte write) at every stride")


@experiment("coalescing", title="Coalesced against strided access",
            claim="A warp whose 32 threads read consecutive addresses is served by one memory transaction; strided "
                  "access splits it into up to 32, so bandwidth falls by up to 32x as the stride grows from 1 to 32.",
            source="seeds/003 §memory hierarchy; seeds/004 §2.2")
def coalescing(ctx):
    import torch

    n = pick(ctx, quick=1 << 22, full=1 << 24)
    kern = load_kernels("strided_copy").kernel("strided_copy")
    src = torch.randn(n * max(STRIDES), device="cuda")
    dst = torch.zeros_like(src)
    bws = {}
    for s in STRIDES:
        def fn(s=s):
            kern(src, dst, n, s, grid=-(-n // 256), block=256)
        m = timed(ctx, fn, f"strided copy, stride {s:2d} ({n:,} elements)", work_bytes=8 * n, key=f"stride_{s}")
        bws[s] = 8 * n / m.median_s
    sample = torch.arange(0, n * 32, 32 * 997, device="cuda")
    if not torch.equal(dst[sample], src[sample]):
        raise RuntimeError("the strided copy did not copy: the kernel is wrong")
    ctx.record("useful_bandwidth_bytes_per_s", {str(s): v for s, v in bws.items()})
    ctx.log("useful bandwidth: " + ", ".join(f"s={s}: {fmt_bw(v)}" for s, v in bws.items()))
    return coalescing_verdict(bws)


# ---- 7. bank conflicts ----------------------------------------------------------------------------

MICRO = "shared-memory column reads, unpadded / padded tile (time)"
TRANSPOSE = "transpose 32x32 tiles: v1 (no padding) / v2 (+1 column) time"


def bank_verdict(t_micro_unpadded: float, t_micro_padded: float, t_tr_unpadded: float, t_tr_padded: float) -> Verdict:
    predicted = column_read_degree(32) / column_read_degree(33)
    return Verdict([
        Check(MICRO, t_micro_unpadded / t_micro_padded, *about(predicted), "x"),
        Check(TRANSPOSE, t_tr_unpadded / t_tr_padded, 1.0 + EFFECT, None, "x"),
    ], note=f"32 banks of 4-byte words: a column of a 32-float tile is {column_read_degree(32)}-way conflicted, "
            f"of a 33-float tile {column_read_degree(33)}-way")


@experiment("bank_conflicts", title="Shared-memory bank conflicts and the +1 padding",
            claim="Shared memory has 32 banks; when the threads of a warp read different addresses in one bank the "
                  "reads are serialised. Reading a tile by column puts all 32 threads in one bank, and padding "
                  "each row by one column removes the conflict: shown on a column-read loop and a transpose.",
            source="seeds/003 §memory hierarchy")
def bank_conflicts(ctx):
    import torch

    from ..gpu import device_info
    from ..ops import Case, discover, run_variant

    info = device_info()
    rounds = pick(ctx, quick=64, full=256)
    blocks, threads = info.sm_count * 4, 512
    out = torch.empty(blocks * threads, device="cuda")
    times = {}
    for pad in (0, 1):
        kern = load_kernels("smem_column", defines={"PAD": pad}).kernel("smem_column")

        def fn(kern=kern):
            kern(out, rounds, grid=blocks, block=threads)
        label = f"column reads, tile 32 x {32 + pad}"
        times[pad] = timed(ctx, fn, label, mode="hot", key=f"smem_column_pad{pad}").median_s
    op = discover()["transpose"]
    side = pick(ctx, quick=4096, full=8192)
    case = Case((side, side), "float32")
    inputs = op.make_inputs(case, 0, "cuda")
    outputs = op.make_outputs(case, inputs)
    tt = {}
    for name in ("v1", "v2"):
        v = op.variant(name)
        m = timed(ctx, lambda v=v: run_variant(op, v, case, inputs, outputs), f"transpose {v.name} fp32 {side}^2",
                  work_bytes=op.work(case).bytes, key=f"transpose_{v.name}")
        tt[name] = m.median_s
    if not torch.equal(outputs["out"], inputs["m"].t()):
        raise RuntimeError("transpose v2 gave a wrong result")
    ctx.record("predicted_degree", {"unpadded": column_read_degree(32), "padded": column_read_degree(33)})
    ctx.log(f"unpadded/padded: column loop {times[0] / times[1]:.1f}x, transpose {tt['v1'] / tt['v2']:.2f}x")
    return bank_verdict(times[0], times[1], tt["v1"], tt["v2"])


# ---- 12. misaligned views ---------------------------------------------------------------------------

CONTIGUOUS = "x[1:] of a bf16 tensor is contiguous"
PTR_MOD = "x[1:].data_ptr() % 16"
UNCHECKED = "16-byte loads without an alignment check on x[1:]: fault or wrong result"
OURS = "vector_add v1_vec16 (checks alignment at run time) right on x[1:]"
REFUSED = "kernelab's launch refuses x[1:] for a uint4* parameter"
SEED_PTR_MOD = 2  # seeds/000 §4.2: "view % 16 == 2"
MISALIGNED_TARGET = "kernelab.lab.memory:misaligned_task"


def misaligned_verdict(contiguous: bool, ptr_mod16: int, unchecked: str, ours_ok: bool, refused: bool) -> Verdict:
    """unchecked: 'crash' (the child faulted), 'wrong' (it ran and the sums are wrong) or 'right'."""
    return Verdict([
        Check(CONTIGUOUS, float(contiguous), 1, 1),
        Check(PTR_MOD, float(ptr_mod16), SEED_PTR_MOD, SEED_PTR_MOD, "B"),
        Check(UNCHECKED, float(unchecked in ("crash", "wrong")), 1, 1),
        Check(OURS, float(ours_ok), 1, 1),
        Check(REFUSED, float(refused), 1, 1),
    ], note="1 = yes, 0 = no; the unchecked kernel runs in a child process (a misaligned load is a sticky fault)")


def misaligned_task(n: int) -> dict:
    """Child side: 16-byte loads through x[1:] of bf16 tensors, no alignment check."""
    import torch

    from ..check.worker import note

    kern = load_kernels("vec16_unchecked").kernel("add_vec16_unchecked")
    a = torch.randn(n + 1, dtype=torch.bfloat16, device="cuda")[1:]
    b = torch.randn(n + 1, dtype=torch.bfloat16, device="cuda")[1:]
    c = torch.zeros(n, dtype=torch.bfloat16, device="cuda")
    torch.cuda.synchronize()
    mis = a.data_ptr() % 16
    note(f"launching add_vec16_unchecked on views with data_ptr % 16 == {mis}")
    try:
        kern(a, b, c, n, grid=-(-n // (8 * 256)), block=256)
        torch.cuda.synchronize()
    except Exception as e:  # the expected outcome: a misaligned-address fault, reported as a crash
        return {"ok": False, "reason": "crash", "detail": str(e).strip().splitlines()[0], "faulted": True,
                "ptr_mod16": mis}
    wrong = int((c != (a.float() + b.float()).to(torch.bfloat16)).sum().item())
    return {"ok": True, "faulted": False, "wrong_elements": wrong, "ptr_mod16": mis, "n": n}


@experiment("misaligned_views", title="Misaligned views and vector loads",
            claim="x[1:] of a bf16 tensor is contiguous yet its pointer is only 2 bytes past a 16-byte boundary "
                  "(ptr % 16 == 2), so a vectorised kernel must check alignment at run time: one that does not "
                  "faults or computes wrong results; ours checks and is right.",
            source="seeds/000 §4.2")
def misaligned_views(ctx):
    import torch

    from ..check import check_variant
    from ..gpu import ArgumentError
    from ..ops import Case, discover

    n = pick(ctx, quick=1 << 20, full=1 << 24)
    x = torch.empty(n + 1, dtype=torch.bfloat16, device="cuda")
    v = x[1:]
    contiguous, mis = v.is_contiguous(), v.data_ptr() % 16
    ctx.log(f"x = torch.empty({n + 1}, bf16); x[1:].is_contiguous() = {contiguous}, data_ptr % 16 = {mis}")
    typed = load_kernels("vec16_unchecked").kernel("add_vec16_typed")
    try:  # the argument conversion a launch does first; never launched here, a misaligned load would be sticky
        typed.convert_args((v, v, torch.empty_like(v), n // 8))
        refused, why = False, "accepted"
    except ArgumentError as e:
        refused, why = True, str(e)
    ctx.log(f"uint4* parameter given x[1:]: {'refused: ' + why if refused else 'not refused'}")
    o = run_child(MISALIGNED_TARGET, kwargs={"n": n}, timeout_s=60, task_id="misaligned vec16 without check")
    if o.status == "crash":
        unchecked = "crash"
    elif o.status == "ok" and isinstance(o.result, dict):
        unchecked = "wrong" if o.result.get("wrong_elements") else "right"
    else:
        raise RuntimeError(f"the child running the unchecked kernel ended as {o.status}: {o.detail}")
    ctx.log(f"child (unchecked kernel): {o.status}: {o.detail or o.result}")
    op = discover()["vector_add"]
    r = check_variant(op, "v1_vec16", Case((n,), "bfloat16", offset=1), seeds=(0,), dists=("normal",))
    ctx.log(f"vector_add v1_vec16 on a bf16 view with offset 1: {'right' if r.ok else r.reason + ': ' + r.detail}")
    ctx.record("child", {"status": o.status, "detail": o.detail, "result": o.result, "wall_s": o.wall_s})
    ctx.record("refused_message", why)
    ctx.record("ours", {"ok": r.ok, "reason": r.reason, "detail": r.detail})
    ctx.record("ptr_mod16", mis)
    return misaligned_verdict(contiguous, mis, unchecked, r.ok, refused)


# ---- 13. cudaMalloc / cudaFree against the caching allocator ----------------------------------------

MALLOC = "cudaMalloc, host time per call (4 MiB, GPU idle)"
FREE = "cudaFree, host time per call (4 MiB, GPU idle)"
FREE_WAITS = "cudaFree issued behind a spin kernel: host time / spin time"
CACHED_SPEEDUP = "cudaMalloc / caching allocator's allocation, host time"
CACHED_FREE_WAITS = "caching allocator's free behind a spin kernel: host time / spin time"
MALLOC_FREE_TARGET = "kernelab.lab.memory:malloc_free_task"
SEED_MALLOC_RANGE_US = (1.0, 10_000.0)  # seeds/000 §4.2: "cudaMalloc 和 cudaFree 慢（微秒到毫秒级）"
WAITS_MIN = 0.9  # "waits for the spin": the host returns only after (almost) all of it ran
NO_WAIT_MAX = 0.5  # "does not wait": returns before half of the spin ran
ALLOC_BYTES = 4 << 20
SPIN_S = 1e-3


def malloc_free_verdict(malloc_s: float, free_s: float, free_spin_host_s: float, spin_s: float, cached_alloc_s: float,
                        cached_free_spin_host_s: float, cached_spin_s: float) -> Verdict:
    return Verdict([
        Check(MALLOC, malloc_s * 1e6, *SEED_MALLOC_RANGE_US, "us"),
        Check(FREE, free_s * 1e6, *SEED_MALLOC_RANGE_US, "us"),
        Check(FREE_WAITS, free_spin_host_s / spin_s, WAITS_MIN, None, "x"),
        Check(CACHED_SPEEDUP, malloc_s / cached_alloc_s, 1.0 + EFFECT, None, "x"),
        Check(CACHED_FREE_WAITS, cached_free_spin_host_s / cached_spin_s, None, NO_WAIT_MAX, "x"),
    ], note="cudaMalloc/cudaFree are measured in a child with PYTORCH_NO_CUDA_MEMORY_CACHING=1 (torch then calls "
            "them directly); the spin is torch.cuda._sleep, its length the GPU time of the same sample")


def _allocation_times(nbytes: int, spin_s: float, quick: bool) -> dict:
    """Host times of allocation, free, and free behind a spin kernel, with torch's current allocator."""
    import torch

    from ..gpu import device_info

    total = host_calls(quick)

    def alloc():
        return torch.empty(nbytes, dtype=torch.uint8, device="cuda")

    pool = [alloc() for _ in range(total)]  # with the caching allocator: fills its cache, so the
    pool.clear()                              # allocations timed next come from it
    torch.cuda.synchronize()
    kept: list = []
    m_alloc = host_measure(lambda: kept.append(alloc()), quick=quick, name="allocate")
    kept.clear()
    torch.cuda.synchronize()
    pool = [alloc() for _ in range(total)]
    torch.cuda.synchronize()

    def free_one():
        t = pool.pop()
        del t
    m_free = host_measure(free_one, quick=quick, name="free")
    pool = [alloc() for _ in range(total)]
    cycles = int(spin_s * device_info().sm_clock_max_mhz * 1e6)
    torch.cuda.synchronize()

    def spin_then_free():
        torch.cuda._sleep(cycles)
        t = pool.pop()
        del t
    m_spin_free = host_measure(spin_then_free, quick=quick, name="spin, then free")
    m_spin = host_measure(lambda: torch.cuda._sleep(cycles), quick=quick, name="spin alone")
    pool.clear()
    torch.cuda.synchronize()
    return {"alloc_s": m_alloc.host_enqueue_s, "free_s": m_free.host_enqueue_s,
            "spin_free_host_s": m_spin_free.host_enqueue_s, "spin_gpu_s": m_spin_free.median_s,
            "spin_alone_host_s": m_spin.host_enqueue_s, "spin_alone_gpu_s": m_spin.median_s,
            "reserved_after": int(torch.cuda.memory_reserved()), "calls_per_measurement": total}


def malloc_free_task(nbytes: int, spin_s: float, quick: bool) -> dict:
    """Child side, started with PYTORCH_NO_CUDA_MEMORY_CACHING=1: torch.empty is a cudaMalloc, a tensor's
    death a cudaFree (c10's uncached_allocate / uncached_delete)."""
    import os

    import torch

    if not os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING"):
        raise RuntimeError("malloc_free_task must run with PYTORCH_NO_CUDA_MEMORY_CACHING=1")
    torch.cuda.init()
    return _allocation_times(nbytes, spin_s, quick)


@experiment("malloc_free", title="cudaMalloc and cudaFree against PyTorch's caching allocator",
            claim="cudaMalloc and cudaFree are slow (microseconds to milliseconds per call) and cudaFree implies a "
                  "device synchronisation: it waits for the GPU's running work. PyTorch's caching allocator "
                  "hands out and takes back blocks without either call, so it is faster and does not wait.",
            source="seeds/000 §4.2")
def malloc_free(ctx):
    o = run_child(MALLOC_FREE_TARGET, kwargs={"nbytes": ALLOC_BYTES, "spin_s": SPIN_S, "quick": ctx.quick},
                  env={"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}, timeout_s=120, task_id="cudaMalloc/cudaFree")
    if o.status != "ok":
        raise RuntimeError(f"the child timing cudaMalloc/cudaFree ended as {o.status}: {o.detail}")
    raw = o.result
    ctx.log(f"cudaMalloc {fmt_time(raw['alloc_s'])}, cudaFree {fmt_time(raw['free_s'])} per call (GPU idle); "
            f"behind a {fmt_time(raw['spin_gpu_s'])} spin cudaFree returned after {fmt_time(raw['spin_free_host_s'])} "
            f"(the spin's own launch: {fmt_time(raw['spin_alone_host_s'])})")
    cached = _allocation_times(ALLOC_BYTES, SPIN_S, ctx.quick)
    ctx.log(f"caching allocator: allocate {fmt_time(cached['alloc_s'])}, free {fmt_time(cached['free_s'])}; "
            f"free behind the spin returned after {fmt_time(cached['spin_free_host_s'])}")
    ctx.record("uncached_child", raw)
    ctx.record("caching_allocator", cached)
    ctx.record("bytes", ALLOC_BYTES)
    return malloc_free_verdict(raw["alloc_s"], raw["free_s"], raw["spin_free_host_s"], raw["spin_gpu_s"],
                               cached["alloc_s"], cached["spin_free_host_s"], cached["spin_gpu_s"])

