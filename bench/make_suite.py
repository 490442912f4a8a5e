#!/usr/bin/env python3
"""Writes bench/graphs/woq_m<M>.graph: the benchmark suite's weight-only int8
linear layers (y = (x @ convert(W, bf16)^T) * scales) at batch size M."""
import argparse
import os
import sys

SHAPES = [(8192, 8192), (4096, 4096), (6144, 4096), (14336, 4096),
          (28672, 4096), (4096, 14336), (128256, 4096)]
MS = [1, 2, 4, 8, 16, 32, 64, 128, 256]


def graph(m, n, k):
    return (f"graph woq_m{m}_{n}x{k}(x: bf16[{m}, {k}], w: i8[{n}, {k}], "
            f"scales: bf16[{n}]) -> bf16[{m}, {n}] {{\n"
            f"  wf = convert(w, bf16)\n  y = linear(x, wf)\n"
            f"  out = mul(y, scales)\n  return out\n}}\n")


def main():
    argparse.ArgumentParser(description=__doc__).parse_args()
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "graphs")
    os.makedirs(here, exist_ok=True)
    for m in MS:
        with open(os.path.join(here, f"woq_m{m}.graph"), "w") as f:
            f.write(f"# bench suite, M = {m} (written by bench/make_suite.py)\n")
            f.write("\n".join(graph(m, n, k) for n, k in SHAPES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
