"""check_variant / check_callable: is a candidate right, and is it honest?

A candidate is anything callable as `run(inputs, outputs)` that writes the op's outputs on
torch's current stream: a library variant, a user's kernel, a peer (torch eager), or a
Python function on CPU tensors (how the CPU tests drive the harness). For each trial
(seed x distribution, fresh inputs every time):

  run A   outputs poisoned with a signalling NaN, guard bands armed, inputs snapshotted;
          the candidate runs BEFORE the reference is computed;
  ref     the op's float64 reference (a NaN in it fails closed unless NaN is defined);
  run B   outputs poisoned with 0x7F bytes (a large finite value); runs AFTER the reference,
          so a candidate that returns memory the reference left behind is caught either way;
  judge   guard bands, input bits, then each output against the reference. Failures are
          classified: unwritten (poison survived both runs), stale_read (the result depends
          on the poison), cached_result (equals an earlier call's reference), precision
          (right to bf16/fp16/tf32 accuracy only), constant_output, nan, mismatch.

After the first trial, two more phases:

  repeat        the same buffers get fresh inputs twice, like iterations of a timing loop;
                the output must follow the inputs (pointer-keyed caches, skipped calls);
  stream order  (CUDA) a ~20 ms spin kernel is queued on the launch stream, then the fresh
                inputs are copied in and the outputs poisoned, on that stream, then the
                candidate is called, then its outputs are copied on that stream. Work that
                is not ordered on the launch stream (a side stream, a CPU thread) runs before
                its inputs arrive, or finishes after the launch stream says it is done.
                The time from "launch stream done" to "device idle" is reported too.

The first failure ends the check; CheckResult carries one primary reason code.
"""

from __future__ import annotations

import time
import traceback
from collections import deque

from .compare import Comparison, compare_outputs, is_constant, raw_bits, unravel
from .inputs import DISTRIBUTIONS
from .integrity import DEFAULT_GUARD_BYTES, GuardedOutput, InputSnapshot, guarded_outputs, holds_poison, poison_, poison_bits
from .result import CheckResult, failure
from .tolerances import tolerance, DEFAULTS
from .worker import note

DEFAULT_SEEDS = (0, 1, 2)
STREAM_SLEEP_S = 0.02  # how long the launch stream is kept busy before the call (>> any host launch path)
LAG_LIMIT_S = 5e-3  # device busy this long after the launch stream finished => work elsewhere
HISTORY = 4  # earlier calls' references kept to recognise a cached result
HISTORY_EXACT_BYTES = 256 << 20  # bigger references are kept as a recipe (seed, dist) and recomputed
# Lower-precision math touches nearly every element (bf16 math in fp32: >99% of normal inputs);
# fewer failing elements than this are a plain mismatch, not a precision downgrade.
PRECISION_MIN_FRACTION = 0.01
RUN_A = "run A (outputs poisoned with NaN, before the reference)"
RUN_B = "run B (outputs poisoned with 0x7F bytes, after the reference)"


class _Stop(Exception):
    def __init__(self, result: CheckResult):
        self.result = result


def _hex(bits: int, nbytes: int) -> str:
    return f"0x{bits & ((1 << (8 * nbytes)) - 1):0{2 * nbytes}x}"


class _Checker:
    def __init__(self, run, op, case, *, device, name, max_report, guard_bytes, tolerances):
        self.run, self.op, self.case = run, op, case
        self.device = str(device)
        self.is_cuda = self.device.startswith("cuda")
        self.name, self.max_report, self.guard_bytes = name, max_report, guard_bytes
        self.overrides = tolerances or {}
        self.nan_ok = "special" in tuple(getattr(op, "distributions", ()))
        self.history: deque = deque(maxlen=HISTORY)
        self.max_abs = None
        self.max_rel = None
        self.checks: list[str] = []
        self.stream_info: dict | None = None
        self.phase = ""
        self.seed = None
        self.dist = None

    # ---- plumbing ---------------------------------------------------------------------
    def sync(self) -> None:
        if self.is_cuda:
            from ..gpu import synchronize

            synchronize()

    def tol(self, dtype) -> tuple[float, float]:
        return tolerance(self.op, dtype, self.overrides)

    def fail(self, reason: str, detail: str, cmp: Comparison | None = None, **kw) -> CheckResult:
        fields = dict(seed=self.seed, dist=self.dist, phase=self.phase)
        if cmp is not None:
            fields.update(output=cmp.output, mismatches=cmp.mismatches, numel=cmp.numel, first_mismatches=cmp.first,
                          max_abs=cmp.max_abs, max_rel=cmp.max_rel, nan_mismatches=cmp.nan_mismatches,
                          inf_mismatches=cmp.inf_mismatches, rtol=cmp.rtol, atol=cmp.atol)
        fields.update(kw)
        return failure(reason, detail, name=self.name, case=self.case.to_dict(), **fields)

    def call(self, inputs: dict, outputs: dict) -> None:
        """Run the candidate and wait for the device; any exception becomes the check's verdict."""
        note(f"{self.name} {self.case.label}: {self.phase}")
        try:
            self.run(inputs, outputs)
            self.sync()
        except Exception as e:  # the candidate's own failure, reported as a result (never swallowed)
            raise _Stop(self.exception_result(e)) from None

    def exception_result(self, e: Exception) -> CheckResult:
        from ..gpu.errors import CompileError, KernelabError, KernelFault, is_sticky_message

        text = f"{type(e).__name__}: {e}"
        if isinstance(e, CompileError):
            return self.fail("compile_error", str(e))
        if isinstance(e, KernelFault) or is_sticky_message(str(e)):
            return self.fail("crash", f"the candidate faulted on the GPU during {self.phase}: {text}. The CUDA "
                                      "context of this process is now unusable; run candidates through "
                                      "kernelab.check.worker (check_isolated) to contain this.")
        if isinstance(e, (KernelabError, ValueError, TypeError, NotImplementedError)):
            return self.fail("refused", f"the candidate raised a clear error instead of answering: {text}")
        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__)[-6:])
        return self.fail("error", f"the candidate raised {text}\n{tb}")

    def reference(self, inputs: dict, outputs: dict) -> dict:
        ref = self.op.reference(self.case, inputs)
        missing = set(outputs) - set(ref)
        if missing:
            raise ValueError(f"{type(self.op).__name__}.reference returned {sorted(ref)} but make_outputs made "
                             f"{sorted(outputs)}: missing {sorted(missing)}")
        return {k: ref[k] for k in outputs}

    def account(self, cmp: Comparison) -> None:
        for attr in ("max_abs", "max_rel"):
            v = getattr(cmp, attr)
            if v is not None and (getattr(self, attr) is None or v > getattr(self, attr)):
                setattr(self, attr, v)

    def guard_and_inputs(self, guarded: dict[str, GuardedOutput], snapshot: InputSnapshot | None) -> None:
        for g in guarded.values():
            v = g.violations()
            if v:
                raise _Stop(self.fail("out_of_bounds", GuardedOutput.describe(v) + f" during {self.phase}.",
                                      output=g.name, out_of_bounds=v))
        if snapshot is not None:
            changes = snapshot.changes()
            if changes:
                raise _Stop(self.fail("input_mutated", "; ".join(changes) + f" during {self.phase}."))

    def check_reference_nans(self, expected: dict) -> None:
        import torch

        if self.nan_ok:
            return
        for name, e in expected.items():
            if e.dtype.is_floating_point:
                n = int(torch.isnan(e).sum())
                if n:
                    first = int(torch.isnan(e).reshape(-1).nonzero()[0])
                    raise _Stop(self.fail(
                        "nan", f"the reference for '{name}' is NaN at {n} element(s) (first at "
                               f"{unravel(first, e.shape)}) and {type(self.op).__name__} does not declare the "
                               "'special' distribution, so NaN is not a defined result here: failing closed. "
                               "Fix the op's inputs, or declare 'special' if NaN propagation is the defined answer.",
                        output=name))

    # ---- one trial ----------------------------------------------------------------------
    def poisoned_run(self, inputs: dict, guarded: dict[str, GuardedOutput], poison: str, keep: bool = True) -> dict:
        """Poison, call, check guards and inputs; the outputs (copies when `keep`, for a later run
        reuses the buffers)."""
        for g in guarded.values():
            poison_(g.tensor, poison)
            g.arm()
        snapshot = InputSnapshot(inputs)
        self.sync()  # an idle device around the call: this run judges the values, not the ordering
        self.call(inputs, {k: g.tensor for k, g in guarded.items()})
        self.guard_and_inputs(guarded, snapshot)
        return {k: g.tensor.clone() if keep else g.tensor for k, g in guarded.items()}

    def trial(self, seed: int, dist: str):
        self.seed, self.dist = seed, dist
        inputs = self.op.make_inputs(self.case, seed, device=self.device, dist=dist)
        guarded = guarded_outputs(self.op.make_outputs(self.case, inputs), guard_bytes=self.guard_bytes)
        self.phase = RUN_A
        got_a = self.poisoned_run(inputs, guarded, "nan")
        expected = self.reference(inputs, guarded)
        self.check_reference_nans(expected)
        self.phase = RUN_B
        got_b = self.poisoned_run(inputs, guarded, "big", keep=False)  # judged before the buffers are reused
        self.phase = "judging runs A and B"
        for name in guarded:
            self.judge(name, got_a[name], got_b[name], expected[name], inputs)
        self.remember(f"seed {seed}, dist {dist}", expected, seed, dist)
        return inputs, guarded

    def remember(self, label: str, expected: dict, seed: int, dist: str) -> None:
        """Keep this call's reference to recognise a cached result later. A big one (bench sizes:
        a float64 reference of 2^28 elements is 2 GiB, and HISTORY of them were kept) is kept as
        its recipe and recomputed only when a failure needs classifying."""
        if sum(t.numel() * t.element_size() for t in expected.values()) <= HISTORY_EXACT_BYTES:
            self.history.appendleft((label, lambda: expected))
            return
        names = list(expected)

        def recompute() -> dict:
            inputs = self.op.make_inputs(self.case, seed, device=self.device, dist=dist)
            return self.reference(inputs, dict.fromkeys(names))
        self.history.appendleft((label, recompute))

    def judge(self, name: str, got_a, got_b, exp, inputs: dict, poisoned: bool = True) -> None:
        rtol, atol = self.tol(got_a.dtype)
        ca = compare_outputs(got_a, exp, rtol, atol, nan_ok=self.nan_ok, max_report=self.max_report, name=name,
                             keep_mask=True)
        cb = ca if got_b is got_a else compare_outputs(got_b, exp, rtol, atol, nan_ok=self.nan_ok,
                                                       max_report=self.max_report, name=name, keep_mask=True)
        self.account(ca)
        self.account(cb)
        if ca.ok and cb.ok:
            if is_constant(got_a) and not is_constant(exp.to(got_a.dtype)):
                raise _Stop(self.fail("constant_output", f"every element of '{name}' is {_value(got_a)} while the "
                                      "reference varies; it passed the tolerance only because the values are small "
                                      "against atol. " + ca.summary(), ca))
            return
        raise _Stop(self.classify(name, got_a, got_b, exp, ca, cb, inputs, poisoned))

    def classify(self, name, got_a, got_b, exp, ca: Comparison, cb: Comparison, inputs: dict, poisoned: bool):
        cmp = ca if not ca.ok else cb
        got = got_a if not ca.ok else got_b
        if poisoned:
            self.phase = RUN_A if not ca.ok else RUN_B
        bad = ca.bad | cb.bad
        numel = got.numel()
        if poisoned:
            unwritten = holds_poison(got_a, "nan") & holds_poison(got_b, "big") & bad
            n = int(unwritten.sum())
            if n:
                flat = unwritten.reshape(-1).nonzero().flatten()
                lo, hi = int(flat[0]), int(flat[-1])
                size = got.element_size()
                extra = cmp.mismatches - n
                return self.fail("unwritten", (
                    f"{n} of {numel} elements of '{name}' were never written: they still hold the poison after both "
                    f"runs ({_hex(poison_bits(got.dtype, 'nan'), size)}, then {_hex(poison_bits(got.dtype, 'big'), size)}), "
                    f"from index {unravel(lo, got.shape)} to {unravel(hi, got.shape)}"
                    + (f"; {extra} other element(s) are wrong too" if extra > 0 else "") + "."), cmp)
            stale = (raw_bits(got_a) != raw_bits(got_b)) & bad
            n = int(stale.sum())
            if n:
                i = int(stale.reshape(-1).nonzero()[0])
                a = got_a.reshape(-1)[i].item()
                b = got_b.reshape(-1)[i].item()
                e = exp.reshape(-1)[i].item()
                return self.fail("stale_read", (
                    f"{n} of {numel} elements of '{name}' depend on what the output buffer held before the call: "
                    f"at {unravel(i, got.shape)} the result was {a:.6g} with the buffer poisoned as NaN and {b:.6g} "
                    f"with it poisoned as 0x7F bytes (expected {e:.6g}). The kernel reads its output before writing "
                    "it (e.g. c[i] += ...) or is nondeterministic beyond the tolerance."), cmp)
        label = self.matches_history(got, name)
        if label:
            return self.fail("cached_result", (
                f"'{name}' equals the reference for earlier inputs ({label}), not for this call's inputs: a result "
                f"cached or reused across calls (e.g. keyed by pointer), or work skipped on a repeated call. "
                + cmp.summary()), cmp)
        prec = self.precision(got, name, exp, inputs) if cmp.mismatches >= PRECISION_MIN_FRACTION * numel else None
        if prec:
            return self.fail("precision", f"'{name}' is {prec}, but not within the {_dtype(got)} tolerance: "
                                          f"lower-precision math in a {_dtype(got)} op. " + cmp.summary(), cmp)
        if is_constant(got) and not is_constant(exp.to(got.dtype)):
            return self.fail("constant_output", f"every element of '{name}' is {_value(got)} while the reference "
                                                "varies. " + cmp.summary(), cmp)
        if cmp.mismatches == cmp.nan_mismatches + cmp.inf_mismatches:
            return self.fail("nan", "NaN/Inf where the reference says otherwise. " + cmp.summary(), cmp)
        return self.fail("mismatch", cmp.summary(), cmp)

    def matches_history(self, got, name: str) -> str | None:
        rtol, atol = self.tol(got.dtype)
        for label, recall in self.history:
            prev = recall().get(name)
            if prev is not None and prev.shape == got.shape and \
                    compare_outputs(got, prev, rtol, atol, nan_ok=self.nan_ok, max_report=0, name=name).ok:
                return label
        return None

    def precision(self, got, name: str, exp, inputs: dict) -> str | None:
        """Does `got` agree with the reference at a lower precision (tf32, fp16, bf16, tightest first)?"""
        import torch

        if got.dtype not in (torch.float32, torch.float64):
            return None
        lows = (["tf32"] if got.dtype == torch.float32 else []) + ["float16", "bfloat16"]
        for low in lows:
            # What `low`-precision math looks like: at least the default tolerance of that dtype,
            # even where the op judges its own `low` outputs more strictly (an exact bf16 add).
            rtol, atol = (max(a, b) for a, b in zip(self.tol(low), DEFAULTS[low]))
            if compare_outputs(got, exp, rtol, atol, nan_ok=self.nan_ok, max_report=0, name=name).ok:
                return f"within the {low} tolerance (rtol={rtol:g}, atol={atol:g}) of the reference"
            rounded = {k: downgrade(v, low) for k, v in inputs.items()}
            ref_low = self.op.reference(self.case, rounded)[name]
            if compare_outputs(got, ref_low, rtol, atol, nan_ok=self.nan_ok, max_report=0, name=name).ok:
                return f"equal (within {low} tolerance) to the reference computed from inputs rounded to {low}"
        return None

    # ---- repeated calls on the same buffers -----------------------------------------------
    def repeat_phase(self, inputs: dict, guarded: dict[str, GuardedOutput], seed: int, dist: str) -> None:
        """Fresh inputs in the same buffers, no poison in between: what a timing loop's iterations see."""
        for r in (1, 2):
            self.phase = f"repeat call {r} (fresh inputs in the same buffers, like a timed iteration)"
            fresh = self.op.make_inputs(self.case, seed + 7919 * r, device=self.device, dist=dist)
            for k, t in inputs.items():
                if hasattr(t, "copy_"):
                    t.copy_(fresh[k])
            del fresh  # at bench sizes a second set of inputs is gigabytes
            for g in guarded.values():
                g.arm()
            snapshot = InputSnapshot(inputs)
            self.sync()
            self.call(inputs, {k: g.tensor for k, g in guarded.items()})
            self.guard_and_inputs(guarded, snapshot)
            expected = self.reference(inputs, guarded)
            self.check_reference_nans(expected)
            for name, g in guarded.items():
                self.judge(name, g.tensor, g.tensor, expected[name], inputs, poisoned=False)
            self.remember(f"repeat call {r} (seed {seed}, dist {dist})", expected, seed + 7919 * r, dist)
            del expected  # before the next call's reference is computed (gigabytes at bench sizes)
        self.checks.append("repeat calls with fresh inputs in the same buffers")

    # ---- stream order -----------------------------------------------------------------
    def stream_phase(self, inputs: dict, guarded: dict[str, GuardedOutput], seed: int, dist: str,
                     sleep_s: float, lag_limit_s: float) -> None:
        import torch

        self.phase = "stream order (the call queued behind a busy launch stream)"
        fresh = self.op.make_inputs(self.case, seed + 104729, device=self.device, dist=dist)
        expected = self.reference(fresh, guarded)
        self.check_reference_nans(expected)
        self.sync()
        stream = torch.cuda.current_stream()
        torch.cuda._sleep(int(sleep_s * _clock_hz()))
        for k, t in inputs.items():
            if hasattr(t, "copy_"):
                t.copy_(fresh[k])
        for g in guarded.values():
            poison_(g.tensor, "nan")
            g.arm()
        note(f"{self.name} {self.case.label}: {self.phase}")
        try:
            self.run(inputs, {k: g.tensor for k, g in guarded.items()})
            seen = {k: g.tensor.clone() for k, g in guarded.items()}  # ordered right after the call
            done = torch.cuda.Event()
            done.record(stream)
            done.synchronize()
            t_stream = time.perf_counter()
            self.sync()
            lag = time.perf_counter() - t_stream
        except Exception as e:
            raise _Stop(self.exception_result(e)) from None
        self.stream_info = {"device_lag_s": lag, "sleep_s": sleep_s, "lag_limit_s": lag_limit_s}
        self.guard_and_inputs(guarded, None)
        for k, t in inputs.items():
            if hasattr(t, "copy_") and not torch.equal(raw_bits(t), raw_bits(fresh[k])):
                raise _Stop(self.fail("input_mutated", f"input '{k}' changed during {self.phase}."))
        for name, g in guarded.items():
            rtol, atol = self.tol(g.tensor.dtype)
            final = compare_outputs(g.tensor, expected[name], rtol, atol, nan_ok=self.nan_ok,
                                    max_report=self.max_report, name=name)
            ordered = compare_outputs(seen[name], expected[name], rtol, atol, nan_ok=self.nan_ok,
                                      max_report=self.max_report, name=name)
            if not final.ok:
                poisoned = int(holds_poison(g.tensor, "nan").sum())
                raise _Stop(self.fail("async_work", (
                    f"correct on an idle device, wrong when the call is queued behind work on the launch stream: "
                    f"after a device-wide sync {final.mismatches} of {final.numel} elements of '{name}' are wrong"
                    + (f" ({poisoned} still hold the NaN poison written on the launch stream just before the call)"
                       if poisoned else "")
                    + ". The candidate's work is not ordered on the launch stream (it runs on another stream or a CPU "
                      "thread, before its inputs arrive). " + final.summary()), final, stream=self.stream_info))
            if not ordered.ok:
                raise _Stop(self.fail("async_work", (
                    f"the output was complete only after a device-wide sync: a copy queued on the launch stream right "
                    f"after the call saw {ordered.mismatches} of {ordered.numel} elements of '{name}' unfinished. The "
                    "work finishes on another stream or a CPU thread, so a timer on the launch stream would not see "
                    "it. " + ordered.summary()), ordered, stream=self.stream_info))
        if lag > lag_limit_s:
            raise _Stop(self.fail("async_work", (
                f"the device stayed busy {lag * 1e3:.1f} ms after the launch stream had finished the call (limit "
                f"{lag_limit_s * 1e3:.1f} ms): the candidate leaves work running on another stream, which a timer on "
                "the launch stream does not see."), stream=self.stream_info))
        self.checks.append(f"stream order (device idle {lag * 1e6:.0f} us after the launch stream)")


def _value(t) -> str:
    v = t.reshape(-1)[0].item()
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def _dtype(t) -> str:
    return str(t.dtype).replace("torch.", "")


def downgrade(t, low: str):
    """`t` with its floating values rounded to `low` precision (tf32: 10 mantissa bits, fp32 range)."""
    import torch

    if not hasattr(t, "dtype") or t.dtype not in (torch.float32, torch.float64):
        return t
    if low == "tf32":
        if t.dtype != torch.float32:
            return t
        bits = t.contiguous().view(torch.int32)
        # round to nearest on the 13 dropped mantissa bits; NaN/Inf keep their exponent
        rounded = ((bits + 0x1000) & ~0x1FFF).view(torch.float32)
        return torch.where(torch.isfinite(t), rounded.view(t.shape), t)
    return t.to(getattr(torch, low)).to(t.dtype)


def _clock_hz() -> float:
    try:
        from ..gpu import device_info

        return device_info().sm_clock_max_mhz * 1e6
    except Exception:  # the spin only needs to be long enough; 2 GHz over-estimates no current GPU by much
        return 2.0e9


def check_callable(run, op, case, *, seeds=DEFAULT_SEEDS, dists=None, device="cuda", name: str = "",
                   max_report: int = 10, guard_bytes: int = DEFAULT_GUARD_BYTES, tolerances: dict | None = None,
                   repeat: bool = True, stream_order: bool = True, sleep_s: float = STREAM_SLEEP_S,
                   lag_limit_s: float = LAG_LIMIT_S) -> CheckResult:
    """Check `run(inputs, outputs)` against `op`'s reference on `case`.

    seeds x dists trials (dists default: every distribution the op declares), each with fresh
    inputs from op.make_inputs on `device` ("cuda" or "cpu"). `tolerances` overrides the op's
    and the defaults per dtype name. `repeat` and `stream_order` switch the extra phases off
    (stream order needs CUDA and is skipped on CPU).
    """
    t0 = time.perf_counter()
    seeds = tuple(int(s) for s in seeds)
    if not seeds:
        raise ValueError("check needs at least one seed")
    dists = tuple(dists) if dists else tuple(d for d in getattr(op, "distributions", ("normal",)) if d in DISTRIBUTIONS)
    unknown = [d for d in dists if d not in DISTRIBUTIONS]
    if unknown:
        raise ValueError(f"unknown distribution(s) {unknown}; choose from {', '.join(DISTRIBUTIONS)}")
    declared = tuple(getattr(op, "distributions", ()))
    undeclared = [d for d in dists if declared and d not in declared]
    if undeclared:
        raise ValueError(f"{type(op).__name__} does not define results for {undeclared} "
                         f"(it declares {', '.join(declared)})")
    name = name or getattr(run, "__name__", "candidate")
    ck = _Checker(run, op, case, device=device, name=name, max_report=max_report, guard_bytes=guard_bytes,
                  tolerances=tolerances)
    trials = [(s, d) for d in dists for s in seeds]
    started = 0
    try:
        for i, (seed, dist) in enumerate(trials):
            started += 1
            inputs, guarded = ck.trial(seed, dist)
            if i == 0:
                if repeat:
                    ck.repeat_phase(inputs, guarded, seed, dist)
                if stream_order and ck.is_cuda:
                    ck.stream_phase(inputs, guarded, seed, dist, sleep_s, lag_limit_s)
            del inputs, guarded
    except _Stop as stop:
        r = stop.result
        r.trials, r.checks, r.wall_s = started, ck.checks, time.perf_counter() - t0
        if r.stream is None:
            r.stream = ck.stream_info
        return r
    checks = [f"{len(trials)} trials (seeds {', '.join(map(str, seeds))} x {', '.join(dists)})",
              "outputs poisoned with NaN then 0x7F bytes", f"guard bands of {guard_bytes} bytes",
              "inputs compared bitwise", "candidate run before and after the reference"] + ck.checks
    if stream_order and not ck.is_cuda:
        checks.append("stream order: not applicable on CPU")
    return CheckResult(ok=True, name=name, case=case.to_dict(), detail="; ".join(checks), trials=len(trials),
                       checks=checks, max_abs=ck.max_abs, max_rel=ck.max_rel, stream=ck.stream_info,
                       wall_s=time.perf_counter() - t0, numel=case.numel)


def check_variant(op, variant, case, seeds=DEFAULT_SEEDS, dists=None, **kw) -> CheckResult:
    """Check one of an op's variants (a Variant or its name; the op may be given by name) on `case`, on the GPU."""
    from ..gpu.errors import CompileError, KernelabError
    from ..ops import discover, load_variant, run_variant

    if isinstance(op, str):
        ops = discover()
        if op not in ops:
            raise KeyError(f"no op named {op!r} (have: {', '.join(ops)})")
        op = ops[op]
    if isinstance(variant, str):
        variant = op.variant(variant)
    why = op.supports(variant, case)
    if why:
        return CheckResult(ok=False, reason="unsupported", detail=why, name=variant.id, case=case.to_dict(),
                           skipped=True)
    try:
        load_variant(op, variant).kernel(op.kernel_name(case.dtype))
    except CompileError as e:
        return failure("compile_error", str(e), name=variant.id, case=case.to_dict())
    except KernelabError as e:
        return failure("error", f"cannot load {variant.id} for {case.dtype}: {e}", name=variant.id, case=case.to_dict())

    def run(inputs, outputs):
        run_variant(op, variant, case, inputs, outputs)

    kw.setdefault("device", "cuda")
    return check_callable(run, op, case, seeds=seeds, dists=dists, name=variant.id, **kw)


def verify_outputs(op, case, inputs: dict, outputs: dict, *, tolerances: dict | None = None, name: str = "",
                   max_report: int = 10) -> CheckResult:
    """Are `outputs` right for `inputs` as they are now? For re-verifying the outputs of timed iterations."""
    nan_ok = "special" in tuple(getattr(op, "distributions", ()))
    expected = op.reference(case, inputs)
    for out_name, got in outputs.items():
        rtol, atol = tolerance(op, got.dtype, tolerances)
        cmp = compare_outputs(got, expected[out_name], rtol, atol, nan_ok=nan_ok, max_report=max_report, name=out_name)
        kw = dict(name=name, case=case.to_dict(), output=out_name, mismatches=cmp.mismatches, numel=cmp.numel,
                  first_mismatches=cmp.first, max_abs=cmp.max_abs, max_rel=cmp.max_rel,
                  nan_mismatches=cmp.nan_mismatches, inf_mismatches=cmp.inf_mismatches, rtol=rtol, atol=atol,
                  phase="re-verification after timing")
        if not cmp.ok:
            reason = "nan" if cmp.mismatches == cmp.nan_mismatches + cmp.inf_mismatches else "mismatch"
            return failure(reason, "after timing: " + cmp.summary(), **kw)
        if is_constant(got) and not is_constant(expected[out_name].to(got.dtype)):
            return failure("constant_output", f"after timing every element of '{out_name}' is {_value(got)}", **kw)
    return CheckResult(ok=True, name=name, case=case.to_dict(), detail="outputs re-verified after timing",
                       phase="re-verification after timing")


def check_time(seconds: float, floor_s: float, *, name: str = "", what: str = "median") -> CheckResult:
    """Reject a time below the physical floor (bytes / peak bandwidth, FLOPs / peak rate): the work did
    not happen as measured (cached, skipped, or moved off the timed stream)."""
    if floor_s <= 0:
        raise ValueError(f"the floor must be positive, got {floor_s!r}")
    if seconds < floor_s:
        return failure("impossible_time", f"{what} {seconds * 1e6:.3g} us is below the physical floor "
                                          f"{floor_s * 1e6:.3g} us ({seconds / floor_s:.2f}x of it): the measured call "
                                          "cannot have done the work", name=name)
    return CheckResult(ok=True, name=name, detail=f"{what} {seconds * 1e6:.3g} us >= floor {floor_s * 1e6:.3g} us")
