# shellcheck shell=bash disable=SC2317
# bench/device_kernels.sh: bench/device.sh's sub-commands for the kernel
# suite (points, tune, ncu, bench) and `grid`; sourced by device.sh, whose
# header documents them and whose helpers (die, number, value, ms_list,
# shape_arg, suffix, need_mtc, usage) and settings (MTC, OUT, CHECK, ROOT,
# NCU_SECTIONS) they use.

# strip_comment TEXT: TEXT without a trailing `# comment` and the blanks
# before it.
strip_comment() {
  local s=${1%%#*}
  printf '%s' "${s%"${s##*[![:space:]]}"}"
}

# check_points FILE: every line is "M NxK SCHEDULE", a comment or blank.
check_points() {
  local n=0 m shape s
  [ -r "$1" ] || die "points: cannot read $1"
  while read -r m shape s; do
    n=$((n + 1))
    case $m in '' | \#*) continue ;; esac
    s=$(strip_comment "$s")
    [[ $m =~ ^[1-9][0-9]*$ && $shape =~ ^[1-9][0-9]*x[1-9][0-9]*$ && -n $s ]] ||
      die "points: $1:$n: expected 'M NxK SCHEDULE' or 'M NxK heuristic'"
  done < "$1"
}

# layer_graph M NxK WEIGHTS: the suite's int8 layer, or gpt-fast's int4 one
# with groups of 128, at any M and shape (compare.py's graphs).
layer_graph() {
  python3 -c 'import sys; sys.path.insert(0, "bench"); import compare
n, k = map(int, sys.argv[2].split("x"))
print(compare.graph_text(int(sys.argv[1]), n, k, sys.argv[3]))' "$1" "$2" "$3"
}

cmd_points() {
  local limit=120 replays="" arch="" weights=int8 check="" files=() f
  while [ $# -gt 0 ]; do
    case $1 in
    --limit) limit=$(number "$1" "${2-}") || exit 2; shift 2 ;;
    --check) check=1; shift ;;
    --arch) arch=$(arch_arg "$1" "$(value "$1" "${2-}")") || exit 2; shift 2 ;;
    --weights)
      weights=$(value "$1" "${2-}") || exit 2
      case $weights in int8 | int4) ;; *) die "points: --weights takes int8 or int4, got '$weights'" ;; esac
      shift 2 ;;
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
  local err graph m shape s t rc args
  err=$(mktemp) || return 1
  graph=$(mktemp --suffix=.graph) || return 1
  for f in "${files[@]}"; do
    if [ "$f" = - ]; then cat; else cat "$f"; fi
  done | while read -r m shape s; do
    case $m in '' | \#*) continue ;; esac
    s=$(strip_comment "$s")
    args=()
    [ "$s" = heuristic ] || args=(--schedule "0=$s")
    if [ -n "$arch" ]; then args+=(--arch "$arch")
    else case $s in wgmma*) args+=(--arch sm_90a) ;; esac; fi
    layer_graph "$m" "$shape" "$weights" > "$graph"
    # --check: the point's outputs against fp64 first (`mtc run --check`,
    # outputs poisoned); `mtc bench` alone does not compare them.
    if [ -n "$check" ] && ! timeout "$limit" "$MTC" run "$graph" --check \
        ${args[@]+"${args[@]}"} < /dev/null > "$err" 2>&1; then
      echo "$m | $shape | $s | check failed: $(tail -n 1 "$err")"
      continue
    fi
    [ -z "$replays" ] || args+=(--replays "$replays")
    if t=$(timeout "$limit" "$MTC" bench "$graph" ${args[@]+"${args[@]}"} \
          --json < /dev/null 2> "$err"); then
      t=$(printf '%s' "$t" | python3 -c 'import json, sys
d = json.load(sys.stdin); k = d["graphs"][0]["kernels"][0]
print(round(k["median_us"], 1), "us", k["schedule"], k["registers"], "regs",
      k["local_bytes"], "local")')${check:+, checked}
    else
      rc=$?
      if [ "$rc" -eq 124 ]; then t="timed out after $limit s"
      else t=$(tail -n 1 "$err"); fi  # mtc's error, such as an illegal schedule
    fi
    echo "$m | $shape | $s | $t"
  done | tee -a "$OUT/points.txt"
  rc=$?
  rm -f "$err" "$graph"
  return "$rc"
}

# arch_arg OPTION VALUE: an mtc --arch value (sm_80, sm_89, sm_90, sm_90a).
arch_arg() {
  [[ $2 =~ ^sm_[0-9]+a?$ ]] || die "$1 needs an mtc --arch value such as sm_90a, got '$2'"
  printf '%s\n' "$2"
}

# parse_kernel_args SUB-COMMAND ALLOW_ALL ARGS: the arguments of tune, ncu
# and bench, into the caller's ms, shape, limit (defaults set by the caller),
# more (extra mtc arguments), flag_tune, schedule, sections and arch (mtc's
# --arch for every compile; empty: mtc's default, or sm_90a for a wgmma
# --schedule).
parse_kernel_args() {
  local cmd=$1 allow_all=$2 v
  shift 2
  ms="" more=() flag_tune="" schedule="" sections=$NCU_SECTIONS arch="" weights=int8
  while [ $# -gt 0 ]; do
    case $1 in
    --ms) ms=$(ms_list "$1" "$(value "$1" "${2-}")") || exit 2; shift 2 ;;
    --shape) shape=$(shape_arg "$1" "$(value "$1" "${2-}")" "$allow_all") || exit 2; shift 2 ;;
    --limit) limit=$(number "$1" "${2-}") || exit 2; shift 2 ;;
    --arch) arch=$(arch_arg "$1" "$(value "$1" "${2-}")") || exit 2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *)
      case "$cmd $1" in
      "tune --max-probes" | "bench --replays")
        v=$(number "$1" "${2-}") || exit 2
        more+=("$1" "$v"); shift 2 ;;
      "tune --force") more+=(--force); shift ;;
      "tune --weights")
        weights=$(value "$1" "${2-}") || exit 2
        case $weights in int8 | int4) ;; *) die "tune: --weights takes int8 or int4, got '$weights'" ;; esac
        shift 2 ;;
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
  local ms shape=8192x8192 limit=90 more flag_tune schedule sections arch weights m log rc status=0
  parse_kernel_args tune all "$@"
  [ "$weights" = int8 ] || [ "$shape" != all ] ||
    die "tune --weights int4 takes one --shape NxK, not all"
  need_mtc tune
  [ -n "$CHECK" ] && return
  local tmp
  tmp=$(mktemp --suffix=.graph) || return 1
  for m in $ms; do
    log=$OUT/tune_m$m$(suffix "$shape" 8192x8192)$(suffix "$weights" int8).txt
    local graph=("bench/graphs/woq_m$m.graph")
    if [ "$weights" = int4 ]; then
      layer_graph "$m" "$shape" int4 > "$tmp" || { status=1; continue; }
      graph=("$tmp")
    elif [ "$shape" != all ]; then
      graph+=(--graph "woq_m${m}_$shape")
    fi
    timeout "$limit" "$MTC" tune "${graph[@]}" ${arch:+--arch "$arch"} --verbose \
      ${more[@]+"${more[@]}"} \
      < /dev/null > "$log" 2>&1
    rc=$?
    # mtc tune's result lines: "KERNEL: SCHEDULE T us (heuristic ... x), ..."
    case $rc in
    0) echo "M=$m: $(grep -E '[(]heuristic ' "$log" | tail -n 1)" ;;
    124) echo "M=$m: stopped after $limit s: $(grep -E '[(]heuristic ' "$log" | tail -n 1)" ;;
    *) echo "M=$m: mtc tune failed ($rc): $(tail -n 1 "$log")"; status=1 ;;
    esac
  done
  rm -f "$tmp"
  return "$status"
}

cmd_ncu() {
  local ms shape=8192x8192 limit=90 more flag_tune schedule sections arch m log rc status=0
  parse_kernel_args ncu "" "$@"
  need_mtc ncu
  [ -n "$CHECK" ] && return
  command -v ncu > /dev/null || { echo "ncu: not on PATH"; return 1; }
  local sec=() run=() s
  for s in ${sections//,/ }; do sec+=(--section "$s"); done
  [ -z "$schedule" ] || run=(--schedule "0=$schedule")
  [ -z "$flag_tune" ] || run=(--tune)
  case $schedule in wgmma*) arch=${arch:-sm_90a} ;; esac
  [ -z "$arch" ] || run+=(--arch "$arch")
  local label=${schedule:-heuristic}
  [ -z "$flag_tune" ] || label=tuned
  for m in $ms; do
    local graph=("bench/graphs/woq_m$m.graph" --graph "woq_m${m}_$shape")
    log=$OUT/ncu_m$m$(suffix "$shape" 8192x8192).txt
    echo "== ncu M=$m $shape ($label)"
    if [ -n "$flag_tune" ]; then  # fill the cache, so -c 1 sees the winner
      timeout "$limit" "$MTC" tune "${graph[@]}" ${arch:+--arch "$arch"} \
        < /dev/null > /dev/null 2>&1 ||
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
  local ms shape=all limit=120 more flag_tune schedule sections arch m out rc status=0
  parse_kernel_args bench all "$@"
  need_mtc bench
  [ -n "$CHECK" ] && return
  for m in $ms; do
    local args=()
    [ "$shape" = all ] || args+=(--graph "woq_m${m}_$shape")
    [ -z "$flag_tune" ] || args+=(--tune)
    [ -z "$arch" ] || args+=(--arch "$arch")
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
