//===- KernelOps.h - mtc kernel dialect ops ---------------------*- C++ -*-===//
#ifndef MTC_DIALECTS_KERNEL_KERNELOPS_H
#define MTC_DIALECTS_KERNEL_KERNELOPS_H

#include "dialects/Kernel/IndexingMaps.h"
#include "dialects/Kernel/KernelDialect.h"
#include "dialects/Kernel/KernelEnums.h"
#include "dialects/Kernel/KernelVerify.h"
#include "dialects/Kernel/Schedule.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_ATTRDEF_CLASSES
#include "dialects/Kernel/KernelAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/Kernel/KernelOps.h.inc"

namespace mtc::kernel {
/// The ops that are kernels (one GPU kernel each, with a schedule).
inline bool isKernelOp(mlir::Operation *op) {
  return llvm::isa<ContractOp, ElementwiseOp, ReduceOp>(op);
}

/// The problem `op` solves (Schedule.h), without the IR.
ContractShape contractShape(ContractOp op);

/// Elements of the result of an elementwise op.
int64_t numElementsOf(mlir::Type t);

/// Why `s` cannot run `op`, a kernel op ("" if it can): the verifier, the
/// lowering, the tuner and --schedule all ask it.
std::string checkSchedule(mlir::Operation *op, const ScheduleParams &s);

/// The launch that `s` gives kernel op `op`.
LaunchConfig launchConfig(mlir::Operation *op, const ScheduleParams &s);
} // namespace mtc::kernel

#endif // MTC_DIALECTS_KERNEL_KERNELOPS_H
