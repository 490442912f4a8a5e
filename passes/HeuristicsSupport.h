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
#include "llvm/ADT/Twine.h"
#include "llvm/Support/MathExtras.h"

namespace mtc {

/// About this many blocks, three quarters of a wave at one per
/// multiprocessor, keep the machine busy enough: split-K and two
/// warpgroups of rows stop short of it (99 on an H200's 132
/// multiprocessors; bench/results/2026-12-01-wgmma, 2026-11-30-tiled).
inline int64_t fillBlocks(const ScheduleTarget &t) {
  return llvm::divideCeil(3 * t.numSMs, 4);
}

/// How full the waves of `blocks` one-a-multiprocessor blocks are: blocks
/// over the slots of the waves they take (1 where the last wave is full).
inline double waveFill(int64_t blocks, const ScheduleTarget &t) {
  return double(blocks) / double(llvm::alignTo(blocks, t.numSMs));
}

/// A share as a whole percent, for the notes.
inline std::string percent(double share) {
  return std::to_string(int64_t(share * 100 + 0.5));
}

/// The reasons behind the start being built, for `mtc compile
/// --explain-schedule` (defaultSchedule's `why`, Heuristics.cpp): each rule
/// that shapes it notes what it did and why, in words computed from the
/// same values it tests. Nothing is kept where no caller asked.
void noteRule(const llvm::Twine &why);
/// Whether a caller collects the notes (to skip building costly ones).
bool notingRules();
/// The notes so far; noteRollback drops those after it (a start that was
/// built and not taken).
size_t noteMark();
void noteRollback(size_t mark);
/// The last note ("" if none): why a start that had no legal schedule
/// failed (shrinkUntilLegal's last note), for the note of its kind.
std::string lastNote();
/// "1 row", "2 rows".
inline std::string plural(int64_t n, llvm::StringRef one,
                          llvm::StringRef many) {
  return std::to_string(n) + " " + (n == 1 ? one : many).str();
}

/// Why `s` is not legal for `c` on `t`, or "" if it is and its shared
/// memory fits the target.
inline std::string whyIllegal(const kernel::ContractShape &c,
                              const kernel::ScheduleParams &s,
                              const ScheduleTarget &t) {
  std::string why = kernel::checkContractSchedule(c, s);
  if (!why.empty())
    return why;
  int64_t shared = kernel::contractLaunchConfig(c, s).sharedBytes();
  if (shared > t.maxSharedPerBlock)
    return "its " + std::to_string(shared) +
           " bytes of shared memory exceed the target's " +
           std::to_string(t.maxSharedPerBlock);
  return "";
}

/// Whether `s` is legal for `c` and its shared memory fits the target.
inline bool legalOn(const kernel::ContractShape &c,
                    const kernel::ScheduleParams &s, const ScheduleTarget &t) {
  return whyIllegal(c, s, t).empty();
}

/// Shrinks `s` one `shrink` step at a time until it is legal for `c` on `t`;
/// `shrink` returns false when nothing is left to give. True if `s` ended up
/// legal.
inline bool
shrinkUntilLegal(const kernel::ContractShape &c, kernel::ScheduleParams &s,
                 const ScheduleTarget &t,
                 llvm::function_ref<bool(kernel::ScheduleParams &)> shrink) {
  std::string first = notingRules() ? s.str() : "", firstWhy;
  for (int shrinks = 0;; ++shrinks) {
    std::string why = whyIllegal(c, s, t);
    if (why.empty()) {
      if (!firstWhy.empty())
        noteRule("backed off from " + first + " until legal: " + firstWhy);
      return true;
    }
    if (firstWhy.empty())
      firstWhy = why;
    if (shrinks == 32 || !shrink(s)) {
      noteRule(first + " is not legal: " + firstWhy);
      return false;
    }
  }
}

/// The heuristic simt start (HeuristicsSimt.cpp); always one, legal where
/// any simt schedule is.
kernel::ScheduleParams defaultSimtSchedule(const kernel::ContractShape &c,
                                           const ScheduleTarget &t);

/// The heuristic mma start (HeuristicsMma.cpp).
std::optional<kernel::ScheduleParams>
defaultMmaSchedule(const kernel::ContractShape &c, const ScheduleTarget &t);

/// The heuristic wgmma start (sm_90a; HeuristicsWgmma.cpp).
std::optional<kernel::ScheduleParams>
defaultWgmmaSchedule(const kernel::ContractShape &c, const ScheduleTarget &t);

} // namespace mtc

#endif // MTC_PASSES_HEURISTICSSUPPORT_H
