//===- FoldWeightDequant.cpp - A weight's dequantization into the body ---===//
//
// One of mtc-fuse's patterns (FuseKernels.cpp has the others and the
// algorithm): the elementwise kernel that dequantizes an integer weight
// (an int4 or int8 weight converted, then multiplied and offset by scales
// and zeros read per row or per group of K through graph.repeat) moves
// into the contraction's body, its other inputs becoming the contraction's
// b_inputs. The contraction then reads the weight as it is stored and one
// scale and zero per row and group.
//
//===----------------------------------------------------------------------===//
#include "passes/KernelBuilder.h"
#include "passes/MergeLists.h"

#include "dialects/Kernel/KernelOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::fusion;
using namespace mtc::kernel;

namespace {

/// A b_input map: every result d0, d1 floordiv G (G >= 2) or 0; sets
/// `group` to G where it reads per group.
bool isRowOrGroupMap(AffineMap map, std::optional<int64_t> &group) {
  if (map.getNumDims() != 2)
    return false;
  for (AffineExpr e : map.getResults()) {
    MapResult r = decodeMapResult(e);
    if (r.isZero()) {
      if (!isa<AffineConstantExpr>(e))
        return false;
      continue;
    }
    if (r.dim == 0 && r.divisor == 1)
      continue;
    if (r.dim != 1 || r.divisor < 2 || (group && *group != r.divisor))
      return false;
    group = r.divisor;
  }
  return true;
}

/// An elementwise kernel that dequantizes an integer weight, reading its
/// other inputs per row or per group of K (scales and zeros through
/// graph.repeat), moves into the contraction body: those inputs become
/// b_inputs and the weight is read as it is stored. The producer must be
/// the contraction's B operand ([N, K]) and nothing else's, and its body
/// hold only conversions, addf, subf and mulf (the expression the
/// tensor-core kinds evaluate on pairs of elements).
struct FoldWeightDequant : OpRewritePattern<ContractOp> {
  FoldWeightDequant(MLIRContext *ctx, Pass::Statistic &stat, MergeLists &lists)
      : OpRewritePattern(ctx), stat(stat), lists(lists) {}

  LogicalResult matchAndRewrite(ContractOp op,
                                PatternRewriter &rewriter) const override {
    auto prod = op.getB().getDefiningOp<ElementwiseOp>();
    if (!prod || readsPosition(prod.getBody().front()) ||
        !op.getBInputs().empty() || !op.getAInputs().empty() ||
        op.getBTransposed() || !onlyUsedBy(op.getB(), op) ||
        op.getA() == op.getB())
      return rewriter.notifyMatchFailure(op, "no dequantizing producer");
    std::optional<unsigned> weight;
    std::optional<int64_t> group;
    InputList bIn;
    SmallVector<AffineMap> maps = mapsOf(prod.getIndexingMaps());
    SmallVector<int> argOf; // producer input -> b_input index, -1: weight
    for (auto [i, in] : llvm::enumerate(prod.getInputs())) {
      if (maps[i].isIdentity()) {
        Type t = elementTypeOf(in);
        if (weight || !isa<IntegerType>(t))
          return rewriter.notifyMatchFailure(op, "not an integer weight");
        weight = i;
        argOf.push_back(-1);
        continue;
      }
      if (!isRowOrGroupMap(maps[i], group))
        return rewriter.notifyMatchFailure(op, "input not per row or group");
      argOf.push_back(int(bIn.add(in, maps[i])));
    }
    if (!weight || bIn.values.empty())
      return rewriter.notifyMatchFailure(op, "no weight or no b input");
    for (Operation &inner : prod.getBody().front().without_terminator())
      if (!isa<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::AddFOp,
               arith::SubFOp, arith::MulFOp>(inner))
        return rewriter.notifyMatchFailure(op, "not a dequantization");

    Type f32 = rewriter.getF32Type();
    SmallVector<Type> aTypes = chainTypes(op.getAChain(), f32);
    SmallVector<Type> bTypes = chainTypes(op.getBChain(), f32);
    InputList ep = inputsOf(op.getEpilogueInputs(), op.getEpilogueMaps());
    Location loc = lists.fuseLocs(prod, op);
    ContractOp fused =
        createContract(rewriter, loc, op.getType(), op.getA(),
                       prod.getInputs()[*weight], op.getATransposed(), false,
                       bIn, ep, lists.pendingNodes(rewriter.getContext()));
    lists.mergeNodes(fused, prod, op);
    fillContractBody(
        rewriter, loc, fused, aTypes, [&](OpBuilder &b, ValueRange args) {
          SmallVector<Value> prodArgs;
          for (int idx : argOf)
            prodArgs.push_back(idx < 0 ? args[0] : args[1 + idx]);
          Value w = inlineBlock(b, prod.getBody().front(), prodArgs);
          return convertThrough(b, loc, w, bTypes);
        });
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

void mtc::fusion::addFoldWeightDequant(RewritePatternSet &patterns,
                                       Pass::Statistic &stat,
                                       MergeLists &lists) {
  patterns.add<FoldWeightDequant>(patterns.getContext(), stat, lists);
}
