"""Which buckets of a layer run mtc's kernels and which PyTorch's fallback
(issue 25, item 3: never slower than the fallback).

A layer's fallback is what it runs beyond its largest bucket: the int8
layer's ``F.linear(x, weight.to(x.dtype)) * scales`` (a dequantising copy
of the weight, then cuBLAS), the int4 layer's ``dequantize_int4`` and
``F.linear``. With ``route="measure"`` (``swap`` and ``quantize_``'s
default), loading a layer's kernels also times, for each bucket B, mtc's
kernels and the fallback on B random rows of random weights of the layer's
shape, on the GPU at hand, with cold L2 (a buffer twice the L2 is written
before each call), the median of ``REPS`` calls each. A bucket goes to the
fallback where the fallback is more than ``MARGIN`` faster; rows between two
buckets follow the larger one's decision. The times are kept beside the
artifact (``routes-<GPU and PyTorch>.json``), so that the next process
reads them instead of measuring again.
"""
import hashlib
import json
import os
from pathlib import Path
from typing import Callable, Dict, Iterable, Optional, Tuple

import torch

#: How layers are routed: "measure" (time both ways once per GPU, PyTorch
#: version and artifact) or "mtc" (mtc's kernels up to the largest bucket).
ROUTES = ("measure", "mtc")
#: The fallback takes a bucket only where it is this much faster (a 3%
#: margin keeps the timing noise of one run from flipping a close bucket).
MARGIN = 1.03
#: Timed calls per bucket and way; the median counts.
REPS = 7

Times = Dict[int, Tuple[float, float]]  # bucket -> (mtc µs, fallback µs)


def check_route(route):
    if route not in ROUTES:
        raise ValueError(f"route: expected one of {ROUTES}, got {route!r}")
    return route


def fallback_buckets(times: Times, margin: float = MARGIN) -> frozenset:
    """The buckets whose fallback is more than ``margin`` faster than mtc's
    kernels."""
    return frozenset(b for b, (mtc_us, fb_us) in times.items()
                     if fb_us * margin < mtc_us)


def routes_path(artifact_path, device: int) -> Path:
    """Where the times of an artifact on cuda:``device`` are kept: beside
    the artifact, named by the GPU, its driver's CUDA and PyTorch (whose
    cuBLAS the fallback runs)."""
    who = "|".join([torch.cuda.get_device_name(device), torch.__version__,
                    str(torch.version.cuda)])
    tag = hashlib.sha256(who.encode()).hexdigest()[:16]
    return Path(artifact_path).parent / f"routes-{tag}.json"


def load_times(path: Path, buckets: Iterable[int]) -> Optional[Times]:
    """The times kept at ``path`` if they cover ``buckets``; None if the
    file is missing, unreadable or from other buckets (then measure)."""
    try:
        data = json.loads(path.read_text())
        times = {int(b): (float(t[0]), float(t[1]))
                 for b, t in data["times_us"].items()}
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    return times if set(times) == set(buckets) else None


def save_times(path: Path, times: Times):
    """Best effort, written atomically: without it the next process
    measures again."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(
            {"times_us": {str(b): list(t) for b, t in sorted(times.items())},
             "columns": ["mtc", "fallback"], "margin": MARGIN,
             "reps": REPS}, indent=1))
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)


def _median_us(fn: Callable[[], None], flush: torch.Tensor) -> float:
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    fn()  # warm-up: allocator, cuBLAS's handle and heuristics
    samples = []
    for _ in range(REPS):
        flush.zero_()
        start.record()
        fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e3)
    samples.sort()
    return samples[len(samples) // 2]


def random_layer(key, device) -> Tuple[list, Optional[torch.Tensor]]:
    """Random tensors of the layer ``key`` (a LayerKey): its weights in the
    graph's parameter order as (name, tensor), and the bias or None."""
    dtype = torch.bfloat16 if key.dtype == "bf16" else torch.float16
    g = torch.Generator(device=device).manual_seed(0)
    n, k = key.n, key.k

    def small(*shape):
        return (torch.rand(*shape, generator=g, device=device) * 0.02
                ).to(dtype)
    if key.kind == "int8":
        w = torch.randint(-128, 128, (n, k), generator=g, device=device,
                          dtype=torch.int8)
        weights = [("weight", w), ("scales", small(n))]
    else:
        w = torch.randint(0, 256, (n, k // 2), generator=g, device=device,
                          dtype=torch.uint8)
        groups = k // key.group
        weights = [("weight", w), ("scales", small(n, groups)),
                   ("zeros", small(n, groups))]
    return weights, small(n) if key.bias else None


def fallback_for(key) -> Callable:
    """The layer's fallback as ``f(x2, weights, bias)``, weights as
    random_layer gives them."""
    if key.kind == "int8":
        from ._torch_base import woq_linear_eager
        return lambda x, ws, b: woq_linear_eager(x, ws[0][1], ws[1][1], b)
    from ._int4 import int4_linear_eager
    return lambda x, ws, b: int4_linear_eager(x, ws[0][1], ws[1][1],
                                              ws[2][1], key.group, b)


def times_for(key, artifact, buckets) -> Times:
    """The kept times of ``artifact`` on this GPU, or new measurements
    (then kept)."""
    path = routes_path(artifact.path, key.device)
    times = load_times(path, buckets)
    if times is None:
        times = measure(key, artifact, buckets, fallback_for(key))
        save_times(path, times)
    return times


@torch.no_grad()
def measure(key, artifact, buckets, fallback) -> Times:
    """Times of mtc's kernels and of ``fallback(x2, weights, bias)`` at
    every bucket, on random rows and weights of ``key``'s shape."""
    device = key.device
    weights, bias = random_layer(key, device)
    dtype = weights[1][1].dtype
    l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size",
                 64 << 20)
    flush = torch.empty(2 * max(l2, 1 << 20), dtype=torch.uint8,
                        device=device)
    stream = torch.cuda.current_stream(device).cuda_stream
    ptrs = [t.data_ptr() for _, t in weights]
    ptrs += [bias.data_ptr()] if bias is not None else []
    times = {}
    for b in buckets:
        x = torch.randn(b, key.k, device=device).to(dtype)
        out = torch.empty(b, key.n, device=device, dtype=dtype)
        mtc_us = _median_us(
            lambda: artifact.launch(b, stream, [x.data_ptr()] + ptrs,
                                    [out.data_ptr()]), flush)
        fb_us = _median_us(lambda: fallback(x, weights, bias), flush)
        times[b] = (mtc_us, fb_us)
    return times
