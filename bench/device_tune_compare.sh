#!/usr/bin/env bash
# One device call for the autotuner and the side-by-side comparison:
#   bench/device_tune_compare.sh MTC OUT [compare.py args...]
# Writes OUT/compare/{results.jsonl,results.json,results.md,plot.png},
# OUT/heuristic_m1.json and OUT/ncu.txt.
set -u
MTC=$1
OUT=$2
shift 2
export MTC_CACHE_DIR=/tmp/mtc-cache
mkdir -p "$OUT"
echo "== heuristic schedules, M=1"
timeout 120 "$MTC" bench bench/graphs/woq_m1.graph --json > "$OUT/heuristic_m1.json" 2>&1
python3 -c "
import json,sys; d=json.load(open('$OUT/heuristic_m1.json'))
print('ceiling', round(d['read_ceiling_gbs']), 'GB/s, launch floor', round(d['launch_floor_us'],2), 'us')
[print(' ', g['graph'], round(k['median_us'],2), k['schedule']) for g in d['graphs'] for k in g['kernels']]" || true
echo "== compare"
python3 bench/compare.py --mtc "$MTC" --out "$OUT/compare" "$@"
echo "== ncu, tuned 8192x8192 M=1"
timeout 120 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
  --section WarpStateStats --section Occupancy --section LaunchStats -c 1 \
  "$MTC" run bench/graphs/woq_m1.graph --graph woq_m1_8192x8192 --tune > "$OUT/ncu.txt" 2>&1
grep -E "Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers|Stall|Warp Cycles" "$OUT/ncu.txt" | head -30
