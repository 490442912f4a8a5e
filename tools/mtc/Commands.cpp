//===- Commands.cpp - mtc compile, run, bench and tune --------------------===//
//
// Each command's work and what it prints, on the flags of Cli.h.
//
//===----------------------------------------------------------------------===//
#include "Cli.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace mtc::cli {

//===----------------------------------------------------------------------===//
// mtc compile
//===----------------------------------------------------------------------===//

std::optional<int> Input::resolveTarget(bool onGpu) {
  if (!arch.empty() && !isSupportedArch(arch))
    return fail(kUserError, "unsupported --arch '" + arch +
                                "' (supported: " + supportedArchs() + ")");
  std::string spec =
      targetSpec.empty() && onGpu ? std::string("gpu") : targetSpec.getValue();
  if (spec == "gpu") {
    llvm::Expected<const DeviceIdentity &> id = device.identity(cacheDir);
    if (!id && !onGpu)
      return fail(kInternalError,
                  "--target gpu asks the GPU at hand (or name one: " +
                      knownTargetNames() +
                      "): " + llvm::toString(id.takeError()));
    if (!id)
      return failWith(id.takeError());
    llvm::Expected<std::string> gpuArch =
        archForComputeCapability(id->ccMajor, id->ccMinor);
    if (!gpuArch)
      return failWith(gpuArch.takeError());
    gpu.name = id->name;
    gpu.arch = *gpuArch;
    gpu.facts.numSMs = id->sms;
    gpu.facts.l2Bytes = id->l2Bytes;
    gpu.facts.maxSharedPerBlock = id->maxSharedPerBlockOptin;
    gpu.facts.memBandwidth = id->memBandwidth;
  } else if (!spec.empty()) {
    llvm::Expected<GpuTarget> t =
        parseTarget(spec, arch.empty() ? "sm_90" : StringRef(arch));
    if (!t)
      return failWith(t.takeError());
    gpu = std::move(*t);
  } else {
    gpu = defaultTargetFor(arch.empty() ? "sm_90" : StringRef(arch));
  }
  // --arch, else the target's (a named or the GPU's), else compile's sm_90.
  archUsed = !arch.empty()  ? arch.getValue()
             : spec.empty() ? std::string("sm_90")
                            : gpu.arch;
  return std::nullopt;
}

/// Compiles every selected graph; returns an exit code on failure.
std::optional<int> compileAll(Input &in, std::vector<CompiledGraph> &out) {
  for (const Input::Target &t : in.targets()) {
    llvm::Expected<CompileOptions> o = in.optionsFor(t, tuneFlag);
    if (!o)
      return failWith(o.takeError());
    // The remarks that follow belong to this graph (a bucket of --bind
    // has a name of its own, woq.M4).
    if (explainFusion || explainSchedule)
      llvm::errs() << "mtc: " << t.name << ": remarks\n";
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
  Input in;
  // compile --tune runs on the GPU: like tune, it sizes for that GPU.
  if (std::optional<int> rc = in.resolveTarget(/*onGpu=*/tuneFlag))
    return *rc;
  static const char *stages[] = {"graph", "kernel", "nvvm",    "llvm-dialect",
                                 "llvm",  "ptx",    "manifest"};
  if (!emitStage.empty() && !llvm::is_contained(stages, emitStage))
    return fail(kUserError,
                "unknown --emit stage '" + emitStage + "' (" +
                    llvm::join(std::begin(stages), std::end(stages), ", ") +
                    ")");
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
  llvm::outs() << in.targetLine();
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
  llvm::outs() << fmt::format("{}: ran {} kernel{} on {} ({})\n", label,
                              c.manifest.kernels.size(),
                              c.manifest.kernels.size() == 1 ? "" : "s",
                              device.name(), c.manifest.arch);
  if (!check)
    return true;
  std::optional<double> tol;
  if (tolerance.getNumOccurrences())
    tol = tolerance;
  llvm::Expected<std::vector<OutputCheck>> checks =
      checkOutputs(graph, *run, c.manifest, tol);
  if (!checks)
    return checks.takeError();
  bool allPassed = true;
  bool split = splitsK(c.manifest);
  for (const OutputCheck &oc : *checks) {
    const Comparison &cmp = oc.comparison;
    allPassed &= oc.passed;
    int64_t finite = 0;
    for (int64_t n : cmp.ulpHistogram)
      finite += n;
    std::string histogram;
    for (auto [i, n] : llvm::enumerate(cmp.ulpHistogram)) {
      histogram += i == 0 ? "" : ", ";
      histogram += i < kUlpBuckets.size()
                       ? fmt::format("<={:g}: ", kUlpBuckets[i])
                       : std::string("more: ");
      histogram +=
          n == 0 ? std::string("0")
                 : fmt::format("{:.4g}%", 100.0 * double(n) / double(finite));
    }
    llvm::outs() << fmt::format(
        "  {}: max err {:.3g} ulps (rel {:.3e}, l2 {:.3e}, max |ref| "
        "{:.3e}, non-finite {}) {} (tol {:g} ulps{})\n"
        "    ulps by element: {}\n",
        oc.name, cmp.maxUlps, cmp.maxRelErr, cmp.l2RelErr, cmp.maxAbsRef,
        cmp.nonFinite, oc.passed ? "ok" : "MISMATCH", oc.tolerance,
        split ? ", K split" : "", histogram);
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
  if (std::optional<int> rc = in.resolveTarget(/*onGpu=*/true))
    return *rc;
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
  if (std::optional<int> rc = in.resolveTarget(/*onGpu=*/true))
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
                                  "{:>8} {:>8}\n",
                                  c.name, "kernel", "schedule", "median us",
                                  "GB/s", "% ceil", "% probe", "TFLOP/s");
    llvm::json::Array kernels;
    for (auto [k, info] : llvm::enumerate(c.manifest.kernels)) {
      TimingOptions opts;
      opts.kernel = k;
      opts.replays = replays;
      llvm::Expected<Timing> t = (*exec)->time(opts);
      if (!t)
        return failWith(t.takeError());
      double us = t->medianMicros;
      // The same bytes through mtc's read kernel: what the layer's size
      // allows in this harness (launch gap, latency, ramp included).
      llvm::Expected<double> probeUs = measureReadTime(*device, info.minBytes);
      if (!probeUs)
        return failWith(probeUs.takeError());
      double gbs = info.minBytes / (us * 1e-6) / 1e9;
      double tflops = info.flops / (us * 1e-6) / 1e12;
      const FunctionAttributes &attrs = (*exec)->kernelAttributes(k);
      if (!jsonOutput)
        llvm::outs() << fmt::format(
            "  {:<22} {:<32} {:>9.2f} {:>8.0f} {:>7.1f} {:>8.1f} {:>8.2f}\n",
            info.name, info.schedule, us, gbs, 100 * gbs / ceilingGBs,
            100 * *probeUs / us, tflops);
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
                             {"read_probe_us", *probeUs},
                             {"pct_of_read_probe", 100 * *probeUs / us},
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
                                      {"arch", in.archUsed},
                                      {"target", in.gpu.describe()},
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
  if (std::optional<int> rc = in.resolveTarget(/*onGpu=*/true))
    return *rc;
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
            "{:.1f} s{}{}\n",
            k.name, k.schedule.str(), k.micros, k.heuristic.str(),
            k.heuristicMicros, speedup, k.probes, k.seconds,
            k.outOfTime ? fmt::format(" (stopped at the {:g} s budget)",
                                      double(tuneSeconds))
                        : "",
            k.fromCache ? ", cached" : "");
      kernels.push_back(llvm::json::Object{{"name", k.name},
                                           {"schedule", k.schedule.str()},
                                           {"us", k.micros},
                                           {"heuristic", k.heuristic.str()},
                                           {"heuristic_us", k.heuristicMicros},
                                           {"probes", int64_t(k.probes)},
                                           {"tune_seconds", k.seconds},
                                           {"out_of_time", k.outOfTime},
                                           {"from_cache", k.fromCache}});
    }
    graphs.push_back(
        llvm::json::Object{{"graph", t.name}, {"kernels", std::move(kernels)}});
  }
  if (jsonOutput)
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                               {"arch", in.archUsed},
                                               {"target", in.gpu.describe()},
                                               {"graphs", std::move(graphs)}}))
                 << "\n";
  else
    llvm::outs() << in.targetLine();
  return kSuccess;
}

} // namespace mtc::cli
