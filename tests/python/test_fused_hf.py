"""fuse_blocks on Hugging Face Llama-style decoder layers, without a GPU and
without transformers (which Debian does not ship): layers with the attribute
names and formulas of transformers' LlamaDecoderLayer, quantized by
quantize_, keep their function; the norm passes its input on and the mlp
computes the fused graph (its eager formulas on the CPU); layers that are
not RMSNorm + SwiGLU over int8 linears are left alone with the reason. The
real model runs on the H200: bench/e2e/hf_llama.py."""
import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed (Debian: python3-torch)")
import mtc.torch as mt  # noqa: E402
from mtc import _fuse_blocks  # noqa: E402

D, H = 64, 96


class LlamaRMSNorm(torch.nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(d) + 0.5)
        self.variance_epsilon = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.to(torch.float32)
        var = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(var + self.variance_epsilon)
        return self.weight * x.to(dtype)


class LlamaMLP(torch.nn.Module):
    def __init__(self, act=torch.nn.SiLU):
        super().__init__()
        self.gate_proj = torch.nn.Linear(D, H, bias=False)
        self.up_proj = torch.nn.Linear(D, H, bias=False)
        self.down_proj = torch.nn.Linear(H, D, bias=False)
        self.act_fn = act()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) *
                              self.up_proj(x))


class LlamaDecoderLayer(torch.nn.Module):
    def __init__(self, act=torch.nn.SiLU, norm=LlamaRMSNorm):
        super().__init__()
        self.self_attn = torch.nn.Linear(D, D, bias=False)
        self.input_layernorm = LlamaRMSNorm(D)
        self.post_attention_layernorm = norm(D)
        self.mlp = LlamaMLP(act)

    def forward(self, hidden_states, **kwargs):
        residual = hidden_states
        h = self.self_attn(self.input_layernorm(hidden_states))
        h = residual + h
        residual = h
        h = self.mlp(self.post_attention_layernorm(h))
        return residual + h


class Model(torch.nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = torch.nn.ModuleList(layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_fuses_quantized_llama_layers():
    torch.manual_seed(0)
    model = Model([LlamaDecoderLayer(), LlamaDecoderLayer(act=torch.nn.GELU),
                   LlamaDecoderLayer(norm=torch.nn.LayerNorm),
                   LlamaDecoderLayer()]).bfloat16()
    with pytest.raises(ValueError, match="model: no nn.Linear"):
        mt.quantize_(torch.nn.Sequential(), progress=False)
    mt.quantize_(model, "int8", progress=False)
    keys = set(model.state_dict())
    x = torch.randn(2, 3, D).bfloat16()
    ref = model(x)
    fused, left = mt.fuse_blocks(model)
    assert fused == 2
    assert left[0] == ("layers.1", "its mlp's act_fn is GELU, not SiLU")
    assert left[1][0] == "layers.2"
    assert left[1][1].startswith("its norm and mlp do not compute RMSNorm "
                                 "then SwiGLU")
    layer = model.layers[0]
    assert isinstance(layer.mlp, _fuse_blocks._FusedMlp)
    assert isinstance(layer.post_attention_layernorm, _fuse_blocks._PassNorm)
    assert type(layer.mlp).__name__ == "LlamaMLP"
    assert not isinstance(model.layers[2].mlp, _fuse_blocks._FusedMlp)
    # The same function, the same state dict; a second call finds nothing.
    assert torch.equal(model(x), ref)
    assert set(model.state_dict()) == keys
    assert mt.fuse_blocks(model)[0] == 0


def test_larger_calls_run_the_layers_modules(monkeypatch):
    torch.manual_seed(0)
    model = Model([LlamaDecoderLayer()]).bfloat16()
    mt.quantize_(model, "int8", progress=False)
    x = torch.randn(2, 3, D).bfloat16()
    ref = model(x)
    assert mt.fuse_blocks(model, max_rows=5)[0] == 1
    calls = []
    real = _fuse_blocks._ffn
    monkeypatch.setattr(_fuse_blocks, "_ffn", lambda *a: calls.append(1) or
                        real(*a))
    assert torch.equal(model(x), ref) and not calls  # 6 rows > 5
    assert torch.equal(model(x[:1]), ref[:1]) and calls == [1]


def test_unquantized_layers_are_left():
    model = Model([LlamaDecoderLayer()]).bfloat16()
    fused, left = mt.fuse_blocks(model)
    assert fused == 0
    assert left == [("layers.0", "its mlp's gate_proj, up_proj and down_proj "
                                 "are not int8 per channel or mtc's int4 "
                                 "(Int4Linear) without bias (mtc.torch.swap "
                                 "or quantize_ makes them so)")]


def test_layer_whose_tensors_fused_ffn_refuses_is_left():
    model = Model([LlamaDecoderLayer()]).bfloat16()
    model.layers[0].post_attention_layernorm.float()  # an f32 norm weight
    mt.quantize_(model, "int8", progress=False)
    fused, left = mt.fuse_blocks(model)
    assert fused == 0
    assert left == [("layers.0", "fused_ffn refuses its tensors: "
                                 "norm_weight: expected dtype torch.bfloat16 "
                                 "(h's), got torch.float32")]
    assert not isinstance(model.layers[0].mlp, _fuse_blocks._FusedMlp)


def test_residual_flag_is_checked():
    a = dict(h=torch.zeros(1, D).bfloat16(), norm_weight=torch.ones(D)
             .bfloat16(), eps=1e-5)
    w = mt.quantize_int8(torch.randn(H, D).bfloat16())
    w2 = mt.quantize_int8(torch.randn(D, H).bfloat16())
    with pytest.raises(TypeError, match="residual: expected a bool"):
        mt.fused_ffn(**a, w1=w[0], s1=w[1], w3=w[0], s3=w[1], w2=w2[0],
                     s2=w2[1], residual=1)
    out = mt.fused_ffn(**a, w1=w[0], s1=w[1], w3=w[0], s3=w[1], w2=w2[0],
                       s2=w2[1], residual=False)
    ref = mt.fused_ffn_eager(a["h"], a["norm_weight"], 1e-5, w[0], w[1],
                             w[0], w[1], w2[0], w2[1], residual=False)
    assert torch.equal(out, ref)


@pytest.mark.skipif(not torch.cuda.is_available() or not mt.HAS_CUSTOM_OP,
                    reason="needs a CUDA GPU and PyTorch 2.4+ for mtc's "
                           "kernels")
@pytest.mark.parametrize("kind", ["int8", "int4"])
def test_quantized_llama_layers_on_gpu(cache_dir, kind):
    """mtc's kernels (quantize_'s layers, then the fused graph)
    against the same quantized model computed by PyTorch on the CPU."""
    torch.manual_seed(0)
    model = Model([LlamaDecoderLayer(), LlamaDecoderLayer()]).bfloat16()
    mt.kernels = mt.Kernels(tune=False, progress=False)
    mt.quantize_(model, kind, group_size=32, progress=False)
    x = torch.randn(3, 5, D).bfloat16()
    ref = model(x).float()
    model.cuda()
    for m in model.modules():  # the layers' buffers moved: compile for cuda
        if isinstance(m, (mt.WoqLinear, mt.Int4Linear)):
            assert m.weight.is_cuda
    out = model(x.cuda()).float().cpu()
    assert ((out - ref).abs().max() / ref.abs().max()).item() < 2e-2
    fused, left = mt.fuse_blocks(model)
    assert (fused, left) == (2, [])
    out = model(x.cuda()).float().cpu()
    assert ((out - ref).abs().max() / ref.abs().max()).item() < 2e-2
