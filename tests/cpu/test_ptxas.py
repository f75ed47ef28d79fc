"""The ptxas -v parser, against reports captured from NVRTC 13.0 and nvcc 13.0 (fixtures/ptxas).

source.cu was compiled with -maxrregcount=32 so that `spiller` spills; `with_stack` has a
non-inlined device function, a 32x33 float tile (4224 B) and one barrier.
"""

from pathlib import Path

import pytest

from kernelab.gpu import parse_ptxas_log

FIX = Path(__file__).parents[1] / "fixtures" / "ptxas"


@pytest.mark.parametrize("log", sorted(p.name for p in FIX.glob("nv*.log")))
def test_captured_reports(log):
    text = (FIX / log).read_text()
    res = parse_ptxas_log(text)
    assert set(res) == {"simple", "with_stack", "spiller"}, "device function _Z6helperPfi must not count as a kernel"
    arch = log.split("_", 1)[1].removesuffix(".log")
    assert all(r.arch == arch for r in res.values())
    sp = res["spiller"]
    assert sp.registers == 32 and sp.spill_stores == 1240 and sp.spill_loads in (2288, 2292)
    assert sp.stack_frame == 1248 and sp.spills > 0
    ws = res["with_stack"]
    assert ws.shared_static == 4224 and ws.barriers == 1 and ws.stack_frame == 64 and ws.spills == 0
    assert res["simple"].spills == 0 and 4 <= res["simple"].registers <= 16


def test_seeds_old_format_with_cmem():
    res = parse_ptxas_log((FIX / "seeds_cuda12_sm_80.log").read_text())
    (k,) = res.values()
    assert k.registers == 16 and k.constant == {0: 380} and k.barriers == 0 and k.spills == 0


def test_empty_log_gives_no_kernels():
    assert parse_ptxas_log("") == {}
