"""compare.py's int4 mode (`--weights int4 --group G`): gpt-fast's int4
layer measured in PyTorch, tinygemm (aten._weight_int4pack_mm) and bf16
cuBLAS on the dequantised weights, with the packing they need, and the
fields that tell an int4 row from an int8 one. A module of compare.py, which
has the int4 graph text for mtc (graph_text) and the rest of the harness.
"""
import re

from compare_report import log

INT4_GROUPS = (32, 64, 128, 256)  # what _weight_int4pack_mm takes
INNER_K_TILES = 8  # gpt-fast's WeightOnlyInt4QuantHandler default


def weights_fields(args):
    """The fields that tell an int4 row from an int8 one."""
    if args.weights == "int4":
        return {"weights": "int4", "group": args.group}
    return {}


def torch_version(torch):
    found = re.match(r"(\d+)\.(\d+)", torch.__version__)
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def pack_int4_uint8(torch, q):
    """q [N, K] with values 0..15 -> uint8 [N, K/2], even k in the HIGH
    nibble: the input _convert_weight_to_int4pack takes on CUDA from
    PyTorch 2.5 (as torchao packs it)."""
    q = q.to(torch.int32)
    return (q[:, ::2] << 4 | q[:, 1::2]).to(torch.uint8)


def tinygemm_weight(torch, q, inner_k_tiles=INNER_K_TILES):
    """_weight_int4pack_mm's weight operand for q [N, K] in 0..15, and how
    it was packed: PyTorch >= 2.5 takes uint8 [N, K/2], earlier versions
    int32 [N, K] (what gpt-fast as shipped passes)."""
    if torch_version(torch) >= (2, 5):
        return (torch.ops.aten._convert_weight_to_int4pack(
            pack_int4_uint8(torch, q).contiguous(), inner_k_tiles),
            "uint8 [N, K/2], even k high")
    return (torch.ops.aten._convert_weight_to_int4pack(
        q.to(torch.int32).contiguous(), inner_k_tiles), "int32 [N, K]")


def scales_and_zeros(torch, scales, zeros):
    """bf16 [K/G, N, 2] from scales and zeros [N, K/G] (gpt-fast's
    pack_scales_and_zeros)."""
    return torch.stack([scales, zeros], dim=2).transpose(0, 1).contiguous()


def dequantise_int4(torch, q, scales, zeros, group, dtype):
    """(q - 8) * scale + zero per group, in `dtype` (torch.float64 for the
    reference)."""
    return ((q.to(dtype) - 8) * scales.to(dtype).repeat_interleave(group, 1)
            + zeros.to(dtype).repeat_interleave(group, 1))


def bench_torch_int4(args, rec, ms, shapes, deadline, torch_side):
    """tinygemm (_weight_int4pack_mm) and bf16 cuBLAS on the dequantised
    weights, on the same q, scales and zeros, against an fp64 reference.
    torch_side is compare_torch (the int8 systems' setup_torch, measure and
    seeded_points; it imports this module)."""
    setup_torch, measure = torch_side.setup_torch, torch_side.measure
    torch = setup_torch(args, rec)
    import torch.nn.functional as F

    dev = torch.device("cuda")
    G = args.group

    def tinygemm(x, w4, sz):
        return torch.ops.aten._weight_int4pack_mm(x, w4, G, sz)

    for m, n, k, gen, x in torch_side.seeded_points(torch, ms, shapes,
                                                    deadline):
        q = torch.randint(0, 16, (n, k), device=dev, dtype=torch.int32,
                          generator=gen)
        # Small positive scales and small zeros, as mtc run --check's.
        sc = ((torch.rand(n, k // G, device=dev, generator=gen) + 0.5) /
              64).to(torch.bfloat16)
        zr = ((torch.rand(n, k // G, device=dev, generator=gen) - 0.5) /
              8).to(torch.bfloat16)
        wd = dequantise_int4(torch, q, sc, zr, G, torch.float64)
        ref = x.double() @ wd.T
        del wd
        key = (m, n, k)
        xo_bytes = m * k * 2

        if "tinygemm" in args.systems:
            try:
                w4, how = tinygemm_weight(torch, q)
                rec.meta["int4pack_input"] = how
                sz = scales_and_zeros(torch, sc, zr)
            except Exception as e:
                log(f"  tinygemm M={m} {n}x{k}: packing failed: {e}")
                rec.add(system="tinygemm", m=m, n=n, k=k, us=None,
                        err=None, ok=False, error=str(e)[:500],
                        **weights_fields(args))
            else:
                measure(torch, args, rec, "tinygemm", tinygemm,
                        (x, w4, sz),
                        n * k // 2 + 4 * n * (k // G) + xo_bytes, 0.0,
                        key, ref)
                del w4, sz
        if "cublas_bf16" in args.systems:
            wb = dequantise_int4(torch, q, sc, zr, G, torch.float32).to(
                torch.bfloat16)
            measure(torch, args, rec, "cublas_bf16",
                    lambda x, wb: F.linear(x, wb), (x, wb),
                    2 * n * k + xo_bytes, 0.0, key, ref)
            del wb
        del x, q, sc, zr, ref
        torch.cuda.empty_cache()
