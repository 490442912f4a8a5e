#!/usr/bin/env bash
# The final device calls.
#   bench/device_final.sh mtc MTC OUT [MERGE.jsonl]   GPU tests, then mtc's
#       half of compare.py (with MERGE's rows, e.g. an earlier PyTorch half)
#   bench/device_final.sh torch MTC OUT MERGE.jsonl   PyTorch's half, merged
# TUNE_SPEC, MAX_PROBES and BUDGET_S override the mtc half's tuning.
set -u
PART=$1
MTC=$2
OUT=$3
export MTC_CACHE_DIR=/tmp/mtc-cache
MS=1,2,4,8,16,32,64,128,256
mkdir -p "$OUT"
if [ "$PART" = mtc ]; then
  echo "== gpu tests"
  timeout 200 python3 tests/gpu/gpu_tests.py --mtc "$MTC" --out "$OUT" 2>&1 | tail -12
  echo "== compare: mtc"
  merge=()
  [ -n "${4:-}" ] && merge=(--merge "$4")
  python3 bench/compare.py --mtc "$MTC" --out "$OUT/compare" --ms $MS \
    --systems mtc --tune-spec "${TUNE_SPEC:-1:all,16:all,*:8192x8192}" \
    --max-probes "${MAX_PROBES:-0}" --budget-s "${BUDGET_S:-330}" "${merge[@]}" 2>&1 | grep -v "^|"
else
  python3 bench/compare.py --mtc "$MTC" --out "$OUT/compare" --ms $MS \
    --systems eager,cublas_bf16,inductor,inductor_cd,max_autotune \
    --inductor-ms 1,16,128 --max-autotune-ms 1 --budget-s 480 --merge "$4" 2>&1 | tail -80
fi
