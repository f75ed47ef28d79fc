"""ops/base.py StreamCounters without a GPU: a slot per (device, stream, capture), reused past
`slots`; a capture that comes before any eager call gets counters of its own, never the device
array (whose memset in a graph would clear other streams' slots). The stream and capture ids come
from `_stream_and_capture`, replaced here; tests/gpu/test_stream_counters.py captures real graphs."""

from __future__ import annotations

import torch

from kernelab.ops import base
from kernelab.ops.base import StreamCounters

CPU = torch.device("cpu")


def _at(monkeypatch, stream: int, capture: int = 0):
    monkeypatch.setattr(base, "_stream_and_capture", lambda device: (stream, capture))


def test_a_slot_per_stream_and_the_same_slot_again(monkeypatch):
    c = StreamCounters(width=2, slots=4)
    _at(monkeypatch, 11)
    a = c(CPU)
    assert a.numel() == 2 and a.dtype == torch.int32 and a.tolist() == [0, 0]
    assert c(CPU).data_ptr() == a.data_ptr()
    _at(monkeypatch, 12)
    b = c(CPU)
    assert b.data_ptr() == a.data_ptr() + 2 * 4  # the next slot of the one array


def test_each_capture_on_one_stream_gets_its_own_slot(monkeypatch):
    """torch captures every graph on one default side stream: two graphs replayed at once on two
    streams must not share counters, so the capture id is part of the key."""
    c = StreamCounters(width=2, slots=8)
    _at(monkeypatch, 5)
    eager = c(CPU)
    _at(monkeypatch, 7, capture=101)
    g1 = c(CPU)
    assert c(CPU).data_ptr() == g1.data_ptr()  # launches of one capture share its slot (stream order)
    _at(monkeypatch, 7, capture=102)
    g2 = c(CPU)
    _at(monkeypatch, 7)
    plain = c(CPU)
    assert len({eager.data_ptr(), g1.data_ptr(), g2.data_ptr(), plain.data_ptr()}) == 4


def test_streams_and_captures_wrap_each_in_their_own_half(monkeypatch):
    """Past `slots` streams (or captures) the slots are reused, but a capture never gets a stream's
    slot: a program that captures hundreds of graphs (torch.compile's CUDA graphs) keeps its eager
    streams' counters apart from every graph's."""
    c = StreamCounters(width=1, slots=3)
    streams, captures = [], []
    for s in range(4):
        _at(monkeypatch, 100 + s)
        streams.append(c(CPU).data_ptr())
    for k in range(7):
        _at(monkeypatch, 7, capture=500 + k)
        captures.append(c(CPU).data_ptr())
    assert len(set(streams[:3])) == 3 and streams[3] == streams[0]
    assert len(set(captures[:3])) == 3 and captures[3] == captures[0] and captures[6] == captures[0]
    assert not set(streams) & set(captures)
    base_ptr = c._arrays[str(CPU)].data_ptr()
    assert {(p - base_ptr) // 4 for p in captures} == {3, 4, 5}  # the second half of 2 x 3 slots


def test_a_capture_before_any_eager_call_gets_counters_of_its_own(monkeypatch):
    c = StreamCounters(width=2, slots=4)
    _at(monkeypatch, 7, capture=9)
    own = c(CPU)
    assert own.numel() == 2 and own.tolist() == [0, 0] and not c._arrays  # no device array made in a capture
    assert c(CPU).data_ptr() == own.data_ptr()
    _at(monkeypatch, 7, capture=10)
    assert c(CPU).data_ptr() != own.data_ptr()
    _at(monkeypatch, 7)
    eager = c(CPU)
    assert c._arrays and eager.numel() == 2
    _at(monkeypatch, 7, capture=9)  # the first capture keeps its own counters (its graph holds them)
    assert c(CPU).data_ptr() == own.data_ptr()


def test_off_cuda_no_stream_no_capture():
    assert base._stream_and_capture(CPU) == (0, 0)
