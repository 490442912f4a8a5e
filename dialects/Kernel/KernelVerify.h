//===- KernelVerify.h - Checks every kernel op shares -----------*- C++ -*-===//
#ifndef MTC_DIALECTS_KERNEL_KERNELVERIFY_H
#define MTC_DIALECTS_KERNEL_KERNELVERIFY_H

#include "dialects/Kernel/Schedule.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/Operation.h"

namespace mtc::kernel {

/// True for the scalar ops kernel regions may contain.
bool isAllowedScalarOp(mlir::Operation *op);
/// True if `block` reads its output element's position (kernel.partner or
/// kernel.column): it is then computed only where that position is the
/// output's (an elementwise body, a contraction's epilogue), and fusion
/// never inlines it into another kernel.
bool readsPosition(mlir::Block &block);
/// True if `block` reads its output element's partner (kernel.partner).
bool readsPartner(mlir::Block &block);

/// A statically shaped tensor of rank >= 1 of a dtype mtc knows, within the
/// tensor limits; `what` names it in the error.
llvm::LogicalResult verifyTensor(mlir::Operation *op, llvm::StringRef what,
                                 mlir::Type t);
/// A kernel's result: any tensor verifyTensor takes but i4 (a storage type
/// no kernel writes).
llvm::LogicalResult verifyResult(mlir::Operation *op, mlir::Type t);
/// The element types of ranked tensors `values`.
llvm::SmallVector<mlir::Type> elementTypesOf(mlir::ValueRange values);
/// Tensors read through indexing maps over an iteration space `space`:
/// as many `maps` (AffineMapAttrs; null for none) as `values` ("has 2
/// <what>s but 1 <mapsWord>"), each value a tensor verifyTensor takes and
/// each map valid for the space and the value's shape (named "<what> #i").
/// `allowModulus`: verifyIndexingMap's.
llvm::LogicalResult
verifyMappedInputs(mlir::Operation *op, llvm::StringRef what,
                   llvm::StringRef mapsWord, mlir::ValueRange values,
                   mlir::ArrayAttr maps, llvm::ArrayRef<int64_t> space,
                   bool allowModulus = false);
/// A scalar region: argument types, the yielded type, allowed ops. Only a
/// region computed per element of `output` (an elementwise body, a
/// contraction's epilogue) may read its position (readsPosition), and only
/// where the output's last dimension is even (kernel.partner's pairs).
llvm::LogicalResult
verifyScalarRegion(mlir::Operation *op, llvm::StringRef what,
                   mlir::Region &region, mlir::TypeRange argTypes,
                   mlir::Type yieldType, mlir::Type output = {});
/// The op's schedule, where it has one, against `check` (the rules of its
/// kind: "" where legal): fails with "schedule S is illegal: why".
llvm::LogicalResult
verifySchedule(mlir::Operation *op, std::optional<ScheduleParams> schedule,
               llvm::function_ref<std::string(const ScheduleParams &)> check);
/// Names the op's result after its last node, where that is an identifier.
void setNameFromNodes(mlir::Operation *op, mlir::ArrayAttr nodes,
                      mlir::OpAsmSetValueNameFn fn);

} // namespace mtc::kernel

#endif // MTC_DIALECTS_KERNEL_KERNELVERIFY_H
