#!/usr/bin/env bash
# Times given tensor-core schedules of the 8192x8192 int8 linear, each line of
# stdin "M SCHEDULE", with `mtc bench` (cold L2, CUDA-graph replays).
#   bench/mma_points.sh MTC < points
set -u
MTC=$1
while read -r m s; do
  [ -n "$m" ] || continue
  t=$("$MTC" bench bench/graphs/woq_m$m.graph --graph woq_m${m}_8192x8192 \
        --schedule "0=$s" --json 2>&1 |
      python3 -c 'import json,sys; d=json.load(sys.stdin); k=d["graphs"][0]["kernels"][0]; print(round(k["median_us"],1), "us", k["registers"], "regs", k["local_bytes"], "local")' 2>&1 | tail -1)
  echo "$m | $s | $t"
done
