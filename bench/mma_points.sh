#!/usr/bin/env bash
# Times given schedules of the suite's int8 linears with `mtc bench` (cold
# L2, CUDA-graph replays). Each line of stdin: "M NxK SCHEDULE", where
# SCHEDULE is a schedule string or "heuristic" (mtc's own start).
#   bench/mma_points.sh MTC < points
set -u
MTC=$1
err=$(mktemp)
trap 'rm -f "$err"' EXIT
while read -r m shape s; do
  case "$m" in ''|\#*) continue ;; esac
  args=()
  [ "$s" = heuristic ] || args=(--schedule "0=$s")
  if out=$("$MTC" bench bench/graphs/woq_m$m.graph --graph "woq_m${m}_$shape" \
        "${args[@]}" --json 2>"$err"); then
    t=$(printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); k=d["graphs"][0]["kernels"][0]; print(round(k["median_us"],1), "us", k["schedule"], k["registers"], "regs", k["local_bytes"], "local")')
  else
    t=$(tail -n 1 "$err")  # mtc's error, such as an illegal schedule
  fi
  echo "$m | $shape | $s | $t"
done
