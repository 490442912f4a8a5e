//===- KernelEmitter.h - Kernel ops to GPU kernel functions -----*- C++ -*-===//
#ifndef MTC_PASSES_KERNELEMITTER_H
#define MTC_PASSES_KERNELEMITTER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"

namespace mtc {

struct EmitOptions {
  /// Dequantize int8 with byte permutes against a magic exponent (no cvt).
  bool fastDequant = true;
  /// Start every kernel with griddepcontrol.wait and end it with
  /// griddepcontrol.launch_dependents (sm_90+): launched with programmatic
  /// stream serialization, a kernel's blocks become resident while the
  /// previous kernel's last blocks drain, and wait for it to finish before
  /// touching memory.
  bool gridDependency = false;
};

/// Emits the scheduled kernel op `op` (kernel.contract or kernel.elementwise)
/// as an `llvm.func` named `name` at the builder's insertion point, which must
/// be in a module body. Parameters: one `!llvm.ptr<1>` per input (for a
/// contraction: A, B, then the epilogue inputs), the output, and the
/// workspace when the schedule splits K across blocks. The emitters are in
/// passes/emit/ (Emitter.h gives their map).
mlir::LogicalResult emitKernel(mlir::OpBuilder &b, mlir::Operation *op,
                               llvm::StringRef name, const EmitOptions &opts);

} // namespace mtc

#endif // MTC_PASSES_KERNELEMITTER_H
