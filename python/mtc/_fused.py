"""The feed-forward half of a decoder block as one mtc graph: ``fused_ffn``,
``fused_ffn_int4`` and ``fuse_blocks`` (re-exported by mtc.torch).

``fused_ffn(h, norm_weight, eps, w1, s1, w3, s3, w2, s2)`` computes

    n = (h.float() * rsqrt(mean(h.float()^2, -1) + eps)).type_as(h) * norm_weight
    out = h + w2(silu(w1(n)) * w3(n))

with each ``w(x)`` gpt-fast's weight-only int8 linear ``F.linear(x,
w.to(x.dtype)) * s``: the RMSNorm, SwiGLU and residual of a Llama block
around its three int8 linears, compiled by mtc as one graph (its norm's
statistic a row reduction, the scaling the projections' prologue at M = 1,
gate and up one kernel over both weights, SwiGLU and the residual in
epilogues; examples/decoder_ffn.graph). ``fused_ffn_int4(h, norm_weight,
eps, w1, s1, z1, w3, s3, z3, w2, s2, z2, groupsize)`` is the same block
over int4 linears (woq_int4_linear's: ``F.linear(x, W)`` with W = s *
scales + zeros per group of ``groupsize`` columns, each step rounded to h's
dtype). Row counts up to the largest bucket run mtc's kernels; beyond,
PyTorch's eager formulas. ``fuse_blocks(model)`` routes every gpt-fast
``TransformerBlock`` whose feed-forward linears are int8 (gpt-fast's or
mtc's) or mtc's int4 (after ``swap``) through them, and the norm and mlp of
every Hugging Face Llama-style decoder layer quantized by ``quantize_``
(without the residual, which the layer's forward adds: ``residual=False``).
"""
import threading
from typing import Dict, Tuple

import torch
import torch.nn.functional as F

from . import compiler
from ._int4 import check_int4_tensors, int4_linear_eager
from ._torch_base import (DEFAULT_BUCKETS, HAS_CUSTOM_OP, _DTYPES,
                          _device_arch, device_target, woq_linear_eager)
from .runtime import Artifact

_artifacts: Dict[Tuple, Artifact] = {}
_lock = threading.Lock()


def _linear_lines(w: str, inp: str, sums: str, out: str, t: str,
                  groupsize: int):
    """Graph statements of linear ``w`` of ``inp`` into ``out``: int8 with
    per-row scales ``s<i>`` applied to the product ``sums`` (groupsize 0),
    else int4 with scales ``s<i>`` and zeros ``z<i>`` per group of
    ``groupsize`` columns."""
    i = w[1:]
    if not groupsize:
        return (f"  {w}f = convert({w}, {t})\n  {sums} = linear({inp}, {w}f)\n"
                f"  {out} = mul({sums}, s{i})\n")
    return (f"  {w}f = convert({w}, {t})\n  {w}s = repeat(s{i}, {groupsize})\n"
            f"  {w}z = repeat(z{i}, {groupsize})\n  {w}m = mul({w}f, {w}s)\n"
            f"  {w}d = add({w}m, {w}z)\n  {out} = linear({inp}, {w}d)\n")


def weight_params(i: str, n: int, k: int, t: str, groupsize: int) -> str:
    """The graph parameters of linear ``w<i>``: int8 [n, k] with per-row
    scales (groupsize 0), or int4 with scales and zeros per group."""
    if groupsize:
        g = f"{t}[{n}, {k // groupsize}]"
        return f"w{i}: i4[{n}, {k}], s{i}: {g}, z{i}: {g}"
    return f"w{i}: i8[{n}, {k}], s{i}: {t}[{n}]"


def norm_lines(t: str, eps: float) -> str:
    """Graph statements of gpt-fast's RMSNorm of ``x`` with weight ``g``
    into ``n`` (the norm in f32, rounded to ``t``, times g)."""
    return f"""  xf = convert(x, f32)
  sq = mul(xf, xf)
  ms = mean(sq)
  e = add(ms, {float(eps)!r})
  r = rsqrt(e)
  nf = mul(xf, r)
  nb = convert(nf, {t})
  n = mul(nb, g)
"""


def ffn_graph(name: str, d: int, h: int, dtype: str, eps: float,
              residual: bool = True, groupsize: int = 0) -> str:
    """The graph of fused_ffn for model width ``d``, hidden width ``h`` and
    activations of ``dtype`` ("bf16" or "f16"), over a symbolic M; without
    ``residual``, the feed-forward half's output without ``h +``. With a
    ``groupsize``, fused_ffn_int4's (int4 weights, scales and zeros per
    group of that many columns)."""
    t = dtype
    out = "  out = add(x, dd)\n  return out" if residual else "  return dd"
    params = ",\n    ".join(
        weight_params(i, n, k, t, groupsize)
        for i, (n, k) in zip("132", ((h, d), (h, d), (d, h))))
    lines = {w: _linear_lines(w, inp, sums, o, t, groupsize)
             for w, inp, sums, o in (("w1", "n", "g0", "gs"),
                                     ("w3", "n", "u0", "u"),
                                     ("w2", "a", "d0", "dd"))}
    return f"""graph {name}(x: {t}[M, {d}], g: {t}[{d}],
    {params}) -> {t}[M, {d}] {{
{norm_lines(t, eps)}{lines["w1"]}{lines["w3"]}  sg = silu(gs)
  a = mul(sg, u)
{lines["w2"]}{out}
}}
"""


def _eager_linear(x, lin, groupsize):
    if not groupsize:
        return woq_linear_eager(x, *lin)
    return int4_linear_eager(x, *lin, groupsize)


def _ffn_eager(h, norm_weight, eps, lins, groupsize, residual):
    """The block with PyTorch's operations (gpt-fast's formulas); ``lins``
    the (weight, scales[, zeros]) of w1, w3 and w2."""
    hf = h.float()
    n = (hf * torch.rsqrt(torch.mean(hf * hf, dim=-1, keepdim=True) + eps)
         ).type_as(h) * norm_weight
    w1, w3, w2 = lins
    a = F.silu(_eager_linear(n, w1, groupsize)) * _eager_linear(n, w3,
                                                                groupsize)
    out = _eager_linear(a, w2, groupsize)
    return h + out if residual else out


def fused_ffn_eager(h, norm_weight, eps, w1, s1, w3, s3, w2, s2,
                    residual=True):
    """fused_ffn with PyTorch's operations (gpt-fast's formulas)."""
    return _ffn_eager(h, norm_weight, eps, ((w1, s1), (w3, s3), (w2, s2)), 0,
                      residual)


def fused_ffn_int4_eager(h, norm_weight, eps, w1, s1, z1, w3, s3, z3, w2, s2,
                         z2, groupsize, residual=True):
    """fused_ffn_int4 with PyTorch's operations (int4_linear_eager's)."""
    return _ffn_eager(h, norm_weight, eps,
                      ((w1, s1, z1), (w3, s3, z3), (w2, s2, z2)), groupsize,
                      residual)


def check_tensors_like(h, named, floats, act="h"):
    """Every tensor in ``named`` is one, on ``h``'s device; ``h`` (named
    ``act``) is bf16 or f16 and the tensors ``floats`` name have its
    dtype."""
    for name, t in named.items():
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor, got "
                            f"{type(t).__name__}")
    if h.dtype not in _DTYPES:
        raise TypeError(f"{act}: expected dtype torch.bfloat16 or "
                        f"torch.float16, got {h.dtype}")
    for name in floats:
        t = named[name]
        if t.dtype != h.dtype:
            raise TypeError(f"{name}: expected dtype {h.dtype} ({act}'s), got "
                            f"{t.dtype}")
    for name, t in named.items():
        if t.device != h.device:
            raise ValueError(f"{name}: on {t.device}, {act} on {h.device}")


def _check_common(h, norm_weight, eps, named, floats, act="h"):
    """The checks the norm's graphs share (``floats`` name the tensors of
    the activations' dtype; ``act`` is the activations' argument name);
    returns D."""
    check_tensors_like(h, named, floats, act)
    if not isinstance(eps, float) or not eps > 0:
        raise ValueError(f"eps: expected a positive float, got {eps!r}")
    d = h.shape[-1]
    if list(norm_weight.shape) != [d]:
        raise ValueError(f"norm_weight: expected shape [{d}], got "
                         f"{list(norm_weight.shape)}")
    return d


def check_ffn_args(h, norm_weight, eps, w1, s1, w3, s3, w2, s2):
    """Raises TypeError/ValueError naming the argument; returns (D, H)."""
    named = {"h": h, "norm_weight": norm_weight, "w1": w1, "s1": s1,
             "w3": w3, "s3": s3, "w2": w2, "s2": s2}
    d = _check_common(h, norm_weight, eps, named,
                      ("norm_weight", "s1", "s3", "s2"))
    if w1.dim() != 2 or w1.shape[1] != d:
        raise ValueError(f"w1: expected [H, {d}], got {list(w1.shape)}")
    hid = w1.shape[0]
    shapes = {"s1": [hid], "w3": [hid, d], "s3": [hid], "w2": [d, hid],
              "s2": [d]}
    for name, shape in shapes.items():
        if list(named[name].shape) != shape:
            raise ValueError(f"{name}: expected shape {shape}, got "
                             f"{list(named[name].shape)}")
    for name in ("w1", "w3", "w2"):
        if named[name].dtype != torch.int8:
            raise TypeError(f"{name}: expected dtype torch.int8, got "
                            f"{named[name].dtype}")
    return d, hid


def check_ffn_int4_args(h, norm_weight, eps, w1, s1, z1, w3, s3, z3, w2, s2,
                        z2, groupsize):
    """fused_ffn_int4's checks: raises TypeError/ValueError naming the
    argument; returns (D, H)."""
    named = {"h": h, "norm_weight": norm_weight, "w1": w1, "s1": s1,
             "z1": z1, "w3": w3, "s3": s3, "z3": z3, "w2": w2, "s2": s2,
             "z2": z2}
    d = _check_common(h, norm_weight, eps, named,
                      ("norm_weight", "s1", "z1", "s3", "z3", "s2", "z2"))
    shapes = []
    for i in "132":
        names = {"weight": f"w{i}", "scales": f"s{i}", "zeros": f"z{i}"}
        try:
            shapes.append(check_int4_tensors(named[f"w{i}"], named[f"s{i}"],
                                             named[f"z{i}"], groupsize))
        except (TypeError, ValueError) as e:
            # Name the argument as fused_ffn_int4 calls it.
            arg, _, rest = str(e).partition(":")
            raise type(e)(f"{names.get(arg, arg)}:{rest}") from None
    (h1, k1), (h3, k3), (d2, k2) = shapes
    if k1 != d:
        raise ValueError(f"w1: expected [H, {d} / 2] (K = h's {d}), got "
                         f"{list(w1.shape)}")
    if (h3, k3) != (h1, d):
        raise ValueError(f"w3: expected [{h1}, {d // 2}] (w1's shape), got "
                         f"{list(w3.shape)}")
    if (d2, k2) != (d, h1):
        raise ValueError(f"w2: expected [{d}, {h1 // 2}] ([D, H / 2]), got "
                         f"{list(w2.shape)}")
    return d, h1


def compiled(dev: int, key: Tuple, name: str, text) -> Artifact:
    """The artifact of graph ``text()`` (named ``name``) for the GPU
    ``dev`` at DEFAULT_BUCKETS, compiled once per ``key`` and process; it
    cannot be compiled while a CUDA graph is being captured."""
    key = (dev,) + key
    a = _artifacts.get(key)
    if a is not None:
        return a
    if torch.cuda.is_current_stream_capturing():
        raise RuntimeError(
            f"mtc: no kernel is loaded for {name}, and none can be compiled "
            "while a CUDA graph is being captured: run the model once before "
            "capturing")
    with _lock:
        if key not in _artifacts:
            arch, _ = _device_arch(dev)
            paths = compiler.compile_graphs(
                {name: text()}, DEFAULT_BUCKETS, arch=arch,
                target=device_target(dev), progress=None)
            with torch.cuda.device(dev):
                torch.cuda.synchronize()
                _artifacts[key] = Artifact(paths[name])
    return _artifacts[key]


def _artifact(dev, d, hid, dtype, eps, residual, groupsize):
    name = (f"ffn_{d}x{hid}_{dtype}" +
            (f"_int4g{groupsize}" if groupsize else "") +
            ("" if residual else "_nores"))
    return compiled(dev, ("ffn", d, hid, dtype, eps, residual, groupsize),
                    name, lambda: ffn_graph(name, d, hid, dtype, eps,
                                            residual, groupsize))


def launch(art: Artifact, x: torch.Tensor, ins, n_out: int,
           padded=()) -> torch.Tensor:
    """Runs ``art`` on ``x`` [..., K] (its rows flattened into M) and the
    inputs ``ins`` (tensors, in the graph's order after x; those in
    ``padded``, [..., n] like x's rows, are padded to the bucket with it),
    returning the [..., n_out] output."""
    lead = tuple(x.shape[:-1])
    m = 1
    for s in lead:
        m *= s
    bucket = art.bucket_for(m)
    rows = [x.reshape(m, x.shape[-1]).contiguous()] + \
        [t.reshape(m, t.shape[-1]).contiguous() for t in padded]
    if bucket != m:
        rows = [F.pad(r, (0, 0, 0, bucket - m)) for r in rows]
    out = torch.empty(bucket, n_out, dtype=x.dtype, device=x.device)
    art.launch(m, torch.cuda.current_stream(x.device).cuda_stream,
               [rows[0].data_ptr()] + [t.data_ptr() for t in ins] +
               [r.data_ptr() for r in rows[1:]], [out.data_ptr()])
    return out[:m].reshape(*lead, n_out)


def device_index(t: torch.Tensor) -> int:
    return t.device.index if t.device.index is not None else \
        torch.cuda.current_device()


def rows_of(x: torch.Tensor) -> int:
    """M of ``x`` [..., K]: all its dimensions but the last (0 if K is)."""
    return x.numel() // x.shape[-1] if x.shape[-1] else 0


def _run_ffn(h, norm_weight, eps, lins, groupsize, residual, d, hid):
    """The block on mtc's kernels where it has them (CUDA, contiguous
    tensors, M up to the largest bucket), else _ffn_eager."""
    m = rows_of(h)
    args = [t for lin in lins for t in lin]
    if (h.device.type != "cuda" or m == 0 or m > DEFAULT_BUCKETS[-1] or
            not all(t.is_contiguous() for t in [norm_weight] + args)):
        return _ffn_eager(h, norm_weight, eps, lins, groupsize, residual)
    art = _artifact(device_index(h), d, hid, _DTYPES[h.dtype], eps, residual,
                    groupsize)
    return launch(art, h, [norm_weight] + args, d)


def _fused_ffn(h, norm_weight, eps, w1, s1, w3, s3, w2, s2, residual):
    d, hid = check_ffn_args(h, norm_weight, eps, w1, s1, w3, s3, w2, s2)
    return _run_ffn(h, norm_weight, eps, ((w1, s1), (w3, s3), (w2, s2)), 0,
                    residual, d, hid)


def _fused_ffn_int4(h, norm_weight, eps, w1, s1, z1, w3, s3, z3, w2, s2, z2,
                    groupsize, residual):
    d, hid = check_ffn_int4_args(h, norm_weight, eps, w1, s1, z1, w3, s3, z3,
                                 w2, s2, z2, groupsize)
    return _run_ffn(h, norm_weight, eps,
                    ((w1, s1, z1), (w3, s3, z3), (w2, s2, z2)), groupsize,
                    residual, d, hid)


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

    @torch.library.custom_op("mtc::fused_ffn_int4", mutates_args=())
    def _fused_ffn_int4_op(h: torch.Tensor, norm_weight: torch.Tensor,
                           eps: float, w1: torch.Tensor, s1: torch.Tensor,
                           z1: torch.Tensor, w3: torch.Tensor,
                           s3: torch.Tensor, z3: torch.Tensor,
                           w2: torch.Tensor, s2: torch.Tensor,
                           z2: torch.Tensor, groupsize: int,
                           residual: bool = True) -> torch.Tensor:
        return _fused_ffn_int4(h, norm_weight, eps, w1, s1, z1, w3, s3, z3,
                               w2, s2, z2, groupsize, residual)

    @_fused_ffn_int4_op.register_fake
    def _(h, norm_weight, eps, w1, s1, z1, w3, s3, z3, w2, s2, z2, groupsize,
          residual=True):
        return torch.empty_like(h)


def _check_residual(residual):
    if not isinstance(residual, bool):
        raise TypeError(f"residual: expected a bool, got "
                        f"{type(residual).__name__}")


def fused_ffn(h, norm_weight, eps, w1, s1, w3, s3, w2, s2, residual=True):
    """See the module's docstring: h [..., D] bf16 or f16; norm_weight [D]
    and the scales of h's dtype; w1, w3 int8 [H, D], w2 int8 [D, H]. With
    ``residual=False`` it returns the feed-forward half without ``h +``."""
    _check_residual(residual)
    if HAS_CUSTOM_OP and torch.compiler.is_compiling():
        return torch.ops.mtc.fused_ffn(h, norm_weight, eps, w1, s1, w3, s3,
                                       w2, s2, residual)
    return _fused_ffn(h, norm_weight, eps, w1, s1, w3, s3, w2, s2, residual)


def fused_ffn_int4(h, norm_weight, eps, w1, s1, z1, w3, s3, z3, w2, s2, z2,
                   groupsize, residual=True):
    """See the module's docstring: h [..., D] bf16 or f16; norm_weight [D],
    the scales and zeros of h's dtype; w1, w3 uint8 (or int8) [H, D / 2]
    (pack_int4's layout), s1, z1, s3, z3 [H, D / groupsize], w2 [D, H / 2],
    s2, z2 [D, H / groupsize]. With ``residual=False`` it returns the
    feed-forward half without ``h +``."""
    _check_residual(residual)
    if HAS_CUSTOM_OP and torch.compiler.is_compiling():
        return torch.ops.mtc.fused_ffn_int4(h, norm_weight, eps, w1, s1, z1,
                                            w3, s3, z3, w2, s2, z2, groupsize,
                                            residual)
    return _fused_ffn_int4(h, norm_weight, eps, w1, s1, z1, w3, s3, z3, w2,
                           s2, z2, groupsize, residual)
