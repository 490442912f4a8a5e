//===- KernelBuilder.cpp - Building kernel ops for fusion -----------------===//
//
// See KernelBuilder.h. Step 1 of fusion (convertNode) is here: every graph
// node becomes a kernel op with a single-node region. linear/matmul become
// kernel.contract (body: convert both elements to f32 and multiply;
// epilogue: round the f32 sum to the node's element type); every other node
// becomes kernel.elementwise (broadcasts and transposes become indexing
// maps). Every node rounds its result to its element type.
//
//===----------------------------------------------------------------------===//
#include "passes/KernelBuilder.h"

#include "dialects/Graph/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mtc::kernel;

namespace mtc::fusion {
//===----------------------------------------------------------------------===//
// Scalar conversions
//===----------------------------------------------------------------------===//

Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// One conversion step with mtc's convert semantics (arith.fptosi inside a
/// kernel region saturates; see the kernel dialect).
static Value convertScalar(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  if (isa<IntegerType>(from) && isa<IntegerType>(to)) // i4 -> i8: exact
    return arith::ExtSIOp::create(b, loc, to, v);
  if (isa<IntegerType>(from))
    return arith::SIToFPOp::create(b, loc, to, v);
  if (isa<IntegerType>(to))
    return arith::FPToSIOp::create(b, loc, to, v);
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw == tw) // f16 <-> bf16 goes through f32
    v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  if (v.getType() == to)
    return v;
  if (v.getType().getIntOrFloatBitWidth() < tw)
    return arith::ExtFOp::create(b, loc, to, v);
  return arith::TruncFOp::create(b, loc, to, v);
}

/// Converts `v` through `types` (the last is the result type). Intermediate
/// types reached by an exact conversion are skipped: converting an i8 to bf16
/// and then to f32 is the same as converting it to f32 directly.
Value convertThrough(OpBuilder &b, Location loc, Value v,
                     ArrayRef<Type> types) {
  SmallVector<Type> steps(types.begin(), types.end());
  Type cur = v.getType();
  SmallVector<Type> kept;
  for (size_t i = 0; i < steps.size(); ++i) {
    bool last = i + 1 == steps.size();
    auto from = dtypeOf(kept.empty() ? cur : kept.back());
    auto to = dtypeOf(steps[i]);
    if (!last && from && to && isExactConversion(*from, *to))
      continue; // skip the exact intermediate
    kept.push_back(steps[i]);
  }
  for (Type t : kept)
    v = convertScalar(b, loc, v, t);
  return v;
}

/// If `region` computes its result by a chain of conversions of its single
/// argument, the types along the chain (empty for the identity).
std::optional<SmallVector<Type>> conversionChainTypes(Region &region) {
  Block &block = region.front();
  if (block.getNumArguments() != 1)
    return std::nullopt;
  SmallVector<Type> types;
  Value cur = block.getArgument(0);
  for (Operation &op : block.without_terminator()) {
    if (!isa<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::FPToSIOp,
             arith::ExtSIOp>(op) ||
        op.getOperand(0) != cur)
      return std::nullopt;
    cur = op.getResult(0);
    types.push_back(cur.getType());
  }
  if (cast<YieldOp>(block.getTerminator()).getValue() != cur)
    return std::nullopt;
  return types;
}

/// Types along a contraction body chain, ending in f32.
SmallVector<Type> chainTypes(ArrayRef<Operation *> chain, Type f32) {
  SmallVector<Type> types;
  for (Operation *op : chain)
    types.push_back(op->getResult(0).getType());
  if (types.empty())
    types.push_back(f32);
  return types;
}

//===----------------------------------------------------------------------===//
// Maps
//===----------------------------------------------------------------------===//

AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> in,
                       ArrayRef<int64_t> out) {
  SmallVector<AffineExpr> results;
  size_t offset = out.size() - in.size();
  for (size_t j = 0; j < in.size(); ++j) {
    if (in[j] == out[offset + j])
      results.push_back(getAffineDimExpr(offset + j, ctx));
    else
      results.push_back(getAffineConstantExpr(0, ctx));
  }
  return AffineMap::get(out.size(), 0, results, ctx);
}

/// Swaps the last two dims.
static AffineMap transposeMap(MLIRContext *ctx, unsigned rank) {
  SmallVector<AffineExpr> results;
  for (unsigned i = 0; i < rank; ++i)
    results.push_back(getAffineDimExpr(i, ctx));
  std::swap(results[rank - 1], results[rank - 2]);
  return AffineMap::get(rank, 0, results, ctx);
}

bool isTransposeMap(AffineMap map) {
  return map.getNumDims() >= 2 &&
         map == transposeMap(map.getContext(), map.getNumDims());
}

ArrayAttr mapsAttr(Builder &b, ArrayRef<AffineMap> maps) {
  return b.getAffineMapArrayAttr(maps);
}

SmallVector<AffineMap> mapsOf(ArrayAttr attr) {
  SmallVector<AffineMap> maps;
  for (Attribute a : attr)
    maps.push_back(cast<AffineMapAttr>(a).getValue());
  return maps;
}

unsigned InputList::add(Value v, AffineMap map) {
  for (unsigned i = 0; i < values.size(); ++i)
    if (values[i] == v && maps[i] == map)
      return i;
  values.push_back(v);
  maps.push_back(map);
  return values.size() - 1;
}

SmallVector<Type> InputList::elementTypes() const {
  SmallVector<Type> types;
  for (Value v : values)
    types.push_back(elementTypeOf(v));
  return types;
}

//===----------------------------------------------------------------------===//
// Names and region plumbing
//===----------------------------------------------------------------------===//

static std::string nodeName(Operation *op, unsigned index) {
  StringRef name = nameFromLoc(op->getLoc());
  if (!name.empty())
    return name.str();
  return (op->getName().stripDialect() + "_" + Twine(index)).str();
}

/// Clones the ops of `block` (except the terminator) at the builder's
/// insertion point with its arguments replaced by `args`; returns the value
/// the cloned block yields.
Value inlineBlock(OpBuilder &b, Block &block, ValueRange args) {
  IRMapping mapping;
  mapping.map(block.getArguments(), args);
  for (Operation &op : block.without_terminator())
    b.clone(op, mapping);
  return mapping.lookupOrDefault(
      cast<YieldOp>(block.getTerminator()).getValue());
}

/// Adds an entry block with arguments of `types` to `region` and fills it:
/// `fill` returns the value to yield.
static void fillRegion(OpBuilder &b, Location loc, Region &region,
                       ArrayRef<Type> types,
                       function_ref<Value(OpBuilder &, ValueRange)> fill) {
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Location> locs(types.size(), loc);
  Block *block = b.createBlock(&region, {}, types, locs);
  b.setInsertionPointToStart(block);
  Value result = fill(b, block->getArguments());
  YieldOp::create(b, loc, result);
}

ElementwiseOp
createElementwise(OpBuilder &b, Location loc, Type resultType,
                  const InputList &inputs, ArrayAttr nodes,
                  function_ref<Value(OpBuilder &, ValueRange)> body) {
  auto op =
      ElementwiseOp::create(b, loc, resultType, inputs.values,
                            mapsAttr(b, inputs.maps), nodes, ScheduleAttr());
  fillRegion(b, loc, op.getBody(), inputs.elementTypes(), body);
  return op;
}

ContractOp createContract(OpBuilder &b, Location loc, Type resultType, Value a,
                          Value bv, bool aT, bool bT, const InputList &bIn,
                          const InputList &ep, ArrayAttr nodes,
                          const InputList &aIn, ValueRange siblings,
                          ValueRange siblingBInputs) {
  auto op = ContractOp::create(
      b, loc, resultType, a, bv, bIn.values, ep.values, aIn.values, siblings,
      siblingBInputs, aT ? b.getUnitAttr() : UnitAttr(),
      bT ? b.getUnitAttr() : UnitAttr(),
      bIn.values.empty() ? ArrayAttr() : mapsAttr(b, bIn.maps),
      aIn.values.empty() ? ArrayAttr() : mapsAttr(b, aIn.maps),
      mapsAttr(b, ep.maps), nodes, ScheduleAttr());
  return op;
}

ReduceOp createReduce(OpBuilder &b, Location loc, Type resultType,
                      int64_t extent, const InputList &inputs,
                      const InputList &ep, ArrayAttr nodes,
                      const InputList &apply) {
  return ReduceOp::create(
      b, loc, resultType, inputs.values, ep.values, apply.values,
      mapsAttr(b, inputs.maps), mapsAttr(b, ep.maps),
      apply.values.empty() ? ArrayAttr() : mapsAttr(b, apply.maps),
      b.getI64IntegerAttr(extent), nodes, ScheduleAttr());
}

InputList inputsOf(ValueRange values, ArrayAttr maps) {
  InputList in;
  in.values.assign(values.begin(), values.end());
  if (maps)
    in.maps = mapsOf(maps);
  return in;
}

InputList aInputsOf(ContractOp op) {
  return inputsOf(op.getAInputs(), op.getAMaps().value_or(ArrayAttr()));
}

InputList bInputsOf(ContractOp op) {
  return inputsOf(op.getBInputs(), op.getBMaps().value_or(ArrayAttr()));
}

/// The standard contraction body: both elements converted to f32 through
/// the given types, multiplied.
void fillContractBody(OpBuilder &b, Location loc, ContractOp op,
                      ArrayRef<Type> aTypes, ArrayRef<Type> bTypes) {
  fillRegion(b, loc, op.getBody(),
             {elementTypeOf(op.getA()), elementTypeOf(op.getB())},
             [&](OpBuilder &b, ValueRange args) -> Value {
               Value x = convertThrough(b, loc, args[0], aTypes);
               Value y = convertThrough(b, loc, args[1], bTypes);
               return arith::MulFOp::create(b, loc, x, y);
             });
}

void fillContractBody(OpBuilder &b, Location loc, ContractOp op,
                      ArrayRef<Type> aTypes,
                      function_ref<Value(OpBuilder &, ValueRange)> weight) {
  SmallVector<Type> args{elementTypeOf(op.getA()), elementTypeOf(op.getB())};
  for (Value v : op.getBInputs())
    args.push_back(elementTypeOf(v));
  fillRegion(b, loc, op.getBody(), args,
             [&](OpBuilder &b, ValueRange args) -> Value {
               Value x = convertThrough(b, loc, args[0], aTypes);
               Value y = weight(b, args.drop_front());
               return arith::MulFOp::create(b, loc, x, y);
             });
}

bool onlyUsedBy(Value v, Operation *user) {
  return !v.use_empty() &&
         llvm::all_of(v.getUsers(), [&](Operation *u) { return u == user; });
}

Value cloneWeightSide(OpBuilder &b, ContractOp op, ValueRange args) {
  Block &body = op.getBody().front();
  IRMapping mapping;
  mapping.map(body.getArguments().drop_front(), args);
  for (Operation *inner : op.getBOps())
    b.clone(*inner, mapping);
  auto yield = cast<YieldOp>(body.getTerminator());
  return mapping.lookup(
      yield.getValue().getDefiningOp<arith::MulFOp>().getRhs());
}

//===----------------------------------------------------------------------===//
// Step 1: one kernel per node
//===----------------------------------------------------------------------===//

static Value toF32(OpBuilder &b, Location loc, Value v) {
  return convertScalar(b, loc, v, b.getF32Type());
}

/// graph.rope as an elementwise kernel over x's [M, N]: x at the element,
/// the table at (its row, or 0; n mod D). The table's element at an even n
/// is the pair's cosine and at an odd n its sine, so each is the other's
/// kernel.partner, as x's partner is the pair's other coordinate.
static Value buildRope(OpBuilder &b, Location loc, graph::RopeOp rope,
                       ArrayAttr nodes) {
  MLIRContext *ctx = b.getContext();
  auto table = cast<RankedTensorType>(rope.getTable().getType());
  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx);
  InputList inputs;
  inputs.add(rope.getX(), AffineMap::getMultiDimIdentityMap(2, ctx));
  inputs.add(rope.getTable(),
             AffineMap::get(
                 2, 0,
                 {table.getDimSize(0) == 1 ? getAffineConstantExpr(0, ctx) : d0,
                  d1 % table.getDimSize(1)},
                 ctx));
  auto body = [&](OpBuilder &b, ValueRange args) -> Value {
    Value x = args[0], t = args[1];
    Value xp = PartnerOp::create(b, loc, x.getType(), x);
    Value tp = PartnerOp::create(b, loc, t.getType(), t);
    Value n = ColumnOp::create(b, loc, b.getI32Type());
    Value odd = arith::TruncIOp::create(b, loc, b.getI1Type(), n);
    Value c = toF32(b, loc, arith::SelectOp::create(b, loc, odd, tp, t));
    Value sn = toF32(b, loc, arith::SelectOp::create(b, loc, odd, t, tp));
    // Even n: x c - x' s; odd n: x c + x' s (x' the pair's other one).
    Value xc = arith::MulFOp::create(b, loc, x, c);
    Value ps = arith::MulFOp::create(b, loc, xp, sn);
    Value rotated = arith::SelectOp::create(
        b, loc, odd, arith::AddFOp::create(b, loc, xc, ps),
        arith::SubFOp::create(b, loc, xc, ps));
    Value cols = arith::ConstantOp::create(
        b, loc, b.getI32IntegerAttr(int32_t(rope.getCols())));
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, n, cols);
    return arith::SelectOp::create(b, loc, inside, rotated, x);
  };
  return createElementwise(b, loc, rope.getType(), inputs, nodes, body)
      .getResult();
}

LogicalResult convertNode(OpBuilder &b, Operation *op, unsigned index) {
  MLIRContext *ctx = op->getContext();
  Location loc = op->getLoc();
  ArrayAttr nodes = b.getStrArrayAttr({nodeName(op, index)});
  Type resultType = op->getResult(0).getType();
  Type outElem = getElementTypeOrSelf(resultType);
  ArrayRef<int64_t> outShape = cast<RankedTensorType>(resultType).getShape();
  b.setInsertionPoint(op);
  Value replacement;

  auto contract = [&](Value a, Value w, bool bT) {
    InputList none;
    ContractOp c =
        createContract(b, loc, resultType, a, w, false, bT, none, none, nodes);
    fillContractBody(b, loc, c, {b.getF32Type()}, {b.getF32Type()});
    fillRegion(b, loc, c.getEpilogue(), {b.getF32Type()},
               [&](OpBuilder &b, ValueRange args) {
                 return convertScalar(b, loc, args[0], outElem);
               });
    return c.getResult();
  };
  auto elementwise = [&](function_ref<Value(OpBuilder &, ValueRange)> body) {
    InputList inputs;
    for (Value v : op->getOperands())
      inputs.values.push_back(v),
          inputs.maps.push_back(broadcastMap(
              ctx, cast<RankedTensorType>(v.getType()).getShape(), outShape));
    return createElementwise(b, loc, resultType, inputs, nodes, body)
        .getResult();
  };
  /// An f32 computation on the converted operands, rounded to the result.
  auto arithmetic = [&](function_ref<Value(OpBuilder &, ValueRange)> f) {
    return elementwise([&](OpBuilder &b, ValueRange args) {
      SmallVector<Value> wide;
      for (Value v : args)
        wide.push_back(toF32(b, loc, v));
      return convertScalar(b, loc, f(b, wide), outElem);
    });
  };

  if (auto lin = dyn_cast<graph::LinearOp>(op)) {
    replacement = contract(lin.getX(), lin.getW(), /*bT=*/false);
  } else if (auto mm = dyn_cast<graph::MatmulOp>(op)) {
    replacement = contract(mm.getA(), mm.getB(), /*bT=*/true);
  } else if (isa<graph::ConvertOp>(op)) {
    replacement = elementwise([&](OpBuilder &b, ValueRange args) {
      return convertThrough(b, loc, args[0], {outElem});
    });
  } else if (auto t = dyn_cast<graph::TransposeOp>(op)) {
    InputList inputs;
    inputs.add(t.getInput(), transposeMap(ctx, outShape.size()));
    replacement =
        createElementwise(b, loc, resultType, inputs, nodes,
                          [](OpBuilder &, ValueRange args) { return args[0]; })
            .getResult();
  } else if (auto rep = dyn_cast<graph::RepeatOp>(op)) {
    // result[..., j] = t[..., j floordiv group]
    unsigned rank = outShape.size();
    SmallVector<AffineExpr> results;
    for (unsigned i = 0; i + 1 < rank; ++i)
      results.push_back(getAffineDimExpr(i, ctx));
    results.push_back(
        getAffineDimExpr(rank - 1, ctx).floorDiv(int64_t(rep.getGroup())));
    InputList inputs;
    inputs.add(rep.getInput(), AffineMap::get(rank, 0, results, ctx));
    replacement =
        createElementwise(b, loc, resultType, inputs, nodes,
                          [](OpBuilder &, ValueRange args) { return args[0]; })
            .getResult();
  } else if (auto rope = dyn_cast<graph::RopeOp>(op)) {
    replacement = buildRope(b, loc, rope, nodes);
  } else if (isa<graph::AddOp>(op)) {
    replacement = arithmetic([&](OpBuilder &b, ValueRange v) -> Value {
      return arith::AddFOp::create(b, loc, v[0], v[1]);
    });
  } else if (isa<graph::SubOp>(op)) {
    replacement = arithmetic([&](OpBuilder &b, ValueRange v) -> Value {
      return arith::SubFOp::create(b, loc, v[0], v[1]);
    });
  } else if (isa<graph::MulOp>(op)) {
    replacement = arithmetic([&](OpBuilder &b, ValueRange v) -> Value {
      return arith::MulFOp::create(b, loc, v[0], v[1]);
    });
  } else if (isa<graph::ReluOp>(op)) {
    replacement = arithmetic([&](OpBuilder &b, ValueRange v) -> Value {
      Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
      return arith::MaximumFOp::create(b, loc, v[0], zero);
    });
  } else if (isa<graph::SiluOp>(op)) {
    // x / (1 + exp(-x))
    replacement = arithmetic([&](OpBuilder &b, ValueRange v) -> Value {
      Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1));
      Value neg = arith::NegFOp::create(b, loc, v[0]);
      Value e = math::ExpOp::create(b, loc, neg);
      Value den = arith::AddFOp::create(b, loc, one, e);
      return arith::DivFOp::create(b, loc, v[0], den);
    });
  } else if (isa<graph::RsqrtOp>(op)) {
    replacement = arithmetic([&](OpBuilder &b, ValueRange v) -> Value {
      return math::RsqrtOp::create(b, loc, v[0]);
    });
  } else if (auto c = dyn_cast<graph::ConstantOp>(op)) {
    // No inputs: fusion inlines it into its one user.
    replacement =
        createElementwise(
            b, loc, resultType, InputList(), nodes,
            [&](OpBuilder &b, ValueRange) -> Value {
              return arith::ConstantOp::create(
                  b, loc,
                  b.getFloatAttr(outElem, c.getValue().convertToDouble()));
            })
            .getResult();
  } else if (isa<graph::SumOp, graph::MeanOp>(op)) {
    // sum over k of x[..., k] in f32; mean divides by K; rounded to the
    // node's type.
    Value in = op->getOperand(0);
    ArrayRef<int64_t> inShape = cast<RankedTensorType>(in.getType()).getShape();
    InputList inputs;
    inputs.add(in, AffineMap::getMultiDimIdentityMap(inShape.size(), ctx));
    ReduceOp r = createReduce(b, loc, resultType, inShape.back(), inputs,
                              InputList(), nodes);
    fillRegion(
        b, loc, r.getBody(), inputs.elementTypes(),
        [&](OpBuilder &b, ValueRange args) { return toF32(b, loc, args[0]); });
    bool mean = isa<graph::MeanOp>(op);
    fillRegion(b, loc, r.getEpilogue(), {b.getF32Type()},
               [&](OpBuilder &b, ValueRange args) -> Value {
                 Value v = args[0];
                 if (mean)
                   v = arith::DivFOp::create(
                       b, loc, v,
                       arith::ConstantOp::create(
                           b, loc, b.getF32FloatAttr(float(inShape.back()))));
                 return convertScalar(b, loc, v, outElem);
               });
    replacement = r.getResult();
  } else {
    return op->emitOpError("cannot be turned into a kernel");
  }
  op->getResult(0).replaceAllUsesWith(replacement);
  op->erase();
  return success();
}

} // namespace mtc::fusion
