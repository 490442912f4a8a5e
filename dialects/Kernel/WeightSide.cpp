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
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mtc::kernel;

bool mtc::kernel::isConversion(Operation *op) {
  return isa<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::FPToSIOp>(
      op);
}

/// Ops that may form the weight's side of the body when it reads b_inputs.
static bool isWeightSideOp(Operation *op) {
  return isConversion(op) ||
         isa<arith::AddFOp, arith::SubFOp, arith::MulFOp>(op);
}

FailureOr<SmallVector<Operation *>>
mtc::kernel::weightSideOps(Block &block, Value v, unsigned firstInput) {
  llvm::SmallPtrSet<Operation *, 16> ops;
  SmallVector<Value> work{v};
  while (!work.empty()) {
    Value cur = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(cur)) {
      if (arg.getOwner() != &block ||
          (arg.getArgNumber() != 1 && arg.getArgNumber() < firstInput))
        return failure();
      continue;
    }
    Operation *def = cur.getDefiningOp();
    if (!def || def->getBlock() != &block || !isWeightSideOp(def))
      return failure();
    if (ops.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  SmallVector<Operation *> ordered;
  for (Operation &op : block)
    if (ops.contains(&op))
      ordered.push_back(&op);
  return ordered;
}

namespace {
struct PairValue {
  Value pair;
  bool rounded; // exact in the half type (else: awaiting its truncf)
};
} // namespace

Value mtc::kernel::walkWeightPairs(Block &body, Type half,
                                   const WeightPairBuilder &builder) {
  if (!half.isBF16() && !half.isF16())
    return {};
  // The body yields the product of the activation's and the weight's sides.
  Operation *yield = body.getTerminator();
  auto product = yield && yield->getNumOperands() == 1
                     ? yield->getOperand(0).getDefiningOp<arith::MulFOp>()
                     : arith::MulFOp();
  if (!product)
    return {};
  FailureOr<SmallVector<Operation *>> bOps =
      weightSideOps(body, product.getRhs(), 2);
  if (failed(bOps))
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
  for (Operation *inner : *bOps) {
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

bool mtc::kernel::hasWeightPairs(Block &body, Type half) {
  if (body.getNumArguments() == 0)
    return false;
  Value placeholder = body.getArgument(0);
  WeightPairBuilder check{
      [&](Operation *) { return placeholder; },
      [&](unsigned) { return placeholder; },
      [&](Operation *, Value, Value) { return placeholder; }};
  return bool(walkWeightPairs(body, half, check));
}

/// The b input that `v` reads as an f32 (an f32 argument from #2 on, or one
/// extended to f32), or -1.
static int f32Input(Value v) {
  if (!v.getType().isF32())
    return -1;
  if (auto ext = v.getDefiningOp<arith::ExtFOp>())
    v = ext.getIn();
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getArgNumber() >= 2 ? int(arg.getArgNumber() - 2) : -1;
}

/// `op`'s operands as (the operand that is an f32 b input, its index; the
/// other), or none if neither is.
template <typename OpTy>
static std::optional<std::pair<int, Value>> splitInput(Value v) {
  auto op = v.getDefiningOp<OpTy>();
  if (!op || !op.getType().isF32())
    return std::nullopt;
  for (unsigned i = 0; i < 2; ++i)
    if (int in = f32Input(op->getOperand(i)); in >= 0)
      return std::make_pair(in, op->getOperand(1 - i));
  return std::nullopt;
}

std::optional<FactoredWeight> mtc::kernel::matchFactoredWeight(Block &body) {
  Operation *yield = body.getTerminator();
  auto product = yield && yield->getNumOperands() == 1
                     ? yield->getOperand(0).getDefiningOp<arith::MulFOp>()
                     : arith::MulFOp();
  if (!product || !product.getType().isF32())
    return std::nullopt;
  FactoredWeight f;
  Value w = product.getRhs();
  if (auto add = splitInput<arith::AddFOp>(w))
    std::tie(f.zero, w) = *add;
  if (auto mul = splitInput<arith::MulFOp>(w))
    std::tie(f.scale, w) = *mul;
  auto cvt = w.getDefiningOp<arith::SIToFPOp>();
  auto arg = cvt ? dyn_cast<BlockArgument>(cvt.getIn()) : BlockArgument();
  if (!cvt || !cvt.getType().isF32() || !arg || arg.getOwner() != &body ||
      arg.getArgNumber() != 1)
    return std::nullopt;
  return f;
}
