#!/usr/bin/env bash
# Runs every test of mtc:
#  1. builds (incrementally), then ctest runs the GoogleTest units, lit
#     (dialects, passes, command line, faults, PTX), the GPU test matrix
#     (skipped, with the reason, where there is no GPU) and the ptxas no-spill
#     check (where the CUDA toolkit is installed);
#  2. lit and the tuner's and timing unit tests again, with every core kept
#     busy (a test that passes only on an idle machine is a bug);
#  3. the same non-GPU suite built with AddressSanitizer and UBSan;
#  4. the graph-file fuzzer (libFuzzer, clang) for a bounded time.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${MTC_BUILD_DIR:-build}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja
fi
cmake --build "$build"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
# Say why tests were skipped (ctest only says that they were).
grep -h -e "^SKIP:" -e "^SKIPPED \[" "$build/Testing/Temporary/LastTest.log" \
  2>/dev/null || true

# --- a busy machine ---
# The tests whose outcome could hang on time run again while one spinning
# process per core competes for every core: lit (the tuner on the fake
# driver, the tuning cache under signals and racing writers) and the unit
# tests of the tuner, its cache and of compile and parse times (CPU time,
# bounded with wide margins). Tuning in tests is bounded by probe counts
# (tests/layout/check_layout.py checks every lit test that tunes).
spinners=()
stop_spinners() {
  if [ "${#spinners[@]}" -gt 0 ]; then
    kill "${spinners[@]}" 2>/dev/null || true
    wait "${spinners[@]}" 2>/dev/null || true
  fi
  spinners=()
}
trap stop_spinners EXIT
for _ in $(seq "$(nproc)"); do
  sh -c 'while :; do :; done' &
  spinners+=($!)
done
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" \
  -R '^(lit|layout|Tuner\.|TuneCache\.|LargeGraph\.|FrontendTest\.(ThousandsOfNodesParseFast|HugeLines))'
stop_spinners

# --- sanitizers ---
# The whole non-GPU suite again, built with AddressSanitizer and UBSan (GCC).
# Any report fails the run. Two ASan options keep out false positives that
# come from mixing mtc's instrumented code with Debian's uninstrumented LLVM:
# allow_user_poisoning=0 (LLVM's headers poison allocator memory in inlined
# code the libraries then use unannotated) and use_sigaltstack=0 (LLVM's
# signal handling replaces each thread's alternate signal stack, which ASan
# would otherwise fail to unmap at thread exit). A third,
# intercept_tls_get_addr=0, works around a bug of GCC 12's sanitizer runtime:
# its __tls_get_addr interceptor can take a dynamic TLS block (the fake CUDA
# driver's thread_locals, loaded with dlopen) for a pre-2.25 glibc header and
# hand LeakSanitizer a bogus range, whose scan at exit then crashes ("Tracer
# caught signal 11", exit 1). It failed one CI run so, at random.
asan=${MTC_ASAN_BUILD_DIR:-build-asan}
if [ ! -f "$asan/build.ninja" ]; then
  cmake -S . -B "$asan" -G Ninja -DMTC_SANITIZE=ON
fi
cmake --build "$asan"
ASAN_OPTIONS=detect_leaks=1:allow_user_poisoning=0:use_sigaltstack=0:intercept_tls_get_addr=0 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$asan" --output-on-failure -j "$(nproc)" \
    -E '^(gpu-tests|ptxas-no-spills|python)$'

# --- fuzzing ---
# The graph-file fuzzer (tests/fuzz: libFuzzer, so clang) for
# MTC_FUZZ_SECONDS (default 60) on a copy of its seed corpus. Its own build
# folder holds only the fuzzer and the libraries it needs (clang-22, ASan,
# UBSan, coverage instrumentation). Any crash, sanitizer report, timeout or
# out-of-memory fails the run and leaves the input in
# $fuzz/tests/fuzz/artifacts/.
fuzz=${MTC_FUZZ_BUILD_DIR:-build-fuzz}
if command -v clang++-22 >/dev/null 2>&1; then
  CC=clang-22 CXX=clang++-22 cmake -S . -B "$fuzz" -G Ninja -DMTC_FUZZ=ON \
    -DMTC_SANITIZE=ON -DMTC_ENABLE_TESTS=ON \
    -DMTC_FUZZ_SECONDS="${MTC_FUZZ_SECONDS:-60}" >/dev/null
  cmake --build "$fuzz" --target GraphFuzzer
  ctest --test-dir "$fuzz" --output-on-failure -R '^graph-fuzzer$'
else
  echo "SKIP: graph-fuzzer: needs clang-22 and libclang-rt-22-dev (README.md)"
fi
