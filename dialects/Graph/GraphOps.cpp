//===- GraphOps.cpp - mtc graph dialect ops
//--------------------------------===//
//
// Verifiers (through ShapeRules), the shared node
// syntax, folders and canonicalization patterns.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionImplementation.h"

#include <cmath>

using namespace mlir;
using namespace mtc;
using namespace mtc::graph;

//===----------------------------------------------------------------------===//
// Helpers shared with the other dialects
//===----------------------------------------------------------------------===//

StringRef mtc::nameFromLoc(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().getValue();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location l : llvm::reverse(fused.getLocations()))
      if (StringRef n = nameFromLoc(l); !n.empty())
        return n;
  return "";
}

static bool isIdentifier(StringRef s) {
  if (s.empty() || !(isalpha(s[0]) || s[0] == '_'))
    return false;
  return llvm::all_of(s, [](char c) { return isalnum(c) || c == '_'; });
}

//===----------------------------------------------------------------------===//
// Node syntax
//===----------------------------------------------------------------------===//

ParseResult mtc::graph::parseNode(OpAsmParser &parser, OperationState &result,
                                  StringRef opName) {
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  SmallVector<Type> operandTypes;
  Type resultType;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseOperandList(operands) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.parseTypeList(operandTypes) || parser.parseArrow() ||
      parser.parseType(resultType) ||
      parser.resolveOperands(operands, operandTypes, loc, result.operands))
    return failure();
  result.addTypes(resultType);
  StringRef name = parser.getResultName(0).first;
  if (isIdentifier(name))
    result.location = NameLoc::get(StringAttr::get(parser.getContext(), name),
                                   result.location);
  return success();
}

void mtc::graph::printNode(OpAsmPrinter &p, Operation *op) {
  p << ' ' << op->getOperands();
  p.printOptionalAttrDict(op->getAttrs());
  p << " : ";
  llvm::interleaveComma(op->getOperandTypes(), p);
  p << " -> " << op->getResult(0).getType();
}

void mtc::graph::setNodeResultName(Operation *op, OpAsmSetValueNameFn fn) {
  StringRef name = nameFromLoc(op->getLoc());
  if (isIdentifier(name))
    fn(op->getResult(0), name);
}

//===----------------------------------------------------------------------===//
// FuncOp
//===----------------------------------------------------------------------===//

void FuncOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                   FunctionType type) {
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name), TypeAttr::get(type));
  state.addRegion();
}

ParseResult FuncOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr nameAttr;
  if (parser.parseSymbolName(nameAttr, SymbolTable::getSymbolAttrName(),
                             result.attributes))
    return failure();
  SmallVector<OpAsmParser::Argument> args;
  SmallVector<Type> resultTypes;
  SmallVector<DictionaryAttr> resultAttrs;
  bool isVariadic = false;
  if (function_interface_impl::parseFunctionSignatureWithArguments(
          parser, /*allowVariadic=*/false, args, isVariadic, resultTypes,
          resultAttrs))
    return failure();
  SmallVector<Type> argTypes;
  for (OpAsmParser::Argument &arg : args) {
    argTypes.push_back(arg.type);
    // "%x" -> NameLoc("x"): the graph input's name survives printing.
    StringRef name = arg.ssaName.name.drop_front();
    if (isIdentifier(name)) {
      Location inner = arg.sourceLoc
                           ? *arg.sourceLoc
                           : parser.getEncodedSourceLoc(arg.ssaName.location);
      arg.sourceLoc =
          NameLoc::get(StringAttr::get(parser.getContext(), name), inner);
    }
  }
  Builder &b = parser.getBuilder();
  result.addAttribute(getFunctionTypeAttrName(result.name),
                      TypeAttr::get(b.getFunctionType(argTypes, resultTypes)));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  call_interface_impl::addArgAndResultAttrs(b, result, args, resultAttrs,
                                            getArgAttrsAttrName(result.name),
                                            getResAttrsAttrName(result.name));
  Region *body = result.addRegion();
  return parser.parseRegion(*body, args);
}

void FuncOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(
      p, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

void FuncOp::getAsmBlockArgumentNames(Region &region,
                                      OpAsmSetValueNameFn setNameFn) {
  if (region.empty())
    return;
  for (BlockArgument arg : region.front().getArguments()) {
    StringRef name = nameFromLoc(arg.getLoc());
    if (isIdentifier(name))
      setNameFn(arg, name);
  }
}

std::string FuncOp::getInputName(unsigned i) {
  if (!getBody().empty() && i < getBody().front().getNumArguments()) {
    StringRef name = nameFromLoc(getBody().front().getArgument(i).getLoc());
    if (!name.empty())
      return name.str();
  }
  return "arg" + std::to_string(i);
}

Operation *FuncOp::getReturn() {
  if (getBody().empty() || getBody().front().empty())
    return nullptr;
  return &getBody().front().back();
}

LogicalResult FuncOp::verify() {
  if (getBody().empty())
    return emitOpError("needs a body");
  Block &entry = getBody().front();
  ArrayRef<Type> inputs = getFunctionType().getInputs();
  if (entry.getNumArguments() != inputs.size())
    return emitOpError("has ")
           << entry.getNumArguments() << " block arguments but its type has "
           << inputs.size() << " inputs";
  for (auto [i, arg] : llvm::enumerate(entry.getArguments())) {
    if (arg.getType() != inputs[i])
      return emitOpError("block argument #")
             << i << " has type " << arg.getType() << " but the signature says "
             << inputs[i];
    auto tensor = dyn_cast<RankedTensorType>(inputs[i]);
    if (!tensor || !tensor.hasStaticShape() || tensor.getRank() < 1 ||
        !dtypeOf(tensor.getElementType()))
      return emitOpError("input #")
             << i
             << " must be a statically shaped tensor (rank >= 1) of i4, i8, "
                "f16, bf16 or f32, got "
             << inputs[i];
  }
  for (auto [i, type] : llvm::enumerate(getFunctionType().getResults())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() ||
        !dtypeOf(tensor.getElementType()))
      return emitOpError("result #")
             << i << " must be a statically shaped tensor, got " << type;
    if (tensor.getElementType().isInteger(4))
      return emitOpError("result #")
             << i << " is i4; graph results cannot be i4 (a storage type "
             << "for weights, which are graph inputs)";
    if (failed(verifyTensorLimits(*this, "result #" + std::to_string(i), type)))
      return failure();
  }
  for (auto [i, type] : llvm::enumerate(inputs))
    if (failed(verifyTensorLimits(*this, "input #" + std::to_string(i), type)))
      return failure();
  return success();
}

LogicalResult ReturnOp::verify() {
  auto func = (*this)->getParentOfType<FuncOp>();
  ArrayRef<Type> results = func.getFunctionType().getResults();
  if (getNumOperands() != results.size())
    return emitOpError("returns ")
           << getNumOperands() << (getNumOperands() == 1 ? " value" : " values")
           << " but the graph declares " << results.size()
           << (results.size() == 1 ? " output" : " outputs");
  for (auto [i, v] : llvm::enumerate(getOperands()))
    if (v.getType() != results[i])
      return emitOpError("output #")
             << i << " has type " << v.getType() << " but the graph declares "
             << results[i];
  return success();
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

// %name = graph.constant 1.0e-05 : tensor<1xf32>
ParseResult ConstantOp::parse(OpAsmParser &parser, OperationState &result) {
  double value;
  Type type;
  if (parser.parseFloat(value) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.parseType(type))
    return failure();
  result.addAttribute(getValueAttrName(result.name),
                      parser.getBuilder().getF64FloatAttr(value));
  result.addTypes(type);
  StringRef name = parser.getResultName(0).first;
  if (isIdentifier(name))
    result.location = NameLoc::get(StringAttr::get(parser.getContext(), name),
                                   result.location);
  return success();
}

void ConstantOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printFloat(getValueAttr().getValue());
  p.printOptionalAttrDict((*this)->getAttrs(), {getValueAttrName()});
  p << " : " << getType();
}

void ConstantOp::getAsmResultNames(OpAsmSetValueNameFn fn) {
  setNodeResultName(*this, fn);
}

LogicalResult ConstantOp::verify() {
  auto type = cast<RankedTensorType>(getType());
  std::optional<DType> dtype = dtypeOf(type.getElementType());
  if (type.getShape() != ArrayRef<int64_t>{1} || !dtype || !isFloat(*dtype))
    return emitOpError("result must be a tensor<1x...> of a float type, got ")
           << type;
  if (!std::isfinite(getValue().convertToDouble()))
    return emitOpError("value must be finite");
  return success();
}

//===----------------------------------------------------------------------===//
// ConvertOp
//===----------------------------------------------------------------------===//

LogicalResult mtc::graph::verifyNode(Operation *op) {
  if (failed(verifyTensorLimits(op, "result", op->getResult(0).getType())))
    return failure();
  // i4 is a storage type: only convert reads it, nothing produces it.
  std::optional<DType> to;
  if (isa<ConvertOp>(op))
    to = dtypeOf(getElementTypeOrSelf(op->getResult(0).getType()));
  for (Value v : op->getOperands()) {
    std::optional<DType> d = dtypeOf(getElementTypeOrSelf(v.getType()));
    std::string err;
    if (d && !checkI4Use(op->getName().stripDialect(), *d, to, err))
      return op->emitOpError() << err.substr(err.find(": ") + 2);
  }
  if (auto rep = dyn_cast<RepeatOp>(op)) {
    auto in = cast<RankedTensorType>(rep.getInput().getType());
    auto out = cast<RankedTensorType>(rep.getType());
    Shape shape;
    std::string err;
    if (!repeatShape(in.getShape(), rep.getGroup(), shape, err))
      return rep.emitOpError() << err;
    if (out != RankedTensorType::get(shape, in.getElementType()))
      return rep.emitOpError("result type ")
             << out << " does not match the input repeated in groups of "
             << rep.getGroup() << "; expected "
             << RankedTensorType::get(shape, in.getElementType());
  }
  if (auto rope = dyn_cast<RopeOp>(op)) {
    auto x = cast<RankedTensorType>(rope.getX().getType());
    auto t = cast<RankedTensorType>(rope.getTable().getType());
    std::optional<DType> xd = dtypeOf(x.getElementType());
    std::optional<DType> td = dtypeOf(t.getElementType());
    Shape shape;
    std::string err;
    if (!xd || !td ||
        !ropeShape(x.getShape(), *xd, t.getShape(), *td,
                   int64_t(rope.getCols()), shape, err))
      return rope.emitOpError() << err.substr(err.find(": ") + 2);
    if (rope.getType() != x)
      return rope.emitOpError("result type ")
             << rope.getType() << " must be x's, " << x;
  }
  if (auto cvt = dyn_cast<ConvertOp>(op)) {
    auto in = cast<RankedTensorType>(cvt.getInput().getType());
    auto out = cast<RankedTensorType>(cvt.getType());
    if (in.getShape() != out.getShape())
      return cvt.emitOpError("changes the shape from ")
             << formatShape(in.getShape()) << " to "
             << formatShape(out.getShape()) << "; convert keeps the shape";
  }
  return success();
}

OpFoldResult ConvertOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

namespace {
/// convert(convert(x, T1), T2) -> convert(x, T2) when x -> T1 is exact.
struct FoldExactConvertChain : OpRewritePattern<ConvertOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvertOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ConvertOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "input is not a convert");
    auto src = dtypeOf(getElementTypeOrSelf(inner.getInput().getType()));
    auto mid = dtypeOf(getElementTypeOrSelf(inner.getType()));
    if (!src || !mid || !isExactConversion(*src, *mid))
      return rewriter.notifyMatchFailure(op, "inner convert rounds");
    rewriter.modifyOpInPlace(
        op, [&] { op.getInputMutable().assign(inner.getInput()); });
    return success();
  }
};
} // namespace

void ConvertOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *ctx) {
  results.add<FoldExactConvertChain>(ctx);
}

//===----------------------------------------------------------------------===//
// TransposeOp, LinearOp, MatmulOp
//===----------------------------------------------------------------------===//

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  if (auto inner = getInput().getDefiningOp<TransposeOp>())
    return inner.getInput();
  return {};
}

namespace {
/// matmul(a, transpose(b)) -> linear(a, b): the canonical form keeps a weight
/// in its stored [N, K] layout.
struct MatmulOfTranspose : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    auto t = op.getB().getDefiningOp<TransposeOp>();
    if (!t)
      return rewriter.notifyMatchFailure(op, "b is not a transpose");
    rewriter.replaceOpWithNewOp<LinearOp>(op, op.getA(), t.getInput());
    return success();
  }
};

/// linear(x, transpose(b)) -> matmul(x, b) when x has a row dimension.
struct LinearOfTranspose : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    auto t = op.getW().getDefiningOp<TransposeOp>();
    if (!t)
      return rewriter.notifyMatchFailure(op, "w is not a transpose");
    if (cast<RankedTensorType>(op.getX().getType()).getRank() < 2)
      return rewriter.notifyMatchFailure(op, "x is 1-D; matmul needs 2-D");
    rewriter.replaceOpWithNewOp<MatmulOp>(op, op.getX(), t.getInput());
    return success();
  }
};
} // namespace

void MatmulOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *ctx) {
  results.add<MatmulOfTranspose>(ctx);
}

void LinearOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *ctx) {
  results.add<LinearOfTranspose>(ctx);
}

#define GET_OP_CLASSES
#include "dialects/Graph/GraphOps.cpp.inc"
