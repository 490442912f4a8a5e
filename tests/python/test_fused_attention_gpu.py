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
from mtc import _fuse_blocks  # noqa: E402

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
    assert isinstance(attn, _fuse_blocks._GroupedAttention)
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
