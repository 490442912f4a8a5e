#!/usr/bin/env bash
# One device call: the GPU test matrix, then the heuristic schedules on
# 8192x8192 at every batch size, then a small schedule sweep at M = 16.
#   bench/device_mma_check.sh MTC OUT
set -u
MTC=$1
OUT=$2
mkdir -p "$OUT"
echo "== gpu tests"
timeout 300 python3 tests/gpu/gpu_tests.py --mtc "$MTC" --out "$OUT" 2>&1 | tail -25
echo "== heuristic, 8192x8192"
for m in 1 2 4 8 16 32 64 128 256; do
  timeout 60 "$MTC" bench bench/graphs/woq_m$m.graph --graph woq_m${m}_8192x8192 --replays 10 2>&1 \
    | grep "_k0" | sed "s/^/M=$m /"
done | tee "$OUT/heuristic_8192.txt"
echo "== sweep M=16 8192x8192"
for s in "mma w16 r1 kw8 v16 u2 mt16 sk1" "mma w8 r1 kw8 v16 u2 mt16 sk1" "mma w8 r1 kw4 v16 u4 mt16 sk1" \
         "mma w4 r1 kw4 v16 u4 mt16 sk1" "mma w8 r2 kw4 v16 u2 mt16 sk1" "mma w16 r1 kw8 v16 u4 mt16 sk1 rg128" \
         "mma w8 r1 kw4 v16 u2 mt16 sk2" "mma w4 r1 kw2 v16 u4 mt16 sk4"; do
  r=$(timeout 60 "$MTC" bench bench/graphs/woq_m16.graph --graph woq_m16_8192x8192 --schedule "0=$s" --replays 10 2>&1 | grep "_k0" | awk '{print $(NF-3), $(NF-2), $(NF-1)}')
  echo "  [$s] $r"
done | tee "$OUT/sweep16.txt"
echo "== sweep M=128 8192x8192"
for s in "mma w4 r1 kw2 v16 u2 mt32 sk1" "mma w8 r2 kw2 v16 u1 mt64 sk1" "mma w4 r2 kw1 v16 u2 mt32 sk1" "mma w8 r1 kw4 v16 u2 mt32 sk1"; do
  r=$(timeout 60 "$MTC" bench bench/graphs/woq_m128.graph --graph woq_m128_8192x8192 --schedule "0=$s" --replays 10 2>&1 | grep "_k0" | awk '{print $(NF-3), $(NF-2), $(NF-1)}')
  echo "  [$s] $r"
done | tee "$OUT/sweep128.txt"
