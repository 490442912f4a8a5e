#!/bin/bash
# Device call 1 (2026-12-05): the K-tail fix and the weight-stream load hints.
cd "$(dirname "$0")/../.." || exit 2
O=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.max.mem --format=csv > $O/gpu.txt
bench/device.sh --out $O/mt matrix --only 'tail' --timeout 60 > $O/mt.log 2>&1
for h in 0 1 2 3; do
  MTC_STREAM_HINT=$h bench/device.sh --out $O/p$h points .device/exp/hint-points.txt > $O/p$h.log 2>&1
  MTC_STREAM_HINT=$h bench/device.sh --out $O/q$h points --weights int4 .device/exp/int4-points.txt > $O/q$h.log 2>&1
done
MTC_STREAM_HINT=0 bench/device.sh --out $O/z zoo --weights int8 --ms 1,16 --piece 1/1 --budget-s 300 > $O/z.log 2>&1
cd $O && tar czf all.tgz * 
