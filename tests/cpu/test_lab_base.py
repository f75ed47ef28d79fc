"""Claim and verdict logic of the lab, and the experiment registry."""

import pytest

from kernelab.lab import REGISTRY, Check, Verdict, experiment, load_all
from kernelab.lab.base import DIFFERS, HOLDS, NOT_RUN


def test_check_inside_and_outside_range():
    assert Check("bw", 0.85, lo=0.80, hi=0.92).holds
    c = Check("bw", 0.72, lo=0.80, hi=0.92)
    assert not c.holds and c.deviation == pytest.approx(0.1)
    assert "differs by 10%" in c.describe()
    high = Check("ratio", 3.0, hi=2.0)
    assert not high.holds and high.deviation == pytest.approx(0.5)
    assert Check("x", 5.0, lo=1.0).holds and Check("x", 5.0).holds


def test_verdict_status_and_worst_deviation():
    v = Verdict([Check("a", 1.0, lo=0.5), Check("b", 0.4, lo=0.5), Check("c", 0.1, lo=0.5)])
    assert v.status == DIFFERS and v.deviation == pytest.approx(0.8) and "c: 0.1" in v.summary()
    assert Verdict([Check("a", 1.0, lo=0.5)]).status == HOLDS
    assert Verdict([]).status == DIFFERS, "a verdict with nothing measured never holds"
    assert Verdict(not_run_reason="needs a GPU").status == NOT_RUN


def test_registry_refuses_duplicates_and_runs_without_gpu():
    name = "_test_dummy_experiment"

    @experiment(name, title="t", claim="c", source="seeds/000 §1", needs_gpu=False)
    def dummy(ctx):
        ctx.record("x", 2.0)
        return Verdict([Check("x", ctx.data["x"], lo=1.0)])

    with pytest.raises(ValueError, match="twice"):
        experiment(name, title="t", claim="c", source="s")(dummy)
    out = REGISTRY[name].run(quick=True, log=lambda m: None)
    assert out["verdict"]["status"] == HOLDS and out["measured"] == {"x": 2.0}
    del REGISTRY[name]


def test_every_registered_experiment_cites_a_seed():
    exps = load_all()
    for e in exps.values():
        assert e.source.startswith("seeds/") and "§" in e.source or e.source.startswith("seeds/003"), e.name
        assert len(e.claim) > 20, e.name
