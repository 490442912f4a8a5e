#!/usr/bin/env python3
"""check_layout.py: the rules of the house that a reader should not have to
police by hand. Exit 0 when all hold, 1 with one line per broken rule.

1. No source file of compiler/, dialects/, passes/, runtime/, tools/ or
   python/ reaches --max-lines lines (default 600).
2. No circle between the files of a library: for every static archive
   given, each object file's undefined symbols are matched with the
   object that defines them (strong definitions only: inline functions and
   templates, defined weakly in every user, are no dependency), and every
   strongly connected group of more than one object is reported with a
   symbol on each edge.
3. The Kernel dialect includes no Graph dialect file: both dialects take
   element types and tensor limits from dialects/Common.
4. bench/results/ holds data, plots and READMEs: no scripts.
5. No lit test tunes against the clock: every RUN line that tunes (`mtc
   tune`, `--tune`) names its --tune-seconds (0: no limit; a search is
   then bounded by --max-probes alone), so its outcome does not depend on
   how fast or how busy the machine is.

Usage: check_layout.py --source-root DIR [--nm NM] [ARCHIVE...]
"""
import argparse
import os
import re
import subprocess
import sys

SOURCE_DIRS = ["compiler", "dialects", "passes", "runtime", "tools", "python"]
SOURCE_EXT = (".cpp", ".h", ".td", ".py")
SCRIPT_EXT = (".py", ".sh", ".bash")


def long_files(root, max_lines):
    for d in SOURCE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if not f.endswith(SOURCE_EXT):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    n = sum(1 for _ in fh)
                if n >= max_lines:
                    yield (f"{os.path.relpath(path, root)}: {n} lines "
                           f"(split it below {max_lines})")


def graph_includes(root):
    kernel = os.path.join(root, "dialects", "Kernel")
    pattern = re.compile(r'#\s*include\s+"dialects/Graph/')
    for f in sorted(os.listdir(kernel)):
        path = os.path.join(kernel, f)
        with open(path, encoding="utf-8", errors="replace") as fh:
            for i, line in enumerate(fh, 1):
                if pattern.search(line):
                    yield (f"dialects/Kernel/{f}:{i}: includes a Graph dialect "
                           f"file ({line.strip()}); use dialects/Common")


def scripts_in_results(root):
    results = os.path.join(root, "bench", "results")
    for dirpath, _, files in os.walk(results):
        for f in sorted(files):
            if f.endswith(SCRIPT_EXT):
                yield (f"{os.path.relpath(os.path.join(dirpath, f), root)}: a "
                       f"script in bench/results (move it to bench/ with a "
                       f"test, or delete it and name the commit that had it)")


def timed_tunes(root):
    tunes = re.compile(r"%mtc (tune\b|(compile|run|bench)\b.*--tune\b(?!-))")
    lit = os.path.join(root, "tests", "lit")
    for dirpath, _, files in os.walk(lit):
        for f in sorted(files):
            if not f.endswith(".test"):
                continue
            path = os.path.join(dirpath, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                for i, line in enumerate(fh, 1):
                    if (line.startswith("RUN:") and tunes.search(line)
                            and "--tune-seconds" not in line
                            and "--max-probes 0" not in line):
                        yield (f"{os.path.relpath(path, root)}:{i}: tunes "
                               f"without --tune-seconds (use --tune-seconds 0 "
                               f"and bound it by --max-probes)")


def symbols(nm, archive):
    """object -> (strongly defined symbols, undefined symbols)"""
    out = subprocess.run([nm, "-A", archive], capture_output=True, text=True,
                         check=True).stdout
    objs = {}
    entry = re.compile(r"^.*?:([^:/]+\.o):[0-9a-fA-F]*\s+(\S)\s+(\S+)$")
    for line in out.splitlines():
        # "archive:member.o:[value] TYPE symbol"
        m = entry.match(line)
        if not m:
            continue
        obj, kind, sym = m.groups()
        defined, undefined = objs.setdefault(obj, (set(), set()))
        if kind == "U":
            undefined.add(sym)
        elif kind in "TDBRG":
            defined.add(sym)
    return objs


def circles(nm, archive):
    objs = symbols(nm, archive)
    owner = {}
    for obj, (defined, _) in objs.items():
        for s in defined:
            owner[s] = obj
    edges = {o: {} for o in objs}
    for obj, (_, undefined) in objs.items():
        for s in sorted(undefined):
            dep = owner.get(s)
            if dep and dep != obj:
                edges[obj].setdefault(dep, s)
    # Tarjan's strongly connected components (iterative).
    index, low, on, stack, sccs, counter = {}, {}, set(), [], [], [0]
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                scc = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    scc.append(w)
                    if w == node:
                        break
                if len(scc) > 1:
                    sccs.append(sorted(scc))
    for scc in sccs:
        inside = set(scc)
        detail = []
        for o in scc:
            for dep, sym in sorted(edges[o].items()):
                if dep in inside:
                    detail.append(f"{short(o)} -> {short(dep)} ({demangle(sym)})")
        yield (f"{os.path.basename(archive)}: a circle between "
               f"{', '.join(short(o) for o in scc)}: " + "; ".join(detail))


def short(obj):
    return re.sub(r"\.(cpp|cc)\.o$", ".cpp", obj)


def demangle(sym):
    try:
        return subprocess.run(["c++filt", sym], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return sym


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--max-lines", type=int, default=600)
    ap.add_argument("archives", nargs="*")
    args = ap.parse_args()
    problems = list(long_files(args.source_root, args.max_lines))
    problems += graph_includes(args.source_root)
    problems += scripts_in_results(args.source_root)
    problems += timed_tunes(args.source_root)
    for a in args.archives:
        problems += circles(args.nm, a)
    for p in problems:
        print(p)
    if not problems:
        print(f"layout ok: {len(args.archives)} libraries without circles")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
