"""Weight-only int4 layers for mtc.torch: the packed layout mtc's ``i4``
takes, gpt-fast's tinygemm layout and the repack between them, the
arguments' checks, and the eager dequantise that runs beyond the largest
bucket. Import mtc.torch, not this module (it re-exports these names).

mtc's layout: ``weight`` uint8 (or int8) [N, K/2] holds the signed int4
values s[n, k] in [-8, 7] two to a byte along K: s[n, 2j] in the low nibble
of byte j and s[n, 2j+1] in the high one, two's complement. ``scales`` and
``zeros`` [N, K/G] hold one value per group of G columns, and the layer is
``y = x @ W^T`` (``+ bias``) with W[n, k] = s[n, k] * scales[n, k // G] +
zeros[n, k // G].

gpt-fast's ``WeightOnlyInt4Linear`` holds unsigned q in [0, 15] in
tinygemm's opaque int32 layout and ``scales_and_zeros`` bf16 [K/G, N, 2],
with W[n, k] = (q[n, k] - 8) * scale + zero: the same layer with s = q - 8.
"""
from typing import Optional, Tuple

import torch
import torch.nn.functional as F

from ._tools import MtcError
from ._torch_base import _DTYPES, _contiguous, _on_cuda_with, _tensor

_PACKED = (torch.uint8, torch.int8)


#===----------------------------------------------------------------------===#
# Packing
#===----------------------------------------------------------------------===#

def pack_int4(q: torch.Tensor) -> torch.Tensor:
    """Signed int4 values ``q`` [..., K] (any integer dtype, values in
    [-8, 7], K even) packed as mtc's ``i4``: uint8 [..., K/2], element 2j in
    the low nibble of byte j and element 2j+1 in the high nibble."""
    _tensor("q", q)
    if q.dtype.is_floating_point or q.dtype.is_complex or \
            q.dtype == torch.bool:
        raise TypeError(f"q: expected an integer tensor, got {q.dtype}")
    if q.dim() < 1 or q.shape[-1] % 2:
        raise ValueError(f"q: expected an even last dimension (two int4 "
                         f"values a byte), got shape {list(q.shape)}")
    if q.numel():
        lo, hi = int(q.min()), int(q.max())
        if lo < -8 or hi > 7:
            raise ValueError(f"q: expected values in [-8, 7], got values in "
                             f"[{lo}, {hi}]")
    v = q.to(torch.int16) & 0xF  # two's complement nibbles
    return (v[..., 0::2] | (v[..., 1::2] << 4)).to(torch.uint8).contiguous()


def unpack_int4(packed: torch.Tensor) -> torch.Tensor:
    """The inverse of pack_int4: uint8 (or int8) [..., K/2] -> int8 [..., K]
    with values in [-8, 7]."""
    _tensor("packed", packed)
    if packed.dtype not in _PACKED:
        raise TypeError(f"packed: expected dtype torch.uint8 or torch.int8, "
                        f"got {packed.dtype}")
    b = packed.view(torch.uint8)
    lo = (b & 0xF).to(torch.int8)
    hi = (b >> 4).to(torch.int8)
    s = torch.stack((lo, hi), dim=-1).flatten(-2)
    return (s ^ 8) - 8


def dequantize_int4(weight: torch.Tensor, scales: torch.Tensor,
                    zeros: torch.Tensor, groupsize: int) -> torch.Tensor:
    """W [N, K] of scales' dtype, rounded as mtc's graph rounds it (each node
    to that dtype): ``s.to(dtype) * scales`` rounded, ``+ zeros`` rounded."""
    s = unpack_int4(weight)
    n, k = s.shape
    wf = s.to(scales.dtype).view(n, k // groupsize, groupsize)
    ws = wf * scales.unsqueeze(-1)
    return (ws + zeros.unsqueeze(-1)).view(n, k)


def int4_linear_eager(x2: torch.Tensor, weight: torch.Tensor,
                      scales: torch.Tensor, zeros: torch.Tensor,
                      groupsize: int,
                      bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """The layer in PyTorch, on any device: a dequantising copy of the
    weight and F.linear. What woq_int4_linear runs beyond its largest
    bucket."""
    out = F.linear(x2, dequantize_int4(weight, scales, zeros, groupsize))
    if bias is not None:
        out = out + bias
    return out


#===----------------------------------------------------------------------===#
# Argument checks
#===----------------------------------------------------------------------===#

def _int4_layout(weight, scales, zeros, groupsize, bias) -> Tuple[int, int]:
    """Shapes, group size and contiguity; (N, K)."""
    if not isinstance(groupsize, int) or isinstance(groupsize, bool):
        raise TypeError(f"groupsize: expected an int, got "
                        f"{type(groupsize).__name__}")
    if groupsize < 1:
        raise ValueError(f"groupsize: expected a positive int, got "
                         f"{groupsize}")
    if weight.dim() != 2 or weight.shape[0] < 1 or weight.shape[1] < 1:
        raise ValueError(f"weight: expected a non-empty shape [N, K/2] (two "
                         f"int4 values a byte), got {list(weight.shape)}")
    n, k = weight.shape[0], 2 * weight.shape[1]
    if k % groupsize:
        raise ValueError(f"groupsize: groupsize must divide K ({k}: weight "
                         f"packs K/2 = {k // 2} bytes a row), got {groupsize}")
    for name, t in (("scales", scales), ("zeros", zeros)):
        if list(t.shape) != [n, k // groupsize]:
            raise ValueError(f"{name}: expected shape [{n}, {k // groupsize}]"
                             f" ([N, K/groupsize]), got {list(t.shape)}")
    if bias is not None and list(bias.shape) != [n]:
        raise ValueError(f"bias: expected shape [{n}] (N of weight), got "
                         f"{list(bias.shape)}")
    _contiguous((("weight", weight), ("scales", scales), ("zeros", zeros),
                 ("bias", bias)))
    return n, k


def _packed_dtype(weight):
    if weight.dtype not in _PACKED:
        raise TypeError(f"weight: expected dtype torch.uint8 or torch.int8 "
                        f"(two int4 values a byte), got {weight.dtype}")


def check_int4_args(x, weight, scales, zeros, groupsize,
                    bias=None) -> Tuple[int, int]:
    """Checks woq_int4_linear's arguments; returns (N, K). Raises TypeError
    for a wrong type or dtype and ValueError for a wrong shape, group size,
    device or layout, naming the argument."""
    for name, t in (("x", x), ("weight", weight), ("scales", scales),
                    ("zeros", zeros)):
        _tensor(name, t)
    _tensor("bias", bias, optional=True)
    if x.dtype not in _DTYPES:
        raise TypeError(f"x: expected dtype torch.bfloat16 or torch.float16, "
                        f"got {x.dtype}")
    _packed_dtype(weight)
    for name, t in (("scales", scales), ("zeros", zeros), ("bias", bias)):
        if t is not None and t.dtype != x.dtype:
            raise TypeError(f"{name}: expected dtype {x.dtype} (the dtype of "
                            f"x), got {t.dtype}")
    if x.dim() < 1 or (weight.dim() == 2 and
                       x.shape[-1] != 2 * weight.shape[1]):
        k = 2 * weight.shape[1] if weight.dim() == 2 else "K"
        raise ValueError(f"x: expected shape [..., {k}] (K: weight packs "
                         f"K/2 bytes a row), got {list(x.shape)}")
    n, k = _int4_layout(weight, scales, zeros, groupsize, bias)
    _on_cuda_with(x, (("weight", weight), ("scales", scales),
                      ("zeros", zeros), ("bias", bias)))
    return n, k


def check_int4_tensors(weight, scales, zeros, groupsize,
                       bias=None) -> Tuple[int, int]:
    """The checks of check_int4_args that need no activations; (N, K)."""
    for name, t in (("weight", weight), ("scales", scales), ("zeros", zeros)):
        _tensor(name, t)
    _tensor("bias", bias, optional=True)
    _packed_dtype(weight)
    if scales.dtype not in _DTYPES:
        raise TypeError(f"scales: expected dtype torch.bfloat16 or "
                        f"torch.float16, got {scales.dtype}")
    for name, t in (("zeros", zeros), ("bias", bias)):
        if t is not None and t.dtype != scales.dtype:
            raise TypeError(f"{name}: expected dtype {scales.dtype} (the "
                            f"dtype of scales), got {t.dtype}")
    return _int4_layout(weight, scales, zeros, groupsize, bias)


#===----------------------------------------------------------------------===#
# gpt-fast's WeightOnlyInt4Linear
#===----------------------------------------------------------------------===#

def int4_module_shape(m: torch.nn.Module) -> Optional[Tuple[int, int, int]]:
    """(N, K, the row length of its x) if ``m`` looks like gpt-fast's
    WeightOnlyInt4Linear, else None: no children, an int32 4-D ``weight``
    (tinygemm's layout, eight int4 values an int32), a bf16
    ``scales_and_zeros`` [K/G, N, 2], an int ``groupsize`` G, no bias or a
    bf16 ``bias`` [N], and, with ``padding``, an ``origin_in_features`` of
    at most K (x is zero-padded to K). swap() also checks that it computes
    the same function."""
    if next(m.children(), None) is not None:
        return None
    w = getattr(m, "weight", None)
    sz = getattr(m, "scales_and_zeros", None)
    g = getattr(m, "groupsize", None)
    b = getattr(m, "bias", None)
    if not isinstance(w, torch.Tensor) or not isinstance(sz, torch.Tensor):
        return None
    if not isinstance(g, int) or isinstance(g, bool) or g < 1:
        return None
    if w.dtype != torch.int32 or w.dim() != 4:
        return None
    if sz.dtype != torch.bfloat16 or sz.dim() != 3 or sz.shape[2] != 2:
        return None
    n, k = sz.shape[1], sz.shape[0] * g
    if n < 1 or k < 1 or w.numel() * 8 != n * k:
        return None
    for attr, want in (("out_features", n), ("in_features", k)):
        v = getattr(m, attr, want)
        if not isinstance(v, int) or v != want:
            return None
    if b is not None and (not isinstance(b, torch.Tensor) or
                          b.dtype != sz.dtype or list(b.shape) != [n]):
        return None
    origin = k
    if getattr(m, "padding", False):
        origin = getattr(m, "origin_in_features", None)
        if not isinstance(origin, int) or not 1 <= origin <= k:
            return None
    return n, k, origin


def is_int4_module(m: torch.nn.Module) -> bool:
    """Whether ``m`` looks like gpt-fast's WeightOnlyInt4Linear (see
    int4_module_shape)."""
    return int4_module_shape(m) is not None


@torch.no_grad()
def tinygemm_nibbles(weight: torch.Tensor, groupsize: int, n: int, k: int,
                     chunk: int = 1024, mm=None) -> torch.Tensor:
    """The unsigned int4 values q [N, K] (uint8, 0 to 15) of a weight in
    tinygemm's layout, read by the kernel that reads that layout,
    ``torch.ops.aten._weight_int4pack_mm`` (``mm``), whatever the layout of
    this PyTorch version: with scale 1 and zero 8 for every group, row i of
    ``I @ W^T`` for the identity I is q[:, i]. ``chunk`` rows of I at a
    time bound the memory. Where the op exists for the weight's device
    (CUDA)."""
    if mm is None:
        mm = torch.ops.aten._weight_int4pack_mm
    dev = weight.device
    sz = torch.empty(k // groupsize, n, 2, dtype=torch.bfloat16, device=dev)
    sz[..., 0] = 1
    sz[..., 1] = 8
    q = torch.empty(n, k, dtype=torch.uint8, device=dev)
    for k0 in range(0, k, chunk):
        rows = min(chunk, k - k0)
        eye = torch.zeros(rows, k, dtype=torch.bfloat16, device=dev)
        eye.diagonal(k0).fill_(1)
        out = mm(eye, weight, groupsize, sz)
        if tuple(out.shape) != (rows, n) or \
                ((out != out.round()) | (out < 0) | (out > 15)).any():
            raise MtcError(
                "mtc: _weight_int4pack_mm of an identity did not return the "
                f"weight's int4 values 0..15 (shape {list(out.shape)} for "
                f"{[rows, n]}): this PyTorch's int4 layer is not gpt-fast's")
        q[:, k0:k0 + rows] = out.t().to(torch.uint8)
    return q


@torch.no_grad()
def repack_gpt_fast_int4(m: torch.nn.Module, mm=None):
    """gpt-fast WeightOnlyInt4Linear ``m``'s tensors in mtc's layout:
    (weight uint8 [N, K/2] with s = q - 8, scales [N, K/G], zeros [N, K/G]),
    new tensors on m's device; m is left as it is."""
    shape = int4_module_shape(m)
    if shape is None:
        raise ValueError(f"m: {type(m).__name__} does not look like "
                         "gpt-fast's WeightOnlyInt4Linear")
    n, k, _ = shape
    sz = m.scales_and_zeros
    scales = sz[..., 0].t().contiguous()
    zeros = sz[..., 1].t().contiguous()
    q = tinygemm_nibbles(m.weight, m.groupsize, n, k, mm=mm)
    return pack_int4(q.to(torch.int8) - 8), scales, zeros
