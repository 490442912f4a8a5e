//===- CpuTime.h - CPU time of a piece of a test ----------------*- C++ -*-===//
//
// The unit tests that bound how long something takes measure the process's
// CPU time, not the wall clock: other processes on a busy machine take
// cores, but not this process's CPU seconds (tests/check.sh runs these
// tests a second time with every core kept busy to hold them to that).
//
//===----------------------------------------------------------------------===//
#ifndef MTC_TESTS_UNIT_CPUTIME_H
#define MTC_TESTS_UNIT_CPUTIME_H

#include <ctime>
#include <functional>

namespace mtc::test {

/// CPU seconds of this process (all its threads) since it started.
inline double cpuSeconds() { return double(std::clock()) / CLOCKS_PER_SEC; }

/// CPU seconds that `fn` takes.
inline double cpuTime(const std::function<void()> &fn) {
  double start = cpuSeconds();
  fn();
  return cpuSeconds() - start;
}

} // namespace mtc::test

#endif // MTC_TESTS_UNIT_CPUTIME_H
