//===- GpuBuilder.h - Building GPU kernels in the LLVM dialect --*- C++ -*-===//
//
// A thin layer over OpBuilder for the kernel emitters: integer and float
// arithmetic (arith), special registers, shuffles and barriers (nvvm),
// pointers and memory (llvm), structured loops and branches (scf). It keeps
// the emitters readable; it adds no semantics of its own.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_PASSES_EMIT_GPUBUILDER_H
#define MTC_PASSES_EMIT_GPUBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mtc {

class GpuBuilder {
public:
  GpuBuilder(mlir::OpBuilder &b, mlir::Location loc);

  mlir::OpBuilder &b;
  mlir::Location loc;
  mlir::Type i1, i8, i16, i32, i64, f32;
  mlir::Type globalPtr, sharedPtr;

  // Constants.
  mlir::Value c32(int64_t v);
  mlir::Value c64(int64_t v);
  mlir::Value cf32(double v);

  // Integer arithmetic (both operands of the same type).
  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value sub(mlir::Value a, mlir::Value b);
  mlir::Value mul(mlir::Value a, mlir::Value b);
  mlir::Value udiv(mlir::Value a, mlir::Value b);
  mlir::Value urem(mlir::Value a, mlir::Value b);
  mlir::Value shl(mlir::Value a, mlir::Value b);
  mlir::Value lshr(mlir::Value a, mlir::Value b);
  mlir::Value band(mlir::Value a, mlir::Value b);
  mlir::Value bor(mlir::Value a, mlir::Value b);
  mlir::Value bxor(mlir::Value a, mlir::Value b);
  mlir::Value umin(mlir::Value a, mlir::Value b);
  mlir::Value cmp(mlir::arith::CmpIPredicate p, mlir::Value a, mlir::Value b);
  mlir::Value andi(mlir::Value a, mlir::Value b);
  mlir::Value select(mlir::Value c, mlir::Value a, mlir::Value b);
  mlir::Value zext64(mlir::Value v);
  mlir::Value trunc(mlir::Type t, mlir::Value v);
  mlir::Value bitcast(mlir::Type t, mlir::Value v);

  // Float arithmetic.
  mlir::Value fma(mlir::Value a, mlir::Value b, mlir::Value c);
  mlir::Value fadd(mlir::Value a, mlir::Value b);
  mlir::Value fsub(mlir::Value a, mlir::Value b);

  // Special registers (i32).
  mlir::Value tidX();
  mlir::Value ctaidX();
  mlir::Value ctaidZ();

  // Memory. `byteOffset` is i64.
  mlir::Value gep(mlir::Value ptr, mlir::Value byteOffset);
  mlir::Value load(mlir::Type t, mlir::Value ptr, unsigned align,
                   bool invariant = false);
  void store(mlir::Value v, mlir::Value ptr, unsigned align);
  /// `word` selects bytes of {hi, lo} (prmt.b32).
  mlir::Value prmt(mlir::Value lo, mlir::Value hi, uint32_t selector);

  /// Inline PTX `text` (operands $0.. in LLVM's constraint syntax:
  /// outputs first, then `operands`): one value per type of `results`.
  /// With `sideEffects` the asm keeps its place among the other such asms.
  llvm::SmallVector<mlir::Value> inlinePtx(mlir::TypeRange results,
                                           llvm::StringRef text,
                                           llvm::StringRef constraints,
                                           mlir::ValueRange operands,
                                           bool sideEffects);

  // Warp and block.
  mlir::Value shflXor(mlir::Value v, int laneMask);
  void barrier();
  void fenceGpu();

  // Structured control flow.
  using LoopBody = llvm::function_ref<llvm::SmallVector<mlir::Value>(
      mlir::Value iv, mlir::ValueRange iters)>;
  llvm::SmallVector<mlir::Value> forLoop(mlir::Value lb, mlir::Value ub,
                                         mlir::Value step,
                                         mlir::ValueRange init, LoopBody body);
  using Branch = llvm::function_ref<llvm::SmallVector<mlir::Value>()>;
  llvm::SmallVector<mlir::Value> ifElse(mlir::Value cond, mlir::TypeRange types,
                                        Branch then, Branch otherwise);
  void ifThen(mlir::Value cond, llvm::function_ref<void()> then);
};

} // namespace mtc

#endif // MTC_PASSES_EMIT_GPUBUILDER_H
