//===- FuseSiblings.cpp - Horizontal fusion of contractions ---------------===//
//
// mtc-fuse's last phase (after activation prologues): two contractions of
// the same activations, one of which reads the other's result in its
// epilogue (SwiGLU's `silu(x W1^T * s1) * (x W3^T * s3)`), become one
// kernel.contract whose weights are B and its `siblings`. Each output then
// has one sum per weight, and the merged epilogue computes the first
// contraction's result from its sum (with its rounding) where the second's
// epilogue read it, so that result is never written, and the activations
// are loaded (and their prologue computed) once for both weights.
//
// It applies where each contraction alone starts on a kind that streams its
// weight through registers (simt, mma: decode-sized M), which then read
// both weights in one grid: one kernel over twice the bytes runs nearer the
// memory's bandwidth than two (bench/results/2026-12-04-siblings). The
// kinds that stage a weight in shared memory (tiled, wgmma) take one weight;
// there the contractions stay apart.
//
//===----------------------------------------------------------------------===//
#include "passes/FusionSupport.h"
#include "passes/Heuristics.h"
#include "passes/KernelBuilder.h"
#include "passes/MergeLists.h"

#include "dialects/Kernel/KernelOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::fusion;
using namespace mtc::kernel;

std::string mtc::fusion::siblingBlocker(ContractOp first, ContractOp second) {
  if (first.getA() != second.getA())
    return "the contractions read different activations";
  if (first.getATransposed() || first.getBTransposed() ||
      second.getATransposed() || second.getBTransposed())
    return "siblings need A [.., K] and weights stored [N, K]";
  if (first.getBInputs().getTypes() != second.getBInputs().getTypes() ||
      first.getBMapsAttr() != second.getBMapsAttr())
    return "their weights' b inputs (group-wise scales and zeros) differ in "
           "number, type or indexing";
  if (2 + first.getSiblings().size() + second.getSiblings().size() >
      size_t(ContractShape::kMaxWeights))
    return "together they would read more than " +
           std::to_string(ContractShape::kMaxWeights) + " weights";
  if (first.getB().getType() != second.getB().getType())
    return "the weights differ in shape or type";
  if (first.getAInputs() != second.getAInputs() ||
      first.getAMapsAttr() != second.getAMapsAttr())
    return "the activations' prologues differ";
  if (!OperationEquivalence::isRegionEquivalentTo(
          &first.getBody(), &second.getBody(),
          OperationEquivalence::IgnoreLocations))
    return "their bodies convert the operands differently";
  for (ContractOp op : {first, second}) {
    ScheduleKind kind = defaultContractSchedule(contractShape(op)).kind;
    if (kind != ScheduleKind::simt && kind != ScheduleKind::mma)
      return "the contractions start on the " +
             stringifyScheduleKind(kind).str() +
             " kind, which stages one weight in shared memory (siblings run "
             "on simt or mma)";
  }
  Value v = first.getResult();
  if (!onlyUsedBy(v, second))
    return "the first contraction's result has other readers";
  if (second.getA() == v || second.getB() == v ||
      llvm::is_contained(second.getAInputs(), v))
    return "the second contraction reads the first's result as an operand";
  // The merged epilogue has the first's result at its own output only.
  for (auto [in, map] :
       llvm::zip(second.getEpilogueInputs(), mapsOf(second.getEpilogueMaps())))
    if (in == v && !map.isIdentity())
      return "the second contraction's epilogue reads the first's result "
             "at other outputs than its own (a transposed or broadcast "
             "read)";
  return "";
}

namespace {

struct FuseSiblingContractions : OpRewritePattern<ContractOp> {
  FuseSiblingContractions(MLIRContext *ctx, Pass::Statistic &stat,
                          MergeLists &lists)
      : OpRewritePattern(ctx), stat(stat), lists(lists) {}

  LogicalResult matchAndRewrite(ContractOp op,
                                PatternRewriter &rewriter) const override {
    for (Value v : op.getEpilogueInputs()) {
      auto first = v.getDefiningOp<ContractOp>();
      if (!first || !siblingBlocker(first, op).empty())
        continue;
      merge(first, op, rewriter);
      ++stat;
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no sibling contraction");
  }

  /// Replaces `second` by one contraction over first's weights, then
  /// second's, whose epilogue runs first's where second's reads its result.
  void merge(ContractOp first, ContractOp second,
             PatternRewriter &rewriter) const {
    Value v = first.getResult();
    InputList ep;
    SmallVector<unsigned> firstArg;
    SmallVector<int> secondArg; // -1: first's result
    for (auto [in, map] :
         llvm::zip(first.getEpilogueInputs(), mapsOf(first.getEpilogueMaps())))
      firstArg.push_back(ep.add(in, map));
    for (auto [in, map] : llvm::zip(second.getEpilogueInputs(),
                                    mapsOf(second.getEpilogueMaps())))
      secondArg.push_back(in == v ? -1 : int(ep.add(in, map)));
    SmallVector<Value> siblings(first.getSiblings());
    siblings.push_back(second.getB());
    llvm::append_range(siblings, second.getSiblings());
    // Each sibling's b inputs, in the siblings' order.
    SmallVector<Value> siblingBInputs(first.getSiblingBInputs());
    llvm::append_range(siblingBInputs, second.getBInputs());
    llvm::append_range(siblingBInputs, second.getSiblingBInputs());
    unsigned firstSums = 1 + first.getSiblings().size();
    unsigned sums = 1 + siblings.size();

    rewriter.setInsertionPoint(second);
    Location loc = lists.fuseLocs(first, second);
    ContractOp fused = createContract(
        rewriter, loc, second.getType(), second.getA(), first.getB(), false,
        false, inputsOf(first.getBInputs(), first.getBMapsAttr()), ep,
        lists.pendingNodes(rewriter.getContext()), aInputsOf(second), siblings,
        siblingBInputs);
    lists.mergeNodes(fused, first, second);
    fused.getBody().takeBody(second.getBody());
    {
      OpBuilder::InsertionGuard guard(rewriter);
      SmallVector<Type> types(sums, rewriter.getF32Type());
      llvm::append_range(types, ep.elementTypes());
      Block *block =
          rewriter.createBlock(&fused.getEpilogue(), {}, types,
                               SmallVector<Location>(types.size(), loc));
      unsigned numSums = sums;
      auto argOfInput = [&](unsigned i) {
        return block->getArgument(numSums + i);
      };
      SmallVector<Value> args(block->getArguments().take_front(firstSums));
      for (unsigned i : firstArg)
        args.push_back(argOfInput(i));
      Value firstValue =
          inlineBlock(rewriter, first.getEpilogue().front(), args);
      args.assign(block->getArguments().begin() + firstSums,
                  block->getArguments().begin() + sums);
      for (int i : secondArg)
        args.push_back(i < 0 ? firstValue : argOfInput(unsigned(i)));
      Value result = inlineBlock(rewriter, second.getEpilogue().front(), args);
      YieldOp::create(rewriter, loc, result);
    }
    rewriter.replaceOp(second, fused.getResult());
    rewriter.eraseOp(first);
  }

  Pass::Statistic &stat;
  MergeLists &lists;
};

} // namespace

void mtc::fusion::addSiblingFusion(RewritePatternSet &patterns,
                                   Pass::Statistic &stat, MergeLists &lists) {
  patterns.add<FuseSiblingContractions>(patterns.getContext(), stat, lists);
}
