"""Everything static about a compiled module, per kernel: the backend of `kernelab inspect`.

For each kernel: the ptxas resources (registers, spills, shared memory, barriers), the
occupancy at a block size on the module's architecture, the SASS instruction mix, and
short notes that say why a kernel may be slower than its roof (spills, local memory,
narrow global accesses, a stream's first load issued after a wait it does not need
(load_order), too few bytes in flight per SM for the device's bandwidth (Little's law), the
limit that binds occupancy and what would lift it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .devices import DeviceSpec, spec_for_arch
from .load_order import LoadOrder, load_order
from .occupancy import Occupancy, limits_for, occupancy, occupancy_for_kernel
from .sass import InstructionMix, disassemble, parse_sass


@dataclass
class KernelReport:
    name: str
    arch: str
    resources: object  # kernelab.gpu.KernelResources
    occupancy: Occupancy | None
    mix: InstructionMix | None
    notes: list[str] = field(default_factory=list)
    load_order: LoadOrder | None = None  # global loads issued after a wait they do not need

    def to_dict(self) -> dict:
        return {"name": self.name, "arch": self.arch, "resources": self.resources.to_dict(),
                "occupancy": self.occupancy.to_dict() if self.occupancy else None,
                "mix": self.mix.to_dict() if self.mix else None, "notes": list(self.notes),
                "load_order": self.load_order.to_dict() if self.load_order else None}


def _next_step_note(o: Occupancy) -> str | None:
    """What change of the binding resource would fit one more block (None if none would)."""
    lim = o.limits
    if o.blocks_per_sm == 0 or lim is None:
        return None
    want = o.blocks_per_sm + 1
    if o.limiter == "registers":
        for r in range(o.regs_per_thread - 1, -1, -1):
            if occupancy(lim, o.threads, r, o.smem_per_block, barriers=o.barriers).blocks_per_sm >= want:
                return (f"registers bind: at most {r} per thread (__launch_bounds__({o.threads}, {want}) or "
                        f"-maxrregcount={r}) would fit {want} blocks per SM")
    elif o.limiter == "shared_memory":
        per_block = (lim.smem_per_sm // want) // lim.smem_granularity * lim.smem_granularity \
            - lim.smem_reserved_per_block
        if per_block >= 0 and occupancy(lim, o.threads, o.regs_per_thread, per_block,
                                        barriers=o.barriers).blocks_per_sm >= want:
            return f"shared memory binds: at most {per_block} B per block would fit {want} blocks per SM"
    return None


# DRAM latency under load, for Little's law. vector_add v0's bench rows on the H200 (2^28, 2048 threads an
# SM, one load each of a and b a thread) imply 930 ns (fp32: 16 KiB an SM in flight, reads 2/3 of its
# 3487 GB/s) and 760 ns (bf16: 8 KiB, 2/3 of 2137 GB/s); the seeds say ~600 ns; an unloaded pointer
# chase measured 343 ns (lab small_grid). The bound below is a ceiling, so it takes just under the lower
# figure: both rows stay under it (bf16 1.43 TB/s of reads against its 1.44, fp32 2.32 against 2.88).
LOADED_DRAM_LATENCY_S = 750e-9


def in_flight_note(order: LoadOrder | None, occ: Occupancy | None, spec: DeviceSpec | None) -> str | None:
    """Little's law: a thread's largest batch of loads x the threads an SM holds x the SMs, over the
    loaded latency, bounds the read bandwidth. A note when that bound is under 90% of the device's."""
    if order is None or occ is None or spec is None or not order.max_batch_bytes or not occ.blocks_per_sm:
        return None
    threads = occ.threads * occ.blocks_per_sm
    per_sm = order.max_batch_bytes * threads
    bound = per_sm * spec.sm_count / LOADED_DRAM_LATENCY_S
    if bound >= 0.9 * spec.memory_bandwidth:
        return None
    return (f"at most {per_sm / 1024:.0f} KiB of global loads in flight per SM ({order.max_batch_bytes} B a thread "
            f"before it waits x {threads} threads): at ~{LOADED_DRAM_LATENCY_S * 1e9:.0f} ns of loaded DRAM latency, "
            f"Little's law caps reads near {bound / 1e12:.2f} TB/s ({bound / spec.memory_bandwidth:.0%} of the "
            f"{spec.name}'s {spec.memory_bandwidth / 1e12:.2f}); wider loads (16 B a thread), more of them before "
            f"the first use, or more threads an SM lift it")


def notes_for(resources, occ: Occupancy | None, mix: InstructionMix | None,
              order: LoadOrder | None = None, spec: DeviceSpec | None = None) -> list[str]:
    notes = []
    if resources.spills:
        notes.append(f"ptxas spilled registers: {resources.spill_stores} B stored, {resources.spill_loads} B loaded "
                     f"per thread through local memory" + (f" ({mix.stl} STL, {mix.ldl} LDL)" if mix else ""))
    elif mix is not None and mix.local_memory:
        notes.append(f"{mix.ldl} LDL / {mix.stl} STL without spills: a local array indexed at run time, or a stack "
                     f"frame of {resources.stack_frame} B, lives in local memory (device memory, cached in L1)")
    if mix is not None and mix.ldg and mix.widest_load_bits < 128:
        notes.append(f"global loads are at most {mix.widest_load_bits}-bit; 128-bit loads (LDG.E.128, 16 bytes per "
                     f"thread) cut load instructions {128 // max(mix.widest_load_bits, 8)}x")
    if order is not None and (late := order.note()) is not None:
        notes.append(late)
    # bulk copies (TMA, cp.async.bulk) and cp.async keep bytes in flight that no LDG shows: no bound then
    async_copies = mix is not None and (mix.tma or mix.ldgsts)
    if not async_copies and (flight := in_flight_note(order, occ, spec)) is not None:
        notes.append(flight)
    if occ is not None:
        if occ.blocks_per_sm == 0:
            notes.append(f"cannot launch at {occ.threads} threads: {occ.reason}")
        else:
            notes.append(f"occupancy {occ.percent:.1f}% ({occ.summary()})")
            step = _next_step_note(occ)
            if step:
                notes.append(step)
    return notes


def inspect_module(compiled, *, threads: int | dict[str, int] = 256, dynamic_smem: int | dict[str, int] = 0,
                   cc=None, with_sass: bool = True) -> list[KernelReport]:
    """A KernelReport per kernel of a kernelab.gpu.CompiledModule.

    threads / dynamic_smem: one value for all kernels or {kernel: value}.
    cc: the GPU to compute occupancy for (default: the module's arch)."""
    target = cc if cc is not None else compiled.arch
    try:
        limits_for(target)
        has_limits = True
    except Exception:
        has_limits = False
    spec = spec_for_arch(compiled.arch)
    text = disassemble(compiled.cubin) if with_sass else ""
    mixes = {f.name: f.mix for f in parse_sass(text)}
    orders = {lo.name: lo for lo in load_order(text)}
    reports = []
    for name in compiled.kernel_names():
        res = compiled.resources[name]
        t = threads.get(name, 256) if isinstance(threads, dict) else threads
        d = dynamic_smem.get(name, 0) if isinstance(dynamic_smem, dict) else dynamic_smem
        occ = occupancy_for_kernel(res, target, t, d) if has_limits else None
        mix, order = mixes.get(name), orders.get(name)
        reports.append(KernelReport(name, compiled.arch, res, occ, mix, notes_for(res, occ, mix, order, spec), order))
    return reports
