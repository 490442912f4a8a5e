#!/usr/bin/env python3
"""Where mtc.torch stops using mtc's kernels: mtc against PyTorch's eager
dequantise + cuBLAS path, per Llama-3-8B linear shape and row count M.

mtc.torch runs M up to its largest bucket on mtc kernels and larger M (a
prefill) on ``F.linear(x, w.to(x.dtype)) * scales``. This measures both at
each M, through the Python package (an Artifact compiled for exactly that M,
heuristic schedules), timed the same way: a CUDA graph of `calls` calls
cycling through weight copies that together exceed 4x L2, replayed 10
times, median per call (bench/graph_timing.py, as bench/compare.py). Every output is checked against an fp64
reference computed on the GPU. One JSON line per (shape, M) in
OUT/routing.jsonl and a table in OUT/routing.md.

    python3 bench/e2e/routing.py --out OUT [--ms 64,128,256,512,1024,2048]
"""
import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "python"))
sys.path.insert(0, str(HERE.parent))
from graph_timing import time_rotated  # noqa: E402

# Llama-3-8B: wqkv, wo, w1/w3, w2, output.
SHAPES = [(6144, 4096), (4096, 4096), (14336, 4096), (4096, 14336),
          (128256, 4096)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--ms", default="64,128,256,512,1024,2048")
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F
    import mtc
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ms = [int(m) for m in args.ms.split(",")]
    torch.cuda.synchronize()  # a current CUDA context for the Artifacts
    dev = torch.cuda.get_device_name(0)
    rows = []
    # One artifact per shape, with every M as a bucket (heuristic schedules).
    graphs = {f"route_{n}x{k}": mtc.linear_graph(f"route_{n}x{k}", n, k)
              for n, k in SHAPES}
    paths = mtc.compile_graphs(graphs, ms, tune=False, progress=None)
    for n, k in SHAPES:
        art = mtc.Artifact(paths[f"route_{n}x{k}"])
        g = torch.Generator(device="cuda").manual_seed(n + k)
        w = torch.randint(-128, 128, (n, k), dtype=torch.int8, device="cuda",
                          generator=g)
        s = (torch.rand(n, device="cuda", generator=g) * 0.01).bfloat16()
        for m in ms:
            x = torch.randn(m, k, device="cuda", generator=g).bfloat16()
            ref = (x.double() @ w.double().t()) * s.double()
            y = torch.full((m, n), float("nan"), device="cuda",
                           dtype=torch.bfloat16)

            def run_mtc(wc):  # x, s and y stay: only the weight streams
                art.launch(m, torch.cuda.current_stream().cuda_stream,
                           [x.data_ptr(), wc.data_ptr(), s.data_ptr()],
                           [y.data_ptr()])

            def run_eager(wc):
                return F.linear(x, wc.to(x.dtype)) * s
            errs = {}
            for name, fn in (("mtc", run_mtc), ("eager", run_eager)):
                y.fill_(float("nan"))
                r = fn(w)
                got = y if r is None else r
                torch.cuda.synchronize()
                errs[name] = ((got.double() - ref).abs().max() /
                              ref.abs().max()).item()
            row = dict(n=n, k=k, m=m, device=dev,
                       mtc_us=time_rotated(torch, run_mtc, (w,), w.numel(),
                                           replays=10),
                       eager_us=time_rotated(torch, run_eager, (w,),
                                             w.numel(), replays=10),
                       mtc_err=errs["mtc"], eager_err=errs["eager"])
            row["faster"] = "mtc" if row["mtc_us"] < row["eager_us"] else \
                "eager"
            rows.append(row)
            print(json.dumps(row), flush=True)
            del ref
        art.close()
    with open(out / "routing.jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    lines = ["| N x K | " + " | ".join(f"M={m}" for m in ms) + " |",
             "|---|" + "---|" * len(ms)]
    for n, k in SHAPES:
        cells = []
        for m in ms:
            r = next(r for r in rows if (r["n"], r["k"], r["m"]) == (n, k, m))
            cells.append(f"{r['mtc_us']:.1f} / {r['eager_us']:.1f}")
        lines.append(f"| {n} x {k} | " + " | ".join(cells) + " |")
    text = (f"# mtc / eager dequantise + cuBLAS, us per call ({dev})\n\n" +
            "\n".join(lines) + "\n\nmax rel err: mtc " +
            f"{max(r['mtc_err'] for r in rows):.2e}, eager "
            f"{max(r['eager_err'] for r in rows):.2e}\n")
    (out / "routing.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
