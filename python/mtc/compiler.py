"""Compiling graphs with the mtc binary, through an on-disk artifact cache.

``compile_graphs`` compiles several graphs over the same symbolic-M buckets
with ``mtc compile --bind``, in up to ``jobs`` mtc processes side by side
(tuners take turns at the GPU for their measurements, and compile while
another measures), and files each graph's artifact under a key made of
everything that decides its PTX: the graph text, the buckets, the arch and
target, the tuning settings, the GPU it was tuned on and the mtc binary. A
later run with the same key loads the artifact without starting mtc at all.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Dict, Mapping, Optional, Sequence

from ._tools import MtcError, find_binary

DTYPES = ("bf16", "f16")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class CompileError(MtcError):
    """mtc could not compile a graph; the message holds what mtc printed."""


def _check_graph_args(name, symbol, dtype, **sizes):
    if not _NAME.match(name):
        raise ValueError(f"name: '{name}' is not a graph name "
                         "(letters, digits and _, not starting with a digit)")
    if not _NAME.match(symbol):
        raise ValueError(f"symbol: '{symbol}' is not a dimension name")
    for arg, v in sizes.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{arg}: expected a positive int, got {v!r}")
    if dtype not in DTYPES:
        raise ValueError(f"dtype: expected one of {DTYPES}, got {dtype!r}")


def linear_graph(name: str, n: int, k: int, dtype: str = "bf16",
                 bias: bool = False, symbol: str = "M") -> str:
    """The graph text of gpt-fast's weight-only int8 linear layer,
    ``out = F.linear(x, w.to(dtype)) * scales`` (``+ bias``), for ``x`` of
    ``symbol`` rows. Each node rounds to ``dtype``, as PyTorch eager does."""
    _check_graph_args(name, symbol, dtype, n=n, k=k)
    params = (f"x: {dtype}[{symbol}, {k}], w: i8[{n}, {k}], "
              f"scales: {dtype}[{n}]")
    lines = [f"  wf  = convert(w, {dtype})",
             "  y   = linear(x, wf)",
             "  out = mul(y, scales)"]
    if bias:
        params += f", bias: {dtype}[{n}]"
        lines.append("  res = add(out, bias)")
    ret = "res" if bias else "out"
    return (f"# weight-only int8 linear {n}x{k} ({dtype}{', bias' if bias else ''})\n"
            f"graph {name}({params}) -> {dtype}[{symbol}, {n}] {{\n" +
            "\n".join(lines) + f"\n  return {ret}\n}}\n")


def int4_linear_graph(name: str, n: int, k: int, group: int,
                      dtype: str = "bf16", bias: bool = False,
                      symbol: str = "M") -> str:
    """The graph text of a weight-only int4 linear layer with group-wise
    scales and zeros (gpt-fast's ``WeightOnlyInt4Linear`` once repacked):
    ``y = F.linear(x, w.to(dtype) * scales + zeros)`` (``+ bias``), scales
    and zeros ``[N, K / group]`` repeated over each group of ``group``
    columns. ``w`` is ``i4[N, K]``: signed nibbles, two to a byte along K
    (element 2j in the low nibble of byte j), so K must be even. Each node
    rounds to ``dtype``, as PyTorch eager does."""
    _check_graph_args(name, symbol, dtype, n=n, k=k, group=group)
    if k % 2:
        raise ValueError(f"k: expected an even K (i4 packs two to a byte), "
                         f"got {k}")
    if k % group:
        raise ValueError(f"group: must divide k ({k}), got {group}")
    groups = k // group
    params = (f"x: {dtype}[{symbol}, {k}], w: i4[{n}, {k}], "
              f"scales: {dtype}[{n}, {groups}], zeros: {dtype}[{n}, {groups}]")
    lines = [f"  wf = convert(w, {dtype})",
             f"  s  = repeat(scales, {group})",
             f"  z  = repeat(zeros, {group})",
             "  ws = mul(wf, s)",
             "  wd = add(ws, z)",
             "  y  = linear(x, wd)"]
    if bias:
        params += f", bias: {dtype}[{n}]"
        lines.append("  out = add(y, bias)")
    ret = "out" if bias else "y"
    return (f"# weight-only int4 linear {n}x{k}, groups of {group} "
            f"({dtype}{', bias' if bias else ''})\n"
            f"graph {name}({params}) -> {dtype}[{symbol}, {n}] {{\n" +
            "\n".join(lines) + f"\n  return {ret}\n}}\n")


def default_cache_dir() -> Path:
    """$MTC_CACHE_DIR, else $XDG_CACHE_HOME/mtc, else ~/.cache/mtc (where
    mtc keeps its tuning cache too)."""
    d = os.environ.get("MTC_CACHE_DIR")
    if d:
        return Path(d)
    x = os.environ.get("XDG_CACHE_HOME")
    return Path(x) / "mtc" if x else Path.home() / ".cache" / "mtc"


def _binary_identity(binary: str) -> str:
    """The mtc build: a rebuilt binary gives new artifacts (its code
    generation may have changed)."""
    st = os.stat(binary)
    return f"{os.path.realpath(binary)}|{st.st_size}|{st.st_mtime_ns}"


def artifact_key(text: str, buckets: Sequence[int], *, arch: str, tune: bool,
                 max_probes: Optional[int], device: str, binary_id: str,
                 target: Optional[str] = None) -> str:
    """The cache key of one graph's artifact."""
    fields = {"graph": text, "buckets": list(buckets), "arch": arch,
              "target": target,
              "tune": bool(tune),
              "max_probes": max_probes if tune else None,
              # Untuned PTX does not depend on the GPU, only on the arch
              # and the target's facts.
              "device": device if tune else None, "mtc": binary_id}
    blob = json.dumps(fields, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:32]


def _check_buckets(buckets) -> list:
    b = list(buckets)
    if len(b) < 2 or any(not isinstance(v, int) or isinstance(v, bool) or
                         v < 1 for v in b):
        raise ValueError("buckets: expected at least two positive ints, got "
                         f"{buckets!r}")
    if sorted(set(b)) != b:
        raise ValueError(f"buckets: expected ascending distinct values, got "
                         f"{buckets!r}")
    return b


def compile_graphs(graphs: Mapping[str, str], buckets: Sequence[int], *,
                   symbol: str = "M", arch: str = "sm_90", tune: bool = False,
                   max_probes: Optional[int] = None, device: str = "",
                   target: Optional[str] = None,
                   cache_dir: Optional[os.PathLike] = None,
                   progress: Optional[Callable[[str], None]] = None,
                   jobs: Optional[int] = None) -> Dict[str, Path]:
    """Compiles each graph (name -> graph text defining that one graph) over
    ``buckets`` of ``symbol``, or finds it in the artifact cache. Returns, per
    name, the path of its dispatch manifest (for ``mtc.Artifact``).

    ``tune`` autotunes every kernel on the GPU (``mtc compile --tune``, at
    most ``max_probes`` schedules per kernel); ``device`` names the GPU for
    the cache key of tuned artifacts. ``target`` is ``mtc compile
    --target``: the GPU the heuristic schedules are sized for (None: mtc's
    default: for ``arch``, or with ``tune`` the GPU at hand). ``progress``
    receives one line per kernel while mtc works, numbered by its (graph,
    bucket) pair (None: silent). ``jobs`` mtc processes share the graphs
    (None: one per graph, at most the CPUs and 8); with ``tune``, ``jobs``
    processes (None: the CPUs, at most 8) first tune one graph at one
    bucket each, side by side."""
    buckets = _check_buckets(buckets)
    if jobs is not None and (not isinstance(jobs, int) or
                             isinstance(jobs, bool) or jobs < 1):
        raise ValueError(f"jobs: expected a positive int, got {jobs!r}")
    if target is not None and (not isinstance(target, str) or not target):
        raise ValueError(f"target: expected a non-empty str, got {target!r}")
    if max_probes is not None and (not isinstance(max_probes, int) or
                                   max_probes < 1):
        raise ValueError(f"max_probes: expected a positive int, got "
                         f"{max_probes!r}")
    for name in graphs:
        if not _NAME.match(name):
            raise ValueError(f"graphs: '{name}' is not a graph name")
    binary = find_binary()
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    root = root / "artifacts"
    bid = _binary_identity(binary)
    keys = {n: artifact_key(t, buckets, arch=arch, tune=tune,
                            max_probes=max_probes, device=device,
                            binary_id=bid, target=target)
            for n, t in graphs.items()}
    result = {n: root / keys[n] / f"{n}.json" for n in graphs}
    missing = [n for n in graphs if not result[n].is_file()]
    if not missing:
        return result

    if progress:
        progress(f"compiling {len(missing)} graph(s) x {len(buckets)} buckets"
                 + (", tuning every kernel on the GPU" if tune else "") +
                 f" (cached in {root})")
    root.mkdir(parents=True, exist_ok=True)
    count = jobs or min(os.cpu_count() or 1, 8)
    groups = [missing[i::count] for i in range(min(count, len(missing)))]
    report = _Progress(progress, len(missing) * len(buckets))
    common = ["--arch", arch] + (["--target", target] if target else [])
    probes = ["--max-probes", str(max_probes)] if max_probes else []
    with tempfile.TemporaryDirectory(prefix="mtc-compile-",
                                     dir=root) as tmp:
        tmp = Path(tmp)
        if tune:
            # Every (graph, bucket) is tuned by its own `mtc tune`, `count`
            # at a time, into the tuning cache, which the compiles below
            # then read: a graph's buckets tune side by side rather than in
            # turn (the processes take turns at the GPU only to time).
            tasks = [(n, b) for n in missing for b in buckets]

            def tune_one(i):
                name, bucket = tasks[i]
                job = tmp / f"tune{i}"
                job.mkdir()
                source = job / "graph.graph"
                source.write_text(graphs[name])
                _run([binary, "tune", str(source), "--verbose",
                      "--bind", f"{symbol}={bucket}"] + common + probes,
                     lambda line: report(line, pair=i), job / "stdout")

            _each(tune_one, len(tasks), count)

        def run_group(i):
            job = tmp / f"job{i}"
            job.mkdir()
            source = job / "graphs.graph"
            source.write_text("\n".join(graphs[n] for n in groups[i]))
            cmd = [binary, "compile", str(source), "-o", str(job / "out"),
                   "--bind", f"{symbol}=" + ",".join(map(str, buckets))
                   ] + common
            if tune:
                cmd += ["--tune", "--verbose"] + probes
            # After the tuning, only a kernel the cache missed says so.
            _run(cmd, report, job / "stdout",
                 relay=(": tuning from ",) if tune else _RELAYED)

        _each(run_group, len(groups), len(groups))
        for i, group in enumerate(groups):
            for n in group:
                entry = tmp / f"entry-{n}"
                entry.mkdir()
                for f in (tmp / f"job{i}" / "out").glob(f"{n}.*"):
                    f.rename(entry / f.name)
                (entry / "graph.graph").write_text(graphs[n])
                final = root / keys[n]
                try:
                    entry.rename(final)
                except OSError:
                    # Another process filed the same entry first: keep theirs.
                    if not (final / f"{n}.json").is_file():
                        raise
    return result


class _Progress:
    """Numbers the (graph, bucket) pairs that the mtc processes of one
    compile_graphs call report on, and relays each line to ``progress``.
    A pair's kernels (a fused graph has several) share its number; a line
    of no pair (a compile after the tuning) takes the last number."""

    def __init__(self, progress, pairs):
        self.progress, self.pairs = progress, pairs
        self.start = time.monotonic()
        self.numbers = {}
        self.lock = threading.Lock()

    def __call__(self, line, pair=None):
        with self.lock:
            if pair is not None:
                self.numbers.setdefault(pair, len(self.numbers) + 1)
            number = self.numbers.get(pair, len(self.numbers))
            if self.progress:
                self.progress(f"[{number}/{self.pairs}, "
                              f"{time.monotonic() - self.start:.0f} s] "
                              f"{line}")


def _each(fn, n, workers):
    """fn(0), ..., fn(n - 1) on ``workers`` threads; raises the first
    failure once every call has ended."""
    with ThreadPoolExecutor(max(1, min(workers, n))) as pool:
        done = [pool.submit(fn, i) for i in range(n)]
    for f in done:
        f.result()


#: mtc's per-kernel lines that _run relays as progress.
_RELAYED = (": tuning from ", ": cached ")


def _run(cmd, report, stdout_path, relay=_RELAYED):
    """Runs mtc, relaying its per-kernel lines that contain one of
    ``relay`` to ``report``."""
    try:
        with open(stdout_path, "w") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE,
                                    text=True)
    except OSError as e:
        raise MtcError(f"cannot run {cmd[0]}: {e}") from None
    errors = []
    for line in proc.stderr:
        if line.startswith("mtc: ") and any(r in line for r in _RELAYED):
            if any(r in line for r in relay):
                report(line[5:].rstrip())
        elif " probe " not in line and "waiting for the GPU" not in line:
            errors.append(line)
    rc = proc.wait()
    stdout = Path(stdout_path).read_text()
    if rc != 0:
        what = "the graphs are invalid" if rc == 1 else "mtc failed"
        raise CompileError(f"{what} (exit code {rc}): {' '.join(cmd)}\n" +
                           "".join(errors) + stdout)


def print_progress(line: str):
    print(f"mtc: {line}", file=sys.stderr, flush=True)
