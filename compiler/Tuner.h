//===- Tuner.h - Coordinate descent over kernel schedules -------*- C++ -*-===//
//
// The search, without the GPU: a start schedule, a legality test and a cost
// function (microseconds, or an error for a probe that cannot run). Like
// Inductor's coordinate-descent tuner: for each coordinate try doubling and
// halving, keep a change only if it beats the best by more than a noise
// threshold, and sweep until a full pass brings nothing; then a wider pass
// (every pair of coordinates moved at once), because the start matters, and
// back to the sweeps if it found something.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_COMPILER_TUNER_H
#define MTC_COMPILER_TUNER_H

#include "dialects/Kernel/Schedule.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mtc {

/// One candidate the tuner looked at.
struct Probe {
  unsigned index = 0; // 1-based, in the order measured
  kernel::ScheduleParams schedule;
  std::optional<double> micros; // measured time, if it ran
  std::string skipped;          // why not, if it did not
  kernel::ScheduleParams best;  // the best after this probe
  double bestMicros = 0;
};

struct TuneOptions {
  /// A change is taken only if it is faster than the best by more than this
  /// fraction (measurement noise is about half a percent).
  double threshold = 0.01;
  /// At most this many schedules compiled and measured. Illegal schedules,
  /// rejected without compiling, do not count (the path holds at most 8x
  /// this many probes in all).
  unsigned maxProbes = 150;
  /// Start no probe that would end more than this many seconds after the
  /// search began, were it as slow as the slowest probe so far (0: no
  /// limit): the search stops with the best so far. The start schedule is
  /// measured whatever the budget.
  double budgetSeconds = 30;
  /// Room the search leaves in the budget for this many more measurements
  /// at the slowest probe's pace (the caller's final ones).
  double reserveProbes = 0;
  /// Seconds since an arbitrary start (tests give a fake); empty: the
  /// steady clock.
  std::function<double()> clock;
  /// Run the pairwise pass after the sweeps converge.
  bool widePass = true;
  /// Values M can take for the mtile coordinate (besides powers of two).
  int64_t m = 1;
  /// Switching kinds (simt, mma, tiled, wgmma) jumps to that kind's start
  /// schedule; empty or returning none means the kind is not a coordinate.
  std::function<std::optional<kernel::ScheduleParams>(kernel::ScheduleKind)>
      startForKind;
  /// Called after every probe (progress output); may be empty.
  std::function<void(const Probe &)> onProbe;
};

struct TuneResult {
  kernel::ScheduleParams start, best;
  double startMicros = 0, bestMicros = 0;
  std::vector<Probe> path; // every probe, in order
  unsigned measured = 0;   // probes that ran
  bool outOfTime = false;  // stopped by TuneOptions::budgetSeconds
};

/// Coordinate descent from `start`. `legal` returns "" for a legal schedule
/// (illegal ones are skipped without measuring). `measure` returns the time
/// in microseconds or an error (a spilling or failing schedule), which skips
/// the probe. Fails only if `start` itself cannot be measured.
llvm::Expected<TuneResult> coordinateDescent(
    const kernel::ScheduleParams &start,
    llvm::function_ref<std::string(const kernel::ScheduleParams &)> legal,
    llvm::function_ref<llvm::Expected<double>(const kernel::ScheduleParams &)>
        measure,
    const TuneOptions &options = {});

} // namespace mtc

#endif // MTC_COMPILER_TUNER_H
