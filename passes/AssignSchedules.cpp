//===- AssignSchedules.cpp - Heuristic schedules
//---------------------------===//
//
// `mtc-assign-schedules`: every kernel op without a `#kernel.schedule` gets
// the heuristic one (Heuristics.h); kernels the autotuner or the input already
// scheduled keep theirs.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "passes/FusionSupport.h"
#include "passes/Heuristics.h"

namespace mtc {
#define GEN_PASS_DEF_ASSIGNSCHEDULES
#include "passes/Passes.h.inc"
} // namespace mtc

using namespace mlir;
using namespace mtc;
using namespace mtc::kernel;

namespace {
struct AssignSchedules : mtc::impl::AssignSchedulesBase<AssignSchedules> {
  using AssignSchedulesBase::AssignSchedulesBase;

  void runOnOperation() override {
    ScheduleTarget target;
    target.wgmma = wgmma;
    target.numSMs = numSMs;
    target.l2Bytes = l2Bytes;
    target.maxSharedPerBlock = maxSharedPerBlock;
    if (numSMs < 1 || l2Bytes < 0 || maxSharedPerBlock < 0 ||
        memBandwidth < 0) {
      getOperation().emitError(
          "mtc-assign-schedules: num-sms must be at least 1, l2-bytes, "
          "max-shared-per-block and mem-bandwidth not negative");
      return signalPassFailure();
    }
    target.memBandwidth = memBandwidth;
    unsigned index = 0;
    getOperation().walk([&](Operation *op) {
      if (!isKernelOp(op))
        return;
      if (!explain && op->hasAttr("schedule")) {
        ++index;
        return;
      }
      SmallVector<std::string> why;
      ScheduleParams heuristic =
          defaultSchedule(op, target, explain ? &why : nullptr);
      if (explain)
        describe(op, index, heuristic, why);
      ++index;
      if (!op->hasAttr("schedule"))
        op->setAttr("schedule", ScheduleAttr::get(&getContext(), heuristic));
    });
  }

  /// The remark of --explain-schedule for kernel `index` (numbered as the
  /// manifest numbers them).
  static void describe(Operation *op, unsigned index,
                       const ScheduleParams &heuristic,
                       ArrayRef<std::string> why) {
    InFlightDiagnostic d = emitRemark(fusion::remarkAnchor(op));
    d << "kernel " << index << " (" << op->getName().stripDialect() << "): ";
    if (auto given = op->getAttrOfType<ScheduleAttr>("schedule")) {
      d << given.getParams().str()
        << ", given (--schedule, the tuner, or the input); the heuristic's "
           "would be "
        << heuristic.str();
      return;
    }
    d << heuristic.str() << ", the heuristic's:";
    for (const std::string &line : why)
      d << "\n  - " << line;
  }
};
} // namespace
