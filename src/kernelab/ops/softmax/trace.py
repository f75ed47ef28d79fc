"""SB_TRACE's records (staged_rows.cuh, session 32), read from Python: the layout of the %globaltimer stamps that v12's
row loop writes past its two counters, and v4's wide-row launch done by hand with a `work` buffer that holds them
(op.launch's counters are 8 bytes: a trace build traps there). scripts/probe_trace32.py and
tests/gpu/test_softmax_trace.py use it; the layout must match the knob's comment in staged_rows.cuh."""

from __future__ import annotations

from kernelab.check.inputs import DTYPES

from . import op as sop

HEAD = 8  # words of a block's record before its rows: entry, init, first issue, exit, %smid, rows taken
ROWS = 160  # SB_TRACE_ROWS: rows stamped a block; four words each (landed, read, stores issued, row index)
STRIDE = HEAD + 4 * ROWS  # SB_TRACE_STRIDE
BASE = 16  # the records start at 8-byte word 16 of `work` (the two counters are in word 0)
MAGIC, MAGIC_WORD = 0x6B6C2D7472616365, 15  # SB_TRACE_MAGIC ("kl-trace") in word 15: else a trace build traps


class TracedWide:
    """v4's wide-row kernel of `module` for rows of n (the plan's instance, its `_full` form where the plan takes one
    for 16-byte aligned rows), launched on the persistent grid with a `work` buffer of its own: two counters, then
    the records of every block (SB_TRACE builds) or nothing read from them (other builds)."""

    def __init__(self, op, v4, module, dtype: str, n: int = 131072):
        import torch

        self.n = n
        self.p = op.plan(v4, n, sop.rows.arch_cc(module.kernel(op.kernel_name(dtype))), dtype)
        aligned = torch.empty(16, device="cuda")  # every torch allocation starts 16-byte aligned: the `_full` test
        full = sop.dynamic_full(self.p, n, aligned, aligned, module, dtype)
        self.name = f"{self.p.name}{'_full' if full else ''}_{DTYPES[dtype]}"
        self.kernel = module.kernel(self.name)
        self.grid = sop.persistent_grid(self.kernel, self.p, 1 << 30)  # the clusters in flight
        self.C = self.p.cluster or 1
        self.work = torch.zeros((BASE + self.grid * self.C * STRIDE) * 2, dtype=torch.int32, device="cuda")
        self.reset()

    def reset(self) -> None:
        """Records to zero, the magic back in its word (the counters are the kernel's to leave at zero)."""
        import torch

        self.work.zero_()
        self.work.view(torch.int64)[MAGIC_WORD] = MAGIC

    def __call__(self, x, y, m: int) -> None:
        self.kernel(x, y, m, self.n, self.work, grid=min(self.grid, m), block=self.p.block, cluster=self.p.cluster,
                    shared_mem=self.p.smem)

    def records(self, m: int):
        """The last launch's records, [blocks that ran, STRIDE] int64 (ns; see HEAD / ROWS), as numpy."""
        import torch

        blocks = min(self.grid, m) * self.C
        return self.work.view(torch.int64)[BASE:BASE + blocks * STRIDE].cpu().numpy().reshape(blocks, STRIDE)
