"""mtc.torch without a GPU: argument errors, module recognition, swap's
errors, and the custom op's registration where PyTorch has
torch.library.custom_op (2.4+). The GPU half is tests/gpu/test_torch_gpu.py.
"""
import re

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed (Debian: python3-torch)")
import mtc.torch as mt  # noqa: E402
from mtc import _torch_base  # noqa: E402

needs_custom_op = pytest.mark.skipif(
    not mt.HAS_CUSTOM_OP,
    reason=f"PyTorch {torch.__version__} has no torch.library.custom_op "
           "(2.4+): woq_linear runs as a plain function there")


class Int8Linear(torch.nn.Module):
    """A module with gpt-fast WeightOnlyInt8Linear's buffers and forward."""

    def __init__(self, n, k, dtype=torch.bfloat16):
        super().__init__()
        self.register_buffer("weight", torch.randint(-128, 127, (n, k),
                                                     dtype=torch.int8))
        self.register_buffer("scales", torch.rand(n, dtype=dtype))

    def forward(self, x):
        return torch.nn.functional.linear(x, self.weight.to(x.dtype)) * \
            self.scales


def args(n=16, k=32, m=3, dtype=torch.bfloat16):
    return (torch.randn(m, k, dtype=dtype),
            torch.zeros(n, k, dtype=torch.int8), torch.ones(n, dtype=dtype))


@pytest.mark.parametrize("change, error, message", [
    (dict(x=[1.0]), TypeError, "x: expected a torch.Tensor, got list"),
    (dict(x=torch.zeros(3, 32)), TypeError,
     "x: expected dtype torch.bfloat16 or torch.float16, got torch.float32"),
    (dict(weight=torch.zeros(16, 32)), TypeError,
     "weight: expected dtype torch.int8, got torch.float32"),
    (dict(scales=torch.ones(16, dtype=torch.float16)), TypeError,
     "scales: expected dtype torch.bfloat16 (the dtype of x), got "
     "torch.float16"),
    (dict(bias=torch.ones(16)), TypeError,
     "bias: expected dtype torch.bfloat16 (the dtype of x), got "
     "torch.float32"),
    (dict(bias=3), TypeError, "bias: expected a torch.Tensor, got int"),
    (dict(weight=torch.zeros(16, 32, 1, dtype=torch.int8)), ValueError,
     "weight: expected shape [N, K], got [16, 32, 1]"),
    (dict(x=torch.zeros(3, 31, dtype=torch.bfloat16)), ValueError,
     "x: expected shape [..., 32] (K of weight), got [3, 31]"),
    (dict(scales=torch.ones(15, dtype=torch.bfloat16)), ValueError,
     "scales: expected shape [16] (N of weight), got [15]"),
    (dict(), ValueError, "x: mtc runs on CUDA tensors, got a tensor on cpu"),
])
def test_argument_errors(change, error, message):
    x, w, s = args()
    kw = dict(x=x, weight=w, scales=s, bias=None)
    kw.update(change)
    with pytest.raises(error, match=re.escape(message)):
        mt.woq_linear(**kw)
    with pytest.raises(error, match=re.escape(message)):
        mt.check_args(**kw)


def test_layout_errors():
    x, w, s = args()
    wt = torch.zeros(32, 16, dtype=torch.int8).t()
    with pytest.raises(ValueError, match=re.escape(
            "weight: expected a contiguous tensor, got strides (1, 16); mtc "
            "never copies weights")):
        mt.woq_linear(x, wt, s)
    with pytest.raises(ValueError, match="scales: expected a contiguous"):
        mt.woq_linear(x, w, torch.ones(32, dtype=torch.bfloat16)[::2])


def test_tensor_checks():
    w = torch.zeros(32, 16, dtype=torch.int8).t()
    assert not w.is_contiguous()
    mt.check_tensors(w, torch.ones(16, dtype=torch.bfloat16))
    with pytest.raises(TypeError, match="scales: expected dtype "
                                        "torch.bfloat16 or torch.float16"):
        mt.check_tensors(torch.zeros(4, 4, dtype=torch.int8), torch.ones(4))
    with pytest.raises(TypeError, match="bias: expected dtype torch.bfloat16 "
                                        r"\(the dtype of scales\)"):
        mt.check_tensors(torch.zeros(4, 4, dtype=torch.int8),
                         torch.ones(4, dtype=torch.bfloat16), torch.ones(4))


def test_recognises_gpt_fast_style_modules():
    assert mt.is_woq_module(Int8Linear(16, 32))
    assert mt.is_woq_module(Int8Linear(16, 32, torch.float16))
    assert not mt.is_woq_module(torch.nn.Linear(32, 16))
    assert not mt.is_woq_module(torch.nn.Sequential(Int8Linear(16, 32)))
    m = Int8Linear(16, 32)
    m.scales = torch.ones(8, dtype=torch.bfloat16)
    assert not mt.is_woq_module(m), "scales of the wrong length"
    m = Int8Linear(16, 32)
    m.scales = m.scales.float()
    assert not mt.is_woq_module(m), "f32 scales"
    w = mt.WoqLinear(torch.zeros(16, 32, dtype=torch.int8),
                     torch.ones(16, dtype=torch.bfloat16))
    assert not mt.is_woq_module(w), "already swapped"


def test_woq_module_shares_tensors():
    src = Int8Linear(16, 32)
    m = mt.WoqLinear(src.weight, src.scales)
    assert m.weight is src.weight and m.scales is src.scales
    assert m.bias is None
    assert set(m.state_dict()) == {"weight", "scales"}
    assert "in_features=32, out_features=16, bias=False" in repr(m)


def test_swap_errors():
    with pytest.raises(TypeError, match="model: expected a torch.nn.Module, "
                                        "got dict"):
        mt.swap({})
    model = torch.nn.Sequential(Int8Linear(16, 32))
    with pytest.raises(ValueError, match="model: module '0' is on cpu; move "
                                         "the model to a CUDA device"):
        mt.swap(model, progress=False)
    with pytest.raises(ValueError, match="buckets: expected ascending"):
        mt.swap(model, buckets=(4, 2))
    with pytest.raises(ValueError, match="max_probes: expected a positive"):
        mt.swap(model, max_probes=-1)
    assert isinstance(model[0], Int8Linear), "nothing swapped on an error"


def test_graph_names():
    assert mt.graph_name(6144, 4096, "bf16", False) == "woq_6144x4096_bf16"
    assert mt.graph_name(16, 8, "f16", True) == "woq_16x8_f16_bias"


@needs_custom_op
def test_custom_op_is_registered():
    assert hasattr(torch.ops.mtc, "woq_linear")
    x, w, s = args()
    fake = torch._subclasses.fake_tensor.FakeTensorMode()
    with fake:
        out = torch.ops.mtc.woq_linear(fake.from_tensor(x),
                                       fake.from_tensor(w),
                                       fake.from_tensor(s), None)
    assert tuple(out.shape) == (3, 16) and out.dtype == torch.bfloat16


def test_kernels_settings():
    k = mt.Kernels(progress=False)
    assert k.buckets == mt.DEFAULT_BUCKETS and k.largest == 512
    assert not k.tune, "swap() tunes only when asked"
    loaded = object()
    k._artifacts[(0, 16, 32, "bf16", False)] = loaded
    k.configure(mt.DEFAULT_BUCKETS, False, mt.DEFAULT_MAX_PROBES, True)
    assert k._artifacts, "the same settings keep what is loaded"
    with pytest.raises(ValueError, match="buckets: expected ascending"):
        k.configure((8, 4), False, None, True)
    assert k._artifacts, "bad settings change nothing"
    k.configure((1, 2, 4), False, None, True)
    assert not k._artifacts and k._retired == [loaded], \
        "artifacts of other settings stay alive for captured graphs"
    assert k.largest == 4


def test_unsupported_gpu_is_named(monkeypatch):
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda d: (7, 5))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d: "Tesla T4")
    with pytest.raises(mt.MtcError, match=re.escape(
            "mtc: cuda:0 (Tesla T4) is sm_75; mtc compiles for sm_80, sm_89, "
            "sm_90, sm_90a (compute capability 8.0 and newer)")):
        _torch_base._device_arch(0)


@pytest.mark.parametrize("cc, arch", [
    ((9, 0), "sm_90a"), ((10, 0), "sm_90"), ((12, 0), "sm_90"),
    ((8, 9), "sm_89"), ((8, 6), "sm_80"), ((8, 0), "sm_80"), ((7, 5), None)])
def test_arch_follows_the_cli(cc, arch):
    """The package picks the arch as `mtc run` does for the same GPU
    (tests/lit/CLI/target-gpu.test checks 9.0, 8.9 and 7.5 there)."""
    assert _torch_base.arch_for_capability(*cc) == arch


def test_device_target_spec(monkeypatch):
    """The facts PyTorch reports become `--target`: bandwidth where it
    reports the memory clock and bus (two transfers a clock), none where it
    does not (mtc then takes an H200's per multiprocessor), and "gpu" (mtc's
    own driver query) without the first three."""
    class Props:
        multi_processor_count = 132
        L2_cache_size = 50 << 20
        shared_memory_per_block_optin = 227 * 1024
        memory_clock_rate = 3201000  # kHz
        memory_bus_width = 6144

    props = Props()
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda d: props)
    assert _torch_base.device_target(0) == (
        "sms=132,l2=52428800,smem=232448,bw=4916")
    del Props.memory_clock_rate
    assert _torch_base.device_target(0) == "sms=132,l2=52428800,smem=232448"
    del Props.L2_cache_size
    assert _torch_base.device_target(0) == "gpu"
