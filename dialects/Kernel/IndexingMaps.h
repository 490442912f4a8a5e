//===- IndexingMaps.h - The kernel ops' indexing maps -----------*- C++ -*-===//
//
// What an indexing map of a kernel op may say (docs/dialects/kernel.md): each
// result a dim, a dim floordiv G, or the constant 0.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_DIALECTS_KERNEL_INDEXINGMAPS_H
#define MTC_DIALECTS_KERNEL_INDEXINGMAPS_H

#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"

#include <cstdint>

namespace mlir {
class Operation;
} // namespace mlir

namespace mtc::kernel {
/// One result of an indexing map: iteration dim `dim` divided by `divisor`
/// (rounding down), or the constant 0 (dim < 0).
struct MapResult {
  int dim = -1;
  int64_t divisor = 1;
  bool isZero() const { return dim < 0; }
};
/// The result `expr` of a verified indexing map.
MapResult decodeMapResult(mlir::AffineExpr expr);

/// Checks that `map` indexes a tensor of `inputShape` from an iteration space
/// of `iterShape`: every result is a dim of equal size, the constant 0 for a
/// dim of size 1, or a dim `floordiv G` for a dim G times smaller (each
/// element read by G consecutive iterations: graph.repeat).
llvm::LogicalResult verifyIndexingMap(mlir::Operation *op, llvm::StringRef what,
                                      mlir::AffineMap map,
                                      llvm::ArrayRef<int64_t> iterShape,
                                      llvm::ArrayRef<int64_t> inputShape);
} // namespace mtc::kernel

#endif // MTC_DIALECTS_KERNEL_INDEXINGMAPS_H
