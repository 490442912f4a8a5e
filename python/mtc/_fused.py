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
whose feed-forward linears are int8 (gpt-fast's or mtc's) through it.
"""
import threading
from typing import Dict, Tuple

import torch
import torch.nn.functional as F

from . import compiler
from ._torch_base import (DEFAULT_BUCKETS, HAS_CUSTOM_OP, _DTYPES,
                          _device_arch)
from .runtime import Artifact

_artifacts: Dict[Tuple, Artifact] = {}
_lock = threading.Lock()


def ffn_graph(name: str, d: int, h: int, dtype: str, eps: float) -> str:
    """The graph of fused_ffn for model width ``d``, hidden width ``h`` and
    activations of ``dtype`` ("bf16" or "f16"), over a symbolic M."""
    t = dtype
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
  out = add(x, dd)
  return out
}}
"""


def fused_ffn_eager(h, norm_weight, eps, w1, s1, w3, s3, w2, s2):
    """fused_ffn with PyTorch's operations (gpt-fast's formulas)."""
    hf = h.float()
    n = (hf * torch.rsqrt(torch.mean(hf * hf, dim=-1, keepdim=True) + eps)
         ).type_as(h) * norm_weight

    def lin(x, w, s):
        return F.linear(x, w.to(x.dtype)) * s
    return h + lin(F.silu(lin(n, w1, s1)) * lin(n, w3, s3), w2, s2)


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


def _artifact(dev, d, hid, dtype, eps):
    key = (dev, d, hid, dtype, eps)
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
            name = f"ffn_{d}x{hid}_{dtype}"
            paths = compiler.compile_graphs(
                {name: ffn_graph(name, d, hid, dtype, eps)}, DEFAULT_BUCKETS,
                arch=arch, progress=None)
            with torch.cuda.device(dev):
                torch.cuda.synchronize()
                _artifacts[key] = Artifact(paths[name])
    return _artifacts[key]


def _fused_ffn(h, norm_weight, eps, w1, s1, w3, s3, w2, s2):
    d, hid = check_ffn_args(h, norm_weight, eps, w1, s1, w3, s3, w2, s2)
    lead = tuple(h.shape[:-1])
    m = 1
    for s in lead:
        m *= s
    args = (w1, s1, w3, s3, w2, s2)
    if (h.device.type != "cuda" or m == 0 or m > DEFAULT_BUCKETS[-1] or
            not all(t.is_contiguous() for t in (norm_weight,) + args)):
        return fused_ffn_eager(h, norm_weight, eps, *args)
    dev = h.device.index if h.device.index is not None else \
        torch.cuda.current_device()
    art = _artifact(dev, d, hid, _DTYPES[h.dtype], eps)
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
                      s3: torch.Tensor, w2: torch.Tensor,
                      s2: torch.Tensor) -> torch.Tensor:
        return _fused_ffn(h, norm_weight, eps, w1, s1, w3, s3, w2, s2)

    @_fused_ffn_op.register_fake
    def _(h, norm_weight, eps, w1, s1, w3, s3, w2, s2):
        return torch.empty_like(h)


def fused_ffn(h, norm_weight, eps, w1, s1, w3, s3, w2, s2):
    """See the module's docstring: h [..., D] bf16 or f16; norm_weight [D]
    and the scales of h's dtype; w1, w3 int8 [H, D], w2 int8 [D, H]."""
    if HAS_CUSTOM_OP and torch.compiler.is_compiling():
        return torch.ops.mtc.fused_ffn(h, norm_weight, eps, w1, s1, w3, s3,
                                       w2, s2)
    return _fused_ffn(h, norm_weight, eps, w1, s1, w3, s3, w2, s2)


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


_classes: Dict[type, type] = {}


def fuse_blocks(model: torch.nn.Module):
    """Routes the feed-forward half of every gpt-fast ``TransformerBlock``
    of ``model`` with int8 linears through ``fused_ffn`` (in place: the
    block's class becomes a subclass with that forward; its modules and
    state dict stay). Returns (fused, left): the number of blocks fused and
    a list of (name, reason) for the blocks left alone."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got "
                        f"{type(model).__name__}")
    fused, left = 0, []
    for name, m in model.named_modules():
        if type(m).__name__ != "TransformerBlock" or \
                isinstance(m, _FusedFfnBlock):
            continue
        why = _block_ffn_parts(m)
        if why:
            left.append((name, why))
            continue
        cls = type(m)
        if cls not in _classes:
            _classes[cls] = type(cls.__name__, (_FusedFfnBlock, cls), {})
        m.__class__ = _classes[cls]
        fused += 1
    return fused, left
