#!/usr/bin/env python3
"""mtc side by side with PyTorch on the weight-only int8 linear suite.

    y = (x @ convert(W_int8, bf16)^T) * scales,  x bf16 [M, K], W int8 [N, K]

Systems, all timed the same way in the same run:
  mtc           mtc's kernels (tuned with `mtc tune` where asked), timed by
                `mtc bench`
  eager         F.linear(x, w.to(x.dtype)) * s
  cublas_bf16   F.linear(x, w_bf16) * s with bf16 weights (cuBLAS)
  inductor      torch.compile, default mode
  inductor_cd   torch.compile with coordinate_descent_tuning
  max_autotune  torch.compile(mode="max-autotune-no-cudagraphs")

Timing (ANCHORS.md's method): a CUDA graph of `calls` calls cycling through
enough input copies that together they exceed 4x L2, replayed `replays`
times; the median per-call time. mtc bench does the same with its own
CUDA-graph harness. Every PyTorch output is checked against an fp64
reference (max |out - ref| / max |ref| <= 1e-2), and mtc's with
`mtc run --check` (fp64 CPU reference). Results are written incrementally
to OUT/results.jsonl, then OUT/results.json, OUT/results.md and OUT/plot.png.

    python3 bench/compare.py --mtc build/bin/mtc --out bench/results/DATE
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = [(8192, 8192), (4096, 4096), (6144, 4096), (14336, 4096),
          (28672, 4096), (4096, 14336), (128256, 4096)]
sys.path.insert(0, HERE)
from compare_report import SYSTEMS, log, report  # noqa: E402
from graph_timing import time_rotated  # noqa: E402


def graph_text(m, n, k):
    return (f"graph woq_m{m}_{n}x{k}(x: bf16[{m}, {k}], w: i8[{n}, {k}], "
            f"scales: bf16[{n}]) -> bf16[{m}, {n}] {{\n  wf = convert(w, bf16)\n"
            f"  y = linear(x, wf)\n  out = mul(y, scales)\n  return out\n}}\n")


class Recorder:
    def __init__(self, out):
        self.out = out
        os.makedirs(out, exist_ok=True)
        self.rows = []
        self.meta = {}
        self.path = os.path.join(out, "results.jsonl")
        open(self.path, "w").close()

    def add(self, **row):
        self.rows.append(row)
        with open(self.path, "a") as f:
            f.write(json.dumps(row) + "\n")

    def get(self, system, m, n, k):
        for r in self.rows:
            if (r["system"], r["m"], r["n"], r["k"]) == (system, m, n, k):
                return r
        return None


# ---------------------------------------------------------------------------
# mtc
# ---------------------------------------------------------------------------

def run(cmd, timeout):
    start = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p, time.time() - start


def schedule_flags(args, m):
    """mtc flags for batch size m from --schedule M:SCHEDULE (a wgmma
    schedule compiles for sm_90a)."""
    for entry in args.schedule:
        em, _, s = entry.partition(":")
        if int(em) == m:
            arch = (["--arch", "sm_90a"]
                    if s.startswith("wgmma") and not args.arch else [])
            return ["--schedule", f"0={s}"] + arch
    return []


def tuned_shapes(args, m, shapes):
    """Shapes whose mtc kernels are autotuned at batch size m (--tune-spec)."""
    out = set()
    for entry in args.tune_spec.split(","):
        if not entry:
            continue
        em, es = entry.split(":")
        if em != "*" and int(em) != m:
            continue
        if es == "all":
            out |= set(shapes)
        else:
            out |= {tuple(map(int, es.split("x")))} & set(shapes)
    return out


def parse_checks(stdout):
    checked, cur = {}, None
    for line in stdout.splitlines():
        if ": ran " in line:
            cur = line.split(":")[0].split(" ")[0]
        elif "max rel err" in line and cur:
            err = float(line.split("max rel err")[1].split()[0])
            checked[cur] = (err, " ok " in line)
    return checked


def bench_mtc(args, rec, ms, shapes, deadline):
    work = tempfile.mkdtemp(prefix="mtc-compare-")
    # Flags of every mtc command.
    common = ["--cache-dir", args.cache_dir] if args.cache_dir else []
    if args.arch:
        common += ["--arch", args.arch]
    for m in ms:
        if time.time() > deadline:
            log(f"mtc: out of time budget before M={m}")
            break
        path = os.path.join(work, f"woq_m{m}.graph")
        with open(path, "w") as f:
            f.write("\n".join(graph_text(m, n, k) for n, k in shapes))
        fixed = schedule_flags(args, m)
        tuned = set() if fixed else tuned_shapes(args, m, shapes)
        names = {(n, k): f"woq_m{m}_{n}x{k}" for n, k in shapes}
        groups = [(["--tune"], [names[s] for s in shapes if s in tuned]),
                  (fixed, [names[s] for s in shapes if s not in tuned])]
        tune_info = {}
        if tuned:
            sel = sum((["--graph", g] for g in groups[0][1]), [])
            probes = ["--max-probes", str(args.max_probes)] if args.max_probes else []
            p, secs = run([args.mtc, "tune", path, "--json"] + sel + probes + common,
                          1800)
            if p.returncode != 0:
                log(f"mtc tune M={m} failed: {p.stderr.strip()[-2000:]}")
                groups[0] = ([], groups[0][1])
            else:
                for g in json.loads(p.stdout)["graphs"]:
                    tune_info[g["graph"]] = g["kernels"][0]
                log(f"mtc tune M={m} ({len(tuned)} shapes): {secs:.1f} s")
                # A cached re-run: compile with --tune must not probe again.
                p2, secs2 = run([args.mtc, "compile", path, "--tune", "-o",
                                 os.path.join(work, "out")] + sel + common,
                                600)
                rec.meta.setdefault("cached_compile_s", {})[str(m)] = secs2
                rec.meta.setdefault("cached_compile_graphs", {})[str(m)] = \
                    len(tuned)
        for flags, graphs in groups:
            if not graphs:
                continue
            sel = sum((["--graph", g] for g in graphs), [])
            p, _ = run([args.mtc, "run", path, "--check"] + flags + sel +
                       common, 1800)
            checked = parse_checks(p.stdout)
            if p.returncode not in (0, 1):
                log(f"mtc run M={m} failed: {p.stderr.strip()[-2000:]}")
            p, _ = run([args.mtc, "bench", path, "--json"] + flags + sel +
                       common, 1800)
            if p.returncode != 0:
                log(f"mtc bench M={m} failed: {p.stderr.strip()[-2000:]}")
                continue
            data = json.loads(p.stdout)
            rec.meta["read_ceiling_gbs"] = data["read_ceiling_gbs"]
            rec.meta["launch_floor_us"] = data.get("launch_floor_us")
            rec.meta["device"] = data["device"]
            rec.meta["driver"] = data["driver"]
            for g in data["graphs"]:
                name = g["graph"]
                n, k = map(int, name.split("_")[-1].split("x"))
                kern = g["kernels"][0]
                err, ok = checked.get(name, (float("nan"), False))
                ti = tune_info.get(name, {})
                rec.add(system="mtc", m=m, n=n, k=k, us=kern["median_us"],
                        err=err, ok=ok, schedule=kern["schedule"],
                        tuned="--tune" in flags,
                        compile_s=ti.get("tune_seconds"),
                        heuristic_us=ti.get("heuristic_us"),
                        registers=kern.get("registers"))
                log(f"  mtc M={m} {n}x{k}: {kern['median_us']:.2f} us "
                    f"[{kern['schedule']}]{' tuned' if '--tune' in flags else ''} "
                    f"err {err:.2e} {'ok' if ok else 'FAIL'}")


# ---------------------------------------------------------------------------
# PyTorch
# ---------------------------------------------------------------------------

def bench_torch(args, rec, ms, shapes, deadline):
    # Every mode compiles from scratch: with Inductor's caches on, the
    # coordinate-descent compile can reuse the default compile's graph (seen
    # on 2026-11-29: "Inductor + CD" then ran the unfused default kernels).
    os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
    import torch
    import torch.nn.functional as F

    dev = torch.device("cuda")
    rec.meta["torch"] = torch.__version__
    try:
        import triton
        rec.meta["triton"] = triton.__version__
    except Exception:
        pass
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True

    def woq(x, w, s):
        return F.linear(x, w.to(x.dtype)) * s

    def timed(fn, inputs, per_copy_bytes):
        return time_rotated(torch, fn, inputs, per_copy_bytes, args.calls,
                            args.replays)

    for m in ms:
        for n, k in shapes:
            if time.time() > deadline:
                log("torch: out of time budget")
                return
            gen = torch.Generator(device=dev).manual_seed(1000 * m + n + k)
            x = torch.randn(m, k, device=dev, dtype=torch.bfloat16,
                            generator=gen)
            w = torch.randint(-128, 128, (n, k), device=dev,
                              dtype=torch.int8, generator=gen)
            s = (torch.rand(n, device=dev, generator=gen) + 0.5).to(
                torch.bfloat16) / 64
            ref = (x.double() @ w.double().T) * s.double()
            refmax = ref.abs().max().item()

            def check(out):
                if not torch.isfinite(out).all():
                    return float("inf")
                return ((out.double() - ref).abs().max().item() /
                        max(refmax, 1e-30))

            def measure(system, fn, inputs, wbytes, compile_s):
                try:
                    out = fn(*inputs)
                    torch.cuda.synchronize()
                    err = check(out)
                    us = timed(fn, inputs, wbytes + m * k * 2 + n * 2)
                except Exception as e:
                    log(f"  {system} M={m} {n}x{k}: failed: {e}")
                    rec.add(system=system, m=m, n=n, k=k, us=None, err=None,
                            ok=False, error=str(e)[:500])
                    return
                rec.add(system=system, m=m, n=n, k=k, us=us, err=err,
                        ok=err <= 1e-2, compile_s=compile_s)
                log(f"  {system:<12} M={m:<3} {n}x{k}: {us:8.2f} us  err "
                    f"{err:.2e}" + (f"  compile {compile_s:.1f} s"
                                    if compile_s else ""))

            if "eager" in args.systems:
                measure("eager", woq, (x, w, s), n * k, 0.0)
            if "cublas_bf16" in args.systems:
                wb = w.to(torch.bfloat16)
                measure("cublas_bf16", lambda x, wb, s: F.linear(x, wb) * s,
                        (x, wb, s), 2 * n * k, 0.0)
                del wb
            # Each compiled mode is timed right after its compile: a later
            # torch._dynamo.reset() drops compiled code, and calling it again
            # would recompile under the then-current config.
            for system, mode, cd in (("inductor", "default", False),
                                     ("inductor_cd", "default", True),
                                     ("max_autotune",
                                      "max-autotune-no-cudagraphs", False)):
                if system not in args.systems:
                    continue
                if system == "max_autotune" and m not in args.max_autotune_ms:
                    continue
                if system in ("inductor", "inductor_cd") and \
                        m not in args.inductor_ms and \
                        (n, k) != (8192, 8192):
                    continue
                import torch._dynamo
                import torch._inductor.config as icfg
                torch._dynamo.reset()
                icfg.coordinate_descent_tuning = cd
                fn = torch.compile(woq, mode=mode, dynamic=False)
                start = time.time()
                try:
                    fn(x, w, s)
                    torch.cuda.synchronize()
                except Exception as e:  # record, keep going
                    log(f"  {system} M={m} {n}x{k}: compile failed: {e}")
                    rec.add(system=system, m=m, n=n, k=k, us=None,
                            err=None, ok=False, error=str(e)[:500])
                    continue
                measure(system, fn, (x, w, s), n * k, time.time() - start)
            torch._inductor.config.coordinate_descent_tuning = False
            del x, w, s, ref
            torch.cuda.empty_cache()


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mtc", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ms", default="1,2,4,8,16")
    ap.add_argument("--shapes", default="all",
                    help="comma list of NxK, or 'all'")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--tune-spec", default="1:all",
                    help="which mtc kernels are autotuned: comma list of "
                         "M:all or M:NxK, M may be *")
    ap.add_argument("--schedule", action="append", default=[],
                    metavar="M:SCHEDULE",
                    help="run mtc at batch size M with this schedule on "
                         "every shape instead of tuning or the heuristic "
                         "(e.g. '128:wgmma w12 r2 mt128 st4', which "
                         "compiles for sm_90a); repeatable")
    ap.add_argument("--arch", help="mtc's --arch for every mtc run (sm_90a "
                    "lets the heuristic and the tuner use the wgmma kind)")
    ap.add_argument("--inductor-ms", default="1,16",
                    help="M values for the Inductor modes on every shape "
                         "(8192x8192 runs at every M)")
    ap.add_argument("--max-autotune-ms", default="1")
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--replays", type=int, default=15)
    ap.add_argument("--cache-dir", default="")
    ap.add_argument("--max-probes", type=int, default=0,
                    help="mtc tune --max-probes (0: mtc's default)")
    ap.add_argument("--budget-s", type=float, default=3600,
                    help="start no new measurement after this many seconds")
    ap.add_argument("--merge", default="",
                    help="results.jsonl of an earlier partial run to include")
    ap.add_argument("--report-only", action="store_true",
                    help="measure nothing: report the --merge rows (for "
                         "results assembled from several runs)")
    ap.add_argument("--meta", action="append", default=[],
                    metavar="KEY=VALUE",
                    help="set a header field (torch, triton, ...) that the "
                         "merged rows do not carry")
    args = ap.parse_args()
    ms = [int(v) for v in args.ms.split(",")]
    args.inductor_ms = [int(v) for v in args.inductor_ms.split(",") if v]
    args.max_autotune_ms = [int(v) for v in args.max_autotune_ms.split(",")
                            if v]
    args.systems = args.systems.split(",")
    shapes = SHAPES if args.shapes == "all" else [
        tuple(map(int, s.split("x"))) for s in args.shapes.split(",")]
    rec = Recorder(args.out)
    if args.merge:
        for line in open(args.merge):
            r = json.loads(line)
            if r.get("system") == "meta":
                rec.meta.update(r["meta"])
            else:
                rec.add(**r)
    for kv in args.meta:
        key, _, value = kv.partition("=")
        rec.meta[key] = value
    deadline = time.time() + args.budget_s
    if args.report_only:
        args.systems = []
    if "mtc" in args.systems:
        bench_mtc(args, rec, ms, shapes, deadline)
        rec.add(system="meta", m=0, n=0, k=0, meta=rec.meta)
    if any(s != "mtc" for s in args.systems):
        bench_torch(args, rec, ms, shapes, deadline)
    rec.rows = [r for r in rec.rows if r["system"] != "meta"]
    report(args, rec, ms, shapes)
    log(open(os.path.join(args.out, "results.md")).read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
