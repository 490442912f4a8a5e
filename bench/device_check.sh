#!/usr/bin/env bash
# One device call: correctness matrix, benchmarks and a schedule sweep.
# Usage (on the GPU machine, from the repository root):
#   bench/device_check.sh MTC_BINARY OUT_DIR [quick]
set -u
MTC=$1
OUT=$2
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu \
  --format=csv > "$OUT/smi.txt" 2>&1
cat "$OUT/smi.txt"
echo "== example"
"$MTC" run examples/woq_int8_linear.graph --check 2>&1 | tee "$OUT/example.txt"
echo "== gpu tests"
timeout 400 python3 tests/gpu/gpu_tests.py --mtc "$MTC" --out "$OUT" ${3:+--quick} \
  2>&1 | tail -40
echo "== bench M=1, M=16"
for m in 1 16; do
  timeout 120 "$MTC" bench bench/graphs/woq_m$m.graph --json > "$OUT/bench_m$m.json" \
    2> "$OUT/bench_m$m.err"
  python3 - "$OUT/bench_m$m.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("bench failed:", e); sys.exit(0)
print(f"{d['device']} read ceiling {d['read_ceiling_gbs']:.0f} GB/s")
for g in d["graphs"]:
    for k in g["kernels"]:
        print(f"  {g['graph']:<22} {k['schedule']:<30} {k['median_us']:8.2f} us "
              f"{k['gbs']:6.0f} GB/s {k['pct_of_read_ceiling']:5.1f}% regs {k['registers']}")
PY
done
echo "== schedule sweep"
sweep() {  # graph-file graph schedules...
  local file=$1 graph=$2; shift 2
  for s in "$@"; do
    r=$(timeout 60 "$MTC" bench "$file" --graph "$graph" --schedule "0=$s" --replays 10 2>&1 \
        | grep "_k0" | awk '{print $(NF-3), $(NF-2), $(NF-1)}')
    echo "  $graph [$s] $r"
  done
}
sweep bench/graphs/woq_m1.graph woq_m1_8192x8192 \
  "simt w4 r2 u4" "simt w4 r1 u8" "simt w8 r2 u4" "simt w4 r4 u2" "simt w2 r4 u4" \
  "simt w8 r1 u4" "simt w4 r2 u8" "simt w16 r1 u4" "simt w4 r2 u4 v8" "simt w4 r2 u2 sk2" \
  2>&1 | tee "$OUT/sweep.txt"
sweep bench/graphs/woq_m1.graph woq_m1_4096x4096 \
  "simt w4 r2 u4" "simt w4 r1 u4" "simt w8 r1 u2" "simt w4 r1 u4 kw2 w8" \
  2>&1 | tee -a "$OUT/sweep.txt"
sweep bench/graphs/woq_m16.graph woq_m16_8192x8192 \
  "simt w4 r1 u1 mt8" "simt w4 r1 u1 mt16" "simt w4 r2 u1 mt8" "simt w8 r1 u2 mt4" \
  "simt w4 r1 u2 mt8" 2>&1 | tee -a "$OUT/sweep.txt"
