"""``quantize_``: weight-only int8 or int4 quantization of a model's plain
``nn.Linear`` layers, in place, onto mtc's layers (re-exported by
mtc.torch; import that, not this module).

- int8: symmetric per output channel, as gpt-fast's
  ``WeightOnlyInt8QuantHandler`` does it: ``scale = max|w| / 127.5`` per row,
  ``q = clamp(round(w / scale), -128, 127)``; the layer computes
  ``F.linear(x, q.to(x.dtype)) * scale`` (``WoqLinear``).
- int4: asymmetric per group of ``group_size`` input features, as gpt-fast's
  int4 handler does it: ``scale = (max - min) / 15``, ``zero = min + 8 *
  scale``, ``s = clamp(round((w - zero) / scale), -8, 7)``; the layer
  computes ``F.linear(x, s * scale + zero)`` (``Int4Linear``).

Scales and zeros are kept in the weight's dtype (bf16 or f16). A weight shared
with another module (``lm_head`` tied to the token embedding) is quantized
into a tensor of its own: the other module keeps the original, and a Hugging
Face config's ``tie_word_embeddings`` is cleared so the tie is not restored.
"""
from typing import Callable, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F

from ._int4 import dequantize_int4, pack_int4
from ._routing import check_route
from ._torch_base import DEFAULT_BUCKETS, LayerKey, _DTYPES

QUANTIZE_KINDS = ("int8", "int4")


class QuantizeReport:
    """What quantize_ did: ``quantized``, a list of (name, kind, error) with
    ``error`` the relative error ||y_q - y|| / ||y|| of the layer's outputs on
    random inputs against the unquantized layer (fp32 arithmetic, so it is the
    quantization's error alone), and ``left``, a list of (name, reason) for
    the linear-like modules it did not take."""

    def __init__(self):
        self.quantized: List[Tuple[str, str, float]] = []
        self.left: List[Tuple[str, str]] = []
        self.notes: List[str] = []

    @property
    def max_error(self) -> float:
        return max((e for _, _, e in self.quantized), default=0.0)

    def __str__(self):
        errs = sorted(e for _, _, e in self.quantized)
        lines = [f"mtc.quantize_: {len(self.quantized)} linear layer(s) "
                 f"quantized"]
        if errs:
            lines[0] += (f"; output error vs the unquantized layers: median "
                         f"{errs[len(errs) // 2]:.2e}, max {errs[-1]:.2e}")
        lines += [f"  note: {n}" for n in self.notes]
        lines += [f"  left {name or '(the model)'}: {why}"
                  for name, why in self.left]
        return "\n".join(lines)

    __repr__ = __str__


def quantize_int8(weight: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """(q int8 [N, K], scales [N] of weight's dtype) for a float [N, K]."""
    w = weight.detach().float()
    amax = w.abs().amax(dim=1).clamp(min=1e-12)
    scales = amax / 127.5
    q = torch.clamp(torch.round(w / scales[:, None]), -128, 127)
    return q.to(torch.int8).contiguous(), scales.to(weight.dtype).contiguous()


def quantize_int4(weight: torch.Tensor, group_size: int
                  ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(packed uint8 [N, K/2], scales, zeros [N, K/G] of weight's dtype)."""
    n, k = weight.shape
    w = weight.detach().float().reshape(n, k // group_size, group_size)
    lo, hi = w.amin(dim=-1), w.amax(dim=-1)
    scales = ((hi - lo) / 15).clamp(min=1e-6)
    zeros = lo + 8 * scales
    s = torch.clamp(torch.round((w - zeros[..., None]) / scales[..., None]),
                    -8, 7).to(torch.int8).reshape(n, k)
    return (pack_int4(s), scales.to(weight.dtype).contiguous(),
            zeros.to(weight.dtype).contiguous())


def _why_not(child, kind, group_size) -> Optional[str]:
    """Why a plain nn.Linear cannot be quantized, or None."""
    w = child.weight
    if w.device.type == "meta":
        return "its weight is on the meta device (load the weights first)"
    if w.dtype not in _DTYPES:
        return (f"its weight is {w.dtype}; mtc's layers compute in bf16 or "
                f"f16 (convert the model first, e.g. "
                f"model.to(torch.bfloat16))")
    if child.bias is not None and child.bias.dtype != w.dtype:
        return f"its bias is {child.bias.dtype} and its weight {w.dtype}"
    if kind == "int4" and child.in_features % group_size:
        return (f"in_features = {child.in_features} is not a multiple of "
                f"group_size = {group_size}")
    return None


def _already(child) -> Optional[str]:
    from .torch import Int4Linear, WoqLinear, is_int4_module, is_woq_module
    if isinstance(child, (WoqLinear, Int4Linear)):
        return f"already quantized ({type(child).__name__})"
    if is_woq_module(child) or is_int4_module(child):
        return (f"already quantized ({type(child).__name__}, gpt-fast's "
                f"layout: mtc.torch.swap(model) puts mtc's kernels under it)")
    return None


@torch.no_grad()
def _output_error(w, wq) -> float:
    """||x wq^T - x w^T|| / ||x w^T|| on 8 random rows, in fp32: the
    quantized weight `wq` against the original `w`."""
    gen = torch.Generator(device=w.device).manual_seed(0)
    x = torch.randn(8, w.shape[1], generator=gen, device=w.device)
    ref = F.linear(x, w.float())
    den = ref.norm().item()
    return (F.linear(x, wq) - ref).norm().item() / den if den else 0.0


def _tied(model) -> dict:
    """id(parameter) -> the names it has (more than one where tied)."""
    names = {}
    for prefix, m in model.named_modules(remove_duplicate=False):
        for name, p in m._parameters.items():
            if p is not None:
                names.setdefault(id(p), []).append(
                    f"{prefix}.{name}".lstrip("."))
    return names


def _check_args(model, kind, group_size, filter_fn):
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got "
                        f"{type(model).__name__}")
    if isinstance(model, torch.nn.Linear):
        raise ValueError("model: quantize_ replaces a model's nn.Linear "
                         "modules in place, and this model is itself an "
                         "nn.Linear: wrap it (torch.nn.Sequential(model))")
    if not isinstance(kind, str):
        raise TypeError(f"kind: expected a str, got {type(kind).__name__}")
    if kind not in QUANTIZE_KINDS:
        raise ValueError(f"kind: expected one of {', '.join(QUANTIZE_KINDS)}"
                         f", got {kind!r}")
    if not isinstance(group_size, int) or isinstance(group_size, bool):
        raise TypeError(f"group_size: expected an int, got "
                        f"{type(group_size).__name__}")
    if group_size < 2 or group_size % 2:
        raise ValueError(f"group_size: expected an even int of at least 2, "
                         f"got {group_size}")
    if filter_fn is not None and not callable(filter_fn):
        raise TypeError(f"filter_fn: expected a callable (module, name) -> "
                        f"bool, got {type(filter_fn).__name__}")


def quantize_(model: torch.nn.Module, kind: str = "int8", *,
              group_size: int = 128,
              filter_fn: Optional[Callable[[torch.nn.Module, str], bool]]
              = None,
              buckets: Sequence[int] = DEFAULT_BUCKETS,
              progress: bool = True,
              route: str = "measure") -> QuantizeReport:
    """Quantizes every ``nn.Linear`` of ``model`` (those ``filter_fn(module,
    name)`` accepts, if given) in place: each becomes a ``WoqLinear``
    (``kind="int8"``) or an ``Int4Linear`` (``"int4"``, groups of
    ``group_size`` input features) holding the quantized weight under the
    state-dict key ``weight``, its ``scales`` (and ``zeros``) and the
    original ``bias``. On CUDA it then compiles (or loads from the cache)
    mtc's kernels for every distinct layer over ``buckets`` of M, as
    ``swap`` does, and with ``route="measure"`` routes the buckets where
    PyTorch's fallback measures faster to it (``swap``'s ``route``).
    Returns a QuantizeReport: the layers quantized with their error, and
    those left alone with the reason. Raises ValueError when no layer could
    be quantized.

    A model's state dict after quantize_ loads into another model after the
    same quantize_ call (``load_state_dict``); it does not load into an
    unquantized model, whose keys it does not match."""
    _check_args(model, kind, group_size, filter_fn)
    check_route(route)
    from . import torch as mt
    report = QuantizeReport()
    names = _tied(model)
    todo = []
    for parent_name, parent in model.named_modules():
        for name, child in parent.named_children():
            where = f"{parent_name}.{name}".lstrip(".")
            why = _already(child)
            if why is None and not isinstance(child, torch.nn.Linear):
                continue
            if why is None and type(child).forward is not \
                    torch.nn.Linear.forward:
                why = (f"{type(child).__name__} overrides nn.Linear's "
                       f"forward")
            if why is None and filter_fn is not None and \
                    not filter_fn(child, where):
                why = "filter_fn excluded it"
            if why is None:
                why = _why_not(child, kind, group_size)
            if why:
                report.left.append((where, why))
            else:
                todo.append((parent, name, child, where))
    if not todo:
        reasons = "; ".join(f"{n}: {w}" for n, w in report.left[:3])
        raise ValueError(f"model: no nn.Linear could be quantized to {kind}"
                         + (f" ({reasons})" if reasons else
                            " (it has no nn.Linear)"))
    keys = set()
    for parent, name, child, where in todo:
        w, bias = child.weight, child.bias
        b = bias.detach() if bias is not None else None
        if kind == "int8":
            q, scales = quantize_int8(w)
            new = mt.WoqLinear(q, scales, b)
            wq = q.float() * scales.float()[:, None]
        else:
            q, scales, zeros = quantize_int4(w, group_size)
            new = mt.Int4Linear(q, scales, zeros, group_size, b)
            wq = dequantize_int4(q, scales.float(), zeros.float(), group_size)
        report.quantized.append((where, kind, _output_error(w, wq)))
        others = [n for n in names.get(id(w), [])
                  if n != f"{where}.weight"]
        if others:
            report.notes.append(
                f"{where}: its weight was tied to {', '.join(others)}, which "
                f"keeps the unquantized weight")
            config = getattr(model, "config", None)
            if getattr(config, "tie_word_embeddings", False):
                config.tie_word_embeddings = False
                report.notes.append("config.tie_word_embeddings set to False")
        setattr(parent, name, new)
        if w.device.type == "cuda":
            dev = w.device.index if w.device.index is not None else \
                torch.cuda.current_device()
            keys.add(LayerKey(dev, new.out_features, new.in_features,
                              _DTYPES[w.dtype], b is not None, kind,
                              group_size if kind == "int4" else 0))
    if keys:
        mt.kernels.configure(buckets, False, mt.kernels.max_probes, progress,
                             route)
        mt.kernels.load(keys)
    return report

