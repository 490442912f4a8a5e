#!/usr/bin/env bash
# Times given schedules of the suite's int8 linears with `mtc bench` (cold
# L2, CUDA-graph replays). Each line of stdin: "M NxK SCHEDULE", where
# SCHEDULE is a schedule string or "heuristic" (mtc's own start).
#   bench/mma_points.sh MTC < points
set -u
MTC=$1
while read -r m shape s; do
  case "$m" in ''|\#*) continue ;; esac
  args=()
  [ "$s" = heuristic ] || args=(--schedule "0=$s")
  t=$("$MTC" bench bench/graphs/woq_m$m.graph --graph "woq_m${m}_$shape" \
        "${args[@]}" --json 2>&1 |
      python3 -c 'import json,sys; d=json.load(sys.stdin); k=d["graphs"][0]["kernels"][0]; print(round(k["median_us"],1), "us", k["schedule"], k["registers"], "regs", k["local_bytes"], "local")' 2>&1 | tail -1)
  echo "$m | $shape | $s | $t"
done
