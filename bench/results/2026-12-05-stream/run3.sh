#!/bin/bash
# Device call 3 (2026-12-05): the final build (tail, evict_first, tiled at
# M = 9-16 where its blocks fill a wave): correctness, int4 at M = 16 both
# kinds, and the zoo at M = 16 (int8) and M = 1, 16 (int4).
cd "$(dirname "$0")/../.." || exit 2
O=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv > $O/gpu.txt
bench/device.sh --out $O/mt matrix --quick --budget-s 150 > $O/mt.log 2>&1
bench/device.sh --out $O/q points --weights int4 .device/exp/int4-m16.txt > $O/q.log 2>&1
bench/device.sh --out $O/z8 zoo --weights int8 --ms 16 --piece 1/1 --budget-s 150 > $O/z8.log 2>&1
bench/device.sh --out $O/z4 zoo --weights int4 --ms 1,16 --piece 1/1 --budget-s 170 > $O/z4.log 2>&1
cd $O && tar czf all.tgz *
