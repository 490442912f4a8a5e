//===- LowerToLLVM.cpp - scf/arith/cf to the LLVM dialect
//------------------===//
//
// `mtc-lower-to-llvm`: the kernels written by mtc-lower-to-nvvm use scf for
// loops and branches and arith for scalar math; this lowers both (scf through
// cf) so that only llvm and nvvm ops remain for translation to LLVM IR.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mtc {
#define GEN_PASS_DEF_LOWERTOLLVM
#include "passes/Passes.h.inc"
} // namespace mtc

using namespace mlir;

namespace {
struct LowerToLLVM : mtc::impl::LowerToLLVMBase<LowerToLLVM> {
  using LowerToLLVMBase::LowerToLLVMBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    LowerToLLVMBase::getDependentDialects(registry);
    registry.insert<cf::ControlFlowDialect>();
  }

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ModuleOp module = getOperation();
    {
      RewritePatternSet patterns(ctx);
      populateSCFToControlFlowConversionPatterns(patterns);
      ConversionTarget target(*ctx);
      target.addIllegalDialect<scf::SCFDialect>();
      target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
      if (failed(applyPartialConversion(module, target, std::move(patterns))))
        return signalPassFailure();
    }
    {
      LLVMTypeConverter converter(ctx);
      RewritePatternSet patterns(ctx);
      arith::populateArithToLLVMConversionPatterns(converter, patterns);
      cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
      LLVMConversionTarget target(*ctx);
      target.addLegalDialect<NVVM::NVVMDialect>();
      target.addLegalOp<ModuleOp>();
      if (failed(applyFullConversion(module, target, std::move(patterns))))
        return signalPassFailure();
    }
    SmallVector<UnrealizedConversionCastOp> casts;
    module.walk([&](UnrealizedConversionCastOp op) { casts.push_back(op); });
    reconcileUnrealizedCasts(casts);
  }
};
} // namespace
