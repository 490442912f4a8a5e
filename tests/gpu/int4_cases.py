"""The `int4_` section of the GPU matrix (gpu_tests.py, `--only '^int4_'`):
gpt-fast's int4 layer, i4 weights with group-wise scales and zeros
(`repeat`), groups of 32 to 256, M = 1 to 256, bf16 and f16, both
dequantisation forms, heuristic and forced schedules; then the int8
weights dequantised before the linear (`int8_dequant_`), per row or in
groups. A module of gpu_tests.py, whose cases() ends with int4_cases().
"""


def woq4(name, m, n, k, group, act="bf16", form="gptfast"):
    """A weight-only int4 linear layer with group-wise scales and zeros:
    gpt-fast's form `w * s + z` or the AWQ-style `(w - z) * s`, each node
    rounded to the activations' type; or `w * s + z` (f32), `w * s`
    (f32_scale) in f32, the forms whose sums mma factors per group."""
    assert k % group == 0 and k % 2 == 0, (name, k, group)
    g = k // group
    zeros = form != "f32_scale"
    if form.startswith("f32"):
        body = ["wf = convert(w, f32)", f"sr = repeat(scales, {group})",
                "s = convert(sr, f32)", "ws = mul(wf, s)"]
        if zeros:
            body += [f"zr = repeat(zeros, {group})", "z = convert(zr, f32)",
                     "wd = add(ws, z)"]
        body += ["xf = convert(x, f32)",
                 f"yf = linear(xf, {'wd' if zeros else 'ws'})",
                 f"y = convert(yf, {act})"]
    else:
        body = [f"wf = convert(w, {act})", f"s = repeat(scales, {group})",
                f"z = repeat(zeros, {group})"]
        if form == "gptfast":
            body += ["ws = mul(wf, s)", "wd = add(ws, z)"]
        elif form == "awq":
            body += ["d = sub(wf, z)", "wd = mul(d, s)"]
        else:
            raise ValueError(form)
        body += ["y = linear(x, wd)"]
    body += ["return y"]
    lines = [f"graph {name}(x: {act}[{m}, {k}], w: i4[{n}, {k}], "
             f"scales: {act}[{n}, {g}]" +
             (f", zeros: {act}[{n}, {g}]" if zeros else "") + ") -> "
             f"{act}[{m}, {n}] {{"]
    lines += [f"  {l}" for l in body] + ["}"]
    return "\n".join(lines) + "\n"


def int4_cases(quick):
    """The int4 section: (name, graph text, [mtc flags]), names int4_*."""
    cs = []

    def add(tag, m, n, k, group, act="bf16", form="gptfast", flags=()):
        nm = f"int4_{tag}_m{m}_{n}x{k}_g{group}"
        cs.append((nm, woq4(nm, m, n, k, group, act, form), list(flags)))

    # Heuristic schedules, every batch size on the main shape (groups of
    # 128, gpt-fast's default), then each group size at small, middle and
    # large M.
    for m in ([1, 16, 64] if quick else [1, 2, 5, 16, 33, 64, 100, 128, 256]):
        add("heur", m, 4096, 4096, 128)
    if not quick:
        # Two tiles a block, four warps on K each (M = 5 gives 4096 rows
        # eight: passes/HeuristicsMma.cpp).
        add("heur", 6, 8192, 4096, 128)
        # Four warps on K capped at 128 registers, whole 64-k steps and 32-k
        # ones (M = 1 and 2 on 132 multiprocessors; 4096 rows at M = 1 and
        # 2 above run uncapped).
        add("heur", 1, 8192, 4096, 128)
        add("heur", 2, 8192, 3584, 128)
        # A grid of several waves uncapped (2000 tiles of four warps on K),
        # and two tiles a warp (r2) at M = 4 on it and on a ragged N.
        add("heur", 3, 32000, 4096, 128)
        add("heur", 4, 32000, 4096, 128)
        add("heur", 4, 32008, 4096, 128)
    for group in [32, 64, 256]:
        for m in ([1] if quick else [1, 16, 100]):
            add("heur", m, 4096, 4096, group)
    # Ragged N (not a multiple of 64 or 128), short and one-group K.
    for m, n, k, group in [(1, 1000, 1024, 32), (5, 200, 4096, 128),
                           (33, 1000, 1024, 64), (128, 200, 4096, 256),
                           (3, 4096, 256, 32), (64, 1000, 256, 256),
                           (256, 1000, 1024, 128)]:
        add("heur", m, n, k, group)
    # f16 activations and scales.
    for m, n, k, group in [(1, 4096, 4096, 128), (8, 4096, 4096, 64),
                           (16, 1000, 1024, 64), (128, 4096, 1024, 32)]:
        add("f16", m, n, k, group, act="f16")
    # The AWQ-style form (w - z) * s.
    for m, n, k, group, act in [(1, 4096, 4096, 128, "bf16"),
                                (33, 4096, 1024, 64, "bf16"),
                                (256, 1000, 1024, 32, "bf16"),
                                (5, 200, 4096, 256, "f16")]:
        add("awq", m, n, k, group, act=act, form="awq")
    # The f32 dequantization, whose sums mma factors per group (s * sum(x q)
    # + z * sum(x)); groups of 32 are too short for its steps: simt.
    for m, n, k, group, act, form in [
            (1, 4096, 4096, 128, "bf16", "f32"),
            (3, 1000, 1024, 64, "bf16", "f32"),
            (16, 4096, 4096, 128, "f16", "f32"),
            (64, 1000, 4096, 256, "bf16", "f32"),
            (200, 1000, 1024, 32, "bf16", "f32"),
            (1, 4096, 4096, 128, "bf16", "f32_scale"),
            (5, 1000, 1024, 64, "f16", "f32_scale")]:
        add(form, m, n, k, group, act=act, form=form)
    # The heuristic with the wgmma kind allowed (sm_90a), from M = 64.
    sm90 = ["--arch", "sm_90a"]
    for m, n, k, group, act, form in [
            (64, 4096, 4096, 128, "bf16", "gptfast"),
            (128, 1000, 4096, 64, "bf16", "gptfast"),
            (256, 4096, 1024, 256, "bf16", "gptfast"),
            (100, 4096, 1024, 128, "f16", "awq")]:
        add(f"sm90a_{form}" if form != "gptfast" else "sm90a", m, n, k, group,
            act=act, form=form, flags=sm90)
    # int8 weights dequantized before the linear (per row, or in groups
    # through repeat) fold the same way: the same b inputs, int8 pairs.
    for m, n, k, group in [(1, 1000, 1024, 0), (4, 4096, 1024, 0),
                           (33, 1000, 1024, 64), (128, 4096, 1024, 128)]:
        nm = f"int8_dequant_m{m}_{n}x{k}_g{group}"
        cols = 1 if group == 0 else k // group
        rep = [] if group == 0 else [f"  s = repeat(scales, {group})"]
        sv = "scales" if group == 0 else "s"
        text = (f"graph {nm}(x: bf16[{m}, {k}], w: i8[{n}, {k}], "
                f"scales: bf16[{n}, {cols}]) -> bf16[{m}, {n}] {{\n"
                f"  wf = convert(w, bf16)\n" + "\n".join(rep) +
                ("\n" if rep else "") + f"  wd = mul(wf, {sv})\n"
                f"  y = linear(x, wd)\n  return y\n}}\n")
        cs.append((nm, text, ["--arch", "sm_90a"]))
    if quick:
        return cs
    # Forced schedules, all of them ones the int8 matrix runs: SIMT at
    # M = 1 (split-K, warps splitting K), mma at M <= 16, tiled at M = 32
    # to 64, wgmma (sm_90a) from M = 64 with split-K, two rows of
    # warpgroups, turns and a cluster.
    sched = [
        ("simt", 1, 4096, 4096, 128, "bf16", "simt w4 r1 kw1 v16 u8 mt1 sk1 rg255"),
        ("simt_sk4", 1, 4096, 4096, 32, "bf16", "simt w4 r2 kw1 v16 u2 mt1 sk4"),
        ("simt_kw4", 1, 1000, 4096, 64, "f16", "simt w8 r1 kw4 v8 u2 mt1 sk1"),
        # K's tail past the last 1024-k chunk (896 k's, 28 rounds of 32)
        # spread over the four warps on K.
        ("simt_tail_kw4", 1, 4096, 4992, 64, "bf16", "simt w4 r2 kw4 v16 u4 mt1 sk1"),
        ("mma", 1, 4096, 4096, 128, "bf16", "mma w4 r1 kw1 v16 u2 mt8 sk1"),
        ("mma_sk4", 5, 1000, 4096, 128, "bf16", "mma w4 r1 kw1 v16 u2 mt8 sk4"),
        ("mma_kw4", 16, 4096, 4096, 64, "bf16", "mma w8 r1 kw4 v16 u2 mt16 sk1"),
        ("mma_st2", 1, 4096, 4096, 128, "bf16", "mma w8 r1 kw2 v64 u2 mt8 sk1 st2"),
        ("mma_st2_f16_sk2", 8, 1000, 4096, 64, "f16", "mma w4 r1 kw1 v32 u2 mt8 sk2 st2"),
        ("mma_f16", 8, 4096, 1024, 32, "f16", "mma w4 r1 kw1 v16 u1 mt8 sk1"),
        ("tiled", 64, 4096, 4096, 128, "bf16", "tiled w4 r1 kw1 v32 u1 mt64 sk1 mw1 st4"),
        # The int8 start at M = 9 to 16 (256-wide K tiles, two groups each):
        # correct on int4, which keeps mma for speed (passes/Heuristics.cpp).
        ("tiled_m16_v64", 16, 4096, 4096, 128, "bf16", "tiled w4 r1 kw1 v64 u1 mt16 sk1 st4"),
        ("tiled_m9_v64_g64", 9, 1000, 4096, 64, "f16", "tiled w4 r1 kw1 v64 u1 mt16 sk1 st4"),
        ("tiled_kw2_sk2", 33, 1000, 4096, 128, "bf16", "tiled w8 r1 kw2 v32 u1 mt32 sk2 mw2 st3"),
        ("tiled_sk4", 33, 4096, 4096, 256, "bf16", "tiled w4 r1 kw1 v32 u1 mt40 sk4 mw1 st2"),
        ("tiled_kw4", 48, 4096, 1024, 64, "f16", "tiled w8 r1 kw4 v32 u1 mt48 sk1 mw1 st2"),
    ]
    for tag, m, n, k, group, act, s in sched:
        add(f"sched_{tag}", m, n, k, group, act=act,
            flags=["--schedule", f"0={s}"])
    # The factored f32 form under split-K, two weight tiles a warp, warps on
    # K and two activation tiles.
    for tag, m, n, k, group, act, s in [
            ("sk4", 5, 1000, 4096, 128, "bf16", "mma w4 r1 kw1 v16 u2 mt8 sk4"),
            ("r2_kw4", 16, 4096, 4096, 64, "bf16", "mma w8 r2 kw4 v16 u2 mt16 sk1"),
            ("v32_u4", 1, 1000, 4096, 128, "f16", "mma w8 r1 kw8 v32 u4 mt8 sk1"),
            ("st2", 3, 1000, 4096, 128, "bf16", "mma w8 r1 kw2 v32 u2 mt8 sk1 st2")]:
        add(f"sched_f32_{tag}", m, n, k, group, act=act, form="f32",
            flags=["--schedule", f"0={s}"])
    wgmma = [
        ("", 64, 4096, 4096, 128, "bf16", "w8 r1 mt64 st4"),
        ("r2_ragged_n", 128, 1000, 4096, 128, "bf16", "w12 r2 mt128 st4"),
        ("mt256", 256, 4096, 1024, 256, "bf16", "w8 r1 mt256 st4"),
        ("r2_sk4", 128, 4096, 4096, 128, "bf16", "w12 r2 mt128 st4 sk4"),
        ("kw2_f16", 64, 4096, 4096, 64, "f16", "w12 r1 kw2 mt64 st8"),
        ("cl2", 128, 4096, 4096, 128, "bf16", "w8 r1 mt128 st6 cl2"),
    ]
    for tag, m, n, k, group, act, s in wgmma:
        add("wgmma" + (f"_{tag}" if tag else ""), m, n, k, group, act=act,
            flags=["--arch", "sm_90a", "--schedule", f"0=wgmma {s}"])
    return cs
