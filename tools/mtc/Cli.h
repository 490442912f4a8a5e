//===- Cli.h - What the mtc commands share ----------------------*- C++ -*-===//
//
// The command-line flags (defined in mtc.cpp, which parses them and
// dispatches), the exit codes and error reporting, and the command's input:
// the graphs of the file, their targets and --schedule flags, and the GPU,
// opened only when something has to run. The commands themselves are in
// Commands.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_TOOLS_MTC_CLI_H
#define MTC_TOOLS_MTC_CLI_H

#include "compiler/Autotune.h"
#include "compiler/Compiler.h"
#include "compiler/Diagnostics.h"
#include "compiler/GpuTarget.h"
#include "compiler/Input.h"
#include "compiler/Output.h"
#include "compiler/Ptx.h"
#include "compiler/Targets.h"
#include "compiler/Version.h"
#include "runtime/GraphRunner.h"
#include "runtime/ReadBandwidth.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

namespace mtc::cli {

namespace cl = llvm::cl;
using llvm::StringRef;

enum ExitCode : int { kSuccess = 0, kUserError = 1, kInternalError = 2 };

// The flags (mtc.cpp).
extern cl::SubCommand compileCmd;
extern cl::SubCommand runCmd;
extern cl::SubCommand tuneCmd;
extern cl::SubCommand benchCmd;
extern cl::opt<std::string> inputFile;
extern cl::opt<std::string> outDir;
extern cl::opt<std::string> dumpDir;
extern cl::opt<std::string> emitStage;
extern cl::opt<std::string> arch;
extern cl::opt<std::string> targetSpec;
extern cl::list<std::string> graphNames;
extern cl::list<std::string> binds;
extern cl::opt<bool> noFastDequant;
extern cl::opt<bool> explainFusion;
extern cl::opt<bool> explainSchedule;
extern cl::list<std::string> scheduleFlags;
extern cl::opt<bool> check;
extern cl::opt<uint64_t> seed;
extern cl::opt<bool> jsonOutput;
extern cl::opt<bool> tuneFlag;
extern cl::opt<bool> forceTune;
extern cl::opt<unsigned> maxProbes;
extern cl::opt<double> tuneSeconds;
extern cl::opt<bool> verbose;
extern cl::opt<std::string> cacheDir;
extern cl::opt<unsigned> replays;
extern cl::opt<int64_t> batch;
extern cl::opt<double> tolerance;

/// Prints "mtc: error: MSG" and returns `code`.
int fail(int code, const llvm::Twine &msg);
/// Input errors are the user's (exit 1), reported ones too; everything else
/// is the environment's or mtc's (exit 2).
int failWith(llvm::Error err);
/// "\n  <kernel> [<schedule>]: <nodes>" for each kernel of `m`.
std::string kernelList(const Manifest &m);

/// The command's graphs (compiler/Targets.h) from the flags, with the
/// --schedule flags and the GPU, opened when something has to run.
struct Input {
  TargetSet set{llvm::errs()};
  std::map<unsigned, kernel::ScheduleParams> schedules;
  LazyDevice device;
  /// The arch compiled for and the GPU the schedules are sized for, from
  /// --arch and --target (resolveTarget).
  std::string archUsed = "sm_90";
  GpuTarget gpu = defaultTargetFor("sm_90");

  using Target = TargetSet::Target;

  /// Sets archUsed and gpu from the flags; `onGpu`: the command runs on the
  /// GPU, whose arch and facts are the defaults. Returns an exit code on
  /// failure (1: a bad flag; 2: no GPU to ask).
  std::optional<int> resolveTarget(bool onGpu);
  /// "target: sm_90a, schedules sized for NVIDIA H200 (132 SMs, ...)\n".
  std::string targetLine() const {
    return "target: " + archUsed + ", schedules sized for " + gpu.describe() +
           "\n";
  }
  std::vector<Target> &targets() { return set.targets(); }
  const Bindings &bindings() const { return set.bindings(); }

  /// Reads and parses `path`; returns an exit code on failure.
  std::optional<int> load(StringRef path) {
    llvm::Expected<Bindings> bindings = parseBindings(binds);
    if (!bindings)
      return failWith(bindings.takeError());
    if (llvm::Error e = set.read(path))
      return failWith(std::move(e));
    if (std::optional<int> rc = parseSchedules())
      return rc;
    if (llvm::Error e = set.parse(std::move(*bindings), graphNames))
      return failWith(std::move(e));
    return std::nullopt;
  }

  /// Parses --schedule flags into `schedules`; returns an exit code on error.
  std::optional<int> parseSchedules() {
    for (const std::string &flag : scheduleFlags) {
      auto [index, text] = StringRef(flag).split('=');
      unsigned k;
      if (index.getAsInteger(10, k) || text.empty())
        return fail(kUserError,
                    "--schedule expects K=SCHEDULE, got '" + flag + "'");
      std::string err;
      std::optional<kernel::ScheduleParams> s =
          kernel::ScheduleParams::parse(text, err);
      if (!s)
        return fail(kUserError, "--schedule '" + flag + "': " + err);
      schedules[k] = *s;
    }
    return std::nullopt;
  }

  AutotuneOptions autotuneOptions() const {
    AutotuneOptions a;
    a.force = forceTune;
    a.verbose = verbose;
    a.search.maxProbes = maxProbes;
    a.search.budgetSeconds = tuneSeconds;
    a.cacheDir = cacheDir;
    a.seed = seed;
    return a;
  }

  /// Options for compiling `t`: --schedule flags, and with --tune (or for
  /// `mtc tune`) the autotuned schedules.
  llvm::Expected<CompileOptions>
  optionsFor(const Target &t, bool tune,
             std::vector<KernelTuning> *out = nullptr) {
    CompileOptions o = compileOptions(t);
    if (!tune)
      return o;
    llvm::Expected<std::vector<KernelTuning>> tuned =
        autotune(t.graph, o, device, autotuneOptions(), llvm::errs());
    if (!tuned)
      return tuned.takeError();
    // Tuned graphs keep their PTX next to their schedules (set after
    // tuning: the tuner's probes are not worth keeping), unless the LLVM
    // stages are to be shown.
    if (dumpDir.empty() && emitStage != "llvm")
      o.ptxCacheDir = cacheDir.empty() ? TuneCache::defaultDir() : cacheDir;
    if (out)
      *out = std::move(*tuned);
    return o;
  }

  CompileOptions compileOptions(const Target &t) const {
    CompileOptions o;
    o.schedules = schedules;
    o.arch = archUsed;
    o.target = gpu.forArch(archUsed);
    o.fastDequant = !noFastDequant;
    o.explainFusion = explainFusion;
    o.explainSchedule = explainSchedule;
    o.sourceName = inputFile;
    o.outputName = t.name;
    o.bindings = bindings().at(t.bucket);
    // Printing the MLIR stages costs about as much as lowering them: only
    // --dump-dir and --emit of one of them read the text.
    o.keepStages =
        !dumpDir.empty() ||
        llvm::is_contained({"graph", "kernel", "nvvm", "llvm-dialect"},
                           StringRef(emitStage));
    return o;
  }
};

int compileMain();
int runMain();
int benchMain();
int tuneMain();

} // namespace mtc::cli

#endif // MTC_TOOLS_MTC_CLI_H
