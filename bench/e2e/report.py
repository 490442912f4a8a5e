"""results.md and plot.png from the rows gpt_fast.py wrote (results.jsonl).

Where a (mode, system, phase, B) has several rows, the last one counts;
rows without a `mode` are int8 (written before int4 existed). With int8
rows only, results.md is what it always was; with int4 rows too, each mode
gets its section, after a summary with a row per mode and batch size."""
import json
import re
import sys
from pathlib import Path

# Issue 24's decode-step targets (ms), set on an H200: int8 by batch size,
# int4 at B = 1. They hold for mtc (`swap`) and mtc-fused alike.
TARGETS_MS = {1: 2.3, 8: 2.8, 32: 4.5}
INT4_TARGETS_MS = {1: 1.6}
TARGET_GPU = "H200"
MODES = ("int8", "int4")


def load_modes(out: Path):
    """{mode: {(system, phase, B): row}}"""
    modes = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            modes.setdefault(r.get("mode", "int8"), {})[
                (r["system"], r["phase"], r["B"])] = r
    return modes


def load(out: Path):
    """The int8 rows, {(system, phase, B): row}."""
    return load_modes(out).get("int8", {})


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


# Where a step's kernel time goes (the profile's "breakdown"): mtc's
# linears alone (woq_*, woq4_*), mtc's graphs with a norm, SwiGLU or residual
# fused around their linears (ffn_*, nlin_* norm + wqkv, lres_* wo +
# residual), the other matmuls (Inductor's or cuBLAS's), attention (SDPA
# and the KV copies it is fused with), and everything else (norms, RoPE,
# cache writes, residual adds, sampling).
def kernel_category(name: str) -> str:
    if name.startswith(("woq_", "woq4_")):
        return "mtc linears"
    if name.startswith(("ffn_", "nlin_", "lres_")):
        return "mtc fused graphs"
    if re.search(r"sdpa|flash|fmha|scaled_dot_product|attention", name):
        return "attention"
    if re.search(r"(^|_)(mm|addmm|bmm)(_|$)|gemm|cutlass|xmma", name):
        return "other matmuls"
    return "other"


def step_profile(events, steps, n_layers):
    """A decode step's kernels from the profiler's (name, self device µs,
    calls) over `steps` steps: the kernel time per step, mtc's linears'
    (woq_*, woq4_*) and feed-forward graphs' (ffn_*), launches per step and
    per layer (copies and memsets are not launches), the breakdown by
    kernel_category ([ms, launches] per step), the 8 slowest kernels, and
    every kernel's [ms, launches] per step (the launch census)."""
    kernels, census, breakdown = {}, {}, {}
    launches = 0
    for name, us, count in events:
        if us <= 0:
            continue
        ms = us / 1e3 / steps
        kernels[name] = kernels.get(name, 0.0) + ms
        if name.startswith(("Memcpy", "Memset")):
            continue
        launches += count
        c = census.setdefault(name[:100], [0.0, 0.0])
        c[0] += ms
        c[1] += count / steps
        cat = kernel_category(name)
        b_ms, b_n = breakdown.get(cat, (0.0, 0.0))
        breakdown[cat] = (b_ms + ms, b_n + count / steps)
    top = sorted(kernels.items(), key=lambda kv: -kv[1])[:8]
    return {
        "kernel_ms_per_step": sum(kernels.values()),
        "mtc_linear_ms_per_step": sum(
            v for k, v in kernels.items() if k.startswith(("woq_", "woq4_"))),
        "mtc_ffn_ms_per_step": sum(
            v for k, v in kernels.items() if k.startswith("ffn_")),
        "launches_per_step": launches / steps,
        "launches_per_layer": launches / steps / n_layers,
        "breakdown": {k: [round(ms, 4), round(n, 2)]
                      for k, (ms, n) in sorted(breakdown.items())},
        "top": [[k[:80], round(v, 4)] for k, v in top],
        "kernels": {k: [round(ms, 4), round(n, 2)]
                    for k, (ms, n) in sorted(census.items(),
                                             key=lambda kv: -kv[1][1])},
    }


def gpu_timeline(intervals, steps):
    """Whether a step waits on the GPU or on the host, from the profiled
    kernels' (start, end) µs: the span from the first kernel's start to the
    last one's end, and the part of it no kernel ran (the gaps between
    launches), both ms per step. A step bound by its kernels has a span near
    its wall time and small gaps (about a µs a launch inside a CUDA graph);
    one that waits on the host shows the wait as gaps."""
    spans = sorted((a, b) for a, b in intervals if b > a)
    if not spans:
        return {}
    busy, cur_a, cur_b = 0.0, spans[0][0], spans[0][1]
    for a, b in spans[1:]:
        if a > cur_b:
            busy += cur_b - cur_a
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    busy += cur_b - cur_a
    span = cur_b - spans[0][0]  # cur_b: the latest end of all
    return {"gpu_span_ms_per_step": round(span / 1e3 / steps, 4),
            "gpu_idle_ms_per_step": round((span - busy) / 1e3 / steps, 4)}


def profiler_summary(prof, steps, n_layers):
    """step_profile and gpu_timeline of a torch.profiler run over `steps`
    decode steps. The timeline reads the events' fields, which are the
    profiler's and not a stable API: without them the summary has none."""
    from torch.autograd import DeviceType
    events = []
    for e in prof.key_averages():
        us = getattr(e, "self_device_time_total", None)
        events.append((e.key, e.self_cuda_time_total if us is None else us,
                       e.count))
    out = step_profile(events, steps, n_layers)
    try:
        out.update(gpu_timeline(
            [(e.time_range.start, e.time_range.end) for e in prof.events()
             if e.device_type == DeviceType.CUDA
             and not e.name.startswith(("Memcpy", "Memset"))], steps))
    except AttributeError as e:
        print(f"no GPU timeline: {e}", file=sys.stderr)
    return out


def fused_table(rows):
    """The mtc-fused rows beside mtc's and gpt-fast's: time, launches per
    step, where the time goes (empty without mtc-fused rows)."""
    batches = sorted({b for (s, phase, b) in rows
                      if s == "mtc-fused" and phase == "decode"})
    if not batches:
        return ""
    lines = ["| B | gpt-fast ms | mtc ms | mtc-fused ms | launches per step "
             "(gpt-fast / mtc / fused) | fused: ffn graphs ms | fused: "
             "linears ms | fused: other ms | logits err fused |",
             "|---|---|---|---|---|---|---|---|---|"]
    for b in batches:
        g = rows.get(("gpt-fast", "decode", b), {})
        m = rows.get(("mtc", "decode", b), {})
        f = rows[("mtc-fused", "decode", b)]
        p = f.get("profile", {})
        ffn, lin = p.get("mtc_ffn_ms_per_step"), p.get(
            "mtc_linear_ms_per_step")
        other = (p["kernel_ms_per_step"] - (ffn or 0) - (lin or 0)
                 if "kernel_ms_per_step" in p else None)
        launches = " / ".join(
            _fmt(r.get("profile", {}).get("launches_per_step"), ".0f") or "-"
            for r in (g, m, f))
        lines.append(
            f"| {b} | {_fmt(g.get('ms_per_step'), '.2f')} | "
            f"{_fmt(m.get('ms_per_step'), '.3f')} | "
            f"{_fmt(f.get('ms_per_step'), '.3f')} | {launches} | "
            f"{_fmt(ffn, '.3f')} | {_fmt(lin, '.3f')} | "
            f"{_fmt(other, '.3f')} | {_fmt(f.get('max_rel_err'), '.1e')} |")
    return "\n".join(lines)


def breakdown_table(rows):
    """Where each decode row's kernel time goes (gpt_fast.py's
    kernel_category): ms per step (launches per step) by category, all but
    attention (the systems' difference: one of Inductor's attention-side
    kernels took 0.58 to 1.19 ms per step in three compiles of the same
    model, bench/results/2026-12-05-fuse-rows), and launches per layer
    (empty for rows without a breakdown)."""
    cats = sorted({c for r in rows.values()
                   for c in r.get("profile", {}).get("breakdown", {})})
    keys = [k for k in sorted(rows, key=lambda k: (k[2], k[0]))
            if k[1] == "decode" and rows[k].get("profile", {}).get(
                "breakdown")]
    if not keys:
        return ""
    lines = ["| system | B | " + " | ".join(cats) +
             " | all but attention | launches per layer |",
             "|---|---|" + "---|" * (len(cats) + 2)]
    for s, _, b in keys:
        p = rows[(s, "decode", b)]["profile"]
        cells = []
        for c in cats:
            ms, n = p["breakdown"].get(c, (0.0, 0.0))
            cells.append(f"{ms:.3f} ({n:.0f})" if n else "-")
        rest = sum(ms for c, (ms, _) in p["breakdown"].items()
                   if c != "attention")
        lines.append(f"| {s} | {b} | " + " | ".join(cells) +
                     f" | {rest:.3f} | "
                     f"{_fmt(p.get('launches_per_layer'), '.1f')} |")
    return "\n".join(lines)


def census_table(rows):
    """Kernels launched per decoder layer, by kernel (step_profile's
    census): one column per decode row that has it, the kernels launched
    at least once every two layers in some row (issue 24 counts them
    before and after fusion), the sum over the kernels launched at least
    as often as there are layers (what a layer launches, without the
    step's own kernels: embedding, lm_head, sampling) and all launches
    over the layer count; empty without a census."""
    keys = [k for k in sorted(rows, key=lambda k: (k[2], k[0]))
            if k[1] == "decode" and rows[k].get("profile", {}).get("kernels")]
    if not keys:
        return ""
    per_layer = {}
    for k in keys:
        p = rows[k]["profile"]
        layers = p["launches_per_step"] / p["launches_per_layer"]
        for name, (_, n) in p["kernels"].items():
            per_layer.setdefault(name, {})[k] = n / layers
    names = sorted((n for n, c in per_layer.items()
                    if max(c.values()) >= 0.5),
                   key=lambda n: (-max(per_layer[n].values()), n))
    lines = ["| kernel | " + " | ".join(f"{s} B={b}" for s, _, b in keys) +
             " |", "|---|" + "---|" * len(keys)]
    for n in names:
        lines.append(f"| `{n[:70]}` | " + " | ".join(
            f"{per_layer[n][k]:.2f}" if k in per_layer[n] else "-"
            for k in keys) + " |")
    def every_layer(k):
        rates = (c.get(k, 0.0) for c in per_layer.values())
        return sum(n for n in rates if n >= 1)
    lines.append("| kernels launched at least once a layer | " + " | ".join(
        f"{every_layer(k):.2f}" for k in keys) + " |")
    lines.append("| all kernels | " + " | ".join(
        f"{rows[k]['profile']['launches_per_layer']:.2f}" for k in keys) +
        " |")
    return "\n".join(lines)


def verdict(cond, row):
    """met/MISSED, or why the H200's target does not apply to the row."""
    gpu = row.get("gpu")
    if gpu and TARGET_GPU not in gpu:
        return f"not comparable ({TARGET_GPU} target; ran on {gpu})"
    return "met" if cond else "MISSED"


def step_targets(rows, targets_ms):
    """A line per system and batch size with an issue-24 step target."""
    out = []
    for system in ("mtc", "mtc-fused"):
        for b, t in targets_ms.items():
            m = rows.get((system, "decode", b))
            if m:
                out.append(f"- {system} B={b}: {m['ms_per_step']:.3f} ms per "
                           f"step (target <= {t}): "
                           f"{verdict(m['ms_per_step'] <= t, m)}")
    return out


def targets(rows):
    """Issue 24's step targets (in ms: the H200's, `verdict`), then issue
    10's other lines. Those are ratios within one run (tokens/s, the floor
    measured on the GPU at hand, gpt-fast's prefill) or compile times, so
    they apply on any GPU."""
    out = step_targets(rows, TARGETS_MS)

    def ok(cond):
        return "met" if cond else "MISSED"
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


def int4_notes(rows):
    """What the int4 rows say against their floor and gpt-fast's tinygemm."""
    out = []
    any_row = next(iter(rows.values()), {})
    if "int4_pack" in any_row:
        why = next((f"raised {r['int4_shipped_error']}" for r in rows.values()
                    if r.get("int4_shipped_error")), None) or next(
            (f"gave a max rel err of {r['int4_shipped_layer_err']:.2e} on one "
             "layer" for r in rows.values()
             if r.get("int4_shipped_layer_err") is not None), "failed")
        how = ("gpt-fast's quantize.py as shipped" if any_row["int4_pack"] ==
               "shipped" else "gpt-fast's quantization with the uint8 input "
               "that _convert_weight_to_int4pack takes from PyTorch 2.5 (the "
               f"shipped int32 call {why})")
        out.append(f"- groups of {any_row.get('groupsize', '?')}, packed by "
                   f"{how}")
    for (s, phase, b), m in sorted(rows.items()):
        if s != "mtc" or phase != "decode":
            continue
        g = rows.get(("gpt-fast", "decode", b))
        lin = m.get("profile", {}).get("mtc_linear_ms_per_step")
        line = f"- B={b}: mtc {m['ms_per_step']:.3f} ms per step"
        if g:
            line += (f", gpt-fast (tinygemm) {g['ms_per_step']:.3f} ms: "
                     f"{g['ms_per_step'] / m['ms_per_step']:.2f}x")
        if lin and m.get("floor_ms"):
            line += (f"; mtc's linear kernels {lin:.3f} ms = "
                     f"{lin / m['floor_ms']:.2f}x the {m['floor_ms']:.3f} ms "
                     f"int4 read floor")
        out.append(line)
    out += step_targets(rows, INT4_TARGETS_MS)
    for (s, phase, _), r in sorted(rows.items()):
        if phase == "error":
            out.append(f"- {s} failed: {r.get('error', '?')}")
    return "\n".join(out)


def summary(modes):
    """A row per mode and batch size, as the top README shows them."""
    lines = ["| mode | B | gpt-fast ms/step | mtc ms/step | speedup | "
             "mtc tokens/s | mtc's linear kernels per step |",
             "|---|---|---|---|---|---|---|"]
    for mode in [m for m in MODES if m in modes] + sorted(
            set(modes) - set(MODES)):
        rows = modes[mode]
        label = mode
        any_row = next(iter(rows.values()), {})
        if mode == "int4" and "groupsize" in any_row:
            label = f"int4 g{any_row['groupsize']}"
        for b in sorted({b for (_, phase, b) in rows if phase == "decode"}):
            g = rows.get(("gpt-fast", "decode", b), {})
            m = rows.get(("mtc", "decode", b), {})
            speed = (g["ms_per_step"] / m["ms_per_step"] if g and m else None)
            lin = m.get("profile", {}).get("mtc_linear_ms_per_step")
            floor = m.get("floor_ms")
            lin_s = (f"{lin:.2f} ms ({lin / floor:.2f}x the {floor:.2f} ms "
                     "read floor)" if lin and floor else "")
            lines.append(
                f"| {label} | {b} | {_fmt(g.get('ms_per_step'), '.2f')} | "
                f"{_fmt(m.get('ms_per_step'), '.2f')} | "
                f"{_fmt(speed, '.2f')}{'x' if speed else ''} | "
                f"{_fmt(m.get('tokens_per_s'), ',.0f')} | {lin_s} |")
    return "\n".join(lines)


def gpu_of(modes):
    """The GPU the rows ran on (rows written before 2026-12-06 lack it)."""
    names = {r["gpu"] for rows in modes.values() for r in rows.values()
             if r.get("gpu")}
    return " and ".join(sorted(names)) or "an unrecorded GPU"


def plot(rows, path, modes=None):
    """rows: one mode's rows; modes: {mode: rows} to plot several."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    modes = modes or {"int8": rows}
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    many = len(modes) > 1
    for mi, (mode, rows) in enumerate(sorted(modes.items(),
                                             key=lambda kv: kv[0] != "int8")):
        for system, style in (("gpt-fast", "o-"), ("mtc", "s-")):
            pts = sorted((k[2], r) for k, r in rows.items()
                         if k[0] == system and k[1] == "decode")
            if not pts:
                continue
            label = f"{system} {mode}" if many else system
            style = style if mi == 0 else style.replace("-", "--")
            a.plot([p[0] for p in pts], [p[1]["ms_per_step"] for p in pts],
                   style, label=label)
            b.plot([p[0] for p in pts], [p[1]["tokens_per_s"] for p in pts],
                   style, label=label)
        floors = [r["floor_ms"] for k, r in rows.items() if "floor_ms" in r]
        if floors:
            a.axhline(floors[0], color="gray", ls="--" if mi == 0 else ":",
                      label=f"{mode} weight-read floor")
    for ax, title in ((a, "ms per decode step"), (b, "tokens/s")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("batch size")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(f"gpt-fast Llama-3-8B {' and '.join(sorted(modes, key=lambda m: m != 'int8'))} "
                 f"decode on {gpu_of(modes)} (torch.compile, CUDA graphs)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def write(out: Path):
    modes = load_modes(out)
    if set(modes) <= {"int8"}:  # as before int4 existed
        rows = modes.get("int8", {})
        text = ["# gpt-fast int8 decoding: as shipped and on mtc kernels", "",
                table(rows), "", "Targets:", "", targets(rows), ""]
        if fused_table(rows):
            text += ["## mtc-fused: each block's feed-forward half as one "
                     "mtc graph", "", fused_table(rows), ""]
        if breakdown_table(rows):
            text += ["## Where the step's kernel time goes (ms per step, "
                     "launches per step)", "", breakdown_table(rows), ""]
        if census_table(rows):
            text += ["## Launches per decoder layer, by kernel", "",
                     census_table(rows), ""]
        errors = [f"- {s} failed: {r.get('error', '?')}"
                  for (s, phase, _), r in sorted(rows.items())
                  if phase == "error"]
        if errors:
            text += ["Errors:", ""] + errors + [""]
    else:
        text = ["# gpt-fast decoding: as shipped and on mtc kernels", "",
                summary(modes), ""]
        for mode in [m for m in MODES if m in modes] + sorted(
                set(modes) - set(MODES)):
            rows = modes[mode]
            text += [f"## {mode}", "", table(rows), ""]
            if mode == "int8":
                text += ["Targets:", "", targets(rows), ""]
                text += [f"- {s} failed: {r.get('error', '?')}"
                         for (s, phase, _), r in sorted(rows.items())
                         if phase == "error"]
            else:
                text += [int4_notes(rows), ""]
            if breakdown_table(rows):
                text += ["Where the step's kernel time goes (ms per step, "
                         "launches per step):", "", breakdown_table(rows),
                         ""]
            if census_table(rows):
                text += ["Launches per decoder layer, by kernel:", "",
                         census_table(rows), ""]
    (out / "results.md").write_text("\n".join(text))
    try:
        if set(modes) <= {"int8"}:
            plot(modes.get("int8", {}), out / "plot.png")
        else:
            plot(None, out / "plot.png", modes)
    except ImportError:
        pass
    print("\n".join(text))
