"""results.md and plot.png from the rows gpt_fast.py wrote (results.jsonl).

Where a (system, phase, B) has several rows, the last one counts."""
import json
from pathlib import Path

TARGETS_MS = {1: 2.3, 8: 2.8, 32: 4.0}  # issue: mtc decode step targets


def load(out: Path):
    rows = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            rows[(r["system"], r["phase"], r["B"])] = r
    return rows


def _fmt(v, spec):
    return "" if v is None else format(v, spec)


def table(rows):
    batches = sorted({b for (_, phase, b) in rows if phase == "decode"})
    lines = [
        "| B | gpt-fast ms/step | gpt-fast tok/s | mtc ms/step | mtc tok/s | "
        "speedup | mtc linears ms/step | / floor | logits err gpt-fast | "
        "logits err mtc | compile s gpt-fast | compile s mtc (swap) | runs |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for b in batches:
        g = rows.get(("gpt-fast", "decode", b), {})
        m = rows.get(("mtc", "decode", b), {})
        lin = m.get("profile", {}).get("mtc_linear_ms_per_step")
        floor = m.get("floor_ms")
        speed = (g["ms_per_step"] / m["ms_per_step"]
                 if g and m else None)
        lines.append(
            f"| {b} | {_fmt(g.get('ms_per_step'), '.2f')} | "
            f"{_fmt(g.get('tokens_per_s'), '.0f')} | "
            f"{_fmt(m.get('ms_per_step'), '.3f')} | "
            f"{_fmt(m.get('tokens_per_s'), '.0f')} | "
            f"{_fmt(speed, '.1f')}{'x' if speed else ''} | "
            f"{_fmt(lin, '.3f')} | "
            f"{_fmt(lin / floor if lin and floor else None, '.2f')} | "
            f"{_fmt(g.get('max_rel_err'), '.1e')} | "
            f"{_fmt(m.get('max_rel_err'), '.1e')} | "
            f"{_fmt(g.get('compile_s'), '.0f')} | "
            f"{_fmt(m.get('compile_s'), '.0f')}"
            f"{' (' + format(m['swap_s'], '.0f') + ')' if 'swap_s' in m else ''} | "
            f"{g.get('run', '-')} / {m.get('run', '-')} |")
    return "\n".join(lines)


def targets(rows):
    out = []

    def ok(cond):
        return "met" if cond else "MISSED"
    for b, t in TARGETS_MS.items():
        m = rows.get(("mtc", "decode", b))
        if m:
            out.append(f"- B={b}: {m['ms_per_step']:.3f} ms per step "
                       f"(target <= {t}): {ok(m['ms_per_step'] <= t)}")
    m1, m8 = rows.get(("mtc", "decode", 1)), rows.get(("mtc", "decode", 8))
    if m1 and m8:
        g = m8["tokens_per_s"] / m1["tokens_per_s"]
        out.append(f"- tokens/s from B=1 to B=8: x{g:.2f} (target >= 6): "
                   f"{ok(g >= 6)}")
    for (s, phase, b), m in sorted(rows.items()):
        if s == "mtc" and phase == "decode" and b <= 16:
            lin = m["profile"]["mtc_linear_ms_per_step"]
            r = lin / m["floor_ms"]
            out.append(f"- B={b}: mtc's linear kernels {lin:.3f} ms per step "
                       f"= {r:.2f}x the {m['floor_ms']:.2f} ms weight-read "
                       f"floor (target <= 1.3x): {ok(r <= 1.3)}")
    pg, pm = rows.get(("gpt-fast", "prefill", 1)), rows.get(("mtc", "prefill",
                                                             1))
    if pg and pm:
        out.append(f"- prefill {pm['tokens']} tokens: mtc {pm['ms']:.2f} ms, "
                   f"gpt-fast {pg['ms']:.2f} ms (target: no slower): "
                   f"{ok(pm['ms'] <= pg['ms'])} ({pm['ms'] / pg['ms']:.3f}x)")
    firsts = [m for (s, phase, _), m in rows.items()
              if s == "mtc" and phase == "decode" and "swap_s" in m]
    if firsts:
        f = max(firsts, key=lambda m: m["swap_s"])
        out.append(f"- first swap (compile + tune): {f['swap_s']:.1f} s, then "
                   f"Inductor {f['inductor_compile_s']:.1f} s = "
                   f"{f['compile_s']:.1f} s (target <= 60 s): "
                   f"{ok(f['compile_s'] <= 60)}")
    rc = rows.get(("mtc", "recompile", min([b for (_, p, b) in rows
                                            if p == "recompile"] or [0])))
    if rc:
        out.append(f"- cached re-run: swap {rc['swap_s']:.1f} s, with "
                   f"Inductor {rc['compile_s']:.1f} s (target <= 5 s): "
                   f"{ok(rc['compile_s'] <= 5)}")
    return "\n".join(out)


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    for system, style in (("gpt-fast", "o-"), ("mtc", "s-")):
        pts = sorted((k[2], r) for k, r in rows.items()
                     if k[0] == system and k[1] == "decode")
        if not pts:
            continue
        a.plot([p[0] for p in pts], [p[1]["ms_per_step"] for p in pts],
               style, label=system)
        b.plot([p[0] for p in pts], [p[1]["tokens_per_s"] for p in pts],
               style, label=system)
    floors = [r["floor_ms"] for k, r in rows.items() if "floor_ms" in r]
    if floors:
        a.axhline(floors[0], color="gray", ls="--",
                  label="int8 weight-read floor")
    for ax, title in ((a, "ms per decode step"), (b, "tokens/s")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("batch size")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle("gpt-fast Llama-3-8B int8 decode on the H200 (torch.compile, "
                 "CUDA graphs)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def write(out: Path):
    rows = load(out)
    text = ["# gpt-fast int8 decoding: as shipped and on mtc kernels", "",
            table(rows), "", "Targets:", "", targets(rows), ""]
    (out / "results.md").write_text("\n".join(text))
    try:
        plot(rows, out / "plot.png")
    except ImportError:
        pass
    print("\n".join(text))
