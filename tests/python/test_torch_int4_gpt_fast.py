"""mtc.torch and gpt-fast's WeightOnlyInt4Linear without a GPU: recognising
the module, reading tinygemm's layout back and repacking it (with a stand-in
for aten._weight_int4pack_mm, which needs CUDA), and swap()'s int4 path with
its CUDA parts stubbed. The rest of the int4 layer is test_torch_int4.py;
the GPU half is test_torch_int4_gpu.py."""
import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed (Debian: python3-torch)")
import mtc.torch as mt  # noqa: E402

BF16 = torch.bfloat16


def reference(x, s, scales, zeros, g, bias=None):
    """x @ (s * scale + zero)^T (+ bias) in float64, as test_torch_int4.py's."""
    w = s.double() * scales.double().repeat_interleave(g, dim=1) + \
        zeros.double().repeat_interleave(g, dim=1)
    y = x.double() @ w.t()
    return y + bias.double() if bias is not None else y


#===----------------------------------------------------------------------===#
# gpt-fast's WeightOnlyInt4Linear
#===----------------------------------------------------------------------===#

class FakeInt4Linear(torch.nn.Module):
    """gpt-fast WeightOnlyInt4Linear's attributes and buffers (its forward
    needs CUDA: not here). ``q`` keeps the unsigned values that the opaque
    ``weight`` stands for, for fake_mm."""

    def __init__(self, n, k, g=32, inner_k_tiles=8, padding=False,
                 origin=None, q=None, scales=None, zeros=None):
        super().__init__()
        self.padding = padding
        if padding:
            self.origin_in_features = origin
        self.in_features, self.out_features = k, n
        self.groupsize, self.inner_k_tiles = g, inner_k_tiles
        self.register_buffer("weight", torch.zeros(
            n // 8, k // (inner_k_tiles * 16), 32, inner_k_tiles // 2,
            dtype=torch.int32))
        scales = torch.ones(n, k // g, dtype=BF16) if scales is None \
            else scales
        zeros = torch.zeros(n, k // g, dtype=BF16) if zeros is None else zeros
        # gpt-fast's pack_scales_and_zeros: [K/G, N, 2].
        self.register_buffer("scales_and_zeros", torch.cat(
            [scales.reshape(n, k // g, 1), zeros.reshape(n, k // g, 1)], 2)
            .transpose(0, 1).contiguous())
        self.q = q


def fake_mm(q, calls=None):
    """aten._weight_int4pack_mm for FakeInt4Linear: x @ W^T with W[n, k] =
    (q - 8) * scale + zero."""
    def mm(x, weight, g, sz):
        assert x.dtype == BF16 and sz.dtype == BF16 and x.is_contiguous()
        if calls is not None:
            calls.append((tuple(x.shape), sz))
        scale = sz[..., 0].t().float().repeat_interleave(g, dim=1)
        zero = sz[..., 1].t().float().repeat_interleave(g, dim=1)
        w = (q.float() - 8) * scale + zero
        return (x.float() @ w.t()).to(BF16)
    return mm


def test_recognises_gpt_fast_int4_modules():
    m = FakeInt4Linear(16, 256)
    assert mt.is_int4_module(m)
    assert mt.int4_module_shape(m) == (16, 256, 256)
    assert not mt.is_woq_module(m), "not the int8 layer"
    padded = FakeInt4Linear(16, 1024, padding=True, origin=1000)
    assert mt.int4_module_shape(padded) == (16, 1024, 1000)
    assert mt.int4_module_shape(FakeInt4Linear(32, 512, g=128,
                                               inner_k_tiles=2)) == \
        (32, 512, 512)


@pytest.mark.parametrize("spoil, why", [
    (lambda m: setattr(m, "weight", m.weight.to(torch.int64)), "int64"),
    (lambda m: setattr(m, "weight", m.weight.reshape(2, -1)), "2-D weight"),
    (lambda m: setattr(m, "weight", m.weight[:1]), "too few nibbles"),
    (lambda m: setattr(m, "scales_and_zeros", m.scales_and_zeros.float()),
     "f32 scales"),
    (lambda m: setattr(m, "scales_and_zeros", m.scales_and_zeros[..., :1]),
     "no zeros"),
    (lambda m: setattr(m, "groupsize", 32.0), "float groupsize"),
    (lambda m: delattr(m, "groupsize"), "no groupsize"),
    (lambda m: setattr(m, "in_features", 128), "in_features disagrees"),
    (lambda m: setattr(m, "bias", torch.ones(3, dtype=BF16)), "bias [3]"),
    (lambda m: (setattr(m, "padding", True),
                setattr(m, "origin_in_features", 300)), "origin > K"),
    (lambda m: m.add_module("child", torch.nn.ReLU()), "has children"),
])
def test_rejects_other_modules(spoil, why):
    m = FakeInt4Linear(16, 256)
    spoil(m)
    assert not mt.is_int4_module(m), why


def test_tinygemm_nibbles_reads_the_identity():
    n, k, g = 16, 64, 32
    q = torch.randint(0, 16, (n, k), generator=torch.Generator()
                      .manual_seed(2), dtype=torch.uint8)
    calls = []
    m = FakeInt4Linear(n, k, g, inner_k_tiles=2)
    got = mt.tinygemm_nibbles(m.weight, g, n, k, chunk=24,
                              mm=fake_mm(q, calls))
    assert got.dtype == torch.uint8 and torch.equal(got, q)
    assert [c[0] for c in calls] == [(24, k), (24, k), (16, k)]
    sz = calls[0][1]
    assert sz.shape == (k // g, n, 2)
    assert (sz[..., 0] == 1).all() and (sz[..., 1] == 8).all()

    def wrong(x, weight, g, sz):  # a layer of another formula
        return fake_mm(q)(x, weight, g, sz) + 0.5
    with pytest.raises(mt.MtcError, match="did not return the weight's int4 "
                                          "values"):
        mt.tinygemm_nibbles(m.weight, g, n, k, mm=wrong)


def test_repack_gpt_fast_int4():
    n, k, g = 16, 128, 32
    gen = torch.Generator().manual_seed(3)
    q = torch.randint(0, 16, (n, k), generator=gen, dtype=torch.uint8)
    scales = (torch.rand(n, k // g, generator=gen) * 0.02 + 0.001).to(BF16)
    zeros = (torch.randn(n, k // g, generator=gen) * 0.01).to(BF16)
    m = FakeInt4Linear(n, k, g, inner_k_tiles=4, q=q, scales=scales,
                       zeros=zeros)
    weight, s2, z2 = mt.repack_gpt_fast_int4(m, mm=fake_mm(q))
    assert weight.dtype == torch.uint8 and weight.shape == (n, k // 2)
    assert torch.equal(mt.unpack_int4(weight).to(torch.int16) + 8,
                       q.to(torch.int16))
    assert torch.equal(s2, scales) and torch.equal(z2, zeros)
    assert s2.is_contiguous() and z2.is_contiguous()
    # The repacked layer computes gpt-fast's (q - 8) * scale + zero.
    x = torch.randn(5, k).to(BF16)
    out = mt.int4_linear_eager(x, weight, s2, z2, g)
    ref = reference(x, q.to(torch.int16) - 8, scales, zeros, g)
    err = ((out.double() - ref).abs().max() / ref.abs().max()).item()
    assert err < 1e-2
    with pytest.raises(ValueError, match="m: Linear does not look like "
                                         "gpt-fast's WeightOnlyInt4Linear"):
        mt.repack_gpt_fast_int4(torch.nn.Linear(4, 4))


#===----------------------------------------------------------------------===#
# swap()
#===----------------------------------------------------------------------===#

def test_swap_errors_for_int4():
    model = torch.nn.Sequential(torch.nn.ReLU(), FakeInt4Linear(16, 256))
    with pytest.raises(ValueError, match="model: module '1' is on cpu; move "
                                         "the model to a CUDA device"):
        mt.swap(model, progress=False)
    assert isinstance(model[1], FakeInt4Linear), "nothing swapped on an error"


class FakeInt4WithForward(FakeInt4Linear):
    """FakeInt4Linear with gpt-fast's forward done on the CPU: pad x from
    origin_in_features, then x @ ((q - 8) * scale + zero)^T."""

    def forward(self, x):
        x = x.to(BF16)
        if self.padding:
            x = torch.nn.functional.pad(
                x, (0, self.in_features - self.origin_in_features))
        return fake_mm(self.q)(x.contiguous(), self.weight, self.groupsize,
                               self.scales_and_zeros)


class Doubled(FakeInt4WithForward):
    def forward(self, x):
        return super().forward(x) * 2


def test_swap_int4_with_cuda_stubbed(monkeypatch):
    """swap()'s int4 path with its CUDA parts stubbed: the device check,
    compiling, _weight_int4pack_mm (fake_mm) and the kernels (the eager
    dequantise). Each distinct shape is loaded once, each class verified
    once, a class computing another function is left alone, and padded
    modules keep their origin_in_features."""
    def module(cls, n, k, g, seed, origin=None):
        gen = torch.Generator().manual_seed(seed)
        q = torch.randint(0, 16, (n, k), generator=gen, dtype=torch.uint8)
        if origin is not None:
            q[:, origin:] = 8  # gpt-fast pads the weight with zeros
        sc = (torch.rand(n, k // g, generator=gen) * 0.02 + 0.001).to(BF16)
        z = (torch.randn(n, k // g, generator=gen) * 0.01).to(BF16)
        return cls(n, k, g, inner_k_tiles=2, padding=origin is not None,
                   origin=origin, q=q, scales=sc, zeros=z)

    a = module(FakeInt4WithForward, 16, 128, 32, 1)
    b = module(FakeInt4WithForward, 16, 128, 32, 2)
    c = module(FakeInt4WithForward, 32, 256, 64, 3, origin=200)
    d = module(Doubled, 16, 128, 32, 4)
    model = torch.nn.Sequential(a, torch.nn.Sequential(b, c), d)
    x = torch.randn(3, 128).to(BF16)
    y = torch.randn(3, 200).to(BF16)
    want_a, want_c = a(x), c(y)

    def layer_key(child, kind, where):  # the real one wants CUDA
        n, k, _ = mt.int4_module_shape(child)
        return mt.LayerKey(0, n, k, "bf16", False, kind, child.groupsize)
    monkeypatch.setattr(mt, "_layer_key", layer_key)
    loaded = []
    monkeypatch.setattr(mt.kernels, "load", lambda keys: loaded.append(
        sorted(keys)))
    repacked = []
    real_repack = mt.repack_gpt_fast_int4

    def repack(m):
        repacked.append(m)
        return real_repack(m, mm=fake_mm(m.q))
    monkeypatch.setattr(mt, "repack_gpt_fast_int4", repack)
    monkeypatch.setattr(mt, "woq_int4_linear", lambda x, w, s, z, g, bias: (
        mt.int4_linear_eager(x, w, s, z, g, bias)))
    with pytest.warns(UserWarning, match="not swapping Doubled modules"):
        mt.swap(model, progress=False)
    assert [type(m).__name__ for m in (model[0], model[1][0], model[1][1],
                                       model[2])] == \
        ["Int4Linear", "Int4Linear", "Int4Linear", "Doubled"]
    assert [id(m) for m in repacked] == [id(m) for m in (a, d, b, c)], \
        "the first of each class for verify (kept), then the others"
    assert [[(k.n, k.k, k.kind, k.group) for k in keys] for keys in loaded] \
        == [[(16, 128, "int4", 32), (32, 256, "int4", 64)]]
    assert model[1][1].origin_in_features == 200
    for got, want in ((model[0](x), want_a), (model[1][1](y), want_c)):
        err = ((got.float() - want.float()).abs().max() /
               want.float().abs().max()).item()
        assert err < 2e-2
