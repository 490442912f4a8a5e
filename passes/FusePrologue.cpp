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

std::string mtc::fusion::prologueBlocker(ContractOp op, ElementwiseOp prod,
                                         unsigned &source) {
  auto aType = cast<RankedTensorType>(op.getA().getType());
  if (!op.getAInputs().empty())
    return "it has a prologue already";
  if (op.getATransposed() || op.getBTransposed() || aType.getRank() != 2)
    return "a prologue needs A [M, K] and a weight [N, K]";
  if (defaultContractSchedule(contractShape(op)).kind != ScheduleKind::simt)
    return "the contraction starts on a tensor-core kind, where a prologue "
           "costs more than the kernel it replaces";
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
