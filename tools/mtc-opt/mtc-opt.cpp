//===- mtc-opt.cpp - mtc's optimizer driver
//--------------------------------===//
//
// mlir-opt with mtc's dialects and passes: replays the pipeline pass by pass
// for lit tests (`--mtc-fuse`, `--mtc-pipeline`, ...).
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphDialect.h"
#include "dialects/Kernel/KernelDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mtc::graph::GraphDialect, mtc::kernel::KernelDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect, mlir::cf::ControlFlowDialect,
                  mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect>();
  mtc::registerMTCPasses();
  mtc::registerPipelines();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "mtc optimizer driver\n", registry));
}
