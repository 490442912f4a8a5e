#!/usr/bin/env python3
"""Where mtc.torch stops using mtc's kernels: mtc against PyTorch's eager
dequantise + cuBLAS path, per Llama-3-8B linear shape and row count M.

mtc.torch runs M up to its largest bucket on mtc kernels and larger M (a
prefill) on ``F.linear(x, w.to(x.dtype)) * scales``. This measures both at
each M, through the Python package (an Artifact compiled for exactly that M,
heuristic schedules), timed the same way: a CUDA graph of `calls` calls
cycling through weight copies that together exceed 4x L2, replayed
`replays` times, median per call. Every output is checked against an fp64
reference computed on the GPU. One JSON line per (shape, M) in
OUT/routing.jsonl and a table in OUT/routing.md.

    python3 bench/e2e/routing.py --out OUT [--ms 64,128,256,512,1024,2048]
"""
import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "python"))

# Llama-3-8B: wqkv, wo, w1/w3, w2, output.
SHAPES = [(6144, 4096), (4096, 4096), (14336, 4096), (4096, 14336),
          (128256, 4096)]


def timed(torch, fn, copies, calls=40, replays=10):
    """Median microseconds per call of fn(copy) over CUDA-graph replays."""
    calls = max(calls, len(copies))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for c in copies:  # warm-up, outside the graph
            fn(c)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(calls):
            fn(copies[i % len(copies)])
    g.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / calls)
    return statistics.median(times)


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
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
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
        copies = [w] + [w.clone() for _ in range(max(0, -(-4 * l2 // w.numel())
                                                    - 1))]
        for m in ms:
            x = torch.randn(m, k, device="cuda", generator=g).bfloat16()
            ref = (x.double() @ w.double().t()) * s.double()
            y = torch.full((m, n), float("nan"), device="cuda",
                           dtype=torch.bfloat16)

            def run_mtc(wc):
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
                       mtc_us=timed(torch, run_mtc, copies),
                       eager_us=timed(torch, run_eager, copies),
                       mtc_err=errs["mtc"], eager_err=errs["eager"],
                       copies=len(copies))
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
