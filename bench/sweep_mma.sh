#!/usr/bin/env bash
# Sweeps tensor-core schedules of the 8192x8192 int8 linear at large M, to
# see how far the tuner's winners are from the best schedule the emitter can
# make (bench/results/2026-11-29-rerun/ANALYSIS.md). Illegal schedules are
# reported as such by mtc.
#   bench/sweep_mma.sh MTC OUT [M...]
set -u
MTC=$1 OUT=$2; shift 2
mkdir -p "$OUT"
for m in ${@:-128 32 256}; do
  for r in 1 2 4; do for mt in 32 64; do for w in 4 8 16; do for kw in 1 4; do
    [ "$kw" -le "$w" ] && [ "$mt" -le "$m" ] &&
      echo "$m 8192x8192 mma w$w r$r kw$kw v16 u2 mt$mt sk1"
  done; done; done; done
done | "$(dirname "$0")/mma_points.sh" "$MTC" | tee "$OUT/sweep_mma.txt"
