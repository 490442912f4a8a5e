//===- AssignSchedules.cpp - Heuristic schedules
//---------------------------===//
//
// `mtc-assign-schedules`: every kernel op without a `#kernel.schedule` gets
// the heuristic one (Heuristics.h); kernels the autotuner or the input already
// scheduled keep theirs.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

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
    getOperation().walk([&](Operation *op) {
      if (!isKernelOp(op) || op->hasAttr("schedule"))
        return;
      op->setAttr("schedule", ScheduleAttr::get(&getContext(),
                                                defaultSchedule(op, target)));
    });
  }
};
} // namespace
