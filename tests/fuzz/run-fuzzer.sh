#!/usr/bin/env bash
# Runs a libFuzzer target of mtc for a bounded time on a copy of its seed
# corpus (the checked-in corpus is never written to). Used by the graph-fuzzer
# ctest (tests/fuzz/CMakeLists.txt):
#
#   run-fuzzer.sh FUZZER CORPUS_DIR ARTIFACT_DIR SECONDS [libFuzzer flags...]
#
# Exits with libFuzzer's status: 0 when the time ran out without a finding,
# non-zero on a crash, a sanitizer report, a timeout (-timeout: seconds for
# one input) or running out of memory (-rss_limit_mb). The input responsible
# is saved in ARTIFACT_DIR (crash-*, timeout-*, oom-*, leak-*); reproduce it
# with `FUZZER FILE`, shrink it with `FUZZER -minimize_crash=1 FILE`.
set -uo pipefail
if [ $# -lt 4 ]; then
  echo "usage: $0 FUZZER CORPUS_DIR ARTIFACT_DIR SECONDS [flags...]" >&2
  exit 2
fi
fuzzer=$1 corpus=$2 artifacts=$3 seconds=$4
shift 4

work=$(mktemp -d "${TMPDIR:-/tmp}/mtc-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$artifacts"
cp -R "$corpus"/. "$work/corpus/"
touch "$work/start"

# The fuzzer's progress lines (NEW, REDUCE, pulse) and its recommended
# dictionary are left out of the log; everything else is shown, a sanitizer
# report in full.
"$fuzzer" "$work/corpus" -max_total_time="$seconds" -timeout=10 \
  -rss_limit_mb=4096 -max_len=4096 -print_final_stats=1 \
  -artifact_prefix="$artifacts/" "$@" 2>&1 |
  tee "$work/log" |
  grep -Ev '^(#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)|"|###### )'
rc=${PIPESTATUS[0]}

# Executions and coverage (cov: edges, ft: features) of this run.
echo "--- fuzzing summary (exit status $rc) ---"
grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)' "$work/log" ||
  grep -E '^#[0-9]+' "$work/log" | tail -n 1
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' \
  "$work/log" || true
find "$artifacts" -type f -newer "$work/start" | sed 's/^/reproducer: /'
exit "$rc"
