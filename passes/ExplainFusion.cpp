//===- ExplainFusion.cpp - What mtc-fuse fused, and why not the rest ------===//
//
// `mtc-fuse{explain=true}` (`mtc compile --explain-fusion`) runs this after
// fusion. It emits, as remarks at the graph's own locations:
//   - per kernel: its index (as the manifest numbers kernels), its op, the
//     graph nodes it computes and where they went (the activations'
//     prologue, the weight's side, the epilogue);
//   - per value that one kernel writes to memory and another reads back:
//     its size and the rule that kept the two kernels apart.
// The reasons come from the rules' own predicates where the rules have them
// (prologueBlocker, statisticBlocker, applyBlocker, recomputesMath) and
// otherwise restate the pattern's condition; docs/dialects/kernel.md gives
// the cost reasoning behind each.
//
//===----------------------------------------------------------------------===//
#include "passes/FusionSupport.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Kernel/KernelOps.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::fusion;
using namespace mtc::kernel;

namespace {

std::string typeText(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(t.getShape(), os);
  os << "] " << t.getElementType();
  int64_t bits = numElementsOf(t) * t.getElementTypeBitWidth();
  int64_t bytes = bits / 8;
  if (bytes >= 4096)
    os << ", " << bytes / 1024 << " KiB";
  else
    os << ", " << bytes << " B";
  return s;
}

ArrayRef<Attribute> nodesOf(Operation *op) {
  auto nodes = op->getAttrOfType<ArrayAttr>("nodes");
  return nodes ? nodes.getValue() : ArrayRef<Attribute>();
}

std::string nodeList(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(nodesOf(op), os, [&](Attribute a) {
    os << cast<StringAttr>(a).getValue();
  });
  return s;
}

/// The name of the value a kernel writes: its last node.
StringRef resultName(Operation *op) {
  ArrayRef<Attribute> nodes = nodesOf(op);
  return nodes.empty() ? StringRef("?")
                       : cast<StringAttr>(nodes.back()).getValue();
}

StringRef opName(Operation *op) { return op->getName().stripDialect(); }

void describe(Operation *op, unsigned index) {
  InFlightDiagnostic d = emitRemark(remarkAnchor(op));
  size_t n = nodesOf(op).size();
  d << "kernel " << index << " (" << opName(op) << ") computes " << n
    << (n == 1 ? " node: " : " nodes: ") << nodeList(op);
  if (auto c = dyn_cast<ContractOp>(op)) {
    if (!c.getSiblings().empty())
      d << "; it reads " << 1 + c.getSiblings().size()
        << " weights with the same activations (horizontal fusion), one sum "
           "per weight into its epilogue";
    if (!c.getAInputs().empty())
      d << "; the activations' prologue reads " << c.getAInputs().size()
        << " more input(s)";
    if (c.hasRowStatistic())
      d << "; each block derives its rows' statistic (a reduction over A's "
           "rows) before its first step";
    if (!c.getBInputs().empty())
      d << "; the weight's side dequantizes with " << c.getBInputs().size()
        << " input(s) read per row or group";
    if (!c.getEpilogueInputs().empty())
      d << "; its epilogue reads " << c.getEpilogueInputs().size()
        << " input(s)";
  } else if (auto r = dyn_cast<ReduceOp>(op)) {
    if (!r.getEpilogueInputs().empty())
      d << "; its epilogue reads " << r.getEpilogueInputs().size()
        << " input(s)";
    if (r.hasApply())
      d << "; it applies each row's statistic to the row (reading "
        << r.getApplyInputs().size()
        << " input(s)) and writes the scaled rows, not the statistic";
  }
}

/// Why the value `v` that `prod` writes is read back by `reader` rather
/// than fused into it; `readers` is every kernel that reads it.
std::string whyApart(Operation *prod, Operation *reader, Value v,
                     ArrayRef<Operation *> readers, bool returned) {
  auto shapeOf = [](Value x) {
    return cast<RankedTensorType>(x.getType()).getShape();
  };
  if (returned)
    return "it is a graph output, written whatever reads it";
  if (auto e = dyn_cast<ElementwiseOp>(prod);
      e && readsPosition(e.getBody().front()))
    return "it reads its elements' positions (kernel.partner, kernel.column: "
           "a rotary embedding), which only its own kernel or a "
           "contraction's epilogue computes";
  if (auto c = dyn_cast<ContractOp>(reader)) {
    auto e = dyn_cast<ElementwiseOp>(prod);
    if (e && v == c.getA()) {
      unsigned source = 0;
      std::string why = prologueBlocker(c, e, source);
      if (!why.empty())
        return "no activation prologue: " + why;
    }
    auto red = dyn_cast<ReduceOp>(prod);
    if (red && red.hasApply() && v == c.getA()) {
      std::string why = prologueKindBlocker(c);
      return "the rows are scaled by their statistic in the reduction's "
             "kernel (apply); only an elementwise kernel joins a contraction "
             "as its prologue, and this one took none" +
             (why.empty() ? "" : ": " + why);
    }
    if (red)
      for (auto [j, in] : llvm::enumerate(c.getAInputs()))
        if (in == v)
          return "the contraction's prologue reads it once per row, and "
                 "does not derive it itself: " +
                 statisticBlocker(c, red, unsigned(j));
    auto pc = dyn_cast<ContractOp>(prod);
    if (pc && llvm::is_contained(c.getEpilogueInputs(), v))
      return pc.getA() == c.getA()
                 ? "another contraction of the same activations reads it in "
                   "its epilogue, but they stay two kernels: " +
                       siblingBlocker(pc, c)
                 : "another contraction's epilogue reads it: only "
                   "elementwise producers join an epilogue, and only a "
                   "contraction of the same activations joins as a sibling";
    if (isa<ContractOp>(prod) && (v == c.getA() || v == c.getB()))
      return "a contraction's result is the operand of the next contraction, "
             "whose every output needs all of it (a dependency across "
             "blocks)";
  }
  if (readers.size() > 1)
    return std::to_string(readers.size()) +
           " kernels read it: a value is computed once, not once per reader "
           "(only plain conversions are recomputed)";
  if (auto pc = dyn_cast<ContractOp>(prod)) {
    if (isa<ElementwiseOp>(reader) &&
        shapeOf(v) != shapeOf(reader->getResult(0)))
      return "the consumer's iteration space is not the contraction's "
             "(an epilogue runs once per output element)";
    auto e = dyn_cast<ElementwiseOp>(reader);
    if (e && pc.getBTransposed() && readsPosition(e.getBody().front()))
      return "the consumer reads each output's partner column (a rotary "
             "embedding), which an epilogue has only over a weight stored "
             "[N, K]";
    return std::string("a contraction only takes elementwise consumers as its "
                       "epilogue, not a ") +
           opName(reader).str();
  }
  if (auto red = dyn_cast<ReduceOp>(prod))
    if (auto e = dyn_cast<ElementwiseOp>(reader))
      return "a row statistic that the consumer does not apply in the "
             "reduction's kernel: " +
             applyBlocker(e, red);
  if (isa<ReduceOp>(prod) && isa<ReduceOp>(reader))
    return "another reduction sums these rows: it needs each row whole, "
           "after the first reduction's statistic is applied (two passes of "
           "one kernel over its rows are not done)";
  auto e = dyn_cast<ElementwiseOp>(prod);
  auto r = dyn_cast<ElementwiseOp>(reader);
  if (e && r && recomputesMath(e, r))
    return "it runs a math op (rsqrt, exp) that the consumer would run once "
           "per element of its larger space instead of once here";
  return "no fusion rule joins a " + opName(prod).str() + " producer to this " +
         opName(reader).str() + " here";
}

} // namespace

void mtc::fusion::explainFusion(graph::FuncOp func) {
  llvm::DenseMap<Operation *, unsigned> index;
  SmallVector<Operation *> kernels;
  for (Operation &op : func.getBody().front().without_terminator())
    if (isa<ContractOp, ElementwiseOp, ReduceOp>(op)) {
      index[&op] = kernels.size();
      kernels.push_back(&op);
    }
  for (Operation *op : kernels)
    describe(op, index[op]);
  Operation *ret = func.getReturn();
  for (Operation *prod : kernels) {
    Value v = prod->getResult(0);
    llvm::SetVector<Operation *> readers;
    bool returned = false;
    for (Operation *user : v.getUsers()) {
      if (user == ret)
        returned = true;
      else if (index.count(user))
        readers.insert(user);
    }
    for (Operation *reader : readers)
      emitRemark(remarkAnchor(prod))
          << "'" << resultName(prod) << "' (" << typeText(v)
          << ") is written by kernel " << index[prod] << " and read by kernel "
          << index[reader] << ": "
          << whyApart(prod, reader, v, readers.getArrayRef(), returned);
  }
}
