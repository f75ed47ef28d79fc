"""Session 30 probe: softmax's wide rows in units of ordinary blocks whose (max, sum) pairs go through global memory
and are waited for one unit later (scripts/probe_defer30.cu says how and why it cannot deadlock), against v4_dispatch
as shipped and a same-bytes copy (torch's copy_), at 2048 x 131072 bf16 and fp32 (aligned rows: the probe takes
no other).

Why: v4's clusters (v12) spend 21.8% (bf16) / 33.5% (fp32) of their stall samples spinning on the cluster's pairs
(session 28's ncu), run 16-24 warps an SM on the 112-120 SMs their clusters place on, and sit at 0.96x a copy.
v6_packed_rows, which needs no exchange (rows of 8192 in one block, 64 warps an SM, 2 EX2 an element), reaches
0.99x at 32768 x 8192 bf16. Here every unit is such a row piece (8192 values), on every SM, and its exchange
waits one unit (~4 us at the copy rate) behind its own publication.
Predicted (bytes: bf16 1.07 GB, ~254 us at the copy rate; fp32 2.15 GB, ~505): bf16 256-260 us (0.975-0.99x),
fp32 ~510-515 (0.975-0.985x; v6's fp32 at 32768 x 8192 is 0.975x). If it lands at v4's 263 / 524 or above, the
deferral buys nothing and the cluster spin is not what v4 pays.

Measured (H200, four runs, logs docs/runs/2026-12-03-h200-probe_defer30{,b,c,d}.log; v4 263.6-264.3 / 519.4-521.2 us,
copy_ 252.5-254.0 / 500.8-502.1 in every run): **slower than v4 in every form**, wrong by ~10% (bf16) and ~6% (fp32).
- Run 1, pair + release add on the row's counter: bf16 311.2 us at best (512 x 4 vectors, 16384-value units, 2 an
  SM), 547-735 with 8192- and 4096-value units; fp32 747-1420. ptxas puts MEMBAR.ALL.GPU before the release add,
  which waits for warp 0's own y stores in flight, and the next unit's bulk copy was issued after it.
- Run 2, the copy issued first and the pair as one 64-bit word polled in its slot (no fence anywhere in the loop):
  bf16 289.5-292.0 (256 x 4 vectors, 8192-value units, 3 stages, 4 blocks an SM) against 318 for the counter form
  at the same shape; fp32 550.9-551.4 (512 x 4, 2 an SM) against 769-773.
- Run 3, pass B two or three units back (d; more stages): bf16 289.4 / 290.8 (d 2) against 288.9 / 289.7 (d 1);
  fp32 548.4 (d 2) against 550.9. Smaller units lose (bf16 4096-value units 311-341). So the wait for the row's
  pairs is not what costs: with slack to spare the time stays.
- Run 4, pass B's first slot read issued before pass A (EARLY): slower, bf16 316 against 291, fp32 597 against 551.
What the probe says: per round (G units, ~17 MB moved) it takes ~4.6 us where the copy rate allows ~4.0, and
neither the exchange's latency (d) nor its fences (slots) nor the prefetch depth (stages) is the difference;
the per-unit chain (bulk copy, sweep, block barrier, poll, second sweep, stores) of 4 blocks an SM is. v4's
clusters stay. Not kept: nothing in the library reads this file.
Written, not run (the device budget was spent; `--regs`): the register form, defer_regs, which takes the ring, the
bulk copies and the mbarriers out of that chain (v6's LDG.128 into three rotating register sets, unit k + 1 in
flight under unit k's sweep and unit k - 1's stores; 56-80 registers, no spills on sm_90, 768-1024 threads an SM).
Predicted: bf16 265-280 us, fp32 525-545: if it does not reach v4's 264 / 520, the staging was not the chain's cost
either and this direction is closed. Command: `PYTHONPATH=src python3 scripts/probe_defer30.py --regs` (~1 min).

Each config is timed with kernelab's bench protocol (L2 flushed), alternating twice, and checked against
torch.softmax (relative tolerances; outputs are ~1e-5 here) with the counters or slots back to 0 after the
launches. Usage (GPU machine): PYTHONPATH=src python3 scripts/probe_defer30.py [--regs] [--dtype=bfloat16] [--once]
(--regs: the register form only; --once: one round, not two)."""
import sys
from pathlib import Path

import torch

from kernelab.gpu import Module, compile_source, default_arch
from kernelab.ops import discover, load_variant
from kernelab.ops.base import Case
from kernelab.ops.softmax import op as sop

HERE = Path(__file__).parent
SOFTMAX_DIR = Path(sop.__file__).parent
CT = {"bfloat16": "__nv_bfloat16", "float32": "float"}
# (dtype, threads, vectors a thread, stages, blocks an SM (the launch bound), slots, d, early): slots 1 the pair
# words polled (no fences), 0 the pair and a release add on the row's counter; d: pass B waits for the pairs of
# the unit d units back (stages >= d + 2); early: pass B's first slot read issued before pass A. The configs of
# the fourth run (the docstring has the others).
CONFIGS = [("bfloat16", 256, 4, 3, 4, 1, 1, 0), ("bfloat16", 256, 4, 3, 4, 1, 1, 1),
           ("bfloat16", 512, 4, 3, 2, 1, 1, 1), ("bfloat16", 256, 4, 4, 3, 1, 2, 1),
           ("bfloat16", 512, 2, 3, 4, 1, 1, 1),
           ("float32", 512, 4, 3, 2, 1, 1, 0), ("float32", 512, 4, 3, 2, 1, 1, 1), ("float32", 256, 4, 4, 3, 1, 2, 1),
           ("float32", 256, 4, 3, 4, 1, 1, 1)]

# `--regs`: the register form (probe_defer30.cu's defer_regs, written after the four runs): (dtype, threads, vectors a
# thread, blocks an SM (the launch bound)), timed against v4 and copy_ only.
REGS = [("bfloat16", 512, 2, 2), ("bfloat16", 256, 4, 3), ("bfloat16", 256, 2, 4), ("float32", 512, 4, 1),
        ("float32", 256, 4, 3)]


def regs_name(c) -> str:
    dt, threads, k, minb = c
    return f"regs_{'bf16' if dt == 'bfloat16' else 'f32'}_t{threads}_k{k}_b{minb}"


def name_of(c) -> str:
    dt, threads, k, s, minb, sl, d, e = c
    return f"defer_{'bf16' if dt == 'bfloat16' else 'f32'}_t{threads}_k{k}_s{s}_b{minb}_sl{sl}_d{d}_e{e}"


def source(regs: bool = False) -> str:
    lines = [(HERE / "probe_defer30.cu").read_text()]
    for c in CONFIGS if not regs else []:
        dt, threads, k, s, minb, sl, d, e = c
        t = CT[dt]  # written out, not through a macro: kernelab's signature reader sees only literal kernels
        lines.append(f'extern "C" __global__ void __launch_bounds__({threads}, {minb}) {name_of(c)}(const {t}* '
                     f"__restrict__ x, {t}* __restrict__ y, int M, int N, float2* __restrict__ pairs, "
                     f"unsigned* __restrict__ cnt, unsigned* __restrict__ fin) {{ "
                     f"probe::defer_rows<{t}, {threads}, {k}, {s}, {str(bool(sl)).lower()}, {d}, "
                     f"{str(bool(e)).lower()}>(x, y, M, N, pairs, cnt, fin); }}")
    for c in REGS if regs else []:
        dt, threads, k, minb = c
        t = CT[dt]
        lines.append(f'extern "C" __global__ void __launch_bounds__({threads}, {minb}) {regs_name(c)}(const {t}* '
                     f"__restrict__ x, {t}* __restrict__ y, int M, int N, float2* __restrict__ pairs, "
                     f"unsigned* __restrict__ fin) {{ probe::defer_regs<{t}, {threads}, {k}>(x, y, M, N, pairs, fin); "
                     "}")
    return "\n".join(lines) + "\n"


def timed(fn) -> float:
    from kernelab.bench import bench

    return bench(fn, mode="cold", target_rel=0.01, max_wall_s=1.0, name="probe").median_s * 1e6


def main() -> None:
    op = discover()["softmax"]
    v4 = op.variant("v4_dispatch")
    defines = sop.bulk_defines(*sop.DISPATCH_BULK)
    regs = "--regs" in sys.argv
    mod = Module(compile_source(source(regs), name="probe_defer30.cu", arch=default_arch(), defines=defines,
                                include_dirs=[SOFTMAX_DIR]), defines)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    dtypes = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--dtype=")] or ["bfloat16", "float32"]
    rounds_timed = 1 if "--once" in sys.argv else 2
    m, n = 2048, 131072
    for dt in dtypes:
        case = Case((m, n), dt)
        x = op.make_inputs(case, 0, "cuda")
        y = op.make_outputs(case, x)
        ref = torch.softmax(x["x"].float(), -1)
        kv4 = load_variant(op, v4).kernel(op.kernel_name(dt))
        out = torch.empty_like(x["x"])
        runs = {"copy_": lambda: out.copy_(x["x"]), "v4": lambda: op.launch(kv4, v4, case, x, y)}
        for c in REGS if regs else []:
            if c[0] != dt:
                continue
            _, threads, k, minb = c
            kern = mod.kernel(regs_name(c))
            ch = threads * k * 16 // (2 if dt == "bfloat16" else 4)
            units = m * n // ch
            per_sm = kern.max_active_blocks_per_sm(threads, 0)
            rounds = -(-units // (per_sm * sms))
            grid = -(-units // rounds)
            r = mod.compiled.resources[regs_name(c)]
            print(f"{regs_name(c)}: unit {ch} values ({n // ch} a row), {per_sm} blocks an SM, grid {grid} ({rounds} "
                  f"rounds), {r.registers} registers, {r.spill_stores} spill stores", flush=True)
            pairs = torch.zeros(units * 2, dtype=torch.float32, device="cuda")
            fin = torch.zeros(1, dtype=torch.int32, device="cuda")
            runs[regs_name(c)] = (lambda kern=kern, threads=threads, grid=grid, pairs=pairs, fin=fin:
                                  kern(x["x"], y["y"], m, n, pairs, fin, grid=grid, block=threads))
            runs[regs_name(c)].state = (fin, pairs)
        for c in CONFIGS if not regs else []:
            if c[0] != dt:
                continue
            _, threads, k, s, minb, sl, d, e = c
            kern = mod.kernel(name_of(c))
            esize = 2 if dt == "bfloat16" else 4
            ch = threads * k * 16 // esize
            units = m * n // ch
            smem = s * threads * k * 16
            per_sm = kern.max_active_blocks_per_sm(threads, smem)
            cap = per_sm * sms
            rounds = -(-units // cap)
            grid = -(-units // rounds)
            r = mod.compiled.resources[name_of(c)]
            print(f"{name_of(c)}: unit {ch} values ({n // ch} a row), ring {smem} B, {per_sm} blocks an SM, "
                  f"grid {grid} ({rounds} rounds), {r.registers} registers, {r.spill_stores} spill stores", flush=True)
            pairs = torch.zeros(units * 2, dtype=torch.float32, device="cuda")  # slots: 0 is "not published"
            cnt = torch.zeros(m, dtype=torch.int32, device="cuda")
            fin = torch.zeros(1, dtype=torch.int32, device="cuda")
            runs[name_of(c)] = (lambda kern=kern, threads=threads, smem=smem, grid=grid, pairs=pairs, cnt=cnt, fin=fin:
                                kern(x["x"], y["y"], m, n, pairs, cnt, fin, grid=grid, block=threads, shared_mem=smem))
            runs[name_of(c)].state = (cnt, fin, pairs if sl else cnt)
        for rnd in range(rounds_timed):
            for name, fn in runs.items():
                y["y"].fill_(float("nan"))
                us = timed(fn)
                if name == "copy_":
                    print(f"{dt} round {rnd}  {name:32s} {us:7.1f} us", flush=True)
                    continue
                # Outputs are ~1e-5 here: tolerances relative to them, not an absolute 1e-3 that zeros would pass.
                ok = torch.allclose(y["y"].float(), ref, rtol=1e-2 if dt == "bfloat16" else 1e-4, atol=1e-9)
                state = getattr(fn, "state", None)
                clean = state is None or not any(t.any().item() for t in state)
                print(f"{dt} round {rnd}  {name:32s} {us:7.1f} us  {'ok' if ok and clean else 'WRONG'}"
                      f"{'' if clean else ' (counters left nonzero)'}", flush=True)


if __name__ == "__main__":
    main()
