//===- Input.cpp - Loading graph files and graph-dialect MLIR
//---------------===//
#include "compiler/Input.h"

#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;

namespace mtc {

OwningOpRef<ModuleOp> loadGraphs(llvm::SourceMgr &sm, MLIRContext *ctx,
                                 const FrontendOptions &options) {
  StringRef name =
      sm.getMemoryBuffer(sm.getMainFileID())->getBufferIdentifier();
  if (!name.ends_with(".mlir"))
    return parseGraphSource(sm, ctx, options);

  ctx->getOrLoadDialect<graph::GraphDialect>();
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sm, ctx);
  if (!module)
    return nullptr;
  bool any = false;
  for (Operation &op : module->getBody()->getOperations()) {
    if (!isa<graph::FuncOp>(op)) {
      emitError(op.getLoc())
          << "expected only graph.func ops at the top level, got '"
          << op.getName() << "'";
      return nullptr;
    }
    any = true;
  }
  if (!any) {
    emitError(FileLineColLoc::get(ctx, name, 1, 1)) << "no graph in file";
    return nullptr;
  }
  return module;
}

} // namespace mtc
