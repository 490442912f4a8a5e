//===- mtc.cpp - The mtc command line -------------------------------------===//
//
//   mtc compile FILE [-o DIR] [--dump-dir DIR] [--emit=STAGE] [--arch sm_90]
//   mtc run FILE [--check] [--seed N]
//   mtc tune FILE / mtc bench FILE [--json]
//
// Exit codes: 0 success; 1 the user's input is wrong (a located diagnostic,
// nothing written); 2 the environment or mtc failed (no driver, out of
// memory, a JIT or internal error), with a message saying which.
//
//===----------------------------------------------------------------------===//
#include "compiler/Autotune.h"
#include "compiler/Compiler.h"
#include "compiler/Diagnostics.h"
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

#include <csignal>
#include <fmt/format.h>

using namespace mlir;
using namespace mtc;
namespace cl = llvm::cl;

namespace {

enum ExitCode : int { kSuccess = 0, kUserError = 1, kInternalError = 2 };

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

cl::SubCommand compileCmd("compile",
                          "Compile graph files to PTX and kernel manifests");
cl::SubCommand runCmd("run", "Compile and run graphs on the GPU");
cl::SubCommand tuneCmd("tune", "Autotune every kernel's schedule on the GPU "
                               "(coordinate descent; results cached)");
cl::SubCommand benchCmd("bench",
                        "Time every kernel on the GPU with cold L2 and compare "
                        "with the streaming-read ceiling");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<graph file>"),
                               cl::Required, cl::sub(compileCmd),
                               cl::sub(runCmd), cl::sub(benchCmd),
                               cl::sub(tuneCmd));
cl::opt<std::string> outDir("o", cl::desc("Output folder (default mtc-out)"),
                            cl::value_desc("dir"), cl::init("mtc-out"),
                            cl::sub(compileCmd));
cl::opt<std::string> dumpDir("dump-dir",
                             cl::desc("Also write every stage of every graph "
                                      "there"),
                             cl::value_desc("dir"), cl::sub(compileCmd));
cl::opt<std::string>
    emitStage("emit",
              cl::desc("Print one stage to stdout instead of writing files: "
                       "graph, kernel, nvvm, llvm-dialect, llvm, ptx, "
                       "manifest"),
              cl::value_desc("stage"), cl::sub(compileCmd));
cl::opt<std::string> arch("arch",
                          cl::desc("GPU architecture (sm_80, sm_89, "
                                   "sm_90)"),
                          cl::init("sm_90"), cl::sub(compileCmd),
                          cl::sub(runCmd), cl::sub(benchCmd), cl::sub(tuneCmd));
cl::list<std::string> graphNames("graph",
                                 cl::desc("Only this graph (repeatable)"),
                                 cl::value_desc("name"), cl::sub(compileCmd),
                                 cl::sub(runCmd), cl::sub(benchCmd),
                                 cl::sub(tuneCmd));
cl::list<std::string> binds("bind",
                            cl::desc("Value of a symbolic dimension: M=4"),
                            cl::value_desc("NAME=N"), cl::CommaSeparated,
                            cl::sub(compileCmd), cl::sub(runCmd),
                            cl::sub(benchCmd), cl::sub(tuneCmd));
cl::opt<bool> noFastDequant(
    "no-fast-dequant",
    cl::desc("Convert int8 with cvt instructions instead of byte permutes"),
    cl::sub(compileCmd), cl::sub(runCmd), cl::sub(benchCmd), cl::sub(tuneCmd));
cl::list<std::string> scheduleFlags(
    "schedule",
    cl::desc("Use this schedule for kernel K instead of the heuristic one, "
             "e.g. --schedule '0=simt w8 r1 kw4 v16 u2 mt1 sk2' (repeatable)"),
    cl::value_desc("K=SCHEDULE"), cl::sub(compileCmd), cl::sub(runCmd),
    cl::sub(benchCmd));
cl::opt<bool> check("check",
                    cl::desc("Compare every output with the fp64 reference "
                             "interpreter"),
                    cl::sub(runCmd));
cl::opt<uint64_t> seed("seed", cl::desc("Seed of the random inputs"),
                       cl::init(0), cl::sub(runCmd), cl::sub(benchCmd),
                       cl::sub(tuneCmd));
cl::opt<bool> jsonOutput("json", cl::desc("Print the results as JSON"),
                         cl::sub(benchCmd), cl::sub(tuneCmd));
cl::opt<bool> tuneFlag("tune",
                       cl::desc("Use autotuned schedules: from the cache, or "
                                "tuned now on the GPU"),
                       cl::sub(compileCmd), cl::sub(runCmd), cl::sub(benchCmd));
cl::opt<bool> forceTune("force",
                        cl::desc("Tune again even where the cache has a "
                                 "result"),
                        cl::sub(tuneCmd));
cl::opt<unsigned> maxProbes(
    "max-probes",
    cl::desc("Compile and measure at most this many schedules per kernel "
             "when tuning (illegal ones do not count; a cached result is "
             "reused whatever budget found it, --force tunes again)"),
    cl::init(150), cl::value_desc("n"), cl::sub(tuneCmd), cl::sub(compileCmd),
    cl::sub(runCmd), cl::sub(benchCmd));
cl::opt<bool> verbose("verbose", cl::desc("Print every probe of the search"),
                      cl::sub(tuneCmd), cl::sub(compileCmd), cl::sub(runCmd),
                      cl::sub(benchCmd));
cl::opt<std::string>
    cacheDir("cache-dir",
             cl::desc("Tuning cache folder (default $MTC_CACHE_DIR, else "
                      "~/.cache/mtc)"),
             cl::value_desc("dir"), cl::sub(tuneCmd), cl::sub(compileCmd),
             cl::sub(runCmd), cl::sub(benchCmd));
cl::opt<unsigned> replays("replays", cl::desc("Timed CUDA-graph replays"),
                          cl::init(15), cl::sub(benchCmd));
cl::opt<int64_t> batch(
    "batch",
    cl::desc("With --bind NAME=V1,V2,...: run at this value of the symbol, "
             "on the smallest bucket >= it (inputs zero-padded)"),
    cl::init(0), cl::sub(runCmd));
cl::opt<double> tolerance("tol",
                          cl::desc("Largest accepted error relative to the "
                                   "largest reference magnitude"),
                          cl::init(1e-2), cl::sub(runCmd));

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

int fail(int code, const llvm::Twine &msg) {
  llvm::outs().flush();
  llvm::errs() << "mtc: error: " << msg << "\n";
  return code;
}

/// Input errors are the user's (exit 1), reported ones too; everything else
/// is the environment's or mtc's (exit 2).
int failWith(llvm::Error err) {
  if (err.isA<ReportedError>()) {
    // Located diagnostics said it all.
    llvm::consumeError(std::move(err));
    return kUserError;
  }
  int code = err.isA<InputError>() ? kUserError : kInternalError;
  return fail(code, llvm::toString(std::move(err)));
}

/// The command's graphs (compiler/Targets.h) from the flags, with the
/// --schedule flags and the GPU, opened when something has to run.
struct Input {
  TargetSet set{llvm::errs()};
  std::map<unsigned, kernel::ScheduleParams> schedules;
  LazyDevice device;

  using Target = TargetSet::Target;
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
    o.arch = arch;
    o.fastDequant = !noFastDequant;
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

std::string kernelList(const Manifest &m) {
  std::string s;
  for (const KernelInfo &k : m.kernels) {
    // Long fused chains are summarised: the first and last nodes.
    std::vector<std::string> shown = k.nodes;
    if (shown.size() > 8) {
      size_t more = shown.size() - 6;
      shown.erase(shown.begin() + 3, shown.end() - 3);
      shown.insert(shown.begin() + 3, fmt::format("... {} more ...", more));
    }
    s += fmt::format("\n  {} [{}]: {}", k.name, k.schedule,
                     llvm::join(shown, ", "));
  }
  return s;
}

//===----------------------------------------------------------------------===//
// mtc compile
//===----------------------------------------------------------------------===//

/// Compiles every selected graph; returns an exit code on failure.
std::optional<int> compileAll(Input &in, std::vector<CompiledGraph> &out) {
  if (!isSupportedArch(arch))
    return fail(kUserError, "unsupported --arch '" + arch +
                                "' (supported: " + kSupportedArchs + ")");
  for (const Input::Target &t : in.targets()) {
    llvm::Expected<CompileOptions> o = in.optionsFor(t, tuneFlag);
    if (!o)
      return failWith(o.takeError());
    llvm::Expected<CompiledGraph> c = compileGraph(t.graph, *o);
    if (!c)
      return failWith(c.takeError());
    if (verbose && c->ptxFromCache)
      llvm::errs() << "mtc: " << c->name << ": PTX from the cache\n";
    out.push_back(std::move(*c));
  }
  return std::nullopt;
}

int compileMain() {
  if (!isSupportedArch(arch))
    return fail(kUserError, "unsupported --arch '" + arch +
                                "' (supported: " + kSupportedArchs + ")");
  static const char *stages[] = {"graph", "kernel", "nvvm",    "llvm-dialect",
                                 "llvm",  "ptx",    "manifest"};
  if (!emitStage.empty() && !llvm::is_contained(stages, emitStage))
    return fail(kUserError, "unknown --emit stage '" + emitStage +
                                "' (graph, kernel, nvvm, llvm-dialect, llvm, "
                                "ptx, manifest)");
  Input in;
  if (std::optional<int> rc = in.load(inputFile))
    return *rc;

  std::vector<CompiledGraph> compiled;
  if (std::optional<int> rc = compileAll(in, compiled))
    return *rc;

  if (!emitStage.empty()) {
    unsigned index = llvm::find(stages, emitStage) - std::begin(stages);
    for (const CompiledGraph &c : compiled) {
      if (emitStage == "manifest")
        llvm::outs() << llvm::formatv("{0:2}", c.manifest.toJSON()) << "\n";
      else
        llvm::outs() << c.stages[index].text;
    }
    return kSuccess;
  }

  // Everything compiled: now write, each file complete or not at all.
  OutputLayout layout;
  layout.outDir = outDir;
  layout.dumpDir = dumpDir;
  layout.source = inputFile;
  layout.bucketSymbol = in.bindings().bucketSymbol;
  std::vector<int64_t> buckets;
  for (const Input::Target &t : in.targets())
    buckets.push_back(t.bucket);
  if (llvm::Error e = writeCompileOutputs(compiled, buckets, layout))
    return fail(kInternalError, llvm::toString(std::move(e)));
  for (const CompiledGraph &c : compiled)
    llvm::outs() << fmt::format(
        "{}: {} kernel{} -> {}{}\n", c.name, c.manifest.kernels.size(),
        c.manifest.kernels.size() == 1 ? "" : "s",
        joinPath(outDir, c.name + ".ptx"), kernelList(c.manifest));
  return kSuccess;
}

//===----------------------------------------------------------------------===//
// Running on the GPU
//===----------------------------------------------------------------------===//

/// Runs `c` on `device` with seeded random inputs of `graph`'s shapes (zero-
/// padded to the compiled shapes when `graph` is a smaller bucket value),
/// optionally checking against the fp64 reference of `graph`. Returns false
/// on a mismatch; errors are the environment's.
llvm::Expected<bool> runOne(Device &device, graph::FuncOp graph,
                            const CompiledGraph &c, llvm::StringRef label) {
  auto exec = Executor::create(device, c.manifest, c.ptx);
  if (!exec)
    return exec.takeError();
  llvm::Expected<GraphRun> run = runOnRandomInputs(
      **exec, seed, argumentShapes(graph), resultShapes(graph));
  if (!run)
    return run.takeError();
  llvm::outs() << fmt::format(
      "{}: ran {} kernel{} on {}\n", label, c.manifest.kernels.size(),
      c.manifest.kernels.size() == 1 ? "" : "s", device.name());
  if (!check)
    return true;
  llvm::Expected<std::vector<OutputCheck>> checks =
      checkOutputs(graph, *run, c.manifest.outputs, tolerance);
  if (!checks)
    return checks.takeError();
  bool allPassed = true;
  for (const OutputCheck &oc : *checks) {
    const Comparison &cmp = oc.comparison;
    allPassed &= oc.passed;
    llvm::outs() << fmt::format(
        "  {}: max rel err {:.3e} (l2 {:.3e}, max |ref| {:.3e}, "
        "non-finite {}) {} (tol {:.0e})\n",
        oc.name, cmp.maxRelErr, cmp.l2RelErr, cmp.maxAbsRef, cmp.nonFinite,
        oc.passed ? "ok" : "MISMATCH", tolerance.getValue());
  }
  return allPassed;
}

int runMain() {
  Input in;
  if (std::optional<int> rc = in.load(inputFile))
    return *rc;
  const std::string &symbol = in.bindings().bucketSymbol;
  const std::vector<int64_t> &values = in.bindings().bucketValues;
  if (batch && symbol.empty())
    return fail(kUserError, "--batch needs --bind with several values of one "
                            "symbol, e.g. --bind M=1,2,4,8");
  if (batch && batch > values.back())
    return fail(kUserError, "--batch " + std::to_string(batch) +
                                " exceeds the largest bucket " + symbol + "=" +
                                std::to_string(values.back()));
  std::vector<CompiledGraph> compiled;
  if (std::optional<int> rc = compileAll(in, compiled))
    return *rc;
  llvm::Expected<Device &> device = in.device.get();
  if (!device)
    return failWith(device.takeError());

  bool allPassed = true;
  if (!batch) {
    for (auto [t, c] : llvm::zip(in.targets(), compiled)) {
      llvm::Expected<bool> ok = runOne(*device, t.graph, c, c.name);
      if (!ok)
        return failWith(ok.takeError());
      allPassed &= *ok;
    }
  } else {
    // Dispatch: the smallest bucket >= the runtime value, inputs padded.
    DispatchManifest d;
    d.symbol = symbol;
    for (int64_t v : values)
      d.buckets.push_back({v, ""});
    std::optional<size_t> b = d.select(batch);
    if (!b)
      return fail(kUserError, "--batch " + std::to_string(batch) +
                                  " exceeds the largest bucket " + symbol +
                                  "=" + std::to_string(values.back()));
    int64_t bucket = values[*b];
    OwningOpRef<ModuleOp> actual = in.set.parseAt(batch);
    if (!actual)
      return kUserError;
    for (auto [t, c] : llvm::zip(in.targets(), compiled)) {
      if (t.bucket != bucket)
        continue;
      auto graph = actual->lookupSymbol<graph::FuncOp>(t.graph.getSymName());
      std::string label =
          fmt::format("{} ({}={} -> bucket {}={})", t.graph.getSymName().str(),
                      symbol, int64_t(batch), symbol, bucket);
      llvm::Expected<bool> ok = runOne(*device, graph, c, label);
      if (!ok)
        return failWith(ok.takeError());
      allPassed &= *ok;
    }
  }
  if (!allPassed)
    return fail(kUserError, "outputs differ from the fp64 reference");
  return kSuccess;
}

//===----------------------------------------------------------------------===//
// mtc bench
//===----------------------------------------------------------------------===//

int benchMain() {
  Input in;
  if (std::optional<int> rc = in.load(inputFile))
    return *rc;
  std::vector<CompiledGraph> compiled;
  if (std::optional<int> rc = compileAll(in, compiled))
    return *rc;
  llvm::Expected<Device &> device = in.device.get();
  if (!device)
    return failWith(device.takeError());
  llvm::Expected<double> ceiling = measureReadBandwidth(*device);
  if (!ceiling)
    return failWith(ceiling.takeError());
  double ceilingGBs = *ceiling / 1e9;
  // The same read kernel over 4 KiB: the harness's floor for any kernel
  // (launch gap in a CUDA graph plus one full grid doing almost nothing).
  llvm::Expected<double> tiny = measureReadBandwidth(*device, 4096);
  if (!tiny)
    return failWith(tiny.takeError());
  double launchFloorUs = 4096 / *tiny * 1e6;

  llvm::json::Array graphs;
  if (!jsonOutput)
    llvm::outs() << fmt::format("{}, driver {}, streaming-read ceiling "
                                "{:.0f} GB/s, launch floor {:.2f} us "
                                "(measured now)\n",
                                device->name(), device->driverVersionString(),
                                ceilingGBs, launchFloorUs);
  for (const CompiledGraph &c : compiled) {
    auto exec = Executor::create(*device, c.manifest, c.ptx);
    if (!exec)
      return failWith(exec.takeError());
    if (llvm::Error e = setInputs(**exec, randomInputs(c.manifest, seed)))
      return failWith(std::move(e));
    if (!jsonOutput)
      llvm::outs() << fmt::format("{}\n  {:<22} {:<32} {:>9} {:>8} {:>7} "
                                  "{:>8}\n",
                                  c.name, "kernel", "schedule", "median us",
                                  "GB/s", "% ceil", "TFLOP/s");
    llvm::json::Array kernels;
    for (auto [k, info] : llvm::enumerate(c.manifest.kernels)) {
      TimingOptions opts;
      opts.kernel = k;
      opts.replays = replays;
      llvm::Expected<Timing> t = (*exec)->time(opts);
      if (!t)
        return failWith(t.takeError());
      double us = t->medianMicros;
      double gbs = info.minBytes / (us * 1e-6) / 1e9;
      double tflops = info.flops / (us * 1e-6) / 1e12;
      const FunctionAttributes &attrs = (*exec)->kernelAttributes(k);
      if (!jsonOutput)
        llvm::outs() << fmt::format(
            "  {:<22} {:<32} {:>9.2f} {:>8.0f} {:>7.1f} {:>8.2f}\n", info.name,
            info.schedule, us, gbs, 100 * gbs / ceilingGBs, tflops);
      kernels.push_back(
          llvm::json::Object{{"name", info.name},
                             {"nodes", llvm::json::Array(info.nodes)},
                             {"schedule", info.schedule},
                             {"median_us", us},
                             {"min_us", t->minMicros},
                             {"max_us", t->maxMicros},
                             {"bytes", info.minBytes},
                             {"flops", info.flops},
                             {"gbs", gbs},
                             {"pct_of_read_ceiling", 100 * gbs / ceilingGBs},
                             {"tflops", tflops},
                             {"registers", attrs.registers},
                             {"local_bytes", attrs.localBytes},
                             {"rotated_copies", t->copies},
                             {"footprint_bytes", t->footprintBytes}});
    }
    TimingOptions whole;
    whole.replays = replays;
    llvm::Expected<Timing> t = (*exec)->time(whole);
    if (!t)
      return failWith(t.takeError());
    if (!jsonOutput)
      llvm::outs() << fmt::format("  {:<55} {:>9.2f}\n", "whole graph",
                                  t->medianMicros);
    graphs.push_back(llvm::json::Object{{"graph", c.name},
                                        {"kernels", std::move(kernels)},
                                        {"graph_median_us", t->medianMicros}});
  }
  if (jsonOutput)
    llvm::outs() << llvm::formatv("{0:2}",
                                  llvm::json::Value(llvm::json::Object{
                                      {"device", device->name()},
                                      {"driver", device->driverVersionString()},
                                      {"read_ceiling_gbs", ceilingGBs},
                                      {"launch_floor_us", launchFloorUs},
                                      {"graphs", std::move(graphs)}}))
                 << "\n";
  return kSuccess;
}

//===----------------------------------------------------------------------===//
// mtc tune
//===----------------------------------------------------------------------===//

int tuneMain() {
  Input in;
  if (std::optional<int> rc = in.load(inputFile))
    return *rc;
  if (!isSupportedArch(arch))
    return fail(kUserError, "unsupported --arch '" + arch +
                                "' (supported: " + kSupportedArchs + ")");
  llvm::json::Array graphs;
  for (const Input::Target &t : in.targets()) {
    std::vector<KernelTuning> tuned;
    llvm::Expected<CompileOptions> o = in.optionsFor(t, true, &tuned);
    if (!o)
      return failWith(o.takeError());
    llvm::json::Array kernels;
    for (const KernelTuning &k : tuned) {
      double speedup = k.micros > 0 ? k.heuristicMicros / k.micros : 0;
      if (!jsonOutput)
        llvm::outs() << fmt::format(
            "{}: {} {:.2f} us (heuristic {} {:.2f} us, {:.2f}x), {} probes, "
            "{:.1f} s{}\n",
            k.name, k.schedule.str(), k.micros, k.heuristic.str(),
            k.heuristicMicros, speedup, k.probes, k.seconds,
            k.fromCache ? ", cached" : "");
      kernels.push_back(llvm::json::Object{{"name", k.name},
                                           {"schedule", k.schedule.str()},
                                           {"us", k.micros},
                                           {"heuristic", k.heuristic.str()},
                                           {"heuristic_us", k.heuristicMicros},
                                           {"probes", int64_t(k.probes)},
                                           {"tune_seconds", k.seconds},
                                           {"from_cache", k.fromCache}});
    }
    graphs.push_back(
        llvm::json::Object{{"graph", t.name}, {"kernels", std::move(kernels)}});
  }
  if (jsonOutput)
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                               {"graphs", std::move(graphs)}}))
                 << "\n";
  return kSuccess;
}

} // namespace

int main(int argc, char **argv) {
  llvm::sys::PrintStackTraceOnErrorSignal(argv[0]);
  // A full disk or a file-size limit must fail the write (EFBIG), which mtc
  // reports, instead of killing the process with half-written files.
  signal(SIGXFSZ, SIG_IGN);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "mtc " << MTC_VERSION << " (LLVM/MLIR " << MTC_LLVM_VERSION_STRING
       << ")\n";
  });
  cl::HideUnrelatedOptions({});
  cl::ParseCommandLineOptions(argc, argv,
                              "mtc: graph files to fused GPU kernels\n");
  if (maxProbes == 0) {
    llvm::errs() << "mtc: error: --max-probes must be at least 1\n";
    return kUserError;
  }
  int rc = -1;
  if (compileCmd)
    rc = compileMain();
  else if (runCmd)
    rc = runMain();
  else if (benchCmd)
    rc = benchMain();
  else if (tuneCmd)
    rc = tuneMain();
  if (rc >= 0) {
    // A full disk or a closed pipe on stdout is the environment's failure,
    // reported like any other (LLVM would otherwise abort on exit).
    llvm::outs().flush();
    if (std::error_code ec = llvm::outs().error()) {
      llvm::outs().clear_error();
      llvm::errs() << "mtc: error: cannot write to standard output: "
                   << ec.message() << "\n";
      return kInternalError;
    }
    return rc;
  }
  llvm::errs() << "mtc: error: expected a command: compile, run, tune, bench "
                  "(see mtc --help)\n";
  return kUserError;
}
