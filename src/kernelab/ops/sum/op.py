"""sum: s = x[0] + x[1] + ... + x[n-1], fp32 or bf16 in, one fp32 out, fp32 accumulation.

Work: read x once (n * element size bytes), write 4 bytes; n - 1 FLOPs (intensity 1/4 FLOP/B
in fp32: memory-bound by three orders of magnitude). A read-only kernel can beat a copy's
bandwidth (no write-to-read turnarounds on the bus), hence the 4.4 TB/s target on the H200.

Passes. Every variant writes one partial per block into a workspace, then reduces the
partials; there are no float atomics, so each variant gives the same bits on every run for
a given GPU and n. v0 and v1 run themselves again on their partials until one is left
(`@finish recursive`); v2 runs a one-block kernel over its few hundred partials
(`@finish sum_finish`), v3 (a one-shot grid: one partial per 2^13 fp32 / 2^14 bf16 elements)
a vectorised one, which v5 launches as a programmatic dependent launch (sm_90+: it waits for the
pass on chip, not for a launch); v6 sums v3's chunks (the same partials, bit for bit) with a
persistent grid whose blocks take the next chunk from an integer counter. The workspace is
allocated in the launch on the inputs' device, on torch's current stream: the outputs handed to
`launch` are only what the checker poisons.

Tolerance. fp32 rounding in a sum is bounded by depth x eps x sum|x_i|, so with zero-mean
inputs (|sum| ~ sqrt(n) x sigma, far below sum|x_i| ~ n x sigma) a relative tolerance would
have to grow like sqrt(n). The inputs are therefore drawn with sigma = 1/sqrt(n), so the
exact sum is N(0, 1) at every n and one absolute tolerance fits all of them:
  - rounding: about u x sqrt(n x depth) x sigma = u x sqrt(depth) ~ 6e-8 x sqrt(84) ~ 5e-7
    (u = 2^-24; v2 at n = 2^28: ~62 sequential adds per accumulator + ~22 tree levels);
  - one dropped or doubled element moves the sum by |x_i| ~ 1/sqrt(n) >= 6e-5 (n <= 2^28).
atol = 1e-5 sits between the two (~20x above the typical rounding, 6x below one element at 2^28);
rtol = 1e-5 adds the same again where |sum| > 1. bf16 inputs are exact in fp32, and the output
is fp32 either way, so one entry serves both.
"large" (x 1e30) is left out: it scales every term, which tests nothing a relative error
does not, and an absolute tolerance cannot follow it.
"""

from __future__ import annotations

import functools
import math

from kernelab.gpu import Arch
from kernelab.ops.base import Case, OpSpec, StreamCounters, Work, resident_blocks

PRIME = 1_000_003


class Sum(OpSpec):
    name = "sum"
    dtypes = ("float32", "bfloat16")
    kernel_entry = "sum"
    # v5 (v3 + a PDL finish): 2^28 bf16 121.7 us = 4.41 TB/s vs v3 123.5 (cold), 2^18 graph 2.7-2.9 us vs
    # 3.3 (docs/runs/2026-11-30-h200-sweep_membound_s8_pdl.json, one process)
    best_variant = "v5_pdl_finish"
    # Keyed by the output's dtype, fp32 for both inputs. (A "bfloat16" entry would only change
    # what the checker calls "bf16 precision" when it classifies a failure.)
    tolerances = {"float32": (1e-5, 1e-5)}
    distributions = ("normal", "uniform")

    def test_cases(self) -> list[Case]:
        # Around every block multiple the variants use: 256 (v0 block), 2048 (v1: 256 x 8),
        # 4096 (v2: 256 threads x one 16-byte vector of bf16 x ... and the v0 second pass).
        sizes = [0, 1, 2, 7, 255, 256, 257, 2047, 2048, 2049, 4095, 4096, 4097, 65537, PRIME, (1 << 20) + 3]
        cases = [Case((n,), dt) for dt in self.dtypes for n in sizes]
        # Misaligned views: x[k:] has ptr % 16 == k * itemsize (4, 8, 12 bytes in fp32; 2, 4, 6 in
        # bf16), so a 16-byte kernel must peel a head. 7 in bf16 is the longest head (14 bytes).
        for dt, ks in (("float32", (1, 2, 3)), ("bfloat16", (1, 2, 3, 7))):
            for k in ks:
                cases.append(Case((PRIME,), dt, offset=k))
                cases.append(Case((257,), dt, offset=k))
                cases.append(Case((5,), dt, offset=k))  # shorter than the head
        return cases

    def bench_cases(self) -> list[Case]:
        # 2^18 fp32 = 1 MiB (graph-mode small shape); 2^28 fp32 = 1 GiB and bf16 = 512 MiB.
        return [Case((1 << p,), dt) for dt in self.dtypes for p in (18, 24, 28)]

    # ---- data ---------------------------------------------------------------------------
    def make_inputs(self, case, seed, device="cuda", dist="normal"):
        (n,) = case.shape
        # sigma = 1/sqrt(n): the exact sum is N(0, 1) for every n (see the module docstring).
        # uniform(-s, s) has variance s^2 / 3, hence sqrt(3) there.
        scale = (math.sqrt(3.0) if dist == "uniform" else 1.0) / math.sqrt(max(n, 1))
        return {"x": self.tensor((n,), case.dtype, seed, device, dist, offset=case.offset, scale=scale)}

    def make_outputs(self, case, inputs):
        import torch

        return {"out": torch.empty((), dtype=torch.float32, device=inputs["x"].device)}

    def reference(self, case, inputs):
        import torch

        return {"out": inputs["x"].sum(dtype=torch.float64)}  # accumulates in float64 without a float64 copy

    def work(self, case) -> Work:
        itemsize = 4 if case.dtype == "float32" else 2
        return Work(bytes=case.numel * itemsize + 4, flops=max(case.numel - 1, 0), flop_unit="fp32")

    def peers(self, case):
        import torch

        def eager(inputs):
            # dtype=float32: torch.sum of bf16 would return bf16; this accumulates and returns fp32.
            return {"out": torch.sum(inputs["x"], dtype=torch.float32)}

        return {"torch": eager, "torch.compile": torch.compile(eager, dynamic=False)}

    # ---- launch ---------------------------------------------------------------------------
    # Geometry from the variant's header:
    #   @block N               threads per block (also passed to the kernel as -DBLOCK)
    #   @elems_per_thread E    pass-1 grid = ceil(n / (N * E)) (data-sized grids)
    #   @grid persistent       pass-1 grid = SMs x resident blocks per SM, capped by the work
    #   @bytes_per_thread B    with @grid persistent: the cap counts B / itemsize elements per thread per step
    #   @grid oneshot          pass-1 grid = ceil(n / (N x U x 16 / itemsize)): each block sums U
    #   @vectors_per_thread U  16-byte vectors per thread once (also passed to the kernel as -DVECS)
    #   @grid tickets          oneshot's chunks (one partial each), summed by a persistent grid (resident
    #                          blocks, capped by the chunks) that takes chunks from a counter:
    #                          kernel(x, partials, counter, n, chunks), then finish K(partials, out, chunks, counter)
    #   @finish recursive      reduce the partials with this module's sum_f32 until one is left
    #   @finish K              one launch of kernel K(partials, out, count) with @finish_block threads
    #   @finish ticket         one launch: kernel(x, partials, ticket, out, n); its last block adds the partials
    def defines(self, variant):
        # The header is the one place the geometry is written: the kernel gets it as macros.
        d = {"BLOCK": variant.meta_int("block", 256)}
        for key, macro in (("elems_per_thread", "ELEMS"), ("unroll", "UNROLL"), ("finish_block", "FINISH_BLOCK"),
                           ("vectors_per_thread", "VECS")):
            if key in variant.meta:
                d[macro] = variant.meta_int(key)
        return d

    def launch(self, kernel, variant, case, inputs, outputs):
        import torch

        x, out = inputs["x"], outputs["out"]
        n = x.numel()
        block = variant.meta_int("block", 256)
        finish = variant.meta.get("finish", "recursive").split()[0]
        dst_final = out.view(1)
        if variant.meta.get("grid") == "persistent":
            per_thread = variant.meta_int("bytes_per_thread", 16) // x.element_size()
            grid = max(1, min(math.ceil(n / (block * per_thread)), resident_blocks(kernel, block)))
        elif variant.meta.get("grid") in ("oneshot", "tickets"):
            # n / V vectors bound the whole vectors after any head, so this covers them all.
            # (`tickets`: the chunk count; _launch_tickets sizes the persistent grid.)
            per_block = block * variant.meta_int("vectors_per_thread") * (16 // x.element_size())
            grid = max(1, math.ceil(n / per_block))
        else:
            grid = max(1, math.ceil(n / (block * variant.meta_int("elems_per_thread", 1))))

        if finish == "recursive":
            # Each pass turns `count` values into ceil(count / (block x E)) partials; the last
            # pass (one block) writes the output. n == 0 still launches one block, which writes 0.
            elems = variant.meta_int("elems_per_thread", 1)
            f32 = kernel.module.kernel("sum_f32")
            src, k, count = x, kernel, n
            while True:
                grid = max(1, math.ceil(count / (block * elems)))
                dst = dst_final if grid == 1 else torch.empty(grid, dtype=torch.float32, device=x.device)
                k(src, dst, count, grid=grid, block=block)
                if grid == 1:
                    return
                src, k, count = dst, f32, grid

        if grid >= 2**32:
            raise ValueError(f"sum: n = {n} needs {grid} blocks of {variant.name}; the partial count is a 32-bit "
                             f"int. Fix: sum in pieces of at most 2^40 elements")
        # `@finish_pdl yes` (v5, v6): the finish as a programmatic dependent launch where the build has
        # griddepcontrol (sm_90+; older builds compile the hooks out and launch as v3).
        pdl = variant.meta.get("finish_pdl", "no").split()[0] == "yes" and has_griddepcontrol(kernel.module.compiled.arch)
        if variant.meta.get("grid") == "tickets":
            self._launch_tickets(kernel, variant, x, dst_final, n, chunks=grid, block=block, finish=finish, pdl=pdl)
            return
        if finish == "ticket":
            # One launch (v4): the last block to draw a ticket adds the partials. The counter is
            # the launch's only state: one int per device and stream (_ticket), zeroed once, reset
            # by the kernel itself (atomicInc wraps), so graph replays and repeated calls reuse it.
            partials = torch.empty(grid, dtype=torch.float32, device=x.device) if grid > 1 else dst_final
            kernel(x, partials, _ticket(x.device), dst_final, n, grid=grid, block=block)
            return
        if grid == 1:  # one block: its partial is the answer
            kernel(x, dst_final, n, grid=1, block=block)
            return
        partials = torch.empty(grid, dtype=torch.float32, device=x.device)
        kernel(x, partials, n, grid=grid, block=block)
        kernel.module.kernel(finish)(partials, dst_final, grid, grid=1,
                                     block=variant.meta_int("finish_block", 1024), pdl=pdl)

    @staticmethod
    def ticket_grid(kernel, block: int, chunks: int) -> int:
        """`@grid tickets`: the pass's blocks, the GPU's resident blocks capped by the chunk count."""
        return max(1, min(chunks, resident_blocks(kernel, block)))

    def _launch_tickets(self, kernel, variant, x, dst_final, n, chunks, block, finish, pdl):
        """`@grid tickets` (v6): `chunks` one-shot chunks (one partial each, as `@grid oneshot`'s blocks)
        summed by ticket_grid() blocks that take chunks from this stream's counter (_chunk_counter),
        then the finish, which also zeroes the counter after its griddepcontrol.wait (sm_90+) or in
        stream order (older builds). The counter is never memset here: graph replays reuse it."""
        import torch

        if chunks > 2**31:  # the pass's chunk indices (blocks + tickets, < 2 x chunks) are 32-bit
            raise ValueError(f"sum: n = {n} makes {chunks} chunks for {variant.name}, over 2^31. "
                             f"Fix: sum in pieces of at most 2^44 elements")
        counter = _chunk_counter(x.device)
        grid = self.ticket_grid(kernel, block, chunks)
        if chunks == 1:  # one chunk, one block, no ticket (the counter stays 0): its partial is the answer
            kernel(x, dst_final, counter, n, 1, grid=1, block=block)
            return
        partials = torch.empty(chunks, dtype=torch.float32, device=x.device)
        kernel(x, partials, counter, n, chunks, grid=grid, block=block)
        kernel.module.kernel(finish)(partials, dst_final, chunks, counter, grid=1,
                                     block=variant.meta_int("finish_block", 1024), pdl=pdl)


# The ticket counter of `finish ticket` kernels (v4): one int32 per device and stream, zeroed once,
# left at 0 by every launch (atomicInc wraps when the last ticket is drawn).
_ticket = StreamCounters(width=1)
# The chunk counter of `@grid tickets` kernels (v6): one per device and stream, zeroed once, set back
# to 0 by each launch's finish. Its own arrays, not v4's: neither kernel then depends on the other
# leaving a shared slot at 0.
_chunk_counter = StreamCounters(width=1)


OP = Sum()


@functools.lru_cache(maxsize=None)
def has_griddepcontrol(arch: str) -> bool:
    """Whether a build for `arch` (a cubin's "sm_90a", ...) keeps v5's PDL hooks (sm_90+). Parsed
    once per arch string, not on every launch."""
    return Arch.parse(arch).cc >= (9, 0)
