"""Integrity machinery: poisoned outputs, guard bands around outputs, bitwise input snapshots.

Poison. Before each run every output is filled with a bit pattern that no honest kernel
produces, so an element the kernel never wrote is recognisable afterwards, and a kernel
that reads the output before writing it gets a result that depends on the pattern:
  - "nan": a *signalling* NaN with a distinctive payload (fp32 0x7FA5A5A5, bf16 0x7FA5,
    fp16 0x7DA5, fp64 0x7FF5A5A5A5A5A5A5). Arithmetic on it yields a quiet NaN with other
    bits (NVIDIA GPUs give 0x7FFFFFFF), so "still the poison" and "computed from the
    poison" are told apart bit for bit;
  - "big": 0x7F bytes, a large finite value (fp32/bf16 3.39e38, fp64 1.4e306; fp16 uses
    0x7B7B = 61280, since 0x7F7F is a NaN there). `c[i] += x` leaves it unchanged (x is far
    below half an ulp), while the NaN run changes it: the two runs disagree, which is the
    signature of a stale read.

Guard bands. Each output handed to the candidate lives in a bigger buffer: random canary
bytes before and after it (and in the gaps of a strided view). The view keeps the op's
sizes, strides and address modulo 256, so misaligned and co-aligned layouts are preserved.
After the run, any changed byte outside the view's elements is an out-of-bounds write,
reported as an element offset from the view's first element (n = one past the end).

Input snapshots. The whole storage under each input (the bytes before a misaligned view
included) is cloned before the call and compared bitwise after it; storages over 64 MiB are
digested per 16 MiB chunk instead, so the check's memory stays near the op's own footprint.
"""

from __future__ import annotations

from dataclasses import dataclass, field

POISONS = ("nan", "big")

# dtype name -> {poison name: integer bit pattern written through an integer view of the same width}
_PATTERNS = {
    "float32": {"nan": 0x7FA5A5A5, "big": 0x7F7F7F7F},
    "float64": {"nan": 0x7FF5A5A5A5A5A5A5, "big": 0x7F7F7F7F7F7F7F7F},
    "bfloat16": {"nan": 0x7FA5, "big": 0x7F7F},
    "float16": {"nan": 0x7DA5, "big": 0x7B7B},
}
_BYTE_PATTERNS = {"nan": 0xA5, "big": 0x7F}  # integer, bool and fp8 outputs: repeated bytes

DEFAULT_GUARD_BYTES = 16 * 1024  # per side; a one-past-the-end write lands in the first bytes


def poison_bits(dtype, poison: str) -> int:
    """The integer bit pattern (as stored through `raw_bits`, signed for 2/4/8-byte views) for `poison`."""
    if poison not in POISONS:
        raise ValueError(f"unknown poison {poison!r}; choose one of {', '.join(POISONS)}")
    name = str(dtype).replace("torch.", "")
    size = _itemsize(dtype)
    if name in _PATTERNS:
        value = _PATTERNS[name][poison]
    else:
        value = int.from_bytes(bytes([_BYTE_PATTERNS[poison]]) * size, "little")
    if size > 1 and value >= 1 << (8 * size - 1):  # the integer views are signed (int16/32/64)
        value -= 1 << (8 * size)
    return value


def _itemsize(dtype) -> int:
    import torch

    return torch.empty((), dtype=dtype).element_size()


def poison_(t, poison: str):
    """Fill `t` (any strides) with the poison's bit pattern, on the current stream."""
    from .compare import raw_bits

    if t.numel():
        raw_bits(t).fill_(poison_bits(t.dtype, poison))
    return t


def holds_poison(t, poison: str):
    """Boolean mask: elements of `t` whose bits are exactly the poison's pattern."""
    from .compare import raw_bits

    return raw_bits(t) == poison_bits(t.dtype, poison)


def storage_bytes(t):
    """A uint8 tensor over the whole storage under `t` (not only the view's elements)."""
    import torch

    return torch.empty(0, dtype=torch.uint8, device=t.device).set_(t.untyped_storage())


def span_elements(t) -> int:
    """Elements from the view's first to one past its last element (gaps of a strided view included)."""
    if t.numel() == 0:
        return 0
    return 1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))


@dataclass
class GuardedOutput:
    """An output view inside a buffer with canary bytes around it.

    A contiguous view covers one byte range, so only the canaries around it are remembered and
    compared (a few KiB). A strided view keeps a per-byte mask of the bytes under its elements,
    so the gaps between them are canaries too."""

    name: str
    tensor: object  # the view the candidate writes
    buffer: object  # uint8, the whole allocation
    start: int  # byte offset of the view's first element in `buffer`
    span_bytes: int
    covered: object  # bool per byte of `buffer`, True under the view's elements; None for a contiguous view
    itemsize: int
    before: object = field(default=None, repr=False)

    def _outside(self):
        """The bytes a candidate must not write: both guard bands, or every byte not under an element."""
        import torch

        if self.covered is None:
            return torch.cat([self.buffer[:self.start], self.buffer[self.start + self.span_bytes:]])
        return self.buffer[~self.covered]

    def _buffer_offset(self, idx):
        """Positions in `_outside()` -> byte offsets in `buffer`."""
        if idx.numel() == 0:
            return idx
        if self.covered is None:
            return idx + (idx >= self.start).to(idx.dtype) * self.span_bytes
        return (~self.covered).nonzero().flatten()[idx]

    @property
    def covered_bytes(self) -> int:
        """Bytes under the view's elements (what the candidate may write)."""
        return self.span_bytes if self.covered is None else int(self.covered.sum())

    def arm(self) -> None:
        """Remember the canary bytes before a run."""
        self.before = self._outside().clone()

    def violations(self) -> dict | None:
        """None if no canary byte changed since arm(); else where it changed."""
        if self.before is None:
            raise RuntimeError("GuardedOutput.violations() before arm()")
        where = self._buffer_offset((self._outside() != self.before).nonzero().flatten())
        if where.numel() == 0:
            return None
        nbytes = int(where.numel())
        first, last = int(where[0]), int(where[-1])
        offsets = sorted({(int(b) - self.start) // self.itemsize for b in where[:4096].tolist()})
        numel = self.tensor.numel()
        return {"output": self.name, "bytes": nbytes, "elements": len(offsets) if nbytes <= 4096 else None,
                "first_offset": (first - self.start) // self.itemsize,
                "last_offset": (last - self.start) // self.itemsize,
                "offsets": offsets[:16], "numel": numel,
                "span_elements": self.span_bytes // self.itemsize}

    @staticmethod
    def describe(v: dict) -> str:
        span = v["span_elements"]

        def where(off: int) -> str:
            if off < 0:
                return f"element offset {off} ({-off} before the first element)"
            if off >= span:
                return f"element offset {off} ({off - span + 1} past the end; the output has {span} elements)"
            return f"element offset {off} (in a gap between the strided view's elements)"

        first, last = v["first_offset"], v["last_offset"]
        s = f"wrote {v['bytes']} byte(s) outside output '{v['output']}': {where(first)}"
        if last != first:
            s += f" .. {where(last)}"
        return s


def guarded_like(name: str, template, *, guard_bytes: int = DEFAULT_GUARD_BYTES, seed: int = 0x5EED) -> GuardedOutput:
    """A view with `template`'s dtype, sizes, strides and address % 256, inside a canary-filled buffer."""
    import torch

    itemsize = template.element_size()
    span = span_elements(template)
    span_bytes = span * itemsize
    guard = -(-max(guard_bytes, 256) // 256) * 256
    total = guard + span_bytes + guard + 256  # 256 bytes of slack to match the template's alignment
    device = template.device
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    buffer = torch.randint(0, 256, (total,), dtype=torch.uint8, device=device, generator=gen)
    base = buffer.data_ptr()
    target = template.data_ptr() % 256 if template.numel() else 0
    start = guard + (target - (base + guard)) % 256
    if start % itemsize:
        raise RuntimeError(f"cannot place output '{name}' at address % 256 == {target} in a buffer based at "
                           f"{base:#x}: not a multiple of its element size {itemsize}")
    view = buffer[start:start + span_bytes].view(template.dtype).as_strided(tuple(template.shape), tuple(template.stride()))
    covered = None
    if span and span != template.numel():  # a strided view: its gaps are canaries too
        covered = torch.zeros(total, dtype=torch.bool, device=device)
        mark = torch.zeros(span, dtype=torch.bool, device=device)
        mark.as_strided(tuple(template.shape), tuple(template.stride())).fill_(True)
        covered[start:start + span_bytes] = mark.repeat_interleave(itemsize)
    return GuardedOutput(name, view, buffer, start, span_bytes, covered, itemsize)


def guarded_outputs(templates: dict, *, guard_bytes: int = DEFAULT_GUARD_BYTES) -> dict[str, GuardedOutput]:
    import torch

    out = {}
    for i, (name, t) in enumerate(templates.items()):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"make_outputs returned {type(t).__name__} for output '{name}'; outputs must be tensors")
        out[name] = guarded_like(name, t, guard_bytes=guard_bytes, seed=0x5EED + i)
    return out


EXACT_SNAPSHOT_BYTES = 64 << 20  # inputs up to this size are copied; bigger ones are digested
DIGEST_CHUNK_BYTES = 16 << 20  # one digest per 16 MiB of a big input's storage


class InputSnapshot:
    """What the storages under the inputs held before a call, to tell whether the call changed them.

    An input of up to EXACT_SNAPSHOT_BYTES is copied and compared bitwise, which locates the
    first changed byte. A bigger one (a 2^28-element fp32 input is 1 GiB; a full copy of every
    input doubled the check's memory at bench sizes) is summarised per 16 MiB chunk by two
    64-bit sums of its words, one of them position-weighted, so a changed, swapped or shifted
    word changes the digest; a change is located to its chunk.
    """

    def __init__(self, inputs: dict, *, exact_bytes: int = EXACT_SNAPSHOT_BYTES,
                 chunk_bytes: int = DIGEST_CHUNK_BYTES):
        import torch

        self.inputs = inputs
        self.chunk_bytes = chunk_bytes
        self.copies, self.digests = {}, {}
        for name, t in inputs.items():
            if isinstance(t, torch.Tensor):
                raw = storage_bytes(t)
                if raw.numel() <= exact_bytes:
                    self.copies[name] = raw.clone()
                else:
                    self.digests[name] = (raw.numel(), _digest(raw, chunk_bytes))

    def changes(self) -> list[str]:
        """One line per input whose storage changed: how many bytes and the first changed element
        (for a digested input: which chunks changed, and the element range of the first)."""
        out = []
        for name, before in self.copies.items():
            t = self.inputs[name]
            now = storage_bytes(t)
            if now.numel() != before.numel():
                out.append(f"input '{name}': its storage was resized ({before.numel()} -> {now.numel()} bytes)")
                continue
            diff = (now != before).nonzero().flatten()
            if diff.numel():
                first_byte = int(diff[0])
                elem = (first_byte - t.storage_offset() * t.element_size()) // t.element_size()
                out.append(f"input '{name}': {diff.numel()} byte(s) changed, first at element offset {elem} "
                           f"from the view's start")
        for name, (nbytes, before) in self.digests.items():
            t = self.inputs[name]
            now = storage_bytes(t)
            if now.numel() != nbytes:
                out.append(f"input '{name}': its storage was resized ({nbytes} -> {now.numel()} bytes)")
                continue
            chunks = (_digest(now, self.chunk_bytes) != before).any(dim=1).nonzero().flatten().tolist()
            if chunks:
                size, base = t.element_size(), t.storage_offset() * t.element_size()
                lo = (chunks[0] * self.chunk_bytes - base) // size
                hi = (min(nbytes, (chunks[0] + 1) * self.chunk_bytes) - base) // size
                out.append(f"input '{name}': {len(chunks)} of {-(-nbytes // self.chunk_bytes)} chunk(s) of "
                           f"{self.chunk_bytes >> 20} MiB changed, the first between element offsets {lo} and {hi} "
                           "from the view's start")
        return out


def _digest(raw, chunk_bytes: int):
    """(chunks, 2) int64 digests of a uint8 storage: per chunk, the sum of its words and the sum of
    word * (position in chunk + 1), both wrapping mod 2^64. Words are 4 bytes where the size allows."""
    import torch

    width = 4 if raw.numel() % 4 == 0 else (2 if raw.numel() % 2 == 0 else 1)
    words = raw.view({4: torch.int32, 2: torch.int16, 1: torch.uint8}[width])
    per_chunk = chunk_bytes // width
    weights = torch.arange(1, per_chunk + 1, dtype=torch.int64, device=raw.device)
    rows = []
    for start in range(0, words.numel(), per_chunk):
        w = words[start:start + per_chunk].to(torch.int64)
        rows.append(torch.stack([w.sum(), (w * weights[:w.numel()]).sum()]))
    return torch.stack(rows)
