//===- Prober.h - Timing one kernel under candidate schedules ---*- C++ -*-===//
//
// What the autotuner's search measures (Autotune.cpp): one kernel of a graph
// compiled under a candidate schedule, loaded, its outputs checked against
// the start's, and timed on the GPU in this process's turn.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_COMPILER_PROBER_H
#define MTC_COMPILER_PROBER_H

#include "compiler/Autotune.h"
#include "runtime/Interpreter.h"

#include "llvm/ADT/StringMap.h"

namespace mtc {

/// Times kernel `index` of a graph under candidate schedules. Each
/// schedule's outputs are checked first against those of the first schedule
/// it ran (the search's start, the heuristic's, whose kernels the GPU matrix
/// checks against the fp64 reference): a schedule whose kernel computes
/// something else is an error (the search skips it), never a time.
///
/// The graphs of the start and of the search's best stay loaded (keepOnly):
/// the final measurements of both reuse them instead of compiling, loading
/// and filling them again, two of the six loads of a kernel tuned with
/// four probes.
class Prober {
public:
  Prober(graph::FuncOp func, const CompileOptions &base, unsigned index,
         Device &device, const AutotuneOptions &tuning, llvm::raw_ostream &log);

  /// The median microseconds of kernel `index` under `s` over `replays`;
  /// the first time, the graph is compiled, loaded and its outputs checked.
  llvm::Expected<double> measure(const kernel::ScheduleParams &s,
                                 unsigned replays);
  /// Unloads every graph but the start's and `best`'s.
  void keepOnly(const kernel::ScheduleParams &best);

private:
  /// Compiles and loads the graph under `s` (the first time, also makes
  /// the random inputs). Where the device has no room for another graph,
  /// the kept ones are unloaded and it tries once more.
  llvm::Expected<std::unique_ptr<Executor>>
  load(const kernel::ScheduleParams &s);
  /// On the GPU, in its turn: copies the inputs to a newly loaded graph and
  /// checks its outputs (checkOutputs).
  llvm::Error setInputsAndCheck(Executor &exec,
                                const kernel::ScheduleParams &s);
  /// Runs the graph once on poisoned outputs; the first time keeps its
  /// outputs as the reference, then compares with it. Either side may be
  /// defaultCheckUlps from the truth, so a schedule may differ from the
  /// reference by twice that; a wrong index or a lost part of a sum differs
  /// by far more, or leaves poison.
  llvm::Error checkOutputs(Executor &exec, const Manifest &m,
                           const kernel::ScheduleParams &s);

  graph::FuncOp func;
  const CompileOptions &base;
  unsigned index;
  Device &device;
  const AutotuneOptions &tuning;
  llvm::raw_ostream &log;
  std::string lockPath;
  std::vector<HostTensor> inputs;
  /// The loaded graphs, by schedule, and the start's schedule.
  llvm::StringMap<std::unique_ptr<Executor>> loaded;
  std::string startKey;
  /// The first schedule's outputs, and whether it split K.
  std::vector<RefTensor> reference;
  bool referenceSplit = false;
  std::string referenceSchedule;
};

} // namespace mtc

#endif // MTC_COMPILER_PROBER_H
