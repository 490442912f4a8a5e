//===- Input.h - Loading graph files and graph-dialect MLIR -----*- C++ -*-===//
#ifndef MTC_COMPILER_INPUT_H
#define MTC_COMPILER_INPUT_H

#include "compiler/Frontend.h"

namespace mtc {

/// Parses the main buffer of `sm` as a graph file, or as MLIR in mtc's graph
/// dialect when its name ends in ".mlir". Returns null once errors were
/// reported (they are the user's: exit code 1).
mlir::OwningOpRef<mlir::ModuleOp>
loadGraphs(llvm::SourceMgr &sm, mlir::MLIRContext *ctx,
           const FrontendOptions &options = {});

} // namespace mtc

#endif // MTC_COMPILER_INPUT_H
