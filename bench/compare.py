#!/usr/bin/env python3
"""mtc side by side with PyTorch on the weight-only int8 (or int4) linear suite.

    y = (x @ convert(W_int8, bf16)^T) * scales,  x bf16 [M, K], W int8 [N, K]

Systems, all timed the same way in the same run:
  mtc           mtc's kernels (tuned with `mtc tune` where asked), timed by
                `mtc bench`
  eager         F.linear(x, w.to(x.dtype)) * s
  cublas_bf16   F.linear(x, w_bf16) * s with bf16 weights (cuBLAS)
  inductor      torch.compile, default mode
  inductor_cd   torch.compile with coordinate_descent_tuning
  max_autotune  torch.compile(mode="max-autotune-no-cudagraphs")

With `--weights int4 --group G`, gpt-fast's int4 layer (group-wise scales
and zeros over groups of G columns, q unsigned in 0..15):

    y = x @ ((q - 8) * repeat(scales, G) + repeat(zeros, G))^T

  mtc           the graph `woq4_m<M>_<N>x<K>_g<G>` (w: i4 = q - 8, see
                graph_text), timed by `mtc bench`, checked by `mtc run
                --check`
  tinygemm      torch.ops.aten._weight_int4pack_mm (gpt-fast's int4 path):
                q packed by _convert_weight_to_int4pack (inner_k_tiles 8;
                PyTorch >= 2.5 takes uint8 [N, K/2], even k in the high
                nibble), scales_and_zeros bf16 [K/G, N, 2]
  cublas_bf16   F.linear(x, W) with the dequantised weights in bf16 (the
                dense bar)
The report then gives the int4 read floor (N*K/2 + 2*N*K/G*2 bytes of
weights, scales and zeros, plus x and the output, over 4.64 TB/s), each
system's share of it, and the issue's targets (M = 1 at >= 85% of the read
ceiling for >= 32 MiB of weights; faster than tinygemm at every M; M = 2
to 16 within 1.2x of M = 1).

Timing (ANCHORS.md's method): a CUDA graph of `calls` calls cycling through
enough input copies that together they exceed 4x L2, replayed `replays`
times; the median per-call time. mtc bench does the same with its own
CUDA-graph harness. Every PyTorch output is checked against an fp64
reference (max |out - ref| / max |ref| <= 1e-2), its output allocated on
memory filled with NaN just before (`poisoned` in the rows says whether it
landed there: functions that allocate temporaries first may not), and
mtc's with `mtc run --check` (fp64 CPU reference, outputs poisoned). Fresh
random inputs per M and shape. Results are written incrementally
to OUT/results.jsonl, then OUT/results.json, OUT/results.md and OUT/plot.png.

    python3 bench/compare.py --mtc build/bin/mtc --out bench/results/DATE
    python3 bench/compare.py --mtc build/bin/mtc --out OUT --weights int4 \
        --group 128 --ms 1,2,4,8,16,32,64,128,256 --tune-spec "" --arch sm_90a
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = [(8192, 8192), (4096, 4096), (6144, 4096), (14336, 4096),
          (28672, 4096), (4096, 14336), (128256, 4096)]
sys.path.insert(0, HERE)
from compare_int4 import (INNER_K_TILES, INT4_GROUPS,  # noqa: E402
                          bench_torch_int4, weights_fields)
from compare_report import INT4_SYSTEMS, SYSTEMS, log, report  # noqa: E402
import compare_torch  # noqa: E402
from compare_torch import bench_torch  # noqa: E402


def graph_name(m, n, k, weights="int8", group=128):
    if weights == "int4":
        return f"woq4_m{m}_{n}x{k}_g{group}"
    return f"woq_m{m}_{n}x{k}"


def shape_of(name):
    """(N, K) of a graph named by graph_name."""
    found = re.search(r"_(\d+)x(\d+)(?:_g\d+)?$", name)
    if not found:
        raise ValueError(f"not a suite graph name: {name}")
    return int(found.group(1)), int(found.group(2))


def graph_text(m, n, k, weights="int8", group=128):
    name = graph_name(m, n, k, weights, group)
    if weights == "int4":
        # gpt-fast's WeightOnlyInt4Linear: (q - 8) * scale + zero per group
        # of `group` columns, with w = q - 8 as mtc's signed i4.
        return (f"graph {name}(x: bf16[{m}, {k}], w: i4[{n}, {k}], "
                f"scales: bf16[{n}, {k // group}], zeros: bf16[{n}, "
                f"{k // group}]) -> bf16[{m}, {n}] {{\n"
                f"  wf = convert(w, bf16)\n  s  = repeat(scales, {group})\n"
                f"  z  = repeat(zeros, {group})\n  ws = mul(wf, s)\n"
                f"  wd = add(ws, z)\n  y  = linear(x, wd)\n  return y\n}}\n")
    return (f"graph {name}(x: bf16[{m}, {k}], w: i8[{n}, {k}], "
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
        elif " ulps (rel " in line and cur:
            # "  out: max err 1 ulps (rel 3.9e-03, ...) ok (tol 2 ulps)"
            err = float(line.split(" ulps (rel ")[1].split(",")[0])
            checked[cur] = (err, ") ok (" in line)
    return checked


def bench_mtc(args, rec, ms, shapes, deadline):
    with tempfile.TemporaryDirectory(prefix="mtc-compare-") as work:
        _bench_mtc(args, rec, ms, shapes, deadline, work)


def _bench_mtc(args, rec, ms, shapes, deadline, work):
    # Flags of every mtc command.
    common = ["--cache-dir", args.cache_dir] if args.cache_dir else []
    if args.arch:
        common += ["--arch", args.arch]
    for m in ms:
        if time.time() > deadline:
            log(f"mtc: out of time budget before M={m}")
            break
        prefix = "woq4" if args.weights == "int4" else "woq"
        path = os.path.join(work, f"{prefix}_m{m}.graph")
        with open(path, "w") as f:
            f.write("\n".join(graph_text(m, n, k, args.weights, args.group)
                              for n, k in shapes))
        fixed = schedule_flags(args, m)
        tuned = set() if fixed else tuned_shapes(args, m, shapes)
        names = {(n, k): graph_name(m, n, k, args.weights, args.group)
                 for n, k in shapes}
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
            checked = {}
            for p in run_each([args.mtc, "run", path, "--check"] + flags +
                              common, graphs, m, "run",
                              lambda p, gs: all(g in parse_checks(p.stdout)
                                                for g in gs)):
                checked.update(parse_checks(p.stdout))
                if p.returncode not in (0, 1):
                    log(f"mtc run M={m} failed: {p.stderr.strip()[-2000:]}")
            for p in run_each([args.mtc, "bench", path, "--json"] + flags +
                              common, graphs, m, "bench",
                              lambda p, gs: p.returncode == 0):
                if p.returncode != 0:
                    log(f"mtc bench M={m} failed: {p.stderr.strip()[-2000:]}")
                    continue
                record_bench(args, rec, m, json.loads(p.stdout), checked,
                             tune_info, flags)


def run_each(cmd, graphs, m, what, worked):
    """The processes of mtc `cmd` on `graphs` (one `--graph` each): one
    process for all, or, where worked(process, graphs) says that it failed
    and there are several, one per graph (a graph that mtc cannot compile
    fails the whole process; alone it costs only its own rows)."""
    p, _ = run(cmd + sum((["--graph", g] for g in graphs), []), 1800)
    if len(graphs) == 1 or worked(p, graphs):
        return [p]
    log(f"mtc {what} M={m} failed on {len(graphs)} graphs at once (rc "
        f"{p.returncode}: {p.stderr.strip()[-300:]}); each alone")
    return [run(cmd + ["--graph", g], 1800)[0] for g in graphs]


def record_bench(args, rec, m, data, checked, tune_info, flags):
    """Rows of `mtc bench --json`'s graphs, with their checks."""
    rec.meta["read_ceiling_gbs"] = data["read_ceiling_gbs"]
    rec.meta["launch_floor_us"] = data.get("launch_floor_us")
    rec.meta["device"] = data["device"]
    rec.meta["driver"] = data["driver"]
    for g in data["graphs"]:
        name = g["graph"]
        n, k = shape_of(name)
        kern = g["kernels"][0]
        # One kernel is the fused layer; more (a graph that did not
        # fuse) count as the whole graph's time.
        us = (kern["median_us"] if len(g["kernels"]) == 1
              else g.get("graph_median_us", kern["median_us"]))
        err, ok = checked.get(name, (float("nan"), False))
        ti = tune_info.get(name, {})
        rec.add(system="mtc", m=m, n=n, k=k, us=us,
                err=err, ok=ok, schedule=kern["schedule"],
                tuned="--tune" in flags,
                compile_s=ti.get("tune_seconds"),
                heuristic_us=ti.get("heuristic_us"),
                registers=kern.get("registers"),
                probe_us=kern.get("read_probe_us"),
                kernels=len(g["kernels"]), **weights_fields(args))
        log(f"  mtc M={m} {n}x{k}: {us:.2f} us "
            f"[{kern['schedule']}]{' tuned' if '--tune' in flags else ''} "
            f"{'' if len(g['kernels']) == 1 else str(len(g['kernels'])) + ' kernels '}"
            f"err {err:.2e} {'ok' if ok else 'FAIL'}")


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
    ap.add_argument("--weights", choices=("int8", "int4"), default="int8",
                    help="the layer: int8 per-channel (default) or gpt-fast's "
                         "int4 with group-wise scales and zeros")
    ap.add_argument("--group", type=int, default=128, choices=INT4_GROUPS,
                    help="int4 group size (default 128, gpt-fast's)")
    ap.add_argument("--systems", default=None,
                    help=f"comma list (default: int8 {','.join(SYSTEMS)}; "
                         f"int4 {','.join(INT4_SYSTEMS)})")
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
    ap.add_argument("--chunk", type=int, default=12,
                    help="shapes measured by mtc, then PyTorch, at a time "
                         "(default 12): a run stopped by --budget-s keeps "
                         "both systems' rows for the chunks it finished")
    ap.add_argument("--budget-s", type=float, default=3600,
                    help="start no new measurement after this many seconds "
                         "(0: no limit)")
    ap.add_argument("--merge", default="",
                    help="results.jsonl of an earlier partial run to include")
    ap.add_argument("--report-only", action="store_true",
                    help="measure nothing: report the --merge rows (for "
                         "results assembled from several runs)")
    ap.add_argument("--meta", action="append", default=[],
                    metavar="KEY=VALUE",
                    help="set a header field (torch, triton, ...) that the "
                         "merged rows do not carry")
    ap.add_argument("--check-args", action="store_true",
                    help="check the arguments and exit (bench/device.sh -n)")
    args = ap.parse_args()
    try:
        ms = [int(v) for v in args.ms.split(",")]
        args.inductor_ms = [int(v) for v in args.inductor_ms.split(",") if v]
        args.max_autotune_ms = [int(v) for v in
                                args.max_autotune_ms.split(",") if v]
        shapes = SHAPES if args.shapes == "all" else [
            tuple(map(int, s.split("x"))) for s in args.shapes.split(",")]
    except ValueError as e:
        ap.error(f"--ms, --inductor-ms, --max-autotune-ms or --shapes: {e}")
    if args.chunk < 1:
        ap.error(f"--chunk: expected a positive count, got {args.chunk}")
    known = INT4_SYSTEMS if args.weights == "int4" else SYSTEMS
    args.systems = (args.systems.split(",") if args.systems is not None
                    else list(known))
    unknown = [s for s in args.systems if s and s not in known]
    if unknown:
        ap.error(f"--systems: {', '.join(unknown)} not among the "
                 f"{args.weights} systems {', '.join(known)}")
    if args.weights == "int4":
        bad = [f"{n}x{k}" for n, k in shapes
               if k % args.group or k % (16 * INNER_K_TILES) or n % 8]
        if bad:
            ap.error(f"--shapes: {', '.join(bad)}: int4 needs K divisible by "
                     f"the group ({args.group}) and by {16 * INNER_K_TILES}, "
                     "N by 8 (tinygemm's layout)")
    try:
        for entry in args.schedule:
            int(entry.partition(":")[0])
        tuned_shapes(args, ms[0], shapes)
    except ValueError as e:
        ap.error(f"--schedule or --tune-spec: {e}")
    if args.check_args:
        return 0
    rec = Recorder(args.out)
    if args.merge:
        for line in open(args.merge):
            r = json.loads(line)
            if r.get("system") == "meta":
                rec.meta.update(r["meta"])
            else:
                rec.add(**r)
    rec.meta["weights"] = args.weights
    if args.weights == "int4":
        rec.meta["group"] = args.group
    for kv in args.meta:
        key, _, value = kv.partition("=")
        rec.meta[key] = value
    deadline = time.time() + args.budget_s if args.budget_s > 0 else math.inf
    if args.report_only:
        args.systems = []
    # mtc and PyTorch in turn, for each M and --chunk shapes at a time, so
    # that a run stopped by --budget-s has both for every point it reached.
    for m in ms:
        for i in range(0, len(shapes), args.chunk):
            chunk = shapes[i:i + args.chunk]
            if "mtc" in args.systems:
                bench_mtc(args, rec, [m], chunk, deadline)
                rec.add(system="meta", m=0, n=0, k=0, meta=rec.meta)
            if any(s != "mtc" for s in args.systems):
                if args.weights == "int4":
                    bench_torch_int4(args, rec, [m], chunk, deadline,
                                     compare_torch)
                else:
                    bench_torch(args, rec, [m], chunk, deadline)
    # The report: this run's layer only (merged rows may hold others).
    rec.rows = [r for r in rec.rows if r["system"] != "meta" and
                r.get("weights", "int8") == args.weights and
                (args.weights == "int8" or r.get("group") == args.group)]
    report(args, rec, ms, shapes)
    log(open(os.path.join(args.out, "results.md")).read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
