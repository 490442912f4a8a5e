//===- GraphInference.cpp - Result types of graph ops ---------------------===//
//
// InferTypeOpInterface for the graph ops whose result type follows from
// their operands, by the rules of ShapeRules.h (the graph-file front end
// applies the same ones).
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::graph;

//===----------------------------------------------------------------------===//
// Type inference
//===----------------------------------------------------------------------===//

namespace {
/// Operand shapes and dtypes, checked to be supported tensors.
struct Operands {
  SmallVector<RankedTensorType, 2> types;
  SmallVector<DType, 2> dtypes;
};
} // namespace

static LogicalResult collectOperands(std::optional<Location> loc,
                                     ValueRange operands, StringRef op,
                                     Operands &out) {
  for (Value v : operands) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    std::optional<DType> d = t ? dtypeOf(t.getElementType()) : std::nullopt;
    if (!t || !t.hasStaticShape() || !d)
      return emitOptionalError(loc, op, ": unsupported operand type ",
                               v.getType());
    out.types.push_back(t);
    out.dtypes.push_back(*d);
  }
  return success();
}

static LogicalResult fail(std::optional<Location> loc, const std::string &err) {
  return emitOptionalError(loc, err);
}

LogicalResult LinearOp::inferReturnTypes(MLIRContext *ctx,
                                         std::optional<Location> loc,
                                         ValueRange operands, DictionaryAttr,
                                         OpaqueProperties, RegionRange,
                                         SmallVectorImpl<Type> &inferred) {
  Operands ops;
  std::string err;
  Shape shape;
  if (failed(collectOperands(loc, operands, "linear", ops)))
    return failure();
  if (!checkSameFloatTypes("linear", ops.dtypes[0], ops.dtypes[1], err) ||
      !linearShape(ops.types[0].getShape(), ops.types[1].getShape(), shape,
                   err))
    return fail(loc, err);
  inferred.push_back(
      RankedTensorType::get(shape, ops.types[0].getElementType()));
  return success();
}

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *ctx,
                                         std::optional<Location> loc,
                                         ValueRange operands, DictionaryAttr,
                                         OpaqueProperties, RegionRange,
                                         SmallVectorImpl<Type> &inferred) {
  Operands ops;
  std::string err;
  Shape shape;
  if (failed(collectOperands(loc, operands, "matmul", ops)))
    return failure();
  if (!checkSameFloatTypes("matmul", ops.dtypes[0], ops.dtypes[1], err) ||
      !matmulShape(ops.types[0].getShape(), ops.types[1].getShape(), shape,
                   err))
    return fail(loc, err);
  inferred.push_back(
      RankedTensorType::get(shape, ops.types[0].getElementType()));
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location> loc,
                                            ValueRange operands, DictionaryAttr,
                                            OpaqueProperties, RegionRange,
                                            SmallVectorImpl<Type> &inferred) {
  Operands ops;
  std::string err;
  Shape shape;
  if (failed(collectOperands(loc, operands, "transpose", ops)))
    return failure();
  if (!transposeShape(ops.types[0].getShape(), shape, err))
    return fail(loc, err);
  inferred.push_back(
      RankedTensorType::get(shape, ops.types[0].getElementType()));
  return success();
}

static LogicalResult inferBinary(StringRef op, std::optional<Location> loc,
                                 ValueRange operands,
                                 SmallVectorImpl<Type> &inferred) {
  Operands ops;
  std::string err;
  Shape shape;
  if (failed(collectOperands(loc, operands, op, ops)))
    return failure();
  if (!checkSameFloatTypes(op, ops.dtypes[0], ops.dtypes[1], err))
    return fail(loc, err);
  if (!broadcastShapes(ops.types[0].getShape(), ops.types[1].getShape(), shape,
                       err))
    return fail(loc, (op + ": " + err).str());
  inferred.push_back(
      RankedTensorType::get(shape, ops.types[0].getElementType()));
  return success();
}

static LogicalResult inferUnary(StringRef op, std::optional<Location> loc,
                                ValueRange operands,
                                SmallVectorImpl<Type> &inferred) {
  Operands ops;
  std::string err;
  if (failed(collectOperands(loc, operands, op, ops)))
    return failure();
  if (!checkFloatType(op, ops.dtypes[0], err))
    return fail(loc, err);
  inferred.push_back(ops.types[0]);
  return success();
}

static LogicalResult inferRowReduction(StringRef op,
                                       std::optional<Location> loc,
                                       ValueRange operands,
                                       SmallVectorImpl<Type> &inferred) {
  Operands ops;
  std::string err;
  Shape shape;
  if (failed(collectOperands(loc, operands, op, ops)))
    return failure();
  if (!checkFloatType(op, ops.dtypes[0], err) ||
      !rowReductionShape(ops.types[0].getShape(), shape, err))
    return fail(loc, err);
  inferred.push_back(
      RankedTensorType::get(shape, ops.types[0].getElementType()));
  return success();
}

#define MTC_INFER(Op, infer, name)                                             \
  LogicalResult Op::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, ValueRange operands,         \
      DictionaryAttr, OpaqueProperties, RegionRange,                           \
      SmallVectorImpl<Type> &inferred) {                                       \
    return infer(name, loc, operands, inferred);                               \
  }
MTC_INFER(AddOp, inferBinary, "add")
MTC_INFER(SubOp, inferBinary, "sub")
MTC_INFER(MulOp, inferBinary, "mul")
MTC_INFER(ReluOp, inferUnary, "relu")
MTC_INFER(SiluOp, inferUnary, "silu")
MTC_INFER(RsqrtOp, inferUnary, "rsqrt")
MTC_INFER(SumOp, inferRowReduction, "sum")
MTC_INFER(MeanOp, inferRowReduction, "mean")
#undef MTC_INFER
