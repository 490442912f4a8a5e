"""A gpt-fast Attention as fuse_blocks runs it (mixed into its class):
query heads that share a key/value head attend as rows of one head, the
rotary embedding of q and k in wqkv's epilogue where that was checked, and
the key and value caches in one buffer, both written by one index_put
(PairedKVCache). Import mtc.torch, not this module."""
import sys
from typing import Dict, Tuple

import torch
import torch.nn.functional as F

from ._fused_linear import _linear_tensors, rope_mismatch


class PairedKVCache(torch.nn.Module):
    """gpt-fast's KVCache (``k_cache`` and ``v_cache`` buffers [B, H, S, D],
    ``update(input_pos, k, v)``) with both caches in one buffer ``kv`` [2,
    B, H, S, D]: ``k_cache`` is ``kv[0]`` and ``v_cache`` ``kv[1]``, each
    contiguous as before, and ``update`` writes both with one index_put,
    which Inductor compiles to one kernel instead of one per cache."""

    def __init__(self, cache):
        if not PairedKVCache.pairable(cache):
            raise TypeError(
                f"cache: expected gpt-fast's KVCache (k_cache and v_cache "
                f"of one 4-D shape, dtype and device, and update), got "
                f"{type(cache).__name__}")
        super().__init__()
        self.register_buffer("kv", torch.stack([cache.k_cache,
                                                cache.v_cache]))

    @staticmethod
    def pairable(cache) -> bool:
        """Whether ``cache`` is a gpt-fast KVCache: of a class named
        KVCache (another cache's update may mean something else), with two
        buffers of one 4-D shape, dtype and device and an update method."""
        k, v = (getattr(cache, n, None) for n in ("k_cache", "v_cache"))
        return isinstance(cache, torch.nn.Module) and \
            type(cache).__name__ == "KVCache" and \
            callable(getattr(cache, "update", None)) and \
            isinstance(k, torch.Tensor) and isinstance(v, torch.Tensor) and \
            k.dim() == 4 and k.shape == v.shape and k.dtype == v.dtype and \
            k.device == v.device

    @property
    def k_cache(self):
        return self.kv[0]

    @property
    def v_cache(self):
        return self.kv[1]

    def update(self, input_pos, k_val, v_val):
        """KVCache.update: k_val and v_val [B, H, T, D] at the T positions
        of input_pos; returns the two caches."""
        return self.update_pair(input_pos, torch.stack([k_val, v_val]))

    def update_pair(self, input_pos, kv_val):
        """kv_val [2, B, H, T, D] (keys, then values) at the T positions of
        input_pos; returns the two caches."""
        assert input_pos.shape[0] == kv_val.shape[3]
        self.kv[:, :, :, input_pos] = kv_val
        return self.kv[0], self.kv[1]


class _GroupedAttention:
    """Mixed into a fused block's gpt-fast Attention whose query heads share
    key and value heads (n_head a multiple of n_local_heads): the g query
    heads of each key/value head attend as g x seqlen rows of one head, so
    SDPA reads the cache as it is. gpt-fast's forward repeats the whole
    cache g times instead (repeat_interleave), every layer and step: a copy
    that grows with the batch and the cache length (Inductor fuses it into
    SDPA's input; it took 0.58 to 1.19 ms per step at B = 16, H100,
    bench/results/2026-12-05-fuse-rows). The rotary embedding is the
    model's own (its module's apply_rotary_emb). Where wqkv is fused with
    the norm (_NormedLinear) and its rotation matched PyTorch's at fuse time
    (_rope_in_wqkv_why), the call has at most _mtc_max_rows rows and its
    tokens share one table row or it has one sequence, the rotary embedding
    is wqkv's epilogue instead (norm_linear's rope). Its kv_cache, at fuse
    time and whenever one is set (gpt-fast's setup_caches), becomes a
    PairedKVCache. A mask other than [1, 1, seqlen or 1, S] goes through
    the model's forward."""

    def __setattr__(self, name, value):
        # gpt-fast's setup_caches sets a new KVCache on every layer.
        if name == "kv_cache" and PairedKVCache.pairable(value):
            value = PairedKVCache(value)
        super().__setattr__(name, value)

    def forward(self, x, freqs_cis, mask, input_pos=None):
        b, t, _ = x.shape
        if mask is not None and (mask.dim() != 4 or mask.shape[:2] != (1, 1)
                                 or mask.shape[2] not in (1, t)):
            return super().forward(x, freqs_cis, mask, input_pos)
        heads, kv_heads, d = self.n_head, self.n_local_heads, self.head_dim
        g, rope = heads // kv_heads, self._mtc_rotary
        sizes, cache = [self.dim, kv_heads * d, kv_heads * d], self.kv_cache
        rotated = self._mtc_rope_in_wqkv and \
            b * t <= self._mtc_max_rows and (b == 1 or t == 1) and \
            freqs_cis.dim() == 3 and tuple(freqs_cis.shape) == (t, d // 2, 2)
        # freqs_cis[input_pos]: a row of (cos, sin) pairs per token.
        y = self.wqkv(x, rope=(freqs_cis.reshape(t, d),
                               self.dim + kv_heads * d)) if rotated \
            else self.wqkv(x)
        q, k, v = y.split(sizes, dim=-1)
        q, k = q.view(b, t, heads, d), k.view(b, t, kv_heads, d)
        if not rotated:
            q, k = rope(q, freqs_cis), rope(k, freqs_cis)
        q = q.transpose(1, 2)
        if rotated and isinstance(cache, PairedKVCache):
            # k and v side by side in y's rows: [2, b, kv_heads, t, d] as
            # one view, written to both caches by one index_put.
            k, v = cache.update_pair(input_pos, y[..., self.dim:].view(
                b, t, 2, kv_heads, d).permute(2, 0, 3, 1, 4))
        else:
            k, v = k.transpose(1, 2), v.view(b, t, kv_heads, d).transpose(1, 2)
            if cache is not None:
                k, v = cache.update(input_pos, k, v)
        # Query head j * g + i reads key/value head j (repeat_interleave's
        # order); it becomes rows i * t .. i * t + t - 1 of head j, whose
        # mask rows are the t rows of the mask again.
        q = q.reshape(b, kv_heads, g * t, d)
        if mask is not None and t > 1 and mask.shape[2] == t:
            mask = mask.repeat(1, 1, g, 1)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                           dropout_p=0.0)
        # reshape, not view: SDPA's memory-efficient backend returns its
        # output transposed (heads inside rows), which view cannot split.
        y = y.reshape(b, heads, t, d).transpose(1, 2).contiguous()
        return self.wo(y.view(b, t, self.dim))


def _grouped_rotary(attn):
    """The rotary embedding function of a gpt-fast Attention whose heads
    are grouped (n_head > n_local_heads, dim = n_head * head_dim), with a
    kv_cache attribute: its module's apply_rotary_emb; else None."""
    ints = [getattr(attn, n, None) for n in
            ("n_head", "n_local_heads", "head_dim", "dim")]
    if not all(isinstance(i, int) and i > 0 for i in ints) or \
            not hasattr(attn, "kv_cache"):
        return None
    heads, kv_heads, d, dim = ints
    if heads <= kv_heads or heads % kv_heads or dim != heads * d:
        return None
    rope = getattr(sys.modules.get(type(attn).__module__),
                   "apply_rotary_emb", None)
    return rope if callable(rope) else None


_ROPE_STAYS = "its rotary embedding stays the model's: "
# The outcome of _rope_in_wqkv_why's check per (device, wqkv's shape and
# kind, head dim, rotated columns, rows): "" or the reason.
_rope_checks: Dict[Tuple, str] = {}


@torch.no_grad()
def _rope_in_wqkv_why(attn, max_rows) -> str:
    """"" where a grouped attention's fused wqkv may rotate q and k in its
    epilogue: on the CPU (norm_linear's eager formulas), or where mtc's
    kernels matched PyTorch's formulas (in f32) on random rows, one row and
    ``max_rows`` of them (the kinds a decode step runs at its smallest and
    largest fused batch), checked once per device and shape; else why
    not."""
    norm, group = attn.wqkv._mtc_norm
    w, sc, z = _linear_tensors(attn.wqkv, group)
    if w.device.type != "cuda":
        return ""
    d, cols = attn.head_dim, attn.dim + attn.n_local_heads * attn.head_dim
    for rows in sorted({1, max_rows}):
        key = (w.device, tuple(w.shape), group, sc.dtype, d, cols, rows)
        if key not in _rope_checks:
            _rope_checks[key] = rope_mismatch(
                x_dtype=sc.dtype, norm_weight=norm.weight, eps=norm.eps,
                weight=w, scales=sc, zeros=z, groupsize=group, head_dim=d,
                cols=cols, rows=rows)
        if _rope_checks[key]:
            return _rope_checks[key]
    return ""
