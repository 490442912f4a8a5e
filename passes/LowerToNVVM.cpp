//===- LowerToNVVM.cpp - Kernel ops to llvm.func GPU kernels
//---------------===//
//
// `mtc-lower-to-nvvm`: each kernel op of each graph.func becomes an llvm.func
// kernel (the emitters of passes/emit/ write the code), named <graph>_k<index>
// in launch order, annotated with the graph nodes it computes and its launch
// geometry. The graph.funcs are then erased: what remains is device code.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "dialects/Kernel/KernelOps.h"
#include "dialects/Kernel/Schedule.h"
#include "passes/KernelEmitter.h"

namespace mtc {
#define GEN_PASS_DEF_LOWERTONVVM
#include "passes/Passes.h.inc"
} // namespace mtc

using namespace mlir;
using namespace mtc;
using namespace mtc::kernel;

std::string mtc::kernelName(StringRef graph, unsigned index) {
  return (graph + "_k" + Twine(index)).str();
}

namespace {
struct LowerToNVVM : mtc::impl::LowerToNVVMBase<LowerToNVVM> {
  using LowerToNVVMBase::LowerToNVVMBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<graph::FuncOp> funcs(module.getOps<graph::FuncOp>());
    OpBuilder b(&getContext());
    EmitOptions opts;
    opts.fastDequant = fastDequant;
    opts.gridDependency = gridDependency;
    for (graph::FuncOp func : funcs) {
      unsigned index = 0;
      for (Operation &op : func.getBody().front().without_terminator()) {
        if (!isKernelOp(&op)) {
          op.emitOpError("must be part of a kernel before lowering; run "
                         "mtc-fuse first");
          return signalPassFailure();
        }
        std::string name = kernelName(func.getSymName(), index++);
        b.setInsertionPoint(func);
        if (failed(emitKernel(b, &op, name, opts)))
          return signalPassFailure();
        auto kernel = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
        LaunchConfig l = launchConfig(
            &op, op.getAttrOfType<ScheduleAttr>("schedule").getParams());
        kernel->setAttr("mtc.nodes", op.getAttr("nodes"));
        kernel->setAttr("mtc.grid", b.getDenseI64ArrayAttr(l.grid));
        kernel->setAttr("mtc.block", b.getDenseI64ArrayAttr(l.block));
        kernel->setAttr(
            "mtc.schedule",
            b.getStringAttr(
                op.getAttrOfType<ScheduleAttr>("schedule").getParams().str()));
      }
    }
    for (graph::FuncOp func : funcs)
      func.erase();
  }
};
} // namespace
