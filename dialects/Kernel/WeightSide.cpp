//===- WeightSide.cpp - A contraction's weight side on pairs --------------===//
//
// See WeightSide.h. Every value of the walk is either exact in the half
// type (its pair holds it) or the unrounded result of an addf, subf or
// mulf, whose pair holds it rounded once to the half type; such a value may
// only be read by a truncf to that type, which makes it exact.
//
//===----------------------------------------------------------------------===//
#include "dialects/Kernel/WeightSide.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mtc::kernel;

namespace {
struct PairValue {
  Value pair;
  bool rounded; // exact in the half type (else: awaiting its truncf)
};
} // namespace

Value mtc::kernel::walkWeightPairs(ContractOp op, Type half,
                                   const WeightPairBuilder &builder) {
  if (!half.isBF16() && !half.isF16())
    return {};
  Block &body = op.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  auto product = yield.getValue().getDefiningOp<arith::MulFOp>();
  if (!product)
    return {};
  llvm::DenseMap<Value, PairValue> values;
  // An operand's pair, if it is exact in the half type: a value computed
  // before, or a b input of that type.
  auto exact = [&](Value v) -> Value {
    auto it = values.find(v);
    if (it != values.end())
      return it->second.rounded ? it->second.pair : Value();
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getArgNumber() < 2 || v.getType() != half)
      return {};
    Value pair = builder.input(arg.getArgNumber() - 2);
    values[v] = {pair, true};
    return pair;
  };
  for (Operation *inner : op.getBOps()) {
    Value result = inner->getResult(0);
    Value in = inner->getOperand(0);
    if (auto cvt = dyn_cast<arith::SIToFPOp>(inner)) {
      // An integer of i4 or i8 is exact in either half type.
      auto arg = dyn_cast<BlockArgument>(in);
      if (!arg || arg.getArgNumber() != 1 ||
          in.getType().getIntOrFloatBitWidth() > 8)
        return {};
      values[result] = {builder.weight(inner), true};
    } else if (isa<arith::ExtFOp>(inner)) {
      Value pair = exact(in);
      if (!pair)
        return {};
      values[result] = {pair, true};
    } else if (isa<arith::TruncFOp>(inner)) {
      auto it = values.find(in);
      Value pair = it != values.end() ? it->second.pair : exact(in);
      if (!pair || result.getType() != half)
        return {};
      values[result] = {pair, true};
    } else if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp>(inner)) {
      Value lhs = exact(inner->getOperand(0)),
            rhs = exact(inner->getOperand(1));
      if (!lhs || !rhs)
        return {};
      // Rounded to the half type by every reader (checked as they come).
      bool roundedHere = result.getType() == half;
      if (!roundedHere && !llvm::all_of(result.getUsers(), [&](Operation *u) {
            return isa<arith::TruncFOp>(u) && u->getResult(0).getType() == half;
          }))
        return {};
      values[result] = {builder.binary(inner, lhs, rhs), roundedHere};
    } else {
      return {};
    }
  }
  return exact(product.getRhs());
}

bool mtc::kernel::hasWeightPairs(ContractOp op, Type half) {
  Value placeholder = op.getResult();
  WeightPairBuilder check{
      [&](Operation *) { return placeholder; },
      [&](unsigned) { return placeholder; },
      [&](Operation *, Value, Value) { return placeholder; }};
  return bool(walkWeightPairs(op, half, check));
}
