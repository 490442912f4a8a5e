#!/usr/bin/env bash
# mtc's PyTorch integration on the H200, through the device tool. The
# checkout must carry, in the git-ignored .device/ (bench/e2e/README.md):
#   .device/bin/mtc, .device/lib/libmtc_runtime.so   static build, stripped
#   .device/gpt-fast/                                a copy of gpt-fast
# Sub-commands; everything lands in $OUT (default /tmp/mtc-out):
#   tests               python/mtc's pytest suite, GPU tests included
#   routing [ARGS]      bench/e2e/routing.py: mtc vs dequantise + cuBLAS
#   e2e [ARGS]          bench/e2e/gpt_fast.py with ARGS
# Several may follow each other: h200.sh tests routing e2e --batches 1
set -uo pipefail
cd "$(dirname "$0")/../.."
export MTC_BINARY=$PWD/.device/bin/mtc
export MTC_RUNTIME_LIBRARY=$PWD/.device/lib/libmtc_runtime.so
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
OUT=${OUT:-/tmp/mtc-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem \
  --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -c 'import torch, triton; print("torch", torch.__version__,
"triton", triton.__version__)' | tee -a "$OUT/gpu.txt"
is_cmd() { [[ $1 == tests || $1 == routing || $1 == e2e ]]; }
status=0
while [ $# -gt 0 ]; do
  cmd=$1; shift
  case $cmd in
  tests)
    python3 -m pytest -q -rs -p no:cacheprovider tests/python \
      2>&1 | tee "$OUT/tests.txt" || status=1 ;;
  routing)
    args=(); while [ $# -gt 0 ] && ! is_cmd "$1"; do args+=("$1"); shift; done
    python3 bench/e2e/routing.py --out "$OUT" "${args[@]}" \
      2>&1 | tee "$OUT/routing.txt" || status=1 ;;
  e2e)
    args=(); while [ $# -gt 0 ] && ! is_cmd "$1"; do args+=("$1"); shift; done
    python3 bench/e2e/gpt_fast.py --gpt-fast .device/gpt-fast --out "$OUT" \
      "${args[@]}" 2>&1 | tee "$OUT/e2e.txt" || status=1 ;;
  *) echo "h200.sh: unknown sub-command '$cmd'" >&2; exit 2 ;;
  esac
done
exit $status
