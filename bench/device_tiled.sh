#!/usr/bin/env bash
# One device call for the tiled (shared-memory, cp.async) tensor-core kind:
# the GPU test matrix, the heuristic start and a coordinate-descent tune of
# the 8192x8192 int8 linear at M = 32..256, and a few fixed schedules.
#   bench/device_tiled.sh MTC OUT [M...]
set -u
MTC=$1 OUT=$2; shift 2
MS=${*:-32 64 128 256}
export MTC_CACHE_DIR=/tmp/mtc-cache
mkdir -p "$OUT"
here=$(dirname "$0")
if [ -z "${SKIP_GPU_TESTS:-}" ]; then
  echo "== gpu tests"
  timeout 240 python3 tests/gpu/gpu_tests.py --mtc "$MTC" --out "$OUT" 2>&1 | tail -8
fi
echo "== heuristic and fixed points"
{
  for m in $MS; do echo "$m 8192x8192 heuristic"; done
  [ -n "${POINTS:-}" ] && cat "$POINTS"
} | "$here/mma_points.sh" "$MTC" | tee "$OUT/points.txt"
echo "== tune"
for m in $MS; do
  timeout "${TUNE_SECONDS:-90}" "$MTC" tune bench/graphs/woq_m$m.graph \
    --graph woq_m${m}_8192x8192 --verbose > "$OUT/tune_m$m.txt" 2>&1
  echo "M=$m: $(grep -E 'best|tuned' "$OUT/tune_m$m.txt" | tail -1)"
done
for m in ${NCU_MS:-}; do
  echo "== ncu M=$m (heuristic schedule)"
  timeout 90 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section ComputeWorkloadAnalysis --section Occupancy -c 1 \
    "$MTC" run bench/graphs/woq_m$m.graph --graph woq_m${m}_8192x8192 > "$OUT/ncu_m$m.txt" 2>&1
  grep -E "Duration|DRAM Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc A" "$OUT/ncu_m$m.txt" | head -10
done
