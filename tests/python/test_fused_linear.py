"""mtc.torch.norm_linear and linear_residual without a GPU: the graphs
compile to the kernels the fusion promises, the eager formulas are
gpt-fast's attention norm + wqkv and x + wo(y), fuse_blocks at one row runs
the block's function through them, and bad arguments raise naming the
argument. The GPU half is the matrix's fused_ cases and bench/e2e."""
import subprocess

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed (Debian: python3-torch)")
import mtc  # noqa: E402
import mtc.torch as mt  # noqa: E402

from test_fused import (D, G, Int8Linear, Model, RMSNorm,  # noqa: E402
                        int4_linear)


def int8_args(n=48):
    torch.manual_seed(3)
    lin = Int8Linear(n, D)
    return dict(x=torch.randn(2, 1, D).bfloat16(),
                norm_weight=(torch.rand(D) + 0.5).bfloat16(), eps=1e-5,
                weight=lin.weight, scales=lin.scales), lin


def test_norm_linear_eager_is_norm_then_linear():
    a, lin = int8_args()
    norm = RMSNorm(D)
    norm.weight.data = a["norm_weight"]
    assert torch.equal(mt.norm_linear(**a), lin(norm(a["x"])))
    # int4: the same with the int4 layer.
    q = int4_linear(48, D)
    out = mt.norm_linear(a["x"], a["norm_weight"], 1e-5, q.weight, q.scales,
                         q.zeros, G)
    assert torch.equal(out, q(norm(a["x"])))


def test_linear_residual_eager_is_x_plus_linear():
    a, lin = int8_args(D)
    x = a["x"]
    y = torch.randn_like(x)
    assert torch.equal(mt.linear_residual(y, lin.weight, lin.scales, x),
                       x + lin(y))
    q = int4_linear(D, D)
    assert torch.equal(mt.linear_residual(y, q.weight, q.scales, x, q.zeros,
                                          G), x + q(y))


def kernels(tmp_path, text, m):
    path = tmp_path / "g.graph"
    path.write_text(text)
    out = subprocess.run([mtc.find_binary(), "compile", str(path), "--bind",
                          f"M={m}", "-o", str(tmp_path / "out")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.split("\n")[0]


def test_graphs_compile(tmp_path):
    # int8 at M = 1: the norm's scaling is the prologue and the statistic
    # is derived in the linear's blocks (one kernel); at M = 2 the norm is
    # one kernel (its statistic applied to the rows) before the linear.
    g = mt.norm_linear_graph("nl", 4096, 6144, "bf16", 1e-5)
    assert kernels(tmp_path, g, 1).startswith("nl: 1 kernel")
    assert kernels(tmp_path, g, 2).startswith("nl: 2 kernels")
    # The rotary embedding of q and k is the linear's epilogue.
    g = mt.norm_linear_graph("nr", 4096, 6144, "bf16", 1e-5,
                             rope=(False, 128, 5120, "bf16"))
    assert kernels(tmp_path, g, 1).startswith("nr: 1 kernel")
    assert kernels(tmp_path, g, 8).startswith("nr: 2 kernels")
    g = mt.norm_linear_graph("nr4", 4096, 6144, "bf16", 1e-5, 128,
                             rope=(True, 128, 5120, "f32"))
    assert kernels(tmp_path, g, 1).startswith("nr4: 2 kernels")
    # int4 starts on mma at M = 1: no prologue.
    g = mt.norm_linear_graph("nl4", 4096, 6144, "bf16", 1e-5, 128)
    assert kernels(tmp_path, g, 1).startswith("nl4: 2 kernels")
    # The residual is the linear's epilogue at every M.
    for gs in (0, 128):
        g = mt.linear_residual_graph("lr", 4096, 4096, "f16", gs)
        for m in (1, 16, 300):
            assert kernels(tmp_path, g, m).startswith("lr: 1 kernel")


def test_fuse_blocks_one_row_keeps_the_function():
    torch.manual_seed(0)
    model = Model()
    x = torch.randn(1, 1, D).bfloat16()
    ref = model(x)
    mt.fuse_blocks(model)
    # One row: block 0's wqkv computes norm_linear, every fused block's wo
    # runs with the residual (their eager formulas on the CPU).
    assert torch.equal(model(x), ref)


@pytest.mark.parametrize("change,error,message", [
    (dict(x=[1.0]), TypeError, "x: expected a torch.Tensor, got list"),
    (dict(eps=0), ValueError, "eps: expected a positive float, got 0"),
    (dict(weight=torch.zeros(48, D)), TypeError,
     "weight: expected dtype torch.int8, got torch.float32"),
    (dict(weight=torch.zeros(48, D + 2, dtype=torch.int8)), ValueError,
     r"weight: expected \[N, 32\] \(K = x's last dimension\), got 34 "
     "columns"),
    (dict(scales=torch.ones(47).bfloat16()), ValueError,
     r"scales: expected shape \[48\] \(N of weight\), got \[47\]"),
    (dict(scales=torch.ones(48)), TypeError,
     "scales: expected dtype torch.bfloat16 .x's., got torch.float32"),
    (dict(zeros=torch.ones(48).bfloat16()), ValueError,
     r"zeros: int8 weights \(groupsize 0\) take none"),
    (dict(groupsize=-1), ValueError,
     "groupsize: expected 0 .int8. or an int4 group size, got -1"),
])
def test_norm_linear_errors(change, error, message):
    a, _ = int8_args()
    a.update(change)
    with pytest.raises(error, match=message):
        mt.norm_linear(**a)


TABLE = torch.ones(1, 8).bfloat16()


@pytest.mark.parametrize("rope,error,message", [
    (TABLE, TypeError, "rope: expected None or a .table, cols. tuple, got "
                       "Tensor"),
    (([1.0], 8), TypeError, "rope: expected a .table, cols. with table a "
                            "torch.Tensor, got list"),
    ((TABLE, 8.0), TypeError, "rope: cols must be an int, got float"),
    ((TABLE.int(), 8), TypeError,
     "rope: the table must be bf16, f16 or f32, got torch.int32"),
    ((torch.ones(3, 8).bfloat16(), 8), ValueError,
     r"rope: the table must be \[1, D\] or \[2, D\] with D even, got "
     r"\[3, 8\]"),
    ((torch.ones(1, 7).bfloat16(), 7), ValueError,
     r"rope: the table must be \[1, D\] or \[2, D\] with D even, got "
     r"\[1, 7\]"),
    ((TABLE, 12), ValueError,
     "rope: cols must be a positive multiple of 8, at most 48, got 12"),
    ((TABLE, 56), ValueError,
     "rope: cols must be a positive multiple of 8, at most 48, got 56"),
])
def test_norm_linear_rope_errors(rope, error, message):
    a, _ = int8_args()
    with pytest.raises(error, match=message):
        mt.norm_linear(**a, rope=rope)


def test_norm_linear_rope_eager():
    a, lin = int8_args()
    table = torch.randn(2, 8).bfloat16()
    y = mt.norm_linear(**a)
    assert torch.equal(mt.norm_linear(**a, rope=(table, 32)),
                       mt.rope_eager(y, table, 32))


@pytest.mark.parametrize("change,error,message", [
    (dict(residual=None), TypeError,
     "residual: expected a torch.Tensor, got NoneType"),
    (dict(residual=torch.zeros(2, 1, 48).bfloat16()), ValueError,
     r"residual: expected shape \[2, 1, 32\], got \[2, 1, 48\]"),
    (dict(residual=torch.zeros(2, 1, D)), TypeError,
     "residual: expected dtype torch.bfloat16 .y's., got torch.float32"),
    (dict(y=torch.zeros(2, 1, D, dtype=torch.int32)), TypeError,
     "y: expected dtype torch.bfloat16 or torch.float16, got torch.int32"),
    (dict(zeros=None, groupsize=G), TypeError,
     "zeros: expected a torch.Tensor .int4., got NoneType"),
])
def test_linear_residual_errors(change, error, message):
    a, lin = int8_args(D)
    args = dict(y=torch.randn(2, 1, D).bfloat16(), weight=lin.weight,
                scales=lin.scales, residual=a["x"])
    args.update(change)
    with pytest.raises(error, match=message):
        mt.linear_residual(**args)


GPU = pytest.mark.skipif(not torch.cuda.is_available() or
                         not mt.HAS_CUSTOM_OP,
                         reason="needs a CUDA GPU and PyTorch 2.4+ for mtc's "
                                "kernels")


def rel_err(out, ref):
    return ((out.float() - ref.float()).abs().max() /
            ref.float().abs().max()).item()


@GPU
@pytest.mark.parametrize("groupsize", [0, 64])
@pytest.mark.parametrize("m", [1, 3, 16])
def test_on_gpu(cache_dir, groupsize, m):
    """mtc's kernels against the eager formulas on the CPU (fp32 there)."""
    torch.manual_seed(4)
    k, n = 512, 384
    x = torch.randn(m, k).bfloat16()
    g = (torch.rand(k) + 0.5).bfloat16()
    if groupsize:
        lin = mt.Int4Linear(*mt.quantize_int4(torch.randn(n, k).bfloat16(),
                                              groupsize), groupsize)
        w, s, z = lin.weight, lin.scales, lin.zeros
    else:
        lin = Int8Linear(n, k)
        w, s, z = lin.weight, lin.scales, None
    ref = mt.norm_linear_eager(x.float(), g.float(), 1e-5, w, s.float(),
                               None if z is None else z.float(), groupsize)
    cuda = [t.cuda() if t is not None else None for t in (x, g, w, s, z)]
    out = mt.norm_linear(cuda[0], cuda[1], 1e-5, *cuda[2:4], cuda[4],
                         groupsize).cpu()
    assert out.shape == (m, n) and rel_err(out, ref) < 2e-2
    y, r = torch.randn(m, k).bfloat16(), torch.randn(m, n).bfloat16()
    wo = Int8Linear(n, k) if not groupsize else lin
    ref = mt.linear_residual_eager(y.float(), wo.weight, wo.scales.float(),
                                   r.float(), None if z is None else
                                   z.float(), groupsize)
    out = mt.linear_residual(y.cuda(), wo.weight.cuda(), wo.scales.cuda(),
                             r.cuda(), None if z is None else z.cuda(),
                             groupsize).cpu()
    assert rel_err(out, ref) < 2e-2


@GPU
def test_fused_blocks_under_compile(cache_dir):
    """fuse_blocks' classes under torch.compile(fullgraph=True,
    mode="reduce-overhead"), as gpt-fast compiles decoding: one row (the
    norm inside wqkv) and three, each fused block against the unfused one
    on the same input (block by block: four random blocks in a row grow
    the activations to hundreds, and with them bf16's rounding)."""
    torch.manual_seed(5)
    model = Model().cuda().requires_grad_(False)
    fused = Model().cuda().requires_grad_(False)
    fused.load_state_dict(model.state_dict())
    mt.kernels = mt.Kernels(tune=False, progress=False)
    mt.fuse_blocks(fused)
    steps = [torch.compile(layer, fullgraph=True, mode="reduce-overhead")
             for layer in fused.layers]
    for rows in (1, 3):
        x = torch.randn(rows, 1, D).bfloat16().cuda()
        for ref_layer, step in zip(model.layers, steps):
            with torch.no_grad():  # as gpt-fast decodes
                ref = ref_layer(x, None, None, None)
                for _ in range(3):
                    out = step(x, None, None, None).clone()
            assert rel_err(out, ref) < 2e-2
            x = ref
