"""gpt_fast.py's int4 model (--mode int4): gpt-fast's Llama quantized by
WeightOnlyInt4QuantHandler and loaded as generate.py loads an int4
checkpoint, by the shipped path or, where PyTorch >= 2.5 rejects its int32
input to _convert_weight_to_int4pack, with prepare_int4_uint8 swapped in;
one layer checked against its dequantised weights; and the fp32 reference
with every int4 layer an nn.Linear of the weights its quantization stands
for. gpt_fast.py's docstring says more; this is a module of it.
"""
import contextlib
import copy
import io
import sys
import time


def log(*a):
    print(*a, file=sys.stderr, flush=True)


@contextlib.contextmanager
def int4_packing(torch, quantize, path):
    """gpt-fast's quantize.py as shipped ("shipped"), or with its
    prepare_int4_weight_and_scales_and_zeros calling
    _convert_weight_to_int4pack as PyTorch >= 2.5 takes it ("uint8")."""
    if path == "shipped":
        yield
        return

    def prepare_int4_uint8(weight_bf16, groupsize, inner_k_tiles):
        # gpt-fast's own quantization; only the op's input changes: uint8
        # [N, K/2], even k in the high nibble (as torchao packs it).
        w_int32, scales_and_zeros = quantize.group_quantize_tensor(
            weight_bf16, n_bit=4, groupsize=groupsize)
        w_uint8 = pack_int4_uint8(torch, w_int32)
        return (torch.ops.aten._convert_weight_to_int4pack(w_uint8,
                                                           inner_k_tiles),
                scales_and_zeros)

    shipped = quantize.prepare_int4_weight_and_scales_and_zeros
    quantize.prepare_int4_weight_and_scales_and_zeros = prepare_int4_uint8
    try:
        yield
    finally:
        quantize.prepare_int4_weight_and_scales_and_zeros = shipped


def pack_int4_uint8(torch, q):
    """q [N, K] in 0..15 -> uint8 [N, K/2], even k in the high nibble."""
    q = q.to(torch.int32)
    return (q[:, ::2] << 4 | q[:, 1::2]).to(torch.uint8)


def dequantised_int4(torch, quantize, dense_linear, groupsize, in_features):
    """fp32 [N, K] weights that gpt-fast's int4 quantization of
    `dense_linear` stands for: group_quantize_tensor of its bf16 weight
    (zero-padded to in_features, as create_quantized_state_dict pads it),
    then group_dequantize_tensor: (q - 8) * scale + zero."""
    w = dense_linear.weight.data.to(torch.bfloat16)
    k = w.shape[1]
    if in_features != k:
        w = torch.nn.functional.pad(w, pad=(0, in_features - k))
    w_int32, sz = quantize.group_quantize_tensor(w, n_bit=4,
                                                 groupsize=groupsize)
    return quantize.group_dequantize_tensor(
        w_int32, sz.float(), n_bit=4, groupsize=groupsize)[:, :k].contiguous()


def int4_modules(quantize, model):
    """(fqn, parent, name, module) of every WeightOnlyInt4Linear."""
    return [(f"{pname}.{cname}".lstrip("."), parent, cname, child)
            for pname, parent in model.named_modules()
            for cname, child in parent.named_children()
            if isinstance(child, quantize.WeightOnlyInt4Linear)]


def build_int4_model(torch, name, groupsize):
    """The int4 model as generate.py loads a `quantize.py --mode int4`
    checkpoint, its fp32 reference, and how it was packed (a dict for the
    rows)."""
    import quantize
    from model import Transformer
    torch.manual_seed(0)
    t0 = time.time()
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        dense = Transformer.from_name(name)
    torch.set_default_dtype(torch.float32)
    linears = {fqn: m for fqn, m in dense.named_modules()
               if isinstance(m, torch.nn.Linear)}
    info = {}
    model = None
    for path in ("shipped", "uint8"):
        printed = io.StringIO()  # quantize.py prints a line per linear
        try:
            with int4_packing(torch, quantize, path), \
                    contextlib.redirect_stdout(printed):
                state = quantize.WeightOnlyInt4QuantHandler(
                    dense, groupsize).create_quantized_state_dict()
        except Exception as e:
            info[f"int4_{path}_error"] = f"{type(e).__name__}: {e}"[:400]
            log(f"int4 quantization, {path} path, raised: "
                f"{info[f'int4_{path}_error']}")
            continue
        finally:
            for line in printed.getvalue().splitlines():
                if "warning" in line:
                    log(line)
        # generate.py's _load_model: build on meta, convert, assign.
        with torch.device("meta"):
            model = Transformer.from_name(name)
            model = quantize.WeightOnlyInt4QuantHandler(
                model, groupsize).convert_for_runtime()
        model.load_state_dict(state, assign=True)
        model = model.to(device="cuda", dtype=torch.bfloat16).eval()
        del state
        # One layer against its dequantised weights: a packing that the op
        # misreads shows here, before any compile.
        fqn, _, _, mod = int4_modules(quantize, model)[0]
        g = torch.Generator(device="cuda").manual_seed(5)
        k = linears[fqn].in_features
        x = torch.randn(4, k, device="cuda", generator=g,
                        dtype=torch.bfloat16)
        wd = dequantised_int4(torch, quantize, linears[fqn], groupsize,
                              mod.in_features)
        with torch.no_grad():
            ref = x.float() @ wd.T
            err = ((mod(x).float() - ref).abs().max() /
                   ref.abs().max()).item()
        del wd, ref
        info[f"int4_{path}_layer_err"] = err
        log(f"int4, {path} path: {fqn} max rel err {err:.2e} against its "
            "dequantised weights")
        if err <= 2e-2:
            info["int4_pack"] = path
            break
        model = None
    if model is None:
        raise RuntimeError(f"int4: no packing path gave a working model: "
                           f"{info}")
    # The reference: this model with every int4 layer an fp32 nn.Linear of
    # the weights its quantization stands for.
    reference = copy.deepcopy(model)
    for fqn, parent, cname, child in int4_modules(quantize, reference):
        lin = torch.nn.Linear(linears[fqn].in_features, child.out_features,
                              bias=False, device="cuda", dtype=torch.float32)
        lin.weight.data = dequantised_int4(torch, quantize, linears[fqn],
                                           groupsize, child.in_features)
        setattr(parent, cname, lin)
    reference = reference.float()
    del dense, linears
    torch.cuda.empty_cache()
    torch.cuda.synchronize()
    log(f"model {name}: built and quantized to int4 (groups of {groupsize}, "
        f"{info['int4_pack']} path) with its fp32 reference in "
        f"{time.time() - t0:.1f} s")
    return model, reference, info
