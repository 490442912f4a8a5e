"""mtc kernels inside PyTorch.

- ``woq_linear(x, weight, scales, bias=None)`` computes gpt-fast's
  weight-only int8 linear layer, ``F.linear(x, weight.to(x.dtype)) * scales``
  (``+ bias``), with mtc's fused kernels. It is the custom op
  ``torch.ops.mtc.woq_linear`` (with a fake implementation), so
  ``torch.compile(fullgraph=True, mode="reduce-overhead")`` keeps it one node
  and CUDA graphs capture its launches.
- ``woq_int4_linear(x, weight, scales, zeros, groupsize, bias=None)`` is the
  weight-only int4 layer with group-wise scales and zeros, ``F.linear(x, W)``
  with W[n, k] = s[n, k] * scales[n, k // G] + zeros[n, k // G] for signed
  int4 s packed two to a byte (``pack_int4``); the custom op
  ``torch.ops.mtc.woq_int4_linear``, likewise.
- ``swap(model)`` replaces every module that computes the int8 function
  (gpt-fast's ``WeightOnlyInt8Linear`` and any module like it) with
  ``WoqLinear``, which shares the module's tensors, and every gpt-fast
  ``WeightOnlyInt4Linear`` with ``Int4Linear``, which holds its tensors
  repacked once from tinygemm's layout; it compiles each distinct shape once.
- ``quantize_(model, "int8" | "int4", group_size=128, filter_fn=None)``
  quantizes a model's plain ``nn.Linear`` layers in place onto
  ``WoqLinear`` / ``Int4Linear`` (``mtc._quantize``), for models that were
  not quantized gpt-fast's way (a Hugging Face model).
- ``fuse_blocks(model)`` (after ``swap``, or on gpt-fast's int8 model)
  routes the feed-forward half of every gpt-fast ``TransformerBlock`` (its
  RMSNorm, SwiGLU and residual around three int8 or int4 linears) through
  ``fused_ffn`` or ``fused_ffn_int4``, one mtc graph (``mtc._fused``,
  ``mtc._fuse_blocks``), and its attention's linears through
  ``norm_linear`` (the attention norm into ``wqkv``) and
  ``linear_residual`` (``x + wo(y)``; ``mtc._fused_linear``), for calls
  of up to ``max_rows`` rows (default 8; larger ones run unfused); its
  grouped-query attention reads the KV cache without gpt-fast's copy of
  it per query head (``grouped_attention``), and where ``wqkv`` is fused a
  decode step's rotary embedding of q and k is ``wqkv``'s epilogue
  (``norm_linear``'s ``rope``); its KV cache becomes a ``PairedKVCache``
  (keys and values in one buffer, written by one kernel;
  ``mtc._fused_attention``).

Row counts (M, all dimensions of x but the last) up to the largest bucket run
mtc's kernels, compiled per bucket of M; a count between two buckets runs the
larger one on zero-padded rows. Beyond the largest bucket (a long prefill),
and at the buckets where ``swap``/``quantize_`` measured it faster on the
GPU at hand (``route="measure"``, ``mtc._routing``), the layer runs
PyTorch's own eager path, a dequantising copy of the weight and cuBLAS.
The default buckets end at 512 because that is where the H200
measurement of the int8 layer turns (bench/results/2026-11-30-e2e/routing.md):
on all five Llama-3-8B shapes mtc's kernels beat dequantise + cuBLAS up to
M = 512 (by 1.18x to 1.30x there) and lose from M = 1024 on. The int4 layer
uses the same buckets; it has not been measured there.
"""
import math
import time
import warnings
from typing import Optional, Sequence, Tuple

import torch
import torch.nn.functional as F

from . import compiler
from ._fuse_blocks import fuse_blocks
from ._fused_attention import PairedKVCache
from ._fused import (check_ffn_args, check_ffn_int4_args, ffn_graph,
                     fused_ffn, fused_ffn_eager, fused_ffn_int4,
                     fused_ffn_int4_eager)
from ._fused_linear import (linear_residual, linear_residual_eager,
                            linear_residual_graph, norm_linear,
                            norm_linear_eager, norm_linear_graph, rope_eager)
from ._int4 import (check_int4_args, check_int4_tensors, dequantize_int4,
                    int4_linear_eager, int4_module_shape, is_int4_module,
                    pack_int4, repack_gpt_fast_int4, tinygemm_nibbles,
                    unpack_int4)
from ._quantize import (QUANTIZE_KINDS, QuantizeReport, quantize_,
                        quantize_int4, quantize_int8)
from ._tools import MtcError
from ._torch_base import (DEFAULT_BUCKETS, DEFAULT_MAX_PROBES, HAS_CUSTOM_OP,
                          KINDS, Kernels, LayerKey, ShapeKey, _DTYPES,
                          _contiguous, _on_cuda_with, _tensor, check_tensors,
                          graph_name,
                          int4_graph_name, run_layer, woq_linear_eager)
from .runtime import Artifact

__all__ = [
    "Artifact", "DEFAULT_BUCKETS", "DEFAULT_MAX_PROBES", "HAS_CUSTOM_OP",
    "check_ffn_args", "check_ffn_int4_args", "ffn_graph", "fuse_blocks",
    "fused_ffn", "fused_ffn_eager", "fused_ffn_int4", "fused_ffn_int4_eager",
    "Int4Linear", "KINDS", "Kernels", "LayerKey", "MtcError",
    "PairedKVCache", "ShapeKey",
    "WoqLinear", "check_args", "check_int4_args", "check_int4_tensors",
    "check_tensors", "dequantize_int4", "graph_name", "int4_graph_name",
    "int4_linear_eager", "int4_module_shape", "is_int4_module",
    "is_woq_module", "kernels", "linear_residual", "linear_residual_eager",
    "linear_residual_graph", "norm_linear", "norm_linear_eager",
    "norm_linear_graph", "pack_int4", "repack_gpt_fast_int4", "rope_eager",
    "swap", "tinygemm_nibbles", "unpack_int4", "woq_int4_linear", "woq_linear",
    "woq_linear_eager",
    "QUANTIZE_KINDS", "QuantizeReport", "quantize_", "quantize_int4",
    "quantize_int8",
]

#===----------------------------------------------------------------------===#
# int8: argument checks
#===----------------------------------------------------------------------===#

def check_args(x, weight, scales, bias=None) -> Tuple[int, int]:
    """Checks woq_linear's arguments; returns (N, K). Raises TypeError for a
    wrong type or dtype and ValueError for a wrong shape, device or layout,
    naming the argument."""
    _tensor("x", x)
    _tensor("weight", weight)
    _tensor("scales", scales)
    _tensor("bias", bias, optional=True)
    if x.dtype not in _DTYPES:
        raise TypeError(f"x: expected dtype torch.bfloat16 or torch.float16, "
                        f"got {x.dtype}")
    if weight.dtype != torch.int8:
        raise TypeError(f"weight: expected dtype torch.int8, got "
                        f"{weight.dtype}")
    for name, t in (("scales", scales), ("bias", bias)):
        if t is not None and t.dtype != x.dtype:
            raise TypeError(f"{name}: expected dtype {x.dtype} (the dtype of "
                            f"x), got {t.dtype}")
    if weight.dim() != 2:
        raise ValueError(f"weight: expected shape [N, K], got "
                         f"{list(weight.shape)}")
    n, k = weight.shape
    if n < 1 or k < 1:
        raise ValueError(f"weight: expected a non-empty [N, K], got "
                         f"{list(weight.shape)}")
    if x.dim() < 1 or x.shape[-1] != k:
        raise ValueError(f"x: expected shape [..., {k}] (K of weight), got "
                         f"{list(x.shape)}")
    for name, t in (("scales", scales), ("bias", bias)):
        if t is not None and list(t.shape) != [n]:
            raise ValueError(f"{name}: expected shape [{n}] (N of weight), "
                             f"got {list(t.shape)}")
    _contiguous((("weight", weight), ("scales", scales), ("bias", bias)))
    _on_cuda_with(x, (("weight", weight), ("scales", scales), ("bias", bias)))
    return n, k

#===----------------------------------------------------------------------===#
# The layers
#===----------------------------------------------------------------------===#

#: The compiled layers of this process (replace it to start afresh).
kernels = Kernels()


def _woq_linear(x, weight, scales, bias, checked=None):
    n, k = checked or check_args(x, weight, scales, bias)

    return run_layer(kernels, x, n, k, "int8", 0,
                     (("weight", weight), ("scales", scales)), bias,
                     lambda x2: woq_linear_eager(x2, weight, scales, bias))


def _woq_int4_linear(x, weight, scales, zeros, groupsize, bias, checked=None):
    n, k = checked or check_int4_args(x, weight, scales, zeros, groupsize,
                                      bias)
    return run_layer(
        kernels, x, n, k, "int4", groupsize,
        (("weight", weight), ("scales", scales), ("zeros", zeros)), bias,
        lambda x2: int4_linear_eager(x2, weight, scales, zeros, groupsize,
                                     bias))


if HAS_CUSTOM_OP:
    @torch.library.custom_op("mtc::woq_linear", mutates_args=())
    def _woq_linear_op(x: torch.Tensor, weight: torch.Tensor,
                       scales: torch.Tensor,
                       bias: Optional[torch.Tensor] = None) -> torch.Tensor:
        return _woq_linear(x, weight, scales, bias)

    @_woq_linear_op.register_fake
    def _(x, weight, scales, bias=None):
        return x.new_empty(*x.shape[:-1], weight.shape[0])

    @torch.library.custom_op("mtc::woq_int4_linear", mutates_args=())
    def _woq_int4_linear_op(x: torch.Tensor, weight: torch.Tensor,
                            scales: torch.Tensor, zeros: torch.Tensor,
                            groupsize: int,
                            bias: Optional[torch.Tensor] = None
                            ) -> torch.Tensor:
        return _woq_int4_linear(x, weight, scales, zeros, groupsize, bias)

    @_woq_int4_linear_op.register_fake
    def _(x, weight, scales, zeros, groupsize, bias=None):
        return x.new_empty(*x.shape[:-1], weight.shape[0])


def woq_linear(x: torch.Tensor, weight: torch.Tensor, scales: torch.Tensor,
               bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """``F.linear(x, weight.to(x.dtype)) * scales`` (``+ bias``) with mtc's
    kernels: x [..., K] bf16 or f16 on a CUDA device, weight int8 [N, K],
    scales [N] and bias [N] of x's dtype, all on x's device and contiguous.
    Returns [..., N] of x's dtype."""
    checked = check_args(x, weight, scales, bias)
    # The custom op is what torch.compile needs; eagerly, calling its
    # implementation directly saves the dispatcher's Python round trip
    # (about 0.1 ms a call: it made an eager 512-token prefill CPU-bound).
    if HAS_CUSTOM_OP and torch.compiler.is_compiling():
        return torch.ops.mtc.woq_linear(x, weight, scales, bias)
    return _woq_linear(x, weight, scales, bias, checked)


def woq_int4_linear(x: torch.Tensor, weight: torch.Tensor,
                    scales: torch.Tensor, zeros: torch.Tensor, groupsize: int,
                    bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """``F.linear(x, W)`` (``+ bias``) with mtc's kernels for the int4
    weight W[n, k] = s[n, k] * scales[n, k // G] + zeros[n, k // G], G =
    ``groupsize``: x [..., K] bf16 or f16 on a CUDA device; weight uint8 (or
    int8) [N, K/2], the signed int4 s two to a byte (``pack_int4``: s[n, 2j]
    in the low nibble of byte j); scales and zeros [N, K/G] and bias [N] of
    x's dtype; G dividing K; all on x's device, contiguous and 16-byte
    aligned. Returns [..., N] of x's dtype. Beyond the largest bucket it
    dequantises with PyTorch (``dequantize_int4``) and runs F.linear."""
    checked = check_int4_args(x, weight, scales, zeros, groupsize, bias)
    if HAS_CUSTOM_OP and torch.compiler.is_compiling():
        return torch.ops.mtc.woq_int4_linear(x, weight, scales, zeros,
                                             groupsize, bias)
    return _woq_int4_linear(x, weight, scales, zeros, groupsize, bias,
                            checked)


#===----------------------------------------------------------------------===#
# Modules and swap()
#===----------------------------------------------------------------------===#

class WoqLinear(torch.nn.Module):
    """A weight-only int8 linear layer on mtc kernels. It holds the very
    tensors it is given (``weight`` int8 [N, K], ``scales`` [N], optional
    ``bias`` [N]) under those names, so state dicts keep their keys. Off
    CUDA (a model on the CPU) it computes its formula with PyTorch."""

    def __init__(self, weight, scales, bias=None):
        super().__init__()
        check_tensors(weight, scales, bias)
        self.in_features = weight.shape[1]
        self.out_features = weight.shape[0]
        self.register_buffer("weight", weight)
        self.register_buffer("scales", scales)
        self.register_buffer("bias", bias)

    def forward(self, x):
        if x.device.type != "cuda":  # no mtc kernels: the eager formula
            return woq_linear_eager(x, self.weight, self.scales, self.bias)
        return woq_linear(x, self.weight, self.scales, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, "
                f"out_features={self.out_features}, "
                f"bias={self.bias is not None}, dtype={self.scales.dtype}")


def is_woq_module(m: torch.nn.Module) -> bool:
    """Whether `m` looks like gpt-fast's WeightOnlyInt8Linear: no children,
    an int8 ``weight`` [N, K], a bf16/f16 ``scales`` [N] and no bias or a
    ``bias`` [N]. (swap() also checks that it computes the same function.)"""
    if isinstance(m, (WoqLinear, Int4Linear)) or \
            next(m.children(), None) is not None:
        return False
    w, s = getattr(m, "weight", None), getattr(m, "scales", None)
    b = getattr(m, "bias", None)
    if not isinstance(w, torch.Tensor) or not isinstance(s, torch.Tensor):
        return False
    if b is not None and not isinstance(b, torch.Tensor):
        return False
    try:
        check_tensors(w, s, b)
    except (TypeError, ValueError):
        return False
    return True


class Int4Linear(torch.nn.Module):
    """A weight-only int4 linear layer on mtc kernels (woq_int4_linear),
    holding ``weight`` uint8 [N, K/2] (pack_int4's layout), ``scales`` and
    ``zeros`` [N, K/G] and an optional ``bias`` [N] under those names (its
    state dict's keys), and ``groupsize`` G. swap() makes them from gpt-fast
    modules with repack_gpt_fast_int4. Like gpt-fast's WeightOnlyInt4Linear,
    it casts x to the dtype of its scales and, for ``origin_in_features`` <
    K, takes x of that many features and zero-pads it to K."""

    def __init__(self, weight, scales, zeros, groupsize, bias=None,
                 origin_in_features=None):
        super().__init__()
        n, k = check_int4_tensors(weight, scales, zeros, groupsize, bias)
        origin = k if origin_in_features is None else origin_in_features
        if not isinstance(origin, int) or isinstance(origin, bool) or \
                not 1 <= origin <= k:
            raise ValueError(f"origin_in_features: expected an int from 1 to "
                             f"K = {k}, got {origin_in_features!r}")
        self.in_features = k
        self.out_features = n
        self.origin_in_features = origin
        self.groupsize = groupsize
        self.register_buffer("weight", weight)
        self.register_buffer("scales", scales)
        self.register_buffer("zeros", zeros)
        self.register_buffer("bias", bias)

    def forward(self, x):
        x = x.to(self.scales.dtype)
        if self.origin_in_features != self.in_features:
            if x.shape[-1] != self.origin_in_features:
                raise ValueError(
                    f"x: expected shape [..., {self.origin_in_features}] "
                    f"(origin_in_features), got {list(x.shape)}")
            x = F.pad(x, (0, self.in_features - self.origin_in_features))
        if x.device.type != "cuda":  # no mtc kernels: the eager formula
            return int4_linear_eager(x, self.weight, self.scales, self.zeros,
                                     self.groupsize, self.bias)
        return woq_int4_linear(x, self.weight, self.scales, self.zeros,
                               self.groupsize, self.bias)

    def extra_repr(self):
        pad = (f", origin_in_features={self.origin_in_features}"
               if self.origin_in_features != self.in_features else "")
        return (f"in_features={self.in_features}{pad}, "
                f"out_features={self.out_features}, "
                f"groupsize={self.groupsize}, "
                f"bias={self.bias is not None}, dtype={self.scales.dtype}")


_FUNCTIONS = {"int8": "F.linear(x, weight.to(x.dtype)) * scales",
              "int4": "aten._weight_int4pack_mm(x, weight, groupsize, "
                      "scales_and_zeros)"}


def _layer_key(child, kind, where) -> LayerKey:
    """The layer swap() compiles for ``child``, after its checks."""
    dev = child.weight.device
    if dev.type != "cuda":
        raise ValueError(f"model: module '{where}' is on {dev}; move the "
                         "model to a CUDA device before swap()")
    bias = getattr(child, "bias", None)
    if kind == "int8":
        n, k = check_args(torch.empty(0, child.weight.shape[1],
                                      dtype=child.scales.dtype, device=dev),
                          child.weight, child.scales, bias)
        return LayerKey(dev.index, n, k, _DTYPES[child.scales.dtype],
                        bias is not None)
    n, k, _ = int4_module_shape(child)
    for name, t in (("scales_and_zeros", child.scales_and_zeros),
                    ("bias", bias)):
        if t is not None and t.device != dev:
            raise ValueError(f"model: module '{where}' has its {name} on "
                             f"{t.device} and its weight on {dev}")
    return LayerKey(dev.index, n, k, _DTYPES[child.scales_and_zeros.dtype],
                    bias is not None, "int4", child.groupsize)


def _replacement(child, kind) -> torch.nn.Module:
    bias = getattr(child, "bias", None)
    if kind == "int8":
        return WoqLinear(child.weight, child.scales, bias)
    weight, scales, zeros = repack_gpt_fast_int4(child)
    return Int4Linear(weight, scales, zeros, child.groupsize, bias,
                      origin_in_features=int4_module_shape(child)[2])


def swap(model: torch.nn.Module, *, buckets: Sequence[int] = DEFAULT_BUCKETS,
         tune: bool = False, max_probes: Optional[int] = DEFAULT_MAX_PROBES,
         progress: bool = True, verify: bool = True,
         route: str = "measure") -> torch.nn.Module:
    """Replaces, in place, every module of ``model`` that computes
    ``F.linear(x, weight.to(x.dtype)) * scales`` with a WoqLinear sharing
    its tensors, and every module that looks like gpt-fast's
    WeightOnlyInt4Linear (``is_int4_module``) with an Int4Linear holding its
    tensors repacked once from tinygemm's layout (``repack_gpt_fast_int4``,
    which reads them with ``aten._weight_int4pack_mm``). It compiles each
    distinct (N, K, dtype, bias; and group size for int4) once over
    ``buckets`` of M: with mtc's heuristic schedules, or with ``tune``
    autotuned on the GPU (at most ``max_probes`` schedules per kernel, with
    progress). Artifacts and tunings are cached on disk, so a second run
    loads them in well under a second. With ``verify``, the first module of
    each class is run both ways on random rows first, and classes that
    disagree are left alone with a warning. With ``route="measure"``, each
    shape's buckets where PyTorch's fallback (dequantise + cuBLAS) measures
    faster on this GPU run the fallback (``mtc._routing``; the times are
    cached with the artifacts, ``kernels.times`` holds them); ``"mtc"``
    runs mtc's kernels up to the largest bucket. Returns ``model``."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got "
                        f"{type(model).__name__}")
    kernels.configure(buckets, tune, max_probes, progress, route)
    start = time.monotonic()
    found = []
    for parent_name, parent in model.named_modules():
        for name, child in parent.named_children():
            kind = ("int8" if is_woq_module(child) else
                    "int4" if is_int4_module(child) else None)
            if kind:
                found.append((parent, name, child, kind,
                              f"{parent_name}.{name}".lstrip(".")))
    keys = {_layer_key(child, kind, where)
            for _, _, child, kind, where in found}
    kernels.load(keys)

    made = {}  # id(child) -> its replacement, made for verify
    rejected = set()
    if verify:
        seen = set()
        for _, _, child, kind, where in found:
            cls = type(child)
            if cls in seen:
                continue
            seen.add(cls)
            made[id(child)] = _replacement(child, kind)
            err = _compare(child, made[id(child)])
            if err > 2e-2:
                rejected.add(cls)
                warnings.warn(
                    f"mtc: not swapping {cls.__name__} modules ('{where}' and "
                    f"the like): their forward does not compute "
                    f"{_FUNCTIONS[kind]} (max rel err {err:.2e} against mtc)",
                    stacklevel=2)
    swapped = 0
    for parent, name, child, kind, _ in found:
        if type(child) in rejected:
            continue
        new = made.pop(id(child), None)
        setattr(parent, name, new if new is not None
                else _replacement(child, kind))
        swapped += 1
    if progress:
        compiler.print_progress(
            f"swapped {swapped} linear module(s) ({len(keys)} shape(s)) in "
            f"{time.monotonic() - start:.1f} s")
    return model


@torch.no_grad()
def _compare(module, replacement) -> float:
    """Max relative error of ``replacement`` against ``module`` on 3 random
    rows."""
    k = getattr(replacement, "origin_in_features", replacement.in_features)
    dev = replacement.weight.device
    gen = torch.Generator(device=dev).manual_seed(0)
    x = torch.randn(3, k, generator=gen, device=dev,
                    dtype=replacement.scales.dtype)
    ref = module(x).float()
    out = replacement(x).float()
    if ref.shape != out.shape:
        return math.inf
    scale = ref.abs().max().item() or 1.0
    return (out - ref).abs().max().item() / scale
