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
             bin && (bin.getKind() == AffineExprKind::FloorDiv ||
                     bin.getKind() == AffineExprKind::Mod)) {
    auto dim = dyn_cast<AffineDimExpr>(bin.getLHS());
    auto cst = dyn_cast<AffineConstantExpr>(bin.getRHS());
    if (dim && cst) {
      r.dim = dim.getPosition();
      if (bin.getKind() == AffineExprKind::Mod)
        r.modulus = cst.getValue();
      else
        r.divisor = cst.getValue();
    }
  }
  return r;
}

bool mtc::kernel::isIndexingMap(AffineMap map) {
  return llvm::all_of(map.getResults(), [](AffineExpr e) {
    if (!decodeMapResult(e).isZero())
      return true;
    auto cst = dyn_cast<AffineConstantExpr>(e);
    return cst && cst.getValue() == 0;
  });
}

LogicalResult mtc::kernel::verifyIndexingMap(Operation *op, StringRef what,
                                             AffineMap map,
                                             ArrayRef<int64_t> iterShape,
                                             ArrayRef<int64_t> inputShape,
                                             bool allowModulus) {
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
    if (r.modulus) {
      if (!allowModulus)
        return op->emitOpError()
               << what << ": map result #" << i
               << " must be a dim, a dim floordiv a constant, or the constant "
                  "0 (a dim mod P only indexes elementwise and epilogue "
                  "inputs)";
      if (r.modulus < 1 || inputShape[i] != r.modulus ||
          iterShape[r.dim] % r.modulus)
        return op->emitOpError()
               << what << ": input dim " << i << " has size " << inputShape[i]
               << " but is indexed by d" << r.dim << " mod " << r.modulus
               << " over " << iterShape[r.dim]
               << "; the modulus must be the input dim's size and divide the "
                  "iteration dim";
      continue;
    }
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
