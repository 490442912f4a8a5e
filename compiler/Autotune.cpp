//===- Autotune.cpp - Tuning kernels on the GPU, through the cache
//---------===//
#include "compiler/Autotune.h"

#include "compiler/Ptx.h"
#include "compiler/Version.h"
#include "dialects/Kernel/KernelOps.h"
#include "passes/Heuristics.h"
#include "passes/Passes.h"
#include "runtime/GraphRunner.h"
#include "runtime/Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"

#include <chrono>
#include <fmt/format.h>

using namespace mlir;
using namespace mtc::kernel;

namespace mtc {

llvm::Expected<Device &> LazyDevice::get() {
  if (!device) {
    llvm::Expected<std::unique_ptr<Device>> d = Device::open();
    if (!d)
      return d.takeError();
    device = std::move(*d);
  }
  return *device;
}

/// What the kernel driver says about itself and its GPUs, plus the
/// environment that selects a device: "" if /proc has no NVIDIA driver.
static std::string driverFingerprint() {
  auto buf = llvm::MemoryBuffer::getFileAsStream("/proc/driver/nvidia/version");
  if (!buf)
    return "";
  std::string key = (*buf)->getBuffer().str();
  std::error_code ec;
  std::vector<std::string> gpus;
  for (llvm::sys::fs::directory_iterator it("/proc/driver/nvidia/gpus", ec),
       end;
       it != end && !ec; it.increment(ec))
    gpus.push_back(llvm::sys::path::filename(it->path()).str());
  std::sort(gpus.begin(), gpus.end());
  for (const std::string &g : gpus)
    key += "\ngpu " + g;
  for (const char *var :
       {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "MTC_CUDA_LIBRARY"})
    if (const char *v = getenv(var))
      key += std::string("\n") + var + "=" + v;
  return key;
}

llvm::Expected<const DeviceIdentity &>
LazyDevice::identity(llvm::StringRef cacheDir) {
  if (id)
    return *id;
  std::string fingerprint = driverFingerprint();
  SmallString<256> path;
  if (!fingerprint.empty()) {
    llvm::SHA256 sha;
    sha.update(fingerprint);
    path = cacheDir.empty() ? TuneCache::defaultDir() : cacheDir.str();
    llvm::sys::path::append(
        path,
        "device-" + llvm::toHex(sha.final(), true).substr(0, 16) + ".json");
    if (auto buf = llvm::MemoryBuffer::getFile(path)) {
      llvm::Expected<llvm::json::Value> v =
          llvm::json::parse((*buf)->getBuffer());
      const llvm::json::Object *o = v ? v->getAsObject() : nullptr;
      if (!v)
        llvm::consumeError(v.takeError());
      std::optional<int64_t> major, minor, sms, l2, smem, bw;
      if (o) {
        major = o->getInteger("cc_major"), minor = o->getInteger("cc_minor");
        sms = o->getInteger("sms"), l2 = o->getInteger("l2_bytes");
        smem = o->getInteger("max_shared_per_block_optin");
        bw = o->getInteger("mem_bandwidth");
      }
      // Files of older mtc versions lack the sizes: ask the driver again.
      if (o && o->getString("name") && o->getString("cc") &&
          o->getString("driver") && major && minor && sms && l2 && smem && bw) {
        id = DeviceIdentity{o->getString("name")->str(),
                            o->getString("cc")->str(),
                            o->getString("driver")->str(),
                            int(*major),
                            int(*minor),
                            int(*sms),
                            *l2,
                            *smem,
                            *bw};
        return *id;
      }
    }
  }
  llvm::Expected<DeviceIdentity> i = identifyDevice();
  if (!i)
    return i.takeError();
  id = *i;
  if (!path.empty()) {
    llvm::json::Object o{
        {"name", id->name},
        {"cc", id->computeCapability},
        {"driver", id->driver},
        {"cc_major", id->ccMajor},
        {"cc_minor", id->ccMinor},
        {"sms", id->sms},
        {"l2_bytes", id->l2Bytes},
        {"max_shared_per_block_optin", id->maxSharedPerBlockOptin},
        {"mem_bandwidth", id->memBandwidth}};
    llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path));
    // Best effort: without it the next run asks the driver again.
    llvm::consumeError(writeFileAtomically(
        path, llvm::formatv("{0}", llvm::json::Value(std::move(o))).str()));
  }
  return *id;
}

/// The kernel's computation as text: the op without its node names and
/// schedule, so identical layers in different graphs share a cache entry.
static std::string kernelFingerprintIR(Operation *op) {
  Operation *clone = op->clone();
  clone->removeAttr("schedule");
  clone->removeAttr("nodes");
  std::string s;
  llvm::raw_string_ostream os(s);
  clone->print(os, OpPrintingFlags().useLocalScope());
  clone->erase();
  return s;
}

namespace {
/// The GPU to this process while it times, for tuners running side by side
/// (the PyTorch package tunes a model's graphs in several processes): an
/// exclusive lock on a file of the cache folder named by the devices the
/// process sees. Compiling and loading probes happen outside it; what runs
/// on the GPU (the inputs' copies and the timed replays) inside. Where the
/// file cannot be opened (a read-only cache), nothing is locked. Waiting is
/// said once per process on `log`.
class GpuTurn {
public:
  GpuTurn(const std::string &path, llvm::raw_ostream &log) {
    if (path.empty() ||
        llvm::sys::fs::openFileForReadWrite(
            path, fd, llvm::sys::fs::CD_OpenAlways, llvm::sys::fs::OF_None)) {
      fd = -1;
      return;
    }
    if (!llvm::sys::fs::tryLockFile(fd))
      return;
    static bool said = false;
    if (!said) {
      log << "mtc: waiting for the GPU: another process is timing kernels "
             "on it ("
          << path << ")\n";
      log.flush();
      said = true;
    }
    if (llvm::sys::fs::lockFile(fd)) {
      llvm::sys::Process::SafelyCloseFileDescriptor(fd);
      fd = -1;
    }
  }
  ~GpuTurn() {
    if (fd < 0)
      return;
    (void)llvm::sys::fs::unlockFile(fd);
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  }
  GpuTurn(const GpuTurn &) = delete;
  GpuTurn &operator=(const GpuTurn &) = delete;

private:
  int fd = -1;
};

/// The lock file of GpuTurn in `cacheDir`: one per set of visible devices.
static std::string gpuLockPath(llvm::StringRef cacheDir) {
  std::string who = "device 0";
  for (const char *var : {"CUDA_VISIBLE_DEVICES", "MTC_CUDA_LIBRARY"})
    if (const char *v = getenv(var))
      who += std::string("\n") + var + "=" + v;
  llvm::SHA256 sha;
  sha.update(who);
  SmallString<256> path(cacheDir.empty() ? TuneCache::defaultDir()
                                         : cacheDir.str());
  if (llvm::sys::fs::create_directories(path))
    return "";
  llvm::sys::path::append(
      path, "gpu-" + llvm::toHex(sha.final(), true).substr(0, 16) + ".lock");
  return std::string(path);
}

/// The elements of `t` the tuner's output check compares, flat: all of them
/// up to 4M, else every s-th with s odd (a row-major output's rows are
/// walked over all their columns in turn), so that the check of an lm_head
/// at M = 512 (65M outputs) costs a bounded time and its reference no
/// more than 32 MB.
static HostTensor checkedElements(const HostTensor &t) {
  constexpr int64_t kMax = int64_t(1) << 22;
  int64_t n = t.numElements();
  if (n <= kMax)
    return t;
  int64_t stride = ((n + kMax - 1) / kMax) | 1;
  HostTensor s(t.dtype, {(n + stride - 1) / stride});
  for (int64_t i = 0, j = 0; i < n; i += stride, ++j)
    s.set(j, t.get(i));
  return s;
}

/// Times kernel `index` of a graph under candidate schedules. Each
/// schedule's outputs are checked first against those of the first schedule
/// it ran (the search's start, the heuristic's, whose kernels the GPU matrix
/// checks against the fp64 reference): a schedule whose kernel computes
/// something else is an error (the search skips it), never a time.
///
/// The graphs of the start and of the search's best stay loaded (keepOnly):
/// the final measurements of both reuse them instead of compiling, loading
/// and filling them again, two of the six loads of a kernel tuned with
/// four probes.
class Prober {
public:
  Prober(graph::FuncOp func, const CompileOptions &base, unsigned index,
         Device &device, const AutotuneOptions &tuning, llvm::raw_ostream &log)
      : func(func), base(base), index(index), device(device), tuning(tuning),
        log(log), lockPath(gpuLockPath(tuning.cacheDir)) {}

  llvm::Expected<double> measure(const ScheduleParams &s, unsigned replays) {
    std::string key = s.str();
    auto it = loaded.find(key);
    if (it == loaded.end()) {
      llvm::Expected<std::unique_ptr<Executor>> exec = load(s);
      if (!exec)
        return exec.takeError();
      it = loaded.try_emplace(key, std::move(*exec)).first;
      if (startKey.empty())
        startKey = key;
    }
    GpuTurn turn(lockPath, log);
    TimingOptions t;
    t.kernel = index;
    t.replays = replays;
    t.callsPerGraph = 20;
    t.warmup = 1;
    llvm::Expected<Timing> timing = it->second->time(t);
    if (!timing)
      return timing.takeError();
    return timing->medianMicros;
  }

  /// Unloads every graph but the start's and `best`'s.
  void keepOnly(const ScheduleParams &best) {
    std::string bestKey = best.str();
    for (auto it = loaded.begin(); it != loaded.end();) {
      auto next = std::next(it);
      if (it->first() != startKey && it->first() != bestKey)
        loaded.erase(it);
      it = next;
    }
  }

private:
  /// Compiles and loads the graph under `s`, sets its inputs and checks its
  /// outputs (checkOutputs). Where the device has no room for another
  /// graph, the kept ones are unloaded and it tries once more.
  llvm::Expected<std::unique_ptr<Executor>> load(const ScheduleParams &s) {
    CompileOptions o = base;
    o.schedules[index] = s;
    o.keepStages = false;
    llvm::Expected<CompiledGraph> c = compileGraph(func, o);
    if (!c)
      return c.takeError();
    auto exec = Executor::create(device, c->manifest, c->ptx);
    if (!exec && !loaded.empty()) {
      llvm::consumeError(exec.takeError());
      loaded.clear();
      exec = Executor::create(device, c->manifest, c->ptx);
    }
    if (!exec)
      return exec.takeError();
    const FunctionAttributes &attrs = (*exec)->kernelAttributes(index);
    if (attrs.localBytes > 0)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          fmt::format("spills ({} bytes of local memory per thread, {} "
                      "registers)",
                      attrs.localBytes, attrs.registers));
    if (inputs.empty())
      for (auto [i, b] : llvm::enumerate(c->manifest.inputs())) {
        inputs.emplace_back(b->dtype, b->shape);
        fillRandom(inputs.back(), tuning.seed * 1000003 + i, b->name);
      }
    GpuTurn turn(lockPath, log);
    for (auto [i, b] : llvm::enumerate(c->manifest.inputs()))
      if (llvm::Error e = (*exec)->setInput(b->name, inputs[i]))
        return std::move(e);
    if (llvm::Error e = checkOutputs(**exec, c->manifest, s))
      return std::move(e);
    return std::move(*exec);
  }

  /// Runs the graph once on poisoned outputs; the first time keeps its
  /// outputs as the reference, then compares with it. Either side may be
  /// defaultCheckUlps from the truth, so a schedule may differ from the
  /// reference by twice that; a wrong index or a lost part of a sum differs
  /// by far more, or leaves poison.
  llvm::Error checkOutputs(Executor &exec, const Manifest &m,
                           const ScheduleParams &s) {
    if (llvm::Error e = exec.poison())
      return e;
    if (llvm::Error e = exec.run())
      return e;
    bool split = splitsK(m);
    std::vector<HostTensor> got;
    for (const std::string &name : m.outputs) {
      llvm::Expected<HostTensor> t = exec.getOutput(name);
      if (!t)
        return t.takeError();
      got.push_back(checkedElements(*t));
    }
    if (reference.empty()) {
      for (const HostTensor &t : got) {
        RefTensor r{t.shape, std::vector<double>(size_t(t.numElements()))};
        for (int64_t i = 0; i < t.numElements(); ++i)
          r.data[size_t(i)] = t.get(i);
        reference.push_back(std::move(r));
      }
      referenceSplit = split;
      referenceSchedule = s.str();
      return llvm::Error::success();
    }
    for (auto [i, name] : llvm::enumerate(m.outputs)) {
      Comparison c = compare(got[i], reference[i]);
      double tol = 2 * defaultCheckUlps(got[i].dtype, split || referenceSplit);
      if (!c.passed(tol))
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            c.nonFinite
                ? fmt::format("wrong output: {} has {} elements not finite "
                              "where {} computed finite ones, or the other "
                              "way round",
                              name, c.nonFinite, referenceSchedule)
                : fmt::format("wrong output: {} is {:.0f} ulps of its scale "
                              "from what {} computed (at most {:g})",
                              name, c.maxUlps, referenceSchedule, tol));
    }
    return llvm::Error::success();
  }

  graph::FuncOp func;
  const CompileOptions &base;
  unsigned index;
  Device &device;
  const AutotuneOptions &tuning;
  llvm::raw_ostream &log;
  std::string lockPath;
  std::vector<HostTensor> inputs;
  /// The loaded graphs, by schedule, and the start's schedule.
  llvm::StringMap<std::unique_ptr<Executor>> loaded;
  std::string startKey;
  /// The first schedule's outputs, and whether it split K.
  std::vector<RefTensor> reference;
  bool referenceSplit = false;
  std::string referenceSchedule;
};
} // namespace

llvm::Expected<std::vector<KernelTuning>>
autotune(graph::FuncOp func, CompileOptions &options, LazyDevice &lazy,
         const AutotuneOptions &tuning, llvm::raw_ostream &log) {
  CompileOptions plain = options;
  plain.schedules.clear();
  llvm::Expected<OwningOpRef<ModuleOp>> kernels = buildKernels(func, plain);
  if (!kernels)
    return kernels.takeError();
  SmallVector<Operation *> ops;
  for (Operation &op : (*(*kernels)->getOps<graph::FuncOp>().begin())
                           .getBody()
                           .front()
                           .without_terminator())
    ops.push_back(&op);

  llvm::Expected<const DeviceIdentity &> id = lazy.identity(tuning.cacheDir);
  if (!id)
    return id.takeError();
  TuneCache cache(tuning.cacheDir);
  bool interactive = llvm::sys::Process::StandardErrIsDisplayed();
  std::vector<KernelTuning> results;
  ScheduleTarget target = options.target;
  target.wgmma = archHasWgmma(options.arch);
  // The search starts from the heuristic's schedule, which the target sizes.
  std::string codegen =
      std::string(options.fastDequant ? "fast-dequant" : "cvt-dequant") +
      llvm::formatv(" sms{0} l2 {1} smem {2} bw {3}", target.numSMs,
                    target.l2Bytes, target.maxSharedPerBlock,
                    target.memBandwidth)
          .str();

  for (auto [k, op] : llvm::enumerate(ops)) {
    KernelTuning kt;
    kt.kernel = k;
    kt.name = kernelName(func.getSymName(), k);
    kt.heuristic = defaultSchedule(op, target);
    TuneKey key{kernelFingerprintIR(op),
                id->name,
                id->computeCapability,
                id->driver,
                options.arch,
                codegen,
                std::string(MTC_VERSION) + "+" + MTC_BUILD_ID};
    std::vector<std::string> warnings;
    std::optional<TuneEntry> hit;
    if (!tuning.force)
      hit = cache.lookup(key, warnings);
    for (const std::string &w : warnings)
      log << "mtc: warning: " << w << "\n";
    // With --verbose, one line per kernel says what happens to it (the
    // Python package shows these as progress); the target name tells the
    // buckets of a --bind compile apart.
    std::string label = (options.outputName.empty() ? func.getSymName().str()
                                                    : options.outputName) +
                        " " + kt.name;
    if (hit && checkSchedule(op, hit->schedule).empty()) {
      if (tuning.verbose)
        log << "mtc: " << label << ": cached " << hit->schedule.str() << "\n";
      kt.schedule = hit->schedule;
      kt.micros = hit->micros;
      kt.heuristicMicros = hit->heuristicMicros;
      kt.probes = hit->probes;
      kt.seconds = hit->tuneSeconds;
      kt.fromCache = true;
    } else {
      llvm::Expected<Device &> device = lazy.get();
      if (!device)
        return device.takeError();
      if (tuning.verbose)
        log << "mtc: " << label << ": tuning from " << kt.heuristic.str()
            << "\n";
      auto start = std::chrono::steady_clock::now();
      Prober prober(func, options, k, *device, tuning, log);
      TuneOptions search = tuning.search;
      if (auto c = dyn_cast<ContractOp>(op)) {
        ContractShape shape = contractShape(c);
        search.m = shape.m;
        search.startForKind = [shape, target](ScheduleKind kind) {
          return defaultContractSchedule(shape, kind, target);
        };
      }
      search.onProbe = [&](const Probe &p) {
        std::string what =
            p.micros ? fmt::format("{:.2f} us", *p.micros) : "skipped";
        if (tuning.verbose) {
          log << fmt::format("  {} probe {:3}: {:<34} {}", kt.name, p.index,
                             p.schedule.str(), what);
          if (!p.micros)
            log << " (" << p.skipped << ")";
          log << fmt::format("  best {:.2f} us\n", p.bestMicros);
        } else if (interactive) {
          log << fmt::format("\r\x1b[Ktuning {}: probe {} [{}] {}, best "
                             "{:.2f} us [{}]",
                             kt.name, p.index, p.schedule.str(), what,
                             p.bestMicros, p.best.str());
        }
        log.flush();
        prober.keepOnly(p.best);
      };
      // The search leaves room for the two final measurements below, at
      // the pace of its slowest probe (M = 4096 on 128256 x 4096 took
      // 48.7 s against a 30 s budget when it did not).
      search.reserveProbes = 2;
      double slowestProbe = 0;
      auto seconds = [](auto since) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             since)
            .count();
      };
      llvm::Expected<TuneResult> r = coordinateDescent(
          kt.heuristic,
          [&](const ScheduleParams &s) { return checkSchedule(op, s); },
          [&](const ScheduleParams &s) {
            auto t0 = std::chrono::steady_clock::now();
            llvm::Expected<double> us = prober.measure(s, tuning.probeReplays);
            slowestProbe = std::max(slowestProbe, seconds(t0));
            return us;
          },
          search);
      if (interactive && !tuning.verbose)
        log << "\r\x1b[K";
      if (!r)
        return r.takeError();
      // Final, longer measurements of the winner and the heuristic start:
      // finalReplays each where, at the slowest probe's pace, both fit in
      // what is left of the budget; probeReplays (a probe's time) if not.
      unsigned replays = tuning.finalReplays;
      double left = search.budgetSeconds - seconds(start);
      if (search.budgetSeconds > 0 &&
          2 * slowestProbe * tuning.finalReplays / tuning.probeReplays > left)
        replays = tuning.probeReplays;
      llvm::Expected<double> best = prober.measure(r->best, replays);
      if (!best)
        return best.takeError();
      llvm::Expected<double> heur = r->best == kt.heuristic
                                        ? llvm::Expected<double>(*best)
                                        : prober.measure(kt.heuristic, replays);
      if (!heur)
        return heur.takeError();
      kt.schedule = r->best;
      kt.micros = *best;
      kt.heuristicMicros = *heur;
      kt.probes = r->path.size();
      kt.outOfTime = r->outOfTime;
      kt.seconds = seconds(start);
      TuneEntry entry{kt.schedule, kt.micros, kt.heuristicMicros, kt.probes,
                      kt.seconds};
      if (llvm::Error e = cache.store(key, entry))
        log << "mtc: warning: the tuning result is not cached: "
            << llvm::toString(std::move(e)) << "\n";
    }
    options.schedules[k] = kt.schedule;
    options.tunedMicros[k] = kt.micros;
    results.push_back(kt);
  }
  return results;
}

} // namespace mtc
