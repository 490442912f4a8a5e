#!/usr/bin/env bash
# The last device call: GPU tests on the final code, the cached-rerun time,
# ncu profiles of the tensor-core kernels, and a real out-of-memory.
#   bench/device_last.sh MTC OUT
set -u
MTC=$1
OUT=$2
export MTC_CACHE_DIR=/tmp/mtc-cache
mkdir -p "$OUT"
echo "== gpu tests"
timeout 240 python3 tests/gpu/gpu_tests.py --mtc "$MTC" --out "$OUT" 2>&1 | tail -6
echo "== cached re-run"
"$MTC" tune examples/woq_int8_linear.graph 2>&1 | tail -1
for i in 1 2 3; do
  /usr/bin/time -f "compile --tune (cached): %e s" "$MTC" compile examples/woq_int8_linear.graph --tune -o /tmp/o > /dev/null
done 2>&1 | tee "$OUT/cached.txt"
echo "== real out-of-memory"
printf 'graph huge(x: bf16[1, 400000], w: i8[400000, 400000]) -> bf16[1, 400000] {\n  wf = convert(w, bf16)\n  y = linear(x, wf)\n  return y\n}\n' > /tmp/huge.graph
"$MTC" run /tmp/huge.graph > /tmp/huge.log 2>&1; rc=$?; tail -2 /tmp/huge.log; echo "exit=$rc"
echo "== ncu: mma kernels, 8192x8192"
for m in 16 128; do
  timeout 90 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section WarpStateStats -c 1 "$MTC" run bench/graphs/woq_m$m.graph --graph woq_m${m}_8192x8192 \
    > "$OUT/ncu_m$m.txt" 2>&1
  echo "M=$m"; grep -E "Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|Registers|Achieved Occupancy" "$OUT/ncu_m$m.txt" | head -8
  grep -A3 "Est. Local Speedup" "$OUT/ncu_m$m.txt" | head -4
done
