"""What mtc.torch's layers share: the compiled-layer cache (``Kernels``,
keyed per layer kind and shape), running a layer on mtc's kernels or on its
eager fallback (``run_layer``), and the argument helpers. Import mtc.torch,
not this module: mtc.torch holds the process's ``kernels``."""
import math
import threading
import time
from typing import Callable, Dict, Iterable, NamedTuple, Optional, Sequence, \
    Tuple

import torch
import torch.nn.functional as F

from . import _routing, compiler
from ._tools import MtcError
from .runtime import Artifact

#: Row counts compiled by default (see mtc.torch's docstring).
DEFAULT_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
#: Schedules the tuner may try per kernel when asked to tune. Tuning costs
#: 1 to 4 s per kernel on the H200 (Llama-3-8B: 40 kernels in 78 s with 4),
#: so swap() uses the heuristic schedules unless told to tune.
DEFAULT_MAX_PROBES = 4
#: torch.library.custom_op (PyTorch 2.4+) keeps the layers one node under
#: torch.compile; older PyTorch runs them as plain functions.
HAS_CUSTOM_OP = hasattr(torch.library, "custom_op")

_DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16"}
#: Layer kinds: gpt-fast's int8 per-channel layer (woq_linear) and the int4
#: layer with group-wise scales and zeros (woq_int4_linear).
KINDS = ("int8", "int4")


def woq_linear_eager(x: torch.Tensor, weight: torch.Tensor,
                     scales: torch.Tensor,
                     bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """The int8 layer in PyTorch, on any device: gpt-fast's
    ``F.linear(x, weight.to(x.dtype)) * scales`` (``+ bias``). What
    woq_linear runs beyond its largest bucket and WoqLinear off CUDA."""
    out = F.linear(x, weight.to(x.dtype)) * scales
    return out + bias if bias is not None else out


def graph_name(n: int, k: int, dtype: str, bias: bool) -> str:
    """The graph name of an int8 layer (woq_linear)."""
    return f"woq_{n}x{k}_{dtype}" + ("_bias" if bias else "")


def int4_graph_name(n: int, k: int, group: int, dtype: str,
                    bias: bool) -> str:
    """The graph name of an int4 layer in groups of ``group``."""
    return f"woq4_{n}x{k}_g{group}_{dtype}" + ("_bias" if bias else "")


class LayerKey(NamedTuple):
    """One compiled layer on one device: what one artifact computes. A plain
    (device, N, K, dtype, bias) tuple is the int8 layer."""
    device: int
    n: int
    k: int
    dtype: str  # "bf16" or "f16"
    bias: bool
    kind: str = "int8"  # one of KINDS
    group: int = 0  # int4: the group size of scales and zeros

    def graph_name(self) -> str:
        if self.kind == "int8":
            return graph_name(self.n, self.k, self.dtype, self.bias)
        if self.kind == "int4":
            return int4_graph_name(self.n, self.k, self.group, self.dtype,
                                   self.bias)
        raise ValueError(f"kind: expected one of {KINDS}, got {self.kind!r}")

    def graph_text(self) -> str:
        name = self.graph_name()
        if self.kind == "int8":
            return compiler.linear_graph(name, self.n, self.k, self.dtype,
                                         self.bias)
        return compiler.int4_linear_graph(name, self.n, self.k, self.group,
                                          self.dtype, self.bias)


ShapeKey = LayerKey  # the name of earlier versions


#===----------------------------------------------------------------------===#
# Argument helpers
#===----------------------------------------------------------------------===#

def _tensor(name, v, optional=False):
    if v is None and optional:
        return
    if not isinstance(v, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got "
                        f"{type(v).__name__}")


def _contiguous(named):
    for name, t in named:
        if t is not None and not t.is_contiguous():
            raise ValueError(f"{name}: expected a contiguous tensor, got "
                             f"strides {tuple(t.stride())}; mtc never copies "
                             "weights (call .contiguous() once, at load)")


def _on_cuda_with(x, named):
    if x.device.type != "cuda":
        raise ValueError(f"x: mtc runs on CUDA tensors, got a tensor on "
                         f"{x.device}")
    for name, t in named:
        if t is not None and t.device != x.device:
            raise ValueError(f"{name}: on {t.device}, but x is on {x.device}")


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


def _check_aligned(name, t):
    if t.data_ptr() % 16:
        raise ValueError(f"{name}: its data must be 16-byte aligned (a "
                         f"tensor of its own, not a view at an offset); got "
                         f"address {t.data_ptr():#x}")


#===----------------------------------------------------------------------===#
# Compiled layers, per device, kind and shape
#===----------------------------------------------------------------------===#

class Kernels:
    """The artifacts loaded in this process, one per LayerKey (device, N, K,
    dtype, bias, kind, group), all compiled over the same buckets with the
    same tuning settings."""

    def __init__(self, buckets=DEFAULT_BUCKETS, tune=False,
                 max_probes=DEFAULT_MAX_PROBES, progress=True, route="mtc"):
        self._artifacts: Dict[LayerKey, Artifact] = {}
        self._retired = []
        self._lock = threading.Lock()
        #: Per layer, the (mtc µs, fallback µs) of each bucket, once
        #: measured (mtc._routing), and the buckets the fallback takes.
        self.times: Dict[LayerKey, _routing.Times] = {}
        self._fallback: Dict[LayerKey, frozenset] = {}
        self.configure(buckets, tune, max_probes, progress, route)

    def configure(self, buckets, tune, max_probes, progress, route="mtc"):
        """New settings for what is loaded from now on. Artifacts loaded
        under other settings are no longer handed out, but stay loaded:
        CUDA graphs captured earlier may still launch their kernels.
        ``route`` (mtc._routing.ROUTES): "measure" routes each bucket to
        mtc's kernels or to the layer's PyTorch fallback, whichever
        measured faster on this GPU; "mtc" runs mtc's kernels up to the
        largest bucket."""
        _routing.check_route(route)
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
                self.times, self._fallback = {}, {}
            self._settings = settings
            self.buckets, self.tune, self.max_probes = settings
            self.progress, self.route = progress, route

    @property
    def largest(self):
        return self.buckets[-1]

    def get(self, key: Tuple) -> Artifact:
        a = self._artifacts.get(key)
        if a is not None:
            return a
        key = LayerKey(*key)
        a = self._artifacts.get(key)
        if a is not None:
            return a
        if torch.cuda.is_current_stream_capturing():
            raise MtcError(
                f"mtc: no kernel is loaded for {key.graph_name()} on "
                f"cuda:{key.device}, and none can be compiled while a CUDA "
                "graph is being captured: call mtc.torch.swap(model) (or run "
                "the layer once) before capturing")
        self.load([key])
        return self._artifacts[key]

    def load(self, keys: Iterable[Tuple]):
        """Compiles (or finds in the artifact cache) and loads every key not
        loaded yet: one mtc run per device."""
        keys = {LayerKey(*k) for k in keys}
        with self._lock:
            todo = sorted(keys - set(self._artifacts))
            for dev in sorted({k.device for k in todo}):
                self._load_device(dev, [k for k in todo if k.device == dev])
            if self.route == "measure":
                self._measure(sorted(keys - set(self.times)))

    def _measure(self, keys):
        """Times both ways of every bucket of ``keys`` (loaded), kept or
        measured (mtc._routing)."""
        if keys and torch.cuda.is_current_stream_capturing():
            raise MtcError(
                "mtc: route='measure' cannot time layers while a CUDA graph "
                "is being captured: call mtc.torch.swap(model) (or run the "
                "layer once) before capturing")
        start = time.monotonic()
        for k in keys:
            with torch.cuda.device(k.device):
                self.times[k] = _routing.times_for(k, self._artifacts[k],
                                                   self.buckets)
            self._fallback[k] = _routing.fallback_buckets(self.times[k])
        routed = {k: sorted(f) for k, f in self._fallback.items()
                  if f and k in keys}
        if self.progress and keys:
            compiler.print_progress(
                f"routing: timed {len(keys)} layer(s) both ways in "
                f"{time.monotonic() - start:.1f} s; " +
                ("; ".join(f"{k.graph_name()}: M = "
                           f"{', '.join(map(str, b))} to PyTorch's fallback"
                           for k, b in routed.items())
                 if routed else "mtc's kernels are faster at every bucket"))

    def uses_fallback(self, key: LayerKey, bucket: int) -> bool:
        """Whether rows of ``bucket`` run the layer's PyTorch fallback."""
        return self.route == "measure" and bucket in self._fallback.get(
            key, ())

    def _load_device(self, dev, keys):
        arch, name = _device_arch(dev)
        graphs = {k.graph_name(): k.graph_text() for k in keys}
        report = compiler.print_progress if self.progress else None
        start = time.monotonic()
        paths = compiler.compile_graphs(
            graphs, self.buckets, arch=arch, tune=self.tune,
            target=device_target(dev),
            max_probes=self.max_probes,
            device=f"{name}|{arch}|cuda {torch.version.cuda}",
            progress=report)
        with torch.cuda.device(dev):
            torch.cuda.synchronize()  # makes the device's context current
            for k in keys:
                self._artifacts[k] = Artifact(paths[k.graph_name()])
        if report:
            report(f"{len(keys)} linear shape(s) x {len(self.buckets)} "
                   f"buckets ready on cuda:{dev} ({name}) in "
                   f"{time.monotonic() - start:.1f} s")


def device_target(dev):
    """``mtc compile --target`` for cuda:``dev``: its multiprocessors, L2,
    opted-in shared memory per block and, where this PyTorch reports the
    memory clock and bus, bandwidth, so that the heuristic schedules are
    sized for the GPU at hand ("gpu", mtc's own query of the first GPU,
    where it does not report the first three)."""
    p = torch.cuda.get_device_properties(dev)
    facts = [getattr(p, a, None) for a in (
        "multi_processor_count", "L2_cache_size",
        "shared_memory_per_block_optin")]
    if any(not isinstance(v, int) for v in facts):
        return "gpu"
    spec = "sms={},l2={},smem={}".format(*facts)
    khz, bits = (getattr(p, a, None)
                 for a in ("memory_clock_rate", "memory_bus_width"))
    if isinstance(khz, int) and isinstance(bits, int) and khz > 0 and bits > 0:
        # Two transfers per memory clock (kHz) over the bus, in GB/s.
        spec += ",bw={}".format(max(1, khz * 2 * bits // 8 // 1000000))
    return spec


def _device_arch(dev):
    cc = torch.cuda.get_device_capability(dev)
    name = torch.cuda.get_device_name(dev)
    arch = arch_for_capability(*cc)
    if arch is None:
        raise MtcError(f"mtc: cuda:{dev} ({name}) is sm_{cc[0]}{cc[1]}; mtc "
                       f"compiles for sm_80, sm_89, sm_90, sm_90a (compute "
                       f"capability 8.0 and newer)")
    return arch, name


def arch_for_capability(major: int, minor: int) -> Optional[str]:
    """The arch mtc's own commands take for a GPU of this compute capability
    (compiler/GpuTarget.h, archForComputeCapability): 9.0 sm_90a (Hopper's
    wgmma and TMA, the wgmma kind from M = 64); other 9.x and newer sm_90,
    PTX the driver compiles for them; 8.9 sm_89; other 8.x sm_80; None
    below 8.0."""
    if (major, minor) == (9, 0):
        return "sm_90a"
    if major >= 9:
        return "sm_90"
    if major == 8:
        return "sm_89" if minor == 9 else "sm_80"
    return None


def run_layer(kernels: Kernels, x: torch.Tensor, n: int, k: int, kind: str,
              group: int, weights: Sequence[Tuple[str, torch.Tensor]],
              bias: Optional[torch.Tensor],
              eager: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """One call of a checked layer: x [..., K] -> [..., N]. Row counts up to
    the largest bucket run the next bucket's kernels (on zero-padded rows
    between buckets) with the pointers of x, ``weights`` (name, tensor) in
    the graph's parameter order, then ``bias`` if any; beyond, ``eager(x2)``
    computes the [M, N] rows of x2 = x as [M, K] with PyTorch."""
    lead = tuple(x.shape[:-1])
    m = math.prod(lead)
    if m == 0:
        return x.new_empty(*lead, n)
    x2 = x.reshape(m, k)
    art = bucket = None
    if m <= kernels.largest:
        dev = (x.device.index if x.device.index is not None
               else torch.cuda.current_device())
        key = LayerKey(dev, n, k, _DTYPES[x.dtype], bias is not None, kind,
                       group)
        art = kernels.get(key)
        bucket = art.bucket_for(m)
        if bucket is not None and kernels.uses_fallback(key, bucket):
            bucket = None
    if bucket is None:
        # Beyond the largest bucket (a long prefill), or a bucket where it
        # measured faster: PyTorch's eager path (see mtc.torch's
        # docstring).
        return eager(x2).reshape(*lead, n)
    if not x2.is_contiguous() or x2.data_ptr() % 16:
        x2 = x2.contiguous() if not x2.is_contiguous() else x2.clone()
    ins = [x2.data_ptr()]
    for name, t in weights:
        _check_aligned(name, t)
        ins.append(t.data_ptr())
    if bias is not None:
        _check_aligned("bias", bias)
        ins.append(bias.data_ptr())
    if bucket != m:
        x2 = F.pad(x2, (0, 0, 0, bucket - m))
        ins[0] = x2.data_ptr()
    out = torch.empty(bucket, n, dtype=x.dtype, device=x.device)
    art.launch(m, torch.cuda.current_stream(x.device).cuda_stream, ins,
               [out.data_ptr()])
    if bucket != m:
        out = out[:m]
    return out.reshape(*lead, n)
