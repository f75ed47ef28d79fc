"""The public API on CPU tensors: kernelab.check catches what the harness catches."""

import torch

import kernelab


def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return {"x": torch.randn(1000, generator=g)}


def test_check_passes_an_honest_candidate_and_names_the_failure_of_a_wrong_one():
    def honest(inputs, outputs):
        outputs["y"].copy_(inputs["x"] * 2)

    def skips_the_tail(inputs, outputs):
        outputs["y"][:900].copy_(inputs["x"][:900] * 2)

    def mutates(inputs, outputs):
        inputs["x"].mul_(2)
        outputs["y"].copy_(inputs["x"])

    ref = lambda x: {"y": x * 2}
    assert kernelab.verify(honest, ref, make_inputs, device="cpu").ok
    bad = kernelab.verify(skips_the_tail, ref, make_inputs, device="cpu")
    assert not bad.ok and bad.reason == "unwritten"
    mut = kernelab.verify(mutates, ref, make_inputs, device="cpu")
    assert not mut.ok and mut.reason == "input_mutated"


def test_top_level_names_do_not_shadow_subpackages():
    import importlib

    for sub in ("bench", "check", "analysis", "gpu", "ops", "lab", "report"):
        mod = importlib.import_module(f"kernelab.{sub}")
        assert getattr(kernelab, sub, mod) is mod, f"kernelab.{sub} must stay the subpackage"


def test_roofline_report_names_the_bound():
    r = kernelab.roofline(1e-3, bytes=4 * 10**9)
    text = str(r)
    assert "memory-bound" in text and "4000 GB/s" in text and "% of the nominal roof" in text
