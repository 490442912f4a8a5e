#!/usr/bin/env python3
"""Every kernel mtc emits for the examples, the benchmark suite and the GPU
test matrix assembles with ptxas for its target (sm_90, or sm_90a for the
wgmma kind) without spilling.

    tests/gpu/ptxas_check.py --mtc build/bin/mtc --ptxas /usr/local/cuda/bin/ptxas
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_tests  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mtc", required=True)
    ap.add_argument("--ptxas", required=True)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="mtc-ptxas-")
    # Examples with a symbolic batch (`x: bf16[M, ...]`) at every bucket.
    inputs = []
    for p in sorted(glob.glob(os.path.join(ROOT, "examples", "*.graph"))):
        text = open(p).read()
        bind = (["--bind", "M=1,2,4,8,16,32,64,128,256"]
                if re.search(r"\[M,", text) else [])
        inputs.append((os.path.basename(p), text, bind))
    for m in (1, 16, 32, 128):
        p = os.path.join(ROOT, "bench", "graphs", f"woq_m{m}.graph")
        inputs.append((os.path.basename(p), open(p).read(), []))
    inputs += gpu_tests.cases(quick=False)

    failures = kernels = 0
    for name, text, flags in inputs:
        if "--batch" in flags:  # a run-time option
            i = flags.index("--batch")
            flags = flags[:i] + flags[i + 2:]
        src = os.path.join(work, "in.graph")
        with open(src, "w") as f:
            f.write(text)
        out = tempfile.mkdtemp(dir=work)
        r = subprocess.run([args.mtc, "compile", src, "-o", out] + flags,
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL {name}: mtc exited {r.returncode}: {r.stderr.strip()}")
            failures += 1
            continue
        for ptx in sorted(glob.glob(os.path.join(out, "*.ptx"))):
            target = re.search(r"^\.target (sm_\w+)", open(ptx).read(), re.M)
            arch = target.group(1) if target else "sm_90"
            r = subprocess.run([args.ptxas, f"-arch={arch}", "-v", ptx, "-o", os.devnull],
                               capture_output=True, text=True)
            log = r.stdout + r.stderr
            if r.returncode != 0:
                print(f"FAIL {name}/{os.path.basename(ptx)}: ptxas exited "
                      f"{r.returncode}:\n{log}")
                failures += 1
                continue
            for m in re.finditer(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log):
                kernels += 1
                if m.group(1) != "0" or m.group(2) != "0":
                    print(f"FAIL {name}/{os.path.basename(ptx)}: {m.group(0)}")
                    failures += 1
            # The experimental sm_90a kernels: their registers, for the log.
            if arch == "sm_90a":
                for m in re.finditer(r"Used (\d+) registers", log):
                    print(f"{name} ({' '.join(flags)}): {m.group(1)} registers, "
                          "no spills")
    print(f"{len(inputs)} graph files, {kernels} kernels assembled, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
