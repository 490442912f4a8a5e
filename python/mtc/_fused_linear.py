"""The linears on each side of a decoder block's attention as mtc graphs
(re-exported by mtc.torch):

``norm_linear(x, norm_weight, eps, weight, scales, zeros=None,
groupsize=0, rope=None)`` computes ``linear(rms_norm(x) * norm_weight, W)``:
gpt-fast's ``attention_norm`` then ``wqkv``, with the norm's formula of
``fused_ffn`` and ``W`` an int8 per-channel linear (``F.linear(x,
w.to(x.dtype)) * s``) or, with ``zeros`` and a ``groupsize``, an int4 one
(woq_int4_linear's). At M = 1 on int8 mtc compiles it to one kernel: the
norm's scaling is the linear's prologue and every block derives the row's
statistic itself. With ``rope=(table, cols)`` the linear's epilogue also
rotates the first ``cols`` columns as gpt-fast's ``apply_rotary_emb`` does
(graph.rope: pairs of columns, ``table`` [1 or rows, D] holding each
pair's cosine and sine, gpt-fast's ``freqs_cis[input_pos]`` as [T, D]).

``linear_residual(y, weight, scales, residual, zeros=None, groupsize=0)``
computes ``residual + linear(y, W)``: gpt-fast's ``h = x + wo(y)``, the
residual added in the linear's epilogue (one kernel at every M).

Row counts up to the largest bucket run mtc's kernels on CUDA; beyond, and
on the CPU, PyTorch's eager formulas (the same roundings).
"""
from typing import Optional

import torch
import torch.nn.functional as F

from ._fused import (_check_common, _eager_linear, _linear_lines,
                     check_tensors_like, compiled, device_index, launch,
                     norm_lines, rows_of, weight_params)
from ._int4 import check_int4_tensors
from ._tools import MtcError
from ._torch_base import (DEFAULT_BUCKETS, HAS_CUSTOM_OP, _DTYPES,
                          check_tensors)


def norm_linear_graph(name: str, d: int, n: int, dtype: str, eps: float,
                      groupsize: int = 0, rope=None) -> str:
    """The graph of norm_linear: width ``d``, ``n`` outputs, activations of
    ``dtype`` ("bf16" or "f16"), a symbolic M; int4 with a ``groupsize``;
    with ``rope`` = (per_row, D, cols, table dtype) the rotary embedding of
    the first ``cols`` outputs by a table ``t`` [1 or M, D], the last
    parameter."""
    t, table, tail = dtype, "", "  return y"
    if rope:
        per_row, hd, cols, tdt = rope
        table = f", t: {tdt}[{'M' if per_row else 1}, {hd}]"
        tail = (f"  yf = convert(y, f32)\n  ro = rope(yf, t, {cols})\n"
                f"  out = convert(ro, {t})\n  return out")
    return f"""graph {name}(x: {t}[M, {d}], g: {t}[{d}],
    {weight_params("1", n, d, t, groupsize)}{table}) -> {t}[M, {n}] {{
{norm_lines(t, eps)}{_linear_lines("w1", "n", "y0", "y", t, groupsize)}{tail}
}}
"""


def linear_residual_graph(name: str, k: int, n: int, dtype: str,
                          groupsize: int = 0) -> str:
    """The graph of linear_residual: ``k`` inputs, ``n`` outputs."""
    t, w = dtype, weight_params("1", n, k, dtype, groupsize)
    return f"""graph {name}(y: {t}[M, {k}],
    {w}, res: {t}[M, {n}]) -> {t}[M, {n}] {{
{_linear_lines("w1", "y", "d0", "d", t, groupsize)}  out = add(res, d)
  return out
}}
"""


def _check_linear(x, k_name, weight, scales, zeros, groupsize):
    """The weight's checks (names as the functions call them); returns
    (N, K)."""
    if not isinstance(groupsize, int) or isinstance(groupsize, bool) or \
            groupsize < 0:
        raise ValueError(f"groupsize: expected 0 (int8) or an int4 group "
                         f"size, got {groupsize!r}")
    if not groupsize:
        if zeros is not None:
            raise ValueError("zeros: int8 weights (groupsize 0) take none")
        check_tensors(weight, scales)
        n, k = weight.shape
    else:
        if not isinstance(zeros, torch.Tensor):
            raise TypeError(f"zeros: expected a torch.Tensor (int4), got "
                            f"{type(zeros).__name__}")
        n, k = check_int4_tensors(weight, scales, zeros, groupsize)
    if k != x.shape[-1]:
        raise ValueError(f"weight: expected [N, {x.shape[-1]}] (K = "
                         f"{k_name}'s last dimension), got {k} columns")
    return n, k


def _lin(weight, scales, zeros):
    return (weight, scales) if zeros is None else (weight, scales, zeros)


def _on_mtc(x, tensors) -> bool:
    m = rows_of(x)
    return (x.device.type == "cuda" and 0 < m <= DEFAULT_BUCKETS[-1] and
            all(t.is_contiguous() for t in tensors))


# A rotary table's dtypes and their graph names.
_TABLE_DTYPES = {**_DTYPES, torch.float32: "f32"}


def _check_rope(x, n, table, cols):
    """rope's checks: ``table`` [1 or x's rows, D] of a float dtype on x's
    device, D even, ``cols`` a positive multiple of D at most ``n``;
    returns whether the table has a row per row of x."""
    if not isinstance(table, torch.Tensor):
        raise TypeError(f"rope: expected a (table, cols) with table a "
                        f"torch.Tensor, got {type(table).__name__}")
    if not isinstance(cols, int) or isinstance(cols, bool):
        raise TypeError(f"rope: cols must be an int, got "
                        f"{type(cols).__name__}")
    if table.dtype not in _TABLE_DTYPES:
        raise TypeError(f"rope: the table must be bf16, f16 or f32, got "
                        f"{table.dtype}")
    if table.device != x.device:
        raise ValueError(f"rope: the table is on {table.device}, x on "
                         f"{x.device}")
    rows = rows_of(x)
    if table.dim() != 2 or table.shape[1] % 2 or \
            table.shape[0] not in (1, rows):
        raise ValueError(f"rope: the table must be [1, D] or [{rows}, D] "
                         f"with D even, got {list(table.shape)}")
    if cols <= 0 or cols % table.shape[1] or cols > n:
        raise ValueError(f"rope: cols must be a positive multiple of "
                         f"{table.shape[1]}, at most {n}, got {cols}")
    return table.shape[0] != 1


def _norm_linear(x, norm_weight, eps, weight, scales, zeros, groupsize,
                 rope_table=None, rope_cols=0):
    named = {"x": x, "norm_weight": norm_weight, "weight": weight,
             "scales": scales}
    if zeros is not None:
        named["zeros"] = zeros
    d = _check_common(x, norm_weight, eps, named,
                      [k for k in ("norm_weight", "scales", "zeros")
                       if k in named], act="x")
    n, _ = _check_linear(x, "x", weight, scales, zeros, groupsize)
    rope = None
    if rope_table is not None:
        per_row = _check_rope(x, n, rope_table, rope_cols)
        rope = (per_row, rope_table.shape[1], rope_cols,
                _TABLE_DTYPES[rope_table.dtype])
    lin = _lin(weight, scales, zeros)
    if not _on_mtc(x, [norm_weight] + list(lin) +
                   ([rope_table] if rope else [])):
        return norm_linear_eager(x, norm_weight, eps, weight, scales, zeros,
                                 groupsize, rope and (rope_table, rope_cols))
    t = _DTYPES[x.dtype]
    name = f"nlin_{n}x{d}_{t}" + (f"_int4g{groupsize}" if groupsize else "")
    if rope:
        name += f"_rope{rope[2]}_{'m' if rope[0] else '1'}x{rope[1]}{rope[3]}"
    art = compiled(device_index(x), ("nlin", d, n, t, eps, groupsize, rope),
                   name,
                   lambda: norm_linear_graph(name, d, n, t, eps, groupsize,
                                             rope))
    ins = [norm_weight] + list(lin)
    if rope and not rope[0]:
        ins.append(rope_table)
    return launch(art, x, ins, n,
                  padded=(rope_table,) if rope and rope[0] else ())


def _linear_residual(y, weight, scales, residual, zeros, groupsize):
    named = {"y": y, "weight": weight, "scales": scales,
             "residual": residual}
    if zeros is not None:
        named["zeros"] = zeros
    check_tensors_like(y, named, [k for k in ("scales", "residual", "zeros")
                                  if k in named], act="y")
    n, k = _check_linear(y, "y", weight, scales, zeros, groupsize)
    want = list(y.shape[:-1]) + [n]
    if list(residual.shape) != want:
        raise ValueError(f"residual: expected shape {want}, got "
                         f"{list(residual.shape)}")
    lin = _lin(weight, scales, zeros)
    if not _on_mtc(y, list(lin)):
        return linear_residual_eager(y, weight, scales, residual, zeros,
                                     groupsize)
    t = _DTYPES[y.dtype]
    name = f"lres_{n}x{k}_{t}" + (f"_int4g{groupsize}" if groupsize else "")
    art = compiled(device_index(y), ("lres", k, n, t, groupsize), name,
                   lambda: linear_residual_graph(name, k, n, t, groupsize))
    return launch(art, y, list(lin), n, padded=(residual,))


def rope_eager(y, table, cols):
    """graph.rope with PyTorch's operations (gpt-fast's apply_rotary_emb
    on the first ``cols`` columns of ``y`` [..., N]), rounded to y's
    dtype."""
    lead, d = y.shape[:-1], table.shape[1]
    rows = y.reshape(-1, y.shape[-1])
    r = rows[:, :cols].float().reshape(rows.shape[0], cols // d, d // 2, 2)
    f = table.float().reshape(table.shape[0], 1, d // 2, 2)
    out = torch.stack([r[..., 0] * f[..., 0] - r[..., 1] * f[..., 1],
                       r[..., 1] * f[..., 0] + r[..., 0] * f[..., 1]], -1)
    return torch.cat([out.reshape(rows.shape[0], cols).type_as(y),
                      rows[:, cols:]], -1).reshape(*lead, y.shape[-1])


@torch.no_grad()
def rope_mismatch(x_dtype, norm_weight, eps, weight, scales, zeros, groupsize,
                  head_dim, cols, rows) -> str:
    """Runs norm_linear with ``rope`` on ``rows`` random rows of
    ``x_dtype`` and a random table of one row of ``head_dim`` (on the
    weight's device) against norm_linear_eager in f32: "" where they agree
    within 2e-2 of the largest output, else what went wrong."""
    dev = weight.device
    gen = torch.Generator(device=dev).manual_seed(0)
    x = torch.randn(rows, norm_weight.shape[0], generator=gen,
                    device=dev).to(x_dtype)
    angle = torch.rand(head_dim // 2, generator=gen, device=dev) * 6.3
    table = torch.stack([angle.cos(), angle.sin()], -1).reshape(1, head_dim)
    table = table.to(x_dtype)
    try:
        out = norm_linear(x, norm_weight, eps, weight, scales, zeros,
                          groupsize, (table, cols)).float()
    except MtcError as e:
        return f"mtc failed on it: {e}"
    ref = norm_linear_eager(
        x.float(), norm_weight.float(), eps, weight, scales.float(),
        None if zeros is None else zeros.float(), groupsize,
        (table.float(), cols))
    err = ((out - ref).abs().max() / ref.abs().max()).item()
    return "" if err <= 2e-2 else (
        f"mtc's rotation in wqkv's epilogue did not match PyTorch's on "
        f"{rows} random row(s) (max rel err {err:.2e})")


def norm_linear_eager(x, norm_weight, eps, weight, scales, zeros=None,
                      groupsize=0, rope=None):
    """norm_linear with PyTorch's operations (gpt-fast's formulas)."""
    xf = x.float()
    n = (xf * torch.rsqrt(torch.mean(xf * xf, dim=-1, keepdim=True) + eps)
         ).type_as(x) * norm_weight
    y = _eager_linear(n, _lin(weight, scales, zeros), groupsize)
    return rope_eager(y, *rope) if rope else y


def linear_residual_eager(y, weight, scales, residual, zeros=None,
                          groupsize=0):
    """linear_residual with PyTorch's operations."""
    return residual + _eager_linear(y, _lin(weight, scales, zeros), groupsize)


if HAS_CUSTOM_OP:
    @torch.library.custom_op("mtc::norm_linear", mutates_args=())
    def _norm_linear_op(x: torch.Tensor, norm_weight: torch.Tensor,
                        eps: float, weight: torch.Tensor,
                        scales: torch.Tensor, zeros: Optional[torch.Tensor],
                        groupsize: int, rope_table: Optional[torch.Tensor],
                        rope_cols: int) -> torch.Tensor:
        return _norm_linear(x, norm_weight, eps, weight, scales, zeros,
                            groupsize, rope_table, rope_cols)

    @_norm_linear_op.register_fake
    def _(x, norm_weight, eps, weight, scales, zeros, groupsize, rope_table,
          rope_cols):
        n = weight.shape[0]
        return x.new_empty(list(x.shape[:-1]) + [n])

    @torch.library.custom_op("mtc::linear_residual", mutates_args=())
    def _linear_residual_op(y: torch.Tensor, weight: torch.Tensor,
                            scales: torch.Tensor, residual: torch.Tensor,
                            zeros: Optional[torch.Tensor],
                            groupsize: int) -> torch.Tensor:
        return _linear_residual(y, weight, scales, residual, zeros, groupsize)

    @_linear_residual_op.register_fake
    def _(y, weight, scales, residual, zeros, groupsize):
        return torch.empty_like(residual)


def norm_linear(x, norm_weight, eps, weight, scales, zeros=None,
                groupsize=0, rope=None):
    """See the module's docstring: x [..., D] bf16 or f16, norm_weight [D]
    and scales (and zeros) of x's dtype; weight int8 [N, D] with scales
    [N], or with ``zeros`` and ``groupsize`` int4 [N, D / 2] (pack_int4's
    layout) with scales and zeros [N, D / groupsize]; ``rope`` None or
    (table, cols). Returns [..., N]."""
    table, cols = None, 0
    if rope is not None:
        if not isinstance(rope, tuple) or len(rope) != 2:
            raise TypeError(f"rope: expected None or a (table, cols) tuple, "
                            f"got {type(rope).__name__}")
        table, cols = rope
    if HAS_CUSTOM_OP and torch.compiler.is_compiling():
        return torch.ops.mtc.norm_linear(x, norm_weight, eps, weight, scales,
                                         zeros, groupsize, table, cols)
    return _norm_linear(x, norm_weight, eps, weight, scales, zeros, groupsize,
                        table, cols)


def linear_residual(y, weight, scales, residual, zeros=None, groupsize=0):
    """See the module's docstring: y [..., K] bf16 or f16, the weight as in
    norm_linear, residual [..., N] of y's dtype. Returns residual + y W^T
    (times the scales), [..., N]."""
    if HAS_CUSTOM_OP and torch.compiler.is_compiling():
        return torch.ops.mtc.linear_residual(y, weight, scales, residual,
                                             zeros, groupsize)
    return _linear_residual(y, weight, scales, residual, zeros, groupsize)


def _linear_tensors(linear, groupsize):
    """(weight, scales, zeros) of an int8 (zeros None) or int4 linear
    module."""
    return (linear.weight, linear.scales,
            linear.zeros if groupsize else None)
