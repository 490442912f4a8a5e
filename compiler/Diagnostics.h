//===- Diagnostics.h - Located diagnostics for graph files ------*- C++ -*-===//
//
// Prints MLIR diagnostics located in a SourceMgr buffer like MLIR's
// SourceMgrDiagnosticHandler (`file:line:col: error: message`, the source
// line, a caret), except that a source line longer than 160 characters or
// holding bytes that are not printable ASCII is shown as an escaped excerpt
// of at most 120 characters around the column. A megabyte-long line or a
// binary file never floods the terminal with raw bytes.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_COMPILER_DIAGNOSTICS_H
#define MTC_COMPILER_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/SourceMgr.h"

#include <string>

namespace mtc {

class ClippingDiagnosticHandler {
public:
  ClippingDiagnosticHandler(llvm::SourceMgr &sm, mlir::MLIRContext *ctx,
                            llvm::raw_ostream &os);
  ~ClippingDiagnosticHandler();

private:
  void emit(mlir::Location loc, const llvm::Twine &message,
            mlir::DiagnosticSeverity severity);

  llvm::SourceMgr &sm;
  llvm::raw_ostream &os;
  mlir::SourceMgrDiagnosticHandler plain;
  mlir::MLIRContext *ctx;
  mlir::DiagnosticEngine::HandlerID id;
};

/// An excerpt of `line` of at most `width` characters around column `col`
/// (1-based), non-printable bytes escaped as \xNN; `caretCol` is set to the
/// caret's 1-based column in the excerpt.
std::string clipLine(llvm::StringRef line, unsigned col, unsigned width,
                     unsigned &caretCol);

} // namespace mtc

#endif // MTC_COMPILER_DIAGNOSTICS_H
