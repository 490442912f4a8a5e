"""fuse_blocks' grouped attention on a GPU, with PyTorch's own SDPA (whatever
backend it picks for each form): the same attention as the gpt-fast-style
forward that repeats the cache per query head, in bf16, for a prefill and
decode steps, eager and under torch.compile(fullgraph=True) as gpt-fast
compiles its step. The CPU half (the exact check, the forms it leaves
alone) is test_fused_attention.py."""
import copy

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: the grouped attention's GPU tests need one",
                allow_module_level=True)
import mtc.torch as mt  # noqa: E402
from mtc import _fused_attention, _fused_linear  # noqa: E402

import test_fused_attention as fa  # noqa: E402


def run(attn, compiled=False):
    """A 3-token prefill and two decode steps (test_fused_attention.steps
    on the GPU, bf16); the decode steps through torch.compile if asked."""
    attn.kv_cache = fa.KVCache(2).cuda().bfloat16()
    step = torch.compile(attn, fullgraph=True) if compiled else attn
    table = fa.rope_table().cuda()
    causal = fa.CAUSAL.cuda()
    g = torch.Generator(device="cuda").manual_seed(5)
    outs = []
    for i, pos in enumerate((torch.arange(0, 3), torch.tensor([3]),
                             torch.tensor([4]))):
        pos = pos.cuda()
        x = torch.randn(2, len(pos), fa.DIM, device="cuda", generator=g)
        f = step if i else attn
        outs.append(f(x.bfloat16(), table[pos], causal[None, None, pos], pos))
    return outs


BACKENDS = {"default": None, "cudnn": "CUDNN_ATTENTION",
            "efficient": "EFFICIENT_ATTENTION", "math": "MATH"}


@pytest.mark.parametrize("backend", list(BACKENDS))
@pytest.mark.parametrize("compiled", [False, True])
def test_grouped_attention_on_the_gpu(compiled, backend):
    """Each SDPA backend that takes a mask: the memory-efficient one
    returns its output transposed (a view of another layout), which the
    grouped form once could not reshape under torch.compile."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    torch.manual_seed(0)
    block = fa.TransformerBlock()
    ref = copy.deepcopy(block.attention).cuda().bfloat16()
    mt.fuse_blocks(block)
    attn = block.attention.cuda().bfloat16()
    assert isinstance(attn, _fused_attention._GroupedAttention)
    torch._dynamo.reset()
    want = run(ref)
    name = BACKENDS[backend]
    if name is None:
        got = run(attn, compiled)
    else:
        try:
            with sdpa_kernel([getattr(SDPBackend, name)]):
                got = run(attn, compiled)
        except RuntimeError as e:
            if "No available kernel" not in str(e):
                raise
            pytest.skip(f"SDPA's {backend} backend cannot run here: {e}")
    assert attn.repeats == 0
    for g, r in zip(got, want):
        err = (g.float() - r.float()).abs().max() / r.float().abs().max()
        assert err < 2e-2, err


def test_rotary_embedding_in_wqkv_on_the_gpu(cache_dir):
    """int8 wqkv and wo: fuse_blocks checks mtc's rotation in wqkv's
    epilogue against PyTorch's once, then decode steps (2 sequences, one
    token each) rotate q and k there and match the unfused block."""
    block, ref = fa.int8_block()
    block, ref = block.cuda(), ref.cuda()
    assert mt.fuse_blocks(block) == (1, [])
    attn = block.attention
    assert attn._mtc_rope_in_wqkv
    calls = []

    def counted(x, freqs_cis):
        calls.append(x.shape)
        return fa.apply_rotary_emb(x, freqs_cis)
    object.__setattr__(attn, "_mtc_rotary", counted)
    want = fa.steps(ref, 2, torch.bfloat16, "cuda")
    got = fa.steps(block, 2, torch.bfloat16, "cuda")
    assert len(calls) == 2  # the prefill's q and k: 2 x 3 tokens
    for g, r in zip(got, want):
        err = (g.float() - r.float()).abs().max() / r.float().abs().max()
        assert err < 5e-2, err


def test_rotary_embedding_that_does_not_match_stays_the_models(monkeypatch):
    """A wqkv whose rotation does not match PyTorch's (here a norm_linear
    that returns zeros) keeps the model's apply_rotary_emb, and fuse_blocks
    says so."""
    block, _ = fa.int8_block()
    block = block.cuda()
    _fused_attention._rope_checks.clear()
    monkeypatch.setattr(_fused_linear, "norm_linear",
                        lambda x, *a, **k: torch.zeros(
                            x.shape[0], block.attention.wqkv.weight.shape[0],
                            device=x.device, dtype=x.dtype))
    fused, left = mt.fuse_blocks(block)
    _fused_attention._rope_checks.clear()
    assert fused == 1 and len(left) == 1 and left[0][0] == "attention"
    assert "its rotary embedding stays the model's: mtc's rotation in " \
           "wqkv's epilogue did not match PyTorch's" in left[0][1]
    assert not block.attention._mtc_rope_in_wqkv


def test_compiled_decode_with_rope_and_paired_cache(cache_dir):
    """int8 wqkv and wo under torch.compile(fullgraph=True), as gpt-fast
    compiles its decode step: q and k rotated in wqkv's epilogue, k and v
    written to the PairedKVCache from wqkv's rows by one index_put; the
    outputs and the caches match the unfused block's. Without gradients,
    as gpt-fast decodes (mtc's custom ops have no backward)."""
    block, ref = fa.int8_block()
    block, ref = block.cuda(), ref.cuda()
    assert mt.fuse_blocks(block) == (1, [])
    torch._dynamo.reset()
    with torch.no_grad():
        want = fa.steps(ref, 2, torch.bfloat16, "cuda")
        got = fa.steps(block, 2, torch.bfloat16, "cuda",
                       torch.compile(block, fullgraph=True))
    cache = block.attention.kv_cache
    assert isinstance(cache, mt.PairedKVCache)
    for g, r in zip(got, want):
        err = (g.float() - r.float()).abs().max() / r.float().abs().max()
        assert err < 5e-2, err
    for name in ("k_cache", "v_cache"):
        g = getattr(cache, name).float()
        r = getattr(ref.attention.kv_cache, name).float()
        assert g[:, :, :5].any() and not g[:, :, 5:].any()
        assert (g - r).abs().max() <= 5e-2 * r.abs().max()
