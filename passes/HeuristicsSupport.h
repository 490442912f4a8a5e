//===- HeuristicsSupport.h - What the start schedules share -----*- C++ -*-===//
//
// The helpers of the heuristic starts (Heuristics.cpp, HeuristicsMma.cpp,
// HeuristicsWgmma.cpp): how many blocks fill the machine, whether a schedule
// is legal on a target, and backing off until it is. Private to passes/.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_PASSES_HEURISTICSSUPPORT_H
#define MTC_PASSES_HEURISTICSSUPPORT_H

#include "passes/Heuristics.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

namespace mtc {

/// About this many blocks, three quarters of a wave at one per
/// multiprocessor, keep the machine busy enough: split-K and two
/// warpgroups of rows stop short of it (99 on an H200's 132
/// multiprocessors; bench/results/2026-12-01-wgmma, 2026-11-30-tiled).
inline int64_t fillBlocks(const ScheduleTarget &t) {
  return llvm::divideCeil(3 * t.numSMs, 4);
}

/// Whether `s` is legal for `c` and its shared memory fits the target.
inline bool legalOn(const kernel::ContractShape &c,
                    const kernel::ScheduleParams &s, const ScheduleTarget &t) {
  return kernel::checkContractSchedule(c, s).empty() &&
         kernel::contractLaunchConfig(c, s).sharedBytes() <=
             t.maxSharedPerBlock;
}

/// Shrinks `s` one `shrink` step at a time until it is legal for `c` on `t`;
/// `shrink` returns false when nothing is left to give. True if `s` ended up
/// legal.
inline bool
shrinkUntilLegal(const kernel::ContractShape &c, kernel::ScheduleParams &s,
                 const ScheduleTarget &t,
                 llvm::function_ref<bool(kernel::ScheduleParams &)> shrink) {
  for (int guard = 0; guard < 32; ++guard) {
    if (legalOn(c, s, t))
      return true;
    if (!shrink(s))
      return false;
  }
  return legalOn(c, s, t);
}

/// The heuristic mma start (HeuristicsMma.cpp).
std::optional<kernel::ScheduleParams>
defaultMmaSchedule(const kernel::ContractShape &c, const ScheduleTarget &t);

/// The heuristic wgmma start (sm_90a; HeuristicsWgmma.cpp).
std::optional<kernel::ScheduleParams>
defaultWgmmaSchedule(const kernel::ContractShape &c, const ScheduleTarget &t);

} // namespace mtc

#endif // MTC_PASSES_HEURISTICSSUPPORT_H
