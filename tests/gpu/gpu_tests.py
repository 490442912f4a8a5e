#!/usr/bin/env python3
"""GPU correctness tests for mtc: generated graph files run with `mtc run --check`.

Every case compiles a graph, runs it on the GPU with seeded random inputs
(outputs poisoned with NaN first) and compares every output with the fp64
reference interpreter, which rounds every node as the graph does: the largest
error, in ulps of the output's type at its largest reference magnitude, within
mtc's default tolerance (`mtc run --check`; summary.json and the end of the
output give each case's error and how its elements are distributed in ulps). The matrix covers the batch sizes, shapes, dtypes, epilogues and
graph forms of the core issue, plus explicit schedules (warps splitting K,
blocks splitting K, narrow vectors, several rows of M per block). The
`int4_` cases (`--only '^int4_'`) are gpt-fast's int4 layer: i4 weights with
group-wise scales and zeros (`repeat`), groups of 32 to 256, M = 1 to 256,
bf16 and f16, both dequantisation forms, heuristic and forced schedules.
The `fused_` cases (`--only '^fused_'`, fused_cases.py) are the decoder
block around the linear: norms (row reductions) and a Llama feed-forward
half with its norm, SwiGLU and residual, int8 and int4, M = 1 to 512.

Exit status: 0 all passed, 1 a case failed, 77 skipped (no GPU or driver).

    tests/gpu/gpu_tests.py --mtc build/bin/mtc [--out DIR] [--quick]
                           [--only REGEX, e.g. '^int4_']
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fused_cases import fused_cases  # noqa: E402
from int4_cases import int4_cases  # noqa: E402

SKIP = 77


def woq(name, m, n, k, act="bf16", epilogue="scale", form="linear",
        batch=None, weight="i8"):
    """A weight-only int8 linear layer graph (with weight=act: a linear layer
    whose weight needs no convert)."""
    xshape = f"{batch}, {m}, {k}" if batch else f"{m}, {k}"
    oshape = f"{batch}, {m}, {n}" if batch else f"{m}, {n}"
    params = [f"x: {act}[{xshape}]"]
    body = []
    if form == "linear" and weight == act:
        params.append(f"w: {act}[{n}, {k}]")
        body += ["y = linear(x, w)"]
    elif form == "linear":
        params.append(f"w: {weight}[{n}, {k}]")
        body += [f"wf = convert(w, {act})", "y = linear(x, wf)"]
    elif form == "matmul_t":  # matmul(x, transpose(convert(w)))
        params.append(f"w: i8[{n}, {k}]")
        body += [f"wf = convert(w, {act})", "wt = transpose(wf)",
                 "y = matmul(x, wt)"]
    elif form == "matmul_kn":  # weight stored [K, N]
        params.append(f"w: i8[{k}, {n}]")
        body += [f"wf = convert(w, {act})", "y = matmul(x, wf)"]
    else:
        raise ValueError(form)
    last = "y"
    if epilogue in ("scale", "scale_bias_silu", "scale_residual"):
        params.append(f"scales: {act}[{n}]")
        body.append("s = mul(y, scales)")
        last = "s"
    if epilogue == "scale_residual":  # an input per output, not per column
        params.append(f"r: {act}[{oshape}]")
        body.append("out = add(s, r)")
        last = "out"
    if epilogue == "scale_bias_silu":
        params.append(f"bias: {act}[{n}]")
        body += ["b = add(s, bias)", "out = silu(b)"]
        last = "out"
    lines = [f"graph {name}({', '.join(params)}) -> {act}[{oshape}] {{"]
    lines += [f"  {l}" for l in body]
    lines += [f"  return {last}", "}"]
    return "\n".join(lines) + "\n"


MISC = {
    "elementwise_only": """graph elementwise_only(a: bf16[64, 1000], b: bf16[1000], c: f32[64, 1]) -> f32[64, 1000] {
  s = add(a, b)
  r = relu(s)
  f = convert(r, f32)
  out = mul(f, c)
  return out
}
""",
    "two_linears_shared_x": """graph two_linears_shared_x(x: bf16[4, 4096], w1: i8[2048, 4096], w2: i8[1024, 4096]) -> (bf16[4, 2048], bf16[4, 1024]) {
  a = linear(x, convert(w1, bf16))
  b = linear(x, convert(w2, bf16))
  return a, b
}
""",
    "mlp_silu_gate": """graph mlp_silu_gate(x: bf16[2, 4096], wg: i8[2816, 4096], wu: i8[2816, 4096], sg: bf16[2816], su: bf16[2816]) -> bf16[2, 2816] {
  g0 = linear(x, convert(wg, bf16))
  g = mul(g0, sg)
  u0 = linear(x, convert(wu, bf16))
  u = mul(u0, su)
  a = silu(g)
  out = mul(a, u)
  return out
}
""",
    "returns_input_and_twice": """graph returns_input_and_twice(x: bf16[3, 520], w: i8[264, 520]) -> (bf16[3, 520], bf16[3, 264], bf16[3, 264]) {
  y = linear(x, convert(w, bf16))
  return x, y, y
}
""",
    "f32_weights_no_convert": """graph f32_weights_no_convert(x: f32[5, 1000], w: f32[300, 1000]) -> f32[5, 300] {
  y = linear(x, w)
  return y
}
""",
    "convert_on_a": """graph convert_on_a(x: f32[7, 2048], w: i8[512, 2048]) -> bf16[7, 512] {
  xb = convert(x, bf16)
  y = linear(xb, convert(w, bf16))
  return y
}
""",
    "transposed_a": """graph transposed_a(xt: bf16[1024, 6], w: i8[1024, 512]) -> bf16[6, 512] {
  x = transpose(xt)
  y = matmul(x, convert(w, bf16))
  return y
}
""",
    "float_to_int8": """graph float_to_int8(x: f32[4, 300], s: f32[300]) -> i8[4, 300] {
  y = mul(x, s)
  q = convert(y, i8)
  return q
}
""",
}


def fix_nested(text):
    """Graph files have no nested calls: hoist `convert(w, T)` arguments."""
    out = []
    for line in text.splitlines():
        m = re.match(r"(\s*)(\w+) = linear\((\w+), convert\((\w+), (\w+)\)\)", line)
        if m:
            ind, lhs, x, w, t = m.groups()
            out.append(f"{ind}{w}_f = convert({w}, {t})")
            out.append(f"{ind}{lhs} = linear({x}, {w}_f)")
            continue
        m = re.match(r"(\s*)(\w+) = matmul\((\w+), convert\((\w+), (\w+)\)\)", line)
        if m:
            ind, lhs, x, w, t = m.groups()
            out.append(f"{ind}{w}_f = convert({w}, {t})")
            out.append(f"{ind}{lhs} = matmul({x}, {w}_f)")
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def cases(quick):
    """(name, graph text, [mtc flags])"""
    cs = []
    ms = [1, 2, 3, 4, 5, 8, 16, 33, 64, 128, 129, 255]
    for m in ms:  # every batch size on the main shape
        cs.append((f"woq_m{m}_4096x4096", woq(f"woq_m{m}_4096x4096", m, 4096, 4096), []))
    shapes = [(11008, 4096), (4096, 11008), (4097, 4096), (4096, 4104), (4096, 520)]
    for n, k in shapes:
        for m in ([1, 16] if quick else [1, 3, 16, 33, 128]):
            nm = f"woq_m{m}_{n}x{k}"
            cs.append((nm, woq(nm, m, n, k), []))
    for n, k in [(4096, 4096), (4097, 4104), (4097, 4096)]:
        for m in [1, 8, 64]:
            nm = f"silu_m{m}_{n}x{k}"
            cs.append((nm, woq(nm, m, n, k, epilogue="scale_bias_silu"), []))
    for n, k in [(4096, 520), (11008, 4096), (4096, 1024)]:
        for m in [1, 4, 33, 128]:
            nm = f"f16_m{m}_{n}x{k}"
            cs.append((nm, woq(nm, m, n, k, act="f16"), []))
    for n, k in [(4096, 4096), (4097, 4104)]:
        for m in [1, 2, 33]:
            nm = f"matmul_t_m{m}_{n}x{k}"
            cs.append((nm, woq(nm, m, n, k, form="matmul_t"), []))
    for n, k in [(4096, 4096), (4097, 4096), (11008, 4096)]:
        for m in [1, 16]:
            nm = f"matmul_kn_m{m}_{n}x{k}"
            cs.append((nm, woq(nm, m, n, k, form="matmul_kn"), []))
    for m in [1, 128]:
        nm = f"noepi_m{m}_4096x11008"
        cs.append((nm, woq(nm, m, 4096, 11008, epilogue="none"), []))
    nm = "rank3_b2_m8_4096x4096"
    cs.append((nm, woq(nm, 8, 4096, 4096, batch=2), []))
    # Weights already in the activations' type (no convert): mma and tiled.
    for nm, m, n, k, act, epi in [
            ("bf16_weights", 1, 4096, 4096, "bf16", "none"),
            ("bf16_weights_m16", 16, 4096, 4096, "bf16", "none"),
            ("bf16_weights_m96", 96, 4096, 4096, "bf16", "none"),
            ("f16_weights_m9", 9, 3000, 2048, "f16", "scale"),
            ("f16_weights_m40", 40, 3000, 2048, "f16", "scale")]:
        cs.append((nm, woq(nm, m, n, k, act=act, epilogue=epi, weight=act), []))
    for name, text in MISC.items():
        cs.append((name, fix_nested(text), []))
    # Explicit schedules: each code path of the SIMT, mma and tiled emitters.
    sched = [
        ("mma_basic", 8, 4096, 4096, "linear", "mma w4 r1 kw1 v16 u1 mt8 sk1"),
        ("mma_m1", 1, 4096, 4096, "linear", "mma w4 r1 kw1 v16 u2 mt8 sk1"),
        ("mma_kw4", 16, 4096, 4096, "linear", "mma w8 r1 kw4 v16 u2 mt16 sk1"),
        ("mma_sk4", 5, 4097, 4096, "linear", "mma w4 r1 kw1 v16 u2 mt8 sk4"),
        ("mma_r2_mt24", 24, 4096, 4096, "linear", "mma w4 r2 kw2 v16 u1 mt24 sk1"),
        ("mma_r2_mt64", 100, 4096, 1024, "linear", "mma w4 r2 kw1 v16 u1 mt64 sk2"),
        ("mma_rg168", 33, 4096, 4096, "linear", "mma w8 r1 kw2 v16 u2 mt32 sk1 rg168"),
        ("simt_m16", 16, 4096, 4096, "linear", "simt w4 r1 kw1 v16 u1 mt8 sk1"),
        ("mma_v32", 16, 4097, 4096, "linear", "mma w8 r1 kw4 v32 u2 mt16 sk1 rg255"),
        ("mma_v64", 7, 4096, 4096, "linear", "mma w4 r2 kw2 v64 u1 mt8 sk2 rg255"),
        ("mma_v32_kn_fallback", 3, 4096, 4096, "matmul_t", "mma w4 r1 kw1 v32 u1 mt8 sk1"),
        # Two stages: the next steps' weights load while the current sum.
        # 67 chunks of 64 k's over 4 pieces of 16-17: 4 groups of 4 and a
        # remainder step in three of them.
        ("mma_st2_m1", 1, 4096, 4096, "linear", "mma w4 r1 kw1 v16 u2 mt8 sk1 st2"),
        ("mma_st2_tail", 16, 4097, 4288, "linear", "mma w8 r1 kw2 v16 u4 mt16 sk2 st2"),
        ("tiled_basic", 64, 4096, 4096, "linear", "tiled w4 r1 kw1 v32 u1 mt64 sk1 mw1 st4"),
        ("tiled_mw2_ragged", 129, 4097, 4096, "linear", "tiled w8 r2 kw1 v16 u1 mt128 sk1 mw2 st3"),
        ("tiled_sk4_mt40", 33, 4097, 4096, "linear", "tiled w4 r1 kw1 v32 u1 mt40 sk4 mw1 st2"),
        ("tiled_v64_st8", 16, 4096, 4096, "linear", "tiled w4 r1 kw1 v64 u1 mt16 sk1 mw1 st8"),
        ("tiled_r2_mw4", 255, 4096, 1024, "linear", "tiled w8 r2 kw1 v16 u1 mt256 sk2 mw4 st5 rg255"),
        ("tiled_kw4", 48, 4096, 4096, "linear", "tiled w8 r1 kw4 v16 u1 mt48 sk1 mw1 st4"),
        ("tiled_kw2_mw2_sk2", 33, 4097, 4096, "linear", "tiled w8 r1 kw2 v32 u1 mt32 sk2 mw2 st3"),
        ("tiled_m1", 1, 4096, 4096, "linear", "tiled w2 r1 kw1 v32 u1 mt8 sk1 mw1 st4"),
        # The M = 17-32 int8 start's 128-row blocks (Heuristics.cpp): a
        # ragged last block, split-K, a partial activation tile.
        ("tiled_m32_wide", 32, 4097, 4096, "linear", "tiled w4 r2 kw1 v64 u1 mt32 sk1 st4"),
        ("tiled_m24_wide_sk4", 24, 4096, 14336, "linear", "tiled w4 r2 kw1 v64 u1 mt24 sk4 st4"),
        ("tiled_m17_wide", 17, 4097, 4096, "linear", "tiled w4 r2 kw1 v64 u1 mt24 sk1 st4"),
        # Its two 16-row tiles of M where 32-row blocks fit one wave: the
        # second tile partial at M = 24, N ragged at M = 32.
        ("tiled_m32_mt16", 32, 4097, 4096, "linear", "tiled w2 r1 kw1 v64 u1 mt16 sk1 st4"),
        ("tiled_m24_mt16", 24, 4096, 4096, "linear", "tiled w2 r1 kw1 v64 u1 mt16 sk1 st4"),
        ("simt_rg255", 1, 4096, 4096, "linear", "simt w4 r1 kw1 v16 u8 mt1 sk1 rg255"),
        ("kwarps4", 1, 4096, 4096, "linear", "simt w8 r1 kw4 v16 u2 mt1 sk1"),
        ("splitk4", 1, 4096, 4096, "linear", "simt w4 r2 kw1 v16 u2 mt1 sk4"),
        ("kw2_sk2", 3, 4097, 4104, "linear", "simt w4 r1 kw2 v8 u2 mt3 sk2"),
        # K's tail past the last chunk in rounds of 32 spread over the
        # pieces: 12 rounds on 4 warps; 14 on 2 warps x 2 blocks, M = 3.
        ("tail_kw4", 1, 4096, 4992, "linear", "simt w4 r2 kw4 v16 u4 mt1 sk1"),
        ("tail_kw2_sk2", 3, 4097, 5568, "linear", "simt w4 r2 kw2 v16 u2 mt3 sk2"),
        ("vec4_u1", 2, 4096, 4096, "linear", "simt w2 r4 kw1 v4 u1 mt2 sk1"),
        ("mt8_r1", 16, 4096, 4096, "linear", "simt w4 r1 kw1 v16 u1 mt8 sk1"),
        ("rows8", 1, 4096, 4096, "linear", "simt w2 r8 kw1 v16 u1 mt1 sk1"),
        ("kn_kw4", 1, 4096, 4096, "matmul_kn", "simt w8 r1 kw4 v16 u2 mt1 sk1"),
        ("kn_sk2", 4, 4097, 4096, "matmul_kn", "simt w4 r1 kw1 v1 u4 mt4 sk2"),
        ("kn_rows2", 2, 4096, 4096, "matmul_kn", "simt w4 r2 kw2 v8 u2 mt2 sk1"),
    ]
    for tag, m, n, k, form, s in sched:
        nm = f"sched_{tag}_m{m}_{n}x{k}"
        cs.append((nm, woq(nm, m, n, k, form=form), ["--schedule", f"0={s}"]))
    # A residual [M, N] input in the epilogue (h + linear(...) * scales) on
    # every kind: simt (M = 1), mma (3, 16) and tiled (33) as the heuristic
    # picks them, f16, and the finish of split-K, which adds it to the
    # totals (wgmma's are below).
    for m in [1, 3, 16, 33]:
        nm = f"residual_m{m}_4096x4096"
        cs.append((nm, woq(nm, m, 4096, 4096, epilogue="scale_residual"), []))
    nm = "residual_f16_m5_4097x4104"
    cs.append((nm, woq(nm, 5, 4097, 4104, act="f16", epilogue="scale_residual"),
               []))
    for tag, m, s in [("simt_sk4", 1, "simt w4 r2 kw1 v16 u2 mt1 sk4"),
                      ("mma_sk4", 5, "mma w4 r1 kw1 v16 u2 mt8 sk4"),
                      ("tiled_sk2", 33, "tiled w8 r1 kw2 v32 u1 mt32 sk2 mw2 st3")]:
        nm = f"residual_{tag}_m{m}_4097x4096"
        cs.append((nm, woq(nm, m, 4097, 4096, epilogue="scale_residual"),
                   ["--schedule", f"0={s}"]))
    # The wgmma kind (sm_90a; issue 12): the M of issue 12's matrix, ragged
    # N and K (a multiple of 16, not of the 64 of a K tile), f16, bias+silu.
    wgmma = [
        ("m8", 8, 4096, 4096, "bf16", "scale", "w8 r1 mt8 st8"),
        ("m64", 64, 4096, 4096, "bf16", "scale", "w8 r1 mt64 st4"),
        ("m96_r2", 96, 4096, 4096, "bf16", "scale", "w12 r2 mt96 st4"),
        ("m128_ragged_n", 128, 4097, 4096, "bf16", "scale", "w12 r2 mt128 st4"),
        ("m200_ragged_k", 200, 4096, 4112, "bf16", "scale", "w8 r1 mt200 st3"),
        ("m256", 256, 4096, 1024, "bf16", "scale", "w8 r1 mt256 st4"),
        ("m1000", 1000, 2048, 1024, "bf16", "scale", "w12 r2 mt128 st4"),
        ("m1024_f16", 1024, 1024, 2048, "f16", "scale", "w12 r2 mt128 st4"),
        ("m4096", 4096, 1024, 1024, "bf16", "scale", "w12 r2 mt192 st3"),
        ("silu_m128", 128, 4097, 4112, "bf16", "scale_bias_silu", "w12 r2 mt128 st4"),
        ("silu_m64_f16", 64, 1000, 2048, "f16", "scale_bias_silu", "w8 r1 mt64 st4"),
        ("m128_sk4", 128, 4096, 4096, "bf16", "scale", "w12 r2 mt128 st4 sk4"),
        ("silu_m64_sk2", 64, 4097, 4112, "bf16", "scale_bias_silu", "w8 r1 mt64 st3 sk2"),
        # Clusters sharing the activations by TMA multicast: a last cluster
        # past N (4097, 4160), several row blocks (M = 256, 1000), split-K.
        ("m128_cl2", 128, 4096, 4096, "bf16", "scale", "w8 r1 mt128 st6 cl2"),
        ("m128_cl2_ragged_n", 128, 4097, 4096, "bf16", "scale", "w8 r1 mt128 st6 cl2"),
        ("m256_r2_cl4", 256, 4160, 2048, "bf16", "scale", "w12 r2 mt128 st4 cl4"),
        ("silu_m1000_cl2_sk2", 1000, 2048, 4112, "bf16", "scale_bias_silu", "w12 r2 mt192 st4 cl2 sk2"),
        ("m64_f16_cl2", 64, 1000, 2048, "f16", "scale", "w8 r1 mt64 st4 cl2"),
        # A residual input beside the per-column scale (loaded once per
        # column), ragged N.
        ("residual_m128", 128, 4097, 4096, "bf16", "scale_residual", "w8 r1 mt128 st6"),
        ("residual_m200_cl2", 200, 2048, 1024, "bf16", "scale_residual", "w8 r1 mt192 st4 cl2"),
        # Consumer warpgroups taking turns at the K tiles (kwarps), adding
        # their sums through the ring: an odd tile count (4112 = 64 x 64 +
        # 16), fewer tiles than turns (K = 16), split-K, clusters, two rows
        # of warpgroups, f16 + SiLU, and mt256, whose consumers take the
        # producer's registers (setmaxnreg).
        ("kw2_m64_ragged", 64, 4097, 4112, "bf16", "scale", "w12 r1 kw2 mt64 st8"),
        ("kw2_m128_k16", 128, 1024, 16, "bf16", "scale", "w12 r1 kw2 mt128 st4"),
        ("kw2_m64_sk2_silu", 64, 4096, 4096, "bf16", "scale_bias_silu", "w12 r1 kw2 mt64 st4 sk2"),
        ("kw2_m96_cl2_f16", 96, 4097, 2048, "f16", "scale_bias_silu", "w12 r1 kw2 mt96 st6 cl2"),
        ("kw2_m64_r2", 64, 4096, 4112, "bf16", "scale", "w20 r2 kw2 mt64 st4"),
        ("kw4_m64", 64, 2048, 4096, "bf16", "scale", "w20 r1 kw4 mt64 st8"),
        ("kw2_m256_maxnreg", 256, 4096, 4096, "bf16", "scale_bias_silu", "w12 r1 kw2 mt256 st4"),
        ("kw2_m1000_maxnreg_cl2", 1000, 2048, 4112, "bf16", "scale_bias_silu", "w12 r1 kw2 mt256 st5 cl2"),
        ("r2_m256_maxnreg", 256, 4096, 2048, "bf16", "scale", "w12 r2 mt256 st3"),
        # Turns below M = 64, split where the tiled start would split
        # (Heuristics.cpp): ragged N, a partial tile of M (17 in 24), ragged
        # K with SiLU.
        ("kw2_m32_sk4_ragged_n", 32, 4097, 14336, "bf16", "scale", "w12 r1 kw2 mt32 st8 sk4"),
        ("kw2_m17_sk8", 17, 2048, 8192, "bf16", "scale", "w12 r1 kw2 mt24 st8 sk8"),
        ("kw2_m24_sk2_silu", 24, 3520, 4112, "bf16", "scale_bias_silu", "w12 r1 kw2 mt24 st8 sk2"),
        # ... and at M = 33-63 (half a wave): M = 48, a partial tile (63 in
        # 64) in f16, ragged N and K with SiLU at M = 40, and clusters where
        # the blocks pass a wave (8705 rows, the last cluster ragged).
        ("kw2_m48_sk2", 48, 4096, 14336, "bf16", "scale", "w12 r1 kw2 mt48 st8 sk2"),
        ("kw2_m63_f16", 63, 3072, 4096, "f16", "scale", "w12 r1 kw2 mt64 st8"),
        ("kw2_m40_sk2_ragged_silu", 40, 4097, 4112, "bf16", "scale_bias_silu", "w12 r1 kw2 mt40 st8 sk2"),
        ("m48_cl2_ragged_n", 48, 8705, 2048, "bf16", "scale", "w8 r1 mt48 st8 cl2"),
        # Turns with two tiles of M, the second ragged (200 = 104 + 96).
        ("kw2_m200_mt104_silu", 200, 4097, 4096, "bf16", "scale_bias_silu", "w12 r1 kw2 mt104 st8"),
    ]
    for tag, m, n, k, act, epi, s in wgmma:
        nm = f"wgmma_{tag}_{n}x{k}"
        cs.append((nm, woq(nm, m, n, k, act=act, epilogue=epi),
                   ["--arch", "sm_90a", "--schedule", f"0=wgmma {s}"]))
    # Symbolic batch: buckets M=1,2,4,8,16,32; a runtime M runs on the
    # smallest bucket >= M with zero-padded inputs.
    for m in [1, 3, 5, 16, 27]:
        nm = f"dispatch_m{m}"
        text = woq(nm, "M", 4096, 4096).replace("scales: bf16", "scales: bf16")
        cs.append((nm, text, ["--bind", "M=1,2,4,8,16,32", "--batch", str(m)]))
    return cs + int4_cases(quick) + fused_cases(quick)


def run_file(mtc, path, flags, timeout):
    start = time.time()
    try:
        p = subprocess.run([mtc, "run", path, "--check", "--seed", "7"] + flags,
                           capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.time() - start
    except subprocess.TimeoutExpired:
        return -1, "", f"timeout after {timeout} s", time.time() - start


CHECK_LINE = re.compile(
    r"\s+(\w+): max err (\S+) ulps \(rel (\S+), .*\) (ok|MISMATCH) "
    r"\(tol (\S+) ulps(, K split)?\)")
HISTOGRAM_LINE = re.compile(r"\s+ulps by element: (.*)")


def parse(stdout):
    """graph name -> list of per-output dicts: name, ok, max_ulps,
    max_rel_err, tol, split_k, histogram (percent of elements with errors
    of 0, <=1, <=2, <=4, <=16 and more ulps of their own magnitude)"""
    results, cur = {}, None
    for line in stdout.splitlines():
        m = re.match(r"(\w+)(?: \(.*\))?: ran (\d+) kernel", line)
        if m:
            cur = m.group(1)
            results[cur] = []
            continue
        m = CHECK_LINE.match(line)
        if m and cur:
            results[cur].append({
                "output": m.group(1), "ok": m.group(4) == "ok",
                "max_ulps": float(m.group(2)),
                "max_rel_err": float(m.group(3)), "tol": float(m.group(5)),
                "split_k": bool(m.group(6))})
            continue
        m = HISTOGRAM_LINE.match(line)
        if m and cur and results[cur]:
            results[cur][-1]["histogram"] = [
                float(v.split(": ")[1].rstrip("%"))
                for v in m.group(1).split(", ")]
    return results


def distribution(summary):
    """Lines saying how the passing and failing cases' errors are spread,
    for the kernels that split K and the others."""
    lines = []
    for split in (False, True):
        rows = [o for s in summary for o in s.get("outputs", [])
                if o["split_k"] == split]
        if not rows:
            continue
        ulps = sorted(o["max_ulps"] for o in rows)
        q = lambda f: ulps[min(len(ulps) - 1, int(f * len(ulps)))]
        exact = sum(1 for u in ulps if u == 0)
        elems = [o["histogram"] for o in rows if "histogram" in o]
        mean = [sum(h[i] for h in elems) / len(elems) for i in range(6)] \
            if elems else []
        lines.append(
            f"{'K split' if split else 'K whole'}: {len(rows)} outputs, max "
            f"err in ulps of the scale: median {q(0.5):g}, 90% {q(0.9):g}, "
            f"max {ulps[-1]:g}; {exact} exact; elements (mean %) by ulps of "
            f"their own magnitude 0 / <=1 / <=2 / <=4 / <=16 / more: "
            + " / ".join(f"{v:.4g}" for v in mean))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mtc", required=True)
    ap.add_argument("--out", help="write summary.json and the logs here")
    ap.add_argument("--quick", action="store_true", help="fewer cases")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--only", metavar="REGEX",
                    help="run only the cases whose name matches REGEX")
    ap.add_argument("--budget-s", type=float, default=0,
                    help="start no file after this many seconds; the cases "
                         "left count as failed, 'not run' (default: none)")
    ap.add_argument("--check-args", action="store_true",
                    help="check the arguments (and that --only matches a "
                         "case) and exit")
    args = ap.parse_args()

    all_cases = cases(args.quick)
    if args.only:
        try:
            pick = re.compile(args.only)
        except re.error as e:
            ap.error(f"--only: {e}")
        all_cases = [c for c in all_cases if pick.search(c[0])]
        if not all_cases:
            ap.error(f"--only: no case matches {args.only!r}")
    if args.check_args:
        print(f"{len(all_cases)} cases")
        return 0
    work = tempfile.mkdtemp(prefix="mtc-gpu-")
    # Plain cases share files (one device and process per file); cases with
    # flags get their own file, and so do the int4 cases (new: one case's
    # compile error must not fail its neighbours).
    def alone(c):
        return bool(c[2]) or c[0].startswith("int4_")
    groups = []
    plain = [c for c in all_cases if not alone(c)]
    for i in range(0, len(plain), 8):
        groups.append((plain[i:i + 8], []))
    for c in all_cases:
        if alone(c):
            groups.append(([c], c[2]))

    summary, failures, logs = [], 0, []
    started = time.time()
    for gi, (group, flags) in enumerate(groups):
        if args.budget_s and time.time() - started > args.budget_s:
            for name, _, _ in group:
                summary.append({"case": name, "ok": False,
                                "max_ulps": float("nan"), "flags": flags,
                                "rc": None, "not_run": True})
                failures += 1
            print(f"group {gi}: {len(group)} cases not run (--budget-s)")
            continue
        path = os.path.join(work, f"group{gi}.graph")
        with open(path, "w") as f:
            f.write("\n".join(text for _, text, _ in group))
        # The wgmma kind is new: a hang must not eat the device's time.
        timeout = min(args.timeout, 120) if "sm_90a" in flags else args.timeout
        rc, out, err, secs = run_file(args.mtc, path, flags, timeout)
        logs.append(f"=== {path} {' '.join(flags)} rc={rc} {secs:.1f}s\n{out}{err}")
        if rc == 2 and gi == 0 and ("CUDA driver" in err or "no CUDA device" in err):
            print(f"SKIP: no GPU: {err.strip()}")
            return SKIP
        res = parse(out)
        for name, _, _ in group:
            outs = res.get(name)
            ok = bool(outs) and all(o["ok"] for o in outs) and rc in (0, 1)
            worst = max((o["max_ulps"] for o in outs), default=float("nan")) \
                if outs else float("nan")
            summary.append({"case": name, "ok": ok, "max_ulps": worst,
                            "outputs": outs or [], "flags": flags, "rc": rc})
            if not ok:
                failures += 1
                detail = err.strip().splitlines()[-1] if err.strip() else "no result"
                print(f"FAIL {name}: {outs if outs else detail}")
        print(f"group {gi}: {len(group)} cases, rc={rc}, {secs:.1f}s", flush=True)

    passed = sum(1 for s in summary if s["ok"])
    print(f"\n{passed}/{len(summary)} GPU cases passed")
    for line in distribution(summary):
        print(line)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "gpu_summary.json"), "w") as f:
            json.dump(summary, f, indent=1)
        with open(os.path.join(args.out, "gpu_log.txt"), "w") as f:
            f.write("\n".join(logs))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
