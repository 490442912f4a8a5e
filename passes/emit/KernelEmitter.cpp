//===- KernelEmitter.cpp - Kernel ops to GPU kernel functions -------------===//
//
// emitKernel (passes/KernelEmitter.h): checks the op's schedule and hands the
// op to its emitter, a contraction to the one its schedule's kind registers
// in ContractKinds.def, an elementwise op to Elementwise.cpp. Emitter.h
// gives the map of passes/emit/.
//
//===----------------------------------------------------------------------===//
#include "passes/KernelEmitter.h"

#include "passes/emit/Contract.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::emit;
using namespace mtc::kernel;

/// The emitter of `op`, whose schedule is of kind `kind` (none for a kind
/// that has no contraction emitter).
static std::unique_ptr<ContractEmitter>
createContractEmitter(ScheduleKind kind, OpBuilder &b, ContractOp op,
                      StringRef name, const EmitOptions &opts) {
  switch (kind) {
#define MTC_CONTRACT_KIND(KIND, CREATE)                                        \
  case ScheduleKind::KIND:                                                     \
    return CREATE(b, op, name, opts);
#include "passes/emit/ContractKinds.def"
  default:
    return nullptr;
  }
}

LogicalResult mtc::emitKernel(OpBuilder &b, Operation *op, StringRef name,
                              const EmitOptions &opts) {
  auto module = b.getInsertionBlock()->getParentOp();
  if (!isa<ModuleOp>(module))
    return op->emitOpError("kernels must be emitted into a module");
  auto scheduleAttr = op->getAttrOfType<ScheduleAttr>("schedule");
  if (!scheduleAttr)
    return op->emitOpError("has no schedule; run mtc-assign-schedules first");
  ScheduleParams s = scheduleAttr.getParams();
  std::string err = checkSchedule(op, s);
  if (!err.empty())
    return op->emitOpError("cannot be lowered with schedule ")
           << s.str() << ": " << err;
  if (auto c = dyn_cast<ContractOp>(op)) {
    std::unique_ptr<ContractEmitter> emitter =
        createContractEmitter(s.kind, b, c, name, opts);
    if (!emitter)
      return op->emitOpError("has no emitter for schedule ") << s.str();
    return emitter->emit();
  }
  if (auto e = dyn_cast<ElementwiseOp>(op))
    return emitElementwise(b, e, name, opts);
  if (auto r = dyn_cast<ReduceOp>(op))
    return emitReduce(b, r, name, opts);
  return op->emitOpError("is not a kernel op");
}
