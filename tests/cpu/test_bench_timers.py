"""The GPU timers (events.EventTimer, graph.GraphTimer) and bench() end to end on a simulated
CUDA stream: torch.cuda's Event, _sleep, CUDAGraph and graph capture are replaced by fakes that
log every stream operation and advance a fake GPU clock. This checks the order of operations
(pacer, flush and persisting-L2 reset outside the event pair), per-launch graph times and the
cold-graph rotation without a GPU; tests/gpu/test_bench_gpu.py checks the real thing."""

import contextlib
import time
from types import SimpleNamespace

import pytest
import torch

import kernelab.gpu as kgpu
import kernelab.gpu.l2 as kl2
from kernelab.bench import WarmupRule, bench
from kernelab.bench import flush as kflush
from kernelab.bench.events import EventTimer
from kernelab.bench.graph import GraphTimer

KERNEL_S, FLUSH_S, SM_MHZ = 10e-6, 30e-6, 2000.0


class FakeGPU:
    def __init__(self):
        self.t = 0.0
        self.log = []
        self.capture = None  # list of recorded kernel durations while capturing

    def run(self, what, seconds):
        if self.capture is not None:
            self.capture.append((what, seconds))
        else:
            self.log.append(what)
            self.t += seconds


@pytest.fixture
def gpu(monkeypatch):
    g = FakeGPU()

    class Event:
        def __init__(self, enable_timing=False):
            self.stamp = None

        def record(self, stream=None):
            g.log.append("record")
            self.stamp = g.t

        def synchronize(self):
            pass

        def elapsed_time(self, end):
            return (end.stamp - self.stamp) * 1e3

    class Graph:
        def __init__(self):
            self.nodes = None

        def replay(self):
            g.log.append(f"replay[{len(self.nodes)}]")
            for what, s in self.nodes:
                g.t += s

        def reset(self):
            self.nodes = None

    @contextlib.contextmanager
    def graph(cg):
        g.capture = []
        try:
            yield
        finally:
            cg.nodes, g.capture = g.capture, None

    class Flusher:
        nbytes = 2 * 60 << 20

        def flush(self):
            g.run("flush", FLUSH_S)

        def info(self):
            return {"flush_bytes": self.nbytes, "flush_method": "memset", "l2_bytes": 60 << 20}

    info = SimpleNamespace(l2_bytes=60 << 20, sm_clock_max_mhz=SM_MHZ, name="FakeGPU", cc=(9, 0), driver_version="0")
    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(torch.cuda, "CUDAGraph", Graph)
    monkeypatch.setattr(torch.cuda, "graph", graph)
    monkeypatch.setattr(torch.cuda, "_sleep", lambda cycles: g.run("pacer", cycles / (SM_MHZ * 1e6)))
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)
    monkeypatch.setattr(kgpu, "device_info", lambda index=None: info)
    monkeypatch.setattr(kgpu, "has_gpu", lambda: True)
    monkeypatch.setattr(kgpu, "synchronize", lambda: None)
    monkeypatch.setattr(kl2, "reset_persisting_l2", lambda index=None: g.log.append("reset_l2") or True)
    monkeypatch.setattr(kflush.L2Flusher, "for_device", classmethod(lambda cls, index, method="memset": Flusher()))
    return g


class NoClocks:
    def read(self):
        return None


def kernel(gpu, seconds=KERNEL_S, host_s=0.0):
    def fn(*args):
        t = time.perf_counter()
        while time.perf_counter() - t < host_s:  # the host's enqueue time
            pass
        gpu.run("kernel", seconds)
    return fn


def test_cold_sample_keeps_pacer_flush_and_reset_outside_the_events(gpu):
    t = EventTimer(kernel(gpu), cold=True, probe=NoClocks())
    t.first_call()
    gpu.log.clear()
    g, host, reading = t.sample(read_clock=True)
    assert gpu.log == ["reset_l2", "pacer", "flush", "record", "kernel", "record"]
    assert g == pytest.approx(KERNEL_S) and host >= 0 and reading is None
    assert t.info()["persisting_l2_reset"] is True and t.info()["flush_bytes"] == 120 << 20


def test_hot_sample_has_no_flush_and_the_pacer_follows_host_time(gpu):
    t = EventTimer(kernel(gpu), cold=False, probe=NoClocks())
    t.first_call()
    gpu.log.clear()
    t.sample(read_clock=False)
    assert gpu.log == ["pacer", "record", "kernel", "record"]
    for _ in range(20):
        t.pacer.update(50e-6)  # a slow host: the pacer grows to 2 x host + 30 us
    assert t.pacer.seconds == pytest.approx(130e-6)
    t.pacer.update(1.0)
    t.pacer.recent.clear()
    t.pacer.update(1.0)
    assert t.pacer.seconds == 2e-3  # capped


def test_graph_timer_reports_per_launch_time(gpu):
    t = GraphTimer(kernel(gpu, 1e-6), probe=NoClocks())
    t.first_call()
    assert t.launches_per_sample == 200  # 200 us per replay at 1 us per launch
    assert t.eager_host_s is not None
    gpu.log.clear()
    g, host, _ = t.sample(read_clock=False)
    assert gpu.log == ["pacer", "record", "replay[200]", "record"]
    assert g == pytest.approx(1e-6)
    t.close()
    assert t.graph is None


def test_cold_graph_rotates_whole_sets_and_flushes(gpu, monkeypatch):
    import kernelab.bench.graph as kgraph

    seen = []

    def fn(x):
        seen.append(x.data_ptr())
        gpu.run("kernel", 2e-6)

    sets = [(torch.empty(1 << 20, dtype=torch.uint8),) for _ in range(4)]
    # CPU tensors stand in for device memory, and "L2" is 2 MiB here (the check needs 2 x L2 = 4 MiB).
    real = kgraph.materialize_arg_sets
    monkeypatch.setattr(kgraph, "materialize_arg_sets", lambda a, need, device_only=True: real(a, 4 << 20, False))
    t = GraphTimer(fn, arg_sets=sets, probe=NoClocks())
    t.first_call()
    assert t.launches_per_sample % 4 == 0 and t.launches_per_sample >= 100
    gpu.log.clear()
    g, _, _ = t.sample(read_clock=False)
    assert gpu.log == ["reset_l2", "pacer", "flush", "record", f"replay[{t.launches_per_sample}]", "record"]
    assert g == pytest.approx(2e-6)
    ptrs = [x.data_ptr() for (x,) in sets]
    assert seen[-t.launches_per_sample:][:8] == ptrs * 2  # launch i of the graph uses set i mod 4


def test_bench_end_to_end_on_the_simulated_gpu(gpu):
    m = bench(kernel(gpu, 100e-6), mode="cold", name="k", warmup=WarmupRule(min_s=0.0, max_s=0.05),
              min_gpu_s=0.0)
    assert m.device == "FakeGPU" and m.mode == "cold" and m.l2 == "cold"
    assert m.stop_reason == "converged" and m.n == 10 and m.median_s == pytest.approx(100e-6)
    assert m.meta["flush_bytes"] == 120 << 20 and m.meta["torch"] == torch.__version__
    assert not m.launch_bound
    g = bench(kernel(gpu, 1e-6, host_s=5e-6), mode="graph", min_gpu_s=0.0, warmup=WarmupRule(min_s=0.0))
    assert g.mode == "graph" and g.l2 == "hot" and g.launches_per_sample == 200
    assert g.median_s == pytest.approx(1e-6) and g.stats.total_gpu_s == pytest.approx(g.n * 200e-6)
    # 5 us of host per call against 1 us of GPU: launch-bound when eager; graph mode is the fix already
    assert g.launch_bound and g.host_enqueue_s >= 5e-6 and g.recommendation is None
    h = bench(kernel(gpu, 1e-6, host_s=5e-6), mode="hot", min_gpu_s=0.0, warmup=WarmupRule(min_s=0.0))
    assert h.launch_bound and "mode='graph'" in h.recommendation and h.median_s == pytest.approx(1e-6)


def test_compare_and_seeds_bench_on_the_simulated_gpu(gpu):
    from kernelab.bench import compare, seeds_bench

    c = compare(kernel(gpu, 100e-6), kernel(gpu, 110e-6), names=("new", "old"), min_gpu_s=0.0,
                warmup=WarmupRule(min_s=0.0))
    assert c.verdict == "faster" and c.ratio == pytest.approx(100 / 110) and c.paired
    assert c.a.device == "FakeGPU" and c.a.meta["compare_role"] == "A"
    gpu.log.clear()
    ms = seeds_bench(kernel(gpu, 100e-6), warmup=3, iters=7)
    assert ms == pytest.approx(0.1)
    assert gpu.log.count("kernel") == 3 + 7  # one untimed first call + 2 warm-up + 7 samples
    assert gpu.log.count("flush") == 2 + 7
