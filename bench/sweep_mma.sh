#!/usr/bin/env bash
# Sweeps tensor-core schedules of the 8192x8192 int8 linear at large M, to
# see how far the tuner's winners are from the best schedule the emitter can
# make (bench/results/.../ANALYSIS.md). Illegal schedules are reported as
# such by mtc and skipped.
#   bench/sweep_mma.sh MTC OUT [M...]
set -u
MTC=$1 OUT=$2; shift 2
mkdir -p "$OUT"
for m in ${@:-128 32 256}; do
  for r in 1 2 4; do for mt in 32 64; do for w in 4 8 16; do for kw in 1 4; do
    for vu in "16 2"; do
      set -- $vu; v=$1 u=$2
      [ "$kw" -le "$w" ] || continue
      [ "$mt" -le "$m" ] || continue
      s="mma w$w r$r kw$kw v$v u$u mt$mt sk1"
      t=$("$MTC" bench bench/graphs/woq_m$m.graph --graph woq_m${m}_8192x8192 \
            --schedule "0=$s" --json 2>/dev/null |
          python3 -c 'import json,sys; d=json.load(sys.stdin); k=d["graphs"][0]["kernels"][0]; print(round(k["median_us"],1), "us", k["registers"], "regs", k["local_bytes"], "local")' 2>/dev/null)
      echo "$m | $s | ${t:-illegal}"
    done
  done; done; done; done
done | tee "$OUT/sweep_mma.txt"
