//===- PtxCache.h - Compiled PTX on disk, next to tuned schedules -*- C++
//-*-===//
//
// `--tune` compiles graphs whose kernels and schedules mostly come from the
// tuning cache; their PTX can come from disk too. One file per graph stage
// result, `ptx-<sha256>.ptx` in the tuning cache's folder, named by a hash of
// the scheduled kernel-level IR (names, shapes, bodies and schedules), the
// target architecture, the codegen options and the mtc build. It holds the
// NVPTX backend's output before mtc adds its header and comments, so the
// same kernels compiled from another graph file reuse it. Entries are
// written atomically; one that does not hold every kernel of the graph is
// a miss.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_COMPILER_PTXCACHE_H
#define MTC_COMPILER_PTXCACHE_H

#include "runtime/Manifest.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mtc {

/// The file for `kernels` (the scheduled kernel-level module) in `dir`.
std::string ptxCachePath(llvm::StringRef dir, mlir::ModuleOp kernels,
                         llvm::StringRef arch, bool fastDequant);

/// The cached PTX at `path`, if it exists and defines every kernel of `m`.
std::optional<std::string> loadCachedPtx(llvm::StringRef path,
                                         const Manifest &m);

/// Stores `ptx` at `path`; best effort (a cache that cannot be written only
/// costs the next run a compile).
void storeCachedPtx(llvm::StringRef path, llvm::StringRef ptx);

} // namespace mtc

#endif // MTC_COMPILER_PTXCACHE_H
