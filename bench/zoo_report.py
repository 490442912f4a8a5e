#!/usr/bin/env python3
"""The shape zoo's report (bench/zoo.py report): the rows of the zoo's
pieces (rows.jsonl of each OUT/zoo-<weights>-<I>of<N>/, or compare.py's
results.jsonl of a run cut short) merged into zoo.md, zoo.json and zoo.png.

Per M, for int8 and int4 (groups of 128): the geomean and the worst of
cuBLAS time / mtc time over the zoo's shapes, the median and the worst of
mtc's share of the read ceiling (compare_report.layer_bytes over mtc's
time, over the ceiling that mtc bench measured in the same run) and of
its size's read probe (`mtc bench`'s read_probe_us over mtc's time), and for
int4 the geomean and worst of tinygemm time / mtc time; the issue's targets
evaluated over every point measured; the full table; the plot (one line per
family, the geomean over its shapes). It works on any subset of the pieces
and lists the points still missing, by piece, and every failed check.

    python3 bench/zoo_report.py bench/results/DATE-zoo --out bench/results/DATE-zoo
"""
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import zoo  # noqa: E402
from compare_report import READ_BW, geomean, layer_bytes  # noqa: E402

# The targets: (weights, what, statistic, bound).
TARGETS = [
    ("int8", "ceil", "median", 0.88), ("int8", "ceil", "worst", 0.75),
    ("int4", "ceil", "median", 0.80), ("int4", "ceil", "worst", 0.65),
    ("int8", "cublas", "geomean", 1.10), ("int8", "cublas", "worst", 0.95),
    ("int4", "cublas", "geomean", 1.10), ("int4", "cublas", "worst", 0.95),
]
SMALL_M, LARGE_M = 16, 128  # read-ceiling targets at M <= 16; cuBLAS at >= 128


def jsonl_files(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            for d, _, names in sorted(os.walk(p)):
                out += [os.path.join(d, f) for f in sorted(names)
                        if f.endswith(".jsonl")]
        else:
            out.append(p)
    return out


def load(paths):
    """Every row, each with "_src" (its file and zoo run: the unit whose
    meta rows give its read ceiling)."""
    rows = []
    for path in jsonl_files(paths):
        for line in open(path):
            if line.strip():
                r = json.loads(line)
                r["_src"] = f"{path}:{r.get('zoo_run', '')}"
                rows.append(r)
    return rows


def collect(rows, weights):
    """{(m, n, k): {system: row, "ceiling": GB/s}} for these weights (int4:
    groups of zoo.GROUP); a later row of the same point and system wins."""
    ceilings = {}
    for r in rows:
        c = r.get("meta", {}).get("read_ceiling_gbs") if r.get(
            "system") == "meta" else None
        if c:
            ceilings[r["_src"]] = c
    fallback = statistics.median(ceilings.values()) if ceilings else None
    points = {}
    for r in rows:
        if r.get("system") in (None, "meta", "zoo"):
            continue
        if r.get("weights", "int8") != weights or (
                weights == "int4" and r.get("group") != zoo.GROUP):
            continue
        p = points.setdefault((r["m"], r["n"], r["k"]), {})
        p[r["system"]] = r
        if r["system"] == "mtc":
            p["ceiling"] = ceilings.get(r["_src"], fallback)
    return points, fallback


def good(row):
    return bool(row and row.get("us") and row.get("ok"))


def point_metrics(weights, m, n, k, p):
    """vs cuBLAS, vs tinygemm (time / mtc's) and mtc's share of the read
    ceiling and of its size's read probe (`mtc bench`'s read kernel over
    the layer's bytes, where the row has it), each None where a row is
    missing or failed."""
    out = {"cublas": None, "tinygemm": None, "ceil": None, "probe": None}
    mt = p.get("mtc")
    if not good(mt):
        return out
    for key, system in (("cublas", "cublas_bf16"), ("tinygemm", "tinygemm")):
        if good(p.get(system)):
            out[key] = p[system]["us"] / mt["us"]
    ceiling = (p.get("ceiling") or READ_BW / 1e9) * 1e9
    out["ceil"] = layer_bytes(m, n, k, weights, zoo.GROUP) / (
        mt["us"] * 1e-6) / ceiling
    if mt.get("probe_us"):
        out["probe"] = mt["probe_us"] / mt["us"]
    return out


def missing_systems(weights, m, p, tinygemm_max_m):
    """The systems a point still needs: no row, or a failed one."""
    return [s for s in zoo.systems_at(weights, m, tinygemm_max_m)
            if not good(p.get(s))]


def stat(values, how):
    vals = [v for v, _ in values]
    if not vals:
        return None, None
    if how == "geomean":
        return geomean(vals), None
    if how == "median":
        return statistics.median(vals), None
    worst = min(values)
    return worst[0], worst[1]


def analyse(rows, weights, ms, piece_s, tinygemm_max_m):
    """Everything the report says about one kind of weights."""
    points, fallback = collect(rows, weights)
    shapes = zoo.included(weights)
    pieces = zoo.plan(weights, ms, piece_s, tinygemm_max_m)
    where = zoo.piece_of(pieces)
    table, missing, failed = [], [], []
    per_m, per_family = {}, {}
    for m in ms:
        vals = {"cublas": [], "tinygemm": [], "ceil": [], "probe": []}
        for s in shapes:
            p = points.get((m, s.n, s.k), {})
            met = point_metrics(weights, m, s.n, s.k, p)
            need = missing_systems(weights, m, p, tinygemm_max_m)
            for system in need:
                if p.get(system):
                    failed.append(dict(m=m, n=s.n, k=s.k, system=system,
                                       error=p[system].get("error") or
                                       f"err {p[system].get('err')}"))
            if need:
                missing.append(dict(m=m, n=s.n, k=s.k, systems=need,
                                    piece=where.get((m, s.n, s.k))))
            for key, v in met.items():
                if v:
                    vals[key].append((v, f"{s.n}x{s.k}"))
                    for fam in zoo.families(s):
                        per_family.setdefault(key, {}).setdefault(
                            fam, {}).setdefault(m, []).append(v)
            mt = p.get("mtc") or {}
            table.append(dict(
                m=m, n=s.n, k=s.k, labels=[f"{c} {lay}" if lay != "-" else c
                                           for _, c, lay in s.labels],
                mtc_us=mt.get("us"), mtc_ok=mt.get("ok"),
                schedule=mt.get("schedule"),
                cublas_us=(p.get("cublas_bf16") or {}).get("us"),
                tinygemm_us=(p.get("tinygemm") or {}).get("us"), **met))
        row = {"points": len(shapes), "mtc": len(vals["ceil"])}
        for key, how in (("cublas", "geomean"), ("cublas", "worst"),
                         ("ceil", "median"), ("ceil", "worst"),
                         ("probe", "median"), ("probe", "worst"),
                         ("tinygemm", "geomean"), ("tinygemm", "worst")):
            row[f"{key}_{how}"], shape = stat(vals[key], how)
            if shape:
                row[f"{key}_{how}_shape"] = shape
        per_m[m] = row
    fam_lines = {key: {f: {m: geomean(v) for m, v in sorted(d.items())}
                       for f, d in sorted(fams.items())}
                 for key, fams in per_family.items()}
    return dict(weights=weights, shapes=len(shapes), ms=ms,
                pieces=len(pieces), ceiling_fallback=fallback,
                per_m=per_m, families=fam_lines, table=table,
                missing=missing, failed=failed,
                excluded=[dict(n=s.n, k=s.k, reason=zoo.exclusion(s, weights))
                          for s in zoo.zoo_shapes()
                          if zoo.exclusion(s, weights)],
                targets=targets(weights, table))


def targets(weights, table):
    out = []
    for w, what, how, bound in TARGETS:
        if w != weights:
            continue
        sel = [(t[what], f"M={t['m']} {t['n']}x{t['k']}") for t in table
               if (t["m"] <= SMALL_M if what == "ceil" else t["m"] >= LARGE_M)]
        have = [(v, s) for v, s in sel if v]
        value, shape = stat(have, how)
        out.append(dict(what=what, how=how, bound=bound, value=value,
                        shape=shape, measured=len(have), expected=len(sel),
                        met=None if value is None else value >= bound))
    return out


def fmt(v, pct=False):
    if v is None:
        return ""
    return f"{100 * v:.0f}%" if pct else f"{v:.2f}x"


def targets_lines(a):
    lines = []
    for t in a["targets"]:
        rng = (f"M <= {SMALL_M}" if t["what"] == "ceil" else f"M >= {LARGE_M}")
        what = ("share of the read ceiling" if t["what"] == "ceil"
                else "bf16 cuBLAS time / mtc time")
        pct = t["what"] == "ceil"
        bound = fmt(t["bound"], pct)
        if t["value"] is None:
            verdict = "not measured"
        else:
            verdict = (f"{fmt(t['value'], pct)}"
                       + (f" ({t['shape']})" if t["shape"] else "") + ": "
                       + ("met" if t["met"] else "**missed**"))
        part = ("" if t["measured"] == t["expected"] else
                f", partial: {t['measured']} of {t['expected']} points")
        lines.append(f"- {a['weights']}, {rng}, {t['how']} {what} >= "
                     f"{bound}: {verdict}{part}")
    return lines


def weights_lines(a, tinygemm_max_m):
    w = a["weights"]
    title = "int8 per channel" if w == "int8" else \
        f"int4, groups of {zoo.GROUP}"
    npts = a["shapes"] * len(a["ms"])
    lines = [f"## {title}", "",
             f"{a['shapes']} shapes x {len(a['ms'])} M = {npts} points, "
             f"{npts - len(a['missing'])} complete ({a['pieces']} pieces)."]
    if w == "int4":
        lines.append(f"tinygemm (`_weight_int4pack_mm`) ran up to M = "
                     f"{tinygemm_max_m}.")
    lines += ["", "| M | mtc rows | vs cuBLAS geomean | vs cuBLAS worst | "
              "%ceil median | %ceil worst | %probe median | %probe worst" +
              (" | vs tinygemm geomean | vs tinygemm worst |" if w == "int4"
               else " |"),
              "|---|---|---|---|---|---|---|---|" + ("---|---|" if w == "int4"
                                              else "")]
    for m in a["ms"]:
        r = a["per_m"][m]
        cells = [str(m), f"{r['mtc']}/{r['points']}",
                 fmt(r["cublas_geomean"]),
                 fmt(r["cublas_worst"]) + (f" ({r['cublas_worst_shape']})"
                                           if r.get("cublas_worst_shape") else ""),
                 fmt(r["ceil_median"], True),
                 fmt(r["ceil_worst"], True) + (f" ({r['ceil_worst_shape']})"
                                               if r.get("ceil_worst_shape") else ""),
                 fmt(r["probe_median"], True),
                 fmt(r["probe_worst"], True) + (f" ({r['probe_worst_shape']})"
                                                if r.get("probe_worst_shape") else "")]
        if w == "int4":
            cells += [fmt(r["tinygemm_geomean"]),
                      fmt(r["tinygemm_worst"]) +
                      (f" ({r['tinygemm_worst_shape']})"
                       if r.get("tinygemm_worst_shape") else "")]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "### Targets", ""] + targets_lines(a)
    lines += ["", "### Missing points", ""]
    if not a["missing"]:
        lines.append("None.")
    by_piece = {}
    for p in a["missing"]:
        by_piece.setdefault(p["piece"], []).append(p)
    for piece, pts in sorted(by_piece.items(), key=lambda x: x[0] or 0):
        per_m = {}
        for p in pts:
            per_m.setdefault(p["m"], []).append(p)
        desc = "; ".join(
            f"M={m}: " + (", ".join(f"{p['n']}x{p['k']} ({'+'.join(p['systems'])})"
                                    for p in ps) if len(ps) <= 6 else
                          f"{len(ps)} shapes")
            for m, ps in sorted(per_m.items()))
        lines.append(f"- piece {piece}/{a['pieces']}: {len(pts)} points: "
                     f"{desc}")
    if a["failed"]:
        lines += ["", "### Failed rows", ""]
        lines += [f"- M={f['m']} {f['n']}x{f['k']} {f['system']}: "
                  f"{f['error']}" for f in a["failed"]]
    if a["excluded"]:
        lines += ["", "### Excluded shapes", ""]
        lines += [f"- {e['n']}x{e['k']}: {e['reason']}" for e in a["excluded"]]
    return lines


def table_lines(a):
    w = a["weights"]
    head = ["N x K", "layers", "M", "mtc µs", "bf16 cuBLAS µs"] + \
        (["tinygemm µs"] if w == "int4" else []) + ["vs cuBLAS"] + \
        (["vs tinygemm"] if w == "int4" else []) + ["%ceil", "%probe",
                                                    "mtc schedule"]
    lines = [f"### Every point, {w}", "", "| " + " | ".join(head) + " |",
             "|" + "---|" * len(head)]
    for t in sorted(a["table"], key=lambda t: (t["n"], t["k"], t["m"])):
        us = ("" if t["mtc_us"] is None else
              f"{t['mtc_us']:.2f}" + ("" if t["mtc_ok"] else " ✗"))
        cells = [f"{t['n']}x{t['k']}", ", ".join(t["labels"]), str(t["m"]),
                 us, "" if t["cublas_us"] is None else f"{t['cublas_us']:.2f}"]
        if w == "int4":
            cells.append("" if t["tinygemm_us"] is None
                         else f"{t['tinygemm_us']:.2f}")
        cells.append(fmt(t["cublas"]))
        if w == "int4":
            cells.append(fmt(t["tinygemm"]))
        cells += [fmt(t["ceil"], True), fmt(t["probe"], True),
                  f"`{t['schedule']}`" if t["schedule"] else ""]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def runs_lines(rows):
    ends = [r for r in rows if r.get("system") == "zoo" and
            r.get("event") == "end"]
    if not ends:
        return []
    lines = ["## Runs", "", "Wall time of each compare.py run against the "
             "estimate it was planned with (bench/zoo.py's cost model):", "",
             "| run | M | shapes | estimated s | wall s | rc |",
             "|---|---|---|---|---|---|"]
    for r in ends:
        lines.append(f"| {r['weights']} {r['zoo_run']} | "
                     f"{','.join(map(str, r['ms']))} | {len(r['shapes'])} | "
                     f"{r['est_s']:.0f} | {r['wall_s']:.0f} | {r['rc']} |")
    return lines


def plot(analyses, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker as ticker
    except Exception as e:
        print(f"no plot: {e}")
        return False
    cols = [("cublas", "bf16 cuBLAS time / mtc time", 1.10),
            ("ceil", "mtc's share of the read ceiling", None),
            ("tinygemm", "tinygemm time / mtc time", 1.0)]
    cols = [c for c in cols if c[0] != "tinygemm" or
            any(a["weights"] == "int4" for a in analyses)]
    fig, axes = plt.subplots(len(analyses), len(cols), squeeze=False,
                             figsize=(5.2 * len(cols), 4.0 * len(analyses)))
    fams = sorted({f for a in analyses for d in a["families"].values()
                   for f in d})
    colors = {f: plt.cm.tab10(i % 10) for i, f in enumerate(fams)}
    for row, a in zip(axes, analyses):
        for ax, (key, label, ref) in zip(row, cols):
            lines = a["families"].get(key, {})
            if key == "tinygemm" and a["weights"] != "int4":
                ax.axis("off")
                continue
            for f, pts in lines.items():
                ms = sorted(pts)
                ax.plot(ms, [pts[m] for m in ms], "o-", ms=3, label=f,
                        color=colors[f], lw=2.2 if f == "random" else 1.3)
            if key == "ceil":
                ref = 0.88 if a["weights"] == "int8" else 0.80
            if ref:
                ax.axhline(ref, color="k", ls="--", lw=0.8)
            if key != "ceil":
                ax.axhline(1.0, color="k", lw=0.6)
            if key == "tinygemm":
                ax.set_yscale("log")
                ax.yaxis.set_major_formatter(ticker.FormatStrFormatter("%gx"))
            elif key == "ceil":
                ax.yaxis.set_major_formatter(ticker.PercentFormatter(1.0))
            ax.set_xscale("log", base=2)
            ax.set_xticks(a["ms"])
            ax.xaxis.set_major_formatter(ticker.FormatStrFormatter("%d"))
            ax.tick_params(axis="x", labelsize=7)
            ax.set_xlabel("M")
            ax.set_title(f"{a['weights']}: {label}", fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=7, ncol=2)
    fig.suptitle("mtc's heuristic on the shape zoo, geomean per family "
                 "(dashed: the issue's target)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+",
                    help="rows.jsonl / results.jsonl files, or folders "
                         "searched for *.jsonl")
    ap.add_argument("--out", required=True)
    ap.add_argument("--weights", default="int8,int4",
                    help="comma list (default int8,int4)")
    ap.add_argument("--ms", type=zoo.ms_arg, default=zoo.MS)
    ap.add_argument("--piece-s", type=float, default=420.0,
                    help="the plan's --piece-s, to name each missing "
                         "point's piece")
    ap.add_argument("--tinygemm-max-m", type=int, default=256)
    args = ap.parse_args(argv)
    kinds = [w for w in args.weights.split(",") if w]
    if not kinds or any(w not in ("int8", "int4") for w in kinds):
        ap.error(f"--weights: int8 and/or int4, got {args.weights!r}")
    rows = load(args.paths)
    analyses = [analyse(rows, w, args.ms, args.piece_s, args.tinygemm_max_m)
                for w in kinds]
    os.makedirs(args.out, exist_ok=True)
    lines = ["# The shape zoo: mtc's heuristic against bf16 cuBLAS and "
             "tinygemm", "",
             f"{len(zoo.CONFIGS)} public configurations and "
             f"{zoo.RANDOM_COUNT} random shapes (bench/zoo.py list), M = "
             f"{', '.join(map(str, args.ms))}. `vs X` = X's time / mtc's; "
             "`%ceil` = the layer's bytes (weights, scales and zeros, x, the "
             "output) over mtc's time, over the read ceiling that `mtc "
             "bench` measured in the same run; `%probe` = the time of `mtc "
             "bench`'s read kernel over the same bytes (cold L2, the same "
             "harness: what the size allows) over mtc's. Worst cases name "
             "their shape.",
             ""]
    if any(a["ceiling_fallback"] is None and a["per_m"] and
           any(r["mtc"] for r in a["per_m"].values()) for a in analyses):
        lines += ["No read ceiling in the rows: %ceil is over 4.64 TB/s.", ""]
    for a in analyses:
        lines += weights_lines(a, args.tinygemm_max_m) + [""]
    lines += runs_lines(rows) + [""]
    if plot(analyses, os.path.join(args.out, "zoo.png")):
        lines += ["![ratio to cuBLAS and share of the read ceiling per "
                  "family](zoo.png)", ""]
    for a in analyses:
        lines += table_lines(a) + [""]
    with open(os.path.join(args.out, "zoo.md"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(args.out, "zoo.json"), "w") as f:
        json.dump({"sources": jsonl_files(args.paths), "analyses": analyses},
                  f, indent=1)
    print("\n".join(lines[:8]))
    for a in analyses:
        print("\n".join(targets_lines(a)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
