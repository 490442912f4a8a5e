//===- Heuristics.h - Start schedules fitted to H200 runs -------*- C++ -*-===//
//
// The schedule a kernel gets when it is not tuned, and the starts the
// autotuner descends from. These are tuning decisions (thresholds and shapes
// fitted to H200 runs of the benchmark suite), kept apart from the dialect's
// rules: dialects/Kernel/Schedule.h says what is legal and what a schedule
// launches; this file picks among the legal schedules.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_PASSES_HEURISTICS_H
#define MTC_PASSES_HEURISTICS_H

#include "dialects/Kernel/Schedule.h"

#include "mlir/IR/Operation.h"

#include <optional>

namespace mtc {

/// What the compile's target offers the heuristics.
struct ScheduleTarget {
  /// Hopper's wgmma and TMA (sm_90a): the wgmma kind may be picked.
  bool wgmma = false;
};

/// The heuristic start for `op` (a kernel.contract or kernel.elementwise).
kernel::ScheduleParams defaultSchedule(mlir::Operation *op,
                                       const ScheduleTarget &target = {});
kernel::ScheduleParams
defaultContractSchedule(const kernel::ContractShape &c,
                        const ScheduleTarget &target = {});
/// The heuristic start restricted to one kind (none if that kind cannot run
/// the problem, or the target lacks it).
std::optional<kernel::ScheduleParams>
defaultContractSchedule(const kernel::ContractShape &c,
                        kernel::ScheduleKind kind,
                        const ScheduleTarget &target = {});

} // namespace mtc

#endif // MTC_PASSES_HEURISTICS_H
