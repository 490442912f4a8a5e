#!/bin/bash
# Device call 2 (2026-12-05): the L1 evict_first hint on the zoo at M = 16,
# int4 both ways, the M = 16 kind tests, and gpt-fast e2e with the hint.
cd "$(dirname "$0")/../.." || exit 2
O=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv > $O/gpu.txt
for h in 0 3; do
  MTC_STREAM_HINT=$h bench/device.sh --out $O/q$h points --weights int4 .device/exp/int4-points2.txt > $O/q$h.log 2>&1
done
MTC_STREAM_HINT=3 bench/device.sh --out $O/m16 points .device/exp/m16-points.txt > $O/m16.log 2>&1
MTC_STREAM_HINT=3 bench/device.sh --out $O/z3 zoo --weights int8 --ms 16 --piece 1/1 --budget-s 200 > $O/z3.log 2>&1
cd $O && tar czf all.tgz *
