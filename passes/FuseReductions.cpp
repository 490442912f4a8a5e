//===- FuseReductions.cpp - Row reductions and what feeds them ------------===//
//
// mtc-fuse's patterns for kernel.reduce (FuseKernels.cpp has the algorithm
// and the others):
//
// - FuseReduceProducer: an elementwise kernel that only the reduction reads,
//   over its iteration space, moves into the reduction's body (`x * x`).
// - FuseReduceEpilogue: the only consumer of a reduction's result, an
//   elementwise kernel over the result's space, becomes its epilogue
//   (`+ eps`, `rsqrt`).
// - FuseReduceEpilogueInputProducer: an elementwise kernel that only the
//   epilogue reads moves into it (a constant).
// - ApplyRowStatistic (mtc-fuse's last phase, after the contractions have
//   taken the statistics their prologues read): the one elementwise kernel
//   that scales a reduction's rows by their statistic (a norm's
//   `x * rsqrt(...) * g`) takes the reduction in as `apply`; the statistic
//   is then never written.
// - RecomputeConversion: a kernel that only converts its one input (no
//   broadcast, no arithmetic) and has several users, all elementwise kernels
//   or reductions, is cloned for each: converting an element where it is
//   read costs less than writing the converted tensor and reading it back
//   (a norm's `convert(x, f32)` feeds both its sum of squares and its
//   scaling).
//
//===----------------------------------------------------------------------===//
#include "passes/FusionSupport.h"
#include "passes/MergeLists.h"

#include "dialects/Kernel/KernelOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::fusion;
using namespace mtc::kernel;

namespace {

struct FuseReduceProducer : OpRewritePattern<ReduceOp> {
  FuseReduceProducer(MLIRContext *ctx, Pass::Statistic &stat, MergeLists &lists)
      : OpRewritePattern(ctx), stat(stat), lists(lists) {}

  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    if (op.hasApply())
      return rewriter.notifyMatchFailure(op, "applies its statistic");
    SmallVector<AffineMap> maps = mapsOf(op.getIndexingMaps());
    for (Value v : op.getInputs()) {
      auto prod = v.getDefiningOp<ElementwiseOp>();
      if (!prod || !onlyUsedBy(v, op))
        continue;
      std::optional<Inlined> m = inlineProducer(op.getInputs(), maps, v, prod);
      if (!m)
        continue;
      Location loc = op.getLoc();
      ReduceOp fused = createReduce(
          rewriter, loc, op.getType(), int64_t(op.getExtent()), m->inputs,
          inputsOf(op.getEpilogueInputs(), op.getEpilogueMaps()),
          lists.pendingNodes(rewriter.getContext()));
      lists.mergeNodes(fused, prod, op);
      mergeBodies(rewriter, loc, fused.getBody(), op.getBody(), 0, *m,
                  prod.getBody().front());
      fused.getEpilogue().takeBody(op.getEpilogue());
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

struct FuseReduceEpilogue : OpRewritePattern<ElementwiseOp> {
  FuseReduceEpilogue(MLIRContext *ctx, Pass::Statistic &stat, MergeLists &lists)
      : OpRewritePattern(ctx), stat(stat), lists(lists) {}

  LogicalResult matchAndRewrite(ElementwiseOp op,
                                PatternRewriter &rewriter) const override {
    for (Value v : op.getInputs()) {
      auto red = v.getDefiningOp<ReduceOp>();
      if (!red || red.hasApply() || !onlyUsedBy(v, op) ||
          readsPosition(op.getBody().front()) ||
          red.getType().getShape() !=
              cast<RankedTensorType>(op.getType()).getShape())
        continue;
      InputList ep = inputsOf(red.getEpilogueInputs(), red.getEpilogueMaps());
      unsigned numOld = ep.values.size();
      std::optional<SmallVector<int>> consumerArg =
          appendConsumerInputs(ep, op, v);
      if (!consumerArg)
        continue;
      Location loc = lists.fuseLocs(red, op);
      ReduceOp fused =
          createReduce(rewriter, loc, op.getType(), int64_t(red.getExtent()),
                       inputsOf(red.getInputs(), red.getIndexingMaps()), ep,
                       lists.pendingNodes(rewriter.getContext()));
      lists.mergeNodes(fused, red, op);
      fused.getBody().takeBody(red.getBody());
      // The reduction's epilogue is moved with its arguments; the consumer
      // is cloned after it.
      extendEpilogue(rewriter, loc, fused.getEpilogue(), red.getEpilogue(), ep,
                     numOld, *consumerArg, op);
      rewriter.replaceOp(op, fused.getResult());
      rewriter.eraseOp(red);
      ++stat;
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no row reduction to extend");
  }
  Pass::Statistic &stat;
  MergeLists &lists;
};

struct FuseReduceEpilogueInputProducer : OpRewritePattern<ReduceOp> {
  FuseReduceEpilogueInputProducer(MLIRContext *ctx, Pass::Statistic &stat,
                                  MergeLists &lists)
      : OpRewritePattern(ctx), stat(stat), lists(lists) {}

  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    if (op.hasApply())
      return rewriter.notifyMatchFailure(op, "applies its statistic");
    SmallVector<AffineMap> maps = mapsOf(op.getEpilogueMaps());
    for (Value v : op.getEpilogueInputs()) {
      auto prod = v.getDefiningOp<ElementwiseOp>();
      if (!prod || !onlyUsedBy(v, op) || llvm::is_contained(op.getInputs(), v))
        continue;
      std::optional<Inlined> m =
          inlineProducer(op.getEpilogueInputs(), maps, v, prod);
      if (!m)
        continue;
      Location loc = lists.fuseLocs(prod, op);
      ReduceOp fused =
          createReduce(rewriter, loc, op.getType(), int64_t(op.getExtent()),
                       inputsOf(op.getInputs(), op.getIndexingMaps()),
                       m->inputs, lists.pendingNodes(rewriter.getContext()));
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

} // namespace

std::string mtc::fusion::applyBlocker(ElementwiseOp op, ReduceOp red) {
  if (red.hasApply())
    return "the reduction applies its statistic already";
  if (readsPosition(op.getBody().front()))
    return "the consumer reads its elements' positions (kernel.partner, "
           "kernel.column), which a reduction's apply does not have";
  if (!onlyUsedBy(red.getResult(), op))
    return "other kernels, or the graph's outputs, read the statistic too";
  if (cast<RankedTensorType>(op.getType()).getShape() !=
      ArrayRef<int64_t>(red.getIterationShape()))
    return "the consumer's space is not the rows the reduction sums";
  // As the graph's broadcasting reads a [..., 1] operand in [..., K].
  AffineMap row = broadcastMap(red.getContext(), red.getStatisticShape(),
                               red.getIterationShape());
  for (auto [v, map] : llvm::zip(op.getInputs(), mapsOf(op.getIndexingMaps())))
    if (v == red.getResult() && map != row)
      return "the consumer reads the statistic other than once per row";
  return "";
}

namespace {

struct ApplyRowStatistic : OpRewritePattern<ReduceOp> {
  ApplyRowStatistic(MLIRContext *ctx, Pass::Statistic &stat, MergeLists &lists)
      : OpRewritePattern(ctx), stat(stat), lists(lists) {}

  LogicalResult matchAndRewrite(ReduceOp red,
                                PatternRewriter &rewriter) const override {
    Value v = red.getResult();
    auto op = v.use_empty() ? ElementwiseOp()
                            : dyn_cast<ElementwiseOp>(*v.getUsers().begin());
    if (!op || !applyBlocker(op, red).empty())
      return rewriter.notifyMatchFailure(red, "no consumer to apply it in");
    // The consumer's other inputs become the apply inputs; every read of
    // the statistic becomes the region's last argument.
    InputList apply;
    SmallVector<int> arg;
    for (auto [in, map] :
         llvm::zip(op.getInputs(), mapsOf(op.getIndexingMaps())))
      arg.push_back(in == v ? -1 : int(apply.add(in, map)));
    rewriter.setInsertionPoint(op);
    Location loc = lists.fuseLocs(red, op);
    ReduceOp fused =
        createReduce(rewriter, loc, op.getType(), int64_t(red.getExtent()),
                     inputsOf(red.getInputs(), red.getIndexingMaps()),
                     inputsOf(red.getEpilogueInputs(), red.getEpilogueMaps()),
                     lists.pendingNodes(rewriter.getContext()), apply);
    lists.mergeNodes(fused, red, op);
    fused.getBody().takeBody(red.getBody());
    fused.getEpilogue().takeBody(red.getEpilogue());
    Block &from = op.getBody().front();
    Block *block = new Block();
    fused.getApply().push_back(block);
    for (Type t : apply.elementTypes())
      block->addArgument(t, loc);
    Type statType = red.getType().getElementType();
    BlockArgument statArg = block->addArgument(statType, loc);
    SmallVector<Value> args;
    for (int a : arg)
      args.push_back(a < 0 ? Value(statArg) : block->getArgument(unsigned(a)));
    rewriter.mergeBlocks(&from, block, args);
    rewriter.replaceOp(op, fused.getResult());
    rewriter.eraseOp(red);
    ++stat;
    return success();
  }
  Pass::Statistic &stat;
  MergeLists &lists;
};

struct RecomputeConversion : OpRewritePattern<ElementwiseOp> {
  RecomputeConversion(MLIRContext *ctx, Pass::Statistic &stat,
                      MergeLists &lists)
      : OpRewritePattern(ctx), stat(stat), lists(lists) {}

  LogicalResult matchAndRewrite(ElementwiseOp op,
                                PatternRewriter &rewriter) const override {
    Value v = op.getResult();
    if (op.getInputs().size() != 1 || v.hasOneUse() || v.use_empty() ||
        !mapsOf(op.getIndexingMaps())[0].isIdentity() ||
        !conversionChainTypes(op.getBody()))
      return rewriter.notifyMatchFailure(op, "not a conversion to recompute");
    SmallVector<Operation *> users(v.getUsers().begin(), v.getUsers().end());
    if (!llvm::all_of(users, [](Operation *u) {
          return isa<ElementwiseOp, ReduceOp>(u);
        }))
      return rewriter.notifyMatchFailure(op, "a user is not elementwise");
    // One clone per distinct user; each is then that user's only producer
    // of v, which the producer patterns inline.
    llvm::SmallPtrSet<Operation *, 4> seen;
    for (Operation *u : users) {
      if (!seen.insert(u).second || seen.size() == 1)
        continue;
      rewriter.setInsertionPoint(op);
      Operation *clone = rewriter.clone(*op);
      lists.copied(clone, op);
      rewriter.modifyOpInPlace(
          u, [&] { u->replaceUsesOfWith(v, clone->getResult(0)); });
    }
    if (seen.size() < 2)
      return rewriter.notifyMatchFailure(op, "one user");
    ++stat;
    return success();
  }
  Pass::Statistic &stat;
  MergeLists &lists;
};

} // namespace

void mtc::fusion::addReductionFusion(RewritePatternSet &patterns,
                                     Pass::Statistic &stat, MergeLists &lists) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<FuseReduceProducer, FuseReduceEpilogue,
               FuseReduceEpilogueInputProducer>(ctx, stat, lists);
  patterns.add<RecomputeConversion>(ctx, stat, lists);
}

void mtc::fusion::addApplyFusion(RewritePatternSet &patterns,
                                 Pass::Statistic &stat, MergeLists &lists) {
  patterns.add<ApplyRowStatistic>(patterns.getContext(), stat, lists);
}
