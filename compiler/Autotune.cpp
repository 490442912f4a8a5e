//===- Autotune.cpp - Tuning kernels on the GPU, through the cache --------===//
#include "compiler/Autotune.h"
#include "compiler/Prober.h"

#include "compiler/Ptx.h"
#include "compiler/Version.h"
#include "dialects/Kernel/KernelOps.h"
#include "passes/Heuristics.h"
#include "passes/Passes.h"

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
