#!/usr/bin/env python3
"""The feed-forward half of a Llama-3-8B decoder block, three ways, in one run.

    out = h + w2(silu(w1(n)) * w3(n)),  n = rms_norm(h) * g

with gpt-fast's int8 weights (per-row scales) and gpt-fast's formulas
(RMSNorm in f32, rounded to bf16, times its weight; each linear
F.linear(x, w.to(bf16)) * scales). Systems:
  inductor     the function under torch.compile (fullgraph): Inductor fuses
               the norm and the pointwise ops; the linears are its own
  mtc-linears  the same function with mtc.woq_linear for the three linears,
               under torch.compile: what mtc.torch.swap gives a gpt-fast
               model today (Inductor's norm, SwiGLU and residual kernels
               around mtc's linears)
  mtc-fused    examples/decoder_ffn.graph compiled by mtc over the batch
               sizes as buckets (heuristic schedules): the norm's statistic
               and scaling, SwiGLU and the residual in mtc's kernels
Each is timed as bench/graph_timing.py times kernels (a CUDA graph of calls
cycling through copies of the three weights that exceed 4x L2, replayed,
median per call), its CUDA kernels per call are counted with torch.profiler
(one uncaptured call after warm-up), and its output (poisoned first) is
compared with an fp64 computation of the same formulas without rounding:
max |y - ref| / max |ref|. One JSON line per (system, M) in
OUT/ffn.jsonl and a table in OUT/ffn.md.

    python3 bench/e2e/ffn_block.py --out OUT [--ms 1,8,32,64,200,512]
"""
import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from ceiling import read_ceiling  # noqa: E402
from graph_timing import time_rotated  # noqa: E402

D, H, EPS = 4096, 14336, 1e-5


def ffn(torch, F, linear, h, g, w1, s1, w3, s3, w2, s2):
    """gpt-fast's RMSNorm and FeedForward with `linear(x, w, s)` for its
    WeightOnlyInt8Linear."""
    hf = h.float()
    n = (hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + EPS)).type_as(h)
    n = n * g
    a = F.silu(linear(n, w1, s1)) * linear(n, w3, s3)
    return h + linear(a, w2, s2)


def reference(torch, h, g, w1, s1, w3, s3, w2, s2):
    d = [t.double() for t in (h, g, w1, s1, w3, s3, w2, s2)]
    h, g, w1, s1, w3, s3, w2, s2 = d
    n = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS) * g
    u = (n @ w1.t()) * s1
    a = u * torch.sigmoid(u) * ((n @ w3.t()) * s3)
    return h + (a @ w2.t()) * s2


def count_kernels(torch, fn):
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = [e.name for e in prof.events()
             if e.device_type.name == "CUDA" and
             not e.name.startswith(("Memcpy", "Memset"))]
    return len(names), sorted(set(names))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--ms", default="1,8,32,64,200,512")
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F
    import mtc
    import mtc.torch as mtc_torch
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ms = [int(m) for m in args.ms.split(",")]
    torch.cuda.synchronize()
    dev = torch.cuda.get_device_name(0)
    gen = torch.Generator(device="cuda").manual_seed(24)

    def rand_w(n, k):
        return torch.randint(-128, 128, (n, k), dtype=torch.int8,
                             device="cuda", generator=gen)

    def rand_s(n):
        return (torch.rand(n, device="cuda", generator=gen) * 2e-3 +
                5e-4).bfloat16()

    w1, w3, w2 = rand_w(H, D), rand_w(H, D), rand_w(D, H)
    s1, s3, s2 = rand_s(H), rand_s(H), rand_s(D)
    g = (torch.rand(D, device="cuda", generator=gen) + 0.5).bfloat16()
    weight_bytes = w1.numel() + w3.numel() + w2.numel()
    from mtc._tools import find_binary
    floor_us = weight_bytes / read_ceiling(find_binary()) * 1e6

    def eager_linear(x, w, s):
        return F.linear(x, w.to(x.dtype)) * s

    def mtc_linear(x, w, s):
        return mtc_torch.woq_linear(x, w, s)

    inductor = torch.compile(
        lambda *a: ffn(torch, F, eager_linear, *a), fullgraph=True)
    mtc_linears = torch.compile(
        lambda *a: ffn(torch, F, mtc_linear, *a), fullgraph=True)
    text = (ROOT / "examples" / "decoder_ffn.graph").read_text()
    major, minor = torch.cuda.get_device_capability(0)
    arch = "sm_90a" if (major, minor) == (9, 0) else f"sm_{major}{minor}"
    paths = mtc.compile_graphs({"decoder_ffn": text}, ms, arch=arch,
                               tune=False, progress=None)
    art = mtc.Artifact(paths["decoder_ffn"])

    rows = []
    for m in ms:
        h = torch.randn(m, D, device="cuda", generator=gen).bfloat16()
        ref = reference(torch, h, g, w1, s1, w3, s3, w2, s2)
        y = torch.empty(m, D, device="cuda", dtype=torch.bfloat16)

        def fused(a, b, c):
            art.launch(m, torch.cuda.current_stream().cuda_stream,
                       [h.data_ptr(), g.data_ptr(), a.data_ptr(),
                        s1.data_ptr(), b.data_ptr(), s3.data_ptr(),
                        c.data_ptr(), s2.data_ptr()], [y.data_ptr()])
            return y

        systems = {
            "inductor": lambda a, b, c: inductor(h, g, a, s1, b, s3, c, s2),
            "mtc-linears": lambda a, b, c: mtc_linears(h, g, a, s1, b, s3, c,
                                                       s2),
            "mtc-fused": fused,
        }
        for name, fn in systems.items():
            y.fill_(float("nan"))
            got = fn(w1, w3, w2).double()
            torch.cuda.synchronize()
            err = ((got - ref).abs().max() / ref.abs().max()).item()
            kernels, names = count_kernels(torch, lambda: fn(w1, w3, w2))
            us = time_rotated(torch, fn, (w1, w3, w2), weight_bytes)
            row = dict(system=name, m=m, us=us, kernels=kernels,
                       kernel_names=names, max_rel_err=err,
                       floor_us=floor_us, device=dev)
            rows.append(row)
            print(json.dumps(row), flush=True)
    art.close()
    with open(out / "ffn.jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    names = list(dict.fromkeys(r["system"] for r in rows))
    lines = ["| M | " + " | ".join(names) + " |",
             "|---|" + "---|" * len(names)]
    for m in ms:
        cells = []
        for s in names:
            r = next(r for r in rows if (r["system"], r["m"]) == (s, m))
            cells.append(f"{r['us']:.1f} us, {r['kernels']} kernels, "
                         f"err {r['max_rel_err']:.1e}")
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    text = (f"# Llama-3-8B feed-forward half (norm, SwiGLU, residual), int8, "
            f"{dev}\n\nus per call (weight-read floor at the read rate "
            f"mtc bench measured: {floor_us:.1f} us), CUDA kernels per call, "
            f"max rel err against fp64\n\n" + "\n".join(lines) + "\n")
    (out / "ffn.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
