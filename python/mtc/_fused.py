"""The feed-forward half of a decoder block as one mtc graph: ``fused_ffn``
and ``fuse_blocks`` (re-exported by mtc.torch).

``fused_ffn(h, norm_weight, eps, w1, s1, w3, s3, w2, s2)`` computes

    n = (h.float() * rsqrt(mean(h.float()^2, -1) + eps)).type_as(h) * norm_weight
    out = h + w2(silu(w1(n)) * w3(n))

with each ``w(x)`` gpt-fast's weight-only int8 linear ``F.linear(x,
w.to(x.dtype)) * s``: the RMSNorm, SwiGLU and residual of a Llama block
around its three int8 linears, compiled by mtc as one graph (its norm's
statistic a row reduction, the scaling the projections' prologue at M = 1,
SwiGLU and the residual in epilogues; examples/decoder_ffn.graph). Row
counts up to the largest bucket run mtc's kernels; beyond, PyTorch's eager
formulas. ``fuse_blocks(model)`` routes every gpt-fast ``TransformerBlock``
whose feed-forward linears are int8 (gpt-fast's or mtc's) through it, and
the norm and mlp of every Hugging Face Llama-style decoder layer quantized
by ``quantize_`` (without the residual, which the layer's forward adds:
``residual=False``).
"""
import threading
from typing import Dict, Tuple

import torch
import torch.nn.functional as F

from . import compiler
from ._torch_base import (DEFAULT_BUCKETS, HAS_CUSTOM_OP, _DTYPES,
                          _device_arch, device_target, woq_linear_eager)
from .runtime import Artifact

_artifacts: Dict[Tuple, Artifact] = {}
_lock = threading.Lock()


def ffn_graph(name: str, d: int, h: int, dtype: str, eps: float,
              residual: bool = True) -> str:
    """The graph of fused_ffn for model width ``d``, hidden width ``h`` and
    activations of ``dtype`` ("bf16" or "f16"), over a symbolic M; without
    ``residual``, the feed-forward half's output without ``h +``."""
    t = dtype
    out = "  out = add(x, dd)\n  return out" if residual else "  return dd"
    return f"""graph {name}(x: {t}[M, {d}], g: {t}[{d}],
    w1: i8[{h}, {d}], s1: {t}[{h}], w3: i8[{h}, {d}], s3: {t}[{h}],
    w2: i8[{d}, {h}], s2: {t}[{d}]) -> {t}[M, {d}] {{
  xf = convert(x, f32)
  sq = mul(xf, xf)
  ms = mean(sq)
  e = add(ms, {float(eps)!r})
  r = rsqrt(e)
  nf = mul(xf, r)
  nb = convert(nf, {t})
  n = mul(nb, g)
  w1f = convert(w1, {t})
  g0 = linear(n, w1f)
  gs = mul(g0, s1)
  w3f = convert(w3, {t})
  u0 = linear(n, w3f)
  u = mul(u0, s3)
  sg = silu(gs)
  a = mul(sg, u)
  w2f = convert(w2, {t})
  d0 = linear(a, w2f)
  dd = mul(d0, s2)
{out}
}}
"""


def fused_ffn_eager(h, norm_weight, eps, w1, s1, w3, s3, w2, s2,
                    residual=True):
    """fused_ffn with PyTorch's operations (gpt-fast's formulas)."""
    hf = h.float()
    n = (hf * torch.rsqrt(torch.mean(hf * hf, dim=-1, keepdim=True) + eps)
         ).type_as(h) * norm_weight
    lin = woq_linear_eager
    out = lin(F.silu(lin(n, w1, s1)) * lin(n, w3, s3), w2, s2)
    return h + out if residual else out


def check_ffn_args(h, norm_weight, eps, w1, s1, w3, s3, w2, s2):
    """Raises TypeError/ValueError naming the argument; returns (D, H)."""
    named = {"h": h, "norm_weight": norm_weight, "w1": w1, "s1": s1,
             "w3": w3, "s3": s3, "w2": w2, "s2": s2}
    for name, t in named.items():
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor, got "
                            f"{type(t).__name__}")
    if not isinstance(eps, float) or not eps > 0:
        raise ValueError(f"eps: expected a positive float, got {eps!r}")
    if h.dtype not in _DTYPES:
        raise TypeError(f"h: expected dtype torch.bfloat16 or torch.float16, "
                        f"got {h.dtype}")
    d = h.shape[-1]
    if w1.dim() != 2 or w1.shape[1] != d:
        raise ValueError(f"w1: expected [H, {d}], got {list(w1.shape)}")
    hid = w1.shape[0]
    shapes = {"norm_weight": [d], "s1": [hid], "w3": [hid, d], "s3": [hid],
              "w2": [d, hid], "s2": [d]}
    for name, shape in shapes.items():
        if list(named[name].shape) != shape:
            raise ValueError(f"{name}: expected shape {shape}, got "
                             f"{list(named[name].shape)}")
    for name in ("w1", "w3", "w2"):
        if named[name].dtype != torch.int8:
            raise TypeError(f"{name}: expected dtype torch.int8, got "
                            f"{named[name].dtype}")
    for name in ("norm_weight", "s1", "s3", "s2"):
        if named[name].dtype != h.dtype:
            raise TypeError(f"{name}: expected dtype {h.dtype} (h's), got "
                            f"{named[name].dtype}")
    for name, t in named.items():
        if t.device != h.device:
            raise ValueError(f"{name}: on {t.device}, h on {h.device}")
    return d, hid


def _artifact(dev, d, hid, dtype, eps, residual):
    key = (dev, d, hid, dtype, eps, residual)
    a = _artifacts.get(key)
    if a is not None:
        return a
    if torch.cuda.is_current_stream_capturing():
        raise RuntimeError(
            "mtc: no fused feed-forward kernel is loaded for this shape, and "
            "none can be compiled while a CUDA graph is being captured: run "
            "the model once before capturing")
    with _lock:
        if key not in _artifacts:
            arch, _ = _device_arch(dev)
            name = f"ffn_{d}x{hid}_{dtype}" + ("" if residual else "_nores")
            paths = compiler.compile_graphs(
                {name: ffn_graph(name, d, hid, dtype, eps, residual)},
                DEFAULT_BUCKETS,
                arch=arch, target=device_target(dev), progress=None)
            with torch.cuda.device(dev):
                torch.cuda.synchronize()
                _artifacts[key] = Artifact(paths[name])
    return _artifacts[key]


def _fused_ffn(h, norm_weight, eps, w1, s1, w3, s3, w2, s2, residual):
    d, hid = check_ffn_args(h, norm_weight, eps, w1, s1, w3, s3, w2, s2)
    lead = tuple(h.shape[:-1])
    m = 1
    for s in lead:
        m *= s
    args = (w1, s1, w3, s3, w2, s2)
    if (h.device.type != "cuda" or m == 0 or m > DEFAULT_BUCKETS[-1] or
            not all(t.is_contiguous() for t in (norm_weight,) + args)):
        return fused_ffn_eager(h, norm_weight, eps, *args, residual=residual)
    dev = h.device.index if h.device.index is not None else \
        torch.cuda.current_device()
    art = _artifact(dev, d, hid, _DTYPES[h.dtype], eps, residual)
    bucket = art.bucket_for(m)
    x2 = h.reshape(m, d).contiguous()
    if bucket != m:
        x2 = F.pad(x2, (0, 0, 0, bucket - m))
    out = torch.empty(bucket, d, dtype=h.dtype, device=h.device)
    art.launch(m, torch.cuda.current_stream(h.device).cuda_stream,
               [x2.data_ptr(), norm_weight.data_ptr()] +
               [t.data_ptr() for t in args], [out.data_ptr()])
    return out[:m].reshape(*lead, d)


if HAS_CUSTOM_OP:
    @torch.library.custom_op("mtc::fused_ffn", mutates_args=())
    def _fused_ffn_op(h: torch.Tensor, norm_weight: torch.Tensor, eps: float,
                      w1: torch.Tensor, s1: torch.Tensor, w3: torch.Tensor,
                      s3: torch.Tensor, w2: torch.Tensor, s2: torch.Tensor,
                      residual: bool = True) -> torch.Tensor:
        return _fused_ffn(h, norm_weight, eps, w1, s1, w3, s3, w2, s2,
                          residual)

    @_fused_ffn_op.register_fake
    def _(h, norm_weight, eps, w1, s1, w3, s3, w2, s2, residual=True):
        return torch.empty_like(h)


def fused_ffn(h, norm_weight, eps, w1, s1, w3, s3, w2, s2, residual=True):
    """See the module's docstring: h [..., D] bf16 or f16; norm_weight [D]
    and the scales of h's dtype; w1, w3 int8 [H, D], w2 int8 [D, H]. With
    ``residual=False`` it returns the feed-forward half without ``h +``."""
    if not isinstance(residual, bool):
        raise TypeError(f"residual: expected a bool, got "
                        f"{type(residual).__name__}")
    if HAS_CUSTOM_OP and torch.compiler.is_compiling():
        return torch.ops.mtc.fused_ffn(h, norm_weight, eps, w1, s1, w3, s3,
                                       w2, s2, residual)
    return _fused_ffn(h, norm_weight, eps, w1, s1, w3, s3, w2, s2, residual)


def _int8_parts(linear):
    """(weight, scales) of an int8 per-channel linear without bias
    (gpt-fast's WeightOnlyInt8Linear or mtc's WoqLinear), else None."""
    w = getattr(linear, "weight", None)
    s = getattr(linear, "scales", None)
    if (isinstance(w, torch.Tensor) and w.dtype == torch.int8 and
            isinstance(s, torch.Tensor) and s.dim() == 1 and
            getattr(linear, "bias", None) is None):
        return w, s
    return None


def _block_ffn_parts(block):
    """The norm and int8 linears of a gpt-fast TransformerBlock's
    feed-forward half, or a reason it has none."""
    ff, norm = getattr(block, "feed_forward", None), getattr(block,
                                                             "ffn_norm", None)
    if ff is None or norm is None or not hasattr(block, "attention"):
        return "not a gpt-fast TransformerBlock"
    parts = [_int8_parts(getattr(ff, n, None)) for n in ("w1", "w3", "w2")]
    if any(p is None for p in parts):
        return "its feed-forward linears are not int8 per channel"
    if not isinstance(getattr(norm, "eps", None), float):
        return "its ffn_norm has no float eps"
    return None


class _FusedFfnBlock:
    """Mixed into a gpt-fast TransformerBlock's class by fuse_blocks: its
    attention half as gpt-fast computes it, its feed-forward half (norm,
    SwiGLU, residual) as one fused_ffn."""

    def forward(self, x, input_pos, freqs_cis, mask):
        h = x + self.attention(self.attention_norm(x), freqs_cis, mask,
                               input_pos)
        ff = self.feed_forward
        return fused_ffn(h, self.ffn_norm.weight, self.ffn_norm.eps,
                         ff.w1.weight, ff.w1.scales, ff.w3.weight,
                         ff.w3.scales, ff.w2.weight, ff.w2.scales)


def _hf_mlp_parts(layer):
    """(norm, eps) of a Hugging Face Llama-style decoder layer's feed-forward
    half (``post_attention_layernorm``, then ``mlp`` with ``gate_proj``,
    ``up_proj``, ``down_proj`` and SiLU), or a reason it has none."""
    norm, mlp = layer.post_attention_layernorm, layer.mlp
    names = ("gate_proj", "up_proj", "down_proj")
    if any(_int8_parts(getattr(mlp, n, None)) is None for n in names):
        return None, ("its mlp's gate_proj, up_proj and down_proj are not "
                      "int8 per channel (mtc.torch.quantize_(model, 'int8') "
                      "makes them so)")
    act = getattr(mlp, "act_fn", None)
    if type(act).__name__ not in ("SiLU", "SiLUActivation"):
        return None, (f"its mlp's act_fn is {type(act).__name__}, not SiLU")
    eps = getattr(norm, "variance_epsilon", getattr(norm, "eps", None))
    w = getattr(norm, "weight", None)
    if not isinstance(eps, float) or not isinstance(w, torch.Tensor):
        return None, ("its post_attention_layernorm has no weight and float "
                      "epsilon (an RMSNorm's)")
    return (norm, eps), None


class _PassNorm:
    """Mixed into a decoder layer's post_attention_layernorm by fuse_blocks:
    the norm runs inside the fused mlp, so the layer's call of it passes its
    input on."""

    def forward(self, x):
        return x


class _FusedMlp:
    """Mixed into a decoder layer's mlp by fuse_blocks: the norm before it,
    SwiGLU and the int8 linears as one fused_ffn without the residual (the
    layer adds it)."""

    def forward(self, x):
        norm, eps = self._mtc_norm
        return fused_ffn(x, norm.weight, eps, self.gate_proj.weight,
                         self.gate_proj.scales, self.up_proj.weight,
                         self.up_proj.scales, self.down_proj.weight,
                         self.down_proj.scales, residual=False)


@torch.no_grad()
def _fuse_hf_layer(layer, norm, eps):
    """Swaps the classes of ``layer``'s norm and mlp after checking, on 3
    random rows, that the fused mlp computes what the two did; returns a
    reason where it does not (and leaves the layer alone)."""
    mlp = layer.mlp
    # Rows of the activations' dtype: the int8 linears' scales have it.
    scales = mlp.gate_proj.scales
    gen = torch.Generator(device=scales.device).manual_seed(0)
    x = torch.randn(3, norm.weight.shape[0], generator=gen,
                    device=scales.device, dtype=scales.dtype)
    ref = mlp(norm(x)).float()
    object.__setattr__(mlp, "_mtc_norm", (norm, eps))
    try:
        out = _FusedMlp.forward(mlp, x).float()
    except (TypeError, ValueError) as e:
        return f"fused_ffn refuses its tensors: {e}"
    err = (out - ref).abs().max().item() / (ref.abs().max().item() or 1.0)
    if err > 2e-2:
        return (f"its norm and mlp do not compute RMSNorm then SwiGLU (max "
                f"rel err {err:.2e} against the fused graph)")
    norm.__class__ = _subclass(type(norm), _PassNorm)
    mlp.__class__ = _subclass(type(mlp), _FusedMlp)
    return None


_classes: Dict[Tuple[type, type], type] = {}


def _subclass(cls, mixin):
    if (cls, mixin) not in _classes:
        _classes[cls, mixin] = type(cls.__name__, (mixin, cls), {})
    return _classes[cls, mixin]


def fuse_blocks(model: torch.nn.Module):
    """Routes the feed-forward half of every decoder block of ``model`` whose
    feed-forward linears are int8 per channel through ``fused_ffn``, in
    place (modules and state dict stay; their classes become subclasses):

    - gpt-fast's ``TransformerBlock``: its forward computes the attention
      half as gpt-fast does, then norm, SwiGLU and the residual as one graph;
    - a Hugging Face Llama-style decoder layer (``post_attention_layernorm``
      and an ``mlp`` with ``gate_proj``, ``up_proj``, ``down_proj`` and SiLU,
      quantized by ``quantize_``): its mlp computes the norm and SwiGLU as
      one graph and its norm passes its input on; the layer's own forward
      (attention, residuals, caches) is untouched. Each such layer is first
      checked on 3 random rows against its unfused modules.

    Returns (fused, left): the number of blocks fused and a list of (name,
    reason) for the blocks left alone."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got "
                        f"{type(model).__name__}")
    fused, left = 0, []
    for name, m in model.named_modules():
        if isinstance(m, _FusedFfnBlock) or \
                isinstance(getattr(m, "mlp", None), _FusedMlp):
            continue
        if type(m).__name__ == "TransformerBlock":
            why = _block_ffn_parts(m)
            if not why:
                m.__class__ = _subclass(type(m), _FusedFfnBlock)
        elif isinstance(getattr(m, "post_attention_layernorm", None),
                        torch.nn.Module) and \
                isinstance(getattr(m, "mlp", None), torch.nn.Module):
            parts, why = _hf_mlp_parts(m)
            if parts:
                why = _fuse_hf_layer(m, *parts)
        else:
            continue
        if why:
            left.append((name, why))
        else:
            fused += 1
    return fused, left
