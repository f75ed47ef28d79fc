"""A baseline peer (transpose's `copy_(m.t())`) is reported beside a variant but never chosen as
the best peer it is compared with, even when it is the fastest peer of its case."""
from __future__ import annotations

import pytest

from kernelab.ops import discover
from kernelab.report.results import Row
from kernelab.suite import _relate_to_peers


def _rows(times):
    case = {"label": "16384x16384 float32"}
    return [Row(op="transpose", name=n, kind="variant" if n.startswith("v") else "peer", case=case,
                metrics={"time_s": t}) for n, t in times.items()]


def test_baselines_are_in_x_peers_but_never_the_best_peer():
    rows = _rows({"torch": 2.0, "torch.compile": 1.2, "copy_(m.t())": 0.5, "v4": 1.0})
    _relate_to_peers(rows, ("copy_(m.t())",))
    v = rows[-1].metrics
    assert v["best_peer"] == "torch.compile" and v["x_best_peer"] == pytest.approx(1.2)
    assert v["x_peers"]["copy_(m.t())"] == pytest.approx(0.5)  # still reported
    _relate_to_peers(rows, ())  # without the declaration the fastest peer wins, as before
    assert rows[-1].metrics["best_peer"] == "copy_(m.t())"


def test_a_case_with_only_baselines_gets_no_best_peer():
    rows = _rows({"copy_(m.t())": 0.5, "v4": 1.0})
    _relate_to_peers(rows, ("copy_(m.t())",))
    assert "x_best_peer" not in rows[-1].metrics and rows[-1].metrics["x_peers"] == {"copy_(m.t())": 0.5}


def test_transpose_declares_its_copy_baseline_among_its_peers():
    op = discover()["transpose"]
    assert op.baselines == ("copy_(m.t())",)
    assert all(not o.baselines for name, o in discover().items() if name != "transpose")
