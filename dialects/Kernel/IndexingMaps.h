//===- IndexingMaps.h - The kernel ops' indexing maps -----------*- C++ -*-===//
//
// What an indexing map of a kernel op may say (docs/dialects/kernel.md): each
// result a dim, a dim floordiv G, the constant 0, or (elementwise inputs and
// epilogue inputs) a dim mod P.
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
/// (rounding down) or, with a `modulus`, its remainder by it; or the
/// constant 0 (dim < 0).
struct MapResult {
  int dim = -1;
  int64_t divisor = 1;
  int64_t modulus = 0;
  bool isZero() const { return dim < 0; }
};
/// The result `expr` of a verified indexing map.
MapResult decodeMapResult(mlir::AffineExpr expr);
/// Whether every result of `map` has one of the forms MapResult decodes (a
/// dim, a dim floordiv or mod a constant, the constant 0), whatever the
/// sizes.
bool isIndexingMap(mlir::AffineMap map);

/// Checks that `map` indexes a tensor of `inputShape` from an iteration space
/// of `iterShape`: every result is a dim of equal size, the constant 0 for a
/// dim of size 1, or a dim `floordiv G` for a dim G times smaller (each
/// element read by G consecutive iterations: graph.repeat). With
/// `allowModulus`, also a dim `mod P` for a dim of size P that divides the
/// iteration dim (the input read again every P iterations: a rotary
/// table's row, graph.rope).
llvm::LogicalResult verifyIndexingMap(mlir::Operation *op, llvm::StringRef what,
                                      mlir::AffineMap map,
                                      llvm::ArrayRef<int64_t> iterShape,
                                      llvm::ArrayRef<int64_t> inputShape,
                                      bool allowModulus = false);
} // namespace mtc::kernel

#endif // MTC_DIALECTS_KERNEL_INDEXINGMAPS_H
