//===- Targets.h - The graphs a command compiles ----------------*- C++ -*-===//
//
// What the CLI's commands work on: the graphs of one file (all of them, or
// those named with --graph), each once per value of the symbol bound to
// several values (`--bind M=1,2,4`: one target per bucket), with the name of
// its output files ("g", or "g.M4" for a bucket).
//
//===----------------------------------------------------------------------===//
#ifndef MTC_COMPILER_TARGETS_H
#define MTC_COMPILER_TARGETS_H

#include "compiler/Diagnostics.h"
#include "compiler/Frontend.h"
#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mtc {

/// A failure of the user's input whose located diagnostics were already
/// printed: the CLI only exits with code 1.
class ReportedError : public llvm::ErrorInfo<ReportedError> {
public:
  static char ID;
  void log(llvm::raw_ostream &os) const override {
    os << "errors were reported";
  }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
};

/// Values of symbolic dimensions, from --bind NAME=N[,N...] flags.
struct Bindings {
  /// Symbols bound to one value.
  llvm::StringMap<int64_t> fixed;
  /// The symbol bound to several values (the buckets), or empty; its values
  /// ascending, without repeats.
  std::string bucketSymbol;
  std::vector<int64_t> bucketValues;

  /// The frontend's bindings with `bucket` for the bucketed symbol.
  FrontendOptions frontendFor(int64_t bucket) const;
  /// The same as sorted (name, value) pairs, for a manifest.
  std::vector<std::pair<std::string, int64_t>> at(int64_t bucket) const;
};

/// Parses --bind flags (repeatable; values after a comma belong to the name
/// before them: "M=1", "2" is M=1,2). Errors are InputErrors with the CLI's
/// messages ("--bind expects NAME=N[,N...], got '4'", ...).
llvm::Expected<Bindings> parseBindings(llvm::ArrayRef<std::string> flags);

/// A graph file, parsed once per bucket value, and its targets. Owns the
/// MLIRContext and the source; located diagnostics go to `diagnostics`.
class TargetSet {
public:
  struct Target {
    graph::FuncOp graph;
    std::string name;   ///< output file stem: "g", or "g.M4" for a bucket
    int64_t bucket = 0; ///< the bucketed symbol's value, 0 if none
  };

  explicit TargetSet(llvm::raw_ostream &diagnostics);
  ~TargetSet();

  /// Reads `path` ("-": standard input). "cannot read '<path>': <reason>"
  /// is an InputError.
  llvm::Error read(llvm::StringRef path);
  /// Parses what read() read at every value of `bindings`' bucketed symbol
  /// (once without one) and keeps every graph, or only those in `only` (each
  /// must exist: "no graph named 'x' in <path>"). Errors are InputErrors
  /// and ReportedErrors.
  llvm::Error parse(Bindings bindings, llvm::ArrayRef<std::string> only);
  /// The file parsed again at `value` of the bucketed symbol (mtc run
  /// --batch); null once errors were reported.
  mlir::OwningOpRef<mlir::ModuleOp> parseAt(int64_t value);

  const Bindings &bindings() const { return binds; }
  /// (Not const: ops are used through non-const handles.)
  std::vector<Target> &targets() { return list; }
  mlir::MLIRContext &context() { return ctx; }

private:
  mlir::MLIRContext ctx;
  llvm::SourceMgr sm;
  std::unique_ptr<ClippingDiagnosticHandler> handler;
  std::string path;
  Bindings binds;
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> modules;
  std::vector<Target> list;
};

} // namespace mtc

#endif // MTC_COMPILER_TARGETS_H
