//===- FusePrologue.cpp - Activation prologues of contractions ------------===//
//
// mtc-fuse's second phase (after FuseKernels.cpp's patterns have settled):
// FoldActivationPrologue moves the elementwise kernel that computes a
// contraction's activations (a norm's scaling: x * rstd rounded, times the
// norm's weight) into the contraction's body as a prologue over `%a` and
// a_inputs, so the scaled activations are never written. It applies where
// the heuristic starts the contraction on the simt kind (int8 and float
// weights at M = 1). The mma kind runs prologues too (when a schedule
// forces it), but slower than the separate kernel they replace: on the H200 the
// Llama-3-8B feed-forward half took 87.0 us with them at M = 8 against 63.4
// without, 105.1 against 88.8 at M = 16 (every warp recomputes its rows'
// activations, one scalar load of the norm's weight per element;
// bench/results/2026-12-03-fused). The tiled and wgmma kinds stage A in
// shared memory by cp.async or TMA, with no register stage to compute in.
// A producer that several contractions read (gate and up projections) is
// cloned for each: its inputs are rows of activations, small beside a
// weight.
//
// The last phase, FoldRowStatistic, moves the row reduction such a
// prologue reads (the norm's rsqrt(mean(x^2) + eps)) into the contraction
// as its `statistic`: every block sums its rows of A before its first step,
// instead of a one-warp kernel of its own that the contraction waits for
// (a launch and a round trip through memory per norm). It applies on the
// simt kind where the extra read of A's rows is at most a quarter of the weight
// bytes a block streams (statisticBlocker says why not elsewhere).
//
//===----------------------------------------------------------------------===//
#include "passes/FusionSupport.h"
#include "passes/Heuristics.h"
#include "passes/MergeLists.h"

#include "dialects/Kernel/KernelOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::fusion;
using namespace mtc::kernel;

std::string mtc::fusion::prologueKindBlocker(ContractOp op) {
  if (defaultContractSchedule(contractShape(op)).kind != ScheduleKind::simt)
    return "the contraction starts on a tensor-core kind, where a prologue "
           "costs more than the kernel it replaces";
  return "";
}

std::string mtc::fusion::prologueBlocker(ContractOp op, ElementwiseOp prod,
                                         unsigned &source) {
  auto aType = cast<RankedTensorType>(op.getA().getType());
  if (!op.getAInputs().empty())
    return "it has a prologue already";
  if (readsPosition(prod.getBody().front()))
    return "it reads its elements' positions (kernel.partner, "
           "kernel.column), which a prologue does not have";
  if (op.getATransposed() || op.getBTransposed() || aType.getRank() != 2)
    return "a prologue needs A [M, K] and a weight [N, K]";
  if (std::string why = prologueKindBlocker(op); !why.empty())
    return why;
  if (!op.getSiblings().empty())
    return "prologues fold before siblings join";
  if (prod.getInputs().size() == 1 && conversionChainTypes(prod.getBody()))
    return "a plain conversion (FoldOperandConversion's)";
  SmallVector<AffineMap> maps = mapsOf(prod.getIndexingMaps());
  std::optional<unsigned> found;
  for (auto [i, in] : llvm::enumerate(prod.getInputs()))
    if (maps[i].isIdentity() && in.getType() == aType) {
      found = unsigned(i);
      break;
    }
  if (!found)
    return "no input is read element for element in A's type";
  source = *found;
  // A prologue is known by its a_inputs: one over A alone (a relu) is not
  // expressed yet.
  Value a = prod.getInputs()[source];
  if (llvm::all_of(prod.getInputs(), [&](Value v) { return v == a; }))
    return "it reads nothing but A";
  return "";
}

namespace {

struct FoldActivationPrologue : OpRewritePattern<ContractOp> {
  FoldActivationPrologue(MLIRContext *ctx, Pass::Statistic &stat,
                         MergeLists &lists)
      : OpRewritePattern(ctx), stat(stat), lists(lists) {}

  LogicalResult matchAndRewrite(ContractOp op,
                                PatternRewriter &rewriter) const override {
    auto prod = op.getA().getDefiningOp<ElementwiseOp>();
    if (!prod)
      return rewriter.notifyMatchFailure(op, "A is not computed by a kernel");
    unsigned source = 0;
    if (std::string why = prologueBlocker(op, prod, source); !why.empty())
      return rewriter.notifyMatchFailure(op, why);
    if (!prod->hasOneUse()) {
      // Several readers: this one gets its own copy, which the next match
      // folds.
      rewriter.setInsertionPoint(op);
      Operation *copy = rewriter.clone(*prod);
      lists.copied(copy, prod);
      rewriter.modifyOpInPlace(
          op, [&] { op.getAMutable().assign(copy->getResult(0)); });
      return success();
    }
    SmallVector<AffineMap> maps = mapsOf(prod.getIndexingMaps());
    unsigned numB = op.getBInputs().size();
    InputList aIn;
    SmallVector<unsigned> argOf; // prod's argument i -> the body's argument
    for (auto [i, in] : llvm::enumerate(prod.getInputs()))
      argOf.push_back(i == source ? 0 : 2 + numB + aIn.add(in, maps[i]));
    InputList ep = inputsOf(op.getEpilogueInputs(), op.getEpilogueMaps());

    Location loc = lists.fuseLocs(prod, op);
    ContractOp fused =
        createContract(rewriter, loc, op.getType(), prod.getInputs()[source],
                       op.getB(), false, false, bInputsOf(op), ep,
                       lists.pendingNodes(rewriter.getContext()), aIn);
    lists.mergeNodes(fused, prod, op);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      Block &old = op.getBody().front();
      SmallVector<Type> types(old.getArgumentTypes());
      types[0] = elementTypeOf(prod.getInputs()[source]);
      for (Value v : aIn.values)
        types.push_back(elementTypeOf(v));
      Block *block =
          rewriter.createBlock(&fused.getBody(), {}, types,
                               SmallVector<Location>(types.size(), loc));
      SmallVector<Value> prodArgs;
      for (unsigned idx : argOf)
        prodArgs.push_back(block->getArgument(idx));
      Value activation =
          inlineBlock(rewriter, prod.getBody().front(), prodArgs);
      SmallVector<Value> opArgs{activation};
      for (unsigned j = 1; j < old.getNumArguments(); ++j)
        opArgs.push_back(block->getArgument(j));
      Value product = inlineBlock(rewriter, old, opArgs);
      YieldOp::create(rewriter, loc, product);
    }
    fused.getEpilogue().takeBody(op.getEpilogue());
    rewriter.replaceOp(op, fused.getResult());
    rewriter.eraseOp(prod);
    ++stat;
    return success();
  }
  Pass::Statistic &stat;
  MergeLists &lists;
};

} // namespace

void mtc::fusion::addPrologueFusion(RewritePatternSet &patterns,
                                    Pass::Statistic &stat, MergeLists &lists) {
  patterns.add<FoldActivationPrologue>(patterns.getContext(), stat, lists);
}

//===----------------------------------------------------------------------===//
// Row statistics
//===----------------------------------------------------------------------===//

std::string mtc::fusion::statisticBlocker(ContractOp op, ReduceOp red,
                                          unsigned input) {
  if (op.hasRowStatistic())
    return "the contraction derives another row statistic already";
  if (!red.getEpilogueInputs().empty())
    return "the reduction's epilogue reads inputs";
  Value a = op.getA();
  auto aType = cast<RankedTensorType>(a.getType());
  SmallVector<AffineMap> maps = mapsOf(red.getIndexingMaps());
  if (red.getInputs().size() != 1 || red.getInputs()[0] != a ||
      !maps[0].isIdentity())
    return "the reduction reads more than the contraction's activations, "
           "element for element";
  auto rType = cast<RankedTensorType>(red.getType());
  AffineMap amap = mapsOf(*op.getAMaps())[input];
  if (aType.getRank() != 2 ||
      rType.getShape() != ArrayRef<int64_t>{aType.getDimSize(0), 1} ||
      !rType.getElementType().isF32() ||
      amap != AffineMap::get(2, 0,
                             {getAffineDimExpr(0, op.getContext()),
                              getAffineConstantExpr(0, op.getContext())},
                             op.getContext()))
    return "the prologue does not read it as an f32 per row of A";
  ContractShape c = contractShape(op);
  c.rowStatistic = true;
  ScheduleParams s = defaultContractSchedule(c);
  if (s.kind != ScheduleKind::simt)
    return "the contraction starts on the " +
           stringifyScheduleKind(s.kind).str() +
           " kind, which does not sum A's rows before its first step";
  // Each block reads its rows of A once more; worth it where that is at
  // most a quarter of the weight bytes the block streams (norm + wqkv,
  // 6144 x 4096 at M = 1: a half took 13.42 us against 12.45 for the two
  // kernels, a quarter 10.95; bench/results/2026-12-04-statistic).
  ContractGeometry geo = contractGeometry(c, s);
  int64_t rowBytes = s.mtile * tensorBytes(c.a, c.k);
  int64_t weightBytes = geo.colsPerBlock * c.weights * c.weightBytes(c.k);
  if (4 * rowBytes > weightBytes)
    return "each block would read " + std::to_string(rowBytes) +
           " bytes of A's rows to sum them, more than a quarter of the " +
           std::to_string(weightBytes) + " weight bytes it streams";
  return "";
}

namespace {

/// A contraction whose prologue reads a row reduction of its own
/// activations (an RMSNorm's rsqrt(mean(x^2) + eps), per row) derives it
/// itself: the reduction's regions become the contraction's `statistic`,
/// and the reduction is no longer a kernel of its own. A reduction read by
/// several contractions is cloned for each.
struct FoldRowStatistic : OpRewritePattern<ContractOp> {
  FoldRowStatistic(MLIRContext *ctx, Pass::Statistic &stat, MergeLists &lists)
      : OpRewritePattern(ctx), stat(stat), lists(lists) {}

  LogicalResult matchAndRewrite(ContractOp op,
                                PatternRewriter &rewriter) const override {
    for (auto [j, v] : llvm::enumerate(op.getAInputs())) {
      auto red = v.getDefiningOp<ReduceOp>();
      if (!red || !statisticBlocker(op, red, unsigned(j)).empty())
        continue;
      if (!red->hasOneUse()) {
        rewriter.setInsertionPoint(op);
        Operation *copy = rewriter.clone(*red);
        lists.copied(copy, red);
        rewriter.modifyOpInPlace(op, [&, j = j] {
          op.getAInputsMutable()[unsigned(j)].assign(copy->getResult(0));
        });
        return success();
      }
      fold(op, red, unsigned(j), rewriter);
      ++stat;
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no row statistic to derive");
  }

  void fold(ContractOp op, ReduceOp red, unsigned j,
            PatternRewriter &rewriter) const {
    InputList aIn, all = aInputsOf(op);
    for (unsigned i = 0; i < all.values.size(); ++i)
      if (i != j)
        aIn.add(all.values[i], all.maps[i]);
    rewriter.setInsertionPoint(op);
    Location loc = lists.fuseLocs(red, op);
    ContractOp fused = createContract(
        rewriter, loc, op.getType(), op.getA(), op.getB(), false, false,
        bInputsOf(op), inputsOf(op.getEpilogueInputs(), op.getEpilogueMaps()),
        lists.pendingNodes(rewriter.getContext()), aIn, op.getSiblings(),
        op.getSiblingBInputs());
    lists.mergeNodes(fused, red, op);
    fused.getBody().takeBody(op.getBody());
    fused.getEpilogue().takeBody(op.getEpilogue());
    fused.getStatBody().takeBody(red.getBody());
    fused.getStatEpilogue().takeBody(red.getEpilogue());
    // The statistic's argument moves from the a inputs' to the last.
    Block &body = fused.getBody().front();
    BlockArgument old = body.getArgument(2 + op.getBInputs().size() + j);
    BlockArgument arg = body.addArgument(old.getType(), old.getLoc());
    rewriter.replaceAllUsesWith(old, arg);
    body.eraseArgument(old.getArgNumber());
    rewriter.replaceOp(op, fused.getResult());
    rewriter.eraseOp(red);
  }

  Pass::Statistic &stat;
  MergeLists &lists;
};

} // namespace

void mtc::fusion::addStatisticFusion(RewritePatternSet &patterns,
                                     Pass::Statistic &stat, MergeLists &lists) {
  patterns.add<FoldRowStatistic>(patterns.getContext(), stat, lists);
}
