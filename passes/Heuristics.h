//===- Heuristics.h - Start schedules for a target GPU ----------*- C++ -*-===//
//
// The schedule a kernel gets when it is not tuned, and the starts the
// autotuner descends from. These are tuning decisions (thresholds measured on
// H200 runs of the benchmark suite and the shape zoo, sized by the target's
// multiprocessors, L2, shared memory and bandwidth), kept apart from the
// dialect's rules:
// dialects/Kernel/Schedule.h says what is legal and what a schedule
// launches; this file picks among the legal schedules.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_PASSES_HEURISTICS_H
#define MTC_PASSES_HEURISTICS_H

#include "dialects/Kernel/Schedule.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mtc {

/// What the compile's target GPU offers the heuristics
/// (compiler/GpuTarget.h fills it from a named GPU or the one at hand). The
/// defaults are an H200's (SXM).
struct ScheduleTarget {
  /// Hopper's wgmma and TMA (sm_90a): the wgmma kind may be picked.
  bool wgmma = false;
  /// Multiprocessors: a wave of blocks at one per multiprocessor.
  int64_t numSMs = 132;
  /// The L2 cache.
  int64_t l2Bytes = int64_t(50) << 20;
  /// Shared memory one block may use (opted in).
  int64_t maxSharedPerBlock = 227 * 1024;
  /// Peak memory bandwidth, bytes/s: two transfers per memory clock over
  /// the bus (an H200's driver reports 3201 MHz and 6144 bits: 4916 GB/s).
  /// 0 where it is not known: the heuristics then take an H200's per
  /// multiprocessor.
  int64_t memBandwidth = int64_t(2) * 3201 * 1000000 * 6144 / 8;
};

/// The heuristic start for `op` (a kernel.contract, kernel.reduce or
/// kernel.elementwise). With `why`, each rule that shaped it appends a line
/// saying what it did and why (`mtc compile --explain-schedule`).
kernel::ScheduleParams
defaultSchedule(mlir::Operation *op, const ScheduleTarget &target = {},
                llvm::SmallVectorImpl<std::string> *why = nullptr);
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
