"""Routing buckets to mtc's kernels or PyTorch's fallback (mtc._routing)
without a GPU: the decision, the kept times, the argument errors of swap
and quantize_, and run_layer's use of the decision. The measurement itself
runs on the H200 (tests/python/test_torch_gpu.py, test_route_measured)."""
import json

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed (Debian: python3-torch)")
import mtc.torch as mt  # noqa: E402
from mtc import _routing, _torch_base  # noqa: E402
from mtc._torch_base import LayerKey  # noqa: E402


def test_fallback_takes_only_buckets_it_wins_by_the_margin():
    times = {1: (10.0, 30.0), 64: (50.0, 49.0), 256: (100.0, 90.0),
             512: (200.0, 150.0)}
    # 49 * 1.03 > 50: too close to call; 90 and 150 win clearly.
    assert _routing.fallback_buckets(times) == {256, 512}
    assert _routing.fallback_buckets(times, margin=1.0) == {64, 256, 512}
    assert _routing.fallback_buckets({}) == frozenset()


def test_times_round_trip_and_bad_files(tmp_path):
    path = tmp_path / "routes-x.json"
    times = {1: (3.5, 9.0), 2: (4.0, 9.5)}
    _routing.save_times(path, times)
    assert _routing.load_times(path, [1, 2]) == times
    assert json.loads(path.read_text())["columns"] == ["mtc", "fallback"]
    assert not list(tmp_path.glob("*.tmp"))
    # Other buckets, a missing file, broken JSON or fields: measure again.
    assert _routing.load_times(path, [1, 2, 4]) is None
    assert _routing.load_times(tmp_path / "none.json", [1, 2]) is None
    path.write_text("{not json")
    assert _routing.load_times(path, [1, 2]) is None
    path.write_text(json.dumps({"times_us": {"1": [1.0]}}))
    assert _routing.load_times(path, [1]) is None


def test_save_into_a_missing_folder_is_quiet(tmp_path):
    _routing.save_times(tmp_path / "no" / "routes.json", {1: (1.0, 2.0)})
    assert not (tmp_path / "no").exists()


def test_route_argument_errors():
    model = torch.nn.Sequential(torch.nn.Linear(64, 64).to(torch.bfloat16))
    with pytest.raises(ValueError, match=r"route: expected one of "
                       r"\('measure', 'mtc'\), got 'fast'"):
        mt.swap(model, route="fast")
    with pytest.raises(ValueError, match="route: expected one of"):
        mt.quantize_(model, "int8", route=None)
    # Nothing was changed by the refused calls.
    assert isinstance(model[0], torch.nn.Linear)
    with pytest.raises(ValueError, match="route: expected one of"):
        _torch_base.Kernels(route="always")


class FakeArtifact:
    def __init__(self, buckets):
        self.buckets = buckets
        self.launched = []

    def bucket_for(self, m):
        return next((b for b in self.buckets if b >= m), None)

    def launch(self, m, stream, ins, outs):
        self.launched.append(m)


class FakeKernels:
    """run_layer's view of Kernels: the largest bucket, the artifact and
    the routing decision."""

    def __init__(self, fallback):
        self.art = FakeArtifact([1, 2, 4, 8])
        self.largest = 8
        self.fallback = fallback

    def get(self, key):
        return self.art

    def uses_fallback(self, key, bucket):
        return bucket in self.fallback


@pytest.mark.parametrize("m, eager", [(1, False), (3, True), (4, True),
                                      (7, False), (9, True)])
def test_run_layer_follows_the_decision(monkeypatch, m, eager):
    """Bucket 4 is routed to the fallback: rows 3 and 4 run it, as do rows
    beyond the largest bucket; the others launch the kernel."""
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "current_stream",
                        lambda d=None: type("S", (), {"cuda_stream": 0}))
    kernels = FakeKernels({4})
    x = torch.randn(m, 16, dtype=torch.bfloat16)
    calls = []

    def fallback(x2):
        calls.append(x2.shape[0])
        return torch.zeros(x2.shape[0], 8, dtype=x2.dtype)
    out = _torch_base.run_layer(kernels, x, 8, 16, "int8", 0,
                                [("weight", torch.zeros(8, 16))], None,
                                fallback)
    assert out.shape == (m, 8)
    assert calls == ([m] if eager else [])
    assert kernels.art.launched == ([] if eager else [m])


def test_kernels_measure_once_and_report(monkeypatch, capsys):
    """Kernels.load with route="measure" times each layer once (kept or
    measured by _routing.times_for) and routes the buckets it lost."""
    k1 = LayerKey(0, 4096, 4096, "bf16", False)
    k2 = LayerKey(0, 8192, 4096, "bf16", False)
    timed = []

    def times_for(key, artifact, buckets):
        timed.append(key)
        return {b: (10.0, 5.0 if key == k2 and b >= 4 else 20.0)
                for b in buckets}
    monkeypatch.setattr(_routing, "times_for", times_for)
    monkeypatch.setattr(torch.cuda, "device", lambda d: _Null())
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing",
                        lambda: False)
    kernels = _torch_base.Kernels(buckets=(1, 4, 16), route="measure")
    kernels._artifacts = {k1: object(), k2: object()}
    kernels.load([k1, k2])
    kernels.load([k2])
    assert timed == [k1, k2]
    assert not kernels.uses_fallback(k1, 16)
    assert [b for b in (1, 4, 16) if kernels.uses_fallback(k2, b)] == [4, 16]
    assert "woq_8192x4096_bf16: M = 4, 16 to PyTorch's fallback" in \
        capsys.readouterr().err
    # route="mtc" ignores the decisions.
    kernels.configure((1, 4, 16), False, 4, False, "mtc")
    assert not kernels.uses_fallback(k2, 16)


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_no_measuring_during_capture(monkeypatch):
    """Layers first loaded while a CUDA graph is being captured cannot be
    timed: route="measure" says what to do instead."""
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing",
                        lambda: True)
    kernels = _torch_base.Kernels(buckets=(1, 4), route="measure")
    key = LayerKey(0, 64, 64, "bf16", False)
    kernels._artifacts = {key: object()}
    with pytest.raises(mt.MtcError, match=r"route='measure' cannot time "
                       r"layers while a CUDA graph is being captured"):
        kernels.load([key])
    assert key not in kernels.times
