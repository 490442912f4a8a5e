"""mtc kernels inside PyTorch.

- ``woq_linear(x, weight, scales, bias=None)`` computes gpt-fast's
  weight-only int8 linear layer, ``F.linear(x, weight.to(x.dtype)) * scales``
  (``+ bias``), with mtc's fused kernels. It is the custom op
  ``torch.ops.mtc.woq_linear`` (with a fake implementation), so
  ``torch.compile(fullgraph=True, mode="reduce-overhead")`` keeps it one node
  and CUDA graphs capture its launches.
- ``swap(model)`` replaces every module that computes that function (gpt-fast's
  ``WeightOnlyInt8Linear`` and any module like it) with ``WoqLinear``, which
  shares the module's tensors, and compiles each distinct shape once.

Row counts (M, all dimensions of x but the last) up to the largest bucket run
mtc's kernels, compiled per bucket of M; a count between two buckets runs the
larger one on zero-padded rows. Beyond the largest bucket (a long prefill)
the layer runs PyTorch's own eager path, a dequantising copy of the weight
and cuBLAS. The default buckets end at 512 because that is where the H200
measurement turns (bench/results/2026-11-30-e2e/routing.md): on all five
Llama-3-8B shapes mtc's kernels beat dequantise + cuBLAS up to M = 512 (by
1.18x to 1.30x there) and lose from M = 1024 on.
"""
import math
import sys
import threading
import time
import warnings
from typing import Dict, Iterable, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F

from . import compiler
from ._tools import MtcError
from .runtime import Artifact

#: Row counts compiled by default (see the module's docstring).
DEFAULT_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
#: Schedules the tuner may try per kernel when asked to tune. Tuning costs
#: 1 to 4 s per kernel on the H200 (Llama-3-8B: 40 kernels in 78 s with 4),
#: so swap() uses the heuristic schedules unless told to tune.
DEFAULT_MAX_PROBES = 4
#: torch.library.custom_op (PyTorch 2.4+) keeps the layer one node under
#: torch.compile; older PyTorch runs woq_linear as a plain function.
HAS_CUSTOM_OP = hasattr(torch.library, "custom_op")

_DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16"}
# sm_90a: Hopper with wgmma and TMA (the wgmma kind, picked from M = 64).
_ARCHS = {(8, 0): "sm_80", (8, 9): "sm_89", (9, 0): "sm_90a"}
ShapeKey = Tuple[int, int, int, str, bool]  # device, N, K, dtype, bias


def graph_name(n: int, k: int, dtype: str, bias: bool) -> str:
    return f"woq_{n}x{k}_{dtype}" + ("_bias" if bias else "")


#===----------------------------------------------------------------------===#
# Argument checks
#===----------------------------------------------------------------------===#

def _tensor(name, v, optional=False):
    if v is None and optional:
        return
    if not isinstance(v, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got "
                        f"{type(v).__name__}")


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
    for name, t in (("weight", weight), ("scales", scales), ("bias", bias)):
        if t is not None and not t.is_contiguous():
            raise ValueError(f"{name}: expected a contiguous tensor, got "
                             f"strides {tuple(t.stride())}; mtc never copies "
                             "weights (call .contiguous() once, at load)")
    if x.device.type != "cuda":
        raise ValueError(f"x: mtc runs on CUDA tensors, got a tensor on "
                         f"{x.device}")
    for name, t in (("weight", weight), ("scales", scales), ("bias", bias)):
        if t is not None and t.device != x.device:
            raise ValueError(f"{name}: on {t.device}, but x is on {x.device}")
    return n, k


def _check_aligned(name, t):
    if t.data_ptr() % 16:
        raise ValueError(f"{name}: its data must be 16-byte aligned (a "
                         f"tensor of its own, not a view at an offset); got "
                         f"address {t.data_ptr():#x}")


#===----------------------------------------------------------------------===#
# Compiled layers, per device and shape
#===----------------------------------------------------------------------===#

class Kernels:
    """The artifacts loaded in this process, one per (device, N, K, dtype,
    bias), all compiled over the same buckets with the same tuning
    settings."""

    def __init__(self, buckets=DEFAULT_BUCKETS, tune=False,
                 max_probes=DEFAULT_MAX_PROBES, progress=True):
        self._artifacts: Dict[ShapeKey, Artifact] = {}
        self._retired = []
        self._lock = threading.Lock()
        self.configure(buckets, tune, max_probes, progress)

    def configure(self, buckets, tune, max_probes, progress):
        """New settings for what is loaded from now on. Artifacts loaded
        under other settings are no longer handed out, but stay loaded:
        CUDA graphs captured earlier may still launch their kernels."""
        buckets = tuple(compiler._check_buckets(buckets))
        if max_probes is not None and (not isinstance(max_probes, int) or
                                       max_probes < 1):
            raise ValueError(f"max_probes: expected a positive int, got "
                             f"{max_probes!r}")
        settings = (buckets, bool(tune), max_probes)
        with self._lock:
            if settings != getattr(self, "_settings", settings):
                self._retired.extend(self._artifacts.values())
                self._artifacts = {}
            self._settings = settings
            self.buckets, self.tune, self.max_probes = settings
            self.progress = progress

    @property
    def largest(self):
        return self.buckets[-1]

    def get(self, key: ShapeKey) -> Artifact:
        a = self._artifacts.get(key)
        if a is not None:
            return a
        if torch.cuda.is_current_stream_capturing():
            raise MtcError(
                f"mtc: no kernel is loaded for {graph_name(*key[1:])} on "
                f"cuda:{key[0]}, and none can be compiled while a CUDA graph "
                "is being captured: call mtc.torch.swap(model) (or run the "
                "layer once) before capturing")
        self.load([key])
        return self._artifacts[key]

    def load(self, keys: Iterable[ShapeKey]):
        """Compiles (or finds in the artifact cache) and loads every key not
        loaded yet: one mtc run per device."""
        with self._lock:
            todo = sorted({k for k in keys if k not in self._artifacts})
            for dev in sorted({k[0] for k in todo}):
                mine = [k for k in todo if k[0] == dev]
                self._load_device(dev, mine)

    def _load_device(self, dev, keys):
        arch, name = _device_arch(dev)
        graphs = {graph_name(*k[1:]): compiler.linear_graph(
            graph_name(*k[1:]), k[1], k[2], k[3], k[4]) for k in keys}
        report = compiler.print_progress if self.progress else None
        start = time.monotonic()
        paths = compiler.compile_graphs(
            graphs, self.buckets, arch=arch, tune=self.tune,
            max_probes=self.max_probes,
            device=f"{name}|{arch}|cuda {torch.version.cuda}",
            progress=report)
        with torch.cuda.device(dev):
            torch.cuda.synchronize()  # makes the device's context current
            for k in keys:
                self._artifacts[k] = Artifact(paths[graph_name(*k[1:])])
        if report:
            report(f"{len(keys)} linear shape(s) x {len(self.buckets)} "
                   f"buckets ready on cuda:{dev} ({name}) in "
                   f"{time.monotonic() - start:.1f} s")


def _device_arch(dev):
    cc = torch.cuda.get_device_capability(dev)
    name = torch.cuda.get_device_name(dev)
    arch = _ARCHS.get(tuple(cc))
    if arch is None:
        raise MtcError(f"mtc: cuda:{dev} ({name}) is sm_{cc[0]}{cc[1]}; mtc "
                       f"compiles for {', '.join(_ARCHS.values())}")
    return arch, name


kernels = Kernels()


def _woq_linear(x, weight, scales, bias, checked=None):
    n, k = checked or check_args(x, weight, scales, bias)
    lead = tuple(x.shape[:-1])
    m = math.prod(lead)
    if m == 0:
        return x.new_empty(*lead, n)
    x2 = x.reshape(m, k)
    art = bucket = None
    if m <= kernels.largest:
        key = (x.device.index if x.device.index is not None
               else torch.cuda.current_device(), n, k, _DTYPES[x.dtype],
               bias is not None)
        art = kernels.get(key)
        bucket = art.bucket_for(m)
    if bucket is None:
        # Beyond the largest bucket (a long prefill): PyTorch's eager path
        # (see the module's docstring).
        out = F.linear(x2, weight.to(x.dtype)) * scales
        if bias is not None:
            out = out + bias
        return out.reshape(*lead, n)
    if not x2.is_contiguous() or x2.data_ptr() % 16:
        x2 = x2.contiguous() if not x2.is_contiguous() else x2.clone()
    for name, t in (("weight", weight), ("scales", scales), ("bias", bias)):
        if t is not None:
            _check_aligned(name, t)
    if bucket != m:
        x2 = F.pad(x2, (0, 0, 0, bucket - m))
    out = torch.empty(bucket, n, dtype=x.dtype, device=x.device)
    ins = [x2.data_ptr(), weight.data_ptr(), scales.data_ptr()]
    if bias is not None:
        ins.append(bias.data_ptr())
    art.launch(m, torch.cuda.current_stream(x.device).cuda_stream, ins,
               [out.data_ptr()])
    if bucket != m:
        out = out[:m]
    return out.reshape(*lead, n)


if HAS_CUSTOM_OP:
    @torch.library.custom_op("mtc::woq_linear", mutates_args=())
    def _woq_linear_op(x: torch.Tensor, weight: torch.Tensor,
                       scales: torch.Tensor,
                       bias: Optional[torch.Tensor] = None) -> torch.Tensor:
        return _woq_linear(x, weight, scales, bias)

    @_woq_linear_op.register_fake
    def _(x, weight, scales, bias=None):
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


#===----------------------------------------------------------------------===#
# Modules
#===----------------------------------------------------------------------===#

class WoqLinear(torch.nn.Module):
    """A weight-only int8 linear layer on mtc kernels. It holds the very
    tensors it is given (``weight`` int8 [N, K], ``scales`` [N], optional
    ``bias`` [N]) under those names, so state dicts keep their keys."""

    def __init__(self, weight, scales, bias=None):
        super().__init__()
        check_tensors(weight, scales, bias)
        self.in_features = weight.shape[1]
        self.out_features = weight.shape[0]
        self.register_buffer("weight", weight)
        self.register_buffer("scales", scales)
        self.register_buffer("bias", bias)

    def forward(self, x):
        return woq_linear(x, self.weight, self.scales, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, "
                f"out_features={self.out_features}, "
                f"bias={self.bias is not None}, dtype={self.scales.dtype}")


def check_tensors(weight, scales, bias=None):
    """The checks of check_args that need no activations."""
    _tensor("weight", weight)
    _tensor("scales", scales)
    _tensor("bias", bias, optional=True)
    if weight.dtype != torch.int8:
        raise TypeError(f"weight: expected dtype torch.int8, got "
                        f"{weight.dtype}")
    if scales.dtype not in _DTYPES:
        raise TypeError(f"scales: expected dtype torch.bfloat16 or "
                        f"torch.float16, got {scales.dtype}")
    if weight.dim() != 2:
        raise ValueError(f"weight: expected shape [N, K], got "
                         f"{list(weight.shape)}")
    for name, t in (("scales", scales), ("bias", bias)):
        if t is not None and list(t.shape) != [weight.shape[0]]:
            raise ValueError(f"{name}: expected shape [{weight.shape[0]}] (N "
                             f"of weight), got {list(t.shape)}")
    if bias is not None and bias.dtype != scales.dtype:
        raise TypeError(f"bias: expected dtype {scales.dtype} (the dtype of "
                        f"scales), got {bias.dtype}")


def is_woq_module(m: torch.nn.Module) -> bool:
    """Whether `m` looks like gpt-fast's WeightOnlyInt8Linear: no children,
    an int8 ``weight`` [N, K], a bf16/f16 ``scales`` [N] and no bias or a
    ``bias`` [N]. (swap() also checks that it computes the same function.)"""
    if isinstance(m, WoqLinear) or next(m.children(), None) is not None:
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


def swap(model: torch.nn.Module, *, buckets: Sequence[int] = DEFAULT_BUCKETS,
         tune: bool = False, max_probes: Optional[int] = DEFAULT_MAX_PROBES,
         progress: bool = True, verify: bool = True) -> torch.nn.Module:
    """Replaces, in place, every module of ``model`` that computes
    ``F.linear(x, weight.to(x.dtype)) * scales`` with a WoqLinear sharing
    its tensors, and compiles each distinct (N, K, dtype) once over
    ``buckets`` of M: with mtc's heuristic schedules, or with ``tune``
    autotuned on the GPU (at most ``max_probes`` schedules per kernel, with
    progress). Artifacts and tunings are cached on disk, so a second run
    loads them in well under a second. With ``verify``,
    the first module of each class is run both ways on random rows first,
    and classes that disagree are left alone with a warning. Returns
    ``model``."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got "
                        f"{type(model).__name__}")
    kernels.configure(buckets, tune, max_probes, progress)
    start = time.monotonic()
    found = []
    for parent_name, parent in model.named_modules():
        for name, child in parent.named_children():
            if is_woq_module(child):
                found.append((parent, name, child,
                              f"{parent_name}.{name}".lstrip(".")))
    for *_, child, where in found:
        if child.weight.device.type != "cuda":
            raise ValueError(f"model: module '{where}' is on "
                             f"{child.weight.device}; move the model to a "
                             "CUDA device before swap()")
        check_args(torch.empty(0, child.weight.shape[1],
                               dtype=child.scales.dtype,
                               device=child.weight.device),
                   child.weight, child.scales, getattr(child, "bias", None))
    keys = {(c.weight.device.index, c.weight.shape[0], c.weight.shape[1],
             _DTYPES[c.scales.dtype], getattr(c, "bias", None) is not None)
            for _, _, c, _ in found}
    kernels.load(keys)

    rejected = set()
    if verify:
        seen = set()
        for _, _, child, where in found:
            cls = type(child)
            if cls in seen:
                continue
            seen.add(cls)
            err = _compare(child)
            if err > 2e-2:
                rejected.add(cls)
                warnings.warn(
                    f"mtc: not swapping {cls.__name__} modules ('{where}' and "
                    f"the like): their forward does not compute "
                    f"F.linear(x, weight.to(x.dtype)) * scales (max rel err "
                    f"{err:.2e} against mtc)", stacklevel=2)
    swapped = 0
    for parent, name, child, _ in found:
        if type(child) in rejected:
            continue
        setattr(parent, name, WoqLinear(child.weight, child.scales,
                                        getattr(child, "bias", None)))
        swapped += 1
    if progress:
        compiler.print_progress(
            f"swapped {swapped} linear module(s) ({len(keys)} shape(s)) in "
            f"{time.monotonic() - start:.1f} s")
    return model


@torch.no_grad()
def _compare(module) -> float:
    """Max relative error of WoqLinear against `module` on 3 random rows."""
    k = module.weight.shape[1]
    gen = torch.Generator(device=module.weight.device).manual_seed(0)
    x = torch.randn(3, k, generator=gen, device=module.weight.device,
                    dtype=module.scales.dtype)
    ref = module(x).float()
    out = woq_linear(x, module.weight, module.scales,
                     getattr(module, "bias", None)).float()
    if ref.shape != out.shape:
        return math.inf
    scale = ref.abs().max().item() or 1.0
    return (out - ref).abs().max().item() / scale
