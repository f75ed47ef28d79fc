"""`kernelab lab run --all --quick --json`, through the Python API, on a real GPU (about 1-2 minutes).

Every experiment must come back with a verdict (holds or differs: the claim may be wrong on this
GPU, the experiment may not be), its JSON must serialise, and the claims that do not depend on
the GPU model must hold: the L2 flush matters at 2^20 and not at 2^28; a crash and a hang are
contained in child processes and the parent still computes; the calculator and the driver agree
on the seeds' occupancy example; the worker's JIT, padding and divergence effects show.
"""

import json

import pytest

from kernelab.lab import bandwidth, compat, execution, faults, load_all, memory
from kernelab.lab.base import DIFFERS, HOLDS

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def results():
    """Run every experiment once, quick; an exception is recorded, not raised, so one bad
    experiment does not hide the others."""
    out = {}
    for name, e in load_all().items():
        try:
            out[name] = e.run(quick=True, log=lambda m: None)
        except Exception as ex:  # reported by test_every_experiment_returns_a_verdict
            out[name] = {"error": f"{type(ex).__name__}: {ex}"}
    return out


def check(results, experiment: str, what: str):
    r = results[experiment]
    assert "error" not in r, f"{experiment}: {r['error']}"
    found = [c for c in r["verdict"]["checks"] if c["what"] == what]
    assert found, f"{experiment} has no check {what!r}: {[c['what'] for c in r['verdict']['checks']]}"
    return found[0]


def test_every_experiment_returns_a_verdict(results):
    errors = {k: r["error"] for k, r in results.items() if "error" in r}
    assert not errors, errors
    for name, r in results.items():
        assert r["verdict"]["status"] in (HOLDS, DIFFERS), f"{name}: {r['verdict']}"
        assert r["verdict"]["checks"], f"{name} measured nothing"
        assert r["measured"], f"{name} recorded no raw numbers"
        json.dumps(r, default=str)


def test_the_l2_flush_matters_only_when_the_data_fits_in_l2(results):
    small = check(results, "l2_flush", bandwidth.L2_SMALL)
    large = check(results, "l2_flush", bandwidth.L2_LARGE)
    assert small["holds"] and small["value"] > 1.05, small
    assert large["holds"], large


def test_the_crash_is_contained_and_the_parent_still_works(results):
    assert check(results, "sticky_errors", faults.CONTAINED)["holds"]
    assert check(results, "sticky_errors", faults.PARENT_OK)["holds"]
    assert check(results, "sticky_errors", faults.LATER_FAILED)["holds"], "every later call in the child fails"
    assert check(results, "misaligned_views", memory.UNCHECKED)["holds"]
    assert check(results, "misaligned_views", memory.OURS)["holds"]


def test_the_hang_is_contained_and_the_fix_works(results):
    for what in (faults.ANY_HANG, faults.WATCHDOG, faults.FIXED_OK, faults.HANG_PARENT_OK):
        assert check(results, "syncthreads_hang", what)["holds"], (what, results["syncthreads_hang"]["measured"])


def test_occupancy_api_matches_the_seeds_worked_example(results):
    assert check(results, "occupancy", execution.CALC_BLOCKS)["holds"]
    assert check(results, "occupancy", execution.CALC_OCC)["holds"]
    assert check(results, "occupancy", execution.MISMATCH)["holds"], "calculator and driver disagree"
    r = results["occupancy"]
    if any(c["what"] == execution.API_BLOCKS for c in r["verdict"]["checks"]):  # only on a 9.0 GPU
        assert check(results, "occupancy", execution.API_BLOCKS)["holds"]


def test_effects_that_do_not_depend_on_the_gpu_model(results):
    assert check(results, "bank_conflicts", memory.MICRO)["value"] > 8, "a 32-way conflict must cost many times"
    assert check(results, "warp_divergence", execution.DIV_SUM)["holds"]
    assert check(results, "warp_divergence", execution.ALIGNED)["holds"]
    assert check(results, "malloc_free", memory.CACHED_FREE_WAITS)["holds"]
    assert check(results, "arch_compat", compat.FOREIGN)["holds"], "SASS does not cross major versions"
    assert check(results, "arch_compat", compat.NATIVE_RUNS)["holds"]
    assert check(results, "arch_compat", compat.PTX_RUNS)["holds"]
    assert check(results, "arch_compat", compat.JIT_CACHED)["holds"], "later loads hit the JIT cache"
