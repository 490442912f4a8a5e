#!/usr/bin/env python3
"""One-off: time int4 schedule points with `mtc bench` (cold L2, CUDA-graph
replays). Lines: "M NxK G SCHEDULE|heuristic". Output: one line per point."""
import json, subprocess, sys, os, tempfile
mtc = sys.argv[1]
lines = [l.strip() for l in open(sys.argv[2]) if l.strip() and not l.startswith("#")]
tmp = tempfile.mkdtemp()
for l in lines:
    parts = l.split(None, 3)
    m, shape, G = int(parts[0]), parts[1], int(parts[2])
    sched = parts[3]
    n, k = map(int, shape.split("x"))
    name = f"w4_m{m}_{n}x{k}_g{G}"
    text = (f"graph {name}(x: bf16[{m}, {k}], w: i4[{n}, {k}], scales: bf16[{n}, {k//G}], "
            f"zeros: bf16[{n}, {k//G}]) -> bf16[{m}, {n}] {{\n  wf = convert(w, bf16)\n"
            f"  s = repeat(scales, {G})\n  z = repeat(zeros, {G})\n  ws = mul(wf, s)\n"
            f"  wd = add(ws, z)\n  y = linear(x, wd)\n  return y\n}}\n")
    p = os.path.join(tmp, name + ".graph")
    open(p, "w").write(text)
    args = [mtc, "bench", p, "--json", "--arch", "sm_90a"]
    if sched != "heuristic":
        args += ["--schedule", "0=" + sched]
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=120)
        d = json.loads(r.stdout)
        kk = d["graphs"][0]["kernels"][0]
        print(f"{m} | {shape} | g{G} | {kk.get('schedule', sched)} | {kk['median_us']:.2f} us | "
              f"{kk.get('pct_of_read_ceiling')} | regs {kk.get('registers')}", flush=True)
    except Exception as e:
        print(f"{m} | {shape} | g{G} | {sched} | FAILED {e} {r.stderr[-400:] if 'r' in dir() else ''}", flush=True)
