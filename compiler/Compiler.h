//===- Compiler.h - Graphs to PTX and manifests -----------------*- C++ -*-===//
//
// The driver of the pipeline: for each graph, run the stages of
// passes/Pipeline.cpp (applying tuned schedules between fusion and
// scheduling), build the manifest from the scheduled kernel ops, translate to
// LLVM IR and emit PTX, keeping every stage's text for --dump-dir.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_COMPILER_COMPILER_H
#define MTC_COMPILER_COMPILER_H

#include "dialects/Graph/GraphOps.h"
#include "dialects/Kernel/Schedule.h"
#include "passes/Heuristics.h"
#include "runtime/Manifest.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace mtc {

struct CompileOptions {
  std::string arch = "sm_90";
  /// The GPU the heuristic schedules are sized for (compiler/GpuTarget.h);
  /// its `wgmma` is ignored: the arch decides.
  ScheduleTarget target;
  bool fastDequant = true;
  /// mtc-fuse's remarks: what each kernel fused, why values stay apart.
  bool explainFusion = false;
  /// mtc-assign-schedules' remarks: each kernel's schedule and the rules
  /// that chose it.
  bool explainSchedule = false;
  /// The graph file, for manifests and dump headers.
  std::string sourceName;
  /// File stem of the outputs ("<graph>", or "<graph>.M4" for a bucket);
  /// empty means the graph's name.
  std::string outputName;
  /// Bound symbolic dimensions, recorded in the manifest.
  std::vector<std::pair<std::string, int64_t>> bindings;
  /// Schedules replacing the heuristic ones: kernel index -> schedule.
  std::map<unsigned, kernel::ScheduleParams> schedules;
  /// Measured times of tuned kernels (µs), for the manifest and dumps.
  std::map<unsigned, double> tunedMicros;
  /// Keep the text of every stage (for --dump-dir and --emit); the tuner's
  /// probes turn it off.
  bool keepStages = true;
  /// Where to reuse and store compiled PTX (compiler/PtxCache.h); empty: no
  /// cache. Only used when the MLIR stages are not kept; a graph whose PTX
  /// comes from it has empty LLVM stages (5-llvm.ll).
  std::string ptxCacheDir;
};

struct Stage {
  std::string suffix; // file name suffix: "1-graph.mlir", ..., "6.ptx"
  std::string text;
};

struct CompiledGraph {
  std::string name;
  std::string ptx;
  /// The PTX came from CompileOptions::ptxCacheDir: no LLVM work was done.
  bool ptxFromCache = false;
  Manifest manifest;
  std::vector<Stage> stages;
};

/// A failure caused by the user's input or options (exit code 1), as opposed
/// to mtc's own failures (plain errors, exit code 2).
class InputError : public llvm::ErrorInfo<InputError> {
public:
  static char ID;
  explicit InputError(std::string message) : message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  std::string message;
};

/// Registers every dialect and translation the compiler uses.
void registerCompilerDialects(mlir::DialectRegistry &registry);

/// Runs fusion and scheduling on a copy of `func`; the returned module holds
/// the scheduled kernel-level graph.func. A schedule in `options` that does
/// not fit its kernel is an InputError; pass failures are internal errors.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildKernels(graph::FuncOp func, const CompileOptions &options);

/// Compiles one graph all the way to PTX. Apart from bad schedules in
/// `options` (InputError), errors here are mtc's: the graph was verified.
llvm::Expected<CompiledGraph> compileGraph(graph::FuncOp func,
                                           const CompileOptions &options);

/// The manifest of a scheduled kernel-level graph.func.
Manifest buildManifest(graph::FuncOp kernels, const CompileOptions &options);

/// Writes `contents` to `path` through a temporary file in the same folder
/// and a rename, so `path` is either absent, the old file, or complete.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef contents);

} // namespace mtc

#endif // MTC_COMPILER_COMPILER_H
