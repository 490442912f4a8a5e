#!/usr/bin/env bash
# shellcheck disable=SC2317  # the cmd_* functions are called as "cmd_$name"
# bench/device.sh: the one driver for measurements on the GPU machine (the
# H200 that the device tool lends; bench/README.md says how to get there).
#
#   bench/device.sh [OPTIONS] SUB-COMMAND [ARGS] [SUB-COMMAND [ARGS]]...
#   bench/device.sh grid --ms LIST [--shapes LIST] TEMPLATE   (no GPU)
#   bench/device.sh --help | SUB-COMMAND --help   (no GPU; matrix, compare,
#                                  tests, routing, ffn, hf, e2e, zoo show their tool's help)
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
#                    --quick, --timeout S per file, --only REGEX; the int4
#                    cases: --only '^int4_'; --budget-s S: start no file
#                    after S seconds) -> gpu_summary.json, gpu_log.txt,
#                    matrix.txt
#   compare [ARGS]   bench/compare.py --mtc MTC --out OUT/compare ARGS:
#                    mtc and the PyTorch baselines side by side (int4:
#                    --weights int4 --group G, against tinygemm and bf16
#                    cuBLAS, with the int4 targets) ->
#                    compare/results.{jsonl,json,md}, plot.png; compare.txt
#   points FILE...   time the schedule points of FILE (`-`: stdin) with
#                    `mtc bench` on the suite's int8 layer at any M and N x K
#                    (compare.py's graph; --weights int4: gpt-fast's int4
#                    layer, groups of 128): one "M NxK SCHEDULE" a line, SCHEDULE a
#                    schedule string or `heuristic`, `#` comments ->
#                    appended to points.txt as "M | NxK | SCHEDULE | time"
#                    [--replays N] [--limit S per point, default 120]
#                    [--arch ARCH: mtc's --arch for every point; default
#                    sm_90a for wgmma schedules, mtc's own otherwise]
#                    [--check: `mtc run --check` each point first (fp64 on
#                    the CPU), time only those that pass; `mtc bench` alone
#                    does not compare outputs]
#   tune --ms LIST   `mtc tune --verbose` -> tune_m<M>.txt [--shape NxK|all,
#                    default 8192x8192] [--max-probes N] [--force]
#                    [--limit S per M, default 90: a budget, not a failure]
#                    [--arch ARCH] [--weights int4: gpt-fast's int4 layer,
#                    groups of 128, at one --shape -> tune_m<M>[_NxK]_int4.txt]
#   ncu --ms LIST    Nsight Compute profile of one kernel (`mtc run`, -c 1)
#                    -> ncu_m<M>.txt [--shape NxK, default 8192x8192]
#                    [--schedule 'SCHEDULE' | --tune (tunes first, then
#                    profiles the cached winner)] [--sections A,B,...,
#                    default SpeedOfLight,MemoryWorkloadAnalysis,
#                    WarpStateStats,ComputeWorkloadAnalysis,Occupancy]
#                    [--limit S, default 90] [--arch ARCH, default sm_90a
#                    for a wgmma --schedule, else mtc's: the heuristic's
#                    kernel on sm_90a needs --arch sm_90a]
#   bench --ms LIST  `mtc bench --json` of the suite -> bench_m<M>.json
#                    (read ceiling, launch floor, every kernel) [--shape
#                    NxK|all, default all] [--tune] [--replays N]
#                    [--limit S, default 120] [--arch ARCH]
# PyTorch integration (python/mtc; bench/e2e/README.md):
#   tests [ARGS]     python/mtc's pytest suite, GPU tests included, with
#                    pytest ARGS -> tests.txt
#   routing [ARGS]   bench/e2e/routing.py --out OUT ARGS: mtc against
#                    dequantise + cuBLAS at large M -> routing.{jsonl,md,txt}
#   ffn [ARGS]       bench/e2e/ffn_block.py --out OUT ARGS: a Llama-3-8B
#                    feed-forward half (norm, SwiGLU, residual) as
#                    Inductor, mtc's linears in Inductor, and mtc's fused
#                    graph -> ffn.{jsonl,md,txt}
#   hf [ARGS]        bench/e2e/hf_llama.py --out OUT ARGS: Hugging Face
#                    Llama generate() in bf16, PyTorch's int8 and mtc's
#                    int8 (plain and fused) and int4 -> hf.{jsonl,md,txt}
#   e2e [ARGS]       bench/e2e/gpt_fast.py --gpt-fast DIR --out OUT ARGS:
#                    gpt-fast's int8 Llama (int4: --mode int4 --groupsize
#                    G) as shipped and on mtc kernels ->
#                    results.{jsonl,md}, plot.png, e2e.txt
# The shape zoo (issue 25; bench/zoo.py):
#   zoo --piece I/N [ARGS]
#                    bench/zoo.py run --mtc MTC --out OUT ARGS: piece I of
#                    the zoo's N (17 public configurations' linears and 20
#                    random shapes at M = 1 to 4096; mtc's heuristic with
#                    --arch sm_90a against bf16 cuBLAS and, int4, tinygemm),
#                    compare.py once per run of the piece ->
#                    zoo-<weights>-<I>of<N>/rows.jsonl, zoo.txt [--weights
#                    int8|int4, default int8] [--ms LIST, default 1,2,...,
#                    4096] [--piece-s S: estimated seconds per piece, default
#                    420] [--budget-s S: start no measurement after S,
#                    default 450] [--systems LIST: only these] [--tinygemm-
#                    max-m M, default 256]. `python3 bench/zoo.py plan
#                    --weights W` lists the pieces (N depends on --weights,
#                    --ms, --piece-s, --tinygemm-max-m); `bench/zoo.py
#                    report OUT...` merges them into zoo.{md,json,png}
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
#   bench/device.sh matrix --only '^int4_' --timeout 60 --budget-s 240
#   bench/device.sh compare --weights int4 --group 128 --systems \
#       mtc,tinygemm,cublas_bf16 --ms 1,2,4,8,16,32,64,128,256 --tune-spec "" \
#       --arch sm_90a --budget-s 270
#   bench/device.sh e2e --mode int4 --groupsize 128 --systems mtc,gpt-fast \
#       --batches 1,8 --prefill 512 --no-tune
#   bench/device.sh zoo --weights int8 --piece 1/15
#   bench/device.sh zoo --weights int4 --piece 1/21
set -uo pipefail

CALLER=$PWD
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd) || exit 2
SUBCOMMANDS=" matrix compare points tune ncu bench tests routing ffn hf e2e zoo "
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
# tool_args TOOL ARGS: the tool's own check of its arguments (--check-args:
# argparse and the tool's checks, nothing run), before any sub-command runs.
tool_args() {
  local tool=$1 name=$2
  shift 2
  (cd "$ROOT" && python3 "$tool" "$@" --check-args >/dev/null) ||
    die "$name: the arguments above are not $tool's"
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
  if [ -n "$CHECK" ]; then
    tool_args tests/gpu/gpu_tests.py matrix --mtc "$MTC" "$@"
    return
  fi
  python3 tests/gpu/gpu_tests.py --mtc "$MTC" --out "$OUT" "$@" 2>&1 |
    tee "$OUT/matrix.txt"
}

cmd_compare() {
  tool_help bench/compare.py "$@"
  if [ -n "$CHECK" ]; then
    tool_args bench/compare.py compare --mtc "$MTC" --out "$ROOT/.check" "$@"
    return
  fi
  python3 bench/compare.py --mtc "$MTC" --out "$OUT/compare" "$@" 2>&1 |
    tee "$OUT/compare.txt"
}

# The kernel suite's sub-commands (points, tune, ncu, bench) and grid.
# shellcheck source=bench/device_kernels.sh
source "$ROOT/bench/device_kernels.sh" || exit 2

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

cmd_ffn() {
  tool_help bench/e2e/ffn_block.py "$@"
  [ -n "$CHECK" ] && return
  python3 bench/e2e/ffn_block.py --out "$OUT" "$@" 2>&1 | tee "$OUT/ffn.txt"
}

cmd_hf() {
  tool_help bench/e2e/hf_llama.py "$@"
  [ -n "$CHECK" ] && return
  python3 bench/e2e/hf_llama.py --out "$OUT" "$@" 2>&1 | tee "$OUT/hf.txt"
}

cmd_e2e() {
  tool_help bench/e2e/gpt_fast.py "$@"
  need_path e2e "$GPT_FAST" "gpt-fast folder"
  if [ -n "$CHECK" ]; then
    tool_args bench/e2e/gpt_fast.py e2e --gpt-fast "$GPT_FAST" --out "$ROOT/.check" "$@"
    return
  fi
  python3 bench/e2e/gpt_fast.py --gpt-fast "$GPT_FAST" --out "$OUT" "$@" 2>&1 |
    tee "$OUT/e2e.txt"
}

cmd_zoo() {
  local a
  for a in "$@"; do
    case $a in -h | --help) cd "$ROOT" && python3 bench/zoo.py run --help; exit ;; esac
  done
  need_mtc zoo
  if [ -n "$CHECK" ]; then
    # The tool's check: argparse, --piece against the plan's pieces, and
    # (shown with -n) the piece's runs.
    if [ -n "$DRY_RUN" ]; then
      (cd "$ROOT" && python3 bench/zoo.py run --mtc "$MTC" --out "$ROOT/.check" \
        "$@" --check-args) >&2
    else
      (cd "$ROOT" && python3 bench/zoo.py run --mtc "$MTC" --out "$ROOT/.check" \
        "$@" --check-args) >/dev/null
    fi || die "zoo: the arguments above are not bench/zoo.py run's"
    return
  fi
  python3 bench/zoo.py run --mtc "$MTC" --out "$OUT" "$@"
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
