#!/usr/bin/env bash
# Runs every test of mtc: builds (incrementally), then ctest runs the
# GoogleTest units, lit (dialects, passes, command line, PTX), the GPU test
# matrix (skipped, with the reason, where there is no GPU) and the ptxas
# no-spill check (where the CUDA toolkit is installed).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${MTC_BUILD_DIR:-build}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja
fi
cmake --build "$build"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
# Say why tests were skipped (ctest only says that they were).
grep -h "^SKIP:" "$build/Testing/Temporary/LastTest.log" 2>/dev/null || true
