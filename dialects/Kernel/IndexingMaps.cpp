//===- IndexingMaps.cpp - The kernel ops' indexing maps -------------------===//
//
// See IndexingMaps.h.
//
//===----------------------------------------------------------------------===//
#include "dialects/Kernel/IndexingMaps.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

using namespace mlir;
using namespace mtc::kernel;

MapResult mtc::kernel::decodeMapResult(AffineExpr expr) {
  MapResult r;
  if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
    r.dim = dim.getPosition();
  } else if (auto bin = dyn_cast<AffineBinaryOpExpr>(expr);
             bin && bin.getKind() == AffineExprKind::FloorDiv) {
    auto dim = dyn_cast<AffineDimExpr>(bin.getLHS());
    auto cst = dyn_cast<AffineConstantExpr>(bin.getRHS());
    if (dim && cst) {
      r.dim = dim.getPosition();
      r.divisor = cst.getValue();
    }
  }
  return r;
}

LogicalResult mtc::kernel::verifyIndexingMap(Operation *op, StringRef what,
                                             AffineMap map,
                                             ArrayRef<int64_t> iterShape,
                                             ArrayRef<int64_t> inputShape) {
  if (map.getNumDims() != iterShape.size() || map.getNumSymbols() != 0)
    return op->emitOpError()
           << what << ": map " << AffineMapAttr::get(map) << " must have "
           << iterShape.size() << " dims and no symbols";
  if (map.getNumResults() != inputShape.size())
    return op->emitOpError()
           << what << ": map " << AffineMapAttr::get(map) << " has "
           << map.getNumResults() << " results but the input has rank "
           << inputShape.size();
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    MapResult r = decodeMapResult(expr);
    if (!r.isZero() && r.divisor == 1) {
      if (inputShape[i] != iterShape[r.dim])
        return op->emitOpError() << what << ": input dim " << i << " has size "
                                 << inputShape[i] << " but is indexed by d"
                                 << r.dim << " of size " << iterShape[r.dim];
      continue;
    }
    if (!r.isZero()) {
      if (r.divisor < 2 || inputShape[i] * r.divisor != iterShape[r.dim])
        return op->emitOpError()
               << what << ": input dim " << i << " has size " << inputShape[i]
               << " but is indexed by d" << r.dim << " floordiv " << r.divisor
               << " over " << iterShape[r.dim]
               << "; a group size of at least 2 must divide the iteration "
                  "dim into exactly the input's size";
      continue;
    }
    auto cst = dyn_cast<AffineConstantExpr>(expr);
    if (!cst || cst.getValue() != 0)
      return op->emitOpError()
             << what << ": map result #" << i
             << " must be a dim, a dim floordiv a constant, or the constant 0";
    if (inputShape[i] != 1)
      return op->emitOpError()
             << what << ": input dim " << i << " has size " << inputShape[i]
             << " but is broadcast (indexed by 0); only size-1 dims broadcast";
  }
  return success();
}
