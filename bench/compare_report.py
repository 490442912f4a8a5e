"""compare.py's report: the table (results.md, results.json) and the plot
(plot.png) of a run's rows, and the names and floors they use."""
import json
import math
import os
import sys

SYSTEMS = ["mtc", "eager", "cublas_bf16", "inductor", "inductor_cd",
           "max_autotune"]
LABELS = {"mtc": "mtc", "eager": "eager", "cublas_bf16": "bf16 cuBLAS",
          "inductor": "Inductor", "inductor_cd": "Inductor + CD",
          "max_autotune": "Inductor max-autotune"}
READ_BW = 4.64e12  # ANCHORS.md's floor; the measured ceiling is reported too


def log(*a):
    print(*a, flush=True)


def floor_us(m, n, k):
    return (n * k + m * k * 2 + m * n * 2) / READ_BW * 1e6


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def report(args, rec, ms, shapes):
    meta = rec.meta
    ceiling = meta.get("read_ceiling_gbs")
    lines = [f"# mtc vs PyTorch: weight-only int8 linear, "
             f"{meta.get('device', '?')}", ""]
    lines.append(f"Command: `{' '.join(sys.argv)}`  ")
    lines.append(f"Driver {meta.get('driver', '?')}, PyTorch "
                 f"{meta.get('torch', '?')}, Triton {meta.get('triton', '?')}. "
                 f"mtc's streaming-read ceiling measured in this run: "
                 f"{ceiling:.0f} GB/s; launch floor (an empty grid in the "
                 f"same harness) {meta.get('launch_floor_us') or 0:.2f} µs."
                 if ceiling else "")
    lines.append("")
    lines.append("Median µs per call over CUDA-graph replays, cold L2 "
                 "(rotated copies > 4x L2). `floor` = bytes / 4.64 TB/s. "
                 "`%ceil` = mtc's GB/s over the ceiling measured in this run. "
                 "Speedup = system time / mtc time. Every output checked "
                 "against fp64 (errors in results.json); a failed check "
                 "shows as ✗.")
    lines.append("")
    present = {r["system"] for r in rec.rows}
    systems = [s for s in SYSTEMS if s in present]
    head = ["N x K", "M", "floor"] + [LABELS[s] for s in systems] + \
        ["mtc GB/s", "%ceil"] + [f"vs {LABELS[s]}" for s in systems[1:]] + \
        ["mtc tune s"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for m in ms:
        for n, k in shapes:
            row = [f"{n}x{k}", str(m), f"{floor_us(m, n, k):.1f}"]
            mt = rec.get("mtc", m, n, k)
            for s in systems:
                r = rec.get(s, m, n, k)
                if not r or r.get("us") is None:
                    row.append("")
                else:
                    row.append(f"{r['us']:.1f}" + ("" if r.get("ok") else " ✗"))
            if mt and mt.get("us"):
                gbs = (n * k + m * k * 2 + m * n * 2) / (mt["us"] * 1e-6) / 1e9
                row += [f"{gbs:.0f}", f"{100 * gbs / ceiling:.0f}%"
                        if ceiling else ""]
            else:
                row += ["", ""]
            for s in systems[1:]:
                r = rec.get(s, m, n, k)
                if mt and mt.get("us") and r and r.get("us"):
                    row.append(f"{r['us'] / mt['us']:.2f}x")
                else:
                    row.append("")
            cs = mt.get("compile_s") if mt else None
            row.append(f"{cs:.1f}" if cs else ("untuned" if mt else ""))
            lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append("Geomean speedup of mtc over each system, over the shapes "
                 "where both ran:")
    lines.append("")
    for m in ms:
        parts = []
        for s in systems[1:]:
            ratios = []
            for n, k in shapes:
                a, b = rec.get("mtc", m, n, k), rec.get(s, m, n, k)
                if a and b and a.get("us") and b.get("us"):
                    ratios.append(b["us"] / a["us"])
            g = geomean(ratios)
            if g:
                parts.append(f"{LABELS[s]} {g:.2f}x ({len(ratios)} shapes)")
        if parts:
            lines.append(f"- M = {m}: " + ", ".join(parts))
    comp = [r["compile_s"] for r in rec.rows
            if r["system"] != "mtc" and r.get("compile_s")]
    if comp:
        lines.append("")
        lines.append(f"PyTorch compile times (first call, incl. autotuning): "
                     f"{min(comp):.1f} to {max(comp):.1f} s per graph.")
    if meta.get("cached_compile_s"):
        lines.append("")
        for m, secs in meta["cached_compile_s"].items():
            g = meta["cached_compile_graphs"][m]
            lines.append(f"`mtc compile --tune` with a warm cache, M={m}: "
                         f"{secs:.2f} s for {g} graphs "
                         f"({secs / g:.3f} s per graph, process start "
                         f"included).")
    with open(os.path.join(rec.out, "results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(rec.out, "results.json"), "w") as f:
        json.dump({"meta": meta, "rows": rec.rows}, f, indent=1)
    plot(rec, ms, shapes, systems)


def plot(rec, ms, shapes, systems):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:
        log(f"no plot: {e}")
        return
    ncol = min(4, len(shapes))
    nrow = math.ceil(len(shapes) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.4 * nrow),
                             squeeze=False)
    for ax, (n, k) in zip(axes.flat, shapes):
        for s in systems:
            pts = [(m, rec.get(s, m, n, k)) for m in ms]
            pts = [(m, r["us"]) for m, r in pts if r and r.get("us")]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-",
                        label=LABELS[s], lw=2.2 if s == "mtc" else 1.2)
        ax.plot(ms, [floor_us(m, n, k) for m in ms], "k--", lw=1,
                label="memory floor")
        flops_floor = [2 * m * n * k / 790e12 * 1e6 for m in ms]
        ax.plot(ms, flops_floor, "k:", lw=1, label="compute floor (790 TF/s)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"N x K = {n} x {k}")
        ax.set_xlabel("M (batch)")
        ax.set_ylabel("µs")
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(shapes):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.suptitle("y = (x @ convert(W_int8, bf16)^T) * scales — median µs, "
                 "cold L2")
    fig.tight_layout()
    fig.savefig(os.path.join(rec.out, "plot.png"), dpi=110)
