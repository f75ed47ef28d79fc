"""Global loads the SASS issues only after waiting for an earlier load they do not need.

A memory-bound kernel is fast when every load of a step is in flight before the first
instruction that waits for one of them: one DRAM round trip a step (~0.6-1 us on an H200
under load). If the code waits for load A (reads A's register) and only then issues load B,
whose address does not depend on A, the step pays two round trips. Session 19 found this in
layernorm v5: `x - pivot` on the head/tail scalars came before the vector loop, so the loop's
four LDG.E.128 waited for the pivot's load (fp32 512.5 us; issued first, 499 us).

`load_order` finds the pattern in a `cuobjdump -sass` listing, statically:

- It walks each function in address order (the fall-through layout). A *load* is a global
  read that returns a value (LDG, LD, ATOMG / ATOM with a destination); its destination
  registers are *pending* until an instruction reads one of them: that instruction *waits*.
  A wait on load A also retires every load issued before A (they are older; the model
  assumes they are back).
- Every value computed from a loaded value is *data*; so is a predicate computed from one,
  shared memory after a store of data (LDS then returns data: a row index handed out by an
  ATOMG counter through shared memory), and everything after a branch on a data predicate.
- A load whose address and guard are not data, issued after a wait, is *serialized*: it
  could have been issued before the wait. The finding (`late_first_wide`, the note
  `kernelab inspect` prints) is narrower: a region's first LDG of the kernel's widest
  width, i.e. the start of the stream, serialized. Later steps of a loop are serialized
  by construction (step N + 1 after step N's arithmetic) and are only counted.
- A wait in code that a forward conditional branch may jump over (the head/tail scalars of
  an unaligned row, a loop that may run zero times) is not a wait on every path: it
  retires its loads but delays nothing. A wait on a predicated load is named with its
  predicate: it costs a trip only when the predicate holds (a head/tail scalar's `tid <
  head` is false on aligned rows; layernorm v5's pivot load was predicated on the row's
  validity, always true).
- An unconditional BRA, EXIT or RET ends a region: the code after it is reached only by a
  jump, from a state the walk did not see, so the walk starts afresh there.

It is a heuristic, not a proof: a loop body is walked once, the back edge is not followed,
register pressure can make the compiler's order the right one, and scoreboard waits are not
printed by cuobjdump (the walk infers them from register reads, which is what the
scoreboards enforce). Session 20's audit (NOTES.md): on every bench shape's kernel, sm_80 to
sm_120, the only findings wait on head/tail scalars, which aligned rows do not load
(tests/cpu/test_bench_path_load_order.py keeps it so on sm_90).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .._text import split_top_level
from .sass import _FUNCTION, _INSTR, access_bits  # sass.py's reading of cuobjdump's lines

_GUARD = re.compile(r"^@(?P<neg>!?)(?P<pred>U?P(?:T|\d))\s+")
# a register or predicate operand: R12, UR4, P0, UP1 (not RZ, URZ, PT, UPT), with an optional .64
_REG = re.compile(r"(?<![A-Za-z0-9_])(?P<name>U?R\d+|U?P\d)(?P<wide>\.64)?(?![0-9])")
_ADDRESS = re.compile(r"\[(?P<inside>[^\]]*)\]")

# opcodes whose operands are all sources (stores, barriers, branches, fences, bulk copies)
_NO_DEST = ("STG", "STS", "ST", "STL", "STSM", "RED", "REDG", "BAR", "BRA", "BRX", "JMP", "EXIT", "RET", "CALL",
            "MEMBAR", "FENCE", "ERRBAR", "NOP", "WARPSYNC", "BSYNC", "BSSY", "BREAK", "UTMALDG", "UTMASTG",
            "UTMAREDG", "UTMAPF", "UBLKCP", "UBLKRED", "UBLKPF", "LDGSTS", "CCTL", "DEPBAR", "YIELD",
            "UCGABAR_ARV", "UCGABAR_WAIT", "CGAERRBAR", "ACQBULK", "LDGDEPBAR", "ARRIVES", "BPT")
_GLOBAL_LOADS = ("LDG", "LD", "ATOMG", "ATOM")  # reads that return a value from global memory
_STREAM_LOADS = ("LDG", "LD")
_STORES_TO_SHARED = ("STS", "STSM", "ATOMS", "ST")  # ST (generic) may write shared memory
_SHARED_READS = ("LDS", "LDSM", "LD", "ATOMS")


@dataclass(frozen=True)
class Instruction:
    addr: int
    guard: str | None  # "P0" / "!UP1", or None (always executes; PT counts as None)
    opcode: str  # LDG.E.128.CONSTANT
    dests: tuple[str, ...]
    sources: tuple[str, ...]
    address_regs: tuple[str, ...]  # registers inside [...] (the address of a memory access)
    text: str

    @property
    def op(self) -> str:
        return self.opcode.split(".", 1)[0]


def _regs(operand: str, width: int = 1) -> list[str]:
    out = []
    for m in _REG.finditer(operand):
        name = m["name"]
        n = 2 if m["wide"] else width
        if name.lstrip("U").startswith("R") and n > 1:
            prefix, num = ("UR", name[2:]) if name.startswith("UR") else ("R", name[1:])
            out += [f"{prefix}{int(num) + i}" for i in range(n)]
        else:
            out.append(name)
    return out


def _regs_moved(opcode: str) -> int:
    """Registers in a value the instruction moves: .128 -> 4, .64 / .WIDE -> 2, else 1."""
    mods = opcode.split(".")[1:]
    if "128" in mods:
        return 4
    if "64" in mods or "WIDE" in mods:
        return 2
    return 1


def _bits(opcode: str) -> int:
    """Bits a thread moves in one global access (sass.access_bits: .128, .64, .U16, .U8, else 32)."""
    return access_bits(opcode.split(".")[1:])


def _branch_target(ins: Instruction) -> int | None:
    m = re.search(r"\b0x([0-9a-fA-F]+)\s*$", ins.text)
    return int(m[1], 16) if m else None


def _split_operands(rest: str) -> list[str]:
    """Operands at top level (commas inside [...] or {...} do not split)."""
    return split_top_level(rest, "[{", "]}")


def parse_instruction(addr: int, body: str) -> Instruction | None:
    body = body.strip()
    guard = None
    if m := _GUARD.match(body):
        guard = None if m["pred"] in ("PT", "UPT") else m["neg"] + m["pred"]
        body = body[m.end():]
    if not body:
        return None
    opcode, _, rest = body.partition(" ")
    op = opcode.split(".", 1)[0]
    operands = _split_operands(rest)
    address_regs = tuple(r for m in _ADDRESS.finditer(rest) for r in _regs(m["inside"]))
    width = _regs_moved(opcode)
    if op in _NO_DEST or opcode.startswith("SYNCS.ARRIVE"):
        dests: list[str] = []
        srcs = [r for o in operands for r in _regs(o, width if "[" not in o else 1)]
    else:
        # SHFL PT, R3, ... and ATOMG PT, R5, ...: a predicate, then the register they write
        ndest = 2 if op in ("SHFL", "ATOMG", "ATOM", "ATOMS") and re.fullmatch(r"U?P(?:T|\d)", operands[0]) else 1
        while ndest < len(operands) and re.fullmatch(r"!?U?P(?:T|\d)", operands[ndest]):
            ndest += 1  # ISETP P0, PT, ... / IADD3 R4, P0, PT, ...: the carry and second predicate
        dest_width = width if (op in _GLOBAL_LOADS or op.startswith("LD") or op == "IMAD") else 1
        dests = [r for o in operands[:ndest] for r in _regs(o, dest_width)]
        srcs = [r for o in operands[ndest:] for r in _regs(o)]
    if guard:
        srcs.append(guard.lstrip("!"))
    return Instruction(addr, guard, opcode, tuple(dests), tuple(srcs), address_regs, body)


@dataclass
class SerializedLoad:
    load: int  # address of the load issued late
    wait: int  # address of the instruction that waited before it
    waited_on: int  # address of the load that instruction waited for
    load_text: str
    wait_text: str
    waited_guard: str | None = None  # the waited-on load's predicate: it costs a trip only when that holds

    def __str__(self) -> str:
        guard = f" (predicated on {self.waited_guard})" if self.waited_guard else ""
        return (f"{self.load:#06x} {self.load_text} issues after {self.wait:#06x} {self.wait_text} "
                f"waits on the load at {self.waited_on:#06x}{guard}")


@dataclass
class LoadOrder:
    """One kernel's global loads and those issued after a wait they did not need."""

    name: str
    loads: int = 0
    waits: int = 0  # instructions that read a pending load's register
    serialized: list[SerializedLoad] = field(default_factory=list)  # every independent load after a wait
    # the finding: a region's first load of the kernel's widest width (the stream: LDG.E.128) among them
    late_first_wide: list[SerializedLoad] = field(default_factory=list)
    # the most bytes of LDG / LD a thread issues between two waits (predicated loads counted): what one
    # thread can have in flight, for Little's law (inspect's note)
    max_batch_bytes: int = 0

    def note(self) -> str | None:
        """One line for `kernelab inspect`, or None when the stream's first loads are in the first batch."""
        if not self.late_first_wide:
            return None
        first = self.late_first_wide[0]
        return (f"the first wide load waits a memory round trip it does not need: {first}. Issue it before that "
                f"instruction (move the use of the earlier load below it); {len(self.serialized)} of {self.loads} "
                f"global loads issue after a wait they do not depend on")

    def to_dict(self) -> dict:
        return {"loads": self.loads, "waits": self.waits, "serialized": len(self.serialized),
                "late_first_wide": [str(s) for s in self.late_first_wide], "max_batch_bytes": self.max_batch_bytes}


def _walk(name: str, instructions: list[Instruction]) -> LoadOrder:
    res = LoadOrder(name)
    pending: dict[str, int] = {}  # register -> address of the load that writes it
    loads: dict[int, Instruction] = {}
    data: set[str] = set()  # registers / predicates holding values computed from loaded data
    shared_is_data = False
    control_is_data = False
    last_wait: tuple[Instruction, int, str | None] | None = None  # (waiting instruction, load it waited on, guard)
    # the stream: the widest LDG / LD (a counter's ATOMG is a load for the data flow, not the stream)
    widest = max((_bits(i.opcode) for i in instructions if i.op in _STREAM_LOADS), default=0)
    wide_seen = False  # a load of the widest width met in this region
    skips: list[int] = []  # targets of forward conditional branches seen: code before them may be jumped over
    batch_bits = 0  # stream-load bits issued since the last wait
    for ins in instructions:
        op = ins.op
        skips = [t for t in skips if t > ins.addr]
        waited = [pending[r] for r in ins.sources if r in pending]
        if waited:
            res.waits += 1
            batch_bits = 0
            newest = max(waited)
            for r in [r for r, a in pending.items() if a <= newest]:
                del pending[r]
            if not skips:  # a wait in code a branch may jump over is not a wait on every path
                guarded = all(loads[a].guard for a in waited)
                last_wait = (ins, newest, loads[newest].guard if guarded else None)
        is_load = op in _GLOBAL_LOADS and bool(ins.dests)
        if is_load and op in _STREAM_LOADS:
            batch_bits += _bits(ins.opcode)
            res.max_batch_bytes = max(res.max_batch_bytes, batch_bits // 8)
        if is_load:
            res.loads += 1
            loads[ins.addr] = ins
            addr_is_data = any(r in data for r in ins.address_regs) or (ins.guard or "").lstrip("!") in data
            if last_wait is not None and not addr_is_data and not control_is_data:
                w, on, guard = last_wait
                late = SerializedLoad(ins.addr, w.addr, on, ins.text, w.text, guard)
                res.serialized.append(late)
                if op in _STREAM_LOADS and _bits(ins.opcode) == widest and not wide_seen:
                    res.late_first_wide.append(late)
            wide_seen = wide_seen or (op in _STREAM_LOADS and _bits(ins.opcode) == widest)
        # data flow
        reads_data = control_is_data or any(r in data for r in ins.sources)
        if op in _STORES_TO_SHARED and reads_data:
            shared_is_data = True
        out_is_data = is_load or reads_data or (op in _SHARED_READS and shared_is_data)
        for r in ins.dests:
            pending.pop(r, None)
            if out_is_data:
                data.add(r)
            else:
                data.discard(r)
        if is_load:
            for r in ins.dests:
                pending[r] = ins.addr
        if op in ("BRA", "BRX", "JMP", "EXIT", "RET"):
            if ins.guard is None and ".DIV" not in ins.opcode and "U.ANY" not in ins.opcode:
                pending.clear()
                data.clear()
                skips.clear()
                shared_is_data = control_is_data = wide_seen = False
                last_wait = None
                batch_bits = 0
            else:
                if (ins.guard or "").lstrip("!") in data:
                    control_is_data = True
                target = _branch_target(ins)
                if target is not None and target > ins.addr:
                    skips.append(target)
    return res


def load_order(sass_text: str) -> list[LoadOrder]:
    """A LoadOrder per function of a `cuobjdump -sass` listing, in order."""
    out: list[LoadOrder] = []
    name, body = None, []

    def flush():
        if name is not None:
            out.append(_walk(name, body))

    for line in sass_text.splitlines():
        if m := _INSTR.match(line):
            ins = parse_instruction(int(m["addr"], 16), m["body"])
            if ins is not None and ins.op != "NOP":
                body.append(ins)
        elif m := _FUNCTION.match(line):
            flush()
            name, body = m["name"], []
    flush()
    return out
