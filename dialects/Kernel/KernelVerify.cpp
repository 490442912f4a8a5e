//===- KernelVerify.cpp - Checks every kernel op shares -------------------===//
//
// What the verifiers of kernel.contract, kernel.elementwise and
// kernel.reduce check alike (tensor operands, results, scalar regions), on
// any operation: nothing here knows the ops, so ContractOp.cpp and
// KernelOps.cpp use it without a circle.
//
//===----------------------------------------------------------------------===//
#include "dialects/Kernel/KernelVerify.h"
#include "dialects/Common/DType.h"
#include "dialects/Kernel/IndexingMaps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::kernel;

static bool isScalar(Type t) { return t.isIntOrFloat(); }

/// kernel.yield, by name: this file knows no op class (ContractOp.cpp and
/// KernelOps.cpp, which define them, use it).
static bool isYield(Operation *op) {
  return op->getName().getStringRef() == "kernel.yield";
}

/// kernel.partner, and with kernel.column the positional ops, by name.
static bool isPartner(Operation *op) {
  return op->getName().getStringRef() == "kernel.partner";
}
static bool isPositional(Operation *op) {
  return isPartner(op) || op->getName().getStringRef() == "kernel.column";
}

bool mtc::kernel::readsPosition(Block &block) {
  return llvm::any_of(block, [](Operation &op) { return isPositional(&op); });
}

bool mtc::kernel::readsPartner(Block &block) {
  return llvm::any_of(block, [](Operation &op) { return isPartner(&op); });
}

bool mtc::kernel::isAllowedScalarOp(Operation *op) {
  if (!isa<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::FPToSIOp,
           arith::ExtSIOp, arith::MulFOp, arith::AddFOp, arith::SubFOp,
           arith::DivFOp, arith::MaximumFOp, arith::MinimumFOp, arith::NegFOp,
           arith::ConstantOp, arith::SelectOp, arith::CmpFOp, arith::CmpIOp,
           arith::TruncIOp, math::ExpOp, math::RsqrtOp>(op) &&
      !isYield(op) && !isPositional(op))
    return false;
  return llvm::all_of(op->getOperandTypes(), isScalar) &&
         llvm::all_of(op->getResultTypes(), isScalar);
}

LogicalResult mtc::kernel::verifyTensor(Operation *op, StringRef what, Type t) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  if (!tensor || !tensor.hasStaticShape() || tensor.getRank() < 1 ||
      !dtypeOf(tensor.getElementType()))
    return op->emitOpError() << what
                             << " must be a statically shaped tensor (rank >= "
                                "1) of i4, i8, f16, bf16 or f32, got "
                             << t;
  return verifyTensorLimits(op, what, t);
}

/// A kernel's result: any tensor verifyTensor takes but i4 (a storage type
/// no kernel writes).
LogicalResult mtc::kernel::verifyResult(Operation *op, Type t) {
  if (failed(verifyTensor(op, "result", t)))
    return failure();
  if (getElementTypeOrSelf(t).isInteger(4))
    return op->emitOpError("result cannot be i4 (a storage type for weights, "
                           "which kernels only read)");
  return success();
}

SmallVector<Type> mtc::kernel::elementTypesOf(ValueRange values) {
  SmallVector<Type> types;
  for (Value v : values)
    types.push_back(cast<RankedTensorType>(v.getType()).getElementType());
  return types;
}

LogicalResult mtc::kernel::verifyMappedInputs(Operation *op, StringRef what,
                                              StringRef mapsWord,
                                              ValueRange values, ArrayAttr maps,
                                              ArrayRef<int64_t> space,
                                              bool allowModulus) {
  size_t numMaps = maps ? maps.size() : 0;
  if (numMaps != values.size())
    return op->emitOpError("has ") << values.size() << " " << what << "s but "
                                   << numMaps << " " << mapsWord;
  for (auto [i, v] : llvm::enumerate(values)) {
    std::string name = (what + " #" + std::to_string(i)).str();
    if (failed(verifyTensor(op, name, v.getType())) ||
        failed(verifyIndexingMap(
            op, name, cast<AffineMapAttr>(maps[i]).getValue(), space,
            cast<RankedTensorType>(v.getType()).getShape(), allowModulus)))
      return failure();
  }
  return success();
}

/// Checks a scalar region: argument types, the yielded type, allowed ops.
LogicalResult mtc::kernel::verifyScalarRegion(Operation *op, StringRef what,
                                              Region &region,
                                              TypeRange argTypes,
                                              Type yieldType, Type output) {
  Block &block = region.front();
  if (block.getNumArguments() != argTypes.size())
    return op->emitOpError()
           << what << " takes " << block.getNumArguments()
           << (block.getNumArguments() == 1 ? " argument" : " arguments")
           << ", expected " << argTypes.size();
  for (auto [i, arg] : llvm::enumerate(block.getArguments()))
    if (arg.getType() != argTypes[i])
      return op->emitOpError() << what << " argument #" << i << " has type "
                               << arg.getType() << ", expected " << argTypes[i];
  Operation *yield = block.getTerminator();
  if (!yield || !isYield(yield) || yield->getNumOperands() != 1)
    return op->emitOpError() << what << " must end in kernel.yield";
  if (yield->getOperand(0).getType() != yieldType)
    return op->emitOpError()
           << what << " yields " << yield->getOperand(0).getType()
           << ", expected " << yieldType;
  for (Operation &inner : block) {
    if (!isAllowedScalarOp(&inner))
      return inner.emitOpError()
             << "is not supported inside a kernel " << what
             << " (allowed: scalar arith conversions and arithmetic, "
                "math.exp, math.rsqrt)";
    if (!isPositional(&inner))
      continue;
    auto out = dyn_cast_or_null<RankedTensorType>(output);
    if (!out)
      return inner.emitOpError()
             << "reads the output element's position, which a kernel " << what
             << " does not have (only an elementwise body and a "
                "contraction's epilogue do)";
    if (out.getShape().back() % 2)
      return inner.emitOpError()
             << "needs pairs of columns, but the output's last dimension is "
             << out.getShape().back();
  }
  return success();
}

LogicalResult mtc::kernel::verifySchedule(
    Operation *op, std::optional<ScheduleParams> schedule,
    llvm::function_ref<std::string(const ScheduleParams &)> check) {
  if (!schedule)
    return success();
  std::string err = check(*schedule);
  if (!err.empty())
    return op->emitOpError()
           << "schedule " << schedule->str() << " is illegal: " << err;
  return success();
}

void mtc::kernel::setNameFromNodes(Operation *op, ArrayAttr nodes,
                                   OpAsmSetValueNameFn fn) {
  if (nodes.empty())
    return;
  StringRef name = cast<StringAttr>(nodes[nodes.size() - 1]).getValue();
  if (!name.empty() && (isalpha(name[0]) || name[0] == '_'))
    fn(op->getResult(0), name);
}
