"""mtc.torch's int4 layer on a GPU: woq_int4_linear against an fp64
reference (M = 1, 3, 16, 100 on the kernels and 2048 on the eager path,
groups of 32 and 128, bf16 and f16, 2-D and 3-D x, with and without bias);
torch.compile with CUDA graphs; swap() of gpt-fast-style
WeightOnlyInt4Linear modules made with aten._convert_weight_to_int4pack,
against their own forward; and the errors only a GPU can reach. Skips where
there is no CUDA device or no torch.library.custom_op (PyTorch 2.4+).

Outputs are poisoned first, as in test_torch_gpu.py: a NaN-filled block of
the output's size is freed before each call, so rows a kernel skips stay
NaN and fail the check."""
import os
import sys
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

F = torch.nn.functional
N, K = 1000, 512  # N not a multiple of any tile
TOL = 1e-2
BF16 = torch.bfloat16
needs_tinygemm = pytest.mark.skipif(
    not hasattr(torch.ops.aten, "_convert_weight_to_int4pack"),
    reason=f"PyTorch {torch.__version__} has no aten._weight_int4pack_mm")


@pytest.fixture(scope="module", autouse=True)
def compiled(tmp_path_factory):
    """Heuristic schedules (no tuning) in a private cache."""
    mp = pytest.MonkeyPatch()
    mp.setenv("MTC_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    mt.kernels = mt.Kernels(tune=False, progress=False)
    yield
    mp.undo()


def layer(dtype, group, bias, n=N, k=K, seed=0):
    """(weight packed, s, scales, zeros, bias): s the signed int4 values."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    s = torch.randint(-8, 8, (n, k), dtype=torch.int8, device="cuda",
                      generator=g)
    sc = (torch.rand(n, k // group, device="cuda", generator=g) * 0.02 +
          0.001).to(dtype)
    z = (torch.randn(n, k // group, device="cuda", generator=g) * 0.01) \
        .to(dtype)
    b = torch.randn(n, device="cuda", generator=g).to(dtype) if bias else None
    return mt.pack_int4(s), s, sc, z, b


def reference(x, s, scales, zeros, group, b=None):
    w = s.double() * scales.double().repeat_interleave(group, dim=1) + \
        zeros.double().repeat_interleave(group, dim=1)
    y = x.double() @ w.t()
    return y + b.double() if b is not None else y


def check(out, ref, what):
    assert out.shape == ref.shape, what
    assert torch.isfinite(out).all(), f"{what}: unwritten or non-finite rows"
    err = ((out.double() - ref).abs().max() / ref.abs().max()).item()
    assert err <= TOL, f"{what}: max rel err {err:.2e}"
    return err


def poison(rows, n, dtype):
    torch.full((rows, n), float("nan"), dtype=dtype, device="cuda")


def bucket_rows(m):
    return next((b for b in mt.kernels.buckets if b >= m), m)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("dtype", [BF16, torch.float16])
@pytest.mark.parametrize("group", [32, 128])
@pytest.mark.parametrize("m", [1, 3, 16, 100, 2048])
def test_eager(m, group, dtype, bias):
    w, s, sc, z, b = layer(dtype, group, bias, seed=group)
    for three_d in (False, True):
        g = torch.Generator(device="cuda").manual_seed(m)
        x = torch.randn(m, K, device="cuda", generator=g).to(dtype)
        if three_d:
            x = x.view(1, m, K) if m % 2 else x.view(2, m // 2, K)
        poison(bucket_rows(m), N, dtype)
        out = mt.woq_int4_linear(x, w, sc, z, group, b)
        assert out.shape == (*x.shape[:-1], N) and out.dtype == dtype
        check(out.reshape(-1, N), reference(x.reshape(-1, K), s, sc, z,
                                            group, b),
              f"M={m} G={group} {dtype} bias={bias} 3-D={three_d}")


def test_kernels_match_the_eager_dequantise():
    """The kernels and the eager path round alike (each node to bf16): they
    agree far closer than either does to fp64."""
    w, s, sc, z, _ = layer(BF16, 128, False, seed=5)
    x = torch.randn(16, K, device="cuda", dtype=BF16)
    out = mt.woq_int4_linear(x, w, sc, z, 128)
    eager = mt.int4_linear_eager(x, w, sc, z, 128)
    err = ((out.double() - eager.double()).abs().max() /
           eager.double().abs().max()).item()
    assert err < 1e-2, f"kernel against eager: {err:.2e}"


@pytest.mark.parametrize("dtype", [BF16, torch.float16])
@pytest.mark.parametrize("m", [1, 3, 16, 100])
def test_compiled_with_cuda_graphs(m, dtype):
    torch._dynamo.reset()
    w, s, sc, z, b = layer(dtype, 32, bias=m % 2 == 1)
    step = torch.compile(mt.Int4Linear(w, sc, z, 32, b), fullgraph=True,
                         mode="reduce-overhead")
    for i in range(4):  # warm-up, recording, then replays on new rows
        x = torch.randn(m, K, device="cuda", dtype=dtype)
        out = step(x).clone()
        check(out, reference(x, s, sc, z, 32, b), f"compiled call {i}, M={m}")


def test_compiled_graph_has_one_node():
    torch._dynamo.reset()
    w, s, sc, z, _ = layer(BF16, 128, False)
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm
    f = torch.compile(mt.Int4Linear(w, sc, z, 128), backend=backend,
                      fullgraph=True)
    x = torch.randn(4, K, device="cuda", dtype=BF16)
    check(f(x), reference(x, s, sc, z, 128), "custom backend")
    calls = [n for n in graphs[0].graph.nodes if n.op == "call_function"]
    assert [c.target for c in calls] in (
        [torch.ops.mtc.woq_int4_linear],
        [torch.ops.mtc.woq_int4_linear.default])


def test_gpu_argument_errors():
    w, s, sc, z, _ = layer(BF16, 32, False)
    x = torch.randn(4, K, device="cuda", dtype=BF16)
    with pytest.raises(ValueError, match="zeros: on cpu, but x is on cuda"):
        mt.woq_int4_linear(x, w, sc, z.cpu(), 32)
    unaligned = torch.empty(z.numel() + 1, device="cuda", dtype=BF16)[1:]
    unaligned = unaligned.view(z.shape)
    unaligned.copy_(z)
    with pytest.raises(ValueError, match="zeros: its data must be 16-byte "
                                         "aligned"):
        mt.woq_int4_linear(x, w, sc, unaligned, 32)


#===----------------------------------------------------------------------===#
# swap() of gpt-fast's WeightOnlyInt4Linear
#===----------------------------------------------------------------------===#

def quantize(w, group):
    """gpt-fast's group_quantize_tensor: q int32 [N, K] in [0, 15], scales
    and zeros bf16 [N, K/G] (min_val = zero - 8 * scale)."""
    to_quant = w.reshape(-1, group)
    hi, lo = to_quant.amax(dim=1, keepdim=True), to_quant.amin(dim=1,
                                                               keepdim=True)
    scales = (hi - lo).clamp(min=1e-6) / 15
    zeros = lo + scales * 8
    scales = scales.to(BF16).reshape(w.shape[0], -1)
    zeros = zeros.to(BF16).reshape(w.shape[0], -1)
    min_val = zeros.reshape(-1, 1) - scales.reshape(-1, 1) * 8
    q = to_quant.sub(min_val).div(scales.reshape(-1, 1)).round() \
        .clamp_(0, 15).to(torch.int32).reshape_as(w)
    return q, scales, zeros


def to_tinygemm(q, inner_k_tiles):
    """aten._convert_weight_to_int4pack: from PyTorch 2.5 it takes uint8
    [N, K/2] with the even k in the high nibble, before that int32 [N, K]."""
    packed = (q[:, ::2] << 4 | q[:, 1::2]).to(torch.uint8)
    try:
        return torch.ops.aten._convert_weight_to_int4pack(packed,
                                                           inner_k_tiles)
    except RuntimeError:
        return torch.ops.aten._convert_weight_to_int4pack(q, inner_k_tiles)


class GptFastInt4Linear(torch.nn.Module):
    """gpt-fast's WeightOnlyInt4Linear: its buffers, attributes and forward
    (quantize.py, with linear_forward_int4 inlined)."""

    def __init__(self, w, group=128, inner_k_tiles=8, origin=None):
        super().__init__()
        n, k = w.shape
        self.padding = origin is not None
        if self.padding:
            self.origin_in_features = origin
        self.in_features, self.out_features = k, n
        self.groupsize, self.inner_k_tiles = group, inner_k_tiles
        q, scales, zeros = quantize(w.to(BF16), group)
        self.q, self.deq_scales, self.deq_zeros = q, scales, zeros
        self.register_buffer("weight", to_tinygemm(q, inner_k_tiles))
        self.register_buffer("scales_and_zeros", torch.cat(
            [scales.reshape(n, -1, 1), zeros.reshape(n, -1, 1)], 2)
            .transpose(0, 1).contiguous())

    def forward(self, input):
        input = input.to(BF16)
        if self.padding:
            input = F.pad(input, pad=(0, self.in_features -
                                      self.origin_in_features))
        shape = input.shape
        c = torch.ops.aten._weight_int4pack_mm(
            input.reshape(-1, shape[-1]), self.weight, self.groupsize,
            self.scales_and_zeros)
        return c.reshape(shape[:-1] + (self.out_features,))


class NotInt4(GptFastInt4Linear):
    """The same buffers, another function: must not be swapped."""

    def forward(self, input):
        return super().forward(input) * 2


def gpt_fast_weight(n, k, seed, origin=None):
    g = torch.Generator(device="cuda").manual_seed(seed)
    w = torch.randn(n, k, device="cuda", generator=g) * 0.05
    if origin is not None:  # gpt-fast pads the weight with zero columns
        w[:, origin:] = 0
    return w


@needs_tinygemm
def test_gpt_fast_module_is_what_the_test_thinks():
    """The stand-in's forward is gpt-fast's (q - 8) * scale + zero, so a
    failure below is mtc's, not the test's packing."""
    m = GptFastInt4Linear(gpt_fast_weight(256, 1024, 0), group=32)
    x = torch.randn(5, 1024, device="cuda", dtype=BF16)
    check(m(x), reference(x, m.q - 8, m.deq_scales, m.deq_zeros, 32),
          "gpt-fast's own layer")


@needs_tinygemm
def test_swap_gpt_fast_int4(monkeypatch):
    graphs = []
    compile_graphs = mt.compiler.compile_graphs

    def counting(g, *a, **kw):
        graphs.extend(g)
        return compile_graphs(g, *a, **kw)
    monkeypatch.setattr(mt.compiler, "compile_graphs", counting)
    a = GptFastInt4Linear(gpt_fast_weight(512, 1024, 1), group=128)
    b = GptFastInt4Linear(gpt_fast_weight(512, 1024, 2), group=128)
    c = GptFastInt4Linear(gpt_fast_weight(1024, 2048, 3, origin=2000),
                          group=32, origin=2000)
    d = NotInt4(gpt_fast_weight(1024, 1024, 4), group=64)
    model = torch.nn.Sequential(a, torch.nn.SiLU(), b, torch.nn.Linear(
        512, 2000, device="cuda", dtype=BF16), c, d)
    x = torch.randn(6, 1024, device="cuda", dtype=BF16)
    y = torch.randn(3, 2000, device="cuda", dtype=BF16)
    want_a, want_c = a(x), c(y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mt.swap(model, tune=False, progress=False)
    assert [type(m).__name__ for m in model] == [
        "Int4Linear", "SiLU", "Int4Linear", "Linear", "Int4Linear", "NotInt4"]
    assert any("not swapping NotInt4 modules" in str(w.message)
               for w in caught)
    assert sorted(graphs) == ["woq4_1024x1024_g64_bf16",
                              "woq4_1024x2048_g32_bf16",
                              "woq4_512x1024_g128_bf16"], \
        "each distinct shape compiled once (NotInt4 for its verify)"
    for new, old in ((model[0], a), (model[2], b), (model[4], c)):
        assert new.weight.dtype == torch.uint8
        assert new.weight.shape == (old.out_features, old.in_features // 2)
        assert torch.equal(mt.unpack_int4(new.weight).int() + 8, old.q), \
            "repacked q is gpt-fast's q"
        assert torch.equal(new.scales, old.deq_scales)
        assert torch.equal(new.zeros, old.deq_zeros)
    assert model[4].origin_in_features == 2000
    for got, want, what in ((model[0](x), want_a, "a"),
                            (model[4](y), want_c, "c, padded")):
        err = ((got.float() - want.float()).abs().max() /
               want.float().abs().max()).item()
        assert err < 2e-2, f"{what}: max rel err {err:.2e}"
    # The swapped model under torch.compile with CUDA graphs.
    torch._dynamo.reset()
    step = torch.compile(model[4], fullgraph=True, mode="reduce-overhead")
    for _ in range(3):
        y = torch.randn(3, 2000, device="cuda", dtype=BF16)
        check(step(y).clone(), reference(F.pad(y, (0, 48)), c.q - 8,
                                         c.deq_scales, c.deq_zeros, 32),
              "compiled swapped layer")


@needs_tinygemm
def test_swap_real_gpt_fast(monkeypatch):
    """gpt-fast's own WeightOnlyInt4Linear, where $MTC_GPT_FAST names a
    gpt-fast checkout whose quantize.py imports (it needs its tokenizer's
    packages)."""
    root = os.environ.get("MTC_GPT_FAST")
    if not root:
        pytest.skip("$MTC_GPT_FAST (a gpt-fast checkout) is not set")
    monkeypatch.syspath_prepend(root)
    for name in ("quantize", "model", "tokenizer"):  # gpt-fast's, afresh
        monkeypatch.delitem(sys.modules, name, raising=False)
    try:
        import quantize
    except ImportError as e:
        pytest.skip(f"gpt-fast's quantize.py does not import here: {e}")
    lin = torch.nn.Sequential(torch.nn.Linear(1000, 256, bias=False))
    lin = lin.to(device="cuda", dtype=BF16)
    handler = quantize.WeightOnlyInt4QuantHandler(lin, groupsize=32)
    state = handler.create_quantized_state_dict()
    model = handler.convert_for_runtime()
    model.load_state_dict(state)
    model = model.to("cuda")
    x = torch.randn(4, 1000, device="cuda", dtype=BF16)
    want = model(x)
    mt.swap(model, tune=False, progress=False)
    assert isinstance(model[0], mt.Int4Linear)
    got = model(x)
    err = ((got.float() - want.float()).abs().max() /
           want.float().abs().max()).item()
    assert err < 2e-2
