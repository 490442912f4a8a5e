//===- Prober.cpp - Timing one kernel under candidate schedules -----------===//
#include "compiler/Prober.h"

#include "runtime/GraphRunner.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"

#include <fmt/format.h>

using namespace mtc::kernel;

namespace mtc {

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
  llvm::SmallString<256> path(cacheDir.empty() ? TuneCache::defaultDir()
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
} // namespace

Prober::Prober(graph::FuncOp func, const CompileOptions &base, unsigned index,
               Device &device, const AutotuneOptions &tuning,
               llvm::raw_ostream &log)
    : func(func), base(base), index(index), device(device), tuning(tuning),
      log(log), lockPath(gpuLockPath(tuning.cacheDir)) {}

llvm::Expected<double> Prober::measure(const ScheduleParams &s,
                                       unsigned replays) {
  std::string key = s.str();
  auto it = loaded.find(key);
  bool fresh = it == loaded.end();
  if (fresh) {
    llvm::Expected<std::unique_ptr<Executor>> exec = load(s);
    if (!exec)
      return exec.takeError();
    it = loaded.try_emplace(key, std::move(*exec)).first;
  }
  GpuTurn turn(lockPath, log);
  if (fresh) {
    if (llvm::Error e = setInputsAndCheck(*it->second, s)) {
      loaded.erase(it);
      return std::move(e);
    }
    if (startKey.empty())
      startKey = key;
  }
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

void Prober::keepOnly(const ScheduleParams &best) {
  std::string bestKey = best.str();
  for (auto it = loaded.begin(); it != loaded.end();) {
    auto next = std::next(it);
    if (it->first() != startKey && it->first() != bestKey)
      loaded.erase(it);
    it = next;
  }
}

llvm::Expected<std::unique_ptr<Executor>>
Prober::load(const ScheduleParams &s) {
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
  return std::move(*exec);
}

llvm::Error Prober::setInputsAndCheck(Executor &exec, const ScheduleParams &s) {
  for (auto [i, b] : llvm::enumerate(exec.manifest().inputs()))
    if (llvm::Error e = exec.setInput(b->name, inputs[i]))
      return e;
  return checkOutputs(exec, exec.manifest(), s);
}

llvm::Error Prober::checkOutputs(Executor &exec, const Manifest &m,
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

} // namespace mtc
