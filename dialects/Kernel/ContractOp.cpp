//===- ContractOp.cpp - kernel.contract -----------------------------------===//
//
// The contraction's verifiers (operand layouts, the b, a and epilogue
// inputs, the structure of its body and regions), the chains its body
// applies to A and B, and its problem as plain data (contractShape). Its
// op class is generated into this file (ContractOp.cpp.inc), the other
// ops' into KernelOps.cpp, which depends on this file and not the other
// way round.
//
//===----------------------------------------------------------------------===//
#include "dialects/Kernel/KernelOps.h"
#include "dialects/Kernel/KernelVerify.h"
#include "dialects/Kernel/WeightSide.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::kernel;

//===----------------------------------------------------------------------===//
// ContractOp
//===----------------------------------------------------------------------===//

/// The b_inputs and their maps from (n, k): each result d0, d1 floordiv G
/// (one G for all) or 0.
static LogicalResult verifyBInputs(ContractOp op, int64_t n, int64_t k) {
  size_t count = op.getBInputs().size();
  size_t maps = op.getBMaps() ? op.getBMaps()->size() : 0;
  if (maps != count)
    return op.emitOpError("has ")
           << count << " b inputs but " << maps << " b maps";
  if (count && op.getBTransposed())
    return op.emitOpError("b inputs need the weight stored [N, K] (not "
                          "b_transposed)");
  std::optional<int64_t> group;
  for (auto [i, v] : llvm::enumerate(op.getBInputs())) {
    std::string what = "b input #" + std::to_string(i);
    AffineMap map = cast<AffineMapAttr>((*op.getBMaps())[i]).getValue();
    if (failed(
            verifyIndexingMap(op, what, map, {n, k},
                              cast<RankedTensorType>(v.getType()).getShape())))
      return failure();
    for (AffineExpr e : map.getResults()) {
      MapResult r = decodeMapResult(e);
      if (r.dim != 1)
        continue;
      if (r.divisor == 1)
        return op.emitOpError()
               << what << " is read per element of the weight (d1); b inputs "
               << "are read per row (d0) or per group of K (d1 floordiv G)";
      if (group && *group != r.divisor)
        return op.emitOpError()
               << what << " is read in groups of " << r.divisor
               << " but an earlier b input in groups of " << *group
               << "; all b inputs share one group size";
      group = r.divisor;
    }
  }
  return success();
}

/// The a_inputs and their maps from (m, k) over a 2-D A [M, K].
static LogicalResult verifyAInputs(ContractOp op, int64_t k) {
  auto a = cast<RankedTensorType>(op.getA().getType());
  if (!op.getAInputs().empty() &&
      (a.getRank() != 2 || op.getATransposed() || op.getBTransposed()))
    return op.emitOpError("a inputs need a 2-D operand a [M, K] and a weight "
                          "stored [N, K] (neither transposed)");
  return verifyMappedInputs(op, "a input", "a maps", op.getAInputs(),
                            op.getAMaps().value_or(ArrayAttr()),
                            {a.getRank() == 2 ? a.getDimSize(0) : 1, k});
}

int64_t ContractOp::getM() { return contractShape(*this).m; }
int64_t ContractOp::getN() { return contractShape(*this).n; }
int64_t ContractOp::getK() { return contractShape(*this).k; }

/// The ops from `arg` to `v`, if `v` is `arg` converted by a chain of
/// single-operand conversions.
static FailureOr<SmallVector<Operation *>> chainFrom(Value arg, Value v) {
  SmallVector<Operation *> ops;
  while (v != arg) {
    Operation *def = v.getDefiningOp();
    if (!def || !isConversion(def))
      return failure();
    ops.push_back(def);
    v = def->getOperand(0);
  }
  std::reverse(ops.begin(), ops.end());
  return ops;
}

static arith::MulFOp bodyProduct(ContractOp op) {
  // The terminator is a kernel.yield (KernelOps.cpp), of the one value.
  return op.getBody()
      .front()
      .getTerminator()
      ->getOperand(0)
      .getDefiningOp<arith::MulFOp>();
}

/// The activation side: the value of A's element type that a conversion
/// chain takes to the product's f32 factor, and the prologue ops computing
/// it from %a and the a inputs (none without a_inputs, where it is %a).
struct ASide {
  Value value;
  SmallVector<Operation *> ops;
};

static FailureOr<ASide> aSideOf(ContractOp op) {
  Block &body = op.getBody().front();
  arith::MulFOp mul = bodyProduct(op);
  Type aElem = cast<RankedTensorType>(op.getA().getType()).getElementType();
  Value v = mul.getLhs();
  if (!op.hasPrologue()) {
    // No prologue: %a's own chain.
    if (failed(chainFrom(body.getArgument(0), v)))
      return failure();
    return ASide{body.getArgument(0), {}};
  }
  while (v.getType() != aElem) {
    Operation *def = v.getDefiningOp();
    if (!def || !isConversion(def))
      return failure();
    v = def->getOperand(0);
  }
  ASide side{v, {}};
  // The prologue: every op v depends on, reading only %a and the a inputs.
  unsigned firstA = 2 + op.getBInputs().size();
  SmallVector<Value> work{v};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      if (arg.getArgNumber() != 0 && arg.getArgNumber() < firstA)
        return failure();
      continue;
    }
    Operation *def = x.getDefiningOp();
    if (seen.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  for (Operation &o : body)
    if (seen.contains(&o))
      side.ops.push_back(&o);
  return side;
}

Value ContractOp::getAPrologueValue() {
  FailureOr<ASide> side = aSideOf(*this);
  return succeeded(side) ? side->value : Value();
}

SmallVector<Operation *> ContractOp::getAOps() {
  FailureOr<ASide> side = aSideOf(*this);
  return succeeded(side) ? side->ops : SmallVector<Operation *>{};
}

SmallVector<Operation *> ContractOp::getAChain() {
  FailureOr<ASide> side = aSideOf(*this);
  if (failed(side))
    return {};
  auto chain = chainFrom(side->value, bodyProduct(*this).getLhs());
  return succeeded(chain) ? *chain : SmallVector<Operation *>{};
}

SmallVector<Operation *> ContractOp::getBChain() {
  auto chain =
      chainFrom(getBody().front().getArgument(1), bodyProduct(*this).getRhs());
  return succeeded(chain) ? *chain : SmallVector<Operation *>{};
}

SmallVector<Operation *> ContractOp::getBOps() {
  auto ops = weightSideOps(getBody().front(), bodyProduct(*this).getRhs(), 2);
  return succeeded(ops) ? *ops : SmallVector<Operation *>{};
}

int64_t ContractOp::getGroupSize() {
  std::optional<ArrayAttr> maps = getBMaps();
  if (getBInputs().empty() || !maps)
    return 0;
  for (Attribute a : *maps)
    for (AffineExpr e : cast<AffineMapAttr>(a).getValue().getResults())
      if (MapResult r = decodeMapResult(e); r.dim == 1)
        return r.divisor;
  // Per row: one value covers all of K (B is [N, K] with b inputs).
  return cast<RankedTensorType>(getB().getType()).getDimSize(1);
}

LogicalResult ContractOp::verify() {
  if (failed(verifyTensor(*this, "operand a", getA().getType())) ||
      failed(verifyTensor(*this, "operand b", getB().getType())) ||
      failed(verifyResult(*this, getType())))
    return failure();
  for (auto [i, v] : llvm::enumerate(getBInputs()))
    if (failed(
            verifyTensor(*this, "b input #" + std::to_string(i), v.getType())))
      return failure();

  ArrayRef<int64_t> a = cast<RankedTensorType>(getA().getType()).getShape();
  ArrayRef<int64_t> b = cast<RankedTensorType>(getB().getType()).getShape();
  ArrayRef<int64_t> r = cast<RankedTensorType>(getType()).getShape();
  if (b.size() != 2)
    return emitOpError("operand b must be 2-D, got ") << formatShape(b);
  int64_t n = getBTransposed() ? b[1] : b[0];
  int64_t kB = getBTransposed() ? b[0] : b[1];
  int64_t kA;
  Shape expected;
  if (getATransposed()) {
    if (a.size() != 2)
      return emitOpError("a transposed operand a must be 2-D [K, M], got ")
             << formatShape(a);
    kA = a[0];
    expected = {a[1], n};
  } else {
    kA = a.back();
    expected.assign(a.begin(), a.end() - 1);
    expected.push_back(n);
  }
  if (kA != kB)
    return emitOpError("operands disagree on K: a ")
           << formatShape(a) << (getATransposed() ? " (transposed)" : "")
           << " vs b " << formatShape(b)
           << (getBTransposed() ? " (transposed)" : "");
  if (ArrayRef<int64_t>(expected) != r)
    return emitOpError("result shape ")
           << formatShape(r) << " does not match the operands; expected "
           << formatShape(expected);

  if (failed(verifyBInputs(*this, n, kB)) || failed(verifyAInputs(*this, kA)))
    return failure();
  if (hasRowStatistic() &&
      (a.size() != 2 || getATransposed() || getBTransposed()))
    return emitOpError("a row statistic needs a 2-D operand a [M, K] and a "
                       "weight stored [N, K] (neither transposed)");
  for (auto [i, v] : llvm::enumerate(getSiblings())) {
    if (v.getType() != getB().getType())
      return emitOpError("sibling #")
             << i << " must have operand b's type " << getB().getType()
             << ", got " << v.getType();
    if (getBTransposed())
      return emitOpError("siblings need a weight stored [N, K]");
  }
  // Each sibling's own b inputs, typed as B's.
  size_t numB = getBInputs().size();
  if (getSiblingBInputs().size() != getSiblings().size() * numB)
    return emitOpError("has ")
           << getSiblings().size() << " siblings and " << numB
           << " b inputs, so needs " << getSiblings().size() * numB
           << " sibling_b_inputs, got " << getSiblingBInputs().size();
  for (auto [i, v] : llvm::enumerate(getSiblingBInputs()))
    if (v.getType() != getBInputs()[i % numB].getType())
      return emitOpError("sibling_b_input #")
             << i << " must have b input #" << i % numB << "'s type "
             << getBInputs()[i % numB].getType() << ", got " << v.getType();
  if (failed(verifyMappedInputs(*this, "epilogue input", "epilogue maps",
                                getEpilogueInputs(), getEpilogueMaps(), r,
                                /*allowModulus=*/true)))
    return failure();
  std::optional<ScheduleParams> schedule;
  if (std::optional<ScheduleAttr> attr = getSchedule())
    schedule = attr->getParams();
  return verifySchedule(*this, schedule, [&](const ScheduleParams &s) {
    return checkContractSchedule(contractShape(*this), s);
  });
}

static LogicalResult verifyEpilogueRegion(ContractOp op, Type f32);

LogicalResult ContractOp::verifyRegions() {
  Type f32 = Float32Type::get(getContext());
  Type aElem = cast<RankedTensorType>(getA().getType()).getElementType();
  Type bElem = cast<RankedTensorType>(getB().getType()).getElementType();
  SmallVector<Type> bodyArgs{aElem, bElem};
  llvm::append_range(bodyArgs, elementTypesOf(getBInputs()));
  llvm::append_range(bodyArgs, elementTypesOf(getAInputs()));
  if (getStatBody().empty() != getStatEpilogue().empty() ||
      getStatBody().getBlocks().size() > 1 ||
      getStatEpilogue().getBlocks().size() > 1)
    return emitOpError("a row statistic needs one block in each of "
                       "stat_body and stat_epilogue");
  if (hasRowStatistic()) {
    bodyArgs.push_back(f32);
    if (failed(verifyScalarRegion(*this, "stat_body", getStatBody(), {aElem},
                                  f32)) ||
        failed(verifyScalarRegion(*this, "stat_epilogue", getStatEpilogue(),
                                  {f32}, f32)))
      return failure();
  }
  if (failed(verifyScalarRegion(*this, "body", getBody(), bodyArgs, f32)))
    return failure();
  Block &body = getBody().front();
  arith::MulFOp mul = bodyProduct(*this);
  if (!mul)
    return emitOpError("body must yield the arith.mulf of its two converted "
                       "operands");
  FailureOr<ASide> aSide = aSideOf(*this);
  if (hasPrologue()) {
    if (failed(aSide))
      return emitOpError("body's activation side must compute a value of a's "
                         "element type from %a, the a inputs and the row "
                         "statistic only, then convert it to f32 by a chain "
                         "of arith conversions");
    if (llvm::none_of(body.getArgument(0).getUsers(), [&](Operation *u) {
          return llvm::is_contained(aSide->ops, u);
        }))
      return emitOpError("body's activation side must read %a");
  }
  // Without a prologue, %a's chain (its failure reported below).
  size_t numAOps = succeeded(aSide) ? aSide->ops.size() : 0;
  auto aChain = chainFrom(succeeded(aSide) ? aSide->value : body.getArgument(0),
                          mul.getLhs());
  if (!getBInputs().empty()) {
    auto bSide = weightSideOps(body, mul.getRhs(), 2);
    if (failed(aChain) || failed(bSide))
      return emitOpError("body must multiply %a, converted to f32 by a chain "
                         "of arith conversions, and an expression of arith "
                         "conversions, addf, subf and mulf over %b and the b "
                         "inputs");
    if (!llvm::any_of(body.getArgument(1).getUsers(), [&](Operation *u) {
          return llvm::is_contained(*bSide, u);
        }))
      return emitOpError("body's weight side must read %b");
    if (body.getOperations().size() !=
        numAOps + aChain->size() + bSide->size() + 2)
      return emitOpError("body may only hold the activations' conversion "
                         "chain, the weight's expression, the product and "
                         "the yield");
    for (Operation *op : *aChain)
      if (!op->getResult(0).hasOneUse())
        return op->emitOpError("in a contraction body must have a single use");
    return verifyEpilogueRegion(*this, f32);
  }
  auto bChain = chainFrom(body.getArgument(1), mul.getRhs());
  if (failed(aChain) || failed(bChain))
    return emitOpError("body must multiply %a and %b, each converted to f32 by "
                       "a chain of arith conversions");
  size_t expectedOps = numAOps + aChain->size() + bChain->size() + 2;
  if (body.getOperations().size() != expectedOps)
    return emitOpError("body may only hold the two conversion chains, the "
                       "product and the yield");
  for (Operation *op : llvm::concat<Operation *>(*aChain, *bChain))
    if (!op->getResult(0).hasOneUse())
      return op->emitOpError("in a contraction body must have a single use");
  return verifyEpilogueRegion(*this, f32);
}

static LogicalResult verifyEpilogueRegion(ContractOp op, Type f32) {
  // One sum per weight: B's, then each sibling's.
  SmallVector<Type> epilogueArgs(1 + op.getSiblings().size(), f32);
  for (Value v : op.getEpilogueInputs())
    epilogueArgs.push_back(
        cast<RankedTensorType>(v.getType()).getElementType());
  return verifyScalarRegion(
      op, "epilogue", op.getEpilogue(), epilogueArgs,
      cast<RankedTensorType>(op.getType()).getElementType(), op.getType());
}

void ContractOp::getAsmResultNames(OpAsmSetValueNameFn fn) {
  setNameFromNodes(*this, getNodes(), fn);
}

void ContractOp::getAsmBlockArgumentNames(Region &region,
                                          OpAsmSetValueNameFn fn) {
  if (region.empty())
    return;
  Block &block = region.front();
  if (&region == &getBody()) {
    unsigned numB = getBInputs().size(), numA = getAInputs().size();
    bool stat = hasRowStatistic();
    if (block.getNumArguments() == 2 + numB + numA + (stat ? 1 : 0)) {
      fn(block.getArgument(0), "a");
      fn(block.getArgument(1), "b");
      for (unsigned i = 2; i < 2 + numB + numA; ++i)
        fn(block.getArgument(i), i < 2 + numB
                                     ? "w" + std::to_string(i - 2)
                                     : "x" + std::to_string(i - 2 - numB));
      if (stat)
        fn(block.getArguments().back(), "stat");
    }
    return;
  }
  if (&region == &getStatBody() || &region == &getStatEpilogue()) {
    if (block.getNumArguments() == 1)
      fn(block.getArgument(0), &region == &getStatBody() ? "x" : "sum");
    return;
  }
  unsigned sums = 1 + getSiblings().size();
  for (auto [i, arg] : llvm::enumerate(block.getArguments()))
    fn(arg, i >= sums   ? "e" + std::to_string(i - sums)
            : sums == 1 ? std::string("acc")
                        : "acc" + std::to_string(i));
}

//===----------------------------------------------------------------------===//
// The problem
//===----------------------------------------------------------------------===//

ContractShape mtc::kernel::contractShape(ContractOp op) {
  ContractShape c;
  auto a = cast<RankedTensorType>(op.getA().getType());
  auto b = cast<RankedTensorType>(op.getB().getType());
  auto r = cast<RankedTensorType>(op.getType());
  c.aTransposed = op.getATransposed();
  c.bTransposed = op.getBTransposed();
  c.a = *dtypeOf(a.getElementType());
  c.b = *dtypeOf(b.getElementType());
  c.out = *dtypeOf(r.getElementType());
  c.n = c.bTransposed ? b.getDimSize(1) : b.getDimSize(0);
  c.k = c.bTransposed ? b.getDimSize(0) : b.getDimSize(1);
  SmallVector<Operation *> aChain = op.getAChain(), bChain = op.getBChain();
  c.mmaAChain = aChain.size() == 1 && isa<arith::ExtFOp>(aChain[0]);
  c.aPrologue = op.hasPrologue();
  c.rowStatistic = op.hasRowStatistic();
  if (isInteger(c.b)) {
    Block &body = op.getBody().front();
    c.mmaBChain = hasWeightPairs(body, a.getElementType());
    c.factoredB = !c.mmaBChain && matchFactoredWeight(body).has_value();
  } else
    c.mmaBChain = op.getBInputs().empty() && bChain.size() == 1 &&
                  isa<arith::ExtFOp>(bChain[0]) &&
                  bChain[0]->getResult(0).getType().isF32();
  c.bInputs = op.getBInputs().size();
  c.group = op.getGroupSize();
  c.weights = 1 + op.getSiblings().size();
  c.pairs = !op.getEpilogue().empty() && readsPartner(op.getEpilogue().front());
  c.m = 1;
  if (c.aTransposed)
    c.m = a.getDimSize(1);
  else
    for (int64_t d : a.getShape().drop_back())
      c.m *= d;
  return c;
}

#define GET_OP_CLASSES
#include "dialects/Kernel/ContractOp.cpp.inc"
