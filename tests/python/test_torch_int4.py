"""mtc.torch's int4 layer without a GPU: woq_int4_linear's argument errors,
mtc's int4 packing, the eager dequantise against float64, Int4Linear, the
layer keys and the custom op's registration where PyTorch has
torch.library.custom_op. Recognising, repacking and swapping gpt-fast's
WeightOnlyInt4Linear is test_torch_int4_gpt_fast.py; the GPU half is
test_torch_int4_gpu.py."""
import re

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed (Debian: python3-torch)")
import mtc  # noqa: E402
import mtc.torch as mt  # noqa: E402

needs_custom_op = pytest.mark.skipif(
    not mt.HAS_CUSTOM_OP,
    reason=f"PyTorch {torch.__version__} has no torch.library.custom_op "
           "(2.4+): woq_int4_linear runs as a plain function there")

BF16 = torch.bfloat16


def args(n=16, k=64, g=32, m=3, dtype=BF16):
    return dict(x=torch.randn(m, k, dtype=dtype),
                weight=torch.zeros(n, k // 2, dtype=torch.uint8),
                scales=torch.ones(n, k // g, dtype=dtype),
                zeros=torch.zeros(n, k // g, dtype=dtype), groupsize=g)


@pytest.mark.parametrize("change, error, message", [
    (dict(x=[1.0]), TypeError, "x: expected a torch.Tensor, got list"),
    (dict(zeros=None), TypeError, "zeros: expected a torch.Tensor, got "
                                  "NoneType"),
    (dict(x=torch.zeros(3, 64)), TypeError,
     "x: expected dtype torch.bfloat16 or torch.float16, got torch.float32"),
    (dict(weight=torch.zeros(16, 32, dtype=torch.int32)), TypeError,
     "weight: expected dtype torch.uint8 or torch.int8 (two int4 values a "
     "byte), got torch.int32"),
    (dict(scales=torch.ones(16, 2, dtype=torch.float16)), TypeError,
     "scales: expected dtype torch.bfloat16 (the dtype of x), got "
     "torch.float16"),
    (dict(zeros=torch.zeros(16, 2)), TypeError,
     "zeros: expected dtype torch.bfloat16 (the dtype of x), got "
     "torch.float32"),
    (dict(bias=torch.ones(16)), TypeError,
     "bias: expected dtype torch.bfloat16 (the dtype of x), got "
     "torch.float32"),
    (dict(groupsize=32.0), TypeError, "groupsize: expected an int, got float"),
    (dict(groupsize=True), TypeError, "groupsize: expected an int, got bool"),
    (dict(groupsize=0), ValueError, "groupsize: expected a positive int, "
                                    "got 0"),
    (dict(groupsize=48), ValueError,
     "groupsize: groupsize must divide K (64: weight packs K/2 = 32 bytes a "
     "row), got 48"),
    (dict(weight=torch.zeros(16, 32, 1, dtype=torch.uint8)), ValueError,
     "weight: expected a non-empty shape [N, K/2] (two int4 values a byte), "
     "got [16, 32, 1]"),
    (dict(weight=torch.zeros(0, 32, dtype=torch.uint8)), ValueError,
     "weight: expected a non-empty shape [N, K/2]"),
    (dict(x=torch.zeros(3, 63, dtype=BF16)), ValueError,
     "x: expected shape [..., 64] (K: weight packs K/2 bytes a row), got "
     "[3, 63]"),
    (dict(x=torch.zeros(3, 32, dtype=BF16)), ValueError,
     "x: expected shape [..., 64]"),
    (dict(scales=torch.ones(16, 4, dtype=BF16)), ValueError,
     "scales: expected shape [16, 2] ([N, K/groupsize]), got [16, 4]"),
    (dict(zeros=torch.ones(2, 16, dtype=BF16)), ValueError,
     "zeros: expected shape [16, 2] ([N, K/groupsize]), got [2, 16]"),
    (dict(bias=torch.ones(15, dtype=BF16)), ValueError,
     "bias: expected shape [16] (N of weight), got [15]"),
    (dict(), ValueError, "x: mtc runs on CUDA tensors, got a tensor on cpu"),
])
def test_argument_errors(change, error, message):
    kw = dict(args(), bias=None)
    kw.update(change)
    with pytest.raises(error, match=re.escape(message)):
        mt.woq_int4_linear(**kw)
    with pytest.raises(error, match=re.escape(message)):
        mt.check_int4_args(**kw)


def test_int8_weight_is_accepted_as_packed():
    kw = args()
    kw["weight"] = kw["weight"].view(torch.int8)
    with pytest.raises(ValueError, match="x: mtc runs on CUDA tensors"):
        mt.woq_int4_linear(**kw)


def test_layout_errors():
    kw = args()
    kw["weight"] = torch.zeros(32, 16, dtype=torch.uint8).t()
    with pytest.raises(ValueError, match=re.escape(
            "weight: expected a contiguous tensor, got strides (1, 16); mtc "
            "never copies weights")):
        mt.woq_int4_linear(**kw)
    kw = args()
    kw["zeros"] = torch.zeros(2, 16, dtype=BF16).t()
    with pytest.raises(ValueError, match="zeros: expected a contiguous"):
        mt.woq_int4_linear(**kw)


def test_tensor_checks():
    kw = args()
    del kw["x"]
    assert mt.check_int4_tensors(**kw) == (16, 64)
    with pytest.raises(TypeError, match="scales: expected dtype "
                                        "torch.bfloat16 or torch.float16"):
        mt.check_int4_tensors(**dict(kw, scales=kw["scales"].float()))
    with pytest.raises(TypeError, match=r"zeros: expected dtype "
                                        r"torch.bfloat16 \(the dtype of "
                                        r"scales\)"):
        mt.check_int4_tensors(**dict(kw, zeros=kw["zeros"].half()))
    with pytest.raises(ValueError, match="groupsize: groupsize must divide "
                                         "K"):
        mt.check_int4_tensors(**dict(kw, groupsize=24))


#===----------------------------------------------------------------------===#
# Packing and the eager dequantise
#===----------------------------------------------------------------------===#

def test_pack_layout():
    # Element 2j in the low nibble of byte j, two's complement nibbles.
    q = torch.tensor([[1, -1, -8, 7, 0, 3]], dtype=torch.int8)
    packed = mt.pack_int4(q)
    assert packed.dtype == torch.uint8 and packed.shape == (1, 3)
    assert packed.tolist() == [[0xF1, 0x78, 0x30]]
    assert torch.equal(mt.unpack_int4(packed), q)
    assert torch.equal(mt.unpack_int4(packed.view(torch.int8)), q)


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32,
                                   torch.int64])
def test_pack_round_trip(dtype):
    g = torch.Generator().manual_seed(0)
    q = torch.randint(-8, 8, (3, 5, 64), generator=g).to(dtype)
    packed = mt.pack_int4(q)
    assert packed.shape == (3, 5, 32) and packed.is_contiguous()
    out = mt.unpack_int4(packed)
    assert out.dtype == torch.int8 and torch.equal(out.to(dtype), q)
    # Every byte value comes back.
    every = torch.arange(256, dtype=torch.int16).to(torch.uint8).view(1, 256)
    assert torch.equal(mt.pack_int4(mt.unpack_int4(every)), every)


def test_pack_of_unsigned_nibbles():
    """gpt-fast's unsigned q in [0, 15]: byte j of pack_int4(q - 8) is
    (q[2j] ^ 8) | ((q[2j+1] ^ 8) << 4)."""
    q = torch.randint(0, 16, (4, 32), generator=torch.Generator()
                      .manual_seed(1))
    want = ((q[:, 0::2] ^ 8) | ((q[:, 1::2] ^ 8) << 4)).to(torch.uint8)
    assert torch.equal(mt.pack_int4(q - 8), want)


@pytest.mark.parametrize("q, error, message", [
    (torch.zeros(2, 3, dtype=torch.int8), ValueError,
     "q: expected an even last dimension (two int4 values a byte), got "
     "shape [2, 3]"),
    (torch.tensor([[0, 8]]), ValueError,
     "q: expected values in [-8, 7], got values in [0, 8]"),
    (torch.tensor([[-9, 0]]), ValueError,
     "q: expected values in [-8, 7], got values in [-9, 0]"),
    (torch.zeros(2, 2), TypeError,
     "q: expected an integer tensor, got torch.float32"),
])
def test_pack_errors(q, error, message):
    with pytest.raises(error, match=re.escape(message)):
        mt.pack_int4(q)


def random_layer(n, k, g, dtype=BF16, seed=0):
    gen = torch.Generator().manual_seed(seed)
    s = torch.randint(-8, 8, (n, k), generator=gen, dtype=torch.int8)
    scales = (torch.rand(n, k // g, generator=gen) * 0.02 + 0.001).to(dtype)
    zeros = (torch.randn(n, k // g, generator=gen) * 0.01).to(dtype)
    return s, scales, zeros


def reference(x, s, scales, zeros, g, bias=None):
    w = s.double() * scales.double().repeat_interleave(g, dim=1) + \
        zeros.double().repeat_interleave(g, dim=1)
    y = x.double() @ w.t()
    return y + bias.double() if bias is not None else y


def test_dequantize_rounds_like_the_graph():
    """Each node rounds to the dtype: mul, then add."""
    n, k, g = 24, 128, 32
    s, scales, zeros = random_layer(n, k, g)
    w = mt.dequantize_int4(mt.pack_int4(s), scales, zeros, g)
    assert w.dtype == BF16 and w.shape == (n, k)
    sr = scales.float().repeat_interleave(g, dim=1)
    zr = zeros.float().repeat_interleave(g, dim=1)
    ws = (s.float() * sr).to(BF16)
    assert torch.equal(w, (ws.float() + zr).to(BF16))


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("g", [32, 128])
def test_eager_fallback_against_float64(g, bias):
    n, k = 40, 256
    s, scales, zeros = random_layer(n, k, g, seed=g)
    b = torch.randn(n).to(BF16) if bias else None
    x = torch.randn(7, k).to(BF16)
    out = mt.int4_linear_eager(x, mt.pack_int4(s), scales, zeros, g, b)
    assert out.dtype == BF16 and out.shape == (7, n)
    ref = reference(x, s, scales, zeros, g, b)
    err = ((out.double() - ref).abs().max() / ref.abs().max()).item()
    assert err < 1e-2, f"max rel err {err:.2e}"


def test_rows_beyond_the_largest_bucket_run_eagerly(monkeypatch):
    """woq_int4_linear's dispatch past the check (which wants CUDA): with 2
    as the largest bucket, 6 rows in a 3-D x run the dequantise."""
    monkeypatch.setattr(mt, "kernels", mt.Kernels(buckets=(1, 2),
                                                   progress=False))
    n, k, g = 16, 64, 32
    s, scales, zeros = random_layer(n, k, g)
    x = torch.randn(2, 3, k).to(BF16)
    out = mt._woq_int4_linear(x, mt.pack_int4(s), scales, zeros, g, None,
                              checked=(n, k))
    assert out.shape == (2, 3, n)
    assert torch.equal(out.reshape(6, n), mt.int4_linear_eager(
        x.reshape(6, k), mt.pack_int4(s), scales, zeros, g))
    empty = mt._woq_int4_linear(x[:, :0], mt.pack_int4(s), scales, zeros, g,
                                None, checked=(n, k))
    assert empty.shape == (2, 0, n)


#===----------------------------------------------------------------------===#
# Int4Linear, the layer keys and the custom op
#===----------------------------------------------------------------------===#

def test_int4_module_holds_its_tensors():
    kw = args(n=16, k=64, g=32)
    del kw["x"]
    m = mt.Int4Linear(kw["weight"], kw["scales"], kw["zeros"], 32)
    assert m.weight is kw["weight"] and m.zeros is kw["zeros"]
    assert set(m.state_dict()) == {"weight", "scales", "zeros"}
    assert m.in_features == m.origin_in_features == 64
    assert "in_features=64, out_features=16, groupsize=32, bias=False" in \
        repr(m)
    assert not mt.is_int4_module(m) and not mt.is_woq_module(m)
    # Off CUDA the module computes its formula with PyTorch (x cast to bf16).
    x = torch.randn(2, 64)
    assert torch.equal(m(x), mt.int4_linear_eager(
        x.to(BF16), kw["weight"], kw["scales"], kw["zeros"], 32))
    padded = mt.Int4Linear(kw["weight"], kw["scales"], kw["zeros"], 32,
                           origin_in_features=60)
    assert "origin_in_features=60" in repr(padded)
    x = torch.randn(2, 60, dtype=BF16)  # padded to 64 first
    assert torch.equal(padded(x), mt.int4_linear_eager(
        torch.nn.functional.pad(x, (0, 4)), kw["weight"], kw["scales"],
        kw["zeros"], 32))
    with pytest.raises(ValueError, match=re.escape(
            "x: expected shape [..., 60] (origin_in_features), got [2, 64]")):
        padded(torch.randn(2, 64, dtype=BF16))
    with pytest.raises(ValueError, match="origin_in_features: expected an "
                                         "int from 1 to K = 64, got 65"):
        mt.Int4Linear(kw["weight"], kw["scales"], kw["zeros"], 32,
                      origin_in_features=65)
    with pytest.raises(ValueError, match="groupsize: groupsize must divide"):
        mt.Int4Linear(kw["weight"], kw["scales"], kw["zeros"], 48)


def test_layer_keys():
    int8 = mt.LayerKey(0, 16, 32, "bf16", False)
    assert int8 == mt.LayerKey(*(0, 16, 32, "bf16", False))
    assert int8.kind == "int8" and int8.graph_name() == "woq_16x32_bf16"
    assert int8.graph_text() == mtc.linear_graph("woq_16x32_bf16", 16, 32)
    int4 = mt.LayerKey(0, 16, 256, "f16", True, "int4", 64)
    assert int4.graph_name() == "woq4_16x256_g64_f16_bias"
    assert int4.graph_text() == mtc.int4_linear_graph(
        "woq4_16x256_g64_f16_bias", 16, 256, 64, "f16", bias=True)
    assert mt.int4_graph_name(6144, 4096, 128, "bf16", False) == \
        "woq4_6144x4096_g128_bf16"
    assert len({int8, int4, int4._replace(group=128),
                int4._replace(kind="int8", group=0)}) == 4
    with pytest.raises(ValueError, match="kind: expected one of"):
        mt.LayerKey(0, 1, 2, "bf16", False, "int2").graph_name()


def test_kernels_compile_each_kind_once(monkeypatch):
    """One graph per distinct key, int8 and int4 apart; a plain int8 tuple
    finds the artifact of its LayerKey."""
    k = mt.Kernels(progress=False)
    compiled = []

    def load_device(dev, keys):
        compiled.extend(key.graph_name() for key in keys)
        for key in keys:
            k._artifacts[key] = key.graph_name()
    monkeypatch.setattr(k, "_load_device", load_device)
    keys = [(0, 16, 32, "bf16", False),
            mt.LayerKey(0, 16, 32, "bf16", False),
            mt.LayerKey(0, 16, 32, "bf16", False, "int4", 32),
            mt.LayerKey(0, 16, 32, "bf16", False, "int4", 16),
            mt.LayerKey(0, 16, 32, "bf16", False, "int4", 32)]
    k.load(keys)
    assert sorted(compiled) == ["woq4_16x32_g16_bf16", "woq4_16x32_g32_bf16",
                                "woq_16x32_bf16"]
    k.load(keys)
    assert len(compiled) == 3, "loaded once"
    assert k.get((0, 16, 32, "bf16", False)) == "woq_16x32_bf16"
    assert k.get(mt.LayerKey(0, 16, 32, "bf16", False, "int4", 16)) == \
        "woq4_16x32_g16_bf16"


@needs_custom_op
def test_custom_op_is_registered():
    assert hasattr(torch.ops.mtc, "woq_int4_linear")
    kw = args()
    fake = torch._subclasses.fake_tensor.FakeTensorMode()
    with fake:
        out = torch.ops.mtc.woq_int4_linear(
            fake.from_tensor(kw["x"]), fake.from_tensor(kw["weight"]),
            fake.from_tensor(kw["scales"]), fake.from_tensor(kw["zeros"]),
            32, None)
    assert tuple(out.shape) == (3, 16) and out.dtype == BF16
