"""The `fused_` section of the GPU matrix (gpu_tests.py, `--only '^fused_'`):
the decoder block's pieces around the linear (issue 24). Norms, each a
kernel.reduce that applies its row statistic to the rows (RMSNorm as
gpt-fast and Hugging Face write it; LayerNorm, two such kernels, the first
writing its centred rows in f32 (32-byte vector stores at K = 4096); a K
that is not a multiple of the vector width; several reduce schedules), and
the feed-forward half of a Llama block
(examples/decoder_ffn.graph at a smaller size): the norm, gate and up
projections with SwiGLU (one contraction over both weights where they start
on simt or mma, else in the up projection's epilogue), the down projection
with the residual in its epilogue; int8 and int4 weights; M in {1, 3, 16,
64, 200, 512}, bf16 and f16; gate and up alone on each sibling path; the
attention norm, q, k, v projection and rotary embedding (rope) in one
contraction's epilogue, on every kind. A module of gpu_tests.py, whose
cases() ends with fused_cases().
"""

MS = [1, 3, 16, 64, 200, 512]


def rms_norm(act, k):
    """The statements of an RMSNorm of `x` ([M, k]) with weight `g`, as
    gpt-fast's RMSNorm computes it: in f32, rounded to `act`, times g."""
    return ["xf = convert(x, f32)", "sq = mul(xf, xf)", "ms = mean(sq)",
            "e = add(ms, 1e-05)", "r = rsqrt(e)", "nf = mul(xf, r)",
            f"nb = convert(nf, {act})", "n = mul(nb, g)"]


def graph(name, params, out, body, result):
    lines = [f"graph {name}({', '.join(params)}) -> {out} {{"]
    lines += [f"  {l}" for l in body] + [f"  return {result}", "}"]
    return "\n".join(lines) + "\n"


def norm_graph(name, m, k, act, kind):
    params = [f"x: {act}[{m}, {k}]", f"g: {act}[{k}]"]
    if kind == "rms":
        return graph(name, params, f"{act}[{m}, {k}]", rms_norm(act, k), "n")
    # LayerNorm: mean, centred variance, weight and bias, all in f32.
    params.append(f"b: {act}[{k}]")
    body = ["xf = convert(x, f32)", "mu = mean(xf)", "c = sub(xf, mu)",
            "c2 = mul(c, c)", "var = mean(c2)", "e = add(var, 1e-05)",
            "r = rsqrt(e)", "nf = mul(c, r)", f"nb = convert(nf, {act})",
            "ng = mul(nb, g)", "y = add(ng, b)"]
    return graph(name, params, f"{act}[{m}, {k}]", body, "y")


def linear(w, inp, n, k, act, weight, group):
    """(params, statements) of linear `w` ([n, k]) of `inp` into `<w>o`:
    int8 with per-row scales `s<w>`, int4 with group-wise scales `s<w>` and
    zeros `z<w>` (gpt-fast's `w * s + z`), or a weight of the activations'
    type."""
    if weight == "i8":
        return ([f"{w}: i8[{n}, {k}]", f"s{w}: {act}[{n}]"],
                [f"{w}f = convert({w}, {act})", f"{w}y = linear({inp}, {w}f)",
                 f"{w}o = mul({w}y, s{w})"])
    if weight == "i4":
        return ([f"{w}: i4[{n}, {k}]", f"s{w}: {act}[{n}, {k // group}]",
                 f"z{w}: {act}[{n}, {k // group}]"],
                [f"{w}f = convert({w}, {act})", f"{w}s = repeat(s{w}, {group})",
                 f"{w}z = repeat(z{w}, {group})", f"{w}m = mul({w}f, {w}s)",
                 f"{w}d = add({w}m, {w}z)", f"{w}o = linear({inp}, {w}d)"])
    return [f"{w}: {act}[{n}, {k}]"], [f"{w}o = linear({inp}, {w})"]


def ffn_graph(name, m, d, h, act, weight="i8", group=128):
    """The feed-forward half of a decoder block: out = x + down(silu(gate(n))
    * up(n)), n = rms_norm(x) * g; int8 weights with per-row scales, or int4
    with group-wise scales and zeros (gpt-fast's `w * s + z`)."""
    params = [f"x: {act}[{m}, {d}]", f"g: {act}[{d}]"]
    body = rms_norm(act, d)
    for w, n, k, inp in [("w1", h, d, "n"), ("w3", h, d, "n"),
                         ("w2", d, h, "a")]:
        p, b = linear(w, inp, n, k, act, weight, group)
        params += p
        body += b
        if w == "w3":
            body += ["sg = silu(w1o)", "a = mul(sg, w3o)"]
    body.append("out = add(x, w2o)")
    return graph(name, params, f"{act}[{m}, {d}]", body, "out")


def swiglu_graph(name, m, k, n, act, weight="i8", group=128):
    """Gate and up projections of the same activations with SwiGLU, which
    mtc joins as one contraction over both weights (siblings) where each
    starts on simt or mma: int8 weights with per-row scales, int4 with
    group-wise scales and zeros (each weight's own), or weights in the
    activations' type."""
    params = [f"x: {act}[{m}, {k}]"]
    body = []
    for w in ["w1", "w3"]:
        p, b = linear(w, "x", n, k, act, weight, group)
        params += p
        body += b
    body += ["sg = silu(w1o)", "a = mul(sg, w3o)"]
    return graph(name, params, f"{act}[{m}, {n}]", body, "a")


def rope_graph(name, m, d, heads, kv_heads, hd, act, weight="i8",
               per_row=False, norm=True, group=128):
    """gpt-fast's attention input at a small size: the attention norm (or
    none), the fused q, k, v projection and the rotary embedding of q and k
    (`rope(y, table, cols)`, the table one row, or one per row of M)."""
    n, cols = (heads + 2 * kv_heads) * hd, (heads + kv_heads) * hd
    params = [f"x: {act}[{m}, {d}]"] + ([f"g: {act}[{d}]"] if norm else [])
    body = rms_norm(act, d) if norm else []
    p, b = linear("w1", "n" if norm else "x", n, d, act, weight, group)
    params += p + [f"t: {act}[{m if per_row else 1}, {hd}]"]
    body += b + ["yf = convert(w1o, f32)", f"ro = rope(yf, t, {cols})",
                 f"out = convert(ro, {act})"]
    return graph(name, params, f"{act}[{m}, {n}]", body, "out")


def rope_cases(quick):
    """The rotary embedding in the q, k, v projection's epilogue (each
    output's partner column: simt's sums of its warp, the fragments' lane
    xor 4, split-K's workspace) and on its own (an elementwise kernel)."""
    cs = []
    for act in ["bf16"] if quick else ["bf16", "f16"]:
        for m in [1, 3] if quick else MS:
            nm = f"fused_rope_{act}_m{m}_1024_h8kv2"
            cs.append((nm, rope_graph(nm, m, 1024, 8, 2, 64, act), []))
        nm = f"fused_rope4_{act}_m1_1024_h8kv2"
        cs.append((nm, rope_graph(nm, 1, 1024, 8, 2, 64, act, "i4"), []))
    nm = "fused_rope_rows_m3_1024_h8kv2"
    cs.append((nm, rope_graph(nm, 3, 1024, 8, 2, 64, "bf16", per_row=True),
               []))
    for tag, m, s in [("simt_kw2", 1, "simt w4 r2 kw2 v16 u2 mt1 sk1"),
                      ("simt_sk2", 1, "simt w4 r2 kw1 v16 u2 mt1 sk2"),
                      ("mma_kw4", 3, "mma w4 r1 kw4 v16 u2 mt8 sk1"),
                      ("mma_sk2", 8, "mma w4 r1 kw1 v16 u2 mt8 sk2"),
                      ("tiled", 64, "tiled w4 r1 kw1 v64 u1 mt64 sk1 st4"),
                      ("wgmma_sk2", 64, "wgmma w8 r1 kw1 v16 u1 mt64 sk2 st4")]:
        nm = f"fused_rope_sched_{tag}_m{m}_1024_h8kv2"
        arch = ["--arch", "sm_90a"] if s.startswith("wgmma") else []
        cs.append((nm, rope_graph(nm, m, 1024, 8, 2, 64, "bf16", norm=False),
                   arch + ["--schedule", f"0={s}"]))
    # On its own: x a graph input, four heads of 32, the last head not
    # rotated; a table of one row per row of x.
    nm = "fused_rope_alone_m5_128"
    cs.append((nm, graph(nm, ["x: f32[5, 128]", "t: bf16[5, 32]"],
                         "f32[5, 128]", ["r = rope(x, t, 96)"], "r"), []))
    return cs


def sibling_cases():
    """Siblings on each path of the simt and mma emitters: the heuristic's
    schedules at M = 1 (simt), 3 and 8 (mma), and forced ones: simt with two
    outputs per warp and four warps on K, two M rows, a K tail (1000); mma
    with two tiles per warp, warps on K, 16 rows of M; an N that is not a
    multiple of a block's columns (2800). int4 g128 weights, each with its
    own scales and zeros, at the heuristic's schedules and forced simt (two
    outputs per warp, two M rows) and mma (two tiles per warp, warps on
    K)."""
    cs = []
    for act in ["bf16", "f16"]:
        for m in [1, 3, 8]:
            nm = f"fused_siblings_{act}_m{m}_1024x2816"
            cs.append((nm, swiglu_graph(nm, m, 1024, 2816, act), []))
    nm = "fused_siblings_bf16w_m2_1024x2816"
    cs.append((nm, swiglu_graph(nm, 2, 1024, 2816, "bf16", "bf16"), []))
    # int4 g128: each weight's scales and zeros (sibling_b_inputs).
    for act in ["bf16", "f16"]:
        for m in [1, 3, 8]:
            nm = f"fused_siblings_i4_{act}_m{m}_1024x2816"
            cs.append((nm, swiglu_graph(nm, m, 1024, 2816, act, "i4"), []))
    for tag, m, k, n, sched in [
            ("simt_r2_kw4", 1, 4096, 2816, "simt w4 r2 kw4 v16 u2 mt1 sk1"),
            ("simt_mt2_tail", 2, 1000, 2800, "simt w4 r1 kw2 v8 u2 mt2 sk1"),
            ("mma_r2_kw2", 5, 1024, 2800, "mma w8 r2 kw2 v16 u2 mt8 sk1"),
            ("mma_mt16", 13, 1024, 2816, "mma w4 r1 kw4 v16 u2 mt16 sk1"),
            ("i4_simt", 1, 1024, 2816, "simt w4 r2 kw2 v8 u2 mt1 sk1"),
            ("i4_simt_mt2", 2, 1024, 2800, "simt w4 r1 kw1 v16 u2 mt2 sk1"),
            ("i4_mma_r2_kw2", 5, 1024, 2800, "mma w4 r2 kw2 v32 u2 mt8 sk1"),
            ("mma_st2", 8, 1024, 2816, "mma w8 r2 kw1 v16 u2 mt8 sk1 st2"),
            ("i4_mma_st2", 3, 1024, 2800, "mma w4 r1 kw1 v32 u2 mt8 sk1 st2")]:
        nm = f"fused_siblings_sched_{tag}_m{m}_{k}x{n}"
        weight = "i4" if tag.startswith("i4") else "i8"
        cs.append((nm, swiglu_graph(nm, m, k, n, "bf16", weight),
                   ["--schedule", f"0={sched}"]))
    return cs


def fused_cases(quick):
    """The fused section: (name, graph text, [mtc flags]), names fused_*."""
    cs = []
    for act in ["bf16", "f16"]:
        for m in ([1, 64] if quick else MS):
            nm = f"fused_rmsnorm_{act}_m{m}_4096"
            cs.append((nm, norm_graph(nm, m, 4096, act, "rms"), []))
            nm = f"fused_ffn_{act}_m{m}_1024x2816"
            cs.append((nm, ffn_graph(nm, m, 1024, 2816, act), []))
        for m in ([3] if quick else [1, 3, 200]):
            nm = f"fused_layernorm_{act}_m{m}_1000"
            cs.append((nm, norm_graph(nm, m, 1000, act, "layer"), []))
        for m in ([64] if quick else [1, 64]):
            nm = f"fused_layernorm_{act}_m{m}_4096"
            cs.append((nm, norm_graph(nm, m, 4096, act, "layer"), []))
        for m in ([1] if quick else [1, 16, 64]):
            nm = f"fused_ffn4_{act}_m{m}_1024x2816"
            cs.append((nm, ffn_graph(nm, m, 1024, 2816, act, "i4"), []))
    # Prologues (the norm's scaling in the gate and up projections, fused at
    # M = 1, with the row statistic each block derives) on paths the
    # heuristic does not take at these sizes: a K that leaves a tail for
    # simt's scalar loop (1000 = 512 + 488; the statistic's 128 threads sum
    # it one element at a time), a row that is not a multiple of 16 bytes
    # (1500: the statistic loads scalars, 11 rounds and a tail of 92), other
    # block shapes (8 warps, 2 of them on K; one warp), and the mma kind
    # forced on the down projection.
    for k in [1000, 1500]:
        nm = f"fused_ffn_bf16_m1_{k}x2816"
        cs.append((nm, ffn_graph(nm, 1, k, 2816, "bf16"), []))
    for tag, sched in [("w8_kw2", "0=simt w8 r1 kw2 v8 u2 mt1 sk1"),
                       ("w1", "0=simt w1 r2 kw1 v16 u4 mt1 sk1"),
                       ("down_mma", "1=mma w4 r1 kw1 v16 u2 mt8 sk1")]:
        nm = f"fused_ffn_sched_{tag}_m1_1024x2816"
        cs.append((nm, ffn_graph(nm, 1, 1024, 2816, "f16" if tag == "w1"
                                 else "bf16"), ["--schedule", sched]))
    # Reduce schedules: several rows per warp, one warp per block, scalar
    # loads (vec 1), a K of whole vectors but ragged steps (1000 = 125 * 8),
    # a K of no whole vectors (1001: loads and the scaled row's stores by
    # element), steps loaded several at a time where lanes have different
    # counts of them (4000 = 15 * 256 + 160: 15 or 16 steps, u4 leaves 3 or
    # 0), and warps that share a row (kwarps: a block of 2 rows of 2 warps
    # each over M = 3 sums its last, missing row as the last real one so
    # that every warp reaches the barrier, and stores none of it).
    for tag, m, k, s in [("r4", 200, 4096, "reduce w4 r4 kw1 v8 u1 mt1 sk1"),
                         ("w1_v1", 3, 4096, "reduce w1 r1 kw1 v1 u1 mt1 sk1"),
                         ("v8_ragged", 16, 1000, "reduce w2 r2 kw1 v8 u2 mt1 sk1"),
                         ("u4_ragged", 5, 4000, "reduce w4 r1 kw1 v8 u4 mt1 sk1"),
                         ("k_odd", 3, 1001, "reduce w4 r1 kw1 v8 u2 mt1 sk1"),
                         ("kw8", 1, 4096, "reduce w8 r1 kw8 v8 u2 mt1 sk1"),
                         ("kw2_r2", 3, 1000, "reduce w4 r2 kw2 v8 u2 mt1 sk1"),
                         ("kw4_k_odd", 5, 1001, "reduce w4 r1 kw4 v8 u1 mt1 sk1")]:
        nm = f"fused_rmsnorm_sched_{tag}_m{m}_{k}"
        cs.append((nm, norm_graph(nm, m, k, "bf16", "rms"),
                   ["--schedule", f"0={s}"]))
    # Warps that share a row (kwarps) where only the statistic is stored,
    # and on a LayerNorm's two reductions (the first writes f32 rows).
    for tag, m, s in [("kw4", 3, "reduce w4 r1 kw4 v8 u2 mt1 sk1"),
                      ("kw2_r4", 7, "reduce w8 r4 kw2 v8 u1 mt1 sk1")]:
        nm = f"fused_rmsstat_sched_{tag}_m{m}_4096"
        body = ["xf = convert(x, f32)", "sq = mul(xf, xf)", "ms = mean(sq)",
                "r = rsqrt(ms)"]
        cs.append((nm, graph(nm, [f"x: bf16[{m}, 4096]"], f"f32[{m}, 1]",
                             body, "r"), ["--schedule", f"0={s}"]))
    nm = "fused_layernorm_sched_kw_m3_4096"
    cs.append((nm, norm_graph(nm, 3, 4096, "bf16", "layer"),
               ["--schedule", "0=reduce w8 r1 kw8 v8 u1 mt1 sk1",
                "--schedule", "1=reduce w4 r2 kw2 v4 u2 mt1 sk1"]))
    return cs + sibling_cases() + rope_cases(quick)
