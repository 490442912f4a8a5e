"""fuse_blocks' grouped attention without a GPU: a gpt-fast-style Attention
whose query heads share key/value heads attends with each key/value head's
query heads as rows of one head, reading the KV cache without gpt-fast's
repeat_interleave copy, and computes the same attention (decode and
prefill, with the cache and a causal mask); attentions it cannot take run
their own forward. The real model runs on the GPU: bench/e2e/gpt_fast.py
(its logits against an fp32 eager copy)."""
import copy
import math

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed (Debian: python3-torch)")
import torch.nn.functional as F  # noqa: E402
import mtc.torch as mt  # noqa: E402
from mtc import _fuse_blocks, _fused_attention  # noqa: E402

from test_fused import Int8Linear, RMSNorm  # noqa: E402

HEADS, KV_HEADS, HEAD_DIM = 4, 2, 8
DIM = HEADS * HEAD_DIM
SEQ = 16


def reference_sdpa(q, k, v, attn_mask=None, dropout_p=0.0):
    """softmax(q k^T / sqrt(d) + mask) v, for PyTorch without SDPA (Debian's
    1.13) and as the one attention both forwards here use."""
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if attn_mask is not None:
        s = s.masked_fill(~attn_mask, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


@pytest.fixture(autouse=True)
def sdpa(monkeypatch):
    monkeypatch.setattr(F, "scaled_dot_product_attention", reference_sdpa,
                        raising=False)


def apply_rotary_emb(x, freqs_cis):
    """A rotary embedding on pairs (x: [B, T, H, D], freqs_cis: [T, D/2, 2]),
    found by fuse_blocks as this module's apply_rotary_emb."""
    pairs = x.float().reshape(*x.shape[:-1], -1, 2)
    c = freqs_cis.view(1, pairs.shape[1], 1, pairs.shape[3], 2)
    out = torch.stack([pairs[..., 0] * c[..., 0] - pairs[..., 1] * c[..., 1],
                       pairs[..., 1] * c[..., 0] + pairs[..., 0] * c[..., 1]],
                      -1)
    return out.flatten(3).type_as(x)


class KVCache(torch.nn.Module):
    def __init__(self, batch):
        super().__init__()
        shape = (batch, KV_HEADS, SEQ, HEAD_DIM)
        self.register_buffer("k_cache", torch.zeros(shape))
        self.register_buffer("v_cache", torch.zeros(shape))

    def update(self, input_pos, k, v):
        self.k_cache[:, :, input_pos] = k
        self.v_cache[:, :, input_pos] = v
        return self.k_cache, self.v_cache


class Attention(torch.nn.Module):
    """gpt-fast's Attention: grouped heads, the cache repeated per query
    head."""

    def __init__(self):
        super().__init__()
        self.wqkv = torch.nn.Linear(DIM, (HEADS + 2 * KV_HEADS) * HEAD_DIM,
                                    bias=False)
        self.wo = torch.nn.Linear(DIM, DIM, bias=False)
        self.kv_cache = None
        self.n_head, self.n_local_heads = HEADS, KV_HEADS
        self.head_dim, self.dim = HEAD_DIM, DIM
        self.repeats = 0

    def forward(self, x, freqs_cis, mask, input_pos=None):
        b, t, _ = x.shape
        kv = KV_HEADS * HEAD_DIM
        q, k, v = self.wqkv(x).split([DIM, kv, kv], dim=-1)
        q = apply_rotary_emb(q.view(b, t, HEADS, HEAD_DIM), freqs_cis)
        k = apply_rotary_emb(k.view(b, t, KV_HEADS, HEAD_DIM), freqs_cis)
        v = v.view(b, t, KV_HEADS, HEAD_DIM)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))
        if self.kv_cache is not None:
            k, v = self.kv_cache.update(input_pos, k, v)
        self.repeats += 1
        k = k.repeat_interleave(HEADS // KV_HEADS, dim=1)
        v = v.repeat_interleave(HEADS // KV_HEADS, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                           dropout_p=0.0)
        y = y.transpose(1, 2).contiguous().view(b, t, DIM)
        return self.wo(y)


class FeedForward(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w1, self.w3 = Int8Linear(48, DIM), Int8Linear(48, DIM)
        self.w2 = Int8Linear(DIM, 48)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(torch.nn.Module):
    """gpt-fast's block: int8 feed-forward linears (so that fuse_blocks
    takes it) and an attention with f32 linears (which stay unfused)."""

    def __init__(self):
        super().__init__()
        self.attention = Attention()
        self.feed_forward = FeedForward()
        self.ffn_norm = RMSNorm(DIM)
        self.attention_norm = RMSNorm(DIM)

    def forward(self, x, input_pos, freqs_cis, mask):
        h = x + self.attention(self.attention_norm(x), freqs_cis, mask,
                               input_pos)
        return h + self.feed_forward(self.ffn_norm(h))


def rope_table():
    pos = torch.arange(SEQ, dtype=torch.float32)[:, None]
    freqs = pos / (10000 ** (torch.arange(0, HEAD_DIM, 2) / HEAD_DIM))
    return torch.stack([freqs.cos(), freqs.sin()], dim=-1)  # [SEQ, D/2, 2]


CAUSAL = torch.tril(torch.ones(SEQ, SEQ, dtype=torch.bool))


def steps(module, batch, dtype=torch.float32, device="cpu", decode=None):
    """A 3-token prefill and two decode steps with the cache and a causal
    mask, as gpt-fast's generate.py runs them: every output. ``module`` is
    an Attention or a TransformerBlock (on ``device``); ``decode`` (e.g.
    the module compiled) runs the decode steps in its place."""
    attn = getattr(module, "attention", module)
    attn.kv_cache = KVCache(batch).to(device, dtype)
    torch.manual_seed(5)
    outs = []
    for pos in (torch.arange(0, 3), torch.tensor([3]), torch.tensor([4])):
        f = decode if decode is not None and len(pos) == 1 else module
        x = torch.randn(batch, len(pos), DIM).to(device, dtype)
        mask = CAUSAL[None, None, pos].to(device)
        table = rope_table()[pos].to(device)
        pos = pos.to(device)
        if module is attn:
            outs.append(f(x, table, mask, pos))
        else:
            outs.append(f(x, pos, table, mask))
    return outs


LEFT = [("attention", "its attention's wqkv and wo are not int8 per "
         "channel or mtc's int4 (Int4Linear) without bias (mtc.torch.swap "
         "or quantize_ makes them so)")]


@pytest.mark.parametrize("batch", [1, 2])
def test_grouped_attention_is_the_same_attention(batch):
    torch.manual_seed(0)
    block = TransformerBlock()
    ref = copy.deepcopy(block.attention)
    assert mt.fuse_blocks(block) == (1, LEFT)
    assert isinstance(block.attention, _fused_attention._GroupedAttention)
    got, want = steps(block.attention, batch), steps(ref, batch)
    # No copy of the cache per query head: the model's forward never ran.
    assert block.attention.repeats == 0 and ref.repeats == 3
    for g, r in zip(got, want):
        assert torch.allclose(g, r, rtol=1e-5, atol=1e-6), (g - r).abs().max()


def int8_block():
    """A block whose attention linears are int8 too (so that they fuse), its
    norms in bf16, and an unfused copy of it."""
    torch.manual_seed(0)
    block = TransformerBlock()
    block.attention.wqkv = Int8Linear((HEADS + 2 * KV_HEADS) * HEAD_DIM, DIM)
    block.attention.wo = Int8Linear(DIM, DIM)
    for m in (block.ffn_norm, block.attention_norm):
        m.weight.data = m.weight.data.bfloat16()
    return block, copy.deepcopy(block)


def test_grouped_attention_with_fused_linears():
    """int8 wqkv and wo in bf16: the norm inside wqkv, wo deferred to the
    block's residual kernel and the feed-forward half one graph (their eager
    formulas on the CPU), the grouped attention between them."""
    block, ref = int8_block()
    assert mt.fuse_blocks(block) == (1, [])
    assert isinstance(block.attention.wqkv, _fuse_blocks._NormedLinear)
    assert isinstance(block.attention, _fused_attention._GroupedAttention)
    got = steps(block, 2, torch.bfloat16)
    want = steps(ref, 2, torch.bfloat16)
    assert block.attention.repeats == 0 and ref.attention.repeats == 3
    for g, r in zip(got, want):
        assert g.dtype == torch.bfloat16
        # Decode steps come out bit-equal here; the prefill's attention
        # rounds its bf16 products in another order (6 query rows a head
        # instead of 3), 1.5e-2 of the largest output after the random int8
        # layers. test_grouped_attention_is_the_same_attention is the exact
        # check (f32).
        err = (g.float() - r.float()).abs().max() / r.float().abs().max()
        assert err < 5e-2, err


def test_rope_eager_is_apply_rotary_emb():
    torch.manual_seed(1)
    y = torch.randn(3, (HEADS + 2 * KV_HEADS) * HEAD_DIM).bfloat16()
    table = rope_table()[[2, 5, 7]]
    cols = (HEADS + KV_HEADS) * HEAD_DIM
    want = torch.cat([apply_rotary_emb(y[None, :, :cols].view(
        1, 3, HEADS + KV_HEADS, HEAD_DIM), table).view(3, cols),
        y[:, cols:]], -1)
    assert torch.equal(mt.rope_eager(y, table.reshape(3, HEAD_DIM), cols),
                       want)


@pytest.mark.parametrize("batch,model_ropes", [(1, 0), (2, 2)])
def test_fused_wqkv_applies_the_rotary_embedding(batch, model_ropes):
    """Where wqkv holds the norm, a call of one sequence or one token a
    sequence rotates q and k in wqkv's graph (norm_linear's rope); a
    prefill of several sequences (2 x 3 tokens: their rows need different
    table rows) calls the model's apply_rotary_emb, for q and for k."""
    block, ref = int8_block()
    mt.fuse_blocks(block)
    attn, calls = block.attention, []

    def counted(x, freqs_cis):
        calls.append(x.shape)
        return apply_rotary_emb(x, freqs_cis)
    object.__setattr__(attn, "_mtc_rotary", counted)
    got = steps(block, batch, torch.bfloat16)
    want = steps(ref, batch, torch.bfloat16)
    assert len(calls) == model_ropes
    for g, r in zip(got[1:], want[1:]):  # decode steps: bit-equal
        assert torch.equal(g, r)


def test_attention_it_cannot_group_runs_its_own_forward():
    # A mask with a head dimension: the model's forward, repeats and all.
    block = TransformerBlock()
    mt.fuse_blocks(block)
    block.attention.kv_cache = KVCache(1)
    mask = torch.ones(1, HEADS, 1, SEQ, dtype=torch.bool)
    block.attention(torch.randn(1, 1, DIM), rope_table()[[0]], mask,
                    torch.tensor([0]))
    assert block.attention.repeats == 1
    # As many key/value heads as query heads: nothing to group.
    block = TransformerBlock()
    block.attention.n_local_heads = HEADS
    mt.fuse_blocks(block)
    assert not isinstance(block.attention, _fused_attention._GroupedAttention)
    # No apply_rotary_emb in the attention's module: left alone.
    assert _fused_attention._grouped_rotary(torch.nn.Linear(2, 2)) is None


def test_grouped_attention_can_be_left_out():
    block = TransformerBlock()
    assert mt.fuse_blocks(block, grouped_attention=False) == (1, LEFT)
    assert not isinstance(block.attention, _fused_attention._GroupedAttention)
    block.attention.kv_cache = KVCache(1)
    block.attention(torch.randn(1, 1, DIM), rope_table()[[0]],
                    CAUSAL[None, None, [0]], torch.tensor([0]))
    assert block.attention.repeats == 1


@pytest.mark.parametrize("bad", [1, None, "yes"])
def test_grouped_attention_is_checked(bad):
    with pytest.raises(TypeError, match="grouped_attention: expected a "
                                        f"bool, got {type(bad).__name__}"):
        mt.fuse_blocks(TransformerBlock(), grouped_attention=bad)


def test_paired_cache_is_the_model_cache():
    """fuse_blocks keeps a grouped attention's keys and values in one buffer
    (PairedKVCache), at fuse time (the cache's contents kept) and whenever
    the model sets a new cache; decode steps through it compute what the
    model computes, and leave the same caches, whichever path writes them:
    wqkv's rows as they are (rope in wqkv), or the model's k and v."""
    for batch in (1, 2):
        block, ref = int8_block()
        block.attention.kv_cache = KVCache(batch).bfloat16()
        block.attention.kv_cache.k_cache.fill_(3.0)
        mt.fuse_blocks(block)
        cache = block.attention.kv_cache
        assert isinstance(cache, mt.PairedKVCache)
        assert torch.equal(cache.k_cache, torch.full_like(cache.k_cache, 3))
        assert cache.k_cache.data_ptr() == cache.kv.data_ptr()
        assert cache.v_cache.data_ptr() == cache.kv[1].data_ptr()
        assert cache.k_cache.is_contiguous() and not cache.v_cache.any()
        got = steps(block, batch, torch.bfloat16)  # sets a new KVCache
        want = steps(ref, batch, torch.bfloat16)
        cache, ref_cache = block.attention.kv_cache, ref.attention.kv_cache
        assert isinstance(cache, mt.PairedKVCache)
        for g, r in zip(got[1:], want[1:]):
            assert torch.equal(g, r)
        # Positions 0-2 hold the prefill's keys (bf16 rounding apart), 3 and
        # 4 the decode steps' (bit-equal), the rest zeros.
        for name in ("k_cache", "v_cache"):
            g, r = getattr(cache, name), getattr(ref_cache, name)
            assert torch.equal(g[:, :, 3:], r[:, :, 3:])
            assert torch.allclose(g.float(), r.float(), rtol=5e-2,
                                  atol=5e-2)
            assert g[:, :, :5].any()


def test_paired_cache_update_is_kv_cache_update():
    torch.manual_seed(2)
    ref = KVCache(2)
    paired = mt.PairedKVCache(copy.deepcopy(ref))
    pos = torch.tensor([5, 1])
    k, v = (torch.randn(2, KV_HEADS, 2, HEAD_DIM) for _ in range(2))
    for got, want in zip(paired.update(pos, k, v), ref.update(pos, k, v)):
        assert torch.equal(got, want)
    assert not mt.PairedKVCache.pairable(paired)
    assert not mt.PairedKVCache.pairable(torch.nn.Linear(2, 2))
    assert not mt.PairedKVCache.pairable(None)

    class RingCache(KVCache):  # another cache: left alone
        pass
    assert not mt.PairedKVCache.pairable(RingCache(1))
    with pytest.raises(TypeError, match="cache: expected gpt-fast's "
                                        "KVCache .* got Linear"):
        mt.PairedKVCache(torch.nn.Linear(2, 2))
