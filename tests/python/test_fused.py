"""mtc.torch.fused_ffn and fuse_blocks without a GPU: the graph compiles,
the eager path is gpt-fast's block, fuse_blocks takes gpt-fast-like blocks
and says why it leaves others, and bad arguments raise naming the argument.
The GPU half is bench/e2e/ffn_block.py and the matrix's fused_ cases."""
import subprocess

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed (Debian: python3-torch)")
import torch.nn.functional as F  # noqa: E402
import mtc  # noqa: E402
import mtc.torch as mt  # noqa: E402
from mtc import _fuse_blocks  # noqa: E402

D, H = 32, 48


class Int8Linear(torch.nn.Module):
    def __init__(self, n, k):
        super().__init__()
        self.register_buffer("weight", torch.randint(-128, 127, (n, k),
                                                     dtype=torch.int8))
        self.register_buffer("scales",
                             (torch.rand(n) * 0.02 + 0.001).bfloat16())

    def forward(self, x):
        return F.linear(x, self.weight.to(x.dtype)) * self.scales


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.rand(dim).bfloat16() + 0.5)

    def forward(self, x):
        xf = x.float()
        out = (xf * torch.rsqrt(torch.mean(xf * xf, dim=-1, keepdim=True) +
                                self.eps)).type_as(x)
        return out * self.weight


G = 16  # int4 group size


def int4_linear(n, k):
    w = torch.randn(n, k).bfloat16()
    return mt.Int4Linear(*mt.quantize_int4(w, G), G)


class FeedForward(torch.nn.Module):
    def __init__(self, int8=True, int4=False):
        super().__init__()
        make = linear_maker(int8, int4)
        self.w1, self.w3, self.w2 = make(H, D), make(H, D), make(D, H)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Attention(torch.nn.Module):
    """gpt-fast's attention's linears around something simple."""

    def __init__(self, make):
        super().__init__()
        self.wqkv, self.wo = make(3 * D, D), make(D, D)

    def forward(self, x, freqs_cis, mask, input_pos):
        q, k, v = self.wqkv(x).split([D, D, D], dim=-1)
        return self.wo(q * torch.sigmoid(k) + v)


def linear_maker(int8, int4):
    return int4_linear if int4 else Int8Linear if int8 else (
        lambda n, k: torch.nn.Linear(k, n, bias=False).bfloat16())


class TransformerBlock(torch.nn.Module):
    """gpt-fast's block, its attention replaced by something simple."""

    def __init__(self, int8=True, int4=False, attn=None):
        super().__init__()
        self.attention = Attention(linear_maker(*(attn or (int8, int4))))
        self.feed_forward = FeedForward(int8, int4)
        self.ffn_norm = RMSNorm(D)
        self.attention_norm = RMSNorm(D)

    def forward(self, x, input_pos, freqs_cis, mask):
        h = x + self.attention(self.attention_norm(x), freqs_cis, mask,
                               input_pos)
        return h + self.feed_forward(self.ffn_norm(h))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            [TransformerBlock(), TransformerBlock(int8=False),
             TransformerBlock(attn=(False, False)),
             TransformerBlock(int4=True)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x, None, None, None)
        return x


def test_fuse_blocks_keeps_the_function():
    torch.manual_seed(0)
    model = Model()
    x = torch.randn(2, 1, D).bfloat16()
    ref = model(x)
    fused, left = mt.fuse_blocks(model)
    assert fused == 3
    assert left == [("layers.1", "its feed-forward linears are not int8 per channel or mtc's int4 (Int4Linear) without bias (mtc.torch.swap or quantize_ makes them so)"),
                    ("layers.2.attention", "its attention's wqkv and wo are not int8 per channel or mtc's int4 (Int4Linear) without bias (mtc.torch.swap or quantize_ makes them so)")]
    assert type(model.layers[0]).__name__ == "TransformerBlock"
    for i in (0, 2, 3):
        assert isinstance(model.layers[i], _fuse_blocks._FusedBlock)
    # The attention linears of blocks 0 (int8) and 3 (int4) fuse; block 2's
    # (bf16) run as before.
    for i in (0, 3):
        attn = model.layers[i].attention
        assert isinstance(attn.wqkv, _fuse_blocks._NormedLinear)
        assert isinstance(attn.wo, _fuse_blocks._DeferredLinear)
    assert not isinstance(model.layers[2].attention.wqkv,
                          _fuse_blocks._NormedLinear)
    assert set(model.state_dict()) == set(Model().state_dict())
    # On the CPU fused_ffn and fused_ffn_int4 run their eager formulas: the
    # same function.
    assert torch.equal(model(x), ref)
    # Twice is a no-op.
    assert mt.fuse_blocks(model) == (0, [("layers.1", "its feed-forward linears are not int8 per channel or mtc's int4 (Int4Linear) without bias (mtc.torch.swap or quantize_ makes them so)")])


def test_fuse_blocks_runs_larger_calls_unfused(monkeypatch):
    torch.manual_seed(0)
    model = Model()
    x = torch.randn(3, 1, D).bfloat16()
    ref = model(x)
    assert mt.fuse_blocks(model, max_rows=2)[0] == 3
    calls = []
    real_ffn, real_lres = _fuse_blocks._ffn, _fuse_blocks.linear_residual
    monkeypatch.setattr(_fuse_blocks, "_ffn", lambda *a: calls.append(
        "ffn") or real_ffn(*a))
    monkeypatch.setattr(_fuse_blocks, "linear_residual", lambda *a: calls.append(
        "lres") or real_lres(*a))
    # 3 rows > 2: every block as gpt-fast computes it, on its own linears
    # (wqkv still applies the attention norm; wo's kernel is called).
    assert torch.equal(model(x), ref) and calls == []
    # 2 rows: the fused graphs (3 feed-forward halves, 2 attention wo's).
    model(x[:2])
    assert sorted(calls) == ["ffn"] * 3 + ["lres"] * 2
    # A second call changes the limit of the fused blocks.
    calls.clear()
    assert mt.fuse_blocks(model, max_rows=3)[0] == 0
    model(x)
    assert len(calls) == 5


@pytest.mark.parametrize("bad,error,message", [
    (0, ValueError, "max_rows: expected a positive int, got 0"),
    (-1, ValueError, "max_rows: expected a positive int, got -1"),
    (2.0, TypeError, "max_rows: expected an int, got float"),
    (True, TypeError, "max_rows: expected an int, got bool"),
    ("8", TypeError, "max_rows: expected an int, got str"),
])
def test_fuse_blocks_max_rows_is_checked(bad, error, message):
    with pytest.raises(error, match=message):
        mt.fuse_blocks(Model(), max_rows=bad)


def test_fuse_blocks_leaves_mixed_linears():
    block = TransformerBlock()
    block.feed_forward.w2 = int4_linear(D, H)
    assert mt.fuse_blocks(block) == (0, [("", "its feed-forward linears mix "
                                              "int8 and int4, or int4 group "
                                              "sizes")])


def test_fuse_blocks_needs_a_module():
    with pytest.raises(TypeError, match="model: expected a torch.nn.Module, "
                                        "got list"):
        mt.fuse_blocks([])


def args():
    torch.manual_seed(1)
    ff = FeedForward()
    return dict(h=torch.randn(3, D).bfloat16(),
                norm_weight=torch.ones(D).bfloat16(), eps=1e-5,
                w1=ff.w1.weight, s1=ff.w1.scales, w3=ff.w3.weight,
                s3=ff.w3.scales, w2=ff.w2.weight, s2=ff.w2.scales)


@pytest.mark.parametrize("change, error, message", [
    (dict(h=[1.0]), TypeError, "h: expected a torch.Tensor, got list"),
    (dict(h=torch.zeros(3, D)), TypeError,
     "h: expected dtype torch.bfloat16 or torch.float16, got torch.float32"),
    (dict(eps=0.0), ValueError, "eps: expected a positive float, got 0.0"),
    (dict(w1=torch.zeros(H, D + 1, dtype=torch.int8)), ValueError,
     f"w1: expected [H, {D}], got [{H}, {D + 1}]"),
    (dict(w2=torch.zeros(H, D, dtype=torch.int8)), ValueError,
     f"w2: expected shape [{D}, {H}], got [{H}, {D}]"),
    (dict(w3=torch.zeros(H, D)), TypeError,
     "w3: expected dtype torch.int8, got torch.float32"),
    (dict(s2=torch.ones(D)), TypeError,
     "s2: expected dtype torch.bfloat16 (h's), got torch.float32"),
    (dict(norm_weight=torch.ones(D + 1).bfloat16()), ValueError,
     f"norm_weight: expected shape [{D}], got [{D + 1}]"),
])
def test_fused_ffn_errors(change, error, message):
    a = args()
    a.update(change)
    with pytest.raises(error) as e:
        mt.fused_ffn(**a)
    assert str(e.value) == message


def test_fused_ffn_eager_matches_gpt_fast():
    a = args()
    block = TransformerBlock()
    ff = block.feed_forward
    ff.w1.weight, ff.w3.weight, ff.w2.weight = a["w1"], a["w3"], a["w2"]
    ff.w1.scales, ff.w3.scales, ff.w2.scales = a["s1"], a["s3"], a["s2"]
    block.ffn_norm.weight.data = a["norm_weight"]
    h = a["h"]
    assert torch.equal(mt.fused_ffn(**a), h + ff(block.ffn_norm(h)))


@pytest.mark.parametrize("residual", [True, False])
def test_ffn_graph_compiles(tmp_path, residual):
    path = tmp_path / "ffn.graph"
    path.write_text(mt.ffn_graph("ffn", D, H, "bf16", 1e-5, residual))
    out = subprocess.run([mtc.find_binary(), "compile", str(path), "--bind",
                          "M=1", "-o", str(tmp_path / "out")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    # At M = 1: gate and up as one kernel over both weights (siblings) with
    # the norm's scaling as its prologue and the row statistic derived in
    # each block, down with the residual.
    assert out.stdout.startswith("ffn: 2 kernels")


def args_int4():
    torch.manual_seed(2)
    ff = FeedForward(int4=True)
    a = dict(h=torch.randn(3, D).bfloat16(),
             norm_weight=torch.ones(D).bfloat16(), eps=1e-5, groupsize=G)
    for name, lin in (("1", ff.w1), ("3", ff.w3), ("2", ff.w2)):
        a.update({"w" + name: lin.weight, "s" + name: lin.scales,
                  "z" + name: lin.zeros})
    return a, ff


@pytest.mark.parametrize("change, error, message", [
    (dict(z1=[1.0]), TypeError, "z1: expected a torch.Tensor, got list"),
    (dict(w1=torch.zeros(H, D, dtype=torch.uint8)), ValueError,
     f"s1: expected shape [{H}, {2 * D // G}] ([N, K/groupsize]), got "
     f"[{H}, {D // G}]"),
    (dict(w3=torch.zeros(H, D // 2, dtype=torch.int32)), TypeError,
     "w3: expected dtype torch.uint8 or torch.int8 (two int4 values a byte), "
     "got torch.int32"),
    (dict(s2=torch.ones(D, H // G)), TypeError,
     "s2: expected dtype torch.bfloat16 (h's), got torch.float32"),
    (dict(groupsize=5), ValueError,
     f"groupsize: groupsize must divide K ({D}: weight packs K/2 = {D // 2} "
     f"bytes a row), got 5"),
    (dict(w2=torch.zeros(D, D // 2, dtype=torch.uint8),
          s2=torch.ones(D, D // G).bfloat16(),
          z2=torch.ones(D, D // G).bfloat16()), ValueError,
     f"w2: expected [{D}, {H // 2}] ([D, H / 2]), got [{D}, {D // 2}]"),
])
def test_fused_ffn_int4_errors(change, error, message):
    a, _ = args_int4()
    a.update(change)
    with pytest.raises(error) as e:
        mt.fused_ffn_int4(**a)
    assert str(e.value) == message


def test_fused_ffn_int4_eager_is_the_int4_block():
    a, ff = args_int4()
    h = a["h"]
    n = RMSNorm(D)
    n.weight.data = a["norm_weight"]
    assert torch.equal(mt.fused_ffn_int4(**a), h + ff(n(h)))
    assert torch.equal(mt.fused_ffn_int4(**a, residual=False), ff(n(h)))


def test_ffn_int4_graph_compiles(tmp_path):
    path = tmp_path / "ffn.graph"
    path.write_text(mt.ffn_graph("ffn", 256, 384, "bf16", 1e-5,
                                 groupsize=128))
    out = subprocess.run([mtc.find_binary(), "compile", str(path), "--bind",
                          "M=1", "-o", str(tmp_path / "out")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    # At M = 1: the norm (its statistic applied to the rows in one kernel),
    # gate and up as one kernel over both int4 weights (siblings), down with
    # the residual.
    assert out.stdout.startswith("ffn: 3 kernels")
