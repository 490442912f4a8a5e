#!/usr/bin/env python3
"""Regenerates the generated part of the graph fuzzer's seed corpus.

    tests/fuzz/make_corpus.py            (from the repository root)

Writes tests/fuzz/corpus/:
  example-*.graph   copies of examples/*.graph
  invalid-*.graph   copies of the malformed inputs of tests/lit/CLI/inputs/
  gpu-*.graph       the valid graphs of tests/gpu/gpu_tests.py with their
                    dimensions shrunk (4096 -> 64, ...) so that each compiles
                    in milliseconds, and duplicates (same graph once shrunk)
                    dropped
  sched-*.graph     the graphs of the GPU matrix that have explicit schedules,
                    with them as `#!schedule K=SCHEDULE` lines (the
                    fuzzer's --schedule flags), at their full size
  multi-*.graph     several of those graphs in one file
  symbolic-*.graph  graphs with symbolic dimensions (GraphFuzzer.cpp binds
                    upper-case names, leaves lower-case ones unbound)
Files named regression-*.graph are reproducers of fixed fuzzer findings; this
script never touches them.
"""
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus")
sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))
import gpu_tests  # noqa: E402

# Large dimensions of the GPU matrix -> small ones with the same divisibility
# character (a power of two, a multiple of 8 but not 16, odd, ...).
SHRINK = {4096: 64, 8192: 128, 11008: 96, 4097: 65, 4104: 72, 520: 40,
          2048: 32, 1024: 16, 2816: 88, 1000: 40, 3000: 24, 300: 20,
          264: 24}


def shrink(text):
    return re.sub(r"(?<![0-9])[0-9]+(?![0-9])",
                  lambda m: str(SHRINK.get(int(m.group()), int(m.group()))),
                  text)


def write(name, text):
    with open(os.path.join(OUT, name), "w") as f:
        f.write(text)


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if not f.startswith("regression-"):
            os.remove(os.path.join(OUT, f))

    for f in sorted(os.listdir(os.path.join(ROOT, "examples"))):
        if f.endswith(".graph"):
            shutil.copy(os.path.join(ROOT, "examples", f),
                        os.path.join(OUT, "example-" + f))
    tracked = subprocess.run(
        ["git", "-C", ROOT, "ls-files", "tests/lit/CLI/inputs"],
        capture_output=True, text=True, check=True).stdout.split()
    for path in tracked:
        if path.endswith(".graph"):
            shutil.copy(os.path.join(ROOT, path),
                        os.path.join(OUT, "invalid-" + os.path.basename(path)))

    # Every graph form of the GPU matrix, and about 30 of its woq shapes.
    misc = [(name, gpu_tests.fix_nested(shrink(text)))
            for name, text in gpu_tests.MISC.items()]
    graphs = {}  # shrunk text without the graph name -> (name, text)
    for name, text, flags in gpu_tests.cases(quick=False):
        if name in gpu_tests.MISC or name.startswith("dispatch_"):
            continue  # the symbolic ones are written below
        if "--arch" in flags:
            continue  # the wgmma cases: woq shapes again
        small = shrink(text)
        name = shrink(name).replace("sched_", "")
        small = re.sub(r"^graph \w+", "graph " + name, small)
        graphs.setdefault(re.sub(r"^graph \w+", "graph", small),
                          (name, small))
    shapes = list(graphs.values())
    step = max(1, len(shapes) // 30)
    chosen = misc + shapes[::step]
    for name, text in chosen:
        write(f"gpu-{name}.graph", text)

    # The explicit schedules of the GPU matrix, as `#!schedule` lines (the
    # fuzzer's --schedule), on the matrix's own shapes: shrunk, most of them
    # would not fit (warps and blocks splitting K need enough K).
    # (A wgmma schedule makes the fuzzer compile for sm_90a.)
    for name, text, flags in gpu_tests.cases(quick=False):
        if "--schedule" in flags:
            s = flags[flags.index("--schedule") + 1]
            write(f"sched-{name.replace('sched_', '')}.graph",
                  f"#!schedule {s}\n" + text)

    # Several graphs per file: names must be distinct within a file.
    for i in range(4):
        parts = chosen[i * 7:i * 7 + 2 + i]
        write(f"multi-{i}.graph", "".join(t for _, t in parts))

    write("symbolic-woq-m.graph", shrink(gpu_tests.woq("woq_m", "M", 4096,
                                                          4096)))
    write("symbolic-two-dims.graph", """# B and M are bound by the fuzzer
graph g(x: bf16[B, M, 64], w: i8[32, 64], s: bf16[32]) -> bf16[B, M, 32] {
  wf = convert(w, bf16)
  y = linear(x, wf)
  o = mul(y, s)
  return o
}
graph h(x: f32[M, 8]) -> f32[8, M] {
  t = transpose(x)
  return t
}
""")
    write("symbolic-unbound.graph", """# n is lower case: left unbound
graph g(x: f32[n, 16], w: f32[8, 16]) -> f32[n, 8] {
  y = linear(x, w)
  return y
}
""")
    write("symbolic-elementwise.graph", """graph g(a: f16[M, 1], b: f16[1, N], c: f32[N]) -> f32[M, N] {
  s = add(a, b)
  r = silu(s)
  f = convert(r, f32)
  o = sub(f, c)
  return o
}
""")


if __name__ == "__main__":
    main()
