"""sum v6_ticket_chunks without a GPU: its header keeps v3's chunk geometry (so its partials are v3's),
the `@grid tickets` launch plan (chunks, the persistent grid, the counter handed to the pass and the
finish, the finish's PDL flag per arch), the counter's own StreamCounters, a model of the ticket
loop (every chunk once, the counter ends at `chunks`), and the SASS: the PDL hooks, the ticket's
atomic before the chunk's loads, the finish's reset after its wait.

The generic tests in test_ops_mem_a.py already compile v6 for every CI arch with no spills, check
its 16-byte loads and allow it exactly one (integer) atomic in each pass kernel and none in the finish."""

from __future__ import annotations

import math
import random
import re
import types

import pytest
import torch

from kernelab.gpu import parse_signatures, toolchain
from kernelab.ops import Case, compile_variant, discover
from kernelab.ops.sum import op as sum_op

SUM = discover()["sum"]
V3, V5, V6 = SUM.variant("v3"), SUM.variant("v5"), SUM.variant("v6")


def test_v6_header_keeps_v3s_chunks_and_v5s_finish():
    assert V6.name == "v6_ticket_chunks" and V6.meta["grid"] == "tickets"
    # The chunk is what one v3 block sums: same block, vectors per thread, loads, finish.
    for key in ("block", "vectors_per_thread", "finish", "finish_block"):
        assert V6.meta[key] == V3.meta[key], key
    assert V6.meta["access_bytes"].split()[0] == V3.meta["access_bytes"].split()[0] == "16"
    assert SUM.defines(V6) == SUM.defines(V3) == SUM.defines(V5)
    # One set of knob defaults for v3, v5 and v6 (oneshot_knobs.cuh), none of their own
    knobs = V3.path.parent / "oneshot_knobs.cuh"
    assert re.search(r"#ifndef X_LOAD\n#define X_LOAD 3\n", knobs.read_text())
    for v in (V3, V5, V6):
        text = v.path.read_text()
        assert '#include "oneshot_knobs.cuh"' in text and not re.search(r"#define (BLOCK|VECS|FINISH_BLOCK|X_LOAD)\b", text)
    assert V6.meta["finish_pdl"] == "yes" and V6.meta["deterministic"].startswith("yes")
    assert SUM.best_variant == "v5_pdl_finish"  # until the H200 run says otherwise
    # The launcher reads signatures from the variant's own text: all three entry points are there.
    sigs = parse_signatures(V6.path.read_text(), SUM.defines(V6))
    assert [p.name for p in sigs["sum_bf16"]] == ["x", "partial", "ctr", "n", "chunks"]
    assert [p.name for p in sigs["sum_f32"]] == ["x", "partial", "ctr", "n", "chunks"]
    assert [p.name for p in sigs["sum_finish"]] == ["partial", "out", "count", "ctr"]


class _Kernel:
    def __init__(self, module, name):
        self.module, self.name, self.params = module, name, module.signatures[name]

    def __call__(self, *args, grid, block, shared_mem=0, pdl=False):
        assert len(args) == len(self.params), f"{self.name}: {len(args)} args for {len(self.params)}"
        for p, a in zip(self.params, args):
            if p.kind == "pointer":
                assert isinstance(a, torch.Tensor), (self.name, p.name)
                assert p.torch_dtype is None or str(a.dtype) == f"torch.{p.torch_dtype}", (self.name, p.name)
            else:
                bits = 32 if p.base in ("unsigned int", "int") else 64
                assert isinstance(a, int) and 0 <= a < 2 ** bits, (self.name, p.name, a)
        self.module.calls.append((self.name, args, grid, block, pdl))


class _Module:
    def __init__(self, arch):
        self.signatures = parse_signatures(V6.path.read_text(), SUM.defines(V6))
        self.calls: list = []
        self.compiled = types.SimpleNamespace(arch=arch)

    def kernel(self, name):
        return _Kernel(self, name)


def _launch(case, monkeypatch, resident=792, arch="sm_90"):
    monkeypatch.setattr(sum_op, "resident_blocks", lambda kernel, block: resident)
    inputs = SUM.make_inputs(case, 0, "cpu")
    outputs = SUM.make_outputs(case, inputs)
    module = _Module(arch)
    SUM.launch(module.kernel(SUM.kernel_name(case.dtype)), V6, case, inputs, outputs)
    return module.calls, outputs


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_v6_launch_plan(dtype, monkeypatch):
    """chunks = v3's grid; the pass runs min(chunks, resident) blocks over them with this stream's
    counter; the finish adds `chunks` partials, gets the same counter (to zero it) and is a
    programmatic launch on sm_90+ only. One chunk (n = 0 included): one launch, no counter use."""
    per_chunk = 256 * 8 * (16 // (4 if dtype == "float32" else 2))
    counter = sum_op._chunk_counter(torch.device("cpu"))
    for n, resident in (((1 << 24) + 3, 792), ((1 << 20) + 5, 792), ((1 << 20) + 5, 3), (per_chunk + 1, 792)):
        calls, outputs = _launch(Case((n,), dtype), monkeypatch, resident)
        chunks = math.ceil(n / per_chunk)
        (p_name, p_args, p_grid, p_block, p_pdl), (f_name, f_args, f_grid, f_block, f_pdl) = calls
        x, partials, ctr, count, p_chunks = p_args
        assert p_name == SUM.kernel_name(dtype) and (count, p_chunks) == (n, chunks)
        assert p_grid == min(chunks, resident) and p_block == 256 and not p_pdl
        assert partials.numel() == chunks and partials.dtype == torch.float32
        assert ctr.data_ptr() == counter.data_ptr() and ctr.numel() == 1 and ctr.dtype == torch.int32
        assert f_name == "sum_finish" and (f_grid, f_block, f_pdl) == (1, 1024, True)
        assert f_args[0] is partials and f_args[1].data_ptr() == outputs["out"].data_ptr()
        assert f_args[2] == chunks and f_args[3] is ctr
    for n in (0, 1, 7, per_chunk):  # one chunk: its block's sum is the answer
        calls, outputs = _launch(Case((n,), dtype), monkeypatch)
        ((name, args, grid, block, pdl),) = calls
        assert (grid, args[3], args[4], pdl) == (1, n, 1, False)
        assert args[1].data_ptr() == outputs["out"].data_ptr()
    assert int(counter) == 0  # the launch plan never writes it (the kernels keep it at 0)


def test_v6_finish_is_programmatic_only_where_the_build_has_griddepcontrol(monkeypatch):
    for arch, want in (("sm_80", False), ("sm_90", True), ("sm_100", True), ("sm_120", True)):
        calls, _ = _launch(Case(((1 << 22) + 1,), "bfloat16"), monkeypatch, arch=arch)
        assert [(c[0], c[4]) for c in calls] == [("sum_bf16", False), ("sum_finish", want)], arch


def test_v6_counter_is_its_own_and_kept_per_stream():
    cpu = torch.device("cpu")
    assert sum_op._chunk_counter is not sum_op._ticket
    c = sum_op._chunk_counter(cpu)
    assert c.data_ptr() == sum_op._chunk_counter(cpu).data_ptr()  # not allocated per call
    assert c.data_ptr() != sum_op._ticket(cpu).data_ptr()  # never v4's slot


def test_v6_refuses_more_chunks_than_32_bit_indices_allow():
    x = torch.zeros(8)
    with pytest.raises(ValueError, match="2\\^31"):
        SUM._launch_tickets(None, V6, x, torch.zeros(1), n=1 << 45, chunks=(1 << 31) + 1, block=256,
                            finish="sum_finish", pdl=False)


@pytest.mark.parametrize("chunks,grid", [(2, 2), (5, 3), (100, 7), (1000, 792), (16384, 792)])
def test_ticket_loop_model_sums_every_chunk_once_and_ends_the_counter_at_chunks(chunks, grid):
    """The kernel's loop, played in Python with blocks interleaved at random: block b sums chunk b,
    then gridDim.x + t for each ticket t it draws while summing; it stops at its first failing
    ticket. Every chunk is summed exactly once, each block draws exactly one failing ticket, and
    the counter ends at `chunks` (the finish then zeroes it); with grid >= chunks nothing is drawn."""
    rng = random.Random(chunks * 31 + grid)
    counter, summed, largest = 0, [], 0
    tickets = chunks > grid  # the same in every block
    state = {b: b for b in range(grid)}  # block -> the chunk it is summing
    while state:
        b = rng.choice(sorted(state))
        c = state.pop(b)
        summed.append(c)
        if not tickets:
            continue
        nxt, counter = grid + counter, counter + 1  # atomicAdd(ctr, 1), drawn while summing c
        largest = max(largest, nxt)
        if nxt < chunks:
            state[b] = nxt  # else: the block leaves the loop and never draws again
    assert sorted(summed) == list(range(chunks))
    assert counter == (chunks if tickets else 0)
    assert largest < 2 * chunks  # op.py's chunks <= 2^31 keeps every index in 32 bits


# ---- SASS --------------------------------------------------------------------------------------

needs_cuobjdump = pytest.mark.skipif(toolchain.cuobjdump_path() is None,
                                     reason="no cuobjdump (pip install nvidia-cuda-cuobjdump, or triton)")


def _functions(arch):
    from kernelab.analysis.sass import disassemble

    text = disassemble(compile_variant(SUM, V6, arch=arch).cubin)
    bodies = {m[1]: m[2] for m in re.finditer(r"Function : (\w+)\n(.*?)(?=\n\s*Function :|\Z)", text, re.S)}
    return {k: re.findall(r"/\*[0-9a-f]{4}\*/\s+([^;]*);", body) for k, body in bodies.items()}


def _first(ins, pattern):
    return next(i for i, t in enumerate(ins) if re.search(pattern, t))


@needs_cuobjdump
def test_v6_sass_hooks_ticket_and_reset():
    """sm_90: each pass kernel triggers the finish (PREEXIT) before anything else it loads, draws its
    ticket (one ATOMG.E.ADD) before its chunk's first 16-byte load, and has two barriers (block_sum's,
    the loop's); the finish waits (ACQBULK) before its two stores (the output and the counter's
    reset). sm_80: no griddepcontrol (a plain stream-ordered finish), the same ticket."""
    f = _functions("sm_90")
    for k in ("sum_f32", "sum_bf16"):
        ins = f[k]
        assert sum("ATOMG.E.ADD" in t for t in ins) == 1 and sum("BAR.SYNC" in t for t in ins) == 2, k
        assert _first(ins, "PREEXIT") < _first(ins, r"LDG\.E") and "ACQBULK" not in " ".join(ins), k
        assert _first(ins, "ATOMG") < _first(ins, r"LDG\.E.*128"), k
    fin = f["sum_finish"]
    stores = [i for i, t in enumerate(fin) if re.search(r"\bSTG\.E\b", t)]
    assert len(stores) == 2 and _first(fin, "ACQBULK") < min(stores)
    assert not any("ATOM" in t or "RED" in t for t in fin) and "PREEXIT" not in " ".join(fin)
    f80 = _functions("sm_80")
    assert not any(op in t for ins in f80.values() for t in ins for op in ("PREEXIT", "ACQBULK"))
    assert all(sum("ATOMG.E.ADD" in t for t in f80[k]) == 1 for k in ("sum_f32", "sum_bf16"))
