//===- KernelOps.h - mtc kernel dialect ops ---------------------*- C++ -*-===//
#ifndef MTC_DIALECTS_KERNEL_KERNELOPS_H
#define MTC_DIALECTS_KERNEL_KERNELOPS_H

#include "dialects/Kernel/KernelDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Kernel/KernelEnums.h.inc"

namespace mtc::kernel {
/// The one parameter of #kernel.schedule (dialects/Kernel/Schedule.h).
struct ScheduleParams;
} // namespace mtc::kernel

#define GET_ATTRDEF_CLASSES
#include "dialects/Kernel/KernelAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/Kernel/KernelOps.h.inc"

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

/// True for the scalar ops kernel regions may contain.
bool isAllowedScalarOp(mlir::Operation *op);
} // namespace mtc::kernel

#endif // MTC_DIALECTS_KERNEL_KERNELOPS_H
