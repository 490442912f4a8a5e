//===- Autotune.h - Tuning kernels on the GPU, through the cache -*- C++
//-*-===//
//
// Glue between the search (Tuner.h), the cache (TuneCache.h), the compiler
// and the runtime: every probe is compiled through the real pipeline,
// JIT-loaded and timed on the GPU with cold L2; spilling schedules are
// skipped. Winners go to the cache and into the CompileOptions, so that the
// manifest and the dumps show them.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_COMPILER_AUTOTUNE_H
#define MTC_COMPILER_AUTOTUNE_H

#include "compiler/Compiler.h"
#include "compiler/TuneCache.h"
#include "compiler/Tuner.h"
#include "runtime/Executor.h"

#include "llvm/Support/raw_ostream.h"

#include <memory>

namespace mtc {

struct AutotuneOptions {
  bool force = false;   // tune even where the cache has an entry
  bool verbose = false; // print every probe
  TuneOptions search;
  std::string cacheDir; // empty: TuneCache::defaultDir()
  unsigned probeReplays = 5;
  unsigned finalReplays = 15;
  uint64_t seed = 0;
};

struct KernelTuning {
  unsigned kernel = 0;
  std::string name;
  kernel::ScheduleParams schedule, heuristic;
  double micros = 0, heuristicMicros = 0;
  bool fromCache = false;
  unsigned probes = 0;
  double seconds = 0;
  /// The search ended at its time budget (not cached: a cached result
  /// does not say).
  bool outOfTime = false;
};

/// Opens the GPU only when something has to be measured.
class LazyDevice {
public:
  llvm::Expected<Device &> get();
  /// The identity for cache keys. Initialising the CUDA driver to learn it
  /// costs about 0.3 s, so it is remembered in `cacheDir` under a key made of
  /// the kernel driver's /proc entries (version, GPUs) and the environment
  /// that picks the device; a new driver or GPU gives a new key.
  llvm::Expected<const DeviceIdentity &> identity(llvm::StringRef cacheDir);

private:
  std::unique_ptr<Device> device;
  std::optional<DeviceIdentity> id;
};

/// Finds a tuned schedule for every kernel of `func`: from the cache, or by
/// tuning on the GPU (then stored). Fills `options.schedules` and
/// `options.tunedMicros`. Progress and warnings go to `log`.
llvm::Expected<std::vector<KernelTuning>>
autotune(graph::FuncOp func, CompileOptions &options, LazyDevice &device,
         const AutotuneOptions &tuning, llvm::raw_ostream &log);

} // namespace mtc

#endif // MTC_COMPILER_AUTOTUNE_H
