"""The shape zoo (bench/zoo.py, bench/zoo_report.py, `bench/device.sh zoo`)
and compare.py's graph-by-graph retry, on the CPU: the zoo's shapes and
pieces, the driver's argument checks, a piece run on a fake mtc, and the
report on synthetic rows."""
import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import zoo  # noqa: E402


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, **kw)


def test_zoo_shapes():
    assert len(zoo.CONFIGS) >= 10
    assert len({c.family for c in zoo.CONFIGS}) >= 7
    shapes = zoo.zoo_shapes()
    keys = [(s.n, s.k) for s in shapes]
    assert len(keys) == len(set(keys)) and keys == sorted(keys)
    by_key = {(s.n, s.k): s for s in shapes}
    # Fused qkv and gate/up: Llama-3-8B's, and every label of a shared shape.
    assert ("llama-3", "Llama-3-8B", "qkv") in by_key[(6144, 4096)].labels
    assert ("llama-3", "Llama-3-8B", "gate_up") in by_key[(28672, 4096)].labels
    assert ("llama-2", "Llama-2-70B", "qkv") in by_key[(10240, 8192)].labels
    assert {c for _, c, _ in by_key[(4096, 4096)].labels} >= {
        "Llama-2-7B", "Llama-3-8B", "Mistral-7B"}
    assert by_key[(9216, 3072)].labels == (("phi-3", "Phi-3-mini", "qkv"),)
    for c in zoo.CONFIGS:
        for n, k, layer in zoo.config_layers(c):
            assert (c.family, c.name, layer) in by_key[(n, k)].labels


def test_random_shapes_are_fixed():
    rnd = zoo.random_shapes()
    assert rnd == zoo.random_shapes() and len(rnd) == 20 == len(set(rnd))
    for n, k in rnd:
        for v in (n, k):
            assert v % 64 == 0 and 1024 <= v <= 32768
    # The seed's shapes, pinned: a change of the generator is a new zoo.
    assert rnd[0] == (24128, 4992) and rnd[6] == (30784, 32576)
    assert zoo.random_shapes(seed=26) != rnd
    assert sum(1 for s in zoo.zoo_shapes() if zoo.families(s) == ["random"]) \
        == 20


def test_int4_exclusions_have_reasons():
    shapes = zoo.zoo_shapes()
    assert all(zoo.exclusion(s, "int8") is None for s in shapes)
    excluded = [s for s in shapes if zoo.exclusion(s, "int4")]
    assert excluded, "the random shapes have K = 64 mod 128"
    for s in excluded:
        assert s.k % 128 and f"K = {s.k}" in zoo.exclusion(s, "int4")
    assert len(zoo.included("int4")) == len(shapes) - len(excluded)
    assert all(s.k % 128 == 0 and s.n % 8 == 0 for s in zoo.included("int4"))
    # compare.py takes every shape the zoo measures at int4.
    shapes = ",".join(f"{s.n}x{s.k}" for s in zoo.included("int4"))
    p = run([sys.executable, "bench/compare.py", "--mtc", "none", "--out",
             "unused", "--weights", "int4", "--group", "128", "--shapes",
             shapes, "--check-args"])
    assert p.returncode == 0, p.stderr
    p = run([sys.executable, "bench/compare.py", "--mtc", "none", "--out",
             "unused", "--weights", "int4", "--group", "128", "--shapes",
             f"{excluded[0].n}x{excluded[0].k}", "--check-args"])
    assert p.returncode == 2 and "int4 needs K divisible" in p.stderr
    out = run([sys.executable, "bench/zoo.py", "list", "--weights", "int4"])
    assert out.returncode == 0
    assert out.stdout.count("EXCLUDED: K = ") == len(excluded)


def test_pieces_cover_every_point_once():
    for weights, piece_s, ms in (("int8", 420.0, zoo.MS),
                                 ("int4", 420.0, zoo.MS),
                                 ("int8", 150.0, [1, 64, 4096])):
        pieces = zoo.plan(weights, ms, piece_s)
        assert pieces == zoo.plan(weights, ms, piece_s)  # deterministic
        seen = [(m, s.n, s.k) for p in pieces for r in p for m in r.ms
                for s in r.shapes]
        want = [(m, s.n, s.k) for m in ms for s in zoo.included(weights)]
        assert sorted(seen) == sorted(want) and len(seen) == len(set(seen))
        for p in pieces:
            single = len(p) == 1 and len(p[0].ms) * len(p[0].shapes) == 1
            assert single or sum(r.est_s for r in p) <= piece_s + 1e-6
            for r in p:
                assert r.systems == zoo.systems_at(weights, r.ms[0], 256)
                assert all(zoo.systems_at(weights, m, 256) == r.systems
                           for m in r.ms)
        assert set(zoo.piece_of(pieces).values()) == set(
            range(1, len(pieces) + 1))
    assert "tinygemm" in zoo.systems_at("int4", 256, 256)
    assert "tinygemm" not in zoo.systems_at("int4", 512, 256)
    assert "tinygemm" not in zoo.systems_at("int8", 1, 256)
    # The cost grows with M and with the shape.
    assert zoo.point_s("int8", 4096, 8192, 8192, ["mtc"]) > \
        zoo.point_s("int8", 1, 8192, 8192, ["mtc"]) > \
        zoo.point_s("int8", 1, 4096, 4096, ["mtc"])


def test_device_sh_zoo_arguments(tmp_path):
    n8 = len(zoo.plan("int8"))
    n4 = len(zoo.plan("int4"))
    ok = run(["bench/device.sh", "-n", "--out", str(tmp_path), "zoo",
              "--weights", "int4", "--piece", f"1/{n4}"])
    assert ok.returncode == 0, ok.stderr
    assert f"zoo --weights int4 --piece 1/{n4}" in ok.stdout
    assert f"piece 1/{n4} of int4:" in ok.stderr  # the piece's runs
    ok = run(["bench/device.sh", "-n", "--out", str(tmp_path), "zoo",
              "--piece", f"{n8}/{n8}", "--budget-s", "300", "--systems",
              "mtc"])
    assert ok.returncode == 0, ok.stderr
    for bad, why in (([], "give --piece I/N"),
                     (["--piece", f"1/{n8 + 1}"], f"has {n8} pieces"),
                     (["--piece", f"0/{n8}"], "I must be in"),
                     (["--piece", "one"], "--piece needs I/N"),
                     (["--piece", f"1/{n4}", "--weights", "int2"], "int2"),
                     (["--piece", f"1/{n8}", "--ms", "1,x"], "--ms"),
                     (["--piece", f"1/{n8}", "--systems", "tinygemm"],
                      "tinygemm not among"),
                     (["--piece", f"1/{n8}", "--frobnicate"], "frobnicate")):
        p = run(["bench/device.sh", "-n", "--out", str(tmp_path), "zoo"] + bad)
        assert p.returncode == 2, (bad, p.stdout, p.stderr)
        assert why in p.stderr, (bad, p.stderr)
        assert "not bench/zoo.py run's" in p.stderr


FAKE_MTC = r"""#!/usr/bin/env python3
# A fake mtc for compare.py: `run --check` prints a passing check per graph,
# `bench --json` times each graph at 4 TB/s; a process with a graph that
# matches $FAKE_MTC_BAD fails as a compile error does.
import json, os, re, sys
args = sys.argv[1:]
graphs = [args[i + 1] for i, a in enumerate(args) if a == "--graph"]
with open(os.path.join(os.path.dirname(sys.argv[0]), "calls.txt"), "a") as f:
    f.write(" ".join([args[0]] + graphs) + "\n")
bad = os.environ.get("FAKE_MTC_BAD")
if bad and any(re.search(bad, g) for g in graphs):
    sys.exit("mtc: error: cannot compile")
def us(g):
    m, n, k = map(int, re.search(r"_m(\d+)_(\d+)x(\d+)", g).groups())
    return (n * k + 2 * m * (n + k)) / 4e12 * 1e6
if args[0] == "run":
    for g in graphs:
        print(f"{g}: ran 1 kernel on fake")
        print("  out: max err 1 ulps (rel 3.900e-03, l2 1.000e-03, max |ref| "
              "1.000e+00, non-finite 0) ok (tol 2 ulps)")
else:
    print(json.dumps({"device": "fake", "driver": "0",
                      "read_ceiling_gbs": 4000, "launch_floor_us": 2,
                      "graphs": [{"graph": g, "kernels": [
                          {"schedule": "fake", "median_us": us(g),
                           "registers": 1}]} for g in graphs]}))
"""


def fake_mtc(tmp_path):
    mtc = tmp_path / "mtc"
    mtc.write_text(FAKE_MTC)
    mtc.chmod(0o755)
    return mtc


def test_compare_runs_each_graph_alone_after_a_failure(tmp_path):
    # One shape that mtc cannot compile costs only its own rows.
    mtc = fake_mtc(tmp_path)
    out = tmp_path / "out"
    p = run([sys.executable, "bench/compare.py", "--mtc", str(mtc), "--out",
             str(out), "--systems", "mtc", "--ms", "1,16", "--shapes",
             "4096x4096,4096x1088,8192x8192", "--tune-spec", "",
             "--budget-s", "0"],
            env={**__import__("os").environ, "FAKE_MTC_BAD": "_4096x1088$"})
    assert p.returncode == 0, p.stdout + p.stderr
    rows = [json.loads(line) for line in open(out / "results.jsonl")]
    mtc_rows = {(r["m"], r["n"], r["k"]): r for r in rows
                if r["system"] == "mtc"}
    assert set(mtc_rows) == {(m, n, k) for m in (1, 16)
                             for n, k in ((4096, 4096), (8192, 8192))}
    assert all(r["ok"] for r in mtc_rows.values())
    assert "each alone" in p.stdout
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    # Per M: run and bench of all three, then of each alone.
    assert len(calls) == 2 * (2 + 2 * 3), calls


def test_zoo_piece_on_a_fake_mtc_and_its_report(tmp_path):
    mtc = fake_mtc(tmp_path)
    pieces = zoo.plan("int8", [1], 60.0)
    n = len(pieces)
    assert n > 1
    p = run([sys.executable, "bench/zoo.py", "run", "--mtc", str(mtc),
             "--out", str(tmp_path), "--ms", "1", "--piece-s", "60",
             "--piece", f"2/{n}", "--systems", "mtc", "--budget-s", "0"])
    assert p.returncode == 0, p.stdout + p.stderr
    folder = tmp_path / f"zoo-int8-2of{n}"
    assert sorted(x.name for x in folder.iterdir()) == ["rows.jsonl",
                                                        "zoo.txt"]
    rows = [json.loads(line) for line in open(folder / "rows.jsonl")]
    want = {(s.n, s.k) for r in pieces[1] for s in r.shapes}
    got = {(r["n"], r["k"]) for r in rows if r["system"] == "mtc"}
    assert got == want
    assert all(r["zoo_run"].startswith(f"2of{n}-run") for r in rows)
    ends = [r for r in rows if r["system"] == "zoo" and r["event"] == "end"]
    assert len(ends) == len(pieces[1]) and all(r["rc"] == 0 for r in ends)
    rep = tmp_path / "report"
    p = run([sys.executable, "bench/zoo_report.py", str(tmp_path), "--out",
             str(rep), "--weights", "int8", "--ms", "1", "--piece-s", "60"])
    assert p.returncode == 0, p.stdout + p.stderr
    data = json.load(open(rep / "zoo.json"))["analyses"][0]
    assert data["per_m"]["1"]["mtc"] == len(want)
    # 4 TB/s over the fake's 4000 GB/s ceiling: 100%.
    assert abs(data["per_m"]["1"]["ceil_median"] - 1.0) < 1e-9
    assert data["per_m"]["1"]["cublas_geomean"] is None
    missing = {(x["n"], x["k"]): x for x in data["missing"]}
    assert len(missing) == len(zoo.included("int8"))  # no cuBLAS anywhere
    assert all(missing[s]["systems"] == ["cublas_bf16"] for s in want)
    assert all(x["piece"] != 2 for s, x in missing.items() if s not in want)
    md = (rep / "zoo.md").read_text()
    assert f"- piece 2/{n}: {len(want)} points:" in md
    assert "| int8 2of" in md  # the runs' wall time against the estimate


def synthetic_rows():
    """int8 at M = 1 and 128 on the zoo, with known ratios, some points
    missing and one failed check; int4 at M = 1 with tinygemm."""
    rows = [{"system": "meta", "m": 0, "n": 0, "k": 0,
             "meta": {"read_ceiling_gbs": 4000.0}}]
    shapes = zoo.included("int8")
    for i, s in enumerate(shapes):
        # M = 1: 90% of the ceiling, the first shape 70%.
        share = 0.70 if i == 0 else 0.90
        b = s.n * s.k + 2 * 1 * (s.n + s.k)
        # The size's read probe: 95% of mtc's time, the second shape's 60%.
        us = b / (share * 4000e9) * 1e6
        rows.append(dict(system="mtc", m=1, n=s.n, k=s.k, ok=True, us=us,
                         probe_us=us * (0.60 if i == 1 else 0.95),
                         schedule="x"))
        rows.append(dict(system="cublas_bf16", m=1, n=s.n, k=s.k, ok=True,
                         us=2.0))
        if i < 3:
            continue  # M = 128: the first three shapes are missing
        ratio = 0.90 if i == 3 else 1.2
        rows.append(dict(system="mtc", m=128, n=s.n, k=s.k, us=10.0,
                         ok=i != 4, schedule="x"))  # shape 4's check failed
        rows.append(dict(system="cublas_bf16", m=128, n=s.n, k=s.k,
                         us=10.0 * ratio, ok=True))
    for s in zoo.included("int4")[:5]:
        for system, us in (("mtc", 10.0), ("tinygemm", 15.0),
                           ("cublas_bf16", 20.0)):
            rows.append(dict(system=system, m=1, n=s.n, k=s.k, us=us,
                             ok=True, weights="int4", group=128))
    # A row of another group is not the zoo's.
    rows.append(dict(system="mtc", m=1, n=4096, k=4096, us=1.0, ok=True,
                     weights="int4", group=64))
    return rows, shapes


def test_report_on_synthetic_rows(tmp_path):
    rows, shapes = synthetic_rows()
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "rep"
    p = run([sys.executable, "bench/zoo.py", "report", str(path), "--out",
             str(out), "--ms", "1,128"])
    assert p.returncode == 0, p.stdout + p.stderr
    a8, a4 = json.load(open(out / "zoo.json"))["analyses"]
    m1, m128 = a8["per_m"]["1"], a8["per_m"]["128"]
    assert m1["mtc"] == len(shapes) and abs(m1["ceil_median"] - 0.9) < 1e-9
    assert abs(m1["ceil_worst"] - 0.7) < 1e-9
    s0 = shapes[0]
    assert m1["ceil_worst_shape"] == f"{s0.n}x{s0.k}"
    s1 = shapes[1]
    assert abs(m1["probe_median"] - 0.95) < 1e-9
    assert abs(m1["probe_worst"] - 0.60) < 1e-9
    assert m1["probe_worst_shape"] == f"{s1.n}x{s1.k}"
    assert m128["probe_median"] is None  # no row at M = 128 has a probe
    cnt = len(shapes) - 5  # three missing, one failed, one at 0.9x
    assert abs(m128["cublas_geomean"] -
               math.exp((cnt * math.log(1.2) + math.log(0.9)) / (cnt + 1))) \
        < 1e-9
    assert abs(m128["cublas_worst"] - 0.9) < 1e-9
    targets = {(t["what"], t["how"]): t for t in a8["targets"]}
    assert targets[("ceil", "median")]["met"] is True
    assert targets[("ceil", "worst")]["met"] is False
    assert targets[("cublas", "geomean")]["met"] is True
    assert targets[("cublas", "worst")]["met"] is False
    assert targets[("cublas", "worst")]["measured"] == len(shapes) - 4
    assert targets[("cublas", "worst")]["expected"] == len(shapes)
    missing = {(x["m"], x["n"], x["k"]): x["systems"] for x in a8["missing"]}
    assert set(missing) == {(128, s.n, s.k) for s in shapes[:3]} | {
        (128, shapes[4].n, shapes[4].k)}
    assert missing[(128, shapes[4].n, shapes[4].k)] == ["mtc"]
    assert [f["m"] for f in a8["failed"]] == [128]
    # int4: tinygemm 1.5x and cuBLAS 2x on five shapes, the group-64 row
    # ignored; the ceiling targets measured on 5 of the points.
    i1 = a4["per_m"]["1"]
    assert i1["mtc"] == 5 and abs(i1["tinygemm_geomean"] - 1.5) < 1e-9
    assert abs(i1["cublas_geomean"] - 2.0) < 1e-9
    t4 = {(t["what"], t["how"]): t for t in a4["targets"]}
    assert t4[("ceil", "median")]["measured"] == 5
    assert t4[("cublas", "geomean")]["met"] is None  # no M >= 128
    md = (out / "zoo.md").read_text()
    assert "- int8, M >= 128, worst bf16 cuBLAS time / mtc time >= 0.95x: " \
        "0.90x" in md
    assert "**missed**, partial: " in md
    assert "### Excluded shapes" in md and "### Failed rows" in md
    assert f"| {s0.n}x{s0.k} | " in md


def test_compare_measures_chunks_of_shapes_in_turn(tmp_path):
    # --chunk 2: per M, mtc runs and benches two shapes, then the third
    # (PyTorch would run each chunk after mtc's; a run cut by --budget-s
    # keeps both systems' rows for the chunks it finished).
    mtc = fake_mtc(tmp_path)
    out = tmp_path / "out"
    p = run([sys.executable, "bench/compare.py", "--mtc", str(mtc), "--out",
             str(out), "--systems", "mtc", "--ms", "1,16", "--shapes",
             "4096x4096,6144x4096,8192x8192", "--tune-spec", "", "--chunk",
             "2", "--budget-s", "0"])
    assert p.returncode == 0, p.stdout + p.stderr
    rows = [json.loads(line) for line in open(out / "results.jsonl")]
    assert len([r for r in rows if r["system"] == "mtc"]) == 6
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    assert len(calls) == 2 * 2 * 2, calls  # run and bench, 2 chunks, 2 M
    bad = run([sys.executable, "bench/compare.py", "--mtc", str(mtc),
               "--out", str(out), "--chunk", "0", "--check-args"])
    assert bad.returncode == 2 and "--chunk: expected a positive count" in \
        bad.stderr
