//===- FuseKernels.cpp - Graph nodes to fused kernel ops ------------------===//
//
// The fusion pass (`mtc-fuse`). The algorithm:
//
// 1. Every graph node becomes a kernel op with a single-node region
//    (convertNode, KernelBuilder.cpp).
// 2. Patterns, applied greedily to a fixed point, merge kernels:
//    - FoldOperandConversion: a conversion/transpose-only elementwise kernel
//      feeding a contraction operand moves into the contraction body (the
//      int8 -> bf16 convert of a weight lands in the reduction loop);
//    - FoldWeightDequant (FoldWeightDequant.cpp): an elementwise kernel
//      that dequantizes an integer weight with inputs read per row or per
//      group of K (group-wise scales and zeros, graph.repeat) moves into
//      the body too, those inputs becoming the contraction's b_inputs;
//    - FuseEpilogue: the only consumer of a contraction, an elementwise kernel
//      over the same iteration space, becomes the epilogue;
//    - FuseElementwiseProducer / FuseEpilogueInputProducer: an elementwise
//      kernel whose only user is another kernel is inlined into it;
//    then, once those have settled, activation prologues (FusePrologue.cpp),
//    horizontal fusion of contractions of the same activations
//    (FuseSiblings.cpp), the row statistics those prologues read
//    (FusePrologue.cpp: each block of the contraction sums its rows), and
//    last the other reductions into the kernel that scales their rows
//    (FuseReductions.cpp: a norm in one kernel).
// 3. Outputs that are graph inputs, or returned twice, get a copy kernel.
//
// Regions are merged by cloning the small side and moving the large one: a
// producer's region is cloned with its block arguments mapped, and its
// yielded value replaces the consumer's argument. Every node keeps rounding
// its result to its element type, so fusion changes nothing but the order of
// the f32 summation.
//
// Fusion is linear in the size of the graph: a merge costs the size of the
// cloned side plus the kernels' inputs, never the size of the kernel it
// grows. Chains are merged from their end (willBeAbsorbed), so the cloned
// side is a node or two; the growing block is moved whole, its arguments
// renumbered in place (mergeBodies); and node lists and fused locations are
// joined in constant time, their attributes built once at the end
// (MergeLists).
//
//===----------------------------------------------------------------------===//
#include "passes/FusionSupport.h"
#include "passes/KernelBuilder.h"
#include "passes/MergeLists.h"
#include "passes/Passes.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Kernel/KernelOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "mtc-fuse"

namespace mtc {
#define GEN_PASS_DEF_FUSEKERNELS
#include "passes/Passes.h.inc"
} // namespace mtc

using namespace mlir;
using namespace mtc;
using namespace mtc::fusion;
using namespace mtc::kernel;

namespace {

//===----------------------------------------------------------------------===//
// Step 2: fusion patterns
//===----------------------------------------------------------------------===//

/// A conversion and/or transpose of a contraction operand folds into the
/// contraction body.
struct FoldOperandConversion : OpRewritePattern<ContractOp> {
  FoldOperandConversion(MLIRContext *ctx, Pass::Statistic &stat,
                        MergeLists &lists)
      : OpRewritePattern(ctx), stat(stat), lists(lists) {}

  LogicalResult matchAndRewrite(ContractOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getAInputs().empty() || !op.getSiblings().empty())
      return rewriter.notifyMatchFailure(op, "its body has a prologue or "
                                             "siblings");
    bool hasBInputs = !op.getBInputs().empty();
    // With b_inputs the weight is already an integer graph input.
    for (unsigned which = 0; which < (hasBInputs ? 1 : 2); ++which) {
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
      // An i4 weight is read as [N, K] only (the convert stays a kernel of
      // its own otherwise).
      if (which == 1 && bT && elementTypeOf(source).isInteger(4))
        continue;

      Type f32 = rewriter.getF32Type();
      SmallVector<Type> aTypes = chainTypes(op.getAChain(), f32);
      SmallVector<Type> bTypes = chainTypes(op.getBChain(), f32);
      SmallVector<Type> &types = which == 0 ? aTypes : bTypes;
      SmallVector<Type> merged(*prodTypes);
      llvm::append_range(merged, types);
      types = merged;

      InputList ep = inputsOf(op.getEpilogueInputs(), op.getEpilogueMaps());
      Location loc = lists.fuseLocs(prod, op);
      ContractOp fused = createContract(
          rewriter, loc, op.getType(), which == 0 ? source : op.getA(),
          which == 1 ? source : op.getB(), aT, bT, bInputsOf(op), ep,
          lists.pendingNodes(rewriter.getContext()));
      lists.mergeNodes(fused, prod, op);
      if (hasBInputs)
        fillContractBody(rewriter, loc, fused, aTypes,
                         [&](OpBuilder &b, ValueRange args) {
                           return cloneWeightSide(b, op, args);
                         });
      else
        fillContractBody(rewriter, loc, fused, aTypes, bTypes);
      fused.getEpilogue().takeBody(op.getEpilogue());
      rewriter.replaceOp(op, fused.getResult());
      ++stat;
      LLVM_DEBUG(llvm::dbgs() << "folded an operand conversion into a "
                                 "contraction\n");
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no foldable operand conversion");
  }
  Pass::Statistic &stat;
  MergeLists &lists;
};

/// The only consumer of a contraction becomes its epilogue.
struct FuseEpilogue : OpRewritePattern<ElementwiseOp> {
  FuseEpilogue(MLIRContext *ctx, Pass::Statistic &stat, MergeLists &lists)
      : OpRewritePattern(ctx), stat(stat), lists(lists) {}

  LogicalResult matchAndRewrite(ElementwiseOp op,
                                PatternRewriter &rewriter) const override {
    for (Value v : op.getInputs()) {
      auto c = v.getDefiningOp<ContractOp>();
      // (Siblings join last, after every epilogue.)
      if (!c || !onlyUsedBy(v, op) || !c.getSiblings().empty())
        continue;
      if (c.getType().getShape() !=
          cast<RankedTensorType>(op.getType()).getShape())
        continue;
      // Only a weight [N, K] holds an output's partner column where the
      // epilogue runs (ContractShape::pairs).
      if (c.getBTransposed() && readsPosition(op.getBody().front()))
        continue;
      InputList ep = inputsOf(c.getEpilogueInputs(), c.getEpilogueMaps());
      unsigned numOld = ep.values.size();
      std::optional<SmallVector<int>> consumerArg =
          appendConsumerInputs(ep, op, v);
      if (!consumerArg)
        continue;

      Location loc = lists.fuseLocs(c, op);
      ContractOp fused = createContract(
          rewriter, loc, op.getType(), c.getA(), c.getB(), c.getATransposed(),
          c.getBTransposed(), bInputsOf(c), ep,
          lists.pendingNodes(rewriter.getContext()), aInputsOf(c));
      lists.mergeNodes(fused, c, op);
      fused.getBody().takeBody(c.getBody());
      // The contraction's epilogue (possibly long) is moved with its
      // arguments; the consumer is cloned after it.
      extendEpilogue(rewriter, loc, fused.getEpilogue(), c.getEpilogue(), ep,
                     numOld, *consumerArg, op);
      rewriter.replaceOp(op, fused.getResult());
      rewriter.eraseOp(c);
      ++stat;
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no contraction to extend");
  }
  Pass::Statistic &stat;
  MergeLists &lists;
};

/// True if `op` will be inlined into the elementwise kernel that is its only
/// user; fusion then waits for that consumer, so chains are merged from their
/// end and every node is cloned once.
bool willBeAbsorbed(ElementwiseOp op) {
  Value v = op.getResult();
  if (!v.hasOneUse() && !llvm::all_equal(v.getUsers()))
    return false;
  auto consumer = dyn_cast<ElementwiseOp>(*v.getUsers().begin());
  if (!consumer)
    return false;
  return bool(inlineProducer(consumer.getInputs(),
                             mapsOf(consumer.getIndexingMaps()), v, op,
                             /*positions=*/true));
}

struct FuseElementwiseProducer : OpRewritePattern<ElementwiseOp> {
  FuseElementwiseProducer(MLIRContext *ctx, Pass::Statistic &stat,
                          MergeLists &lists)
      : OpRewritePattern(ctx), stat(stat), lists(lists) {}

  LogicalResult matchAndRewrite(ElementwiseOp op,
                                PatternRewriter &rewriter) const override {
    if (willBeAbsorbed(op))
      return rewriter.notifyMatchFailure(op, "its consumer will absorb it");
    SmallVector<AffineMap> maps = mapsOf(op.getIndexingMaps());
    for (Value v : op.getInputs()) {
      auto prod = v.getDefiningOp<ElementwiseOp>();
      if (!prod || !onlyUsedBy(v, op) || recomputesMath(prod, op))
        continue;
      std::optional<Inlined> m =
          inlineProducer(op.getInputs(), maps, v, prod, /*positions=*/true);
      if (!m)
        continue;
      // The consumer's location (the last node): a fused location of every
      // node would grow with the chain.
      Location loc = op.getLoc();
      auto fused = ElementwiseOp::create(
          rewriter, loc, op.getType(), m->inputs.values,
          mapsAttr(rewriter, m->inputs.maps),
          lists.pendingNodes(rewriter.getContext()), ScheduleAttr());
      lists.mergeNodes(fused, prod, op);
      mergeBodies(rewriter, loc, fused.getBody(), op.getBody(), 0, *m,
                  prod.getBody().front());
      rewriter.replaceOp(op, fused.getResult());
      rewriter.eraseOp(prod);
      ++stat;
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no single-use producer");
  }
  Pass::Statistic &stat;
  MergeLists &lists;
};

struct FuseEpilogueInputProducer : OpRewritePattern<ContractOp> {
  FuseEpilogueInputProducer(MLIRContext *ctx, Pass::Statistic &stat,
                            MergeLists &lists)
      : OpRewritePattern(ctx), stat(stat), lists(lists) {}

  LogicalResult matchAndRewrite(ContractOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getSiblings().empty())
      return rewriter.notifyMatchFailure(op, "siblings join last");
    SmallVector<AffineMap> maps = mapsOf(op.getEpilogueMaps());
    for (Value v : op.getEpilogueInputs()) {
      auto prod = v.getDefiningOp<ElementwiseOp>();
      if (!prod || !onlyUsedBy(v, op) || op.getA() == v || op.getB() == v)
        continue;
      std::optional<Inlined> m = inlineProducer(op.getEpilogueInputs(), maps, v,
                                                prod, /*positions=*/true);
      if (!m)
        continue;
      Location loc = lists.fuseLocs(prod, op);
      ContractOp fused = createContract(
          rewriter, loc, op.getType(), op.getA(), op.getB(),
          op.getATransposed(), op.getBTransposed(), bInputsOf(op), m->inputs,
          lists.pendingNodes(rewriter.getContext()), aInputsOf(op));
      lists.mergeNodes(fused, prod, op);
      fused.getBody().takeBody(op.getBody());
      mergeBodies(rewriter, loc, fused.getEpilogue(), op.getEpilogue(), 1, *m,
                  prod.getBody().front());
      rewriter.replaceOp(op, fused.getResult());
      rewriter.eraseOp(prod);
      ++stat;
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no single-use epilogue producer");
  }
  Pass::Statistic &stat;
  MergeLists &lists;
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
      if (op.getDialect() && isa<graph::GraphDialect>(op.getDialect()))
        nodes.push_back(&op);
    for (auto [i, op] : llvm::enumerate(nodes)) {
      if (isa<graph::LinearOp, graph::MatmulOp>(op))
        ++numContractions;
      if (failed(convertNode(b, op, i)))
        return signalPassFailure();
    }

    // 2. Merge.
    MergeLists lists;
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldOperandConversion>(&getContext(), numFusedConverts, lists);
    addFoldWeightDequant(patterns, numFusedConverts, lists);
    addReductionFusion(patterns, numElementwiseFusions, lists);
    patterns.add<FuseEpilogue>(&getContext(), numEpilogues, lists);
    patterns.add<FuseElementwiseProducer, FuseEpilogueInputProducer>(
        &getContext(), numElementwiseFusions, lists);
    // Folding is off: the regions hold scalar arith that needs none, and
    // visiting every moved op again after each merge would make long chains
    // quadratic.
    GreedyRewriteConfig config;
    config.enableFolding(false);
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    LogicalResult merged =
        applyPatternsGreedily(func, std::move(patterns), config);
    // 2b. Activation prologues, once the rest has settled: the patterns
    // above rebuild contraction bodies that have none.
    RewritePatternSet prologues(&getContext());
    addPrologueFusion(prologues, numPrologues, lists);
    if (succeeded(merged))
      merged = applyPatternsGreedily(func, std::move(prologues), config);
    // 2c. Horizontal fusion, once both contractions of an activation have
    // their prologues (identical copies).
    RewritePatternSet siblings(&getContext());
    addSiblingFusion(siblings, numSiblings, lists);
    if (succeeded(merged))
      merged = applyPatternsGreedily(func, std::move(siblings), config);
    // 2d. Row statistics into the contractions that read them, once the
    // siblings have joined (one sum of the row per joined kernel). Only the
    // contractions with a prologue are visited: a pass over every op of a
    // wide graph is not free.
    SmallVector<Operation *> prologued;
    for (Operation &op : func.getBody().front())
      if (auto c = dyn_cast<ContractOp>(op); c && !c.getAInputs().empty())
        prologued.push_back(c);
    RewritePatternSet statistics(&getContext());
    addStatisticFusion(statistics, numStatistics, lists);
    if (succeeded(merged) && !prologued.empty())
      merged =
          applyOpPatternsGreedily(prologued, std::move(statistics), config);
    // 2e. The reductions left (those no contraction derives) into the
    // elementwise kernel that applies their statistic to the rows.
    SmallVector<Operation *> reductions;
    for (Operation &op : func.getBody().front())
      if (isa<ReduceOp>(op))
        reductions.push_back(&op);
    RewritePatternSet applied(&getContext());
    addApplyFusion(applied, numApplied, lists);
    if (succeeded(merged) && !reductions.empty())
      merged = applyOpPatternsGreedily(reductions, std::move(applied), config);
    lists.finish(func);
    if (failed(merged))
      return signalPassFailure();
    if (explain)
      explainFusion(func);

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
      in.add(v,
             AffineMap::getMultiDimIdentityMap(type.getRank(), &getContext()));
      std::string name = "copy_" + std::to_string(operand.getOperandNumber());
      ElementwiseOp copy = createElementwise(
          b, ret->getLoc(), type, in, b.getStrArrayAttr({name}),
          [](OpBuilder &, ValueRange args) { return args[0]; });
      operand.set(copy.getResult());
    }
  }
};

} // namespace
