//===- TuneCache.h - Tuned schedules on disk --------------------*- C++ -*-===//
//
// One JSON file per tuned kernel under the cache folder ($MTC_CACHE_DIR, else
// $XDG_CACHE_HOME/mtc, else ~/.cache/mtc), named by a SHA-256 of the key: the
// kernel's IR without names or schedule, the GPU's name, compute capability
// and driver, the target architecture, the codegen options and the mtc
// version. Files are written to a temporary name and renamed, so readers,
// concurrent writers and interrupted tunes only ever see complete entries.
// An entry that does not parse, or whose stored key differs from the one
// looked up, is ignored with a warning and rewritten by the next tune.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_COMPILER_TUNECACHE_H
#define MTC_COMPILER_TUNECACHE_H

#include "dialects/Kernel/Schedule.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mtc {

struct TuneKey {
  std::string kernelIR; // the kernel op, without node names or schedule
  std::string gpu;      // "NVIDIA H200"
  std::string computeCapability; // "9.0"
  std::string driver;            // "13.0"
  std::string arch;              // "sm_90"
  std::string options;           // codegen options that change the code
  std::string mtcVersion;

  /// Hex SHA-256 of every field.
  std::string fingerprint() const;
};

struct TuneEntry {
  kernel::ScheduleParams schedule;
  double micros = 0;          // measured time of the winner
  double heuristicMicros = 0; // time of the heuristic start
  unsigned probes = 0;
  double tuneSeconds = 0;
};

class TuneCache {
public:
  /// The cache at `dir`, or at the default location if `dir` is empty.
  explicit TuneCache(std::string dir = "");

  static std::string defaultDir();
  const std::string &dir() const { return folder; }

  /// The entry for `key`, or none. Unreadable, corrupt or foreign entries
  /// are treated as misses and described in `warnings`.
  std::optional<TuneEntry> lookup(const TuneKey &key,
                                  std::vector<std::string> &warnings) const;

  /// Writes the entry (write to a temporary file, then rename).
  llvm::Error store(const TuneKey &key, const TuneEntry &entry) const;

  /// Path of the file for `key`.
  std::string pathFor(const TuneKey &key) const;

private:
  std::string folder;
};

} // namespace mtc

#endif // MTC_COMPILER_TUNECACHE_H
