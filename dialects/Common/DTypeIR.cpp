//===- DTypeIR.cpp - Element types as MLIR types --------------------------===//
//
// See DType.h: the bridges between DType and MLIR's types.
//
//===----------------------------------------------------------------------===//
#include "dialects/Common/DType.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

using namespace mlir;
using namespace mtc;

std::optional<DType> mtc::dtypeOf(Type t) {
  if (t.isSignlessInteger(4))
    return DType::I4;
  if (t.isSignlessInteger(8))
    return DType::I8;
  if (t.isF16())
    return DType::F16;
  if (t.isBF16())
    return DType::BF16;
  if (t.isF32())
    return DType::F32;
  return std::nullopt;
}

Type mtc::toMlirType(MLIRContext *ctx, DType t) {
  Builder b(ctx);
  switch (t) {
  case DType::I4:
    return b.getIntegerType(4);
  case DType::I8:
    return b.getIntegerType(8);
  case DType::F16:
    return b.getF16Type();
  case DType::BF16:
    return b.getBF16Type();
  case DType::F32:
    return b.getF32Type();
  }
  return {};
}

LogicalResult mtc::verifyTensorLimits(Operation *op, StringRef what,
                                      Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return success(); // the type constraints report these
  std::string err;
  std::optional<DType> dtype = dtypeOf(tensor.getElementType());
  if (!(dtype ? checkTensorType(*dtype, tensor.getShape(), err)
              : checkShape(tensor.getShape(), err)))
    return op->emitOpError() << what << ": " << err;
  return success();
}
