"""mtc.torch.quantize_ without a GPU: it quantizes a model of plain
nn.Linear layers in place (the modules then compute their formulas with
PyTorch on the CPU), reports what it left alone and why, handles a tied
lm_head, keeps state dicts loadable, and bad arguments raise naming the
argument. The GPU half is bench/e2e/hf_llama.py."""
import copy
import io

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed (Debian: python3-torch)")
import torch.nn.functional as F  # noqa: E402
import mtc.torch as mt  # noqa: E402


class Tiny(torch.nn.Module):
    """A language-model-shaped toy: embedding, two linears, a tied head."""

    def __init__(self, vocab=96, d=64, h=128, tied=True):
        super().__init__()
        self.config = type("Config", (), {"tie_word_embeddings": tied})()
        self.embed = torch.nn.Embedding(vocab, d)
        self.up = torch.nn.Linear(d, h)
        self.down = torch.nn.Linear(h, d, bias=False)
        self.lm_head = torch.nn.Linear(d, vocab, bias=False)
        if tied:
            self.lm_head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids)
        return self.lm_head(x + self.down(F.silu(self.up(x))))


def tiny(**kw):
    torch.manual_seed(0)
    return Tiny(**kw).bfloat16()


def rel(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def test_int8_formula():
    torch.manual_seed(1)
    w = torch.randn(16, 64).bfloat16()
    q, s = mt.quantize_int8(w)
    assert q.dtype == torch.int8 and s.dtype == torch.bfloat16
    assert s.shape == (16,)
    # Per row: the largest |w| maps to 127 or -128 (max / 127.5 rounds to
    # 128, clamped), and every element is within half a step.
    wf = w.float()
    s32 = wf.abs().amax(dim=1, keepdim=True) / 127.5
    assert torch.equal(s, s32[:, 0].bfloat16())
    assert (q.to(torch.int16).abs().amax(dim=1) >= 127).all()
    assert ((wf - q.float() * s32).abs() <= 0.5 * s32 * (1 + 1e-4)).all()


def test_int4_formula():
    torch.manual_seed(2)
    w = torch.randn(8, 64).bfloat16()
    packed, scales, zeros = mt.quantize_int4(w, 16)
    assert packed.dtype == torch.uint8 and packed.shape == (8, 32)
    assert scales.shape == zeros.shape == (8, 4)
    s = mt.unpack_int4(packed)
    assert s.min() >= -8 and s.max() <= 7
    wq = mt.dequantize_int4(packed, scales.float(), zeros.float(), 16)
    step = scales.float().repeat_interleave(16, dim=1)
    assert ((w.float() - wq).abs() <= 0.5 * step * 1.05 + 1e-3).all()


@pytest.mark.parametrize("kind,group,tol", [("int8", 128, 2e-2),
                                            ("int4", 32, 0.15)])
def test_quantizes_in_place(kind, group, tol):
    m = tiny(tied=False)
    ids = torch.randint(0, 96, (3, 5))
    ref = m(ids)
    q = copy.deepcopy(m)
    report = mt.quantize_(q, kind, group_size=group, progress=False)
    layer = mt.WoqLinear if kind == "int8" else mt.Int4Linear
    assert all(isinstance(getattr(q, n), layer)
               for n in ("up", "down", "lm_head"))
    assert sorted(n for n, _, _ in report.quantized) == \
        ["down", "lm_head", "up"]
    assert 0 < report.max_error < tol
    assert rel(q(ids), ref) < 3 * tol
    assert q.up.bias is not None and torch.equal(q.up.bias, m.up.bias)
    assert "3 linear layer(s) quantized" in str(report)


def test_filter_and_report():
    m = tiny(tied=False)
    report = mt.quantize_(m, filter_fn=lambda mod, name: name != "lm_head",
                          progress=False)
    assert isinstance(m.lm_head, torch.nn.Linear)
    assert ("lm_head", "filter_fn excluded it") in report.left
    assert "left lm_head: filter_fn excluded it" in str(report)


def test_tied_lm_head():
    m = tiny(tied=True)
    emb = m.embed.weight.detach().clone()
    report = mt.quantize_(m, progress=False)
    assert isinstance(m.lm_head, mt.WoqLinear)
    assert isinstance(m.embed.weight, torch.nn.Parameter)
    assert torch.equal(m.embed.weight, emb)  # the embedding is untouched
    assert m.config.tie_word_embeddings is False
    assert any("lm_head: its weight was tied to embed.weight" in n
               for n in report.notes)


def test_state_dict_round_trip():
    m = tiny(tied=False)
    mt.quantize_(m, "int4", group_size=32, progress=False)
    buf = io.BytesIO()
    torch.save(m.state_dict(), buf)
    buf.seek(0)
    other = tiny(tied=False)
    torch.manual_seed(5)
    for p in other.parameters():  # different weights before loading
        p.data.normal_()
    mt.quantize_(other, "int4", group_size=32, progress=False)
    other.load_state_dict(torch.load(buf))
    ids = torch.randint(0, 96, (2, 4))
    assert torch.equal(other(ids), m(ids))
    # An unquantized model has no `scales`/`zeros`: a strict load refuses.
    with pytest.raises(RuntimeError, match="scales"):
        tiny(tied=False).load_state_dict(m.state_dict())


def test_leaves_what_it_cannot_take():
    class Own(torch.nn.Linear):
        def forward(self, x):
            return super().forward(x) * 2

    m = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.Linear(48, 64),
                            Own(64, 64)).bfloat16()
    report = mt.quantize_(m, "int4", group_size=32, progress=False)
    assert [n for n, _, _ in report.quantized] == ["0"]
    left = dict(report.left)
    assert left["1"] == ("in_features = 48 is not a multiple of group_size "
                         "= 32")
    assert left["2"] == "Own overrides nn.Linear's forward"


@pytest.mark.parametrize("model,kwargs,error,message", [
    ("m", {"kind": "int3"}, ValueError, "kind: expected one of int8, int4"),
    ("m", {"kind": 8}, TypeError, "kind: expected a str"),
    ("m", {"group_size": 3}, ValueError, "group_size: expected an even int"),
    ("m", {"group_size": True}, TypeError, "group_size: expected an int"),
    ("m", {"filter_fn": "up"}, TypeError, "filter_fn: expected a callable"),
    ("x", {}, TypeError, "model: expected a torch.nn.Module"),
    ("f32", {}, ValueError, "its weight is torch.float32"),
    ("none", {}, ValueError, "it has no nn.Linear"),
    ("bare", {}, ValueError, "model: .* is itself an nn.Linear"),
    ("odd", {"kind": "int4"}, ValueError,
     "in_features = 48 is not a multiple of group_size = 128"),
])
def test_errors(model, kwargs, error, message):
    models = {"m": lambda: tiny(), "x": lambda: "x",
              "f32": lambda: torch.nn.Sequential(torch.nn.Linear(8, 8)),
              "none": lambda: torch.nn.Sequential(torch.nn.ReLU()),
              "bare": lambda: torch.nn.Linear(8, 8).bfloat16(),
              "odd": lambda: torch.nn.Sequential(
                  torch.nn.Linear(48, 8).bfloat16())}
    with pytest.raises(error, match=message):
        mt.quantize_(models[model](), progress=False, **kwargs)


def test_already_quantized():
    m = tiny(tied=False)
    mt.quantize_(m, progress=False)
    with pytest.raises(ValueError, match=r"already quantized \(WoqLinear\)"):
        mt.quantize_(m, progress=False)
