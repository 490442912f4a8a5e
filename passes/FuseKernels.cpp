//===- FuseKernels.cpp - Graph nodes to fused kernel ops --------------------===//
//
// The fusion pass (`mtc-fuse`). The algorithm:
//
// 1. Every graph node becomes a kernel op with a single-node region:
//    linear/matmul -> kernel.contract (body: convert both elements to f32 and
//    multiply; epilogue: round the f32 sum to the node's element type),
//    every other node -> kernel.elementwise (broadcasts and transposes become
//    indexing maps).
// 2. Patterns, applied greedily to a fixed point, merge kernels:
//    - FoldOperandConversion: a conversion/transpose-only elementwise kernel
//      feeding a contraction operand moves into the contraction body (the
//      int8 -> bf16 convert of a weight lands in the reduction loop);
//    - FuseEpilogue: the only consumer of a contraction, an elementwise kernel
//      over the same iteration space, becomes the epilogue;
//    - FuseElementwiseProducer / FuseEpilogueInputProducer: an elementwise
//      kernel whose only user is another kernel is inlined into it.
// 3. Outputs that are graph inputs, or returned twice, get a copy kernel.
//
// Regions are merged by cloning: a producer's region is cloned with its block
// arguments mapped, and its yielded value replaces the consumer's argument.
// Every node keeps rounding its result to its element type, so fusion changes
// nothing but the order of the f32 summation.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Kernel/KernelOps.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "mtc-fuse"

namespace mtc {
#define GEN_PASS_DEF_FUSEKERNELS
#include "passes/Passes.h.inc"
} // namespace mtc

using namespace mlir;
using namespace mtc;
using namespace mtc::kernel;

namespace {

//===----------------------------------------------------------------------===//
// Scalar conversions
//===----------------------------------------------------------------------===//

Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// One conversion step with mtc's convert semantics (arith.fptosi inside a
/// kernel region saturates; see the kernel dialect).
Value convertScalar(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
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
    if (!isa<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp,
             arith::FPToSIOp>(op) ||
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

/// Numpy broadcasting of a tensor of `in` shape into an iteration space of
/// `out` shape.
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
AffineMap transposeMap(MLIRContext *ctx, unsigned rank) {
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

/// Inputs of a kernel being built: (value, map) pairs, deduplicated.
struct InputList {
  SmallVector<Value> values;
  SmallVector<AffineMap> maps;
  unsigned add(Value v, AffineMap map) {
    for (unsigned i = 0; i < values.size(); ++i)
      if (values[i] == v && maps[i] == map)
        return i;
    values.push_back(v);
    maps.push_back(map);
    return values.size() - 1;
  }
  SmallVector<Type> elementTypes() const {
    SmallVector<Type> types;
    for (Value v : values)
      types.push_back(elementTypeOf(v));
    return types;
  }
};

//===----------------------------------------------------------------------===//
// Names and region plumbing
//===----------------------------------------------------------------------===//

std::string nodeName(Operation *op, unsigned index) {
  StringRef name = nameFromLoc(op->getLoc());
  if (!name.empty())
    return name.str();
  return (op->getName().stripDialect() + "_" + Twine(index)).str();
}

SmallVector<StringRef> nodesOf(ArrayAttr attr) {
  SmallVector<StringRef> out;
  for (Attribute a : attr)
    out.push_back(cast<StringAttr>(a).getValue());
  return out;
}

ArrayAttr concatNodes(Builder &b, ArrayAttr first, ArrayAttr second) {
  SmallVector<StringRef> all = nodesOf(first);
  llvm::append_range(all, nodesOf(second));
  return b.getStrArrayAttr(all);
}

Location fuseLocs(Operation *a, Operation *b) {
  return FusedLoc::get(a->getContext(), {a->getLoc(), b->getLoc()});
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

/// Moves the ops of `from` (terminator included) to the end of `to`, its
/// arguments replaced by `args`. The scalar ops are not changed, so the
/// rewrite driver is not told about each of them: re-visiting a chain's
/// whole body after every merge would make fusion quadratic in its length.
void spliceBlock(Block &from, Block &to, ValueRange args) {
  for (auto [arg, v] : llvm::zip(from.getArguments(), args))
    arg.replaceAllUsesWith(v);
  to.getOperations().splice(to.end(), from.getOperations());
}

/// Adds an entry block with arguments of `types` to `region` and fills it:
/// `fill` returns the value to yield.
void fillRegion(OpBuilder &b, Location loc, Region &region,
                ArrayRef<Type> types,
                function_ref<Value(OpBuilder &, ValueRange)> fill) {
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Location> locs(types.size(), loc);
  Block *block = b.createBlock(&region, {}, types, locs);
  b.setInsertionPointToStart(block);
  Value result = fill(b, block->getArguments());
  YieldOp::create(b, loc, result);
}

ElementwiseOp createElementwise(OpBuilder &b, Location loc, Type resultType,
                                const InputList &inputs, ArrayAttr nodes,
                                function_ref<Value(OpBuilder &, ValueRange)>
                                    body) {
  auto op = ElementwiseOp::create(b, loc, resultType, inputs.values,
                                  mapsAttr(b, inputs.maps), nodes,
                                  ScheduleAttr());
  fillRegion(b, loc, op.getBody(), inputs.elementTypes(), body);
  return op;
}

ContractOp createContract(OpBuilder &b, Location loc, Type resultType, Value a,
                          Value bv, bool aT, bool bT, const InputList &ep,
                          ArrayAttr nodes) {
  auto op = ContractOp::create(b, loc, resultType, a, bv, ep.values,
                               aT ? b.getUnitAttr() : UnitAttr(),
                               bT ? b.getUnitAttr() : UnitAttr(),
                               mapsAttr(b, ep.maps), nodes, ScheduleAttr());
  return op;
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

//===----------------------------------------------------------------------===//
// Step 1: one kernel per node
//===----------------------------------------------------------------------===//

Value toF32(OpBuilder &b, Location loc, Value v) {
  return convertScalar(b, loc, v, b.getF32Type());
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
    ContractOp c = createContract(b, loc, resultType, a, w, false, bT, none,
                                  nodes);
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
    replacement = createElementwise(b, loc, resultType, inputs, nodes,
                                    [](OpBuilder &, ValueRange args) {
                                      return args[0];
                                    })
                      .getResult();
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
  } else {
    return op->emitOpError("cannot be turned into a kernel");
  }
  op->getResult(0).replaceAllUsesWith(replacement);
  op->erase();
  return success();
}

//===----------------------------------------------------------------------===//
// Step 2: fusion patterns
//===----------------------------------------------------------------------===//

/// A conversion and/or transpose of a contraction operand folds into the
/// contraction body.
struct FoldOperandConversion : OpRewritePattern<ContractOp> {
  FoldOperandConversion(MLIRContext *ctx, Pass::Statistic &stat)
      : OpRewritePattern(ctx), stat(stat) {}

  LogicalResult matchAndRewrite(ContractOp op,
                                PatternRewriter &rewriter) const override {
    for (unsigned which = 0; which < 2; ++which) {
      Value operand = which == 0 ? op.getA() : op.getB();
      auto prod = operand.getDefiningOp<ElementwiseOp>();
      if (!prod || prod.getInputs().size() != 1)
        continue;
      std::optional<SmallVector<Type>> prodTypes =
          conversionChainTypes(prod.getBody());
      if (!prodTypes)
        continue;
      AffineMap map = cast<AffineMapAttr>(prod.getIndexingMaps()[0]).getValue();
      bool transposes = isTransposeMap(map);
      if (!map.isIdentity() && !transposes)
        continue;
      Value source = prod.getInputs()[0];
      if (transposes && cast<RankedTensorType>(source.getType()).getRank() != 2)
        continue; // a batched A operand cannot be read transposed
      bool aT = op.getATransposed(), bT = op.getBTransposed();
      if (transposes)
        (which == 0 ? aT : bT) = !(which == 0 ? aT : bT);

      Type f32 = rewriter.getF32Type();
      SmallVector<Type> aTypes = chainTypes(op.getAChain(), f32);
      SmallVector<Type> bTypes = chainTypes(op.getBChain(), f32);
      SmallVector<Type> &types = which == 0 ? aTypes : bTypes;
      SmallVector<Type> merged(*prodTypes);
      llvm::append_range(merged, types);
      types = merged;

      InputList ep;
      ep.values.assign(op.getEpilogueInputs().begin(),
                       op.getEpilogueInputs().end());
      ep.maps = mapsOf(op.getEpilogueMaps());
      Location loc = fuseLocs(prod, op);
      ContractOp fused = createContract(
          rewriter, loc, op.getType(), which == 0 ? source : op.getA(),
          which == 1 ? source : op.getB(), aT, bT, ep,
          concatNodes(rewriter, prod.getNodes(), op.getNodes()));
      fillContractBody(rewriter, loc, fused, aTypes, bTypes);
      fused.getEpilogue().takeBody(op.getEpilogue());
      rewriter.replaceOp(op, fused.getResult());
      ++stat;
      LLVM_DEBUG(llvm::dbgs() << "folded operand conversion into "
                              << fused.getNodes() << "\n");
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no foldable operand conversion");
  }
  Pass::Statistic &stat;
};

/// True if every use of `v` is an operand of `user`.
bool onlyUsedBy(Value v, Operation *user) {
  return !v.use_empty() && llvm::all_of(v.getUsers(), [&](Operation *u) {
           return u == user;
         });
}

/// The only consumer of a contraction becomes its epilogue.
struct FuseEpilogue : OpRewritePattern<ElementwiseOp> {
  FuseEpilogue(MLIRContext *ctx, Pass::Statistic &stat)
      : OpRewritePattern(ctx), stat(stat) {}

  LogicalResult matchAndRewrite(ElementwiseOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<AffineMap> maps = mapsOf(op.getIndexingMaps());
    for (Value v : op.getInputs()) {
      auto c = v.getDefiningOp<ContractOp>();
      if (!c || !onlyUsedBy(v, op))
        continue;
      bool identity = true;
      for (auto [in, map] : llvm::zip(op.getInputs(), maps))
        if (in == v && !map.isIdentity())
          identity = false;
      if (!identity || c.getType().getShape() !=
                           cast<RankedTensorType>(op.getType()).getShape())
        continue;

      InputList ep;
      ep.values.assign(c.getEpilogueInputs().begin(),
                       c.getEpilogueInputs().end());
      ep.maps = mapsOf(c.getEpilogueMaps());
      SmallVector<int> consumerArg; // op input i -> ep index, -1 for v
      for (auto [in, map] : llvm::zip(op.getInputs(), maps))
        consumerArg.push_back(in == v ? -1 : int(ep.add(in, map)));

      Location loc = fuseLocs(c, op);
      ContractOp fused = createContract(
          rewriter, loc, op.getType(), c.getA(), c.getB(), c.getATransposed(),
          c.getBTransposed(), ep,
          concatNodes(rewriter, c.getNodes(), op.getNodes()));
      fused.getBody().takeBody(c.getBody());
      SmallVector<Type> types{rewriter.getF32Type()};
      llvm::append_range(types, ep.elementTypes());
      unsigned numOld = c.getEpilogueInputs().size();
      {
        // The contraction's epilogue (possibly long) is moved, the consumer
        // cloned after it.
        OpBuilder::InsertionGuard guard(rewriter);
        SmallVector<Location> locs(types.size(), loc);
        Block *block =
            rewriter.createBlock(&fused.getEpilogue(), {}, types, locs);
        ValueRange args = block->getArguments();
        spliceBlock(c.getEpilogue().front(), *block,
                    args.take_front(1 + numOld));
        auto oldYield = cast<YieldOp>(block->getTerminator());
        Value y = oldYield.getValue();
        rewriter.setInsertionPoint(oldYield);
        SmallVector<Value> consumerArgs;
        for (int idx : consumerArg)
          consumerArgs.push_back(idx < 0 ? y : args[1 + idx]);
        Value r = inlineBlock(rewriter, op.getBody().front(), consumerArgs);
        YieldOp::create(rewriter, loc, r);
        rewriter.eraseOp(oldYield);
      }
      rewriter.replaceOp(op, fused.getResult());
      rewriter.eraseOp(c);
      ++stat;
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no contraction to extend");
  }
  Pass::Statistic &stat;
};

/// Shared by the two producer-inlining patterns: the consumer's inputs with
/// `v` replaced by the producer's inputs (maps composed). Returns the index
/// of each consumer input in the new list (-1 for `v`) and the producer's.
struct Inlined {
  InputList inputs;
  SmallVector<int> consumerArg;
  SmallVector<unsigned> producerArg;
};

std::optional<Inlined> inlineProducer(ValueRange consumerInputs,
                                      ArrayRef<AffineMap> consumerMaps,
                                      unsigned skipLeading, Value v,
                                      ElementwiseOp prod) {
  std::optional<AffineMap> vMap;
  for (auto [in, map] : llvm::zip(consumerInputs, consumerMaps)) {
    if (in != v)
      continue;
    if (vMap && *vMap != map)
      return std::nullopt; // read at two different indexings
    vMap = map;
  }
  if (!vMap)
    return std::nullopt;
  Inlined r;
  for (auto [in, map] : llvm::zip(consumerInputs, consumerMaps))
    r.consumerArg.push_back(in == v ? -1 : int(r.inputs.add(in, map)));
  for (auto [in, map] :
       llvm::zip(prod.getInputs(), mapsOf(prod.getIndexingMaps())))
    r.producerArg.push_back(r.inputs.add(in, map.compose(*vMap)));
  (void)skipLeading;
  return r;
}

/// Fills the empty `region` with the merged body: the producer's body is
/// cloned first (it is a node or two), then the consumer's block is moved in
/// after it (it may be a long fused chain; moving keeps a chain of n fusions
/// linear instead of quadratic), its `v` argument replaced by the producer's
/// value. `leading` arguments (the epilogue's acc) come before the inputs.
void mergeBodies(PatternRewriter &rw, Location loc, Region &region,
                 ArrayRef<Type> types, unsigned leading, const Inlined &m,
                 Block &producer, Block &consumer) {
  OpBuilder::InsertionGuard guard(rw);
  SmallVector<Location> locs(types.size(), loc);
  Block *block = rw.createBlock(&region, {}, types, locs);
  rw.setInsertionPointToStart(block);
  ValueRange args = block->getArguments().drop_front(leading);
  SmallVector<Value> prodArgs;
  for (unsigned idx : m.producerArg)
    prodArgs.push_back(args[idx]);
  Value pv = inlineBlock(rw, producer, prodArgs);
  SmallVector<Value> consArgs(block->getArguments().take_front(leading));
  for (int idx : m.consumerArg)
    consArgs.push_back(idx < 0 ? pv : args[idx]);
  spliceBlock(consumer, *block, consArgs);
}

/// True if `op` will be inlined into the elementwise kernel that is its only
/// user; fusion then waits for that consumer, so chains are merged from their
/// end and every node is moved once.
bool willBeAbsorbed(ElementwiseOp op) {
  Value v = op.getResult();
  if (!v.hasOneUse() && !llvm::all_equal(v.getUsers()))
    return false;
  auto consumer = dyn_cast<ElementwiseOp>(*v.getUsers().begin());
  if (!consumer)
    return false;
  return bool(inlineProducer(consumer.getInputs(),
                             mapsOf(consumer.getIndexingMaps()), 0, v, op));
}

struct FuseElementwiseProducer : OpRewritePattern<ElementwiseOp> {
  FuseElementwiseProducer(MLIRContext *ctx, Pass::Statistic &stat)
      : OpRewritePattern(ctx), stat(stat) {}

  LogicalResult matchAndRewrite(ElementwiseOp op,
                                PatternRewriter &rewriter) const override {
    if (willBeAbsorbed(op))
      return rewriter.notifyMatchFailure(op, "its consumer will absorb it");
    SmallVector<AffineMap> maps = mapsOf(op.getIndexingMaps());
    for (Value v : op.getInputs()) {
      auto prod = v.getDefiningOp<ElementwiseOp>();
      if (!prod || !onlyUsedBy(v, op))
        continue;
      std::optional<Inlined> m =
          inlineProducer(op.getInputs(), maps, 0, v, prod);
      if (!m)
        continue;
      // The consumer's location (the last node): a fused location of every
      // node would grow with the chain.
      Location loc = op.getLoc();
      auto fused = ElementwiseOp::create(
          rewriter, loc, op.getType(), m->inputs.values,
          mapsAttr(rewriter, m->inputs.maps),
          concatNodes(rewriter, prod.getNodes(), op.getNodes()),
          ScheduleAttr());
      mergeBodies(rewriter, loc, fused.getBody(), m->inputs.elementTypes(),
                  0, *m, prod.getBody().front(), op.getBody().front());
      rewriter.replaceOp(op, fused.getResult());
      rewriter.eraseOp(prod);
      ++stat;
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no single-use producer");
  }
  Pass::Statistic &stat;
};

struct FuseEpilogueInputProducer : OpRewritePattern<ContractOp> {
  FuseEpilogueInputProducer(MLIRContext *ctx, Pass::Statistic &stat)
      : OpRewritePattern(ctx), stat(stat) {}

  LogicalResult matchAndRewrite(ContractOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<AffineMap> maps = mapsOf(op.getEpilogueMaps());
    for (Value v : op.getEpilogueInputs()) {
      auto prod = v.getDefiningOp<ElementwiseOp>();
      if (!prod || !onlyUsedBy(v, op) || op.getA() == v || op.getB() == v)
        continue;
      std::optional<Inlined> m =
          inlineProducer(op.getEpilogueInputs(), maps, 1, v, prod);
      if (!m)
        continue;
      Location loc = fuseLocs(prod, op);
      ContractOp fused = createContract(
          rewriter, loc, op.getType(), op.getA(), op.getB(),
          op.getATransposed(), op.getBTransposed(), m->inputs,
          concatNodes(rewriter, prod.getNodes(), op.getNodes()));
      fused.getBody().takeBody(op.getBody());
      SmallVector<Type> types{rewriter.getF32Type()};
      llvm::append_range(types, m->inputs.elementTypes());
      mergeBodies(rewriter, loc, fused.getEpilogue(), types, 1, *m,
                  prod.getBody().front(), op.getEpilogue().front());
      rewriter.replaceOp(op, fused.getResult());
      rewriter.eraseOp(prod);
      ++stat;
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no single-use epilogue producer");
  }
  Pass::Statistic &stat;
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct FuseKernels : mtc::impl::FuseKernelsBase<FuseKernels> {
  using FuseKernelsBase::FuseKernelsBase;

  void runOnOperation() override {
    graph::FuncOp func = getOperation();
    OpBuilder b(func.getContext());

    // 1. One kernel per node.
    SmallVector<Operation *> nodes;
    for (Operation &op : func.getBody().front().without_terminator())
      if (op.getDialect() &&
          isa<graph::GraphDialect>(op.getDialect()))
        nodes.push_back(&op);
    for (auto [i, op] : llvm::enumerate(nodes)) {
      if (isa<graph::LinearOp, graph::MatmulOp>(op))
        ++numContractions;
      if (failed(convertNode(b, op, i)))
        return signalPassFailure();
    }

    // 2. Merge.
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldOperandConversion>(&getContext(), numFusedConverts);
    patterns.add<FuseEpilogue>(&getContext(), numEpilogues);
    patterns.add<FuseElementwiseProducer, FuseEpilogueInputProducer>(
        &getContext(), numElementwiseFusions);
    // Folding is off: the regions hold scalar arith that needs none, and
    // visiting every moved op again after each merge would make long chains
    // quadratic.
    GreedyRewriteConfig config;
    config.enableFolding(false);
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(func, std::move(patterns), config)))
      return signalPassFailure();

    // 3. Every output in its own buffer written by a kernel.
    Operation *ret = func.getReturn();
    llvm::SmallPtrSet<Value, 8> seen;
    for (OpOperand &operand : ret->getOpOperands()) {
      Value v = operand.get();
      bool needsCopy = isa<BlockArgument>(v) || !seen.insert(v).second;
      if (!needsCopy)
        continue;
      b.setInsertionPoint(ret);
      auto type = cast<RankedTensorType>(v.getType());
      InputList in;
      in.add(v, AffineMap::getMultiDimIdentityMap(type.getRank(),
                                                  &getContext()));
      std::string name =
          "copy_" + std::to_string(operand.getOperandNumber());
      ElementwiseOp copy = createElementwise(
          b, ret->getLoc(), type, in, b.getStrArrayAttr({name}),
          [](OpBuilder &, ValueRange args) { return args[0]; });
      operand.set(copy.getResult());
    }
  }
};

} // namespace
