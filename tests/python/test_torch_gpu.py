"""mtc.torch on a GPU: woq_linear against an fp64 reference at every kind of
row count (buckets, between buckets, beyond the largest), 2-D and 3-D x, bf16
and f16, with and without bias; the same under torch.compile with CUDA
graphs; swap() on a model; and the errors only a GPU can reach. Skips
where there is no CUDA device or no torch.library.custom_op (PyTorch 2.4+).

Outputs are poisoned first: before each call a NaN-filled block of the
output's size is freed, and PyTorch's caching allocator hands that block to
the op's output, so rows a kernel skips stay NaN and fail the check."""
import warnings

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: mtc.torch's GPU tests need one",
                allow_module_level=True)
import mtc.torch as mt  # noqa: E402

if not mt.HAS_CUSTOM_OP:
    pytest.skip(f"PyTorch {torch.__version__} has no torch.library.custom_op",
                allow_module_level=True)

N, K = 1000, 512  # N not a multiple of any tile
MS = [1, 3, 8, 16, 33, 128, 512, 2048]
TOL = 1e-2


@pytest.fixture(scope="module", autouse=True)
def compiled(tmp_path_factory):
    """Heuristic schedules (no tuning) in a private cache."""
    mp = pytest.MonkeyPatch()
    mp.setenv("MTC_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    mt.kernels = mt.Kernels(tune=False, progress=False)
    yield
    mp.undo()


def layer(dtype, bias, n=N, k=K, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    w = torch.randint(-128, 128, (n, k), dtype=torch.int8, device="cuda",
                      generator=g)
    s = (torch.rand(n, device="cuda", generator=g) * 0.02 + 0.001).to(dtype)
    b = torch.randn(n, device="cuda", generator=g).to(dtype) if bias else None
    return w, s, b


def reference(x, w, s, b):
    y = (x.double() @ w.double().t()) * s.double()
    return y + b.double() if b is not None else y


def poison(rows, n, dtype):
    torch.full((rows, n), float("nan"), dtype=dtype, device="cuda")


def check(out, ref, what):
    assert out.shape == ref.shape, what
    assert torch.isfinite(out).all(), f"{what}: unwritten or non-finite rows"
    err = ((out.double() - ref).abs().max() / ref.abs().max()).item()
    assert err <= TOL, f"{what}: max rel err {err:.2e}"
    return err


def shaped(m, k, three_d, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    if three_d and m % 3 == 0 and m > 3:
        return torch.randn(3, m // 3, k, device="cuda", generator=g).to(dtype)
    if three_d:
        return torch.randn(1, m, k, device="cuda", generator=g).to(dtype)
    return torch.randn(m, k, device="cuda", generator=g).to(dtype)


def bucket_rows(m):
    for b in mt.kernels.buckets:
        if b >= m:
            return b
    return m


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("m", MS)
def test_eager(m, dtype, bias):
    w, s, b = layer(dtype, bias)
    for three_d in (False, True):
        x = shaped(m, K, three_d, dtype, seed=m)
        poison(bucket_rows(m), N, dtype)
        out = mt.woq_linear(x, w, s, b)
        assert out.shape == (*x.shape[:-1], N) and out.dtype == dtype
        check(out.reshape(-1, N), reference(x.reshape(-1, K), w, s, b),
              f"M={m} {'3-D' if three_d else '2-D'} {dtype} bias={bias}")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("m", [1, 3, 16, 33, 512])
def test_compiled_with_cuda_graphs(m, dtype):
    torch._dynamo.reset()
    w, s, b = layer(dtype, bias=m % 2 == 1)
    module = mt.WoqLinear(w, s, b)
    step = torch.compile(module, fullgraph=True, mode="reduce-overhead")
    # Several calls: warm-up, recording, then replays, each on new rows.
    for i in range(4):
        x = shaped(m, K, three_d=i % 2 == 1, dtype=dtype, seed=100 + i)
        out = step(x).clone()
        check(out.reshape(-1, N), reference(x.reshape(-1, K), w, s, b),
              f"compiled call {i}, M={m} {dtype}")


def test_compiled_graph_has_one_node():
    torch._dynamo.reset()
    w, s, _ = layer(torch.bfloat16, False)
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm
    f = torch.compile(mt.WoqLinear(w, s), backend=backend, fullgraph=True)
    x = torch.randn(4, K, device="cuda", dtype=torch.bfloat16)
    check(f(x), reference(x, w, s, None), "custom backend")
    assert len(graphs) == 1
    calls = [n for n in graphs[0].graph.nodes if n.op == "call_function"]
    assert len(calls) == 1
    assert calls[0].target in (torch.ops.mtc.woq_linear,
                               torch.ops.mtc.woq_linear.default)


def test_manual_cuda_graph_capture():
    w, s, b = layer(torch.bfloat16, True)
    x = torch.randn(8, K, device="cuda", dtype=torch.bfloat16)
    mt.woq_linear(x, w, s, b)  # loads the kernels before capturing
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream), torch.cuda.graph(graph):
        out = mt.woq_linear(x, w, s, b)
    torch.cuda.current_stream().wait_stream(stream)
    for seed in (1, 2):
        x.copy_(torch.randn(8, K, device="cuda", generator=torch.Generator(
            device="cuda").manual_seed(seed)).to(torch.bfloat16))
        out.fill_(float("nan"))
        graph.replay()
        check(out, reference(x, w, s, b), f"graph replay {seed}")


def test_artifact_output_poisoned():
    """The C ABI directly, into a NaN-filled output of the bucket's rows."""
    w, s, _ = layer(torch.bfloat16, False)
    art = mt.kernels.get((torch.cuda.current_device(), N, K, "bf16", False))
    x = torch.randn(5, K, device="cuda", dtype=torch.bfloat16)
    xp = torch.nn.functional.pad(x, (0, 0, 0, 3))
    out = torch.full((8, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    art.launch(5, torch.cuda.current_stream().cuda_stream,
               [xp.data_ptr(), w.data_ptr(), s.data_ptr()], [out.data_ptr()])
    check(out[:5], reference(x, w, s, None), "artifact launch")


class Int8Linear(torch.nn.Module):
    def __init__(self, w, s):
        super().__init__()
        self.register_buffer("weight", w)
        self.register_buffer("scales", s)

    def forward(self, x):
        return torch.nn.functional.linear(x, self.weight.to(x.dtype)) * \
            self.scales


class ScaledInput(Int8Linear):
    """The same buffers, another function: must not be swapped."""

    def forward(self, x):
        return torch.nn.functional.linear(x * 2, self.weight.to(x.dtype)) + \
            self.scales


def test_swap_model():
    w1, s1, _ = layer(torch.bfloat16, False, n=256, k=512, seed=1)
    w2, s2, _ = layer(torch.bfloat16, False, n=512, k=256, seed=2)
    w3, s3, _ = layer(torch.bfloat16, False, n=256, k=512, seed=3)
    model = torch.nn.Sequential(Int8Linear(w1, s1), torch.nn.SiLU(),
                                Int8Linear(w2, s2), ScaledInput(w3, s3))
    x = torch.randn(6, 512, device="cuda", dtype=torch.bfloat16)
    want = model(x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mt.swap(model, tune=False, progress=False)
    assert isinstance(model[0], mt.WoqLinear)
    assert isinstance(model[2], mt.WoqLinear)
    assert isinstance(model[3], ScaledInput)
    assert any("not swapping ScaledInput modules" in str(c.message)
               for c in caught)
    assert model[0].weight is w1 and model[0].scales is s1, "shared, not copied"
    got = model(x)
    err = ((got.float() - want.float()).abs().max() /
           want.float().abs().max()).item()
    assert err < 2e-2
    # swap's default route="measure" timed every bucket of both shapes.
    assert len(mt.kernels.times) == 2
    assert all(sorted(t) == list(mt.kernels.buckets)
               for t in mt.kernels.times.values())


def test_route_measured(tmp_path, monkeypatch):
    """route="measure" times mtc's kernels and the fallback at every
    bucket, keeps the times beside the artifact, and another Kernels (a new
    process) reads them instead of measuring; rows of a bucket routed to the
    fallback compute PyTorch's formula itself."""
    from mtc import _routing
    monkeypatch.setenv("MTC_CACHE_DIR", str(tmp_path))
    kernels = mt.Kernels(buckets=(1, 16, 256), progress=False,
                         route="measure")
    monkeypatch.setattr(mt, "kernels", kernels)
    key = mt.LayerKey(torch.cuda.current_device(), N, K, "bf16", True)
    kernels.load([key])
    times = kernels.times[key]
    assert sorted(times) == [1, 16, 256]
    assert all(t > 0 for pair in times.values() for t in pair)
    assert len(list(tmp_path.rglob("routes-*.json"))) == 1
    # At M = 1 mtc's one kernel beats a dequantising copy plus cuBLAS.
    assert times[1][0] < times[1][1], times

    other = mt.Kernels(buckets=(1, 16, 256), progress=False, route="measure")
    monkeypatch.setattr(_routing, "measure",
                        lambda *a: pytest.fail("measured again"))
    other.load([key])
    assert other.times[key] == times

    w, s, b = layer(torch.bfloat16, bias=True)
    kernels._fallback[key] = frozenset({16})
    x = torch.randn(9, K, device="cuda").to(torch.bfloat16)
    assert torch.equal(mt.woq_linear(x, w, s, b),
                       mt.woq_linear_eager(x, w, s, b))
    check(mt.woq_linear(x[:1], w, s, b), reference(x[:1], w, s, b),
          "M = 1 on the kernel")


def test_gpu_argument_errors():
    w, s, _ = layer(torch.bfloat16, False)
    x = torch.randn(4, K, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="weight: on cpu, but x is on cuda"):
        mt.woq_linear(x, w.cpu(), s)
    unaligned = torch.empty(N + 1, device="cuda", dtype=torch.bfloat16)[1:]
    unaligned.copy_(s)
    with pytest.raises(ValueError, match="scales: its data must be 16-byte "
                                         "aligned"):
        mt.woq_linear(x, w, unaligned)
    # An x at an odd offset is copied, not refused: it is the activation.
    xo = torch.randn(4 * K + 1, device="cuda", dtype=torch.bfloat16)[1:]
    xo = xo.view(4, K)
    check(mt.woq_linear(xo, w, s), reference(xo, w, s, None), "offset x")
    # Nothing can be compiled while a graph is being captured.
    mt.kernels = mt.Kernels(tune=False, progress=False)
    g = torch.cuda.CUDAGraph()
    with pytest.raises(Exception, match="none can be compiled while a CUDA "
                                        "graph is being captured"):
        with torch.cuda.graph(g):
            mt.woq_linear(x, w, s)
