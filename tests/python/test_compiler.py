"""mtc.compiler: graph text, compiling through the mtc binary, the artifact
cache, and argument errors. Needs the mtc binary, not a GPU."""
import json
import re
import subprocess

import pytest

import mtc
from mtc import compiler
from mtc._fused import ffn_graph


def test_linear_graph_text():
    text = mtc.linear_graph("woq", 8192, 4096, "bf16")
    assert "graph woq(x: bf16[M, 4096], w: i8[8192, 4096], " \
           "scales: bf16[8192]) -> bf16[M, 8192] {" in text
    assert "  wf  = convert(w, bf16)\n  y   = linear(x, wf)\n" \
           "  out = mul(y, scales)\n  return out\n}" in text
    biased = mtc.linear_graph("b", 16, 32, "f16", bias=True)
    assert "bias: f16[16]) -> f16[M, 16]" in biased
    assert "res = add(out, bias)\n  return res" in biased


@pytest.mark.parametrize("kwargs, message", [
    (dict(name="1x"), "name: '1x' is not a graph name"),
    (dict(n=0), "n: expected a positive int, got 0"),
    (dict(k=2.0), "k: expected a positive int, got 2.0"),
    (dict(dtype="f32"), "dtype: expected one of ('bf16', 'f16'), got 'f32'"),
    (dict(symbol="M N"), "symbol: 'M N' is not a dimension name"),
])
def test_linear_graph_errors(kwargs, message):
    args = dict(name="g", n=8, k=8)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message.replace("(", r"\(")
                       .replace(")", r"\)")):
        mtc.linear_graph(**args)


def test_int4_linear_graph_text():
    assert mtc.int4_linear_graph("woq4", 8192, 4096, 128) == (
        "# weight-only int4 linear 8192x4096, groups of 128 (bf16)\n"
        "graph woq4(x: bf16[M, 4096], w: i4[8192, 4096], "
        "scales: bf16[8192, 32], zeros: bf16[8192, 32]) -> bf16[M, 8192] {\n"
        "  wf = convert(w, bf16)\n"
        "  s  = repeat(scales, 128)\n"
        "  z  = repeat(zeros, 128)\n"
        "  ws = mul(wf, s)\n"
        "  wd = add(ws, z)\n"
        "  y  = linear(x, wd)\n"
        "  return y\n"
        "}\n")
    assert mtc.int4_linear_graph("b", 16, 64, 32, "f16", bias=True,
                                 symbol="R") == (
        "# weight-only int4 linear 16x64, groups of 32 (f16, bias)\n"
        "graph b(x: f16[R, 64], w: i4[16, 64], scales: f16[16, 2], "
        "zeros: f16[16, 2], bias: f16[16]) -> f16[R, 16] {\n"
        "  wf = convert(w, f16)\n"
        "  s  = repeat(scales, 32)\n"
        "  z  = repeat(zeros, 32)\n"
        "  ws = mul(wf, s)\n"
        "  wd = add(ws, z)\n"
        "  y  = linear(x, wd)\n"
        "  out = add(y, bias)\n"
        "  return out\n"
        "}\n")


@pytest.mark.parametrize("kwargs, message", [
    (dict(name="a-b"), "name: 'a-b' is not a graph name"),
    (dict(n=-1), "n: expected a positive int, got -1"),
    (dict(group=0), "group: expected a positive int, got 0"),
    (dict(group=True), "group: expected a positive int, got True"),
    (dict(k=63, group=3), "k: expected an even K (i4 packs two to a byte), "
                          "got 63"),
    (dict(group=48), "group: must divide k (64), got 48"),
    (dict(dtype="i8"), "dtype: expected one of ('bf16', 'f16'), got 'i8'"),
    (dict(symbol="1"), "symbol: '1' is not a dimension name"),
])
def test_int4_linear_graph_errors(kwargs, message):
    args = dict(name="g", n=8, k=64, group=32)
    args.update(kwargs)
    with pytest.raises(ValueError, match=re.escape(message)):
        mtc.int4_linear_graph(**args)


def test_int4_graph_compiles(cache_dir):
    """The graph mtc.torch compiles for an int4 layer (an i4 weight, repeat,
    mul, add and linear) is one mtc accepts, with and without bias."""
    graphs = {"w4": mtc.int4_linear_graph("w4", 64, 256, 32),
              "w4b": mtc.int4_linear_graph("w4b", 48, 256, 128, "f16",
                                           bias=True)}
    paths = mtc.compile_graphs(graphs, [1, 2, 4])
    for name, path in paths.items():
        d = json.loads(path.read_text())
        assert d["graph"] == name
        assert [b["value"] for b in d["buckets"]] == [1, 2, 4]


def test_compile_and_cache(cache_dir, monkeypatch):
    graphs = {"a": mtc.linear_graph("a", 64, 32),
              "b": mtc.linear_graph("b", 48, 32, "f16", bias=True)}
    paths = mtc.compile_graphs(graphs, [1, 2, 4])
    for name, path in paths.items():
        d = json.loads(path.read_text())
        assert d["graph"] == name and d["symbol"] == "M"
        assert [b["value"] for b in d["buckets"]] == [1, 2, 4]
        for b in d["buckets"]:
            m = json.loads((path.parent / b["manifest"]).read_text())
            assert (path.parent / m["ptx"]).is_file()
            assert all("dynamic_shared_bytes" in k for k in m["kernels"])
        assert (path.parent / "graph.graph").read_text() == graphs[name]
    assert paths["a"].parent != paths["b"].parent

    # A second compile finds both in the cache and runs no compiler.
    def no_compiler(*a, **k):
        raise AssertionError("mtc ran again")
    monkeypatch.setattr(subprocess, "Popen", no_compiler)
    assert mtc.compile_graphs(graphs, [1, 2, 4]) == paths
    # Other buckets or another target are other entries.
    with pytest.raises(AssertionError, match="mtc ran again"):
        mtc.compile_graphs(graphs, [1, 2, 8])
    with pytest.raises(AssertionError, match="mtc ran again"):
        mtc.compile_graphs(graphs, [1, 2, 4], arch="sm_80")
    with pytest.raises(AssertionError, match="mtc ran again"):
        mtc.compile_graphs(graphs, [1, 2, 4], target="l40s")


def test_target_sizes_the_schedules(cache_dir):
    """``target`` is mtc compile --target: at M = 16 on 4096 x 4096 the
    default H100/H200 gets mma with 8 warps on K, a GPU of 16
    multiprocessors the tiled kind, whose 64 blocks of 64 weight rows fill
    it (passes/Heuristics.cpp, sharesActivations)."""
    graphs = {"big": mtc.linear_graph("big", 4096, 4096)}

    def m16_schedule(**kw):
        path = mtc.compile_graphs(graphs, [1, 16], **kw)["big"]
        d = json.loads(path.read_text())
        b = [b for b in d["buckets"] if b["value"] == 16][0]
        m = json.loads((path.parent / b["manifest"]).read_text())
        return m["kernels"][0]["schedule"]

    assert " kw8 " in m16_schedule()
    small = m16_schedule(target="sms=16,l2=4194304,smem=101376")
    assert small.startswith("tiled w4 r1 "), small
    with pytest.raises(mtc.CompileError, match="--target 'h300': not a known"):
        m16_schedule(target="h300")


def test_cache_key_fields():
    key = dict(arch="sm_90", tune=False, max_probes=None, device="H200",
               binary_id="mtc 1")
    base = compiler.artifact_key("g", [1, 2], **key)
    assert compiler.artifact_key("g", [1, 2], **dict(key, device="A100")) \
        == base, "untuned PTX does not depend on the GPU"
    tuned = dict(key, tune=True)
    assert compiler.artifact_key("g", [1, 2], **tuned) != base
    assert compiler.artifact_key("g", [1, 2], **dict(tuned, device="A100")) \
        != compiler.artifact_key("g", [1, 2], **tuned)
    assert compiler.artifact_key("g", [1, 2], **dict(key, binary_id="mtc 2")) \
        != base


def test_compile_errors(cache_dir):
    with pytest.raises(mtc.CompileError) as e:
        mtc.compile_graphs({"bad": "graph bad(x: bf16[M, 8]) -> bf16[M, 8] {\n"
                                   "  y = frob(x)\n  return y\n}\n"}, [1, 2])
    assert "the graphs are invalid (exit code 1)" in str(e.value)
    assert "error: unknown op 'frob'" in str(e.value)
    assert not list((cache_dir / "artifacts").glob("*/bad.json")), \
        "nothing is cached for a failed compile"


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(buckets=[4]), ValueError, "buckets: expected at least two"),
    (dict(buckets=[4, 2]), ValueError, "buckets: expected ascending"),
    (dict(buckets=[0, 2]), ValueError, "buckets: expected at least two"),
    (dict(max_probes=0), ValueError, "max_probes: expected a positive int"),
    (dict(target=""), ValueError, "target: expected a non-empty str"),
    (dict(jobs=0), ValueError, "jobs: expected a positive int"),
    (dict(jobs=True), ValueError, "jobs: expected a positive int"),
    (dict(target=132), ValueError, "target: expected a non-empty str"),
    (dict(graphs={"a b": "x"}), ValueError, "graphs: 'a b' is not a graph"),
])
def test_compile_argument_errors(cache_dir, kwargs, error, message):
    args = dict(graphs={"g": mtc.linear_graph("g", 8, 8)}, buckets=[1, 2])
    args.update(kwargs)
    with pytest.raises(error, match=message):
        mtc.compile_graphs(**args)


def test_missing_binary_says_where_it_looked(monkeypatch, tmp_path):
    monkeypatch.setenv("MTC_BINARY", str(tmp_path / "nope" / "mtc"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(mtc._tools, "_REPO", tmp_path / "repo")
    monkeypatch.setattr(mtc._tools, "_PACKAGE", tmp_path / "pkg")
    with pytest.raises(mtc.MtcNotFoundError) as e:
        mtc.find_binary()
    msg = str(e.value)
    assert msg.startswith("cannot find the mtc binary; looked in: "
                          f"$MTC_BINARY={tmp_path}/nope/mtc (no such file), "
                          f"{tmp_path}/pkg/bin/mtc, mtc on $PATH, ")
    assert f"{tmp_path}/repo/build/bin/mtc" in msg
    assert msg.endswith("Build mtc (README.md, Quick start) or set "
                        "$MTC_BINARY")
    assert isinstance(e.value, FileNotFoundError)


def test_parallel_tuning_on_the_fake_driver(cache_dir, fake_cuda):
    """jobs mtc processes tune side by side (taking turns at the GPU), one
    graph at one bucket each: every kernel of every graph is tuned and
    reported once (the compiles after the tuning find every kernel in the
    tuning cache, or they would tune it again), every artifact is filed,
    and the processes shared one GPU lock file in the tuning cache."""
    graphs = {f"g{i}": mtc.linear_graph(f"g{i}", 64 * (i + 1), 32)
              for i in range(3)}
    lines = []
    paths = mtc.compile_graphs(graphs, [1, 2], tune=True, max_probes=1,
                               device="fake", jobs=2, progress=lines.append)
    assert sorted(paths) == ["g0", "g1", "g2"]
    assert all(p.is_file() for p in paths.values())
    kernels = [line for line in lines if ": tuning from " in line]
    assert len(kernels) == 6, lines
    assert [int(line.split("/")[0].strip("[")) for line in kernels] == \
        list(range(1, 7))
    assert len(list(cache_dir.glob("gpu-*.lock"))) == 1


def test_tuning_progress_numbers_pairs(cache_dir, fake_cuda):
    """A fused graph tunes several kernels at each bucket: they share their
    (graph, bucket) pair's number, which never passes the total."""
    graphs = {"ffn": ffn_graph("ffn", 64, 128, "bf16", 1e-5),
              "lin": mtc.linear_graph("lin", 64, 32)}
    lines = []
    mtc.compile_graphs(graphs, [1, 2], tune=True, max_probes=1,
                       device="fake", jobs=2, progress=lines.append)
    kernels = [line for line in lines if ": tuning from " in line]
    numbers = [int(line.split("/")[0].strip("[")) for line in kernels]
    assert len(kernels) > 4, lines
    assert all(line.split(",")[0].endswith("/4") for line in kernels), lines
    assert sorted(set(numbers)) == [1, 2, 3, 4], lines
