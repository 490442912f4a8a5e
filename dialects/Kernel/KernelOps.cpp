//===- KernelOps.cpp - kernel.elementwise and kernel.reduce ---------------===//
//
// Verifiers for the elementwise and reduce ops (operand layouts, indexing
// maps, their regions), and what every kernel op answers by its kind: its
// schedule's legality and launch geometry. kernel.contract lives in
// ContractOp.cpp.
//
//===----------------------------------------------------------------------===//
#include "dialects/Kernel/KernelOps.h"
#include "dialects/Kernel/KernelVerify.h"
#include "dialects/Kernel/WeightSide.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::kernel;

static LogicalResult verifyScheduleOf(Operation *op,
                                      std::optional<ScheduleAttr> attr) {
  std::optional<ScheduleParams> schedule;
  if (attr)
    schedule = attr->getParams();
  return verifySchedule(op, schedule, [&](const ScheduleParams &s) {
    return checkSchedule(op, s);
  });
}

//===----------------------------------------------------------------------===//
// ElementwiseOp
//===----------------------------------------------------------------------===//

LogicalResult ElementwiseOp::verify() {
  if (failed(verifyResult(*this, getType())))
    return failure();
  ArrayRef<int64_t> r = cast<RankedTensorType>(getType()).getShape();
  if (failed(verifyMappedInputs(*this, "input", "indexing maps", getInputs(),
                                getIndexingMaps(), r, /*allowModulus=*/true)))
    return failure();
  return verifyScheduleOf(*this, getSchedule());
}

LogicalResult ElementwiseOp::verifyRegions() {
  return verifyScalarRegion(
      *this, "body", getBody(), elementTypesOf(getInputs()),
      cast<RankedTensorType>(getType()).getElementType(), getType());
}

void ElementwiseOp::getAsmResultNames(OpAsmSetValueNameFn fn) {
  setNameFromNodes(*this, getNodes(), fn);
}

void ElementwiseOp::getAsmBlockArgumentNames(Region &region,
                                             OpAsmSetValueNameFn fn) {
  if (region.empty())
    return;
  for (auto [i, arg] : llvm::enumerate(region.front().getArguments()))
    fn(arg, "in" + std::to_string(i));
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

SmallVector<int64_t> ReduceOp::getIterationShape() {
  SmallVector<int64_t> shape(getType().getShape());
  if (!shape.empty())
    shape.back() = int64_t(getExtent());
  return shape;
}

SmallVector<int64_t> ReduceOp::getStatisticShape() {
  SmallVector<int64_t> shape(getType().getShape());
  if (!shape.empty())
    shape.back() = 1;
  return shape;
}

int64_t ReduceOp::getNumRows() {
  int64_t n = 1;
  for (int64_t d : getStatisticShape())
    n *= d;
  return n;
}

LogicalResult ReduceOp::verify() {
  if (failed(verifyResult(*this, getType())))
    return failure();
  ArrayRef<int64_t> r = getType().getShape();
  if (hasApply()) {
    if (r.back() != int64_t(getExtent()))
      return emitOpError("with apply, the result is the iteration space: its "
                         "last dimension must be the extent ")
             << getExtent() << ", got " << formatShape(r);
  } else {
    if (r.back() != 1)
      return emitOpError("result must have a last dimension of 1, got ")
             << formatShape(r);
    if (!getApplyInputs().empty() || getApplyMaps())
      return emitOpError("has apply inputs or maps but no apply region");
  }
  SmallVector<int64_t> iter = getIterationShape(), stat = getStatisticShape();
  if (failed(verifyMappedInputs(*this, "input", "maps", getInputs(),
                                getIndexingMaps(), iter)) ||
      failed(verifyMappedInputs(*this, "epilogue input", "maps",
                                getEpilogueInputs(), getEpilogueMaps(),
                                stat)) ||
      failed(verifyMappedInputs(*this, "apply input", "maps", getApplyInputs(),
                                getApplyMaps().value_or(ArrayAttr()), iter)))
    return failure();
  return verifyScheduleOf(*this, getSchedule());
}

LogicalResult ReduceOp::verifyRegions() {
  SmallVector<Type> in = elementTypesOf(getInputs()),
                    ep{Float32Type::get(getContext())},
                    apply = elementTypesOf(getApplyInputs());
  llvm::append_range(ep, elementTypesOf(getEpilogueInputs()));
  Type elem = getType().getElementType();
  if (failed(verifyScalarRegion(*this, "body", getBody(), in, ep[0])))
    return failure();
  if (!hasApply())
    return verifyScalarRegion(*this, "epilogue", getEpilogue(), ep, elem);
  // The statistic is apply's last argument, of the type the epilogue
  // yields.
  Block &block = getApply().front();
  if (block.getNumArguments() != apply.size() + 1)
    return emitOpError("apply must take ")
           << apply.size() + 1
           << " arguments (the apply inputs' elements, then the statistic), "
              "got "
           << block.getNumArguments();
  Type statType = block.getArguments().back().getType();
  apply.push_back(statType);
  if (failed(
          verifyScalarRegion(*this, "epilogue", getEpilogue(), ep, statType)))
    return failure();
  return verifyScalarRegion(*this, "apply", getApply(), apply, elem);
}

void ReduceOp::getAsmResultNames(OpAsmSetValueNameFn fn) {
  setNameFromNodes(*this, getNodes(), fn);
}

void ReduceOp::getAsmBlockArgumentNames(Region &region,
                                        OpAsmSetValueNameFn fn) {
  if (region.empty())
    return;
  bool epilogue = &region == &getEpilogue();
  unsigned numArgs = region.getNumArguments();
  for (auto [i, arg] : llvm::enumerate(region.front().getArguments())) {
    if (epilogue)
      fn(arg, i == 0 ? std::string("sum") : "e" + std::to_string(i - 1));
    else if (&region == &getApply())
      fn(arg, i + 1 == numArgs ? std::string("stat") : "a" + std::to_string(i));
    else
      fn(arg, "in" + std::to_string(i));
  }
}
//===----------------------------------------------------------------------===//
// Problems and schedules
//===----------------------------------------------------------------------===//

int64_t mtc::kernel::numElementsOf(Type t) {
  return numElements(cast<ShapedType>(t).getShape()).value_or(0);
}

std::string mtc::kernel::checkSchedule(Operation *op, const ScheduleParams &s) {
  if (auto c = dyn_cast<ContractOp>(op))
    return checkContractSchedule(contractShape(c), s);
  if (auto e = dyn_cast<ElementwiseOp>(op))
    return checkElementwiseSchedule(numElementsOf(e.getType()), s);
  if (auto r = dyn_cast<ReduceOp>(op))
    return checkReduceSchedule(r.getNumRows(), s);
  return "not a kernel op";
}

LaunchConfig mtc::kernel::launchConfig(Operation *op, const ScheduleParams &s) {
  if (auto c = dyn_cast<ContractOp>(op))
    return contractLaunchConfig(contractShape(c), s);
  if (isa<ReduceOp>(op))
    return reduceLaunchConfig(cast<ReduceOp>(op).getNumRows(), s);
  return elementwiseLaunchConfig(numElementsOf(op->getResult(0).getType()), s);
}

#define GET_OP_CLASSES
#include "dialects/Kernel/KernelOps.cpp.inc"
