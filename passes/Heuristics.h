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

#include <optional>

namespace mtc {

/// The heuristic start for `op` (a kernel.contract or kernel.elementwise).
kernel::ScheduleParams defaultSchedule(mlir::Operation *op);
kernel::ScheduleParams defaultContractSchedule(const kernel::ContractShape &c);
/// The heuristic start restricted to one kind (none if that kind cannot run
/// the problem).
std::optional<kernel::ScheduleParams>
defaultContractSchedule(const kernel::ContractShape &c,
                        kernel::ScheduleKind kind);

} // namespace mtc

#endif // MTC_PASSES_HEURISTICS_H
