//===- Pipeline.cpp - The mtc pass pipeline
//---------------------------------===//
//
// The one place that orders mtc's passes, as four stages:
//
//   graph  --fusion-->  kernel ops  --schedules-->  scheduled kernel ops
//          --nvvm-->    llvm.func kernels (scf/arith/llvm/nvvm)
//          --llvm-->    LLVM dialect only, ready for translation
//
// compiler/Compiler.cpp runs the stages one by one (dumping after each and
// applying tuned schedules between fusion and scheduling); `mtc-opt
// --mtc-pipeline` replays all of them.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace mtc {

void buildFusionPipeline(OpPassManager &pm, bool explain) {
  pm.addPass(createCanonicalizerPass());
  FuseKernelsOptions fuse;
  fuse.explain = explain;
  pm.nest<graph::FuncOp>().addPass(createFuseKernels(fuse));
}

void buildSchedulePipeline(OpPassManager &pm, const PipelineOptions &options) {
  AssignSchedulesOptions assign;
  assign.wgmma = options.target.wgmma;
  assign.numSMs = options.target.numSMs;
  assign.l2Bytes = options.target.l2Bytes;
  assign.maxSharedPerBlock = options.target.maxSharedPerBlock;
  assign.memBandwidth = options.target.memBandwidth;
  assign.explain = options.explainSchedules;
  pm.nest<graph::FuncOp>().addPass(createAssignSchedules(assign));
}

void buildNVVMPipeline(OpPassManager &pm, const PipelineOptions &options) {
  LowerToNVVMOptions nvvm;
  nvvm.fastDequant = options.fastDequant;
  nvvm.gridDependency = options.gridDependency;
  pm.addPass(createLowerToNVVM(nvvm));
  // Fold the emitter's redundant constants and index arithmetic so that the
  // GPU-level dump reads well (LLVM would clean it up later anyway).
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void buildLLVMPipeline(OpPassManager &pm) { pm.addPass(createLowerToLLVM()); }

void buildKernelPipeline(OpPassManager &pm) {
  buildFusionPipeline(pm);
  buildSchedulePipeline(pm);
}

void buildLoweringPipeline(OpPassManager &pm, const PipelineOptions &options) {
  buildNVVMPipeline(pm, options);
  buildLLVMPipeline(pm);
}

void registerPipelines() {
  PassPipelineRegistration<>(
      "mtc-kernel-pipeline",
      "graph dialect -> scheduled kernel ops (canonicalize, mtc-fuse, "
      "mtc-assign-schedules)",
      [](OpPassManager &pm) { buildKernelPipeline(pm); });
  PassPipelineRegistration<>(
      "mtc-pipeline",
      "graph dialect -> LLVM dialect GPU kernels: everything mtc runs before "
      "translation to LLVM IR",
      [](OpPassManager &pm) {
        buildKernelPipeline(pm);
        buildLoweringPipeline(pm);
      });
}

} // namespace mtc
