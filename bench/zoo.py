#!/usr/bin/env python3
"""The shape zoo (issue 25, item 1): the linear layers of public model
configurations and 20 random shapes, at M = 1 to 4096, int8 and int4 (groups
of 128), mtc's heuristic against bf16 cuBLAS and (int4) tinygemm, measured
by compare.py in pieces that each fit one device call (600 s).

    python3 bench/zoo.py list [--weights int4]        the shapes, exclusions
    python3 bench/zoo.py plan [--weights int8] [--piece-s S]   the pieces
    python3 bench/zoo.py run --mtc MTC --out OUT --weights int8 --piece 1/N
    python3 bench/zoo.py report ROWS_OR_DIRS... --out DIR   (zoo_report.py)

`run` is what `bench/device.sh zoo` calls: it runs compare.py once per run
of the piece (a run: some M values times some shapes, one compare.py
process) into OUT/zoo-<weights>-<I>of<N>/, appends every run's rows to
rows.jsonl there (each row with "zoo_run"; rows of "system": "zoo" record
each run's plan, estimate and wall time) and its log to zoo.txt, and
removes the run's own folder once its rows are kept. A run cut off by the
device call's limit leaves its folder, whose results.jsonl the report reads
as well.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections import namedtuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from compare_report import layer_bytes  # noqa: E402

MS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
GROUP = 128  # int4: gpt-fast's group size
INT4_K_MULTIPLE = 128  # the group, and tinygemm's 16 * inner_k_tiles (8)
RANDOM_SEED = 25  # issue 25
RANDOM_COUNT = 20
RANDOM_RANGE = (1024, 32768)  # N and K, multiples of 64

# Public configurations: hidden size (dim), attention heads, key/value heads,
# head dim, feed-forward size, vocabulary. Sources: the model's config.json
# on the Hugging Face hub (named), and for those marked (gpt-fast) also
# gpt-fast's transformer_configs (intermediate sizes as its find_multiple
# gives them).
Config = namedtuple("Config", "name family dim heads kv_heads head_dim ffn vocab")
CONFIGS = [
    # meta-llama/Llama-2-7b-hf (gpt-fast "7B")
    Config("Llama-2-7B", "llama-2", 4096, 32, 32, 128, 11008, 32000),
    # meta-llama/Llama-2-13b-hf (gpt-fast "13B")
    Config("Llama-2-13B", "llama-2", 5120, 40, 40, 128, 13824, 32000),
    # meta-llama/Llama-2-70b-hf (gpt-fast "70B")
    Config("Llama-2-70B", "llama-2", 8192, 64, 8, 128, 28672, 32000),
    # LLaMA-30B (LLaMA 1; gpt-fast "30B")
    Config("LLaMA-30B", "llama-1", 6656, 52, 52, 128, 17920, 32000),
    # codellama/CodeLlama-34b-Python-hf (gpt-fast "34B")
    Config("CodeLlama-34B", "codellama", 8192, 64, 8, 128, 22016, 32000),
    # meta-llama/Meta-Llama-3-8B (gpt-fast "llama-3-8b")
    Config("Llama-3-8B", "llama-3", 4096, 32, 8, 128, 14336, 128256),
    # meta-llama/Meta-Llama-3-70B (gpt-fast "llama-3-70b")
    Config("Llama-3-70B", "llama-3", 8192, 64, 8, 128, 28672, 128256),
    # meta-llama/Llama-3.2-1B
    Config("Llama-3.2-1B", "llama-3.2", 2048, 32, 8, 64, 8192, 128256),
    # meta-llama/Llama-3.2-3B
    Config("Llama-3.2-3B", "llama-3.2", 3072, 24, 8, 128, 8192, 128256),
    # mistralai/Mistral-7B-v0.1 (gpt-fast "Mistral-7B")
    Config("Mistral-7B", "mistral", 4096, 32, 8, 128, 14336, 32000),
    # mistralai/Mixtral-8x7B-v0.1: each expert's feed-forward is Mistral-7B's
    Config("Mixtral-8x7B", "mistral", 4096, 32, 8, 128, 14336, 32000),
    # mistralai/Mixtral-8x22B-v0.1 (each expert's feed-forward)
    Config("Mixtral-8x22B", "mistral", 6144, 48, 8, 128, 16384, 32000),
    # Qwen/Qwen2-7B (Qwen2.5-7B has the same dimensions)
    Config("Qwen2-7B", "qwen2", 3584, 28, 4, 128, 18944, 152064),
    # Qwen/Qwen2.5-14B
    Config("Qwen2.5-14B", "qwen2", 5120, 40, 8, 128, 13824, 152064),
    # google/gemma-7b
    Config("Gemma-7B", "gemma", 3072, 16, 16, 256, 24576, 256000),
    # google/gemma-2-9b
    Config("Gemma-2-9B", "gemma", 3584, 16, 8, 256, 14336, 256000),
    # microsoft/Phi-3-mini-4k-instruct (its own fused qkv_proj, gate_up_proj)
    Config("Phi-3-mini", "phi-3", 3072, 32, 32, 96, 8192, 32064),
]

# A shape of the zoo: N x K and every (family, config, layer) that has it.
Shape = namedtuple("Shape", "n k labels")


def config_layers(c):
    """(N, K, layer) of a configuration's linears, qkv and gate/up fused."""
    return [((c.heads + 2 * c.kv_heads) * c.head_dim, c.dim, "qkv"),
            (c.dim, c.heads * c.head_dim, "o"),
            (2 * c.ffn, c.dim, "gate_up"),
            (c.dim, c.ffn, "down"),
            (c.vocab, c.dim, "lm_head")]


def random_shapes(seed=RANDOM_SEED, count=RANDOM_COUNT, lo=RANDOM_RANGE[0],
                  hi=RANDOM_RANGE[1]):
    """`count` distinct (N, K), multiples of 64 in [lo, hi], from sha256 of
    the seed (the same on every Python)."""
    steps = (hi - lo) // 64 + 1
    out, i = [], 0
    while len(out) < count:
        h = hashlib.sha256(f"mtc-zoo:{seed}:{i}".encode()).digest()
        i += 1
        nk = (lo + 64 * (int.from_bytes(h[:8], "big") % steps),
              lo + 64 * (int.from_bytes(h[8:16], "big") % steps))
        if nk not in out:
            out.append(nk)
    return out


def zoo_shapes():
    """Every shape of the zoo, sorted by (N, K), identical ones merged."""
    labels = {}
    for c in CONFIGS:
        for n, k, layer in config_layers(c):
            labels.setdefault((n, k), []).append((c.family, c.name, layer))
    for i, (n, k) in enumerate(random_shapes()):
        labels.setdefault((n, k), []).append(("random", f"random-{i}", "-"))
    return [Shape(n, k, tuple(labels[(n, k)])) for n, k in sorted(labels)]


def exclusion(shape, weights):
    """Why a shape is not measured for these weights, or None."""
    if weights == "int4":
        if shape.k % INT4_K_MULTIPLE:
            return (f"K = {shape.k} is not a multiple of {INT4_K_MULTIPLE} "
                    f"(groups of {GROUP}; tinygemm's 16 x inner_k_tiles 8)")
        if shape.n % 8:
            return f"N = {shape.n} is not a multiple of 8 (tinygemm's layout)"
    return None


def included(weights):
    return [s for s in zoo_shapes() if exclusion(s, weights) is None]


def families(shape):
    return sorted({f for f, _, _ in shape.labels})


def systems_at(weights, m, tinygemm_max_m):
    if weights == "int4" and m <= tinygemm_max_m:
        return ["mtc", "tinygemm", "cublas_bf16"]
    return ["mtc", "cublas_bf16"]


# --- the cost of a point, for cutting the work into pieces -----------------
# Fitted to two calls whose plan and outcome are known (no per-row times
# were kept before the zoo): bench/results/2026-12-02-int4/second (int4, M =
# 1 to 256, the 7 suite shapes, three systems, one run: the 240 s budget
# ended it after 8 M values and mtc's ninth; the model says 215 s for those)
# and 2026-12-02-final's first call (int8, M = 64 to 4096, the suite
# shapes, all rows inside 350 s; the model says about 300 s without its
# Inductor compiles, so it errs on the safe side). The largest term at large
# M is `mtc run --check`: compare.py checks every mtc output against the
# fp64 product on the host (16 cores). Rows of "system": "zoo" keep each
# run's wall time next to its estimate, to refit these. Refitted on the
# zoo's first three pieces (bench/results/2026-12-03-zoo): int8 runs of
# 63 to 70 shapes took 87, 111, 94 and 141 s at M = 1, 2, 16 and 128
# against 209 estimated (POINT_S 1.5, ELEM_S 8e-9 then); int4's mtc rows
# at M = 1 on 66 shapes took about 280 s, its fp64 reference reading each
# int4 weight about four times slower than int8's.
RUN_S = 15.0   # a compare.py process: python, torch, CUDA, its report
M_S = 4.0      # an M of a run: mtc's run --check and bench processes
POINT_S = 0.7  # a point: mtc's compile of it (twice), PyTorch's inputs
# Per weight element: random weights on host and GPU, and the reference's
# dequantization.
ELEM_S = {"int8": 5e-9, "int4": 2.8e-8}
CHECK_FLOPS = 100e9    # mtc run --check's fp64 reference on the host
TIMED_CALLS = 800      # per system: warm-up, copies, 18 replays of 40 calls
BW = 3.5e12            # bytes/s a kernel streams (the ceiling is ~4.6e12)
TENSOR_FLOPS = 600e12  # bf16 tensor cores, dense
# tinygemm at large M: 8192 x 8192 at M = 128 took 594 µs (2026-12-02-int4).
TINYGEMM_FLOPS = 29e12


def point_s(weights, m, n, k, systems):
    """Estimated device seconds of one (M, shape) for these systems."""
    flops = 2.0 * m * n * k
    out = POINT_S + ELEM_S[weights] * n * k + flops / CHECK_FLOPS
    for s in systems:
        if s == "cublas_bf16":
            t = max((2 * n * k + 2 * m * (n + k)) / BW, flops / TENSOR_FLOPS)
        elif s == "tinygemm":
            t = max(layer_bytes(m, n, k, "int4", GROUP) / BW,
                    flops / TINYGEMM_FLOPS)
        else:
            t = max(layer_bytes(m, n, k, weights, GROUP) / BW,
                    flops / TENSOR_FLOPS)
        out += TIMED_CALLS * (t + 3e-6)
    return out


def run_s(weights, ms, shapes, systems):
    return RUN_S + M_S * len(ms) + sum(
        point_s(weights, m, s.n, s.k, systems) for m in ms for s in shapes)


Run = namedtuple("Run", "ms shapes systems est_s")


def plan(weights, ms=MS, piece_s=420.0, tinygemm_max_m=256):
    """The pieces: lists of Runs, each piece estimated at <= piece_s.

    Each M's shapes (in (N, K) order) are cut into chunks of up to
    piece_s / P estimated seconds; the chunks are packed first-fit, largest
    first, into pieces; in a piece, chunks of the same shapes and systems
    become one run of several M values. Of P = 1 to 4, the one that makes
    the fewest pieces (the smallest P of those). A chunk of one point may
    exceed piece_s: it is a piece alone. Deterministic for given
    arguments."""
    best = None
    for parts in (1, 2, 3, 4):  # chunks of up to piece_s / parts
        pieces = _pack(weights, ms, piece_s, piece_s / parts, tinygemm_max_m)
        if best is None or len(pieces) < len(best):
            best = pieces
    return best


def _pack(weights, ms, piece_s, chunk_s, tinygemm_max_m):
    shapes = included(weights)
    chunks = []
    for m in sorted(set(ms)):
        systems = systems_at(weights, m, tinygemm_max_m)
        cur = []
        for s in shapes:
            if cur and run_s(weights, [m], cur + [s], systems) > chunk_s:
                chunks.append(([m], cur, systems))
                cur = []
            cur.append(s)
        if cur:
            chunks.append(([m], cur, systems))
    chunks.sort(key=lambda c: (-run_s(weights, *c), c[0][0],
                               (c[1][0].n, c[1][0].k)))
    bins = []  # [est_s, [chunk, ...]]
    for c in chunks:
        cost = run_s(weights, *c)
        for b in bins:
            if b[0] + cost <= piece_s:
                b[0] += cost
                b[1].append(c)
                break
        else:
            bins.append([cost, [c]])
    pieces = []
    for _, members in bins:
        runs = {}
        for ms_, shp, sysl in members:
            key = (tuple((s.n, s.k) for s in shp), tuple(sysl))
            runs.setdefault(key, (shp, sysl, []))[2].extend(ms_)
        piece = [Run(sorted(m_), shp, sysl, run_s(weights, m_, shp, sysl))
                 for shp, sysl, m_ in runs.values()]
        piece.sort(key=lambda r: (r.ms[0], r.shapes[0].n, r.shapes[0].k))
        pieces.append(piece)
    pieces.sort(key=lambda p: (p[0].ms[0], p[0].shapes[0].n,
                               p[0].shapes[0].k))
    return pieces


def piece_of(pieces):
    """{(m, n, k): piece number (1-based)}."""
    return {(m, s.n, s.k): i + 1 for i, p in enumerate(pieces)
            for r in p for m in r.ms for s in r.shapes}


# --- command line ----------------------------------------------------------

def ms_arg(text):
    try:
        ms = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma list of M: {text!r}")
    if not ms or min(ms) < 1 or len(set(ms)) != len(ms):
        raise argparse.ArgumentTypeError(f"M values must be distinct and "
                                         f">= 1: {text!r}")
    return sorted(ms)


def common_args(ap):
    ap.add_argument("--weights", choices=("int8", "int4"), default="int8",
                    help=f"int8 per channel, or int4 in groups of {GROUP}")
    ap.add_argument("--ms", type=ms_arg, default=MS,
                    help="comma list of M (default: " +
                         ",".join(map(str, MS)) + ")")
    ap.add_argument("--piece-s", type=float, default=420.0,
                    help="estimated device seconds per piece (default 420; "
                         "a device call has 600)")
    ap.add_argument("--tinygemm-max-m", type=int, default=256,
                    help="int4: tinygemm up to this M (default 256, the "
                         "int4 targets' range; it runs at ~29 TFLOP/s, "
                         "which makes larger M the zoo's dearest points)")


def cmd_list(args):
    shapes = zoo_shapes()
    print(f"{len(CONFIGS)} configurations, {len(shapes)} shapes "
          f"({sum(1 for s in shapes if families(s) != ['random'])} from "
          f"configurations, {RANDOM_COUNT} random)")
    for s in shapes:
        why = exclusion(s, args.weights)
        names = ", ".join(f"{c} {layer}" if layer != "-" else c
                          for _, c, layer in s.labels)
        print(f"{s.n}x{s.k}  {names}" + (f"  EXCLUDED: {why}" if why else ""))


def cmd_plan(args):
    pieces = plan(args.weights, args.ms, args.piece_s, args.tinygemm_max_m)
    npts = sum(len(r.ms) * len(r.shapes) for p in pieces for r in p)
    total = sum(r.est_s for p in pieces for r in p)
    print(f"{args.weights}: {len(included(args.weights))} shapes x "
          f"{len(args.ms)} M = {npts} points in {len(pieces)} pieces, "
          f"estimated {total:.0f} device s")
    for i, p in enumerate(pieces):
        print(f"piece {i + 1}/{len(pieces)}: "
              f"{sum(r.est_s for r in p):.0f} s")
        for r in p:
            print(f"  M={','.join(map(str, r.ms))} {len(r.shapes)} shapes "
                  f"({r.shapes[0].n}x{r.shapes[0].k} .. "
                  f"{r.shapes[-1].n}x{r.shapes[-1].k}) "
                  f"{','.join(r.systems)}: {r.est_s:.0f} s")


def parse_piece(ap, text, count):
    try:
        i, n = (int(v) for v in text.split("/"))
    except ValueError:
        ap.error(f"--piece needs I/N, got {text!r}")
    if n != count:
        ap.error(f"--piece {text}: this plan has {count} pieces (bench/zoo.py "
                 "plan, with the same --weights, --ms, --piece-s and "
                 "--tinygemm-max-m)")
    if not 1 <= i <= n:
        ap.error(f"--piece {text}: I must be in 1..{n}")
    return i


def compare_cmd(args, run, out, budget):
    return [sys.executable, os.path.join(HERE, "compare.py"), "--mtc",
            args.mtc, "--out", out, "--weights", args.weights, "--group",
            str(GROUP), "--systems", ",".join(run.systems), "--ms",
            ",".join(map(str, run.ms)), "--shapes",
            ",".join(f"{s.n}x{s.k}" for s in run.shapes), "--tune-spec", "",
            "--arch", args.arch, "--inductor-ms", "", "--budget-s",
            f"{budget:.0f}"]


def cmd_run(ap, args):
    pieces = plan(args.weights, args.ms, args.piece_s, args.tinygemm_max_m)
    if not args.piece:
        ap.error(f"give --piece I/N: this plan has {len(pieces)} pieces")
    i = parse_piece(ap, args.piece, len(pieces))
    only = [x for x in args.systems.split(",") if x]
    known = {x for r in pieces[i - 1] for x in r.systems}
    if set(only) - known:
        ap.error(f"--systems: {', '.join(sorted(set(only) - known))} not "
                 f"among this piece's {', '.join(sorted(known))}")
    if only:
        pieces[i - 1] = [r._replace(systems=[x for x in r.systems if x in only])
                         for r in pieces[i - 1]]
    if args.check_args:
        print(f"piece {i}/{len(pieces)} of {args.weights}:")
        for r in pieces[i - 1]:
            print(f"  M={','.join(map(str, r.ms))}: {len(r.shapes)} shapes, "
                  f"{','.join(r.systems)}, estimated {r.est_s:.0f} s")
        return 0
    tag = f"zoo-{args.weights}-{i}of{len(pieces)}"
    out = os.path.join(args.out, tag)
    os.makedirs(out, exist_ok=True)
    rows_path = os.path.join(out, "rows.jsonl")
    start = time.time()
    status = 0
    with open(os.path.join(out, "zoo.txt"), "a") as log:
        def say(text):
            print(text, flush=True)
            log.write(text + "\n")
            log.flush()
        for j, run in enumerate(pieces[i - 1]):
            left = (args.budget_s - (time.time() - start) if args.budget_s > 0
                    else 0)
            name = f"{i}of{len(pieces)}-run{j + 1}"
            info = dict(system="zoo", m=0, n=0, k=0, zoo_run=name,
                        weights=args.weights, ms=run.ms,
                        shapes=[f"{s.n}x{s.k}" for s in run.shapes],
                        systems=run.systems, est_s=round(run.est_s, 1))
            if args.budget_s > 0 and left < 5:
                say(f"== {name}: not started, the {args.budget_s:.0f} s "
                    "budget is spent")
                continue
            with open(rows_path, "a") as f:
                f.write(json.dumps(dict(info, event="start")) + "\n")
            run_out = os.path.join(out, f"run{j + 1}")
            cmd = compare_cmd(args, run, run_out, left)
            say(f"== {name}: M={','.join(map(str, run.ms))}, "
                f"{len(run.shapes)} shapes, estimated {run.est_s:.0f} s\n"
                + " ".join(a if a else "''" for a in cmd))
            t0 = time.time()
            # Streamed, so that a call cut off keeps the log so far.
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
            for line in p.stdout:
                say(line.rstrip("\n"))
            p.wait()
            wall = time.time() - t0
            kept = os.path.join(run_out, "results.jsonl")
            with open(rows_path, "a") as f:
                if os.path.exists(kept):
                    for line in open(kept):
                        f.write(json.dumps(dict(json.loads(line),
                                                zoo_run=name)) + "\n")
                f.write(json.dumps(dict(info, event="end", rc=p.returncode,
                                        wall_s=round(wall, 1))) + "\n")
            shutil.rmtree(run_out, ignore_errors=True)
            say(f"== {name}: rc {p.returncode}, {wall:.0f} s "
                f"(estimated {run.est_s:.0f})")
            status = status or (p.returncode != 0)
    return status


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("list", help="the shapes, with labels and exclusions")
    p.add_argument("--weights", choices=("int8", "int4"), default="int8")
    p = sub.add_parser("plan", help="the pieces and their estimates")
    common_args(p)
    p = sub.add_parser("run", help="measure one piece (bench/device.sh zoo)",
                       description="Measure piece I of the plan's N: "
                       "compare.py once per run of the piece, into "
                       "OUT/zoo-<weights>-<I>of<N>/ (rows.jsonl, zoo.txt).")
    common_args(p)
    p.add_argument("--mtc", required=True)
    p.add_argument("--out", required=True,
                   help="the piece goes to OUT/zoo-<weights>-<I>of<N>/")
    p.add_argument("--piece", help="I/N: piece I of the plan's N")
    p.add_argument("--budget-s", type=float, default=450.0,
                   help="start no measurement after this many seconds "
                        "(default 450; 0: no limit)")
    p.add_argument("--systems", default="",
                   help="measure only these of the plan's systems (comma "
                        "list, e.g. mtc to measure mtc again; the report "
                        "takes each system's latest row)")
    p.add_argument("--arch", default="sm_90a",
                   help="mtc's --arch (default sm_90a: the wgmma kind)")
    p.add_argument("--check-args", action="store_true",
                   help="check the arguments and exit (bench/device.sh -n)")
    sub.add_parser("report", add_help=False,
                   help="the zoo's report (bench/zoo_report.py --help)")
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["report"]:
        import zoo_report
        return zoo_report.main(argv[1:])
    args = ap.parse_args(argv)
    if args.cmd == "list":
        cmd_list(args)
    elif args.cmd == "plan":
        cmd_plan(args)
    else:
        return cmd_run(p, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
