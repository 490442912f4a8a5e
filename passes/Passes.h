//===- Passes.h - mtc passes ------------------------------------*- C++ -*-===//
#ifndef MTC_PASSES_PASSES_H
#define MTC_PASSES_PASSES_H

#include "dialects/Graph/GraphOps.h"
#include "dialects/Kernel/KernelOps.h"
#include "passes/Heuristics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mtc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Options of the whole pipeline (graph dialect to LLVM dialect).
struct PipelineOptions {
  bool fastDequant = true;
  /// What the heuristic schedules are sized for; with `target.wgmma` (sm_90a)
  /// they may use the wgmma kind.
  ScheduleTarget target;
  /// Kernels wait on and trigger dependent launch (sm_90+;
  /// EmitOptions::gridDependency).
  bool gridDependency = false;
  /// mtc-assign-schedules' remarks: each kernel's schedule and why.
  bool explainSchedules = false;
};

/// The pipeline's stages, in order (see Pipeline.cpp).
/// Graph dialect -> kernel ops (canonicalize, mtc-fuse); no schedules yet.
/// With `explain`, mtc-fuse emits its remarks (ExplainFusion.cpp).
void buildFusionPipeline(mlir::OpPassManager &pm, bool explain = false);
/// Kernel ops -> scheduled kernel ops (mtc-assign-schedules).
void buildSchedulePipeline(mlir::OpPassManager &pm,
                           const PipelineOptions &options = {});
/// Scheduled kernel ops -> llvm.func kernels using scf/arith/llvm/nvvm.
void buildNVVMPipeline(mlir::OpPassManager &pm,
                       const PipelineOptions &options = {});
/// -> LLVM dialect only (mtc-lower-to-llvm).
void buildLLVMPipeline(mlir::OpPassManager &pm);

/// Fusion + schedules.
void buildKernelPipeline(mlir::OpPassManager &pm);
/// NVVM + LLVM stages.
void buildLoweringPipeline(mlir::OpPassManager &pm,
                           const PipelineOptions &options = {});
/// Registers `--mtc-pipeline` (both halves) for mtc-opt.
void registerPipelines();

/// The name of kernel `index` of graph `graph`: "<graph>_k<index>".
std::string kernelName(llvm::StringRef graph, unsigned index);

} // namespace mtc

#endif // MTC_PASSES_PASSES_H
