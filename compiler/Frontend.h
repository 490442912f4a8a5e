//===- Frontend.h - Graph files to the graph dialect ------------*- C++ -*-===//
//
// Parses .graph files (grammar: docs/graph-format.md) into a module of
// graph.func ops. Every error is reported through MLIR's diagnostic engine at
// a FileLineColLoc in the graph file, so a SourceMgrDiagnosticHandler prints
// `file:line:col: error: ...` with the source line and a caret.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_COMPILER_FRONTEND_H
#define MTC_COMPILER_FRONTEND_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SourceMgr.h"

#include <string>
#include <vector>

namespace mtc {

struct FrontendOptions {
  /// Values for symbolic dimensions: `x: bf16[M, 4096]` with {"M": 4}.
  llvm::StringMap<int64_t> bindings;
};

/// Parses the main buffer of `sm`. Returns null once errors were reported;
/// then nothing of the file should be written.
mlir::OwningOpRef<mlir::ModuleOp>
parseGraphSource(llvm::SourceMgr &sm, mlir::MLIRContext *ctx,
                 const FrontendOptions &options = {});

/// The symbolic dimension names a graph file uses, in order of first use
/// (empty for a fully static file, or if the file does not lex/parse; errors
/// are then reported by parseGraphSource).
std::vector<std::string> symbolicDims(llvm::SourceMgr &sm);

} // namespace mtc

#endif // MTC_COMPILER_FRONTEND_H
