"""``fuse_blocks``: routes the feed-forward half of a model's decoder blocks
through ``fused_ffn`` (int8 linears) or ``fused_ffn_int4`` (mtc's int4
linears), a gpt-fast block's attention linears through ``norm_linear``
and ``linear_residual`` and its grouped-query attention without a copy of
the KV cache per query head, in place. Import mtc.torch, not this module
(it re-exports fuse_blocks)."""
from typing import Dict, Optional, Tuple

import torch
import torch.nn.functional as F

from ._fused import fused_ffn, fused_ffn_int4, rows_of
from ._fused_attention import (_ROPE_STAYS, _GroupedAttention,
                               _grouped_rotary, _rope_in_wqkv_why)
from ._fused_linear import _linear_tensors, linear_residual, norm_linear
from ._int4 import _PACKED


def _groupsize(linear) -> Optional[int]:
    """0 for an int8 per-channel linear without bias (gpt-fast's
    WeightOnlyInt8Linear or mtc's WoqLinear), the group size for mtc's int4
    Int4Linear without bias or padding, else None."""
    w = getattr(linear, "weight", None)
    s = getattr(linear, "scales", None)
    if getattr(linear, "bias", None) is not None or \
            not isinstance(w, torch.Tensor) or \
            not isinstance(s, torch.Tensor):
        return None
    if w.dtype == torch.int8 and s.dim() == 1:
        return 0
    g = getattr(linear, "groupsize", None)
    z = getattr(linear, "zeros", None)
    if (w.dtype in _PACKED and w.dim() == 2 and isinstance(g, int) and
            isinstance(z, torch.Tensor) and s.dim() == 2 and
            getattr(linear, "origin_in_features", None) ==
            getattr(linear, "in_features", 0)):
        return g
    return None


def _linears_kind(linears) -> Tuple[Optional[int], str]:
    """The groupsize (0: int8) the three linears share, or None and why not
    (what follows "its ... linears")."""
    groups = [_groupsize(l) for l in linears]
    if None in groups:
        return None, ("are not int8 per channel or mtc's int4 (Int4Linear) "
                      "without bias (mtc.torch.swap or quantize_ makes them "
                      "so)")
    if len(set(groups)) != 1:
        return None, "mix int8 and int4, or int4 group sizes"
    return groups[0], ""


def _ffn(h, norm_weight, eps, linears, groupsize, residual):
    """fused_ffn or fused_ffn_int4 over the linears w1, w3, w2."""
    if not groupsize:
        w1, w3, w2 = ((l.weight, l.scales) for l in linears)
        return fused_ffn(h, norm_weight, eps, *w1, *w3, *w2, residual=residual)
    w1, w3, w2 = ((l.weight, l.scales, l.zeros) for l in linears)
    return fused_ffn_int4(h, norm_weight, eps, *w1, *w3, *w2, groupsize,
                          residual=residual)


def _block_ffn_parts(block):
    """(groupsize, "") for a gpt-fast TransformerBlock whose feed-forward
    half fuses, or (None, a reason)."""
    ff, norm = getattr(block, "feed_forward", None), getattr(block,
                                                             "ffn_norm", None)
    if ff is None or norm is None or not hasattr(block, "attention"):
        return None, "not a gpt-fast TransformerBlock"
    group, why = _linears_kind([getattr(ff, n, None) for n in ("w1", "w3", "w2")])
    if group is None:
        return None, "its feed-forward linears " + why
    if not isinstance(getattr(norm, "eps", None), float):
        return None, "its ffn_norm has no float eps"
    return group, ""


def _block_attn_parts(block):
    """(groupsize, "") for a gpt-fast TransformerBlock whose attention
    linears (wqkv, wo) fuse with the norm before and the residual after, or
    (None, a reason)."""
    attn, norm = block.attention, getattr(block, "attention_norm", None)
    group, why = _linears_kind([getattr(attn, n, None)
                                for n in ("wqkv", "wo")])
    if group is None:
        return None, "its attention's wqkv and wo " + why
    if norm is None or not isinstance(getattr(norm, "eps", None), float) or \
            not isinstance(getattr(norm, "weight", None), torch.Tensor):
        return None, "its attention_norm has no weight and float eps"
    return group, ""


class _FusedBlock:
    """Mixed into a gpt-fast TransformerBlock's class by fuse_blocks: its
    attention half with the norm inside wqkv (_NormedLinear) and the
    residual in wo's kernel (linear_residual; wo itself passes its input
    on, _DeferredLinear), unless its attention linears do not fuse (then as
    gpt-fast computes it); its feed-forward half (norm, SwiGLU, residual) as
    one fused_ffn or fused_ffn_int4. Beyond _mtc_max_rows rows, both halves
    as gpt-fast computes them."""

    def forward(self, x, input_pos, freqs_cis, mask):
        attn, group = self.attention, self._mtc_attn_group
        fused = rows_of(x) <= self._mtc_max_rows
        if group is None:
            h = x + attn(self.attention_norm(x), freqs_cis, mask, input_pos)
        else:
            y = attn(x, freqs_cis, mask, input_pos)  # wqkv applies the norm
            if fused:
                w, s, z = _linear_tensors(attn.wo, group)
                h = linear_residual(y, w, s, x, z, group)
            else:
                h = x + super(_DeferredLinear, attn.wo).forward(y)
        if not fused:
            return h + self.feed_forward(self.ffn_norm(h))
        ff = self.feed_forward
        return _ffn(h, self.ffn_norm.weight, self.ffn_norm.eps,
                    (ff.w1, ff.w3, ff.w2), self._mtc_groupsize, True)


class _NormedLinear:
    """Mixed into a fused block's attention.wqkv: the block's
    attention_norm runs on the input first. One row of int8 is one
    norm_linear kernel (the norm's scaling the linear's prologue, its
    statistic derived in every block); otherwise the norm as the model
    computes it, then the linear. (Elsewhere mtc's norm is one kernel too,
    its statistic applied to the rows, as Inductor's is: two launches
    either way, and mtc's has not been timed against Inductor's.)"""

    def forward(self, x, rope=None):
        norm, group = self._mtc_norm
        if rope is not None:
            # The norm, the linear and the rotary embedding of q and k as
            # one graph (one kernel at one row of int8).
            w, s, z = _linear_tensors(self, group)
            return norm_linear(x, norm.weight, norm.eps, w, s, z, group, rope)
        if not group and x.numel() == x.shape[-1]:
            return norm_linear(x, norm.weight, norm.eps, self.weight,
                               self.scales)
        return super().forward(norm(x))


class _DeferredLinear:
    """Mixed into a fused block's attention.wo: passes its input on; the
    block applies wo with the residual as one kernel (linear_residual)."""

    def forward(self, y):
        return y


def _fuse_gpt_fast_block(block, group, max_rows, grouped_attention) -> str:
    """Swaps the classes of ``block`` (and of its attention's wqkv and wo
    where they fuse); returns why its attention did not ("" if it did), or
    why its rotary embedding is not wqkv's epilogue."""
    attn_group, why = _block_attn_parts(block)
    object.__setattr__(block, "_mtc_groupsize", group)
    object.__setattr__(block, "_mtc_max_rows", max_rows)
    object.__setattr__(block, "_mtc_attn_group", attn_group)
    attn = block.attention
    if attn_group is not None:
        object.__setattr__(attn.wqkv, "_mtc_norm",
                           (block.attention_norm, attn_group))
        attn.wqkv.__class__ = _subclass(type(attn.wqkv), _NormedLinear)
        attn.wo.__class__ = _subclass(type(attn.wo), _DeferredLinear)
    rope = _grouped_rotary(attn) if grouped_attention else None
    if rope is not None:
        object.__setattr__(attn, "_mtc_rotary", rope)
        object.__setattr__(attn, "_mtc_max_rows", max_rows)
        attn.__class__ = _subclass(type(attn), _GroupedAttention)
        attn.kv_cache = attn.kv_cache  # paired (_GroupedAttention)
        in_wqkv = attn_group is not None
        if in_wqkv:
            rope_why = _rope_in_wqkv_why(attn, max_rows)
            if rope_why:
                why, in_wqkv = _ROPE_STAYS + rope_why, False
        object.__setattr__(attn, "_mtc_rope_in_wqkv", in_wqkv)
    block.__class__ = _subclass(type(block), _FusedBlock)
    return why


def _hf_mlp_parts(layer):
    """((norm, eps, groupsize), None) for a Hugging Face Llama-style decoder
    layer's feed-forward half (``post_attention_layernorm``, then ``mlp``
    with ``gate_proj``, ``up_proj``, ``down_proj`` and SiLU), or (None, a
    reason)."""
    norm, mlp = layer.post_attention_layernorm, layer.mlp
    names = ("gate_proj", "up_proj", "down_proj")
    group, why = _linears_kind([getattr(mlp, n, None) for n in names])
    if group is None:
        return None, "its mlp's gate_proj, up_proj and down_proj " + why
    act = getattr(mlp, "act_fn", None)
    if type(act).__name__ not in ("SiLU", "SiLUActivation"):
        return None, (f"its mlp's act_fn is {type(act).__name__}, not SiLU")
    eps = getattr(norm, "variance_epsilon", getattr(norm, "eps", None))
    w = getattr(norm, "weight", None)
    if not isinstance(eps, float) or not isinstance(w, torch.Tensor):
        return None, ("its post_attention_layernorm has no weight and float "
                      "epsilon (an RMSNorm's)")
    return (norm, eps, group), None


class _PassNorm:
    """Mixed into a decoder layer's post_attention_layernorm by fuse_blocks:
    the norm runs inside the fused mlp, so the layer's call of it passes its
    input on."""

    def forward(self, x):
        return x


class _FusedMlp:
    """Mixed into a decoder layer's mlp by fuse_blocks: the norm before it,
    SwiGLU and the quantized linears as one fused_ffn (or fused_ffn_int4)
    without the residual (the layer adds it); beyond _mtc_max_rows rows,
    the norm and the mlp as the model computes them."""

    def forward(self, x):
        norm, eps, group = self._mtc_norm
        if rows_of(x) > self._mtc_max_rows:
            return super().forward(super(_PassNorm, norm).forward(x))
        return _ffn(x, norm.weight, eps,
                    (self.gate_proj, self.up_proj, self.down_proj), group,
                    False)


@torch.no_grad()
def _fuse_hf_layer(layer, norm, eps, group, max_rows):
    """Swaps the classes of ``layer``'s norm and mlp after checking, on 3
    random rows, that the fused mlp computes what the two did; returns a
    reason where it does not (and leaves the layer alone)."""
    mlp = layer.mlp
    # Rows of the activations' dtype: the quantized linears' scales have it.
    scales = mlp.gate_proj.scales
    gen = torch.Generator(device=scales.device).manual_seed(0)
    x = torch.randn(3, norm.weight.shape[0], generator=gen,
                    device=scales.device, dtype=scales.dtype)
    ref = mlp(norm(x)).float()
    object.__setattr__(mlp, "_mtc_norm", (norm, eps, group))
    try:
        out = _ffn(x, norm.weight, eps, (mlp.gate_proj, mlp.up_proj,
                                         mlp.down_proj), group, False).float()
    except (TypeError, ValueError) as e:
        return f"fused_ffn refuses its tensors: {e}"
    err = (out - ref).abs().max().item() / (ref.abs().max().item() or 1.0)
    if err > 2e-2:
        return (f"its norm and mlp do not compute RMSNorm then SwiGLU (max "
                f"rel err {err:.2e} against the fused graph)")
    object.__setattr__(mlp, "_mtc_max_rows", max_rows)
    norm.__class__ = _subclass(type(norm), _PassNorm)
    mlp.__class__ = _subclass(type(mlp), _FusedMlp)
    return None


_classes: Dict[Tuple[type, type], type] = {}


def _subclass(cls, mixin):
    if (cls, mixin) not in _classes:
        _classes[cls, mixin] = type(cls.__name__, (mixin, cls), {})
    return _classes[cls, mixin]


# Rows per call (batch x tokens) up to which fused blocks run mtc's fused
# graphs by default; see fuse_blocks.
MAX_ROWS = 8


def fuse_blocks(model: torch.nn.Module, max_rows: int = MAX_ROWS,
                grouped_attention: bool = True):
    """Routes the feed-forward half of every decoder block of ``model`` whose
    feed-forward linears are int8 per channel (gpt-fast's or mtc's) or mtc's
    int4 (``Int4Linear``, one group size) through ``fused_ffn`` or
    ``fused_ffn_int4``, in place (modules and state dict stay; their classes
    become subclasses):

    - gpt-fast's ``TransformerBlock``: norm, SwiGLU and the residual as one
      graph; where its attention's ``wqkv`` and ``wo`` are of the same kind,
      ``attention_norm`` runs inside ``wqkv`` (one ``norm_linear`` kernel
      for one row of int8) and ``x + wo(y)`` is one ``linear_residual``
      kernel. The attention module's ``wo`` then passes its input on (the
      block applies it): call the block, not its attention alone. Where
      they are not, the attention half runs as gpt-fast computes it and
      ``left`` names ``<block>.attention`` with the reason. Where its
      query heads share key/value heads (Llama-3's 32 and 8), attention
      reads the KV cache as it is, each key/value head's query heads as
      rows of one head, instead of gpt-fast's copy of the cache for every
      query head (``repeat_interleave``): the same attention, not the same
      rounding, at every row count (``grouped_attention=False`` keeps
      gpt-fast's); there, where ``wqkv`` holds the norm, a call of up to
      ``max_rows`` rows of one sequence or one token a sequence rotates q
      and k in ``wqkv``'s epilogue (``norm_linear``'s ``rope``), once mtc's
      kernel has matched PyTorch's rotation on a random row of that shape
      on the GPU (else ``left`` names ``<block>.attention`` with the
      error, and the model's ``apply_rotary_emb`` runs); its ``kv_cache``
      (now, and whenever the model sets one: ``setup_caches``) keeps keys
      and values in one buffer (``PairedKVCache``: ``k_cache`` and
      ``v_cache`` are its halves), both written by one kernel;
    - a Hugging Face Llama-style decoder layer (``post_attention_layernorm``
      and an ``mlp`` with ``gate_proj``, ``up_proj``, ``down_proj`` and SiLU,
      quantized by ``quantize_``): its mlp computes the norm and SwiGLU as
      one graph and its norm passes its input on; the layer's own forward
      (attention, residuals, caches) is untouched. Each such layer is first
      checked on 3 random rows against its unfused modules.

    A call of more than ``max_rows`` rows (batch x tokens: a larger batch,
    a prefill) runs the block as the model computes it, on its own (e.g.
    swapped) linears, but for the grouped attention above. The default, 8,
    is where fusion pays: up to 8 rows mtc joins gate and up into one
    kernel, and gpt-fast's int8 Llama-3-8B spent less kernel time outside
    attention fused than swapped (B = 8); from 16 rows gate and up are two
    kernels, and B = 16 and 32 measured no gain
    (bench/results/2026-12-05-fuse-rows). Calling fuse_blocks again on a
    fused model changes its ``max_rows``.

    Returns (fused, left): the number of blocks fused and a list of (name,
    reason) for the blocks left alone."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got "
                        f"{type(model).__name__}")
    if not isinstance(max_rows, int) or isinstance(max_rows, bool):
        raise TypeError(f"max_rows: expected an int, got "
                        f"{type(max_rows).__name__}")
    if max_rows < 1:
        raise ValueError(f"max_rows: expected a positive int, got {max_rows}")
    if not isinstance(grouped_attention, bool):
        raise TypeError(f"grouped_attention: expected a bool, got "
                        f"{type(grouped_attention).__name__}")
    fused, left = 0, []
    for name, m in model.named_modules():
        if isinstance(m, _FusedBlock):
            object.__setattr__(m, "_mtc_max_rows", max_rows)
            attn = m.attention
            if isinstance(attn, _GroupedAttention):
                object.__setattr__(attn, "_mtc_max_rows", max_rows)
                why = attn._mtc_rope_in_wqkv and \
                    _rope_in_wqkv_why(attn, max_rows)
                if why:
                    object.__setattr__(attn, "_mtc_rope_in_wqkv", False)
                    left.append((f"{name}.attention" if name else "attention",
                                 _ROPE_STAYS + why))
            continue
        if isinstance(getattr(m, "mlp", None), _FusedMlp):
            object.__setattr__(m.mlp, "_mtc_max_rows", max_rows)
            continue
        if type(m).__name__ == "TransformerBlock":
            group, why = _block_ffn_parts(m)
            if not why:
                attn_why = _fuse_gpt_fast_block(m, group, max_rows,
                                                grouped_attention)
                if attn_why:
                    left.append((f"{name}.attention" if name else "attention",
                                 attn_why))
        elif isinstance(getattr(m, "post_attention_layernorm", None),
                        torch.nn.Module) and \
                isinstance(getattr(m, "mlp", None), torch.nn.Module):
            parts, why = _hf_mlp_parts(m)
            if parts:
                why = _fuse_hf_layer(m, *parts, max_rows)
        else:
            continue
        if why:
            left.append((name, why))
        else:
            fused += 1
    return fused, left
