#!/usr/bin/env bash
# shellcheck disable=SC2317  # the cmd_* functions are called as "cmd_$name"
# bench/device.sh: the one driver for measurements on the GPU machine (the
# H200 that the device tool lends; bench/README.md says how to get there).
#
#   bench/device.sh [OPTIONS] SUB-COMMAND [ARGS] [SUB-COMMAND [ARGS]]...
#   bench/device.sh grid --ms LIST [--shapes LIST] TEMPLATE   (no GPU)
#   bench/device.sh --help | SUB-COMMAND --help   (no GPU; matrix, compare,
#                                  tests, routing, e2e show their tool's help)
#
# Sub-commands run in the order given; an argument that is a sub-command's
# name starts the next one. Every sub-command line is checked before the
# first runs. Each writes under OUT, and gpu.txt there records the GPU,
# driver, clocks and PyTorch/Triton versions. The exit status is 0 if every
# sub-command succeeded, 1 if one failed (the others still run), 2 for a
# usage error (nothing ran).
#
# Options (before the first sub-command):
#   --out DIR        results folder (default: $OUT, the device tool's)
#   --mtc PATH       mtc binary (default .device/bin/mtc); `none` for a
#                    compare without mtc rows
#   --runtime PATH   libmtc_runtime.so for python/mtc (default
#                    .device/lib/libmtc_runtime.so)
#   --gpt-fast DIR   gpt-fast's folder for e2e (default .device/gpt-fast)
#   --cache DIR      tuning and artifact cache, MTC_CACHE_DIR (default:
#                    mtc's, ~/.cache/mtc, or MTC_CACHE_DIR if set)
#   -n, --dry-run    check the command line and print the plan; run nothing
#
# Kernel suite (bench/graphs/woq_m<M>.graph, M = 1, 2, 4, ..., 256; shapes
# NxK: 8192x8192 4096x4096 6144x4096 14336x4096 28672x4096 4096x14336
# 128256x4096):
#   matrix [ARGS]    the GPU test matrix, tests/gpu/gpu_tests.py (ARGS:
#                    --quick, --timeout S per file, --only REGEX) ->
#                    gpu_summary.json, gpu_log.txt, matrix.txt
#   compare [ARGS]   bench/compare.py --mtc MTC --out OUT/compare ARGS:
#                    mtc and the PyTorch baselines side by side ->
#                    compare/results.{jsonl,json,md}, plot.png; compare.txt
#   points FILE...   time the schedule points of FILE (`-`: stdin) with
#                    `mtc bench`: one "M NxK SCHEDULE" a line, SCHEDULE a
#                    schedule string or `heuristic`, `#` comments ->
#                    appended to points.txt as "M | NxK | SCHEDULE | time"
#                    [--replays N] [--limit S per point, default 120]
#   tune --ms LIST   `mtc tune --verbose` -> tune_m<M>.txt [--shape NxK|all,
#                    default 8192x8192] [--max-probes N] [--force]
#                    [--limit S per M, default 90: a budget, not a failure]
#   ncu --ms LIST    Nsight Compute profile of one kernel (`mtc run`, -c 1)
#                    -> ncu_m<M>.txt [--shape NxK, default 8192x8192]
#                    [--schedule 'SCHEDULE' | --tune (tunes first, then
#                    profiles the cached winner)] [--sections A,B,...,
#                    default SpeedOfLight,MemoryWorkloadAnalysis,
#                    WarpStateStats,ComputeWorkloadAnalysis,Occupancy]
#                    [--limit S, default 90]
#   bench --ms LIST  `mtc bench --json` of the suite -> bench_m<M>.json
#                    (read ceiling, launch floor, every kernel) [--shape
#                    NxK|all, default all] [--tune] [--replays N]
#                    [--limit S, default 120]
# PyTorch integration (python/mtc; bench/e2e/README.md):
#   tests [ARGS]     python/mtc's pytest suite, GPU tests included, with
#                    pytest ARGS -> tests.txt
#   routing [ARGS]   bench/e2e/routing.py --out OUT ARGS: mtc against
#                    dequantise + cuBLAS at large M -> routing.{jsonl,md,txt}
#   e2e [ARGS]       bench/e2e/gpt_fast.py --gpt-fast DIR --out OUT ARGS:
#                    gpt-fast's int8 Llama as shipped and on mtc kernels ->
#                    results.{jsonl,md}, plot.png, e2e.txt
# Without a GPU:
#   grid             print schedule points for `points`: the cartesian
#                    product of TEMPLATE's {a,b,...} groups at every M of
#                    --ms and NxK of --shapes (default 8192x8192), without
#                    kw > w or mt > M, after a `#` line naming the command
#
# Paths given to the driver (--out, --mtc, points files) are relative to the
# current folder; the sub-commands run in the repository root, so ARGS that
# go to a tool unchanged (compare, tests, routing, e2e, matrix) are relative
# to it.
# tune, ncu and bench name their files after M, and after the shape too
# (tune_m<M>_<NxK>.txt) when it is not their default.
#
# Examples (the commands behind bench/results/ are in each folder):
#   bench/device.sh matrix compare --ms 16,32,64 --systems mtc \
#       --tune-spec 16:all,32:all,64:all --max-probes 40
#   bench/device.sh points bench/results/2026-11-30-tiled/experiments/r2/points_tiled.txt \
#       tune --ms 32,64,128,256 ncu --ms 128,32
#   bench/device.sh grid --ms 128,32,256 'mma w{4,8,16} r{1,2,4} kw{1,4} v16 u2 mt{32,64} sk1' > sweep.txt
#   bench/device.sh tests routing e2e --batches 1,8,32 --prefill 512
set -uo pipefail

CALLER=$PWD
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd) || exit 2
SUBCOMMANDS=" matrix compare points tune ncu bench tests routing e2e "
NCU_SECTIONS=SpeedOfLight,MemoryWorkloadAnalysis,WarpStateStats,ComputeWorkloadAnalysis,Occupancy

usage() { sed -n '3,/^[^#]/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; }
die() {
  echo "device.sh: $*" >&2
  echo "'bench/device.sh --help' lists the sub-commands and options" >&2
  exit 2
}
abspath() {
  case $1 in
  /* | - | none) printf '%s\n' "$1" ;;
  *) printf '%s\n' "$CALLER/$1" ;;
  esac
}
is_cmd() { [[ $SUBCOMMANDS == *" $1 "* ]]; }
# value OPTION ARG: ARG, or a usage error if it is missing.
value() {
  if [ $# -lt 2 ] || [ -z "$2" ]; then die "$1 needs a value"; fi
  printf '%s\n' "$2"
}
number() {  # OPTION ARG: ARG, a whole number
  if [ $# -lt 2 ] || ! [[ $2 =~ ^[0-9]+$ ]]; then die "$1 needs a number, got '${2-}'"; fi
  printf '%s\n' "$2"
}
# ms_list OPTION LIST: the M values of LIST (1,2,...), each with a suite graph.
ms_list() {
  [[ $2 =~ ^[0-9]+(,[0-9]+)*$ ]] || die "$1 needs a comma list of M, got '$2'"
  local m
  for m in ${2//,/ }; do
    [ -f "$ROOT/bench/graphs/woq_m$m.graph" ] ||
      die "$1: no bench/graphs/woq_m$m.graph (M is one of 1, 2, 4, ..., 256)"
  done
  printf '%s\n' "${2//,/ }"
}
shape_arg() {  # OPTION VALUE ALLOW_ALL
  [[ $2 =~ ^[0-9]+x[0-9]+$ ]] || { [ "$3" = all ] && [ "$2" = all ]; } ||
    die "$1 needs NxK${3:+ or all}, got '$2'"
  printf '%s\n' "$2"
}
# The suffix of an output name: none for the default shape.
suffix() { [ "$1" = "$2" ] && return; printf '_%s' "$1"; }

need_mtc() {
  [ "$MTC" != none ] || die "$1 needs an mtc binary, not --mtc none"
  [ -x "$MTC" ] && return
  if [ -n "$DRY_RUN" ]; then
    echo "device.sh: warning: $MTC is not an executable yet" >&2
  else
    die "$1: $MTC is not an executable (build it statically into .device/: bench/README.md)"
  fi
}
need_path() {  # SUB-COMMAND PATH WHAT
  [ -e "$2" ] && return
  if [ -n "$DRY_RUN" ]; then
    echo "device.sh: warning: $1: no $3 at $2 yet" >&2
  else
    die "$1: no $3 at $2 (bench/e2e/README.md says what .device/ holds)"
  fi
}
# tool_help TOOL ARGS: the tool's own --help, if ARGS ask for it.
tool_help() {
  local tool=$1 a
  shift
  for a in "$@"; do
    case $a in -h | --help)
      cd "$ROOT" && python3 "$tool" --help
      exit ;;
    esac
  done
}

# --- sub-commands: each checks its arguments, and with CHECK set stops there.

cmd_matrix() {
  tool_help tests/gpu/gpu_tests.py "$@"
  need_mtc matrix
  [ -n "$CHECK" ] && return
  python3 tests/gpu/gpu_tests.py --mtc "$MTC" --out "$OUT" "$@" 2>&1 |
    tee "$OUT/matrix.txt"
}

cmd_compare() {
  tool_help bench/compare.py "$@"
  [ -n "$CHECK" ] && return
  python3 bench/compare.py --mtc "$MTC" --out "$OUT/compare" "$@" 2>&1 |
    tee "$OUT/compare.txt"
}

# check_points FILE: every line is "M NxK SCHEDULE", a comment or blank.
check_points() {
  local n=0 m shape s
  [ -r "$1" ] || die "points: cannot read $1"
  while read -r m shape s; do
    n=$((n + 1))
    case $m in '' | \#*) continue ;; esac
    [[ $m =~ ^[0-9]+$ && $shape =~ ^[0-9]+x[0-9]+$ && -n $s ]] ||
      die "points: $1:$n: expected 'M NxK SCHEDULE' or 'M NxK heuristic'"
    [ -f "$ROOT/bench/graphs/woq_m$m.graph" ] ||
      die "points: $1:$n: no bench/graphs/woq_m$m.graph"
  done < "$1"
}

cmd_points() {
  local limit=120 replays="" files=() f
  while [ $# -gt 0 ]; do
    case $1 in
    --limit) limit=$(number "$1" "${2-}") || exit 2; shift 2 ;;
    --replays) replays=$(number "$1" "${2-}") || exit 2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    -) files+=(-); shift ;;
    -*) die "points: unknown option $1" ;;
    *) files+=("$(abspath "$1")"); shift ;;
    esac
  done
  [ ${#files[@]} -gt 0 ] || die "points: give a points file (or - for stdin)"
  for f in "${files[@]}"; do [ "$f" = - ] || check_points "$f"; done
  need_mtc points
  [ -n "$CHECK" ] && return
  local err m shape s t rc args
  err=$(mktemp) || return 1
  for f in "${files[@]}"; do
    if [ "$f" = - ]; then cat; else cat "$f"; fi
  done | while read -r m shape s; do
    case $m in '' | \#*) continue ;; esac
    args=()
    [ "$s" = heuristic ] || args=(--schedule "0=$s")
    case $s in wgmma*) args+=(--arch sm_90a) ;; esac
    [ -z "$replays" ] || args+=(--replays "$replays")
    if t=$(timeout "$limit" "$MTC" bench "bench/graphs/woq_m$m.graph" \
          --graph "woq_m${m}_$shape" ${args[@]+"${args[@]}"} --json \
          < /dev/null 2> "$err"); then
      t=$(printf '%s' "$t" | python3 -c 'import json, sys
d = json.load(sys.stdin); k = d["graphs"][0]["kernels"][0]
print(round(k["median_us"], 1), "us", k["schedule"], k["registers"], "regs",
      k["local_bytes"], "local")')
    else
      rc=$?
      if [ "$rc" -eq 124 ]; then t="timed out after $limit s"
      else t=$(tail -n 1 "$err"); fi  # mtc's error, such as an illegal schedule
    fi
    echo "$m | $shape | $s | $t"
  done | tee -a "$OUT/points.txt"
  rc=$?
  rm -f "$err"
  return "$rc"
}

# parse_kernel_args SUB-COMMAND ALLOW_ALL ARGS: the arguments of tune, ncu
# and bench, into the caller's ms, shape, limit (defaults set by the caller),
# more (extra mtc arguments), flag_tune, schedule and sections.
parse_kernel_args() {
  local cmd=$1 allow_all=$2 v
  shift 2
  ms="" more=() flag_tune="" schedule="" sections=$NCU_SECTIONS
  while [ $# -gt 0 ]; do
    case $1 in
    --ms) ms=$(ms_list "$1" "$(value "$1" "${2-}")") || exit 2; shift 2 ;;
    --shape) shape=$(shape_arg "$1" "$(value "$1" "${2-}")" "$allow_all") || exit 2; shift 2 ;;
    --limit) limit=$(number "$1" "${2-}") || exit 2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *)
      case "$cmd $1" in
      "tune --max-probes" | "bench --replays")
        v=$(number "$1" "${2-}") || exit 2
        more+=("$1" "$v"); shift 2 ;;
      "tune --force") more+=(--force); shift ;;
      "bench --tune" | "ncu --tune") flag_tune=1; shift ;;
      "ncu --schedule") schedule=$(value "$1" "${2-}") || exit 2; shift 2 ;;
      "ncu --sections")
        sections=$(value "$1" "${2-}") || exit 2
        [[ $sections =~ ^[A-Za-z]+(,[A-Za-z]+)*$ ]] ||
          die "ncu --sections needs a comma list of section names"
        shift 2 ;;
      *) die "$cmd: unknown argument '$1'" ;;
      esac ;;
    esac
  done
  [ -n "$ms" ] || die "$cmd needs --ms LIST"
  [ -z "$flag_tune" ] || [ -z "$schedule" ] || die "ncu: --tune or --schedule, not both"
}

cmd_tune() {
  local ms shape=8192x8192 limit=90 more flag_tune schedule sections m log rc status=0
  parse_kernel_args tune all "$@"
  need_mtc tune
  [ -n "$CHECK" ] && return
  for m in $ms; do
    log=$OUT/tune_m$m$(suffix "$shape" 8192x8192).txt
    local graph=()
    [ "$shape" = all ] || graph=(--graph "woq_m${m}_$shape")
    timeout "$limit" "$MTC" tune "bench/graphs/woq_m$m.graph" \
      ${graph[@]+"${graph[@]}"} --verbose ${more[@]+"${more[@]}"} \
      < /dev/null > "$log" 2>&1
    rc=$?
    case $rc in
    0) echo "M=$m: $(grep -E 'best|tuned' "$log" | tail -n 1)" ;;
    124) echo "M=$m: stopped after $limit s: $(grep -E 'best|tuned' "$log" | tail -n 1)" ;;
    *) echo "M=$m: mtc tune failed ($rc): $(tail -n 1 "$log")"; status=1 ;;
    esac
  done
  return "$status"
}

cmd_ncu() {
  local ms shape=8192x8192 limit=90 more flag_tune schedule sections m log rc status=0
  parse_kernel_args ncu "" "$@"
  need_mtc ncu
  [ -n "$CHECK" ] && return
  command -v ncu > /dev/null || { echo "ncu: not on PATH"; return 1; }
  local sec=() run=() s
  for s in ${sections//,/ }; do sec+=(--section "$s"); done
  [ -z "$schedule" ] || run=(--schedule "0=$schedule")
  case $schedule in wgmma*) run+=(--arch sm_90a) ;; esac
  [ -z "$flag_tune" ] || run=(--tune)
  local label=${schedule:-heuristic}
  [ -z "$flag_tune" ] || label=tuned
  for m in $ms; do
    local graph=("bench/graphs/woq_m$m.graph" --graph "woq_m${m}_$shape")
    log=$OUT/ncu_m$m$(suffix "$shape" 8192x8192).txt
    echo "== ncu M=$m $shape ($label)"
    if [ -n "$flag_tune" ]; then  # fill the cache, so -c 1 sees the winner
      timeout "$limit" "$MTC" tune "${graph[@]}" < /dev/null > /dev/null 2>&1 ||
        echo "M=$m: mtc tune did not finish; profiling what the cache holds"
    fi
    timeout "$limit" ncu --clock-control none "${sec[@]}" -c 1 \
      "$MTC" run "${graph[@]}" ${run[@]+"${run[@]}"} < /dev/null > "$log" 2>&1
    rc=$?
    grep -E "Duration|DRAM Throughput|Memory Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc A" "$log" | head -n 12
    [ "$rc" -eq 0 ] || { echo "M=$m: ncu failed ($rc): $(tail -n 1 "$log")"; status=1; }
  done
  return "$status"
}

cmd_bench() {
  local ms shape=all limit=120 more flag_tune schedule sections m out rc status=0
  parse_kernel_args bench all "$@"
  need_mtc bench
  [ -n "$CHECK" ] && return
  for m in $ms; do
    local args=()
    [ "$shape" = all ] || args+=(--graph "woq_m${m}_$shape")
    [ -z "$flag_tune" ] || args+=(--tune)
    out=$OUT/bench_m$m$(suffix "$shape" all)
    timeout "$limit" "$MTC" bench "bench/graphs/woq_m$m.graph" \
      ${args[@]+"${args[@]}"} ${more[@]+"${more[@]}"} --json \
      < /dev/null > "$out.json" 2> "$out.err"
    rc=$?
    [ -s "$out.err" ] || rm -f "$out.err"
    if [ "$rc" -ne 0 ]; then
      echo "M=$m: mtc bench failed ($rc): $(tail -n 1 "$out.err" 2> /dev/null)"
      status=1
      continue
    fi
    python3 - "$out.json" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{d['device']}: read ceiling {d['read_ceiling_gbs']:.0f} GB/s, "
      f"launch floor {d.get('launch_floor_us', float('nan')):.2f} us")
for g in d["graphs"]:
    for k in g["kernels"]:
        print(f"  {g['graph']:<26} {k['schedule']:<40} {k['median_us']:8.2f} us "
              f"{k['gbs']:6.0f} GB/s {k['pct_of_read_ceiling']:5.1f}% "
              f"regs {k['registers']}")
PY
  done
  return "$status"
}

cmd_tests() {
  local a
  for a in "$@"; do
    case $a in -h | --help) cd "$ROOT" && python3 -m pytest --help; exit ;; esac
  done
  [ -n "$CHECK" ] && return
  python3 -m pytest -q -rs -p no:cacheprovider tests/python "$@" 2>&1 |
    tee "$OUT/tests.txt"
}

cmd_routing() {
  tool_help bench/e2e/routing.py "$@"
  [ -n "$CHECK" ] && return
  python3 bench/e2e/routing.py --out "$OUT" "$@" 2>&1 | tee "$OUT/routing.txt"
}

cmd_e2e() {
  tool_help bench/e2e/gpt_fast.py "$@"
  need_path e2e "$GPT_FAST" "gpt-fast folder"
  [ -n "$CHECK" ] && return
  python3 bench/e2e/gpt_fast.py --gpt-fast "$GPT_FAST" --out "$OUT" "$@" 2>&1 |
    tee "$OUT/e2e.txt"
}

cmd_grid() {
  local ms="" shapes=8192x8192 template=() s
  while [ $# -gt 0 ]; do
    case $1 in
    --ms) ms=$(value "$1" "${2-}") || exit 2; shift 2 ;;
    --shapes) shapes=$(value "$1" "${2-}") || exit 2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    -*) die "grid: unknown option $1" ;;
    *) template+=("$1"); shift ;;
    esac
  done
  [ -n "$ms" ] || die "grid needs --ms LIST"
  ms_list --ms "$ms" > /dev/null || exit 2
  for s in ${shapes//,/ }; do shape_arg --shapes "$s" "" > /dev/null || exit 2; done
  [ ${#template[@]} -gt 0 ] || die "grid needs a schedule TEMPLATE, e.g. 'mma w{4,8} r1 kw{1,4} v16 u2 mt32 sk1'"
  python3 - "$ms" "$shapes" "${template[*]}" << 'PY'
import itertools, re, sys
ms, shapes, template = sys.argv[1:]
choices = []
for tok in template.split():
    m = re.fullmatch(r"([^{}]*)\{([^{}]+)\}([^{}]*)", tok)
    if m:
        choices.append([m[1] + v + m[3] for v in m[2].split(",")])
    elif "{" in tok or "}" in tok:
        print(f"device.sh: grid: one {{a,b,...}} group a field, got '{tok}'",
              file=sys.stderr)
        sys.exit(2)
    else:
        choices.append([tok])
print(f"# bench/device.sh grid --ms {ms} --shapes {shapes} '{template}'")
for m in map(int, ms.split(",")):
    for shape in shapes.split(","):
        for combo in itertools.product(*choices):
            f = {}
            for tok in combo[1:]:
                t = re.fullmatch(r"([a-z]+)(\d+)", tok)
                if t:
                    f[t[1]] = int(t[2])
            if f.get("kw", 1) > f.get("w", f.get("kw", 1)) or f.get("mt", 1) > m:
                continue
            print(m, shape, " ".join(combo))
PY
}

# --- the command line

OUT_DIR=${OUT:-} MTC=.device/bin/mtc RUNTIME=.device/lib/libmtc_runtime.so
GPT_FAST=.device/gpt-fast CACHE="" DRY_RUN="" CHECK=""
mtc_given="" runtime_given="" gpt_given=""
while [ $# -gt 0 ]; do
  case $1 in
  -h | --help | help) usage; exit 0 ;;
  -n | --dry-run) DRY_RUN=1; shift ;;
  --out | --mtc | --runtime | --gpt-fast | --cache)
    v=$(value "$1" "${2-}") || exit 2
    v=$(abspath "$v")
    case $1 in
    --out) OUT_DIR=$v ;;
    --mtc) MTC=$v mtc_given=1 ;;
    --runtime) RUNTIME=$v runtime_given=1 ;;
    --gpt-fast) GPT_FAST=$v gpt_given=1 ;;
    --cache) CACHE=$v ;;
    esac
    shift 2 ;;
  -*) die "unknown option $1" ;;
  *) break ;;
  esac
done
[ -n "$mtc_given" ] || MTC=$ROOT/$MTC
[ -n "$runtime_given" ] || RUNTIME=$ROOT/$RUNTIME
[ -n "$gpt_given" ] || GPT_FAST=$ROOT/$GPT_FAST
[ $# -gt 0 ] || { usage >&2; exit 2; }
if [ "$1" = grid ]; then
  shift
  cmd_grid "$@"
  exit
fi

# Split the rest into steps: a sub-command and the arguments up to the next.
names=() starts=() counts=() args=()
while [ $# -gt 0 ]; do
  is_cmd "$1" || die "unknown sub-command '$1'"
  names+=("$1") starts+=("${#args[@]}")
  shift
  n=0
  while [ $# -gt 0 ] && ! is_cmd "$1"; do args+=("$1"); shift; n=$((n + 1)); done
  counts+=("$n")
done
step() {  # INDEX: run step INDEX (or check it, with CHECK set)
  "cmd_${names[$1]}" ${args[@]+"${args[@]:${starts[$1]}:${counts[$1]}}"}
}

CHECK=1
for i in "${!names[@]}"; do step "$i"; done
[ -n "$OUT_DIR" ] || die "no results folder: give --out DIR or set OUT"
if [ -n "$DRY_RUN" ]; then
  echo "mtc: $MTC"
  echo "results: $OUT_DIR"
  for i in "${!names[@]}"; do
    printf '%s' "${names[$i]}"
    [ "${counts[$i]}" -eq 0 ] ||
      for a in "${args[@]:${starts[$i]}:${counts[$i]}}"; do
        if [[ -z $a || $a =~ [^A-Za-z0-9_./:,=@%+-] ]]; then printf " '%s'" "$a"
        else printf ' %s' "$a"; fi
      done
    echo
  done
  exit 0
fi
CHECK=""

cd "$ROOT" || exit 2
OUT=$OUT_DIR
mkdir -p "$OUT" || exit 2
export MTC_BINARY=$MTC PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
[ ! -e "$RUNTIME" ] || export MTC_RUNTIME_LIBRARY=$RUNTIME
[ -z "$CACHE" ] || export MTC_CACHE_DIR=$CACHE
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu \
    --format=csv,noheader
  python3 -c 'import torch, triton
print("torch", torch.__version__, "triton", triton.__version__)'
} 2>&1 | tee "$OUT/gpu.txt"
status=0
for i in "${!names[@]}"; do
  echo "== ${names[$i]}"
  step "$i" || status=1
done
exit $status
