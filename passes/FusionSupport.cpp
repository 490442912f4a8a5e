//===- FusionSupport.cpp - Merging kernel regions -------------------------===//
//
// See FusionSupport.h.
//
//===----------------------------------------------------------------------===//
#include "passes/FusionSupport.h"

#include "llvm/ADT/BitVector.h"

using namespace mlir;
using namespace mtc::kernel;

namespace mtc::fusion {

std::optional<Inlined> inlineProducer(ValueRange consumerInputs,
                                      ArrayRef<AffineMap> consumerMaps, Value v,
                                      ElementwiseOp prod, bool positions) {
  std::optional<AffineMap> vMap;
  for (auto [in, map] : llvm::zip(consumerInputs, consumerMaps)) {
    if (in != v)
      continue;
    if (vMap && *vMap != map)
      return std::nullopt; // read at two different indexings
    vMap = map;
  }
  if (!vMap || (readsPosition(prod.getBody().front()) &&
                (!positions || !vMap->isIdentity())))
    return std::nullopt;
  Inlined r;
  for (auto [in, map] : llvm::zip(consumerInputs, consumerMaps))
    r.consumerArg.push_back(in == v ? -1 : int(r.inputs.add(in, map)));
  for (auto [in, map] :
       llvm::zip(prod.getInputs(), mapsOf(prod.getIndexingMaps()))) {
    AffineMap composed = map.compose(*vMap);
    // A consumer's `d mod P` composes with the producer's maps into forms
    // no kernel reads (a group of a period): apart.
    if (!isIndexingMap(composed))
      return std::nullopt;
    r.producerArg.push_back(r.inputs.add(in, composed));
  }
  return r;
}

void mergeBodies(PatternRewriter &rw, Location loc, Region &region,
                 Region &consumer, unsigned leading, const Inlined &m,
                 Block &producer) {
  region.takeBody(consumer);
  Block &block = region.front();
  SmallVector<Value> inputArg(m.inputs.values.size()); // input -> argument
  SmallVector<BlockArgument> vArgs;
  llvm::BitVector dropped(block.getNumArguments());
  for (auto [i, idx] : llvm::enumerate(m.consumerArg)) {
    BlockArgument arg = block.getArgument(leading + i);
    if (idx >= 0 && !inputArg[idx]) {
      inputArg[idx] = arg;
      continue;
    }
    dropped.set(leading + i);
    if (idx < 0)
      vArgs.push_back(arg);
    else
      arg.replaceAllUsesWith(inputArg[idx]);
  }
  for (auto [i, in] : llvm::enumerate(m.inputs.values)) {
    if (!inputArg[i])
      inputArg[i] = block.addArgument(elementTypeOf(in), loc);
  }
  for (BlockArgument arg : block.getArguments())
    arg.setLoc(loc);

  OpBuilder::InsertionGuard guard(rw);
  rw.setInsertionPointToStart(&block);
  SmallVector<Value> prodArgs;
  for (unsigned idx : m.producerArg)
    prodArgs.push_back(inputArg[idx]);
  Value pv = inlineBlock(rw, producer, prodArgs);
  for (BlockArgument arg : vArgs)
    arg.replaceAllUsesWith(pv);
  dropped.resize(block.getNumArguments());
  block.eraseArguments(dropped);
  assert(llvm::all_of(llvm::enumerate(inputArg),
                      [&](auto p) {
                        return block.getArgument(leading + p.index()) ==
                               p.value();
                      }) &&
         "merged arguments out of order");
}

} // namespace mtc::fusion

std::optional<SmallVector<int>>
mtc::fusion::appendConsumerInputs(InputList &ep, ElementwiseOp consumer,
                                  Value v) {
  SmallVector<AffineMap> maps = mapsOf(consumer.getIndexingMaps());
  for (auto [in, map] : llvm::zip(consumer.getInputs(), maps))
    if (in == v && !map.isIdentity())
      return std::nullopt;
  SmallVector<int> consumerArg;
  for (auto [in, map] : llvm::zip(consumer.getInputs(), maps))
    consumerArg.push_back(in == v ? -1 : int(ep.add(in, map)));
  return consumerArg;
}

void mtc::fusion::extendEpilogue(PatternRewriter &rw, Location loc, Region &to,
                                 Region &from, const InputList &ep,
                                 unsigned numOld, ArrayRef<int> consumerArg,
                                 ElementwiseOp consumer) {
  OpBuilder::InsertionGuard guard(rw);
  to.takeBody(from);
  Block *block = &to.front();
  for (Value in : ArrayRef(ep.values).drop_front(numOld))
    block->addArgument(elementTypeOf(in), loc);
  for (BlockArgument arg : block->getArguments())
    arg.setLoc(loc);
  auto oldYield = cast<YieldOp>(block->getTerminator());
  rw.setInsertionPoint(oldYield);
  SmallVector<Value> consumerArgs;
  for (int idx : consumerArg)
    consumerArgs.push_back(idx < 0 ? oldYield.getValue()
                                   : block->getArgument(1 + idx));
  Value r = inlineBlock(rw, consumer.getBody().front(), consumerArgs);
  YieldOp::create(rw, loc, r);
  rw.eraseOp(oldYield);
}

bool mtc::fusion::recomputesMath(ElementwiseOp prod, ElementwiseOp consumer) {
  if (numElementsOf(cast<RankedTensorType>(prod.getType())) >=
      numElementsOf(cast<RankedTensorType>(consumer.getType())))
    return false;
  return llvm::any_of(prod.getBody().front(), [](Operation &o) {
    return o.getDialect() && o.getDialect()->getNamespace() == "math";
  });
}

Location mtc::fusion::remarkAnchor(Operation *op) {
  Location loc = op->getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      return fused.getLocations().back();
  return loc;
}
